"""``hwnoise evaluate`` end to end on small dataset folders made here with hwnoise.dataset."""
from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest
from markdown_tables import markdown_tables

from hwnoise.dataset import Dataset
from hwnoise.evaluate import evaluate, value_recall
from hwnoise.extractors import external

WORDS = ("amber basalt cedar dune ember fjord granite harbor iris juniper kelp lagoon meadow "
         "nectar onyx prairie quartz reef sierra tundra umber valley willow yarrow zephyr").split()

LAYOUTS = {
    # site name: (wrapper of the record list, record tag, class of the nav)
    "books.example": ("<table class='results'>{}</table>", "<tr><td>{}</td></tr>", "topnav"),
    "jobs.example": ("<ul class='hits'>{}</ul>", "<li class='hit'>{}</li>", "menu"),
    "pubs.example": ("<div class='list'>{}</div>", "<div class='row'><p>{}</p></div>", "bar"),
}


def make_page(site: str, rng: random.Random, term: str) -> tuple[str, str]:
    wrap, rec, nav = LAYOUTS[site]
    records = []
    for _ in range(rng.randint(3, 6)):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        words.insert(rng.randrange(len(words)), term)
        records.append(" ".join(words).capitalize() + ".")
    navlinks = " ".join(f"<a href='/{w}'>{w.title()} section</a>" for w in WORDS[:8])
    related = "".join(f"<li><a href='/r/{i}'>Popular item {i}</a></li>" for i in range(6))
    html = (f"<html><head><title>{site}</title><style>.x{{}}</style></head><body>"
            f"<div class='{nav}'>{navlinks}</div>"
            f"<form><input name='q' value='{term}'><button>Search</button></form>"
            f"<h2>Results for {term}</h2>"
            + wrap.format("".join(rec.format(r) for r in records))
            + f"<div class='side'><h3>Popular</h3><ul>{related}</ul></div>"
            f"<div class='foot'><a href='/about'>About us</a> | <a href='/help'>Help</a> "
            f"Copyright 2013 {site}</div></body></html>")
    return html, "\n".join(records)


def make_dataset(root: Path, site: str, pages: int = 9, seed: int = 0, fmt: str = "plain") -> Path:
    rng = random.Random(f"{site}-{seed}")
    ds = Dataset.create(root / site.split(".")[0], name=site.split(".")[0], source="test",
                        format=fmt)
    terms = []
    for i in range(pages):
        term = rng.choice(WORDS)
        terms.append(term)
        sub = ds.add_submission({"method": "GET", "url": f"http://{site}/search?q={term}&p={i}",
                                 "fields": [{"name": "q", "value": term}]})
        html, gold = make_page(site, rng, term)
        ds.write_page(sub["id"], html.encode("utf-8"))
        if fmt == "swde":
            gold = "\n".join(line.split()[0] for line in gold.splitlines())  # a few values
        ds.write_gold(sub["id"], gold)
    ds.write_query([{"term": t, "kind": "value", "submissions": []} for t in sorted(set(terms))])
    return ds.path


