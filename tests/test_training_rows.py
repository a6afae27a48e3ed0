"""RowCollector: the per-page training rows joined without a second copy, equal to pd.concat."""
from __future__ import annotations

import numpy as np
import pandas as pd

import hwnoise.training.rows as rows_mod
from hwnoise.training.rows import RowCollector


def _page(k: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(k)
    return pd.DataFrame({
        "page": pd.array([f"p{k}"] * n, dtype="str"),
        "node": np.arange(n, dtype=np.int64),
        "ctd": rng.random(n),
        "flag": rng.random(n) > 0.5,
        "label": np.array(["S", None, "N"] * n, dtype=object)[:n],
    })


def test_collector_equals_concat_across_chunks(monkeypatch):
    monkeypatch.setattr(rows_mod, "CHUNK_PAGES", 3)
    pages = [_page(k, n) for k, n in enumerate([4, 0, 7, 1, 5, 3, 2, 6])]
    got = RowCollector()
    for p in pages:
        got.add(p)
    out = got.frame()
    pd.testing.assert_frame_equal(out, pd.concat(pages, ignore_index=True))
    assert out._mgr.nblocks == len(out.columns)    # not consolidated: no copy of the rows


def test_collector_falls_back_to_concat_when_a_page_differs(monkeypatch):
    monkeypatch.setattr(rows_mod, "CHUNK_PAGES", 2)
    pages = [_page(k, 3) for k in range(5)]
    pages[3] = pages[3].assign(ctd=pages[3]["ctd"].astype(object))   # a page of another dtype
    pages.append(_page(9, 2).drop(columns="flag"))                   # and one lacking a column
    got = RowCollector()
    for p in pages:
        got.add(p)
    pd.testing.assert_frame_equal(got.frame(), pd.concat(pages, ignore_index=True))
    assert RowCollector().frame().empty
