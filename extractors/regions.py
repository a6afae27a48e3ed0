"""Data regions the labels missed, found by a learned scorer of a page's groups of alike siblings.

Every group of alike siblings (``features.record_struct``: at least 3 same-tag siblings with
alike subtree tag strings) is a candidate record set twice: its members as records (the *outer*
level) and, where a member has a single-child chain holding all its text (``li > div``), the
chain's innermost element (the *inner* level). A grid, the same-tag children of alike siblings
(the cards of each row), is one more candidate across its rows (``_grid_units``), so that its
rows are kept or dropped together. ``region_candidates`` describes each by
``REGION_FEATURES`` (its size and text share, rank, tag-string distance, depth, record lengths,
link density, fields, nesting among groups, tag, and the node model's probabilities over it); a
``RegionScorer`` (gradient-boosted trees, kept as JSON in model.json under ``regions``) scores
them, and ``choose_regions`` keeps the best-scored ones that do not overlap. ``scored_records``
joins them with the records grouped from the labels (``extractors.records``) by the scorer's
mode (``combine_regions``): regions of records the node model labelled noise, and, in mode
``rest``, regions whose records the labels cut wrongly. The shipped ``records``
model carries a scorer fitted on NEXT-EVAL (``bench/build_regions.py``; README "Records").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwnoise.errors import HwnoiseError
from hwnoise.features.columns import CONTENT
from hwnoise.features.record_struct import (RECORD_DISTANCE, RECORD_MIN, alike_groups, by_depth,
                                           group_median, is_record)
from hwnoise.training.spec import REGION_MODES

__all__ = ["REGION_FEATURES", "Candidate", "RegionScorer", "region_candidates", "choose_regions",
           "REGION_MODES", "combine_regions", "scored_records", "scorer_of", "innermost"]

_TAGS = ("tr", "li", "div", "article", "section", "a", "td", "p", "span", "dd", "table", "ul")

REGION_FEATURES: list[str] = [
    "members", "log_members", "inner", "page_share", "rel_largest", "rank", "parent_cover",
    "dist", "depth", "len_mean", "len_cv", "link_density", "proba", "proba_min", "proba_q25",
    "proba_rows", "content_share", "content_cover", "rows_mean", "fields_mean", "chain_share",
    "outer_groups", "inner_groups", "parent_proba", "rows_proba", "candidates", "img_share",
    "a_share", "text_per_field", "head_proba_gap", "log_parents",
] + [f"tag_{t}" for t in _TAGS] + ["tag_other"]


@dataclass
class Candidate:
    """One candidate record set: its records' head rows (one element each), the page's number of
    the set it comes from (a group of alike siblings or a grid; both levels of a set share it)
    and its level."""

    rows: list[int]
    group: int
    inner: bool


def innermost(parent: np.ndarray, chars: np.ndarray) -> np.ndarray:
    """Each row's innermost descendant down single-child chains that keep all its text."""
    n = len(parent)
    kids = np.bincount(parent[parent >= 0], minlength=n) if n else np.zeros(0, np.int64)
    only = np.full(n, -1)
    has = np.flatnonzero(parent >= 0)
    one = has[kids[parent[has]] == 1]
    only[parent[one]] = one
    out = np.arange(n)
    for i in range(n - 1, -1, -1):  # children come after their parent: theirs is already final
        c = only[i]
        if c >= 0 and chars[c] == chars[i]:
            out[i] = out[c]
    return out


def _subtree_sum(values: np.ndarray, last: np.ndarray) -> np.ndarray:
    cs = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    return cs[last + 1] - cs[np.arange(len(last))]