@pytest.fixture(scope="module")
def datasets(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("datasets")
    return [make_dataset(root, site) for site in LAYOUTS]


REPORT_KEYS = {"dataset", "protocol", "method", "pages", "nodes", "precision", "recall", "f1",
               "content_f1", "RR", "RC", "CC", "CR", "text_precision", "text_recall", "text_f1",
               "text_f1_of_means"}


def test_pages_protocol_end_to_end(datasets, tmp_path):
    methods = ["model", "cetd", "alltext"] + (["trafilatura"] if "trafilatura" in external.available() else [])
    out = tmp_path / "out"
    report = evaluate(datasets[:2], methods=methods, protocol="pages", seed=1, out=out)
    recs = {(r["dataset"], r["method"]): r for r in report["results"]}
    assert len(recs) == 2 * len(methods)
    for ds in ("books", "jobs"):
        pages = {recs[(ds, m)]["pages"] for m in methods}
        assert pages == {3}  # 9 pages, 66 % train: every method on the same 3 test pages
        model = recs[(ds, "model")]
        assert REPORT_KEYS <= set(model) and model["protocol"] == "pages"
        assert model["RR"] + model["RC"] + model["CC"] + model["CR"] == model["nodes"]
        assert model["text_f1"] > 0.9 and model["content_f1"] > 0.8
        alltext = recs[(ds, "alltext")]
        assert alltext["text_recall"] == pytest.approx(1.0)
        assert alltext["text_precision"] < 0.8 and model["text_f1"] > alltext["text_f1"]
        assert alltext["nodes"] == model["nodes"] == recs[(ds, "cetd")]["nodes"]
        if "trafilatura" in methods:
            traf = recs[(ds, "trafilatura")]
            assert "text_f1" in traf and "f1" not in traf and "RR" not in traf
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk["results"] == json.loads(json.dumps(report["results"]))
    assert {"hwnoise", "created", "results"} <= set(on_disk)
    md = (out / "report.md").read_text()
    for title in ("Table 4.1", "Table 4.3", "Table 4.4", "Table 4.5", "| mean |"):
        assert title in md
    # the mean page F1's 95 % half-width beside it: 1.96 standard errors over the test pages
    import pandas as pd

    per = pd.read_csv(out / "pages.csv", dtype={"page": str})
    per = per[(per.dataset == ds) & (per.method == "alltext")]["text_f1"].to_numpy()
    se = recs[(ds, "alltext")]["text_f1_se"]
    assert len(per) == 3 and se > 0.01 and se == pytest.approx(per.std(ddof=1) / np.sqrt(3))
    assert "± 95 %" in md and f"| {1.96 * se:.3f} |" in md
    for png in ("precision.png", "recall.png", "confusion-model.png", "confusion-cetd.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "confusion-trafilatura.png").exists()
    lines = (out / "pages.csv").read_text().splitlines()
    assert len(lines) == 1 + 2 * 3 * len(methods)
    # each page's own node counts sum to the report's pooled ones, and its content F1 is theirs
    rows = pd.read_csv(out / "pages.csv", dtype={"page": str})
    for (d, m), g in rows[rows.method.isin(["model", "cetd", "alltext"])].groupby(["dataset", "method"]):
        for k in ("RR", "RC", "CC", "CR"):
            assert g[k].sum() == recs[(d, m)][k]
        cc, wrong = g["CC"].to_numpy(), (g["RC"] + g["CR"]).to_numpy()
        assert np.allclose(g["content_f1"], np.where(cc > 0, 2 * cc / np.maximum(2 * cc + wrong, 1), 0.0))
    if "trafilatura" in methods:  # a method that gives text only has no node counts
        assert rows[rows.method == "trafilatura"]["CC"].isna().all()


def test_training_sees_only_the_training_pages(datasets, tmp_path, monkeypatch):
    from hwnoise.extractors import model as model_mod
    from hwnoise.training.protocols import splits
    from hwnoise.evaluate import _page_table

    seen: list[str] = []
    real = model_mod.training_rows

    def spy(pages, cache=None, features=()):
        seen.extend(p.id for p in pages)
        return real(pages, cache, features)

    monkeypatch.setattr(model_mod, "training_rows", spy)
    report = evaluate(datasets[:1], methods=["model"], protocol="pages", seed=3)
    pages = list(Dataset(datasets[0]).pages())
    train_idx, test_idx = splits(_page_table(pages), "pages", seed=3)[0]
    assert sorted(seen) == sorted(pages[i].id for i in train_idx)
    assert report["results"][0]["pages"] == len(test_idx)


def test_cross_site_scores_each_dataset_with_a_model_from_the_others(datasets, tmp_path):
    report = evaluate(datasets, methods=["model", "cetd"], protocol="cross-site", k=3, out=tmp_path)
    recs = {(r["dataset"], r["method"]): r for r in report["results"]}
    assert set(recs) == {(d, m) for d in ("books", "jobs", "pubs") for m in ("model", "cetd")}
    for d in ("books", "jobs", "pubs"):
        assert recs[(d, "model")]["pages"] == 9 and recs[(d, "model")]["protocol"] == "cross-site"


def test_options_as_an_object_or_as_keywords_and_an_unknown_keyword_named(datasets):
    from hwnoise.evaluate import EvalOptions

    by_words = evaluate(datasets[:1], methods=["cetd"], protocol="cv", k=2)
    opts = EvalOptions(methods=("cetd", "alltext"), protocol="cv", k=2)
    by_object = evaluate(datasets[:1], opts, methods=["cetd"])  # a keyword changes the object's field
    timeless = [[{k: v for k, v in r.items() if k != "seconds"} for r in rep["results"]] for rep in (by_words, by_object)]
    assert timeless[0] == timeless[1] and len(timeless[0]) == 1 and opts.methods == ("cetd", "alltext")
    with pytest.raises(TypeError, match="'protocl'"):
        evaluate(datasets[:1], methods=["cetd"], protocl="cv")


def test_features_table_and_cv(datasets, tmp_path):
    from hwnoise.features.build import build_features

    ds_path = make_dataset(tmp_path, "pubs.example", pages=6, seed=5)
    build_features(ds_path, progress=False)
    report = evaluate([ds_path], methods=["model"], protocol="cv", k=3,
                      method_options={"model": {"features": "extended"}})
    rec = report["results"][0]
    assert rec["pages"] == 6 and rec["text_f1"] > 0.8  # every page tested once, sitelevel from the table


def test_thesis_protocol_scores_the_held_out_nodes(datasets):
    report = evaluate(datasets[:1], methods=["model", "cetd"], protocol="thesis", seed=1)
    recs = {r["method"]: r for r in report["results"]}
    from hwnoise.extractors.model import training_rows

    total = len(training_rows(list(Dataset(datasets[0]).pages())))
    assert recs["model"]["nodes"] == recs["cetd"]["nodes"] == total - round(total * 0.66)
    assert recs["model"]["pages"] == 9  # text on every page (nodes of a page fall on both sides)


def test_a_given_model_is_scored_on_every_page(datasets, tmp_path, monkeypatch):
    import pandas as pd

    from hwnoise.extractors.model import training_rows
    from hwnoise.training.model import NoiseModel

    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "key"))
    rows = training_rows(list(Dataset(datasets[0]).pages()))
    NoiseModel("j48").fit(rows).save(tmp_path / "m")
    report = evaluate(datasets[:2], methods=["model", "cetd"], model=tmp_path / "m")
    recs = {(r["dataset"], r["method"]): r for r in report["results"]}
    assert report["protocol"] == "given"
    assert recs[("books", "model")]["pages"] == 9 and recs[("jobs", "model")]["pages"] == 9
    assert recs[("books", "model")]["text_f1"] > 0.9  # seen pages
    assert isinstance(pd.DataFrame(report["results"]), pd.DataFrame)


