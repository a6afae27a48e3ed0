"""``hwnoise train`` and ``hwnoise export-arff`` end to end, on dataset folders and ARFF files."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from feature_tables import table_dataset
from markdown_tables import markdown_tables
from hwnoise.api import train
from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.training.arff import read_arff
from hwnoise.training.model import NoiseModel
from hwnoise.training.train import format_result

WEKA_JAR = Path("/usr/share/java/weka.jar")
RECORD_KEYS = {"dataset", "protocol", "method", "pages", "nodes", "precision", "recall", "f1",
               "content_f1", "RR", "RC", "CC", "CR"}


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "model-signing.key"))


def make_dataset(path: Path, name: str, seed: int, sites: list[str], n_pages: int = 12) -> Dataset:
    """A dataset folder with a learnable feature table whose first page has no gold."""
    return table_dataset(path, name, seed, sites, n_pages, unlabelled_first=True)


@pytest.fixture
def two_datasets(tmp_path):
    a = make_dataset(tmp_path / "alpha", "alpha", 1, ["a1.com", "a2.com", "a3.com"])
    b = make_dataset(tmp_path / "beta", "beta", 2, ["b1.com", "b2.com"])
    return a.path, b.path


def test_train_datasets_writes_model_arff_and_reports(two_datasets, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["train", *map(str, two_datasets), "--protocol", "pages", "--preset", "thesis",
                 "--all-pages", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "=== Confusion Matrix ===" in printed and "Weighted Avg." in printed
    report = json.loads((out / "report.json").read_text())
    assert [r["dataset"] for r in report["results"]] == ["alpha", "beta"]
    for rec in report["results"]:
        assert RECORD_KEYS <= set(rec) and rec["method"] == "model" and rec["protocol"] == "pages"
        assert rec["RR"] + rec["RC"] + rec["CC"] + rec["CR"] == rec["nodes"]
        assert rec["pages"] == rec["nodes"] // 40 and rec["f1"] > 0.85
    md = (out / "report.md").read_text()
    assert "| alpha | pages |" in md and "| all | pages |" in md and "| RR | RC | CC | CR |" in md
    model = NoiseModel.load(out)
    assert model.protocol == "pages" and model.query_terms() == ["book"]
    assert model.train_rows == 2 * 11 * 40  # every labelled row, the gold-less page left out
    assert model.tree_text().strip() in printed  # the printed tree is the one trained on all data
    arff = read_arff(out / "train.arff")
    assert len(arff) == model.train_rows and "page" in arff.columns


def test_train_report_md_keeps_a_row_per_dataset_whatever_its_name(tmp_path):
    """A dataset named 'a|b' (or holding a newline) split its report.md row into more cells than
    the header, or in two; the names are now literal cells."""
    names = ["a|b `c`", "new\nline <i>"]
    paths = [make_dataset(tmp_path / f"d{i}", n, i, ["s1.com", "s2.com"]).path for i, n in enumerate(names)]
    train(paths, preset="thesis", out=tmp_path / "out")
    table, = markdown_tables((tmp_path / "out" / "report.md").read_text(encoding="utf-8"))
    assert {len(row) for row in table} == {13}
    assert [row[0] for row in table[2:]] == ["a|b `c`", "new\\nline <i>", "all"]


def test_api_train_checks_out_before_fitting(two_datasets, tmp_path):
    """train(..., out=FILE) fitted and scored every fold, then ended in a FileExistsError
    traceback; out is checked first, as hwnoise train --out is, one line naming it."""
    from hwnoise.errors import HwnoiseError

    taken = tmp_path / "notes.txt"
    taken.write_text("mine", encoding="utf-8")
    for out, why in ((taken, "exists and is not a folder"), (taken / "m", "cannot write there")):
        with pytest.raises(HwnoiseError, match=f"out {out}: {why}"):
            train(list(two_datasets), preset="thesis", out=out)
    assert taken.read_text(encoding="utf-8") == "mine"


def test_train_prints_a_dataset_name_with_control_characters_as_text(tmp_path):
    """'=== NAME: model ...' printed a dataset's terminal escape sequence raw (recolouring the
    terminal); it is printed as its escapes."""
    path = make_dataset(tmp_path / "d", "red\x1b[31m\rname", 1, ["s1.com", "s2.com"]).path
    text = format_result(train([path], preset="thesis"))
    assert "\x1b" not in text and "\r" not in text and "=== red\\x1b[31m\\rname: model" in text


@pytest.mark.parametrize("option, message", [
    ({"seed": "1"}, r"train: seed is a str \('1'\); give a whole number"),
    ({"seed": None}, r"train: seed is None; give a whole number"),
    ({"protocol": "cv", "k": "3"}, r"train: k is a str \('3'\); give a whole number of folds"),
    ({"train_share": "0.5"}, r"train: train_share is a str"),
    ({"test": 5}, r"train: test is an int \(5\); give an ARFF file or dataset folder"),
    ({"all_pages": "no"}, r"train: all_pages is a str \('no'\); give True or False"),
    # an AttributeError ('int' object has no attribute 'inline') once the rows were read
    ({"scheduler": 5}, r"train: scheduler is an int \(5\); give local, threads, sync, a Dask scheduler's address"),
    ({"scheduler": ["sync"]}, r"train: scheduler is a list"),
])
def test_api_train_names_a_run_option_of_the_wrong_kind(two_datasets, option, message):
    """seed='1' was a numpy casting TypeError after the rows were read, k='3' and
    train_share='0.5' comparison TypeErrors, seed=None unseeded splits (another score each run),
    all_pages='no' (a true string) a model fitted on every page: each is named at once."""
    from hwnoise.errors import ArgumentError

    with pytest.raises(ArgumentError, match=message):
        train(list(two_datasets), preset="thesis", **option)


def test_api_train_names_a_misspelt_keyword_and_the_options_it_takes(two_datasets):
    """train(..., clasifier="rf") said only 'unexpected keyword argument': a notebook has no
    --help to list the options, so the message says the likely one and all of them."""
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'clasifier'; did you mean 'classifier'\? "
                                        r"\(it takes spec, preset, classifier, .*, protocol, test, seed"):
        train(list(two_datasets), preset="thesis", clasifier="rf")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'zzz' \(it takes spec, "):
        train(list(two_datasets), zzz=1)


@pytest.mark.parametrize("threshold", [0.3, "inner"])
def test_api_train_refuses_a_threshold_for_a_classifier_without_probabilities(two_datasets, threshold):
    """threshold=0.3 with RidgeClassifier (no predict_proba) was ignored without a word, the
    classifier's own labels scored as if cut at 0.3; "inner" chose 0.50 from a page F1 of 0."""
    from hwnoise.training.spec import SpecError

    with pytest.raises(SpecError, match=r"RidgeClassifier gives no probabilities .* threshold"):
        train(list(two_datasets), preset="thesis", classifier="sklearn.linear_model.RidgeClassifier",
              threshold=threshold)
    assert train(list(two_datasets), preset="thesis",
                 classifier="sklearn.linear_model.RidgeClassifier")["results"][0]["nodes"] > 0


