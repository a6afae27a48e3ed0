"""NoiseModel files: save/load round trips, the safe JSON load, refusing pickles hwnoise did not sign;
and the classifiers offered by name."""
from __future__ import annotations

import json
import pickle

import joblib
import numpy as np
import pandas as pd
import pytest

from hwnoise.training.classifiers import ClassifierError, PrunedCART, make_classifier
from hwnoise.training.model import ModelError, NoiseModel, resolve_features

QUERY = [{"term": "book", "kind": "value"}, {"term": "author", "kind": "visible_label"}]


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    """Each test signs with its own key, never the user's."""
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "key" / "model-signing.key"))


def table(n_pages: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.RandomState(seed)
    frames = []
    for i in range(n_pages):
        n = 50
        ctd = rng.exponential(20, n)
        qs = rng.exponential(2, n)
        label = np.where(((ctd > 25) & (qs > 1.5)) ^ (rng.rand(n) < 0.03), "N", "S")
        frames.append(pd.DataFrame({
            "dataset": "toy", "site": "toy.com", "page": f"p{i}", "ctd": ctd,
            "density_sum": ctd * rng.uniform(0.5, 2, n), "query_score": qs,
            "matches": rng.poisson(1, n), "distance": rng.randint(1, 12, n),
            "tag": rng.choice(["div", "td", "a"], n), "label": label}))
    return pd.concat(frames, ignore_index=True)


def fitted(classifier: str = "j48", **kw) -> NoiseModel:
    model = NoiseModel(classifier, query=QUERY, **kw).fit(table())
    model.protocol = "pages"
    model.scores = [{"dataset": "toy", "f1": 0.9}]
    return model


def test_save_writes_joblib_and_safe_json(tmp_path):
    model = fitted()
    out = model.save(tmp_path / "m")
    meta = json.loads((out / "model.json").read_text())
    assert (out / "model.joblib").exists()
    assert meta["contents"] == "tree" and meta["tree"]["format"]
    assert meta["features"] == ["ctd", "density_sum", "query_score", "matches", "distance"]
    assert meta["query"] == QUERY and meta["protocol"] == "pages" and meta["scores"][0]["f1"] == 0.9
    assert meta["train_hash"].startswith("sha256:") and meta["hwnoise"]
    assert meta["joblib"]["hmac_sha256"] and len(meta["joblib"]["sha256"]) == 64


def test_a_model_json_edited_in_an_editor_that_writes_a_bom_loads(tmp_path):
    """model.json saved by an editor that starts UTF-8 with a byte-order mark (Windows' Notepad)
    was refused: 'Unexpected UTF-8 BOM (decode using utf-8-sig)'."""
    model = fitted()
    out = model.save(tmp_path / "m")
    (out / "model.joblib").unlink()
    path = out / "model.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    df = table(seed=5)
    assert np.array_equal(NoiseModel.load(path).predict(df), model.predict(df))


def test_json_load_never_unpickles_and_predicts_the_same(tmp_path, monkeypatch):
    model = fitted()
    out = model.save(tmp_path / "m")
    (out / "model.joblib").unlink()  # the JSON alone must do

    def no_unpickling(*a, **k):
        raise AssertionError("unpickled")

    monkeypatch.setattr(joblib, "load", no_unpickling)
    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    for path in (out, out / "model.json"):
        loaded = NoiseModel.load(path)
        df = table(seed=5)
        assert np.array_equal(loaded.predict(df), model.predict(df))
        assert loaded.query_terms(["value"]) == ["book"]
        assert loaded.train_hash == model.train_hash and loaded.protocol == "pages"


def test_signed_joblib_loads_and_foreign_pickle_needs_the_flag(tmp_path, monkeypatch):
    model = fitted()
    out = model.save(tmp_path / "m")
    df = table(seed=3)
    assert np.array_equal(NoiseModel.load(out / "model.joblib").predict(df), model.predict(df))

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    joblib.dump(model, foreign / "model.joblib")  # a pickle hwnoise did not sign
    with pytest.raises(ModelError, match="--allow-pickle"):
        NoiseModel.load(foreign / "model.joblib")
    with pytest.raises(ModelError, match="--allow-pickle"):
        NoiseModel.load(foreign)
    assert np.array_equal(NoiseModel.load(foreign, allow_pickle=True).predict(df), model.predict(df))

    # tampered bytes beside a genuine model.json: the HMAC no longer matches
    blob = bytearray((out / "model.joblib").read_bytes())
    blob[-2] ^= 1
    (out / "model.joblib").write_bytes(bytes(blob))
    with pytest.raises(ModelError, match="not signed"):
        NoiseModel.load(out / "model.joblib")

    # signed by another installation (another key): refused too
    other = fitted().save(tmp_path / "other")
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "elsewhere.key"))
    with pytest.raises(ModelError):
        NoiseModel.load(other / "model.joblib")