def test_value_recall_for_swde_like_gold(tmp_path):
    assert value_recall("Title: The Old Man and the Sea by Ernest Hemingway",
                        "The Old Man and the Sea\nErnest Hemingway\n978-0684801223") == pytest.approx(2 / 3)
    assert value_recall("anything", "") is None
    assert value_recall("isbn 9780684801223", "978-0684801223") == 0.0  # a value is found whole
    ds = make_dataset(tmp_path, "books.example", pages=6, fmt="swde")
    report = evaluate([ds], methods=["model", "alltext"], protocol="pages")
    recs = {r["method"]: r for r in report["results"]}
    assert recs["alltext"]["value_recall"] == pytest.approx(1.0)
    assert "text_f1" not in recs["alltext"] and recs["alltext"]["words"] > 0
    assert 0.0 <= recs["model"]["value_recall"] <= 1.0


def test_cli_and_errors(datasets, tmp_path, capsys):
    from hwnoise.cli import main

    out = tmp_path / "cli"
    assert main(["evaluate", str(datasets[0]), "--methods", "cetd,alltext", "--out", str(out),
                 "--no-figures"]) == 0
    printed = capsys.readouterr().out
    assert "cetd" in printed and "alltext" in printed
    assert (out / "report.json").exists() and not (out / "precision.png").exists()
    assert main(["evaluate", str(tmp_path / "nowhere"), "--out", str(out)]) == 1
    assert "nowhere" in capsys.readouterr().err
    assert main(["evaluate", str(datasets[0]), "--methods", "cetd,bogus"]) == 1
    assert "unknown method 'bogus'" in capsys.readouterr().err


def test_parse_method_options():
    from hwnoise.commands.evaluate import parse_method_options
    from hwnoise.errors import HwnoiseError

    got = parse_method_options(["webstemmer.t=0.8", "isotonic.c=0.1", "model.page_context=true",
                                "model.classifier=gb", "model.stack=\"a,b\"", "model.params={\"max_iter\": 5}"])
    assert got == {"webstemmer": {"t": 0.8}, "isotonic": {"c": 0.1},
                   "model": {"page_context": True, "classifier": "gb", "stack": "a,b",
                             "params": {"max_iter": 5}}}
    for bad in ("webstemmer=0.8", "t=1", ".t=1", "webstemmer.t"):
        with pytest.raises(HwnoiseError, match="NAME.KEY=VALUE"):
            parse_method_options([bad])