@pytest.mark.parametrize("protocol", ["thesis", "cv", "cross-site"])
def test_other_protocols(two_datasets, protocol):
    result = train(list(two_datasets), protocol=protocol, seed=3, preset="thesis")
    recs = result["results"]
    assert {r["protocol"] for r in recs} == {protocol}
    if protocol in ("cv", "cross-site"):  # every labelled row is tested once
        assert sum(r["nodes"] for r in recs) == 2 * 11 * 40
    assert "Weighted Avg." in format_result(result)


def test_arff_in_export_and_weka_style_train_test(two_datasets, tmp_path, capsys):
    alpha, beta = two_datasets
    with_page, plain, test = tmp_path / "alpha_page.arff", tmp_path / "alpha.arff", tmp_path / "beta.arff"
    assert main(["export-arff", str(alpha), "-o", str(with_page), "--page"]) == 0
    assert main(["export-arff", str(alpha), "-o", str(plain)]) == 0
    assert main(["export-arff", str(beta)]) == 0
    test.write_text(capsys.readouterr().out, encoding="utf-8")  # stdout when no -o
    assert read_arff(test)["label"].isna().sum() == 40  # the page without gold: class '?'

    assert main(["train", str(with_page), "--protocol", "pages"]) == 0
    assert "protocol pages" in capsys.readouterr().out

    assert main(["train", str(plain), "--protocol", "pages"]) == 1  # no page attribute
    err = capsys.readouterr().err
    assert "hwnoise: error:" in err and "thesis" in err and "--test" in err

    # a protocol or folds beside --test were dropped without a word: the test file's scores
    # were printed as if cv had been asked for and run
    for extra in (["--protocol", "cv"], ["-k", "3"]):
        assert main(["train", str(plain), "--test", str(test), *extra]) == 1
        out_text, err = capsys.readouterr()
        assert out_text == "" and err.count("\n") == 1
        assert f"{' '.join(extra)} split the input for scoring, and --test {test}" in err

    out = tmp_path / "tt"
    assert main(["train", str(plain), "--test", str(test), "--out", str(out)]) == 0
    rec = json.loads((out / "report.json").read_text())["results"][0]
    assert rec["protocol"] == "test" and rec["dataset"] == "beta" and rec["nodes"] == 11 * 40
    assert "pages" not in rec  # an ARFF file without pages: the key does not apply


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    assert main(["train", str(tmp_path / "nowhere")]) == 1
    assert "nowhere" in capsys.readouterr().err
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a numeric\n@attribute result {S,N}\n@data\n1,S\nzz,N\n")
    assert main(["train", str(bad)]) == 1
    assert f"{bad}:6:" in capsys.readouterr().err
    empty = make_dataset(tmp_path / "nofeat", "nofeat", 0, ["x.com"], n_pages=2)
    empty.features_path.unlink()
    assert main(["train", str(empty.path), "--features", "ctd"]) == 1  # no pages, no feature table
    assert str(empty.path) in capsys.readouterr().err