def test_a_joblib_file_that_is_no_pickle_or_cut_short_is_one_error_naming_it(tmp_path):
    # with --allow-pickle, a damaged model.joblib was a traceback (KeyError, UnpicklingError,
    # "EOF: reading array data") instead of a line naming the file
    whole = (fitted().save(tmp_path / "m") / "model.joblib").read_bytes()
    for name, blob in (("text.joblib", b"{}\n"), ("cut.joblib", whole[: len(whole) // 2]),
                       ("head.joblib", whole[:100]), ("empty.joblib", b"")):
        (tmp_path / name).write_bytes(blob)
        with pytest.raises(ModelError, match=rf"^{tmp_path / name}: not an hwnoise model file "):
            NoiseModel.load(tmp_path / name, allow_pickle=True)


def test_a_file_that_is_no_model_at_all_is_not_offered_to_the_unpickler(tmp_path):
    # a page given as the model (arguments swapped) was "not signed by this hwnoise
    # installation ... if you trust its source, pass --allow-pickle": advice to unpickle an HTML file
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>Oak chair</p></body></html>")
    for allow in (False, True):
        with pytest.raises(ModelError, match=rf"^{page}: not an hwnoise model file") as caught:
            NoiseModel.load(page, allow_pickle=allow)
        assert "--allow-pickle" not in str(caught.value)


def _load_in_a_child(path) -> tuple[str, int]:
    """``NoiseModel.load(path)`` in a process of its own: the error it said, and its peak MB."""
    import subprocess
    import sys

    from peak_memory import PEAK_KB

    code = (PEAK_KB + "import sys\nfrom hwnoise.training.model import ModelError, NoiseModel\n"
            "try:\n    NoiseModel.load(sys.argv[1])\nexcept ModelError as exc:\n    print(exc)\n"
            "print(peak_kb() // 1024)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    said, peak_mb = out.stdout.splitlines()
    return said, int(peak_mb)


def test_a_model_json_of_gigabytes_is_refused_before_it_is_read(tmp_path):
    # the size was checked after the whole file was read and decoded: a 1 GB file took 2 GB of
    # memory to be refused (a larger one, all the machine had)
    huge = tmp_path / "huge" / "model.json"
    huge.parent.mkdir()
    with open(huge, "wb") as f:  # sparse: no disk used
        f.write(b'{"format": "hwnoise-model", "x": "')
        f.truncate(600_000_000)
    said, peak_mb = _load_in_a_child(huge.parent)
    assert said.startswith(f"{huge}: 600000000 bytes, more than a model file holds")
    assert peak_mb < 400


def test_a_big_file_that_is_no_model_is_refused_before_it_is_read(tmp_path):
    # given as --model by mistake (a crawl's WARC, a disk image): it was read whole before its
    # first bytes told it is no model
    big = tmp_path / "crawl.warc"
    with open(big, "wb") as f:  # sparse: no disk used
        f.write(b"WARC/1.0\r\n")
        f.truncate(600_000_000)
    said, peak_mb = _load_in_a_child(big)
    assert said.startswith(f"{big}: not an hwnoise model file")
    assert peak_mb < 400


def test_classifier_without_json_form_keeps_metadata_only(tmp_path):
    model = fitted("logreg")
    out = model.save(tmp_path / "logreg")
    meta = json.loads((out / "model.json").read_text())
    assert meta["contents"] == "metadata-only" and meta["tree"] is None and "pickle" in meta["note"]
    loaded = NoiseModel.load(out)  # signed: the joblib loads
    assert np.array_equal(loaded.predict(table(seed=4)), model.predict(table(seed=4)))
    (out / "model.json").write_text(json.dumps({**meta, "joblib": {**meta["joblib"], "hmac_sha256": "0" * 64}}))
    with pytest.raises(ModelError, match="--allow-pickle"):
        NoiseModel.load(out)


def test_a_misspelt_shipped_model_name_says_the_shipped_ones(tmp_path, monkeypatch):
    """load_model("genral") said only "no such model file or folder": a bare name is taken for a
    shipped model's, and the message names them, the likely one first; a path gets no hint."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError, match=r"^genral: no such model file or folder; did you mean 'general'\? "
                                         r"the shipped models are 'general', 'records'"):
        NoiseModel.load("genral")
    with pytest.raises(ModelError, match=r"^mine: no such model file or folder; the shipped models are"):
        NoiseModel.load("mine")
    with pytest.raises(ModelError, match=r"no such model file or folder$"):
        NoiseModel.load(tmp_path / "genral")


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(ModelError, match="no such model"):
        NoiseModel.load(tmp_path / "absent.joblib")
    # a model.json that is not there said it "holds the metadata only and None is missing"
    with pytest.raises(ModelError, match=r"absent.json: no such model file or folder$"):
        NoiseModel.load(tmp_path / "absent.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="no model.json"):
        NoiseModel.load(tmp_path / "empty")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ModelError, match=r"bad.json:1"):
        NoiseModel.load(bad)


def test_fit_predict_hash_and_categorical_features():
    df = table()
    a, b = NoiseModel("j48").fit(df), NoiseModel("j48").fit(df)
    assert a.train_hash == b.train_hash
    assert NoiseModel("j48").fit(table(seed=9)).train_hash != a.train_hash
    pred = a.predict(df)
    assert set(pred) <= {"S", "N"} and len(pred) == len(df)
    assert np.mean(pred == df["label"].to_numpy()) > 0.9
    unlabeled = df.assign(label=None)
    unlabeled.loc[: len(df) // 2, "label"] = df["label"][: len(df) // 2 + 1]
    assert NoiseModel("j48").fit(unlabeled).train_rows == len(df) // 2 + 1
    tagged = NoiseModel("cart", features=["ctd", "tag"]).fit(df)
    assert tagged.categories["tag"] == ["a", "div", "td"]
    assert set(tagged.predict(df.assign(tag="unseen-tag"))) <= {"S", "N"}


def test_resolve_features():
    assert resolve_features(None) == ["ctd", "density_sum", "query_score", "matches", "distance"]
    assert resolve_features("ctd, tag", ["ctd", "tag", "tag_code"]) == ["ctd", "tag_code"]
    assert "tag_code" in resolve_features("extended")


@pytest.mark.parametrize("name", ["j48", "j48-unpruned", "cart", "rf", "gb", "gb+rf", "logreg",
                                  "sklearn.ensemble.ExtraTreesClassifier"])
def test_every_named_classifier_trains(name):
    model = NoiseModel(name, seed=2).fit(table(n_pages=6))
    assert np.mean(model.predict(table(n_pages=6)) == table(n_pages=6)["label"].to_numpy()) > 0.85


def test_classifier_names_and_errors():
    assert type(make_classifier("j48")).__name__ == "C45Classifier"
    assert make_classifier("j48-unpruned").unpruned is True
    assert make_classifier("rf", seed=4).random_state == 4
    with pytest.raises(ClassifierError, match="unknown classifier"):
        make_classifier("svm")
    with pytest.raises(ClassifierError, match="only scikit-learn"):
        make_classifier("os.system")
    with pytest.raises(ClassifierError, match="not a scikit-learn classifier"):
        make_classifier("sklearn.linear_model.LinearRegression")
    with pytest.raises(ClassifierError):
        make_classifier("rf", no_such_param=1)


def test_cart_chooses_alpha_by_grouped_inner_cv():
    df = table()
    m = NoiseModel("cart").fit(df, groups=df["page"].to_numpy())
    est = m.estimator
    assert isinstance(est, PrunedCART) and est.ccp_alpha_ >= 0
    unpruned = PrunedCART(ccp_alpha=0.0).fit(m.matrix(df), df["label"].to_numpy())
    assert est.tree_model_.tree_.node_count <= unpruned.tree_model_.tree_.node_count


def test_a_chosen_threshold_is_saved_and_used_after_loading(tmp_path):
    df = table()
    model = NoiseModel("rf").fit(df)
    p = model.estimator.predict_proba(model.matrix(df))[:, list(model.estimator.classes_).index("N")]
    model.threshold = float(np.quantile(p[p > 0], 0.2))  # well below 0.5: more content
    loose = model.predict(df)
    assert (loose == "N").sum() > (np.where(p >= 0.5, "N", "S") == "N").sum()
    model.save(tmp_path / "m")
    again = NoiseModel.load(tmp_path / "m", allow_pickle=True)
    assert again.threshold == pytest.approx(model.threshold)
    assert (again.predict(df) == loose).all()
    assert json.loads((tmp_path / "m" / "model.json").read_text())["threshold"] == pytest.approx(model.threshold)


@pytest.mark.parametrize("classifier", ["gb", "rf", "gb+rf", "cart", "j48"])
def test_a_feature_missing_on_every_training_row_does_not_stop_training(classifier):
    # stacked shares or class/id columns are missing on every row when no page's HTML could be
    # read; scikit-learn 1.9's gradient boosting refused such a column ("window shape cannot be
    # larger than input array shape")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"ctd": rng.random(300), "stack_trafilatura": np.nan,
                       "page": np.arange(300) // 10})
    df["label"] = np.where(df["ctd"] > 0.5, "N", "S")
    model = NoiseModel(classifier, ["ctd", "stack_trafilatura"]).fit(df)
    test = df.assign(stack_trafilatura=rng.random(300))  # values at prediction time change nothing
    assert list(model.predict(df)) == list(model.predict(test))
    assert (model.predict(df) == df["label"].to_numpy()).mean() > 0.95


def test_every_feature_a_preset_or_shipped_model_uses_is_one_hwnoise_computes():
    # extract and evaluate refuse a model none of whose features hwnoise computes: a feature of its
    # own missing from that list would refuse hwnoise's own models
    from hwnoise.extractors.model import load_model
    from hwnoise.features.assembly import unknown_features
    from hwnoise.training.model import resolve_features
    from hwnoise.training.spec import PRESETS, preset_spec

    for name in PRESETS:
        spec = preset_spec(name)
        assert unknown_features(spec.columns()) == [], name
    for shipped in ("general", "records"):
        assert unknown_features(load_model(shipped).features) == [], shipped
    assert unknown_features(resolve_features("rendered+records")) == []
    assert unknown_features(["ctx_parent_ctd", "ctx_grand_sitelevel", "stack_trafilatura", "td"]) == []
    assert unknown_features(["petal", "ctx_parent_petal", "stack_", "text", "ctd"]) == [
        "petal", "ctx_parent_petal", "stack_", "text"]


def test_a_pickled_model_is_checked_as_its_json_is(tmp_path):
    # model.json's spec and feature list were checked on load, a model.joblib's not: a pickle with a
    # spec this hwnoise cannot use (or a feature list the tree does not split on) loaded, and failed
    # later, mid-extraction, with an AttributeError or an IndexError
    from hwnoise.training.spec import ModelSpec

    good = fitted()
    cases = {"cut": ("cut", "page-max", r"spec\.cut: must be one of"),
             "spec": ("spec", {"features": "thesis"}, r"spec: must be a model spec"),
             "features": ("features", ["ctd"], r"lists 1 features and the C45Classifier tree splits on 5")}
    for name, (attr, value, message) in cases.items():
        model = pickle.loads(pickle.dumps(good))
        if attr == "cut":
            model.spec.cut = value
        else:
            setattr(model, attr, value)
        path = tmp_path / f"{name}.joblib"
        joblib.dump(model, path)
        with pytest.raises(ModelError, match=rf"^{path}: {message}"):
            NoiseModel.load(path, allow_pickle=True)
    path = tmp_path / "good.joblib"
    joblib.dump(good, path)
    loaded = NoiseModel.load(path, allow_pickle=True)
    assert isinstance(loaded.spec, ModelSpec) and loaded.spec == good.spec


def test_a_model_shows_what_it_is_in_a_notebook():
    """repr(model) was '<hwnoise.training.model.NoiseModel object at 0x...>'."""
    import pandas as pd

    model = NoiseModel("j48", ["petal", "sepal"])
    assert repr(model) == "NoiseModel(classifier='j48', features=2; not fitted)"
    model.fit(pd.DataFrame({"petal": [1.0, 2, 3, 4] * 5, "sepal": [0.0, 1, 0, 1] * 5, "label": ["N", "S"] * 10}))
    model.threshold = 0.25
    assert repr(model) == "NoiseModel(classifier='j48', features=2, threshold=0.25; fitted on 20 rows)"