def test_method_options_from_the_command_line_reach_the_methods(datasets, tmp_path, capsys):
    from hwnoise.cli import main

    def text_recall(*opts: str) -> float:
        out = tmp_path / "mo"
        assert main(["evaluate", *map(str, datasets[:2]), "--protocol", "cross-site", "-k", "2",
                     "--methods", "model", "--preset", "thesis", "--classifier", "gb", "--no-figures", "--out", str(out),
                     *opts]) == 0
        rep = json.loads((out / "report.json").read_text())
        recs = [r for r in rep["results"] if r["method"] == "model"]
        return sum(r["text_recall"] for r in recs) / len(recs)

    # a threshold of 1 (no probability reaches it here) keeps nothing; zero keeps every word
    assert text_recall("--method-option", "model.threshold=1") == 0.0
    assert text_recall("--method-option", "model.threshold=0",
                       "--method-option", "model.page_context=true") == 1.0
    capsys.readouterr()
    # an option the method does not take, or for a method not run, is a clear error
    assert main(["evaluate", str(datasets[0]), "--methods", "cetd", "--no-figures", "--out",
                 str(tmp_path / "x"), "--method-option", "cetd.bogus=1"]) == 1
    assert "cetd" in capsys.readouterr().err
    assert main(["evaluate", str(datasets[0]), "--methods", "cetd", "--no-figures", "--out",
                 str(tmp_path / "x"), "--method-option", "webstemmer.t=0.8"]) == 1
    assert "webstemmer" in capsys.readouterr().err


SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.mark.datasets
@pytest.mark.skipif(not (SHARED / "cleaneval").is_dir(), reason="../shared/datasets/cleaneval is absent")
def test_cetd_on_a_few_cleaneval_pages(tmp_path):
    from hwnoise.features.importers import import_dataset

    dirs = import_dataset("cleaneval", SHARED / "cleaneval", tmp_path / "ce", limit=12, progress=False)
    report = evaluate(dirs, methods=["cetd", "alltext"], protocol="cv", k=2, out=tmp_path / "out")
    recs = {r["method"]: r for r in report["results"]}
    assert recs["cetd"]["pages"] == 12
    # CleanEval's gold keeps most of a page's text: CETD is near it (0.91 on all 299 pages)
    assert recs["cetd"]["text_f1"] > 0.75
    assert recs["cetd"]["text_precision"] > recs["alltext"]["text_precision"]


def test_a_given_model_with_sitelevel_gets_the_dataset_table_built(datasets, tmp_path, monkeypatch):
    # a folder without features.parquet scored by a model that uses sitelevel: evaluate builds the
    # table (else sitelevel is missing on every page and the figure is wrong: 0.57 instead of 0.99
    # on a big9 site-year in issue 13's bench)
    import shutil

    from hwnoise.features.build import build_features
    from hwnoise.training.model import NoiseModel

    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "key"))
    built = tmp_path / "built"
    shutil.copytree(datasets[0], built)
    build_features(Dataset(built), progress=False)
    rows = Dataset(built).read_features()
    NoiseModel("j48", ["ctd", "sitelevel"]).fit(rows).save(tmp_path / "m")
    bare = tmp_path / "bare"
    shutil.copytree(datasets[0], bare)
    table = bare / "features.parquet"  # a file, or a folder of part files
    if table.is_dir():
        shutil.rmtree(table)
    else:
        table.unlink(missing_ok=True)
    assert not Dataset(bare).has_features()
    got = evaluate([bare], methods=["model"], model=tmp_path / "m", figures=False)
    want = evaluate([built], methods=["model"], model=tmp_path / "m", figures=False)
    assert Dataset(bare).has_features()
    assert got["results"][0]["text_f1"] == want["results"][0]["text_f1"]
    assert got["results"][0]["CC"] == want["results"][0]["CC"]


#: dataset names a user's folders may carry: each once broke report.md's tables or turned into markup
HOSTILE_NAMES = ["a b|c*d`e`", "<script>alert(1)</script>", "new\nline", "ü中文☃ " + "x" * 300,
                 "&amp; [link](http://x) _em_ ~s~ $x$", "back\\slash|"]


