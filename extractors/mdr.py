"""MDR: Mining Data Records in web pages (Liu, Grossman & Zhai, KDD 2003), method ``mdr``.

The classic record baseline, as the paper gives it, on the walker's tag tree (the shown
elements; text nodes are not tree nodes):

- A *generalized node* of length k is k adjacent children of one parent. For every node, the
  tag strings (preorder tag sequences of the subtrees) of adjacent generalized nodes of the
  same length k = 1..K starting at every offset are compared by the *normalised edit
  distance* (edit distance over the tag sequences divided by their mean length) — the
  paper's ``CombComp``.
- A *data region* is a run of at least two adjacent generalized nodes of one length, each
  within the threshold T of the next. ``IdentDRs`` keeps, per node, the region covering the
  most children (ties to the one starting first, then the shorter length) and looks on after
  it; ``FindDRs`` visits only nodes whose subtree is at least three levels deep, and descends
  into children not covered by a region of their parent.
- Each generalized node of a region is a data record (its elements' XPaths).

The published settings are K = 10 and T = 0.3. The paper's further step for records that
are not contiguous (one table row holding several records) is not implemented. MDR's nodes
are content (with their subtrees) for node and text scores.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwnoise.extractors.base import WalkMethod
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.record_struct import tag_distance, tag_string

__all__ = ["MDR", "Region", "data_regions", "mdr_records", "make", "K", "T"]

K = 10      #: longest generalized node (the paper's K)
T = 0.3     #: normalised edit distance threshold (the paper's T)


@dataclass
class Region:
    """A data region: ``count`` generalized nodes of ``k`` children of ``parent`` from child
    position ``start``."""

    parent: int
    k: int
    start: int
    count: int

    def records(self, kids: list[int]) -> list[list[int]]:
        return [kids[self.start + g * self.k: self.start + (g + 1) * self.k] for g in range(self.count)]


def _tag_strings(walk) -> list[str]:
    """Each row's subtree tag string, one character per tag (preorder)."""
    tags = walk.rows["tag"].tolist()
    chars = tag_string(tags)
    last = np.asarray(walk.last)
    return [chars[i:int(last[i]) + 1] for i in range(len(tags))]


def _ident_regions(node: int, kids: list[int], strings: list[str], k_max: int, t: float) -> list[Region]:
    """The paper's IdentDRs over one node's children (all of them, from the first)."""
    n = len(kids)
    cache: dict[tuple[int, int], float] = {}

    def gn(start: int, k: int) -> str:
        return "".join(strings[c] for c in kids[start:start + k])

    def similar(a: int, k: int) -> bool:  # GN at a vs the next GN at a + k
        key = (a, k)
        if key not in cache:
            cache[key] = tag_distance(gn(a, k), gn(a + k, k))
        return cache[key] <= t

    out: list[Region] = []
    start = 0
    while start < n:
        best = None  # (covered, -start, -k) best first
        for k in range(1, k_max + 1):
            for f in range(start, min(start + k, n)):
                g = 0
                a = f
                while a + 2 * k <= n and similar(a, k):
                    g += 1
                    a += k
                if g >= 1:
                    count = g + 1
                    cov = count * k
                    cand = Region(node, k, f, count)
                    if best is None or (cov > best.count * best.k and f <= best.start):
                        best = cand
        if best is None:
            break
        out.append(best)
        start = best.start + best.count * best.k
    return out


def data_regions(walk, k_max: int = K, t: float = T) -> tuple[list[Region], list[list[int]]]:
    """The page's data regions (``FindDRs`` from body) and every row's children."""
    rows = walk.rows
    n = len(rows)
    if not n:
        return [], []
    parent = rows["parent"].to_numpy(dtype=np.int64)
    kids: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        kids[parent[i]].append(i)
    height = np.ones(n, dtype=np.int64)
    for i in range(n - 1, 0, -1):
        if height[i] + 1 > height[parent[i]]:
            height[parent[i]] = height[i] + 1
    strings = _tag_strings(walk)
    regions: list[Region] = []
    stack = [0]
    while stack:
        node = stack.pop()
        if height[node] < 3:
            continue
        found = _ident_regions(node, kids[node], strings, k_max, t) if len(kids[node]) >= 2 else []
        regions.extend(found)
        covered = set()
        for r in found:
            covered.update(range(r.start, r.start + r.count * r.k))
        stack.extend(c for j, c in enumerate(kids[node]) if j not in covered)
    regions.sort(key=lambda r: (r.parent, r.start))
    return regions, kids


def mdr_records(walk, k_max: int = K, t: float = T) -> list[list[int]]:
    """The data records MDR finds: lists of rows (each a generalized node), document order."""
    regions, kids = data_regions(walk, k_max, t)
    out = [rec for r in regions for rec in r.records(kids[r.parent])]
    return sorted(out)


class MDR(WalkMethod):
    """MDR with the paper's K and T (no training; records and node labels)."""

    name = "mdr"
    needs_training = False

    def __init__(self, k: int = K, t: float = T) -> None:
        super().__init__()
        self.k, self.t = int(k), float(t)
        self._last: tuple | None = None

    def _records(self, walk) -> list[list[int]]:
        if self._last is None or self._last[0] is not walk:  # node_labels and records share one run
            self._last = (walk, mdr_records(walk, self.k, self.t))
        return self._last[1]

    def node_labels(self, page, walk) -> np.ndarray:
        labels = np.full(len(walk.rows), NOISE, dtype=object)
        last = np.asarray(walk.last)
        for rec in self._records(walk):
            for r in rec:
                labels[r:int(last[r]) + 1] = CONTENT
        return labels

    def extract_html(self, html: bytes | str, *, http_charset: str | None = None) -> str:
        """The text of MDR's records on a page (so that ``--stack mdr`` can use it)."""
        from hwnoise.extractors.base import text_from_labels
        from hwnoise.features.walk import walk_page

        walk = walk_page(html, http_charset=http_charset)
        return text_from_labels(walk, self.node_labels(None, walk))

    def records(self, page, walk) -> list[list[str]]:
        """Records as lists of XPaths in the gold's form."""
        from hwnoise.extractors.records import row_xpaths

        xp = row_xpaths(page.read_html(), len(walk.rows), http_charset=page.http_charset)
        return [[xp[r] for r in rec] for rec in self._records(walk)]


def make(**options) -> MDR:
    """Factory for the registry (options ``k`` and ``t``)."""
    return MDR(**options)