def _grid_units(parent: np.ndarray, tags: list[str], gid: np.ndarray, count: np.ndarray, dist: np.ndarray,
                chars: np.ndarray, group_chars: np.ndarray) -> list[tuple]:
    """Grids: the same-tag children of a group of alike siblings (the cards in each row of a
    grid, the ``li`` of a run of ``ul``), one candidate across all those parents, so that a
    grid's rows are kept or dropped together rather than each row on its own score. Only where
    the parents hold more than one such child each on average (one a parent is the parents'
    own group's inner level) and their tag strings are alike (median distance to the previous
    sibling ≤ ``RECORD_DISTANCE``). Each as ``region_candidates``' units: (rows, characters,
    rank among the groups, median distance, the grid's element, number of parents)."""
    has = np.flatnonzero(parent >= 0)
    has = has[parent[parent[has]] >= 0]
    has = has[count[gid[parent[has]]] >= 2]  # the parent has alike siblings
    at: dict[tuple[int, str], list[int]] = {}
    for r in has.tolist():
        at.setdefault((int(gid[parent[r]]), tags[r]), []).append(r)
    ranked = np.sort(group_chars)
    out = []
    for rows in at.values():
        m = np.asarray(rows, dtype=np.int64)  # document order: rows were in it
        parents = len(np.unique(parent[m]))
        if parents < 2 or len(m) < RECORD_MIN or len(m) <= parents:
            continue
        d = dist[m]
        d = d[~np.isnan(d)]
        udist = float(np.median(d)) if len(d) else 1.0
        if udist > RECORD_DISTANCE:
            continue
        uchars = float(chars[m].sum())
        rank = len(ranked) - int(np.searchsorted(ranked, uchars, side="right"))  # groups with more characters
        out.append((m, uchars, rank, udist, int(parent[parent[m[0]]]), parents))
    return out


@dataclass
class _RowStats:
    """A page's per-row arrays that candidates' features read: the walk's columns, the node
    model's probabilities, sums over each row's subtree and record rows above it."""

    tags: list[str]
    chars: np.ndarray
    link: np.ndarray
    depth: np.ndarray
    p: np.ndarray               # probabilities, 0.5 where unknown
    inner: np.ndarray           # ``innermost``
    sub_rows: np.ndarray        # rows in each subtree, itself included
    sub_pw: np.ndarray          # probability-weighted own characters below
    sub_own: np.ndarray
    sub_content: np.ndarray
    sub_fields: np.ndarray
    sub_rec: np.ndarray         # record rows in each subtree, itself included
    sub_img: np.ndarray
    sub_a: np.ndarray
    rec_anc: np.ndarray         # record rows among each row's ancestors
    mean_p: np.ndarray
    page_chars: float
    page_content: float


def _records_above(parent: np.ndarray, depth: np.ndarray, is_rec: np.ndarray) -> np.ndarray:
    """Per row, the record rows among its ancestors, passed down level by level."""
    rec_anc = np.zeros(len(parent))
    for lev in by_depth(depth):  # parents first
        q = parent[lev]
        has = q >= 0
        rec_anc[lev[has]] = rec_anc[q[has]] + is_rec[q[has]]
    return rec_anc


def _row_stats(rows, parent: np.ndarray, tags: list[str], chars: np.ndarray, last: np.ndarray, labels,
               proba: np.ndarray | None, is_rec: np.ndarray) -> _RowStats:
    """Per row, the subtree sums and ancestor counts the candidates' features read."""
    n = len(rows)
    own = rows["own_chars"].to_numpy(dtype=np.float64)
    depth = rows["distance"].to_numpy(dtype=np.float64)
    content = np.asarray(labels, dtype=object) == CONTENT
    p = np.full(n, 0.5) if proba is None else np.where(np.isnan(proba), 0.5, proba)
    sub_pw = _subtree_sum(p * own, last)
    sub_own = _subtree_sum(own, last)
    return _RowStats(
        tags=tags, chars=chars, link=rows["link_chars"].to_numpy(dtype=np.float64), depth=depth, p=p,
        inner=innermost(parent, chars.astype(np.int64)),
        sub_rows=(last - np.arange(n) + 1).astype(np.float64), sub_pw=sub_pw, sub_own=sub_own,
        sub_content=_subtree_sum(np.where(content, own, 0.0), last),
        sub_fields=_subtree_sum((own > 0).astype(np.float64), last),
        sub_rec=_subtree_sum(is_rec.astype(np.float64), last),
        sub_img=_subtree_sum(np.asarray([t == "img" for t in tags], dtype=np.float64), last),
        sub_a=_subtree_sum(np.asarray([t == "a" for t in tags], dtype=np.float64), last),
        rec_anc=_records_above(parent, depth, is_rec),
        mean_p=np.where(sub_own > 0, sub_pw / np.maximum(sub_own, 1), p),
        page_chars=max(chars.max(), 1.0),
        page_content=max(float(np.where(content, own, 0.0).sum()), 1.0))


