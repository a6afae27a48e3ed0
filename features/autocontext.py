"""Auto-context columns: what a first model's probabilities say about a node's surroundings.

A second model (stacked sequential learning, Cohen & Carvalho 2005; auto-context, Tu 2008)
reads, for each node, the first model's probability of content ``p`` at the node's structural
neighbours. ``p`` must be out of fold for training rows (never in-sample predictions). The
neighbourhood is the page's tree and its records (:func:`hwnoise.features.context.signature_groups`:
siblings sharing tag and class words, at least ``RECORD_MIN`` of them). ``sub(x)`` is the mean
``p`` over the text nodes of ``x``'s subtree weighted by their own characters.

- ``ac_p``: the node's own ``p``; ``ac_parent`` / ``ac_grand``: ``p`` of the parent / grandparent.
- ``ac_sub`` / ``ac_parent_sub`` / ``ac_grand_sub``: ``sub`` of the node / parent / grandparent.
- ``ac_kids_mean`` / ``ac_kids_max``: ``p`` over the node's children.
- ``ac_sib``: mean ``p`` of the other children of the parent; ``ac_sib_sub``: the parent's
  subtree without the node's, weighted by characters.
- ``ac_rec``: ``sub`` of the nearest record (the node or an ancestor); ``ac_mates_mean`` /
  ``_min`` / ``_max``: ``sub`` over that record's group (its same-signature siblings; the mean
  without the record itself); ``ac_mates_n``: log(1 + the group's size); ``ac_field``: mean
  ``p`` of the nodes at the same place in the other records (same group, same depth below the
  record, same tag). NaN outside any record.
- ``ac_rank``: percentile of ``p`` among the page's text nodes; ``ac_page_mean``: the page's
  ``p`` weighted by characters; ``ac_page_hi``: share of the page's characters at ``p`` >= 0.5;
  ``ac_rel``: ``p`` minus the page mean; ``ac_max_rel``: ``p`` over the page's highest ``p``.

In no preset: an experiment of issue 12 and 17, measured by ``bench/general_variants.py
autoctx`` (README "Models", "Records"), where it did not win on both benchmarks.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hwnoise.features.context import SignatureGroups, level_depths

__all__ = ["AUTOCONTEXT_FEATURES", "autocontext_columns"]

AUTOCONTEXT_FEATURES: list[str] = [
    "ac_p", "ac_parent", "ac_grand", "ac_sub", "ac_parent_sub", "ac_grand_sub", "ac_kids_mean",
    "ac_kids_max", "ac_sib", "ac_sib_sub", "ac_rec", "ac_mates_mean", "ac_mates_min", "ac_mates_max",
    "ac_mates_n", "ac_field", "ac_rank", "ac_page_mean", "ac_page_hi", "ac_rel", "ac_max_rel",
]


def _at(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``x`` at row positions ``pos`` (NaN where ``pos`` < 0)."""
    return np.where(pos >= 0, x[np.maximum(pos, 0)], np.nan)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` where ``b`` > 0, NaN elsewhere."""
    return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def _weights(rows: pd.DataFrame, p: np.ndarray) -> np.ndarray:
    """Each row's own characters, the weight of its ``p`` (0 where ``p`` is missing)."""
    w = pd.to_numeric(rows["own_chars"], errors="coerce").fillna(0).to_numpy(dtype=float)
    return np.where(np.isnan(p), 0.0, w)


def _subtree_sums(w: np.ndarray, pz: np.ndarray, groups: SignatureGroups) -> tuple[np.ndarray, np.ndarray]:
    """Characters and characters x ``p`` over each row's subtree, summed bottom-up a depth at a time."""
    parent = groups.parent
    sw, swp = w.copy(), w * pz
    for idx in reversed(groups.levels):
        has = parent[idx] >= 0
        np.add.at(sw, parent[idx][has], sw[idx][has])
        np.add.at(swp, parent[idx][has], swp[idx][has])
    return sw, swp


def _grandparents(parent: np.ndarray) -> np.ndarray:
    """Each row's grandparent position (-1: none)."""
    grand = _at(parent.astype(float), parent)
    return np.where(np.isnan(grand), -1, grand).astype(np.int64)


def _kids_and_siblings(p: np.ndarray, pz: np.ndarray, parent: np.ndarray,
                       n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and max ``p`` over each of the ``n`` rows' children, and mean ``p`` over the parent's other
    children."""
    has = (parent >= 0) & ~np.isnan(p)
    kid_n = np.bincount(parent[has], minlength=n).astype(float)
    kid_s = np.bincount(parent[has], weights=p[has], minlength=n)
    kid_max = np.full(n, -np.inf)
    np.maximum.at(kid_max, parent[has], p[has])
    own = ~np.isnan(p)
    sib = _ratio(_at(kid_s, parent) - np.where(own, pz, 0.0), _at(kid_n, parent) - own)
    return _ratio(kid_s, kid_n), np.where(kid_n > 0, kid_max, np.nan), sib


def _tree_columns(p: np.ndarray, pz: np.ndarray, sub: np.ndarray, sw: np.ndarray, swp: np.ndarray,
                  parent: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The tree neighbours' columns: the node, its parent and grandparent, children and siblings."""
    grand = _grandparents(parent)
    kids_mean, kids_max, sib = _kids_and_siblings(p, pz, parent, n)
    return {
        "ac_p": p, "ac_parent": _at(p, parent), "ac_grand": _at(p, grand),
        "ac_sub": sub, "ac_parent_sub": _at(sub, parent), "ac_grand_sub": _at(sub, grand),
        "ac_kids_mean": kids_mean, "ac_kids_max": kids_max, "ac_sib": sib,
        "ac_sib_sub": _ratio(_at(swp, parent) - swp, _at(sw, parent) - sw),
    }


def _group_stats(sub: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sum, count, min and max of ``sub`` (NaN left out) in each signature group."""
    gsum = np.bincount(g, weights=np.nan_to_num(sub), minlength=int(g.max()) + 1)
    gcnt = np.bincount(g, weights=(~np.isnan(sub)).astype(float), minlength=len(gsum))
    gmin, gmax = np.full(len(gsum), np.inf), np.full(len(gsum), -np.inf)
    ok = ~np.isnan(sub)
    np.minimum.at(gmin, g[ok], sub[ok])
    np.maximum.at(gmax, g[ok], sub[ok])
    return gsum, gcnt, gmin, gmax


def _record_columns(sub: np.ndarray, rg: np.ndarray, groups: SignatureGroups) -> dict[str, np.ndarray]:
    """The record-mates' columns: ``sub`` of the nearest record and over its group (NaN outside any)."""
    gsum, gcnt, gmin, gmax = _group_stats(sub, groups.group)
    rec = groups.record
    in_rec = rec >= 0
    rec_sub = _at(sub, rec)
    others = _ratio(_at(gsum, rg) - np.nan_to_num(rec_sub), _at(gcnt, rg) - ~np.isnan(rec_sub))
    some = in_rec & (_at(gcnt, rg) > 0)  # in a record whose group has some sub
    return {
        "ac_rec": rec_sub, "ac_mates_mean": np.where(in_rec, others, np.nan),
        "ac_mates_min": np.where(some, _at(gmin, rg), np.nan),
        "ac_mates_max": np.where(some, _at(gmax, rg), np.nan),
        "ac_mates_n": np.where(in_rec, np.log1p(_at(groups.count, rec)), np.nan),
    }


def _field_mates(rows: pd.DataFrame, p: np.ndarray, pz: np.ndarray, rg: np.ndarray,
                 groups: SignatureGroups) -> np.ndarray:
    """Mean ``p`` of the nodes at the same place in the other records (same group, same depth below
    the record, same tag); NaN outside any record."""
    rec = groups.record
    in_rec = rec >= 0
    own = ~np.isnan(p)
    depth = level_depths(groups.levels, len(rows))
    tag = pd.factorize(rows["tag"].astype(str).to_numpy())[0].astype(np.int64)
    below = depth - np.where(in_rec, depth[np.maximum(rec, 0)], 0)
    fkey = pd.Series(np.where(in_rec, (rg * 64 + np.minimum(below, 63)) * (int(tag.max()) + 1) + tag, -1))
    fs = pd.Series(pz * own).groupby(fkey).transform("sum").to_numpy()
    fc = pd.Series(own.astype(float)).groupby(fkey).transform("sum").to_numpy()
    return np.where(in_rec, _ratio(fs - pz * own, fc - own), np.nan)


def _page_columns(p: np.ndarray, pz: np.ndarray, w: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The page's columns for its ``n`` rows: ``p``'s rank among the text nodes, the page's mean and
    share at ``p`` >= 0.5 (weighted by characters), ``p`` against the page's mean and highest."""
    text = (w > 0)
    tw = w[text].sum()
    page_mean = float((w * pz).sum() / tw) if tw > 0 else np.nan
    page_hi = float(w[text & (pz >= 0.5)].sum() / tw) if tw > 0 else np.nan
    pmax = float(pz[text].max()) if text.any() else np.nan
    rank = np.full(n, np.nan)
    if text.any():
        rank[text] = pd.Series(p[text]).rank(pct=True).to_numpy()
    return {
        "ac_rank": rank, "ac_page_mean": np.full(n, page_mean), "ac_page_hi": np.full(n, page_hi),
        "ac_rel": p - page_mean, "ac_max_rel": p / pmax if pmax and pmax > 0 else np.full(n, np.nan),
    }


def autocontext_columns(rows: pd.DataFrame, p: np.ndarray, groups: SignatureGroups) -> pd.DataFrame:
    """The :data:`AUTOCONTEXT_FEATURES` of one page's rows (same index as ``rows``), from the
    first model's probability ``p`` of each row (NaN: none) and the page's signature groups."""
    n = len(rows)
    if n == 0:
        return pd.DataFrame({c: np.zeros(0) for c in AUTOCONTEXT_FEATURES}, index=rows.index)
    p = np.asarray(p, dtype=float)
    pz = np.nan_to_num(p)
    w = _weights(rows, p)
    sw, swp = _subtree_sums(w, pz, groups)
    sub = _ratio(swp, sw)
    rec = groups.record
    rg = np.where(rec >= 0, groups.group[np.maximum(rec, 0)], -1)  # the nearest record's group
    out = {
        **_tree_columns(p, pz, sub, sw, swp, groups.parent, n),
        **_record_columns(sub, rg, groups),
        "ac_field": _field_mates(rows, p, pz, rg, groups),
        **_page_columns(p, pz, w, n),
    }
    return pd.DataFrame(out, index=rows.index)[AUTOCONTEXT_FEATURES]
