"""Protocols: pages and sites never on both sides, every row scored once, seeded reproducibility."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hwnoise.errors import HwnoiseError
from hwnoise.training.protocols import ProtocolError, splits


def table(n_pages: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.RandomState(seed)
    rows = []
    for i in range(n_pages):
        n = int(rng.randint(3, 40))
        rows.append(pd.DataFrame({
            "dataset": "a" if i % 2 else "b",
            "site": f"site{i % 7}.com",
            "page": f"p{i // 2}",  # the same page ID in datasets a and b: different pages
            "ctd": rng.rand(n),
        }))
    return pd.concat(rows, ignore_index=True)


def page_key(df: pd.DataFrame) -> pd.Series:
    return df["dataset"] + "/" + df["page"]


def test_pages_split_keeps_each_page_on_one_side():
    df = table()
    [(tr, te)] = splits(df, "pages", seed=3)
    keys = page_key(df)
    assert not set(keys.iloc[tr]) & set(keys.iloc[te])
    assert sorted(np.concatenate([tr, te]).tolist()) == list(range(len(df)))
    assert len(set(keys.iloc[tr])) == round(0.66 * keys.nunique())


@pytest.mark.parametrize("k", [2, 5])
def test_cv_folds_group_by_page_and_test_every_row_once(k):
    df = table()
    folds = splits(df, "cv", k=k, seed=1)
    assert len(folds) == k
    keys = page_key(df)
    tested = np.concatenate([te for _, te in folds])
    assert sorted(tested.tolist()) == list(range(len(df)))
    for tr, te in folds:
        assert not set(keys.iloc[tr]) & set(keys.iloc[te])
        assert len(tr) + len(te) == len(df)
    sizes = [keys.iloc[te].nunique() for _, te in folds]
    assert max(sizes) - min(sizes) <= 1


def test_cross_site_never_puts_a_site_on_both_sides():
    df = table()
    folds = splits(df, "cross-site", k=5, seed=2)
    assert len(folds) == 5
    for tr, te in folds:
        assert not set(df["site"].iloc[tr]) & set(df["site"].iloc[te])
    assert sorted(np.concatenate([te for _, te in folds]).tolist()) == list(range(len(df)))
    # k is capped by the number of sites
    assert len(splits(df[df["site"].isin(["site1.com", "site2.com"])], "cross-site", k=5)) == 2


def test_thesis_split_is_a_pooled_seeded_node_split():
    df = table()
    [(tr, te)] = splits(df, "thesis", seed=1)
    assert len(tr) == int(np.floor(0.66 * len(df) + 0.5))  # Java's Math.round, as Weka
    assert not set(tr) & set(te)
    keys = page_key(df)
    assert set(keys.iloc[tr]) & set(keys.iloc[te])  # it lets pages fall on both sides


@pytest.mark.parametrize("protocol", ["thesis", "pages", "cv", "cross-site"])
def test_seeded_reproducibility(protocol):
    df = table()
    a = splits(df, protocol, seed=7)
    b = splits(df, protocol, seed=7)
    c = splits(df, protocol, seed=8)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    assert any(not np.array_equal(x[1], y[1]) for x, y in zip(a, c))


def test_no_page_column_says_which_protocols_apply():
    df = table().drop(columns="page")
    for protocol in ("pages", "cv"):
        with pytest.raises(ProtocolError) as info:
            splits(df, protocol)
        assert "thesis" in str(info.value) and "--test" in str(info.value)
        assert isinstance(info.value, HwnoiseError)
    assert splits(df, "thesis")  # still fine
    with pytest.raises(ProtocolError, match="site"):
        splits(df.drop(columns="site"), "cross-site")


def test_bad_requests():
    df = table()
    with pytest.raises(ProtocolError, match="unknown protocol"):
        splits(df, "random")
    with pytest.raises(ProtocolError, match="at least 2 pages"):
        splits(df[(df["page"] == "p0") & (df["dataset"] == "a")], "pages")
    with pytest.raises(ProtocolError, match="train_share"):
        splits(df, "pages", train_share=1.0)