def _units(parent: np.ndarray, tags: list[str], chars: np.ndarray, gid: np.ndarray, count: np.ndarray,
           dist: np.ndarray, gdist: np.ndarray, is_rec: np.ndarray) -> tuple[list[tuple], float]:
    """The page's candidate record sets: each group of alike siblings that are records, then the
    grids (``_grid_units``), as (rows, characters, rank among the groups by characters, median
    distance, parent element, number of parents); and the largest group's characters."""
    rec_rows = np.flatnonzero(is_rec)
    rec_rows = rec_rows[np.argsort(gid[rec_rows], kind="stable")]  # by group, document order within
    groups, starts = np.unique(gid[rec_rows], return_index=True)
    gchars = {int(g): float(c) for g, c in zip(groups, np.bincount(gid, weights=chars)[groups])}
    largest = max(gchars.values(), default=1.0)
    order = sorted(gchars, key=lambda g: -gchars[g])
    rank = {g: k for k, g in enumerate(order)}
    units = [(m, gchars[int(g)], rank[int(g)], gdist[int(g)], int(parent[m[0]]), 1)
             for g, m in zip(groups, np.split(rec_rows, starts[1:]))]
    units += _grid_units(parent, tags, gid, count, dist, chars, np.asarray(list(gchars.values())))
    return units, largest


def _feature_row(s: _RowStats, unit: tuple, m: np.ndarray, heads: np.ndarray, is_inner: bool,
                 largest: float) -> list[float]:
    """One candidate's ``REGION_FEATURES``: the unit's records with text ``m`` at one level
    (``heads``: ``m`` or their innermost elements)."""
    _, uchars, urank, udist, pa, parents = unit
    inn = s.inner[m]
    lens = s.chars[m]
    own_sum = s.sub_own[m].sum()
    pw = s.sub_pw[m].sum() / max(own_sum, 1.0)
    per = s.mean_p[m]
    tag = s.tags[int(heads[0])]
    f = [len(m), np.log1p(len(m)), float(is_inner), uchars / s.page_chars, uchars / largest,
         urank, uchars / max(s.chars[pa], 1.0), udist, s.depth[m[0]], lens.mean(),
         lens.std() / max(lens.mean(), 1.0), s.link[m].sum() / max(uchars, 1.0), pw, per.min(),
         np.quantile(per, 0.25), s.p[heads].mean(), s.sub_content[m].sum() / max(own_sum, 1.0),
         s.sub_content[m].sum() / s.page_content, s.sub_rows[m].mean(), s.sub_fields[m].mean(),
         float((inn != m).mean()), s.rec_anc[m[0]], (s.sub_rec[m] - 1).mean(), s.mean_p[pa],
         s.p[m].mean(), 0.0, (s.sub_img[m] > 0).mean(), (s.sub_a[m] > 0).mean(),
         lens.mean() / max(s.sub_fields[m].mean(), 1.0), s.p[inn].mean() - s.p[m].mean(),
         np.log1p(parents)]
    f += [float(tag == t) for t in _TAGS] + [float(tag not in _TAGS)]
    return f


def _unit_candidates(k: int, unit: tuple, s: _RowStats, largest: float) -> list[tuple[Candidate, list[float]]]:
    """Unit ``k``'s candidates with their features: its records with text (the outer level) and,
    where they differ, their innermost elements (the inner level); none below 2 such records."""
    m = unit[0][s.chars[unit[0]] > 0]
    if len(m) < 2:
        return []
    inn = s.inner[m]
    levels = [(False, m)] + ([(True, inn)] if (inn != m).any() else [])
    return [(Candidate(rows=[int(h) for h in heads], group=k, inner=is_inner),
             _feature_row(s, unit, m, heads, is_inner, largest)) for is_inner, heads in levels]


