"""Record-structure features: where a node stands in the page's repeated sibling structures.

Data records on listing and result pages are siblings of one shape under a common parent (MDR's
data regions, Liu, Grossman & Zhai 2003; DEPTA, Zhai & Liu 2005). These columns describe that
structure for every node, computed from the walk's arrays only (parent, tag, subtree ends,
characters; no second parse or walk of the page).

*Groups*: the children of one parent that share a tag. Each member's subtree tag string (the
tags of its subtree in document order, as MDR compares generalized nodes) is compared with the
previous member's by edit distance normalised by their mean length (capped at 1). A group of at
least ``RECORD_MIN`` (3) members whose median distance is at most ``RECORD_DISTANCE`` (0.5) is a
set of *records*, and its parent a *region root*. (MDR's 0.3 between *every* neighbour breaks
the records of one region apart where a few of them carry an extra field; on the first 60 of
NEXT-EVAL's shared pages, 185 of the 189 groups of gold records have a median of at most 0.5.)
A node's *main record* is, among itself and its ancestors that are records, the one whose group
holds the largest share of the page's text (the main region wins over lists nested in its
records); its *nearest record* is the innermost one.

The page-context columns of :mod:`hwnoise.features.context` (``ctx_sig_*``, ``ctx_*record*``) are
the cheap view of the same structure that the ``general`` preset uses: siblings alike by tag and
class words, with the same ``RECORD_MIN``. This module compares whole subtrees instead.

Columns (``RECORD_FEATURES``):

- ``rs_alike``: members of the node's group (1 for a node without same-tag siblings).
- ``rs_alike_share``: share of the page's characters the node's group holds.
- ``rs_alike_dist``: median edit distance within the group (1 for a group of one).
- ``rs_is_record``: the node is a record (see above).
- ``rs_is_region``: the node is a region root (some child is a record).
- ``rs_region_cover``: share of the node's characters its largest group of record children
  holds (0 for a node that is no region root).
- ``rs_in_record``: the node is a record or inside one.
- ``rs_main_share``: page share of the main record's group (0 outside any record).
- ``rs_main_rel``: that share over the largest record group's share on the page (1: the node is
  in the page's biggest region).
- ``rs_main_count``: log(1 + records in the main record's group).
- ``rs_main_depth``: depth below the main record (0 at it, -1 outside any record).
- ``rs_main_pos``: position of the node in its main record, in document order (0 at the root,
  towards 1 at its last element; -1 outside).
- ``rs_main_size``: log(1 + elements in the main record's subtree).
- ``rs_main_text``: share of the main record's characters in the node's subtree.
- ``rs_main_ld``: link density of the main record's group.
- ``rs_main_dist``: median edit distance within the main record's group.
- ``rs_main_chars``: log(1 + mean characters a record of the main group).
- ``rs_near_share``: page share of the nearest record's group (0 outside).
- ``rs_near_depth``: depth below the nearest record (-1 outside).
- ``rs_region_records``: log(1 + records in the node's main region that hold text).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.features.walk import PageWalk

__all__ = ["RECORD_FEATURES", "RECORD_MIN", "RECORD_DISTANCE", "record_struct", "alike_groups", "record_groups",
           "by_depth", "tag_string", "tag_distance"]

RECORD_FEATURES: list[str] = [
    "rs_alike", "rs_alike_share", "rs_alike_dist", "rs_is_record", "rs_is_region",
    "rs_region_cover", "rs_in_record", "rs_main_share", "rs_main_rel", "rs_main_count",
    "rs_main_depth", "rs_main_pos", "rs_main_size", "rs_main_text", "rs_main_ld", "rs_main_dist",
    "rs_main_chars", "rs_near_share", "rs_near_depth", "rs_region_records",
]
RECORD_MIN = 3
RECORD_DISTANCE = 0.5
#: Tag strings longer than this are compared only for equality (``tag_distance``); the longest
#: shorter side of a pair compared on 1,141 real result pages is 862 tags.
MAX_COMPARED = 10_000


def tag_string(tags: Iterable[str], code: dict[str, str] | None = None) -> str:
    """MDR's tag string: the tags in document order, one character each, so that a subtree's
    string is a slice of the page's (``code``: the tag -> character map, to share between
    calls)."""
    code = {} if code is None else code
    return "".join(code.setdefault(t, chr(0x100 + len(code))) for t in tags)


def tag_distance(a: str, b: str) -> float:
    """MDR's normalised edit distance of two tag strings: the edit distance over their mean
    length (0 for two empty strings). Two different strings both longer than ``MAX_COMPARED``
    tags are unlike (1.0) without it: its cost is the product of their lengths (two lists of
    200,000 results side by side took minutes), and no record is that large."""
    mean = (len(a) + len(b)) / 2
    if min(len(a), len(b)) > MAX_COMPARED and a != b:
        return 1.0
    return Levenshtein.distance(a, b) / mean if mean else 0.0


def alike_groups(parent: np.ndarray, tags: list[str], last: np.ndarray,
                 max_distance: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group id (its same-tag siblings: one parent, one tag) and the normalised edit
    distance of its subtree tag string to the previous member's (NaN for a group's first
    member; pairs further apart than ``max_distance`` by length alone get 1)."""
    n = len(parent)
    tag_code = pd.factorize(np.asarray(tags, dtype=object))[0].astype(np.int64)
    idx = np.arange(n)
    order = np.lexsort((idx, tag_code, parent))  # siblings of one tag together, in document order
    size = (last - idx + 1).astype(float)
    a, b = order[:-1], order[1:]
    same = (parent[a] == parent[b]) & (tag_code[a] == tag_code[b]) & (parent[b] >= 0)
    mean = (size[a] + size[b]) / 2
    cand = same & (np.abs(size[a] - size[b]) <= max_distance * mean)  # else farther than that
    s = tag_string(tags)
    dist = np.full(n, np.nan)
    dist[b[same]] = 1.0
    for k in np.flatnonzero(cand):
        i, j = int(a[k]), int(b[k])
        dist[j] = min(tag_distance(s[i:int(last[i]) + 1], s[j:int(last[j]) + 1]), 1.0)
    start = np.concatenate([[True], ~same])
    gid = np.empty(n, dtype=np.int64)
    gid[order] = np.cumsum(start) - 1
    return gid, dist