def hostile_copies(datasets: list[Path], root: Path, names: list[str] = HOSTILE_NAMES) -> list[Path]:
    """A copy of the first dataset under each of ``names`` (its name in dataset.json)."""
    import shutil

    copies = []
    for i, name in enumerate(names):
        path = shutil.copytree(datasets[0], root / f"copy{i}")
        meta = json.loads((path / "dataset.json").read_text(encoding="utf-8"))
        (path / "dataset.json").write_text(json.dumps({**meta, "name": name}), encoding="utf-8")
        copies.append(path)
    return copies


def test_report_md_tables_hold_any_dataset_name(datasets, tmp_path):
    """A '|' in a dataset's name split its report.md row into more cells than the header, a
    newline cut the row in two, and '<script>', backticks or '*' went in as markup; every cell
    is now literal text (``hwnoise.text.markdown_text``) and each row has the header's cells."""
    out = tmp_path / "report"
    report = evaluate(hostile_copies(datasets, tmp_path), methods=["alltext"], out=out, figures=False)
    assert [r["dataset"] for r in json.loads((out / "report.json").read_text())["results"]] == HOSTILE_NAMES
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in md
    tables = markdown_tables(md)
    assert len(tables) >= 4
    for table in tables:
        assert {len(row) for row in table} == {len(table[0])}, table
        names = [row[0] for row in table[2:] if row[0] not in ("mean", "total")]
        assert names == [n.replace("\n", "\\n") for n in HOSTILE_NAMES]
    assert report["results"][0]["dataset"] == HOSTILE_NAMES[0]


