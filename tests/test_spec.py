"""One model spec, one feature assembly: presets trained, saved, loaded and applied the same way
by train, evaluate, extract and the Python API; model.json checked on load; queries for plain
imports; extract as a batch tool."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hwnoise import native
from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.extractors import external

NAV = ('<div class="nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/shop">Shop</a> '
       '<a href="/help">Help</a></div>')
FOOT = '<div id="footer"><p>Copyright 2026 Example Media. All rights reserved.</p><a href="/t">Terms</a></div>'
WORDS = ("river valley harbour lantern meadow orchard granite willow summit canyon beacon "
         "thistle ember falcon cobalt juniper").split()


def article(k: int, site: str) -> tuple[str, str]:
    """A page (nav, an article of three paragraphs, a related list, a footer) and its gold."""
    rng = np.random.default_rng(k)
    paras = [" ".join(rng.choice(WORDS, 24)) + "." for _ in range(3)]
    title = f"Story {k} about the {WORDS[k % len(WORDS)]}"
    body = "".join(f"<p>{p}</p>" for p in paras)
    related = "".join(f'<li><a href="/s{j}">Related story {j}</a></li>' for j in range(4))
    html = (f'<html><head><title>{title}</title><link rel="canonical" href="https://{site}/story/{k}">'
            f'</head><body>{NAV}<div class="main"><h1>{title}</h1>{body}</div>'
            f'<ul class="related">{related}</ul>{FOOT}</body></html>')
    return html, "\n".join([title, *paras])


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "model-signing.key"))


@pytest.fixture(scope="module")
def plain_src(tmp_path_factory):
    """A plain folder: 9 pages of 3 sites, gold, and the search terms of each page."""
    src = tmp_path_factory.mktemp("src") / "news"
    for sub in ("html", "gold", "query"):
        (src / sub).mkdir(parents=True)
    for k in range(9):
        html, gold = article(k, f"site{k % 3}.example")
        (src / "html" / f"p{k}.html").write_text(html, encoding="utf-8")
        (src / "gold" / f"p{k}.txt").write_text(gold, encoding="utf-8")
        (src / "query" / f"p{k}.txt").write_text(f"story number {k}\n", encoding="utf-8")
    return src


@pytest.fixture(scope="module")
def dataset(plain_src, tmp_path_factory):
    into = tmp_path_factory.mktemp("ds")
    assert main(["import", "plain", str(plain_src), "--into", str(into), "-q"]) == 0
    return into / "news"


def test_import_plain_reads_each_pages_query(dataset):
    ds = Dataset(dataset)
    subs = {s["name"]: s for s in ds.submissions()}
    assert subs["p3"]["fields"] == [{"name": "q", "value": "story number 3", "label": "Search"}]
    terms = ds.query_terms()
    assert "story" in terms and "number" in terms and "3" in terms and "river" not in terms


def test_import_query_option_sets_one_query_for_every_page(plain_src, tmp_path):
    import shutil

    src = tmp_path / "noq"
    shutil.copytree(plain_src, src)
    shutil.rmtree(src / "query")
    (src / "query").mkdir()
    (src / "query" / "p0.txt").write_text("own terms", encoding="utf-8")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "a"), "-q"]) == 0
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "b"), "-q", "--query", "oak chair"]) == 0
    a, b = Dataset(tmp_path / "a" / "noq"), Dataset(tmp_path / "b" / "noq")
    assert [p.id for p in a.pages()] == [p.id for p in b.pages()]  # IDs do not depend on the query
    fields = {s["name"]: s["fields"] for s in b.submissions()}
    assert fields["p0"][0]["value"] == "own terms" and fields["p5"][0]["value"] == "oak chair"
    assert {"oak", "chair", "own"} <= set(b.query_terms()) and "oak" not in a.query_terms()
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "c"), "--query", " ,"]) == 1


def _presets():
    out = ["thesis"]
    if {"trafilatura", "resiliparse", "readability"} <= set(external.available()):
        out += ["site", "general", "records"]
    return out


def test_auto_preset_follows_the_sites_and_the_kind_of_gold(dataset, tmp_path):
    """auto: one site -> site; several -> general, or records when the gold has data records
    (records/ID.json), through both the train command's spec and evaluate's ModelMethod."""
    import shutil

    from hwnoise.extractors.model import ModelMethod
    from hwnoise.training.spec import auto_preset
    from hwnoise.training.train import load_inputs, model_spec

    assert [auto_preset(1), auto_preset(3), auto_preset(3, True), auto_preset(1, True)] == \
        ["site", "general", "records", "site"]
    with_records = tmp_path / "news"
    shutil.copytree(dataset, with_records)
    ds = Dataset(with_records)
    assert not ds.has_records()
    first = next(ds.pages())
    ds.write_records(first.id, [["/body[1]/div[1]/p[1]"], ["/body[1]/div[1]/p[2]"]])
    assert ds.has_records() and not Dataset(dataset).has_records()
    for path, want in ((dataset, "general"), (with_records, "records")):
        desc = load_inputs([path], columns=["dataset", "site"])[1]
        assert model_spec(None, n_sites=3, records=desc["records"]).preset == want
    method = ModelMethod(preset="auto").fit(list(ds.pages()))  # evaluate's path: by the pages
    assert method.spec.preset == "records" and "rs_main_share" in method.features


@pytest.mark.parametrize("preset", _presets())
def test_each_preset_round_trip_train_save_load_extract(preset, dataset, tmp_path, capsys):
    """train -> save -> load -> extract equals evaluate's labels on the same pages, and the
    saved model extracts a bare page that no dataset holds."""
    from hwnoise.evaluate import evaluate
    from hwnoise.extractors.base import walk_of
    from hwnoise.extractors.model import ModelMethod, extract_page, load_model
    from hwnoise.text import text_scores

    out = tmp_path / "m"
    assert main(["train", str(dataset), "--preset", preset, "--out", str(out), "--no-tree"]) == 0
    capsys.readouterr()
    meta = json.loads((out / "model.json").read_text())
    assert meta["spec"]["preset"] == preset and meta["contents"] == "tree"  # JSON, no pickle needed
    (out / "model.joblib").unlink()  # the JSON alone rebuilds the model
    model = load_model(out)
    assert model.spec.preset == preset and model.features == model.spec.columns()
    ds = Dataset(dataset)
    seen = set(model.trained_on[ds.name])
    test_pages = [p for p in ds.pages() if p.id not in seen]
    assert len(seen) == 6 and len(test_pages) == 3  # the pages protocol's 66 % / 34 %
    method = ModelMethod(model)
    for page in test_pages:  # evaluate's path and extract's path agree
        assert method.extract(page, walk_of(page)) == extract_page(model, page)
    assert main(["extract", str(dataset), "--model", str(out)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    by_page = {x["page"]: x["text"] for x in lines}
    assert len(lines) == 9 and all(by_page[p.id] == extract_page(model, p) for p in test_pages)
    # evaluate --model scores only the pages the model never saw
    rep = evaluate([dataset], methods=["model"], model=out, figures=False)
    assert rep["results"][0]["pages"] == 3 and rep["results"][0]["text_f1"] > 0.8
    # a bare page of a new site, with its query
    html, gold = article(42, "elsewhere.example")
    page = tmp_path / "new.html"
    page.write_text(html, encoding="utf-8")
    assert main(["extract", str(page), "--model", str(out), "--query", "story"]) == 0
    text = capsys.readouterr().out
    if preset != "thesis":  # the thesis's five features do not carry over to a new site
        assert text_scores(text, gold)["f1"] > 0.8 and "Copyright" not in text


def test_thesis_preset_prints_wekas_j48_tree(dataset, tmp_path, capsys):
    from hwnoise.training.weka import run_j48, weka_available

    out = tmp_path / "t"
    assert main(["train", str(dataset), "--preset", "thesis", "--all-pages", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    meta = json.loads((out / "model.json").read_text())
    assert meta["features"] == ["ctd", "density_sum", "query_score", "matches", "distance"]
    assert meta["classifier"]["name"] == "j48"
    if not weka_available():
        pytest.skip("Weka is not installed")
    arff = tmp_path / "thesis.arff"
    assert main(["export-arff", str(dataset), "-o", str(arff)]) == 0
    weka = run_j48(arff)
    import re

    def rounded(text: str) -> str:  # the ARFF holds 6 decimals; Weka's split points come from them
        return re.sub(r"\d+\.\d+", lambda m: f"{float(m.group()):.4f}", text)

    assert rounded(weka.tree_text.strip()) in rounded(printed)


def test_gb_saved_as_json_predicts_as_scikit_learn():
    from sklearn.ensemble import HistGradientBoostingClassifier

    from hwnoise.training.ensemble import TreeEnsemble

    rng = np.random.default_rng(0)
    X = rng.random((2000, 5))
    X[::7, 1] = np.nan
    y = np.where(X[:, 0] + np.nan_to_num(X[:, 1]) > 0.8, "N", "S")
    from hwnoise.training.model import threads

    with threads():  # one OpenMP thread: spinning threads make small fits slow on a busy machine
        est = HistGradientBoostingClassifier(max_iter=40).fit(X, y)
    back = TreeEnsemble.from_dict(json.loads(json.dumps(TreeEnsemble.from_sklearn(est).to_dict())))
    Xt = rng.random((500, 5))
    Xt[::3, 1] = np.nan
    Xt[::4, 0] = np.nan
    assert np.array_equal(back.predict_proba(Xt), est.predict_proba(Xt))
    assert list(back.predict(Xt)) == list(est.predict(Xt))
    assert back.decision_function(Xt[:0]).shape == (0,)


def test_rf_and_gb_rf_saved_as_json_predict_as_scikit_learn_to_the_bit():
    """A forest's trees compare float32 values, as scikit-learn's do: test values sit on and
    beside the thresholds, missing in training and prediction; the mean of gb and rf comes back
    to the bit through JSON."""
    from hwnoise.training.classifiers import BoostedForest
    from hwnoise.training.ensemble import ForestEnsemble, MeanEnsemble, json_form
    from hwnoise.training.model import threads

    rng = np.random.default_rng(3)
    X = rng.integers(0, 20, (3000, 7)) + rng.choice([0.0, 0.1, 1 / 3], (3000, 7))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.where(np.nansum(X[:, :3], axis=1) + rng.normal(0, 3, 3000) > 25, "N", "S")
    with threads():
        est = BoostedForest(n_estimators=20, max_leaf_nodes=63, min_samples_leaf=5, random_state=0).fit(X, y)
    form = json_form(est)
    assert isinstance(form, MeanEnsemble)
    back = MeanEnsemble.from_dict(json.loads(json.dumps(form.to_dict())))
    Xt = rng.integers(0, 20, (900, 7)) + rng.choice([0.0, 0.1, 1 / 3, 0.5], (900, 7))
    Xt[rng.random(Xt.shape) < 0.15] = np.nan
    assert np.array_equal(back.predict_proba(Xt)[:, 1], est.predict_proba(Xt)[:, 1])
    assert list(back.predict(Xt)) == list(est.predict(Xt))
    forest = ForestEnsemble.from_dict(json.loads(json.dumps(json_form(est.rf_).to_dict())))
    assert np.array_equal(forest.predict_proba(Xt)[:, 1], est.rf_.predict_proba(Xt)[:, 1])
    as32 = Xt.astype(np.float32).astype(np.float64)
    assert np.array_equal(forest._leaf_sums(as32), forest._descend(as32))
    bad = form.to_dict()
    with pytest.raises(ValueError, match="at least two"):
        MeanEnsemble.from_dict({**bad, "members": bad["members"][:1]})
    with pytest.raises(ValueError, match="kind must be"):
        MeanEnsemble.from_dict({**bad, "members": [bad["members"][0], {"kind": "svm"}]})
    other = {**bad["members"][1], "n_features": 9}
    with pytest.raises(ValueError, match="differ"):
        MeanEnsemble.from_dict({**bad, "members": [bad["members"][0], other]})


@pytest.mark.skipif(native.trees is None, reason="the compiled descent is not built")
def test_compiled_descent_equals_the_numpy_one_to_the_bit():
    """``training/_trees.c`` (``tree_sums``) against ``TreeEnsemble._descend``, its reference, on
    an ensemble of deep trees with missing values in training and prediction, rows given in C and
    Fortran order; thresholds hit exactly (``<=`` goes left)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from hwnoise.training.ensemble import TreeEnsemble
    from hwnoise.training.model import threads

    rng = np.random.default_rng(3)
    X = rng.integers(0, 20, (3000, 7)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.where(np.nansum(X[:, :3], axis=1) + rng.normal(0, 3, 3000) > 25, "N", "S")
    with threads():
        est = HistGradientBoostingClassifier(max_iter=60, max_leaf_nodes=31, random_state=0).fit(X, y)
    ens = TreeEnsemble.from_dict(TreeEnsemble.from_sklearn(est).to_dict())
    Xt = rng.integers(0, 20, (700, 7)).astype(float) + rng.choice([0.0, 0.5], (700, 7))
    Xt[rng.random(Xt.shape) < 0.15] = np.nan
    compiled = ens.decision_function(Xt)
    assert np.array_equal(compiled, ens._descend(Xt, ens.baseline))
    assert np.array_equal(ens.decision_function(np.asfortranarray(Xt)), compiled)
    assert np.array_equal(ens.predict_proba(Xt), est.predict_proba(Xt))
    with pytest.raises(ValueError, match="features"):
        ens.decision_function(Xt[:, :6])


@pytest.mark.skipif(native.trees is None, reason="the compiled descent is not built")
def test_compiled_expit_equals_scipys():
    """The compiled link (``_trees.c`` ``expit``) gives scipy's doubles, so the saved model's
    probabilities stay scikit-learn's without importing scipy (numpy's ``1 / (1 + exp(-x))``,
    with a SIMD exp, differs from them in the last bit on about 2 % of these values here)."""
    from scipy.special import expit

    from hwnoise.training.ensemble import _expit

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 3, 200_000), rng.uniform(-800, 800, 50_000),
                        [0.0, -0.0, 709.0, -709.0, 745.2, -745.2, np.inf, -np.inf, np.nan]])
    assert np.array_equal(_expit(x), expit(x), equal_nan=True)