def group_median(gid: np.ndarray, dist: np.ndarray, groups: int) -> np.ndarray:
    """Per group, the median of its members' distances (1 for a group of one)."""
    has = ~np.isnan(dist)
    out = np.ones(groups)
    if has.any():
        g, d = gid[has], dist[has]
        order = np.lexsort((d, g))
        g, d = g[order], d[order]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        sizes = np.diff(np.r_[starts, len(g)])
        lo = starts + (sizes - 1) // 2
        hi = starts + sizes // 2
        out[g[starts]] = (d[lo] + d[hi]) / 2
    return out


def record_groups(parent: np.ndarray, tags: list[str], last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group id (``alike_groups``) and whether it is a record: a member of a group of
    at least ``RECORD_MIN`` whose median distance is at most ``RECORD_DISTANCE``."""
    gid, dist = alike_groups(parent, tags, last)
    count = np.bincount(gid)
    return gid, is_record(gid, count, group_median(gid, dist, len(count)), parent)


def is_record(gid: np.ndarray, count: np.ndarray, gdist: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Whether each row is a record: its group (``gid``; ``count`` members a group) has at least
    ``RECORD_MIN`` members and a median distance (``gdist``) of at most ``RECORD_DISTANCE``."""
    return (count[gid] >= RECORD_MIN) & (gdist[gid] <= RECORD_DISTANCE) & (parent >= 0)


def by_depth(depth: np.ndarray) -> list[np.ndarray]:
    """Row positions grouped by depth, shallowest first (each level's parents are in earlier
    levels): the order in which values pass from ancestors to descendants."""
    order = np.argsort(depth, kind="stable")
    bounds = np.flatnonzero(np.diff(depth[order])) + 1
    return np.split(order, bounds)


class _GroupSums(NamedTuple):
    """Per group of alike siblings: members, characters, link characters, median distance
    (``group_median``) and members that hold text."""

    count: np.ndarray
    chars: np.ndarray
    link: np.ndarray
    dist: np.ndarray
    text: np.ndarray


def _group_sums(gid: np.ndarray, dist: np.ndarray, chars: np.ndarray, link_chars: np.ndarray) -> _GroupSums:
    """The groups' per-group sums (``_GroupSums``)."""
    count = np.bincount(gid)
    return _GroupSums(count=count, chars=np.bincount(gid, weights=chars),
                      link=np.bincount(gid, weights=link_chars), dist=group_median(gid, dist, len(count)),
                      text=np.bincount(gid, weights=(chars > 0).astype(float)))


def _region_cover(parent: np.ndarray, gid: np.ndarray, gchars: np.ndarray, is_rec: np.ndarray,
                  chars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Region roots (the parents of records) and each node's cover: the share of its characters
    its largest group of record children holds (0 for no region root)."""
    cover = np.zeros(len(parent))
    rec_rows = np.arange(len(parent))[is_rec]
    if len(rec_rows):
        np.maximum.at(cover, parent[rec_rows], gchars[gid[rec_rows]])
    is_region = cover > 0
    return is_region, np.where(chars > 0, cover / np.maximum(chars, 1), 0.0)


def _main_and_near(parent: np.ndarray, depth: np.ndarray, is_rec: np.ndarray,
                   share: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's main (largest-share) and nearest record among itself and its ancestors (-1:
    none), passed down level by level."""
    main = np.where(is_rec, np.arange(len(parent)), -1)
    near = main.copy()
    own_share = np.where(is_rec, share, -1.0)
    for level in by_depth(depth):
        p = parent[level]
        has = p >= 0
        kids, up = level[has], p[has]
        take = (main[up] >= 0) & (own_share[main[up]] > np.where(main[kids] >= 0, own_share[kids], -1.0))
        main[kids] = np.where(take, main[up], main[kids])
        near[kids] = np.where(near[kids] >= 0, near[kids], near[up])
    return main, near


def _record_columns(main: np.ndarray, near: np.ndarray, gid: np.ndarray, grp: _GroupSums, share: np.ndarray,
                    is_rec: np.ndarray, depth: np.ndarray, last: np.ndarray,
                    chars: np.ndarray) -> dict[str, np.ndarray]:
    """The columns about each node's main and nearest record, ``rs_in_record`` on."""
    idx = np.arange(len(main))
    inside = main >= 0
    m = np.maximum(main, 0)
    g = gid[m]
    best = float(share[is_rec].max()) if is_rec.any() else 1.0
    nz = np.maximum(near, 0)

    def where_in(values: np.ndarray, outside: float) -> np.ndarray:
        return np.where(inside, values, outside).astype(float)

    return {
        "rs_in_record": inside.astype(float),
        "rs_main_share": where_in(share[m], 0.0),
        "rs_main_rel": where_in(share[m] / max(best, 1e-9), 0.0),
        "rs_main_count": where_in(np.log1p(grp.count[g]), 0.0),
        "rs_main_depth": where_in(depth - depth[m], -1.0),
        "rs_main_pos": where_in((idx - m) / (last[m] - m + 1), -1.0),
        "rs_main_size": where_in(np.log1p(last[m] - m + 1), 0.0),
        "rs_main_text": where_in(chars / np.maximum(chars[m], 1), 0.0),
        "rs_main_ld": where_in(grp.link[g] / np.maximum(grp.chars[g], 1), 0.0),
        "rs_main_dist": where_in(grp.dist[g], 1.0),
        "rs_main_chars": where_in(np.log1p(grp.chars[g] / np.maximum(grp.count[g], 1)), 0.0),
        "rs_near_share": np.where(near >= 0, share[nz], 0.0),
        "rs_near_depth": np.where(near >= 0, depth - depth[nz], -1).astype(float),
        "rs_region_records": where_in(np.log1p(grp.text[g]), 0.0),
    }


def record_struct(walk: "PageWalk") -> pd.DataFrame:
    """The :data:`RECORD_FEATURES` of every row of ``walk`` (one row each, in walk order)."""
    n = len(walk)
    if n == 0:
        return pd.DataFrame({c: np.zeros(0) for c in RECORD_FEATURES})
    parent = np.asarray(walk.column("parent"), dtype=np.int64)
    tags = list(walk.column("tag"))
    last = np.asarray(walk.last, dtype=np.int64)
    chars = np.asarray(walk.column("chars"), dtype=float)
    link_chars = np.asarray(walk.column("link_chars"), dtype=float)
    depth = np.asarray(walk.column("distance"), dtype=np.int64)
    total = max(float(chars.max()), 1.0)

    gid, dist = alike_groups(parent, tags, last)
    grp = _group_sums(gid, dist, chars, link_chars)
    share = grp.chars[gid] / total
    is_rec = is_record(gid, grp.count, grp.dist, parent)
    is_region, cover = _region_cover(parent, gid, grp.chars, is_rec, chars)
    main, near = _main_and_near(parent, depth, is_rec, share)
    out = {
        "rs_alike": grp.count[gid].astype(float),
        "rs_alike_share": share,
        "rs_alike_dist": grp.dist[gid],
        "rs_is_record": is_rec.astype(float),
        "rs_is_region": is_region.astype(float),
        "rs_region_cover": cover,
        **_record_columns(main, near, gid, grp, share, is_rec, depth, last, chars),
    }
    return pd.DataFrame(out)[RECORD_FEATURES]
