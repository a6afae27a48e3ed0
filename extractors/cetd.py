"""CETD, the baseline of seed 003 (Sun, Song & Liao, SIGIR 2011, §2.1.5 of seed 003).

Content extraction via composite text density, run on the walker's rows (CTD and
DensitySum are computed once, by the walk; nothing is parsed again here):

1. the node with the highest DensitySum (first in document order on a tie) is content,
   and the threshold t is the lowest CTD on its path up to ``<body>`` (both ends included);
2. then, top-down from ``<body>``, every node whose CTD is at least t and that is not yet
   content has the node of highest DensitySum *in its subtree* marked content (with all of
   its subtree), unless that node is already content; the recursion then goes on into the
   node's children. A node below t stops the recursion for its subtree.

The ancestors of a marked subtree are kept as the path to it (the authors' code keeps their
own text and removes every unmarked element); hwnoise labels a path node content when it holds
text of its own, so that ``text_from_labels`` gives exactly the text CETD outputs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hwnoise.extractors.base import RendersPages, WalkMethod, text_from_labels
from hwnoise.features.columns import CONTENT, NOISE

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

_EPS = 1e-9
UNMARKED, MARKED, PATH = 0, 1, 2


def _tree(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Depth of each node and the end (exclusive) of its subtree, for rows in document order."""
    n = len(parent)
    # list ranking by pointer jumping: O(n log depth), no loop over rows
    depth = (parent >= 0).astype(np.int64)
    anc = parent.copy()
    while True:
        live = anc >= 0
        if not live.any():
            break
        safe = np.where(live, anc, 0)
        depth = np.where(live, depth + depth[safe], depth)
        anc = np.where(live, anc[safe], -1)
    size = np.ones(n, dtype=np.int64)
    for d in range(int(depth.max(initial=0)), 0, -1):
        nodes = np.flatnonzero(depth == d)
        np.add.at(size, parent[nodes], size[nodes])
    return depth, np.arange(n) + size


def _subtree_argmax(values: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """For each node, the first node (document order) of highest value in its subtree."""
    best = np.arange(len(values))
    for d in range(int(depth.max(initial=0)), 0, -1):
        nodes = np.flatnonzero(depth == d)
        cand = best[nodes]
        par = parent[nodes]
        order = np.lexsort((cand, -values[cand], par))  # per parent: highest value, then earliest
        par_s, cand_s = par[order], cand[order]
        first = np.ones(len(par_s), dtype=bool)
        first[1:] = par_s[1:] != par_s[:-1]
        p, c = par_s[first], cand_s[first]
        better = values[c] > values[best[p]] + _EPS  # the node itself wins ties: it comes first
        best[p[better]] = c[better]
    return best


def cetd_marks(parent: np.ndarray, ctd: np.ndarray, density_sum: np.ndarray) -> tuple[np.ndarray, float]:
    """CETD's marks per node (0 unmarked, 1 content, 2 path to content) and its threshold."""
    parent = np.asarray(parent, dtype=np.int64)
    ctd = np.nan_to_num(np.asarray(ctd, dtype=float))
    ds = np.nan_to_num(np.asarray(density_sum, dtype=float))
    n = len(parent)
    marks = np.zeros(n, dtype=np.int8)
    if n == 0:
        return marks, 0.0
    depth, end = _tree(parent)
    best = _subtree_argmax(ds, parent, depth)

    def mark(target: int) -> None:
        marks[target:end[target]] = MARKED
        p = parent[target]
        while p >= 0:
            marks[p] = PATH
            p = parent[p]

    root = 0
    target = int(best[root])
    threshold = float(ctd[target])
    p = parent[target]
    while p >= 0:
        threshold = min(threshold, float(ctd[p]))
        p = parent[p]
    mark(target)

    children: list[list[int]] = [[] for _ in range(n)]
    for child, par in enumerate(parent.tolist()):
        if par >= 0:
            children[par].append(child)
    stack = [root]
    while stack:
        node = stack.pop()
        if marks[node] == MARKED or ctd[node] < threshold - _EPS:
            continue
        t = int(best[node])
        if marks[t] != MARKED:
            mark(t)
        stack.extend(reversed(children[node]))  # children in document order
    return marks, threshold


def _own_text_mask(walk: "PageWalk") -> np.ndarray:
    n = len(walk.rows)
    has = np.zeros(n, dtype=bool)
    for node, text in walk.segments:
        if text and text.strip() and 0 <= node < n:
            has[node] = True
    return has


def cetd_labels(walk: "PageWalk") -> np.ndarray:
    """"S"/"N" per row of ``walk.rows``: CETD's content subtrees, plus path nodes' own text."""
    rows = walk.rows
    if len(rows) == 0:
        return np.array([], dtype=object)
    marks, _ = cetd_marks(rows["parent"].to_numpy(), rows["ctd"].to_numpy(),
                          rows["density_sum"].to_numpy())
    content = (marks == MARKED) | ((marks == PATH) & _own_text_mask(walk))
    return np.where(content, CONTENT, NOISE).astype(object)


def cetd_extract(html: bytes | str, *, http_charset: str | None = None) -> str:
    """CETD's content text of one page."""
    from hwnoise.features.walk import walk_page

    return cetd_text(walk_page(html, (), http_charset=http_charset))


def cetd_text(walk: "PageWalk") -> str:
    """CETD's content text of a walked page: the same text whatever query the walk was made
    with (CETD reads only the tree, the densities and the text)."""
    return text_from_labels(walk, cetd_labels(walk))


class CETD(WalkMethod):
    """The CETD baseline as an evaluation method (no training, labels nodes)."""

    name = "cetd"
    needs_training = False

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        return cetd_labels(walk)

    def extract_html(self, html: bytes | str, *, http_charset: str | None = None) -> str:
        return cetd_extract(html, http_charset=http_charset)

    def extract_walk(self, walk: "PageWalk") -> str:
        """``extract_html`` of the page ``walk`` walked, without walking it again."""
        return cetd_text(walk)


def make(**options) -> CETD:
    """Factory for the registry."""
    if options:
        raise TypeError(f"cetd takes no options (got {', '.join(options)})")
    return CETD()


class CETDRendered(RendersPages, CETD):
    """CETD on what the browser shows (``cetd-render``): the walk without the elements
    ``hwnoise render`` found hidden, measures recomputed; hidden elements are noise. A page that
    render.parquet lacks is rendered here (unless not ``render_missing``), in one browser kept for
    the run, with ``scripts`` and ``timeout`` as ``hwnoise render`` takes them."""

    name = "cetd-render"

    def __init__(self, *, render_missing: bool = True, scripts: bool = False, timeout: float = 15.0):
        super().__init__()
        self.render_missing = render_missing
        self.scripts = scripts
        self.timeout = timeout

    def node_labels(self, page, walk) -> np.ndarray:
        from hwnoise.features.rendered import rendered_walk

        shown, kept = rendered_walk(walk, self.rendered(page))
        labels = np.full(len(walk.rows), NOISE, dtype=object)
        labels[kept] = cetd_labels(shown)
        return labels


def make_rendered(**options) -> CETDRendered:
    """The ``cetd-render`` method (options: render_missing, scripts, timeout)."""
    return CETDRendered(**options)