def region_candidates(walk, labels, proba: np.ndarray | None) -> tuple[list[Candidate], np.ndarray]:
    """The page's candidate record sets and their features (one row each, ``REGION_FEATURES``)."""
    rows = walk.rows
    if len(rows) == 0:
        return [], np.zeros((0, len(REGION_FEATURES)))
    parent = rows["parent"].to_numpy(dtype=np.int64)
    tags = rows["tag"].tolist()
    chars = rows["chars"].to_numpy(dtype=np.float64)
    last = np.asarray(walk.last, dtype=np.int64)
    gid, dist = alike_groups(parent, tags, last)
    count = np.bincount(gid)
    gdist = group_median(gid, dist, len(count))
    is_rec = is_record(gid, count, gdist, parent)
    stats = _row_stats(rows, parent, tags, chars, last, labels, proba, is_rec)
    units, largest = _units(parent, tags, chars, gid, count, dist, gdist, is_rec)
    found = [cf for k, unit in enumerate(units) for cf in _unit_candidates(k, unit, stats, largest)]
    cands = [c for c, _ in found]
    X = np.asarray([f for _, f in found], dtype=np.float64).reshape(len(found), len(REGION_FEATURES))
    X[:, REGION_FEATURES.index("candidates")] = len(cands)
    return cands, X


def choose_regions(cands: list[Candidate], scores: np.ndarray, last: np.ndarray, *,
                   threshold: float = 0.5, taken: np.ndarray | None = None) -> list[Candidate]:
    """The candidates scored at least ``threshold`` whose records overlap no row of a
    better-scored candidate kept (a record inside or around another's) nor of ``taken`` (a bool
    per row: rows already in records), best first."""
    inside = np.zeros(len(last), dtype=bool) if taken is None else taken.copy()
    kept: list[Candidate] = []
    for k in np.argsort(-scores, kind="stable"):
        if scores[k] < threshold:
            break
        c = cands[k]
        if any(inside[r:int(last[r]) + 1].any() for r in c.rows):
            continue  # the subtree holds a kept row (around a record), or is inside one
        kept.append(c)
        for r in c.rows:
            inside[r:int(last[r]) + 1] = True
    return kept


class RegionScorer:
    """A fitted scorer of candidate regions: gradient-boosted trees (``TreeEnsemble``) over
    ``REGION_FEATURES`` and the score a candidate must reach to be kept."""

    def __init__(self, ensemble, threshold: float, info: dict | None = None, mode: str = "add",
                 veto: float = 0.0):
        self.ensemble = ensemble
        self.threshold = float(threshold)
        self.info = dict(info or {})
        self.mode = mode
        self.veto = float(veto)

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None, *,
            threshold: float = 0.5, seed: int = 0, info: dict | None = None,
            mode: str = "add", veto: float = 0.0) -> "RegionScorer":
        """Fit on candidates' features ``X`` and targets ``y`` (True: a region of gold records)."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        from hwnoise.training.ensemble import TreeEnsemble
        from hwnoise.training.model import threads

        est = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                             min_samples_leaf=10, random_state=seed)
        with threads():  # OpenMP threads spin against each other on a busy machine
            est.fit(X, np.asarray(y, dtype=bool), sample_weight=sample_weight)
        return cls(TreeEnsemble.from_sklearn(est), threshold, info, mode, veto)

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Each candidate's score: the probability that it is a region of records."""
        return self.ensemble.predict_proba(X)[:, 1] if len(X) else np.zeros(0)

    def to_dict(self) -> dict:
        return {"features": list(REGION_FEATURES), "threshold": self.threshold, "mode": self.mode,
                "veto": self.veto, "info": self.info, "trees": self.ensemble.to_dict()}

    @classmethod
    def from_dict(cls, d) -> "RegionScorer":
        """Rebuild from ``to_dict``; a HwnoiseError says what is wrong."""
        from hwnoise.training.ensemble import TreeEnsemble

        if not isinstance(d, dict):
            raise HwnoiseError("the model's region scorer ('regions') must be an object")
        if d.get("features") != REGION_FEATURES:
            raise HwnoiseError("the model's region scorer ('regions') was built for other region features "
                               "than this hwnoise computes; rebuild it (bench/build_regions.py)")
        t = d.get("threshold")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1.01:
            raise HwnoiseError(f"the model's region scorer: 'threshold' must be a number in [0, 1.01], not {t!r}")
        mode = d.get("mode", "add")  # files before the modes were added
        if mode not in REGION_MODES:
            raise HwnoiseError(f"the model's region scorer: 'mode' must be one of {', '.join(REGION_MODES)}, "
                               f"not {mode!r}")
        veto = d.get("veto", 0.0)  # files before the veto: none
        if isinstance(veto, bool) or not isinstance(veto, (int, float)) or not 0 <= veto <= 1:
            raise HwnoiseError(f"the model's region scorer: 'veto' must be a number in [0, 1], not {veto!r}")
        try:
            ens = TreeEnsemble.from_dict(d.get("trees"))
        except ValueError as exc:
            raise HwnoiseError(f"the model's region scorer: {exc}") from None
        if ens.n_features_in_ != len(REGION_FEATURES):
            raise HwnoiseError("the model's region scorer has the wrong number of features")
        return cls(ens, float(t), d.get("info") if isinstance(d.get("info"), dict) else {}, mode, float(veto))