def test_union_makes_the_extractors_nodes_content_whatever_the_classifier_says():
    """``union``: a node the stacked extractor keeps (at least half its words) is content at
    probability 1; the classifier decides the others, at its threshold."""
    import pandas as pd

    from hwnoise.training.model import NoiseModel

    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"a": rng.random(n), "stack_trafilatura": rng.choice([0.0, 0.4, 0.5, 1.0, np.nan], n)})
    df["label"] = np.where(df["a"] > 0.5, "N", "S")  # content by a alone: the extractor's verdict is noise
    df[["dataset", "site", "page"]] = ["d", "s", "p"]
    kept = df["stack_trafilatura"].fillna(0).to_numpy() >= 0.5
    plain, union = (NoiseModel("j48", ["a", "stack_trafilatura"], union=u).fit(df) for u in (None, "trafilatura"))
    for m in (plain, union):
        m.threshold = 0.5
    lp, pp = plain.predict_with_proba(df)
    lu, pu = union.predict_with_proba(df)
    assert (pu[kept] == 1).all() and (lu[kept] == "N").all()
    assert np.array_equal(pu[~kept], pp[~kept]) and np.array_equal(lu[~kept], lp[~kept])
    assert (lp[kept] == "S").any()  # without the union the classifier drops some of them
    assert np.array_equal(union.content_proba(df, np.arange(10, 20)), pu[10:20])
    assert list(union.predict(df)) == list(lu)
    union.threshold = None  # the classifier's own labels, with the union's nodes content
    assert (union.predict(df)[kept] == "N").all()