@pytest.mark.parametrize("protocol", [[], ["--protocol", "thesis"]])
def test_a_weka_arff_with_quoted_attribute_names_trains_a_model_that_loads(tmp_path, capsys, protocol):
    # Weka's own files name attributes freely ('petal width', "a(1)"); the model was written and
    # then refused on load ("spec.features: must be ... feature names"), or not written at all
    rows = "".join(f"{i % 7},{(i * 3) % 5},{'N' if i % 7 > 3 else 'S'}\n" for i in range(40))
    arff = tmp_path / "weka.arff"
    arff.write_text("@relation w\n@attribute 'petal width' numeric\n@attribute \"a(1)\" numeric\n"
                    "@attribute class {N,S}\n@data\n" + rows)
    out = tmp_path / "m"
    assert main(["train", str(arff), "--out", str(out), *protocol]) == 0, capsys.readouterr().err
    model = NoiseModel.load(out)
    assert model.features == ["petal width", "a(1)"]


def test_a_test_file_without_the_training_attributes_is_one_line_naming_it(tmp_path, capsys):
    rows = "".join(f"{i % 7},{(i * 3) % 5},{'N' if i % 7 > 3 else 'S'}\n" for i in range(40))
    train_arff, test_arff = tmp_path / "a.arff", tmp_path / "b.arff"
    train_arff.write_text("@relation a\n@attribute x numeric\n@attribute y numeric\n"
                          "@attribute class {N,S}\n@data\n" + rows)
    test_arff.write_text("@relation b\n@attribute x numeric\n@attribute z numeric\n"
                         "@attribute class {N,S}\n@data\n" + rows)
    assert main(["train", str(train_arff), "--test", str(test_arff), "--out", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{test_arff}: no 'y' among its columns" in err


def test_console_entry_point_runs_as_a_process(two_datasets, tmp_path):
    out = tmp_path / "proc"
    proc = subprocess.run([sys.executable, "-m", "hwnoise.cli", "train", str(two_datasets[0]),
                           "--preset", "thesis", "--classifier", "cart", "--protocol", "cv", "-k", "3", "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Confusion Matrix" in proc.stdout and "report.json" in proc.stderr
    assert json.loads((out / "model.json").read_text())["contents"] == "metadata-only"


@pytest.mark.weka
@pytest.mark.skipif(not WEKA_JAR.exists(), reason="Weka not installed (/usr/share/java/weka.jar)")
def test_weka_trains_on_the_arff_train_writes(two_datasets, tmp_path):
    out = tmp_path / "w"
    train([two_datasets[0]], protocol="thesis", out=out, preset="thesis")
    proc = subprocess.run(["java", "-cp", str(WEKA_JAR), "weka.classifiers.meta.FilteredClassifier",
                           "-F", "weka.filters.unsupervised.attribute.Remove -R 1",
                           "-W", "weka.classifiers.trees.J48", "-t", str(out / "train.arff"), "-no-cv"],
                          capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    assert "Exception" not in text and "J48 pruned tree" in text
    assert f"Total Number of Instances              {11 * 40}" in text


@pytest.mark.weka
@pytest.mark.skipif(not WEKA_JAR.exists(), reason="Weka not installed (/usr/share/java/weka.jar)")
def test_thesis_protocol_reproduces_wekas_percentage_split(two_datasets, tmp_path):
    """The thesis split is Weka's -split-percentage 66 (Random(1)): same confusion matrix as J48."""
    path = tmp_path / "alpha.arff"
    assert main(["export-arff", str(two_datasets[0]), "-o", str(path)]) == 0
    labelled = read_arff(path)
    labelled = labelled[labelled["label"].notna()]
    from hwnoise.training.arff import write_arff

    write_arff(labelled, path)  # Weka would split the unlabelled rows too
    proc = subprocess.run(["java", "-cp", str(WEKA_JAR), "weka.classifiers.trees.J48", "-t", str(path),
                           "-split-percentage", "66"], capture_output=True, text=True)
    section = proc.stdout.split("=== Error on test split ===")[1]
    import re

    (rr, rc), (cr, cc) = [tuple(map(int, m)) for m in
                          re.findall(r"^\s*(\d+)\s+(\d+)\s+\|\s+[ab] = ", section, re.M)]
    rec = train([path], protocol="thesis", seed=1)["results"][0]
    assert (rec["RR"], rec["RC"], rec["CR"], rec["CC"]) == (rr, rc, cr, cc)


SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.mark.datasets
@pytest.mark.skipif(not (SHARED / "big9").is_dir(), reason="../shared/datasets/big9 is absent")
def test_real_big9_pages_end_to_end_and_weka_train_test(tmp_path, capsys):
    """Import two big9 site-years; `train` computes their feature tables itself, scores them with
    the pages protocol, and `train A.arff --test B.arff` agrees with Weka's J48 -t/-T."""
    from hwnoise.features.importers import import_dataset

    a, b = import_dataset("big9", SHARED / "big9", tmp_path / "imp", limit=20, progress=False)
    assert main(["train", str(a), str(b), "--preset", "thesis", "--all-pages", "--out", str(tmp_path / "m"),
                 "--no-tree"]) == 0
    recs = json.loads((tmp_path / "m" / "report.json").read_text())["results"]
    assert len(recs) == 2 and all(r["f1"] > 0.85 and r["content_f1"] > 0.5 for r in recs)
    capsys.readouterr()
    if not WEKA_JAR.exists():
        return
    train_arff, test_arff = tmp_path / "a.arff", tmp_path / "b.arff"
    assert main(["export-arff", str(a), "-o", str(train_arff)]) == 0
    assert main(["export-arff", str(b), "-o", str(test_arff)]) == 0
    rec = train([train_arff], test=test_arff)["results"][0]
    out = subprocess.run(["java", "-cp", str(WEKA_JAR), "weka.classifiers.trees.J48", "-t", str(train_arff),
                          "-T", str(test_arff)], capture_output=True, text=True).stdout
    import re

    weka_acc = float(re.search(r"Error on test data ===\s+Correctly Classified Instances\s+\d+\s+([\d.]+)",
                               out)[1])
    assert 100 * (rec["RR"] + rec["CC"]) / rec["nodes"] == pytest.approx(weka_acc, abs=0.5)


def test_api_train_names_an_unknown_scheduler_before_reading_the_inputs(tmp_path):
    """scheduler='bogus' was found once every row was read (with stacked extractors, after every
    page was assembled); it is named first, as --scheduler is."""
    from hwnoise.scheduler import SchedulerError

    with pytest.raises(SchedulerError, match="'bogus': use local, threads, sync"):
        train([tmp_path / "not-read-yet"], preset="thesis", scheduler="bogus")


def test_api_train_takes_a_whole_spec(two_datasets, tmp_path):
    """train(spec=ModelSpec(...)) was a TypeError (an unexpected keyword); a spec object, or
    model.json's "spec" dict, is the model trained, its fields taken as they are (threshold=None
    stays the classifier's own call, not the auto preset's inner threshold) and single options
    over it; beside a preset or of another kind it is named."""
    from hwnoise.api import ModelSpec, load_model
    from hwnoise.errors import ArgumentError

    spec = ModelSpec(features=["ctd", "query_score"], classifier="j48", params={"min_num_obj": 5})
    result = train(list(two_datasets), spec=spec, out=tmp_path / "m")
    assert result["spec"] == spec and result["features"] == ["ctd", "query_score"]
    assert result["model"].threshold is None and result["model"].classifier_name == "j48"
    saved = json.loads((tmp_path / "m" / "model.json").read_text(encoding="utf-8"))["spec"]
    again = train(list(two_datasets), spec=saved, features=["ctd"])
    assert again["spec"] == ModelSpec(features=["ctd"], classifier="j48", params={"min_num_obj": 5})
    assert train(list(two_datasets), spec=load_model(tmp_path / "m").spec)["tree"] == result["tree"]
    with pytest.raises(ArgumentError, match="train: spec is an int; give a hwnoise.ModelSpec"):
        train(list(two_datasets), spec=5)
    with pytest.raises(ArgumentError, match="train: spec and preset 'site' both given"):
        train(list(two_datasets), spec=spec, preset="site")


def test_a_classifier_that_needs_both_classes_on_rows_of_one_is_one_line(tmp_path, capsys):
    """--classifier logreg on a dataset whose gold marks no content (every row S) ended in a
    46-line ValueError traceback from scikit-learn; it is one line saying what is missing."""
    import pandas as pd

    ds = make_dataset(tmp_path / "noise", "noise", 1, ["s1.com", "s2.com"])
    pd.read_parquet(ds.features_path).assign(label="S").to_parquet(ds.features_path)
    assert main(["train", str(ds.path), "--preset", "thesis", "--classifier", "logreg"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["hwnoise: error: classifier logreg: every training row is S (noise), and it needs rows of "
                   "both classes; give pages whose gold has content and noise, or choose j48, cart, rf or gb, "
                   "which fit one class"]
    assert main(["train", str(ds.path), "--preset", "thesis"]) == 0  # J48: a leaf of S, as Weka's


def test_a_test_folder_that_is_no_dataset_or_has_no_labels_is_named_before_the_fit(two_datasets, tmp_path, capsys):
    """``--test DIR`` with a folder that is no dataset folder (saved pages, nothing) was told
    'DIR: not a dataset folder ... Make one with hwnoise collect...', as a training input is,
    without a word that it was --test nor how test pages get features; a test dataset without
    labels was told that its pages 'need gold text to train on', after the fit. Both name --test
    DIR and what to run, before anything is fitted or written."""
    pages = tmp_path / "saved"
    pages.mkdir()
    (pages / "p.html").write_text("<html><body><p>A saved result page.</p></body></html>")
    unlabelled = make_dataset(tmp_path / "nolabels", "nolabels", 3, ["c.com"], n_pages=1)
    out = tmp_path / "m"
    for test, says in ((pages, f"--test {pages}: not a dataset folder (no dataset.json) nor an ARFF file"),
                       (unlabelled.path, f"--test {unlabelled.path}: no labelled rows (S/N); pages need "
                                         "gold text to score the model on")):
        code = main(["train", str(two_datasets[0]), "--preset", "thesis", "--test", str(test), "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 1 and err.startswith(f"hwnoise: error: {says}") and err.count("\n") == 1, err
        assert ("'hwnoise features DIR'" in err and "'hwnoise import plain SRC --into DIR'" in err) == (test == pages)
        assert not out.exists() or not any(out.iterdir())