def test_figures_take_dataset_names_as_text_not_tex(datasets, tmp_path):
    """A dataset named 'a $\\frac$ b' or '$x^$' stopped evaluate at its figures with matplotlib's
    TeX parser's ValueError (report.md and report.json unwritten); names are drawn as text."""
    out = tmp_path / "report"
    evaluate(hostile_copies(datasets, tmp_path, ["a $\\frac$ b", "$x^$", "price $5 and $6"]), methods=["alltext"],
             out=out)
    assert json.loads((out / "report.json").read_text())["outputs"] == [
        "pages.csv", "precision.png", "recall.png", "confusion-alltext.png", "report.md", "report.json"]
    for png in ("precision.png", "recall.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_model_options_beside_a_given_model_are_refused_not_ignored(datasets, tmp_path, capsys):
    """evaluate --model M --preset general --threshold 0.9 (or --method-option model.threshold=0.4)
    scored M as it was trained and wrote its figures, the options dropped without a word; they
    are now refused before any work, named, and nothing is written."""
    from hwnoise.cli import main
    from hwnoise.evaluate import EvaluateError

    model = tmp_path / "m"
    assert main(["train", str(datasets[0]), "--preset", "thesis", "--out", str(model)]) == 0
    capsys.readouterr()
    out = tmp_path / "ev"
    for extra, named in ((["--preset", "general", "--threshold", "0.9"], "preset general, threshold 0.9"),
                         (["--method-option", "model.threshold=0.4"], "threshold 0.4")):
        assert main(["evaluate", str(datasets[0]), "--model", str(model), "--methods", "model",
                     "--out", str(out), *extra]) == 1
        err = capsys.readouterr().err
        assert f"model options {named} do not apply to --model {model}" in err and "(preset thesis)" in err
        assert not (out / "report.json").exists()
    with pytest.raises(EvaluateError, match="model options classifier gb do not apply"):
        evaluate(datasets[:1], methods=["model"], model=model, method_options={"model": {"classifier": "gb"}})
    assert main(["evaluate", str(datasets[0]), "--model", str(model), "--methods", "model", "--out", str(out),
                 "--no-figures"]) == 0


def test_a_nan_or_infinite_method_option_is_refused_before_any_work(datasets, tmp_path, capsys):
    """--method-option webstemmer.t=NaN ran webstemmer with every comparison false, wrote its
    figures as if scored, and report.json held 'NaN', which strict JSON readers (jq, a browser's
    JSON.parse) refuse; a NaN or infinite option is one line naming it, and nothing is written."""
    from hwnoise.cli import main
    from hwnoise.evaluate import EvaluateError

    out = tmp_path / "ev"
    assert main(["evaluate", str(datasets[0]), "--methods", "alltext,webstemmer", "--method-option",
                 "webstemmer.t=NaN", "--no-figures", "--out", str(out)]) == 1
    assert "method option webstemmer.t is nan: give a finite number" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(EvaluateError, match=r"method option model.params.max_depth is inf"):
        evaluate(datasets[:1], methods=["model"], method_options={"model": {"params": {"max_depth": float("inf")}}})


def test_a_dataset_given_twice_or_two_of_one_name_are_refused(datasets, tmp_path, capsys):
    """evaluate D D scored each page of D twice under one row (68 pages of 34) printed twice, and
    two crawls named alike (run1/books, run2/books) were pooled into one dataset's figures; train
    pooled them too. Each is one line naming the folders before any work."""
    import shutil

    from hwnoise.cli import main

    twin = shutil.copytree(datasets[0], tmp_path / "run2" / "books")
    for argv, message in (
            (["evaluate", str(datasets[0]), str(datasets[0]) + "/", "--methods", "alltext"],
             f"{datasets[0]}: given twice; give each dataset once"),
            (["evaluate", str(datasets[0]), str(twin), "--methods", "alltext"],
             f"{twin}: named 'books', as {datasets[0]} is"),
            (["train", str(datasets[0]), str(twin), "--preset", "thesis"], f"{twin}: named 'books', as {datasets[0]} is")):
        assert main(argv) == 1
        out, err = capsys.readouterr()
        assert out == "" and message in err, err


def test_the_printed_table_holds_a_dataset_name_with_control_characters_as_text(datasets, tmp_path, capsys):
    """A dataset named with a terminal escape sequence ('\\x1b]0;...\\x07' retitles the terminal,
    '\\x1b[31m' recolours it) or a newline went to the terminal raw with evaluate's table; each
    control character is printed as its escape, and the row stays one line."""
    from hwnoise.cli import main

    name = "evil\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\rOK\nline"
    copy, = hostile_copies(datasets, tmp_path, [name])
    assert main(["evaluate", str(copy), "--methods", "alltext", "--no-figures", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\r")
    row, = [line for line in out.splitlines() if "alltext" in line]
    assert row.startswith("evil\\x1b]0;pwned\\x07\\x1b[31mRED\\x1b[0m\\rOK\\nline  alltext")


def test_a_page_the_browser_cannot_render_is_counted_and_the_evaluation_goes_on(datasets, tmp_path, capsys):
    """A page cetd-render had to render and the browser could not (over its time limit) ended the
    whole evaluation in 'hwnoise: error: over the 0.001 s time limit', naming no page, with no
    report; it is the method's failure on that page, named, and the other methods are scored."""
    from hwnoise.cli import main
    from hwnoise.features.render import chromium_available

    if not chromium_available():
        pytest.skip("needs /usr/bin/chromium and playwright")
    out = tmp_path / "ev"
    assert main(["evaluate", str(datasets[0]), "--methods", "cetd,cetd-render", "--no-figures", "--out", str(out),
                 "--method-option", "cetd-render.timeout=0.001"]) == 0, capsys.readouterr().err
    got = {r["method"]: r for r in json.loads((out / "report.json").read_text())["results"]}
    pages = {p.id for p in Dataset(datasets[0]).pages()}
    assert got["cetd"].get("failures", 0) == 0 and got["cetd"]["text_f1"] > 0
    assert got["cetd-render"]["failures"] == got["cetd-render"]["pages"] == got["cetd"]["pages"]
    page, error = got["cetd-render"]["last_error"].split(": ", 1)
    assert page in pages and error == "PageRenderError: over the 0.001 s time limit"
    # the method's browser ended with the run: no Chromium of it left, nor Playwright's driver
    # in this process (a Playwright started after it here refused to run in its asyncio loop)
    from hwnoise.features import render

    assert render._PW["pw"] is None and not list(render._LIVE)


def test_a_rerun_into_the_same_out_removes_the_earlier_runs_figures_it_does_not_write_again(tmp_path):
    """A second evaluation into one --out with fewer methods left the first's confusion-cetd.png
    beside the new report, as if cetd had been run: the earlier run's own outputs (listed in its
    report.json) that this run does not write again are removed; the user's files are not."""
    from hwnoise.evaluate import write_outputs

    def result(method):
        return {"dataset": "d", "method": method, "precision": 0.5, "recall": 0.75, "f1": 0.6,
                "RR": 3, "RC": 1, "CC": 5, "CR": 2}

    out = tmp_path / "report"
    write_outputs({"results": [result("model"), result("cetd")]}, out, [{"dataset": "d", "page": "p"}])
    assert (out / "confusion-cetd.png").is_file()
    (out / "notes.txt").write_text("mine")
    (out / "keep.png").write_bytes(b"a figure of my own")
    write_outputs({"results": [result("model")]}, out, [{"dataset": "d", "page": "p"}])
    assert sorted(p.name for p in out.iterdir()) == [
        "confusion-model.png", "keep.png", "notes.txt", "pages.csv", "precision.png", "recall.png",
        "report.json", "report.md"]
    write_outputs({"results": [result("model")]}, out, [{"dataset": "d", "page": "p"}], figures=False)
    assert sorted(p.name for p in out.iterdir()) == ["keep.png", "notes.txt", "pages.csv", "report.json", "report.md"]


def test_figures_are_written_whole_through_a_temp_file_and_a_rename(tmp_path):
    """evaluate's PNG figures were drawn straight into their place (``savefig(path)``), so an
    evaluation stopped while it drew (Ctrl-C) left a PNG cut short under its own name; they go
    through a temp file and a rename, as report.json and pages.csv do: a file an earlier run
    wrote is replaced, never written into (its old bytes stay whole behind another link)."""
    from hwnoise.report import write_figures

    report = {"results": [{"dataset": "d", "method": "alltext", "precision": 0.5, "recall": 0.75, "f1": 0.6,
                           "RR": 3, "RC": 1, "CC": 5, "CR": 2}]}
    out = tmp_path / "report"
    out.mkdir()
    old = b"an earlier run's figure"
    (out / "precision.png").write_bytes(old)
    os.link(out / "precision.png", tmp_path / "earlier.png")
    written = write_figures(report, out)
    assert [p.name for p in written] == ["precision.png", "recall.png", "confusion-alltext.png"]
    assert (out / "precision.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "earlier.png").read_bytes() == old
    assert sorted(p.name for p in out.iterdir()) == ["confusion-alltext.png", "precision.png", "recall.png"]


def test_evaluate_takes_one_folder_and_methods_as_the_python_api_user_gives_them(datasets):
    """evaluate("DIR") iterated the str letter by letter ("/: not a dataset folder") and
    methods="cetd,alltext" likewise ("unknown method 'c'"); one folder is a list of one, and a
    str of methods is read as --methods is, comma-separated."""
    one = evaluate(str(datasets[0]), methods="cetd, alltext", figures=False)
    listed = evaluate([datasets[0]], methods=["cetd", "alltext"], figures=False)
    assert one["methods"] == ["cetd", "alltext"]
    assert [r["f1"] for r in one["results"]] == [r["f1"] for r in listed["results"]]
    assert evaluate(datasets[0], methods=["cetd"], figures=False)["datasets"] == [str(datasets[0])]


@pytest.mark.parametrize("keywords, message", [
    ({"seed": "1"}, r"evaluate: seed is a str \('1'\); give a whole number"),
    ({"protocol": "cv", "k": "3"}, r"evaluate: k is a str \('3'\); give a whole number of folds"),
    ({"figures": "no"}, r"evaluate: figures is a str \('no'\); give True or False"),
    ({"methods": ["cetd", 5]}, r"evaluate: methods holds an int; give names"),
    ({"method_options": "t=0.5"}, r"evaluate: method_options is a str"),
])
def test_evaluate_names_an_option_of_the_wrong_kind(datasets, keywords, message):
    """seed="1" was a numpy casting TypeError, k="3" a comparison TypeError, both after the
    datasets were opened; figures="no" (a true str) drew the figures: each is named at once."""
    from hwnoise.errors import ArgumentError

    with pytest.raises(ArgumentError, match=message):
        evaluate([datasets[0]], **{"methods": ["cetd"], **keywords})
    with pytest.raises(ArgumentError, match=r"evaluate: dataset_dirs is None; give dataset folders"):
        evaluate(None, methods=["cetd"])


def test_evaluate_names_a_misspelt_keyword_and_what_it_takes(datasets):
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'method'; did you mean 'methods'\? "
                                        r"\(it takes methods, protocol, seed, out"):
        evaluate([datasets[0]], method=["cetd"])