def test_union_gate_keeps_the_classifier_to_its_sure_nodes_on_article_pages():
    """``union_gate`` [share, threshold]: on a page where the union's extractor keeps at least
    ``share`` of the own characters (an article to it), a node it does not keep is content only at
    ``threshold`` or more; elsewhere the union is unchanged. The page's share counts all its rows,
    also when only some of them are asked for."""
    import pandas as pd

    from hwnoise.training.model import NoiseModel

    rng = np.random.default_rng(1)
    n = 400  # two pages: "art", where trafilatura keeps the long nodes, "list", where it keeps nothing
    page = np.repeat(["art", "list"], n // 2)
    own = np.where(np.arange(n) % 4 == 0, 400.0, 20.0)
    stack = np.where((page == "art") & (own == 400.0), 1.0, 0.0)
    df = pd.DataFrame({"a": rng.random(n), "own_chars": own, "stack_trafilatura": stack,
                       "dataset": "d", "site": "s", "page": page})
    # noisy labels and a logistic regression on ``a`` alone: probabilities that run smoothly
    # from 0 to 1 on both pages, whatever the library's version
    df["label"] = np.where(df["a"] + rng.normal(0, 0.2, n) > 0.5, "N", "S")
    union, gated = (NoiseModel("logreg", ["a"], union="trafilatura", union_gate=g).fit(df)
                    for g in (None, [0.5, 0.9]))
    for m in (union, gated):
        m.threshold = 0.3
    pu, pg = union.content_proba(df), gated.content_proba(df)
    art, kept = page == "art", stack >= 0.5
    unsure = ~kept & (pu >= 0.3) & (pu < 0.9)
    assert (unsure & art).any() and (unsure & ~art).any()
    assert (pg[unsure & art] == 0).all()  # the article page: the classifier's unsure nodes dropped
    assert np.array_equal(pg[~art], pu[~art])  # the list page: the union as it was
    assert np.array_equal(pg[kept], pu[kept]) and (pg[kept] == 1).all()
    assert np.array_equal(pg[art & (pu >= 0.9)], pu[art & (pu >= 0.9)])
    assert np.array_equal(gated.content_proba(df, np.arange(190, 230)), pg[190:230])
    labels, proba = gated.predict_with_proba(df)
    assert np.array_equal(proba, pg) and list(labels) == list(np.where(pg >= 0.3, "N", "S"))
    # a share the article page does not reach: no gate anywhere
    gated.spec.union_gate = [0.99, 0.9]
    assert np.array_equal(gated.content_proba(df), pu)
    # one page without key columns: all of the rows are that page
    gated.spec.union_gate = [0.5, 0.9]
    alone = df[art].drop(columns=["dataset", "page"])
    assert np.array_equal(gated.content_proba(alone), pg[art])


def test_union_gate_in_the_spec_and_on_the_command_line(dataset, tmp_path, capsys):
    from hwnoise.training.spec import ModelSpec, SpecError, preset_spec, resolve_preset

    general = preset_spec("general")
    assert general.union_gate is None and preset_spec("records").union_gate is None
    gated = resolve_preset(general, 5, {"union_gate": "0.3, 0.8"})
    assert gated.union_gate == [0.3, 0.8]
    assert resolve_preset(gated, 5, {"union": None}).union_gate is None  # the gate goes with its union
    assert resolve_preset(gated, 5, {"stack": ["cetd"]}).union_gate is None  # and with its extractor
    assert ModelSpec.from_dict(gated.to_dict()) == gated
    assert resolve_preset(general, 5, {"union_gate": None}).union_gate is None
    for bad in ([0.2], [0.2, 1.5], "x,y", [True, 0.5]):
        with pytest.raises(SpecError, match="union_gate"):
            resolve_preset(general, 5, {"union_gate": bad})
    with pytest.raises(SpecError, match="gates a union"):
        ModelSpec.from_dict({"stack": ["trafilatura"], "union_gate": [0.2, 0.7]})
    assert ModelSpec.from_dict(general.to_dict()) == general
    out = tmp_path / "m"
    assert main(["train", str(dataset), "--preset", "thesis", "--stack", "trafilatura", "--union", "trafilatura",
                 "--union-gate", "0.25,0.75", "--out", str(out)]) == 0
    assert json.loads((out / "model.json").read_text())["spec"]["union_gate"] == [0.25, 0.75]
    ev = tmp_path / "ev"  # evaluate takes the option from the same parser, and its report says so
    assert main(["evaluate", str(dataset), "--preset", "thesis", "--stack", "trafilatura", "--union",
                 "trafilatura", "--union-gate", "0.25,0.75", "--methods", "model", "--no-figures",
                 "--out", str(ev)]) == 0
    assert json.loads((ev / "report.json").read_text())["method_options"]["model"]["union_gate"] == "0.25,0.75"
    assert "Options of `model`: preset thesis, stack ['trafilatura'], union trafilatura, union_gate 0.25,0.75." \
        in (ev / "report.md").read_text()
    ev2 = tmp_path / "ev2"
    assert main(["evaluate", str(dataset), "--model", str(out), "--methods", "model", "--no-figures",
                 "--out", str(ev2)]) == 0
    assert json.loads((ev2 / "report.json").read_text())["model_spec"]["union_gate"] == [0.25, 0.75]
    assert "union_gate [0.25, 0.75]" in (ev2 / "report.md").read_text()
    capsys.readouterr()
    assert main(["train", str(dataset), "--preset", "thesis", "--union-gate", "0.2,0.7",
                 "--out", str(tmp_path / "x")]) == 1
    assert "union_gate" in capsys.readouterr().err


def test_union_option_goes_with_the_stack(tmp_path):
    from hwnoise.training.spec import ModelSpec, SpecError, preset_spec, resolve_preset

    general = preset_spec("general")
    assert general.union == "trafilatura" and preset_spec("records").union is None
    assert resolve_preset(general, 5, {"stack": ["cetd"]}).union is None  # dropped with its extractor
    assert resolve_preset(general, 5, {"stack": "trafilatura,cetd"}).union == "trafilatura"  # a comma string too
    assert resolve_preset(preset_spec("thesis"), 5, {"stack": "trafilatura"}).union is None
    assert resolve_preset(general, 5, {"union": None}).union is None
    with pytest.raises(SpecError, match="union"):
        resolve_preset(general, 5, {"stack": ["cetd"], "union": "trafilatura"})
    assert ModelSpec.from_dict(general.to_dict()) == general


def test_union_on_the_command_line(dataset, tmp_path, capsys):
    """``--union`` on train: recorded in model.json's spec, applied when the saved model extracts
    (every node trafilatura keeps is in the text), and an extractor not stacked is one clear error."""
    out = tmp_path / "m"
    assert main(["train", str(dataset), "--preset", "thesis", "--stack", "trafilatura", "--union", "trafilatura",
                 "--threshold", "1", "--out", str(out)]) == 0
    assert json.loads((out / "model.json").read_text())["spec"]["union"] == "trafilatura"
    page = tmp_path / "p.html"
    html, gold = article(11, "new.example")
    page.write_text(html, encoding="utf-8")
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Story 11" in text and gold.splitlines()[1][:40] in text  # a threshold of 1: only the union
    capsys.readouterr()
    assert main(["train", str(dataset), "--preset", "thesis", "--union", "cetd", "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "union" in err and "cetd" in err
    none = tmp_path / "none"  # 'none' drops the preset's union, --content-from reaches the spec too
    assert main(["train", str(dataset), "--preset", "general", "--stack", "trafilatura", "--union", "none",
                 "--content-from", "records", "--threshold", "0.5", "--out", str(none)]) == 0
    spec = json.loads((none / "model.json").read_text())["spec"]
    assert spec["union"] is None and spec["content_from"] == "records"


def test_a_gb_rf_model_extracts_from_its_json_alone(dataset, tmp_path, capsys):
    """train --classifier gb+rf -> model.json holds both ensembles' arrays -> without the pickle,
    extract gives what the fitted estimator labels, and a member cut out of the file is one clear
    error naming it."""
    from hwnoise.extractors.base import walk_of
    from hwnoise.extractors.model import ModelMethod, extract_page, load_model

    out = tmp_path / "m"
    assert main(["train", str(dataset), "--preset", "thesis", "--classifier", "gb+rf",
                 "--param", "n_estimators=12", "--out", str(out), "--no-tree"]) == 0
    capsys.readouterr()
    meta = json.loads((out / "model.json").read_text())
    assert meta["contents"] == "tree" and meta["classifier"]["class"].endswith("ensemble.MeanEnsemble")
    assert [m["kind"] for m in meta["tree"]["members"]] == ["gradient-boosting", "random-forest"]
    assert len(meta["tree"]["members"][1]["trees"]) == 12
    pickled = load_model(out / "model.joblib")  # signed here: the fitted BoostedForest itself
    assert type(pickled.estimator).__name__ == "BoostedForest"
    (out / "model.joblib").unlink()
    model = load_model(out)
    assert type(model.estimator).__name__ == "MeanEnsemble"
    for page in Dataset(dataset).pages():
        assert extract_page(model, page) == extract_page(pickled, page) == ModelMethod(model).extract(page, walk_of(page))
    meta["tree"]["members"] = meta["tree"]["members"][:1]
    (out / "model.json").write_text(json.dumps(meta))
    assert main(["extract", str(next(Dataset(dataset).pages()).html_path), "--model", str(out)]) == 1
    assert "at least two" in capsys.readouterr().err


def _saved_thesis_model(dataset: Path, out: Path) -> dict:
    from hwnoise.api import train

    train([dataset], preset="thesis", classifier="gb", out=out)
    return json.loads((out / "model.json").read_text())


MUTATIONS = {
    "a string threshold": (lambda m: m.update(threshold="0.4x"), "threshold"),
    "features: 5": (lambda m: m.update(features=5), "features"),
    "a threshold of 1e400": (None, "threshold"),
    "JSON nested 100k deep": (None, "nested"),
    "a negative threshold": (lambda m: m.update(threshold=-0.5), "threshold"),
    "tree is a list": (lambda m: m.update(tree=[1, 2]), "tree"),
    "classifier is a string": (lambda m: m.update(classifier="gb"), "classifier"),
    "categories of numbers": (lambda m: m.update(categories={"tag": [1, 2]}), "categories"),
    "query of strings": (lambda m: m.update(query=["a", "b"]), "query"),
    "a stacked extractor that is not one": (lambda m: m["spec"].update(stack=["rm -rf"]), "spec.stack"),
    "content from nowhere": (lambda m: m["spec"].update(content_from="tables"), "spec.content_from"),
    "a union with an extractor not stacked": (lambda m: m["spec"].update(union="trafilatura"), "spec.union"),
    "a split out of range": (lambda m: m["tree"]["trees"][0].update(
        feature=[99] * len(m["tree"]["trees"][0]["feature"])), "tree"),
    "format_version from the future": (lambda m: m.update(format_version=99), "format_version"),
    "format_version not an integer": (lambda m: m.update(format_version="1"), "must be "),
    # one feature fewer or more than the trees split on: every page failed, each named as the fault
    "a feature list one short": (lambda m: m["features"].pop(), "features"),
    "a feature list one long": (lambda m: m["features"].append("ctd_parent"), "features"),
    # a damaged region scorer was found only when --records used it, in a line naming no file
    "a region scorer of another shape": (lambda m: m.update(regions={"threshold": "x"}), "regions"),
    # categories for a number feature read every page's numbers as unseen categories (missing),
    # and each page was labelled from that alone; a category twice was a ValueError per page
    "categories for a number feature": (lambda m: m.update(categories={"ctd": ["1", "2"]}), "categories"),
    "categories named twice": (lambda m: (m["features"].__setitem__(0, "colour"),
                                          m.update(categories={"colour": ["red", "red"]})), "categories"),
    "categories of a feature the model lacks": (lambda m: m.update(categories={"colour": ["red"]}), "categories"),
    "categories a list": (lambda m: m.update(categories=[]), "categories"),
    # the class or a key as a feature: a traceback-free error on evaluate that named no file
    "the class as a feature": (lambda m: m["features"].__setitem__(0, "label"), "features"),
    "a query term of kind 5": (lambda m: m["query"].append({"term": "x", "kind": 5}), "query"),
    "scores of strings": (lambda m: m.update(scores=["0.9"]), "scores"),
    "protocol 5": (lambda m: m.update(protocol=5), "protocol"),
}


def test_mutated_model_json_is_one_clear_error(dataset, tmp_path, capsys):
    good = _saved_thesis_model(dataset, tmp_path / "good")
    page = tmp_path / "p.html"
    page.write_text(article(1, "x.example")[0], encoding="utf-8")
    for name, (mutate, key) in MUTATIONS.items():
        path = tmp_path / "bad" / name.replace(" ", "_") / "model.json"
        path.parent.mkdir(parents=True)
        meta = json.loads(json.dumps(good))
        meta.pop("joblib")
        if mutate is not None:
            mutate(meta)
            text = json.dumps(meta)
        elif "1e400" in name:
            text = json.dumps(meta).replace('"threshold": null', '"threshold": 1e400')
            assert "1e400" in text
        else:
            text = json.dumps(meta)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
        path.write_text(text, encoding="utf-8")
        capsys.readouterr()
        assert main(["extract", str(page), "--model", str(path)]) == 1, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("hwnoise: error: ") and str(path) in err[0], name
        assert key in err[0], (name, err[0])


def _first_split(tree: dict) -> int:
    """The first inner node of a saved gb tree (its left child is not 0)."""
    return next(i for i, leaf in enumerate(tree["leaf"]) if not leaf)


#: A saved J48 tree damaged: each was a traceback (an index past int64 or 1e400), or loaded and
#: labelled pages from nonsense (a split at NaN sends every row one way; NaN or negative class
#: counts; a fraction of an index silently cut to a whole one).
J48_MUTATIONS = {
    "a son numbered 1e30": lambda t: t["children"][0].__setitem__(1, 10 ** 30),
    "a feature numbered 1e400": lambda t: t["feature"].__setitem__(0, float("inf")),
    "a feature numbered 0.5": lambda t: t["feature"].__setitem__(0, 0.5),
    "a split at NaN": lambda t: t["threshold"].__setitem__(0, float("nan")),
    "a split at Infinity": lambda t: t["threshold"].__setitem__(0, float("inf")),
    "NaN class counts": lambda t: t["value"][0].__setitem__(0, float("nan")),
    "negative class counts": lambda t: t["value"][-1].__setitem__(0, -5.0),
    "an infinite total": lambda t: t["total"].__setitem__(0, float("inf")),
}
#: The same for a gb tree (an infinite split is scikit-learn's own, for missing values).
GB_MUTATIONS = {
    "a gb split at NaN": lambda t: t["threshold"].__setitem__(_first_split(t), float("nan")),
    "a gb child numbered 1.5": lambda t: t["left"].__setitem__(_first_split(t), _first_split(t) + 1.5),
}


@pytest.fixture(scope="module")
def saved_trees(dataset, tmp_path_factory) -> dict:
    """model.json of the thesis preset with a J48 tree and with gb trees, trained once."""
    from hwnoise.api import train

    out = {}
    for classifier in ("j48", "gb"):
        where = tmp_path_factory.mktemp(classifier)
        train([dataset], preset="thesis", classifier=classifier, out=where)
        out[classifier] = json.loads((where / "model.json").read_text())
    return out


@pytest.mark.parametrize("classifier,name", [("j48", n) for n in J48_MUTATIONS] + [("gb", n) for n in GB_MUTATIONS])
def test_a_damaged_tree_in_model_json_is_one_line_naming_the_file(saved_trees, tmp_path, capsys, classifier, name):
    meta = json.loads(json.dumps(saved_trees[classifier]))
    meta.pop("joblib")
    if classifier == "j48":
        J48_MUTATIONS[name](meta["tree"])
    else:
        GB_MUTATIONS[name](meta["tree"]["trees"][0])
    path, err = _extract_with_edited_model(meta, tmp_path, capsys)
    assert len(err) == 1 and err[0].startswith(f"hwnoise: error: {path}: cannot rebuild"), err


def _extract_with_edited_model(meta: dict, tmp_path, capsys) -> tuple[Path, list[str]]:
    """``hwnoise extract`` of a page with the model ``meta`` saved as model.json: it fails (exit 1);
    the file's path and the lines on stderr."""
    path = tmp_path / "model.json"
    path.write_text(json.dumps(meta), encoding="utf-8")
    page = tmp_path / "p.html"
    page.write_text(article(1, "x.example")[0], encoding="utf-8")
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(path)]) == 1
    return path, capsys.readouterr().err.strip().splitlines()


def test_a_model_of_a_newer_format_says_to_upgrade_not_that_it_is_damaged(saved_trees, tmp_path, capsys):
    meta = json.loads(json.dumps(saved_trees["j48"]))
    meta.pop("joblib")
    meta.update(format_version=meta["format_version"] + 1, hwnoise="9.0.0")
    path, err = _extract_with_edited_model(meta, tmp_path, capsys)
    assert len(err) == 1 and err[0].startswith(f"hwnoise: error: {path}: key 'format_version'"), err
    assert "newer hwnoise (by hwnoise 9.0.0): upgrade hwnoise" in err[0] and "damaged" not in err[0], err


def test_a_stacked_extractor_not_installed_names_the_extra(monkeypatch, capsys, dataset, tmp_path):
    monkeypatch.setitem(external.PACKAGES, "resiliparse", "hwnoise_no_such_package")
    assert main(["train", str(dataset), "--stack", "resiliparse", "--preset", "thesis",
                 "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "resiliparse" in err and "pip install 'hwnoise[extractors]'" in err


def test_extract_is_a_batch_tool(dataset, tmp_path, capsys):
    from hwnoise.extractors.model import extract_with_model, load_model

    out = tmp_path / "m"
    _saved_thesis_model(dataset, out)
    files = []
    for k in range(5):
        f = tmp_path / f"b{k}.html"
        f.write_text(article(100 + k, "batch.example")[0], encoding="utf-8")
        files.append(f)
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    capsys.readouterr()
    assert main(["extract", *map(str, files), str(tmp_path / "img.png"), "-m", str(out), "--workers", "2"]) == 1
    res = capsys.readouterr()
    lines = [json.loads(x) for x in res.out.splitlines()]
    model = load_model(out)
    assert [x["page"] for x in lines] == [f.name for f in files]  # input order, the PNG skipped
    assert all(x["text"] == extract_with_model(model, f.read_bytes()) for x, f in zip(lines, files))
    assert "img.png" in res.err and "not an HTML page" in res.err
    proc = subprocess.run([sys.executable, "-m", "hwnoise.cli", "extract", "-", "-m", str(out), "--jsonl"],
                          input=files[0].read_bytes(), capture_output=True)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"page": "-", "url": "", "text": lines[0]["text"]}
    # '-' twice: the second read an empty standard input and was skipped as "an empty file"
    proc = subprocess.run([sys.executable, "-m", "hwnoise.cli", "extract", "-", str(files[1]), "-", "-m", str(out)],
                          input=files[0].read_text(encoding="utf-8"), capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "hwnoise: error: '-' (the page on standard input) is given 2 times; give it once\n"


def test_python_api_trains_saves_loads_and_extracts(dataset, tmp_path):
    from hwnoise import extract, load_model, train

    result = train([dataset], preset="thesis", out=tmp_path / "m", all_pages=True)
    model = load_model(tmp_path / "m")
    assert model.trained_on == result["model"].trained_on and len(model.trained_on["news"]) == 9
    html, gold = article(7, "api.example")
    assert extract(model, html.encode()) == extract(str(tmp_path / "m"), html.encode())


def test_python_api_refuses_what_is_no_html_page_and_a_model_that_labels_no_page(tmp_path):
    # an image or a PDF came back as text made of its bytes; an ARFF user's model labelled a page
    # from missing values alone
    from hwnoise import extract, extract_records
    from hwnoise.errors import HwnoiseError
    import pandas as pd

    from hwnoise.training.model import ModelError, NoiseModel

    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    with pytest.raises(HwnoiseError, match=r"not an HTML page \(a PNG image\)"):
        extract("general", png)
    with pytest.raises(HwnoiseError, match=r"not an HTML page \(a PDF document\)"):
        extract_records("records", b"%PDF-1.4 ...")
    with pytest.raises(HwnoiseError, match="text without HTML markup"):
        extract("general", "just words, no markup")
    assert extract("general", "<p>The oak chair costs forty euros.</p>") == "The oak chair costs forty euros."
    foreign = NoiseModel("j48", ["petal", "sepal"]).fit(
        pd.DataFrame({"petal": [1.0, 2, 3, 4] * 5, "sepal": [0.0, 1, 0, 1] * 5, "label": ["N", "S"] * 10}))
    with pytest.raises(ModelError, match="cannot label the nodes of a page"):
        extract(foreign, "<p>The oak chair costs forty euros.</p>")


def test_python_api_names_an_argument_of_the_wrong_kind_and_what_to_pass(dataset, tmp_path):
    """A notebook user's slips were TypeErrors and AttributeErrors from deep inside ('PosixPath'
    object is not subscriptable, 'DecisionTreeClassifier' object has no attribute 'estimator',
    'int' object has no attribute 'strip'), or, for train on bytes or a DataFrame, 'no such
    dataset folder' for each byte or column; each is one ArgumentError (a HwnoiseError and a
    TypeError) naming the argument and what to pass."""
    import pandas as pd
    from sklearn.tree import DecisionTreeClassifier

    from hwnoise import extract, extract_records, load_model, train
    from hwnoise.api import ArgumentError
    from hwnoise.errors import HwnoiseError

    html = "<p>The oak chair costs forty euros.</p>"
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    cases = [
        (lambda: extract("general", page), r"html is the path '.*page.html', not a page; .*read_bytes\(\)"),
        (lambda: extract("general", str(page)), r"html is the path '.*page.html', not a page"),
        (lambda: extract("general", None), r"html is None; give one page's HTML as bytes"),
        (lambda: extract("general", [html, html]), r"html is a list \(one page a call\)"),
        (lambda: extract_records("records", pd.DataFrame({"a": [1]})), r"html is a DataFrame"),
        (lambda: extract(None, html), r"model is None, not an hwnoise model; give one from load_model\(\)"),
        (lambda: extract(html.encode(), html), r"model is bytes, not an hwnoise model"),
        (lambda: extract(DecisionTreeClassifier().fit([[0], [1]], ["S", "N"]), html),
         r"model is a DecisionTreeClassifier, not an hwnoise model"),
        (lambda: extract("general", html, query=5), r"query is an int; give the search .* as a str"),
        (lambda: extract("general", html, http_charset=8), r"http_charset is an int; give the charset"),
        (lambda: load_model(None), r"load_model: path is None; give a saved model's folder"),
        (lambda: train(None, preset="thesis"), r"train: inputs is None; give dataset folders"),
        (lambda: train(str(dataset).encode(), preset="thesis"), r"train: inputs is bytes"),
        (lambda: train(pd.DataFrame({"ctd": [1.0]}), preset="thesis"), r"inputs is a DataFrame; .*write_arff"),
        (lambda: train([dataset, 3], preset="thesis"), r"inputs is a list holding an int"),
    ]
    for call, message in cases:
        with pytest.raises(ArgumentError, match=message) as caught:
            call()
        assert isinstance(caught.value, HwnoiseError) and isinstance(caught.value, TypeError)
    # what was accepted still is: bytes, str, a bytearray or memoryview of the page, a glob's paths
    text = extract("general", html.encode())
    assert text == extract("general", html) == extract("general", memoryview(html.encode()))
    assert train(dataset.parent.glob(dataset.name), preset="thesis")["results"][0]["nodes"] > 0


def test_python_api_says_what_to_pass_for_a_url_an_open_file_a_tree_and_a_records_option(tmp_path):
    """A URL was "not an HTML page (text without HTML markup)", an open file or an lxml tree "give
    one page's HTML as bytes" without how; extract_records(hidden="no") (a true str) kept the
    hidden records and page=3 wrote a number as the page's name: each says what to pass."""
    from lxml import html as lxml_html

    from hwnoise import extract, extract_records
    from hwnoise.api import ArgumentError

    html = "<p>The oak chair costs forty euros.</p>"
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    cases = [
        (lambda: extract("general", " https://example.com/a?q=1 "),
         r"html is the URL 'https://example.com/a\?q=1', not a page; .*hwnoise extract URL"),
        (lambda: extract("general", open(page, "rb")), r"an open file\); give its bytes: f.read\(\)"),
        (lambda: extract("general", lxml_html.fromstring(html)), r"a parsed tree\); .*lxml.html.tostring"),
        (lambda: extract_records("records", html, hidden="no"), r"extract_records: hidden is a str \('no'\); give True"),
        (lambda: extract_records("records", html, page=3), r"extract_records: page is an int \(3\)"),
        (lambda: extract("general", html, markdown="yes"), r"extract: markdown is a str \('yes'\); give True"),
    ]
    for call, message in cases:
        with pytest.raises(ArgumentError, match=message):
            call()
    # a page whose text is a URL is still a page
    assert extract("general", "<p>See https://example.com/a for the oak chair.</p>").startswith("See https://")


def test_the_shipped_general_model_loads_and_extracts_a_bare_page(tmp_path, capsys):
    from hwnoise.extractors.model import load_model

    model = load_model("general")
    assert model.spec.preset == "general" and model.data_hash.startswith("sha256:")
    assert model.cross_site["pooled"]["pages"] > 0
    html, gold = article(5, "bare.example")
    page = tmp_path / "bare.html"
    page.write_text(html, encoding="utf-8")
    assert main(["extract", str(page)]) == 0  # no --model: general
    assert "Copyright" not in capsys.readouterr().out


def test_no_model_given_is_the_shipped_one_whatever_the_current_folder_holds(tmp_path, capsys, monkeypatch):
    # a folder named general (or a file named records) where extract ran stood for the default
    # model: "general: no model.json or model.joblib in this folder", "records: not signed"
    page = tmp_path / "bare.html"
    page.write_text(article(5, "bare.example")[0], encoding="utf-8")
    (tmp_path / "general").mkdir()
    (tmp_path / "records").write_text("my notes on the records\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["extract", "bare.html"]) == 0
    assert "Story 5 about" in capsys.readouterr().out
    assert main(["extract", "bare.html", "--records", "--workers", "2"]) == 0
    assert "(model records)" in capsys.readouterr().err


def test_the_shipped_model_extracts_a_page_built_by_its_scripts(tmp_path, capsys):
    """A forum page that holds its thread in <noscript> (Discourse's pages for clients without
    scripts): the walk shows it as a browser with scripting off would, so the text comes out."""
    from script_fixtures import SCRIPT_SHELL

    page = tmp_path / "forum.html"
    page.write_text(SCRIPT_SHELL, encoding="utf-8")
    assert main(["extract", str(page)]) == 0
    out = capsys.readouterr().out
    assert "broke document reviews for our whole team" in out and "fails halfway" in out


def test_extract_says_which_pages_gave_no_text_and_why_that_usually_is(tmp_path, capsys):
    """An app shell that its scripts would fill (no <noscript>, nothing streamed) gives no text:
    the summary counts it and stderr says what usually causes it."""
    from script_fixtures import SCRIPT_SHELL

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "app.html").write_text('<html><body><div id="root"></div><script src="/app.js"></script>'
                                    "</body></html>", encoding="utf-8")
    (crawl / "forum.html").write_text(SCRIPT_SHELL, encoding="utf-8")
    assert main(["extract", str(crawl)]) == 0
    res = capsys.readouterr()
    lines = [json.loads(x) for x in res.out.splitlines()]
    assert [x["text"] == "" for x in lines] == [True, False]
    assert "2 page(s) extracted, 0 skipped, 1 with no text" in res.err
    assert "built by its scripts" in res.err
    assert main(["extract", str(crawl / "forum.html")]) == 0
    assert "built by its scripts" not in capsys.readouterr().err


def test_extract_takes_a_folder_of_pages_compressed_or_not(dataset, tmp_path, capsys):
    import gzip

    from hwnoise.extractors.model import extract_with_model, load_model

    out = tmp_path / "m"
    _saved_thesis_model(dataset, out)
    crawl = tmp_path / "crawl"
    (crawl / "sub").mkdir(parents=True)
    html = [article(200 + k, "folder.example")[0].encode() for k in range(3)]
    (crawl / "a.html").write_bytes(html[0])
    (crawl / "sub" / "b.htm.gz").write_bytes(gzip.compress(html[1]))
    (crawl / "c.html.gz").write_bytes(gzip.compress(html[2])[:40])  # cut short
    (crawl / "notes.txt").write_text("not a page")
    capsys.readouterr()
    assert main(["extract", str(crawl), "-m", str(out)]) == 1  # one page unreadable
    res = capsys.readouterr()
    lines = [json.loads(x) for x in res.out.splitlines()]
    model = load_model(out)
    assert [x["page"] for x in lines] == ["a.html", "sub/b.htm.gz"]  # sorted, notes.txt not a page
    assert [x["text"] for x in lines] == [extract_with_model(model, h) for h in html[:2]]
    assert lines[0]["text"]
    assert "c.html.gz" in res.err and "cut short" in res.err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["extract", str(empty), "-m", str(out)]) == 1
    assert "no page files" in capsys.readouterr().err


def test_evaluate_says_when_every_page_was_the_models_training_page(dataset, tmp_path, capsys):
    """A model trained on all of a dataset's pages has nothing to score there: the error says why."""
    out = tmp_path / "m"
    assert main(["train", str(dataset), "--preset", "thesis", "--all-pages", "--out", str(out), "--no-tree"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(dataset), "--model", str(out), "--methods", "model"]) == 1
    err = capsys.readouterr().err
    assert "nothing to score" in err and "9 page(s) the model was trained on" in err


def test_page_cut_keeps_each_pages_nodes_relative_to_its_likeliest():
    """``cut`` "page": the threshold is compared with the classifier's probability over the
    highest of its page's rows that hold text of their own, page by page (``dataset``, ``page``),
    the union's nodes content whatever; rows of one page without key columns are that page."""
    import pandas as pd

    from hwnoise.training.model import NoiseModel

    class Fixed:  # a classifier whose probability of content is the feature a itself
        classes_ = np.array(["N", "S"])

        def predict_proba(self, X):
            return np.column_stack([X[:, 0], 1 - X[:, 0]])

        def predict(self, X):
            return np.where(X[:, 0] >= 0.5, "N", "S")

    # page A's likeliest text node 0.8, page B's 0.2 (its 0.9 row holds no text of its own)
    df = pd.DataFrame({"dataset": "d", "site": "s", "page": ["A"] * 4 + ["B"] * 4,
                       "a": [0.8, 0.4, 0.1, 0.0, 0.2, 0.1, 0.04, 0.9],
                       "own_chars": [50, 50, 50, 50, 50, 50, 50, 0],
                       "stack_trafilatura": [0, 0, 0, 1.0, 0, 0, 0, 0]})
    absolute, page, union = (NoiseModel(Fixed(), ["a"], cut=c, union=u)
                             for c, u in (("absolute", None), ("page", None), ("page", "trafilatura")))
    for m in (absolute, page, union):
        m.threshold = 0.45
    assert list(absolute.predict(df)) == list("NSSSSSSN")
    assert page.spec.cut == "page" and absolute.spec.cut == "absolute"
    assert list(page.predict(df)) == list("NNSSNNSN")  # A: 0.8, 0.4 >= 0.45 x 0.8; B: 0.2, 0.1 >= 0.45 x 0.2
    assert np.allclose(page.content_proba(df), [1, 0.5, 0.125, 0, 1, 0.5, 0.2, 1])
    assert list(union.predict(df)) == list("NNSNNNSN")  # A's last node: trafilatura keeps it
    # some rows asked for: each page's highest among them; page B alone, without its keys
    assert list(page.predict(df, np.array([1, 2, 5, 6]))) == list("NSNS")
    alone = df[df["page"] == "B"].drop(columns=["dataset", "page"])
    assert list(page.predict(alone)) == list("NNSN")
    zero = df.assign(a=0.0)  # every probability 0: nothing kept, no division by zero
    assert (page.content_proba(zero) == 0).all() and list(page.predict(zero)) == list("SSSSSSSS")


def test_page_cut_in_the_spec_model_json_and_on_the_command_line(dataset, tmp_path, capsys):
    from hwnoise.training.model import ModelError, NoiseModel
    from hwnoise.training.spec import ModelSpec, SpecError, preset_spec, resolve_preset

    general = preset_spec("general")
    assert general.cut == "absolute" and "cut" not in general.to_dict()  # model.json as before
    ratio = resolve_preset(general, 5, {"cut": "page"})
    assert ratio.cut == "page" and ratio.inner and ratio.to_dict()["cut"] == "page"
    assert ModelSpec.from_dict(ratio.to_dict()) == ratio
    assert ModelSpec.from_dict(general.to_dict()) == general
    for bad in ("relative", 1, None, ["page"]):
        with pytest.raises(SpecError, match=r"cut: must be one of absolute, page"):
            ModelSpec.from_dict({"threshold": 0.3, "cut": bad})
    with pytest.raises(SpecError, match="cut.*has none"):
        resolve_preset(preset_spec("thesis"), 5, {"cut": "page"})  # the classifier's own call: nothing to cut
    out = tmp_path / "m"
    assert main(["train", str(dataset), "--preset", "thesis", "--threshold", "inner", "--cut", "page",
                 "--out", str(out)]) == 0
    doc = json.loads((out / "model.json").read_text())
    assert doc["spec"]["cut"] == "page" and doc["spec"]["threshold"] == "inner"
    model = NoiseModel.load(out / "model.json")
    assert model.spec.cut == "page" and 0 < model.threshold <= 1
    page = tmp_path / "p.html"
    html, gold = article(12, "new.example")
    page.write_text(html, encoding="utf-8")
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(out)]) == 0
    assert gold.splitlines()[1][:40] in capsys.readouterr().out
    doc["spec"]["cut"] = "relative"  # a bad value in model.json: one error naming the key
    (out / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelError, match=r"spec\.cut: must be one of absolute, page, not 'relative'"):
        NoiseModel.load(out / "model.json")
    ev = tmp_path / "ev"  # evaluate takes it from the same parser
    assert main(["evaluate", str(dataset), "--preset", "thesis", "--threshold", "0.3", "--cut", "page",
                 "--methods", "model", "--no-figures", "--out", str(ev)]) == 0
    assert json.loads((ev / "report.json").read_text())["method_options"]["model"]["cut"] == "page"
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["train", str(dataset), "--cut", "sideways", "--out", str(tmp_path / "x")])
    assert "--cut" in capsys.readouterr().err
