"""What train and evaluate's fits hold: the columns read, the rows a fold's fit is given, and the
feature columns given up to the matrix (checked through reader and fit hooks and tracemalloc, not
through RSS or time)."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from feature_tables import table_dataset
from hwnoise.api import train
from hwnoise.dataset import Dataset
from hwnoise.training.model import NoiseModel, resolve_features
from hwnoise.training.train import table_columns


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "model-signing.key"))


def _dataset(path, name: str, seed: int, sites: list[str], n_pages: int = 12) -> Dataset:
    """A feature table with columns no thesis fit reads (text, xpath, a spare feature)."""
    return table_dataset(path, name, seed, sites, n_pages, spare_columns=True)


def test_train_reads_site_first_then_only_the_fits_columns(tmp_path, monkeypatch):
    a = _dataset(tmp_path / "alpha", "alpha", 1, ["a1.com", "a2.com", "a3.com"])
    b = _dataset(tmp_path / "beta", "beta", 2, ["b1.com", "b2.com"])
    reads: list[list[str] | None] = []
    real = Dataset.read_features

    def hook(self, columns=None, **kw):
        reads.append(None if columns is None else list(columns))
        return real(self, columns, **kw)

    monkeypatch.setattr(Dataset, "read_features", hook)
    result = train([a.path, b.path], preset="thesis", protocol="pages")
    assert result["results"] and result["features"] == resolve_features("thesis")
    assert reads[:2] == [["dataset", "site"]] * 2      # the spec needs the names and sites only
    allowed = set(table_columns(resolve_features("thesis")))
    assert len(reads) == 4 and all(r is not None and set(r) <= allowed for r in reads[2:])
    assert not {"spare", "text", "xpath"} & {c for r in reads for c in r}


def test_train_folds_fit_on_row_positions_of_the_one_table(tmp_path, monkeypatch):
    a = _dataset(tmp_path / "alpha", "alpha", 1, ["a1.com"])
    calls = []
    real = NoiseModel.fit

    def hook(self, df, groups=None, **kw):
        calls.append((id(df), len(df), kw.get("rows")))
        return real(self, df, groups, **kw)

    monkeypatch.setattr(NoiseModel, "fit", hook)
    train([a.path], preset="thesis", protocol="cv", k=3)
    assert len(calls) == 4                              # the model on all rows, then 3 folds
    assert len({c[0] for c in calls}) == 1              # one table, never a slice of it
    whole = calls[0][1]
    folds = [c[2] for c in calls[1:]]
    assert calls[0][2] is None and all(r is not None and 0 < len(r) < whole for r in folds)
    assert sorted(np.concatenate([np.setdiff1d(np.arange(whole), r) for r in folds]).tolist()) \
        == list(range(whole))                          # each row is tested once


@pytest.mark.parametrize("classifier", ["j48", "gb"])
def test_fit_and_predict_on_rows_equal_them_on_a_copy(classifier):
    rng = np.random.default_rng(3)
    n = 600
    df = pd.DataFrame({"ctd": rng.exponential(20, n), "query_score": rng.exponential(2, n),
                       "tag": rng.choice(["div", "p", "td"], n),
                       "label": np.where(rng.random(n) < 0.3, "N", "S").astype(object)})
    df.loc[::17, "label"] = None
    rows = np.sort(rng.choice(n, 400, replace=False))
    test = np.setdiff1d(np.arange(n), rows)
    on_rows = NoiseModel(classifier, "ctd,query_score,tag").fit(df, rows=rows)
    on_copy = NoiseModel(classifier, "ctd,query_score,tag").fit(df.iloc[rows])
    assert on_rows.train_hash == on_copy.train_hash and on_rows.categories == on_copy.categories
    assert on_rows.train_rows == on_copy.train_rows == int(df["label"].iloc[rows].notna().sum())
    assert (on_rows.predict(df, test) == on_copy.predict(df.iloc[test])).all()
    assert np.allclose(on_rows.content_proba(df, test), on_copy.content_proba(df.iloc[test]))


def test_a_consuming_fit_gives_its_feature_columns_up_to_the_matrix():
    rng = np.random.default_rng(5)
    n, feats = 200_000, [f"f{j}" for j in range(8)]
    model = NoiseModel("j48", feats)
    tracemalloc.start()                                 # before the frame: its frees count
    try:
        cols = {f: rng.random(n) for f in feats}
        cols["label"] = np.where(cols["f0"] > 0.7, "N", "S").astype(object)
        df = pd.DataFrame(cols, copy=False)             # one block per column, as RowCollector's
        del cols
        before = tracemalloc.get_traced_memory()[0]
        X = model.matrix(df, consume=True)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert list(df.columns) == ["label"] and X.shape == (n, len(feats))
    assert held < 0.25 * X.nbytes                       # the frame's columns went as X filled
    kept = pd.DataFrame({f: X[:, j] for j, f in enumerate(feats)} | {"label": df["label"]})
    ref = NoiseModel("j48", feats).fit(kept.copy())
    fit = NoiseModel("j48", feats).fit(kept, consume=True)
    assert fit.train_hash == ref.train_hash and fit.tree_text() == ref.tree_text()
    assert list(kept.columns) == ["label"]


def test_inner_threshold_on_rows_equals_it_on_a_copy(monkeypatch):
    import hwnoise.training.threshold as thr

    rng = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame({"site": rng.choice(["a", "b", "c", "d"], n), "dataset": "x",
                       "page": [f"p{i // 50}" for i in range(n)], "ctd": rng.exponential(20, n),
                       "query_score": rng.exponential(2, n), "own_chars": rng.integers(0, 200, n)})
    df["label"] = np.where((df.ctd > 25) ^ (rng.random(n) < 0.2), "N", "S").astype(object)
    df.loc[::13, "label"] = None
    rows = np.sort(rng.choice(n, 2000, replace=False))
    seen = []
    real = thr.page_char_f1
    monkeypatch.setattr(thr, "page_char_f1", lambda d, p, t: seen.append(p.copy()) or real(d, p, t))
    new = lambda: NoiseModel("gb", "ctd,query_score")  # noqa: E731
    on_copy = thr.inner_threshold(df.iloc[rows].reset_index(drop=True), new)
    on_rows = thr.inner_threshold(df, new, rows=rows)
    assert on_rows == on_copy
    assert np.array_equal(seen[0], seen[2])             # the same out-of-fold probabilities
