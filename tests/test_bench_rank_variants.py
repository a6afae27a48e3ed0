"""bench/rank_variants.py: the per-page cut rules over a ranker's scores (the page statistics
they read and the transformed score a global cut is taken on)."""
from __future__ import annotations

import numpy as np
import pytest
from bench_scripts import bench_module


def test_page_stats_per_row_max_median_and_spread():
    mod = bench_module("rank_variants")
    v = np.array([1.0, 3.0, 2.0, np.nan, 10.0, 0.0])
    page = np.array(["a", "a", "a", "a", "b", "b"])
    mx, med, spread = mod._page_stats(v, page)
    assert mx.tolist() == [3.0, 3.0, 3.0, 3.0, 10.0, 10.0]
    assert med.tolist() == [2.0] * 4 + [5.0] * 2  # NaN left out
    assert spread[0] == pytest.approx(2.8 - 1.2) and spread[4] == pytest.approx(9.0 - 1.0)


def test_transforms_cut_each_page_by_its_own_scores():
    mod = bench_module("rank_variants")
    rb = object.__new__(mod.RankBench)
    rb.key = np.array(["a", "a", "a", "b", "b"])
    s = np.array([5.0, 4.5, 1.0, -3.0, -3.2])  # page b's scores all below page a's
    t = rb.transforms(s, np.arange(5), lambda v: 1 / (1 + np.exp(-np.asarray(v))))
    keep = t["maxdelta"] >= -0.6  # within 0.6 of the page's best
    assert keep.tolist() == [True, True, False, True, True]
    assert t["ratio"][0] == pytest.approx(1.0) and t["ratio"][3] == pytest.approx(1.0)
    assert (t["global"] >= 0.5).tolist() == [True, True, True, False, False]