def scorer_of(model) -> RegionScorer | None:
    """The region scorer a model carries (model.json's ``regions``), rebuilt once, or None."""
    raw = getattr(model, "regions", None)
    if raw is None:
        return None
    got = getattr(model, "_region_scorer", None)
    if got is None:
        got = RegionScorer.from_dict(raw)
        model._region_scorer = got
    return got


# How a scorer's regions meet the labels' records (``REGION_MODES``, a spec's ``regions``):
# ``add`` keeps the labels' records and adds the kept regions that overlap none of them; ``rest``
# puts the kept regions first and keeps the labels' records that overlap none of them; ``alone``
# keeps the regions only. With a ``veto`` above 0 (``rest`` only), a labels' record whose first
# element heads candidates that all score below it is dropped too: a menu or a facet list the
# node model took for content, which the scorer knows as a group and rejects; unless nothing
# would be left of the page's records.


def combine_regions(records: list[list[int]], cands: list[Candidate], scores: np.ndarray,
                    last: np.ndarray, threshold: float, mode: str = "add", veto: float = 0.0) -> list[list[int]]:
    """The page's records (lists of rows, document order) from the labels' ``records`` and the
    candidates' ``scores`` by ``mode`` (``REGION_MODES``) and, in mode ``rest``, ``veto``."""
    from hwnoise.extractors.records import rows_inside

    if mode not in REGION_MODES:
        raise ValueError(f"region mode {mode!r}: expected one of {', '.join(REGION_MODES)}")
    taken = rows_inside(records, last) if mode == "add" else None
    kept = [[r] for c in choose_regions(cands, scores, last, threshold=threshold, taken=taken) for r in c.rows]
    if mode == "add":
        return sorted(records + kept)
    if mode == "rest":
        inside = rows_inside(kept, last)
        rest = [rows for rows in records if not any(inside[r:int(last[r]) + 1].any() for r in rows)]
        if veto > 0:
            best = _head_scores(cands, scores)
            # a page the veto would leave without any record keeps the labels' own
            rest = [rows for rows in rest if best.get(rows[0], 1.0) >= veto] or (rest if not kept else [])
        kept += rest
    return sorted(kept)


def _head_scores(cands: list[Candidate], scores: np.ndarray) -> dict[int, float]:
    """Per row that heads a record of some candidate, the best score of those candidates."""
    best: dict[int, float] = {}
    for c, s in zip(cands, scores):
        for r in c.rows:
            if s > best.get(r, -1.0):
                best[r] = float(s)
    return best


def scored_records(walk, labels, proba: np.ndarray | None, records: list[list[int]],
                   scorer: RegionScorer) -> list[list[int]]:
    """The labels' ``records`` (lists of rows) joined with the candidates ``scorer`` keeps, by
    its mode (``combine_regions``), in document order."""
    cands, X = region_candidates(walk, labels, proba)
    if not cands:
        return records
    last = np.asarray(walk.last, dtype=np.int64)
    return combine_regions(records, cands, scorer.scores(X), last, scorer.threshold, scorer.mode, scorer.veto)
