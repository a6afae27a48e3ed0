"""NCE, the News Content Extractor (seed 004, chapter 3): the separator node, comment removal
and the title search. Page-level: it needs no training.

1. Separator node (§3.1). The walker's rows are visited depth-first (document order). At each
   leaf with at least α0 characters, SelectAncestor climbs from the leaf (itself first) to the
   first node t that (1) is not a ``<p>``; (2) holds at least α1 characters; (3) whose parent's
   region outside T_t has link density >= α2 and at least α3 characters; (4) has at most one
   sibling with more than α2' characters and link density below α3'. The answer is the forest
   F(t, tr): the subtrees of t's children whose link density is at most tr = 0.4 (t's own text
   nodes, link density 0, are trees of that forest too). No such t: the whole page.
2. Comment removal (§3.2). A DFS over the forest lists the nodes whose text has α4..α5
   characters (not descending below them): L. Nodes at most α6 places apart in L whose texts'
   longest common subsequence (characters) is at least α7 times the shorter text are joined
   in a graph; as soon as a connected component has three nodes, the lowest common ancestor n
   of its first two nodes is found, and the child of n that holds the first node is dropped
   together with everything after it in the forest.
3. Title (§3.2). Among the nodes before the first node of the forest in document order, and
   the page's ``<title>``: those with at most α8 words, at least α9 of which (as a bag) occur in
   the forest's text. The one with the longest text is added.

Defaults: Table 3.1 of seed 004 (α0 200, α1 600, α2 0.1, α3 0, α4 30, α5 120, α6 5, α7 0.8,
α8 4, α9 0.7) and tr = 0.4. Seed 004's table and text disagree on α2, α3 and α8; we follow the
formulas of the text: condition 3 is ``linkDensity >= α2 (0.1)`` and ``chars >= α3 (0)``, and
the title bound is *at most* α8 words (the table calls it a minimum, which would make the
longest candidate the whole page). Condition 4 reuses α2 as a character count and α3 as a
link density, as the text writes it; with the defaults it never binds (no density is below 0).
``sibling_chars``/``sibling_link_density`` set those two numbers apart. A ``<title>`` chosen as
title is in ``extract``'s text but has no node (it is outside ``<body>``).
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from hwnoise.extractors.base import WalkMethod, option_flag, walk_of
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.text import lcs_length, tokenize

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["NCE", "make", "DEFAULTS", "NCEResult"]

#: Table 3.1 of seed 004, and tr.
DEFAULTS: dict[str, float] = {"a0": 200, "a1": 600, "a2": 0.1, "a3": 0, "a4": 30, "a5": 120,
                              "a6": 5, "a7": 0.8, "a8": 4, "a9": 0.7, "tr": 0.4}


class NCEResult:
    """What NCE found on one page: separator, forest, comment cut, title."""

    def __init__(self, separator: int | None, forest: np.ndarray, content: np.ndarray,
                 comment_cut: int | None, title_node: int | None, title_text: str,
                 candidates: list[int]) -> None:
        self.separator, self.forest, self.content = separator, forest, content
        self.comment_cut, self.title_node, self.title_text = comment_cut, title_node, title_text
        self.candidates = candidates


class NCE(WalkMethod):
    """The separator-node extractor of seed 004 on the walker's rows."""

    name = "nce"
    needs_training = False

    def __init__(self, a0: float = 200, a1: float = 600, a2: float = 0.1, a3: float = 0,
                 a4: float = 30, a5: float = 120, a6: int = 5, a7: float = 0.8, a8: float = 4,
                 a9: float = 0.7, tr: float = 0.4, sibling_chars: float | None = None,
                 sibling_link_density: float | None = None, comments: bool = True,
                 title: bool = True) -> None:
        super().__init__()
        self.a0, self.a1, self.a2, self.a3, self.a4 = a0, a1, a2, a3, a4
        self.a5, self.a6, self.a7, self.a8, self.a9, self.tr = a5, int(a6), a7, a8, a9, tr
        self.sibling_chars = a2 if sibling_chars is None else sibling_chars
        self.sibling_link_density = a3 if sibling_link_density is None else sibling_link_density
        self.comments, self.title = comments, title

    # ---- 1. the separator node
    def separator(self, walk: "PageWalk") -> int | None:
        r = walk.rows
        n = len(r)
        if n == 0:
            return None
        tags = r["tag"].to_numpy()
        parent = r["parent"].to_numpy()
        chars = r["chars"].to_numpy(dtype=float)
        link = r["link_chars"].to_numpy(dtype=float)
        ld = np.where(chars > 0, link / np.where(chars > 0, chars, 1), 0.0)
        nkids = np.bincount(parent[1:], minlength=n) if n > 1 else np.zeros(n, dtype=int)
        # siblings that count for condition 4, per parent
        rich = (chars > self.sibling_chars) & (ld < self.sibling_link_density)
        rich_kids = np.bincount(parent[1:], weights=rich[1:].astype(float), minlength=n) if n > 1 \
            else np.zeros(n)
        ok_cache: dict[int, bool] = {}

        def ok(t: int) -> bool:
            if t in ok_cache:
                return ok_cache[t]
            p = parent[t]
            res = False
            if p >= 0 and tags[t] != "p" and chars[t] >= self.a1:
                rc = chars[p] - chars[t]
                rl = link[p] - link[t]
                rld = rl / rc if rc > 0 else 0.0
                if rld >= self.a2 and rc >= self.a3:
                    others = rich_kids[p] - (1.0 if rich[t] else 0.0)
                    res = others <= 1
            ok_cache[t] = res
            return res

        leaves = np.flatnonzero((nkids == 0) & (chars >= self.a0))
        for leaf in leaves:
            t = int(leaf)
            while t >= 0:
                if ok(t):
                    return t
                t = int(parent[t])
        return None

    def run(self, walk: "PageWalk", page_title: str = "") -> NCEResult:
        """Every step of NCE on one walked page."""
        r = walk.rows
        n = len(r)
        parent = r["parent"].to_numpy()
        last = np.asarray(walk.last, dtype=np.int64)
        chars = r["chars"].to_numpy(dtype=float)
        link = r["link_chars"].to_numpy(dtype=float)
        ld = np.where(chars > 0, link / np.where(chars > 0, chars, 1), 0.0)
        sep = self.separator(walk)
        forest = np.zeros(n, dtype=bool)
        if sep is None:
            forest[:] = True
        else:
            forest[sep] = True  # t's own text nodes (link density 0)
            kids = np.flatnonzero(parent == sep)
            for k in kids[ld[kids] <= self.tr]:
                forest[k:last[k] + 1] = True
        content = forest.copy()
        texts = walk.subtree_texts()
        cut = self._comment_cut(parent, last, chars, forest, texts) if self.comments else None
        if cut is not None:
            content[cut:] = False
        title_node, title_text, cands = None, "", []
        if self.title and content.any():
            title_node, title_text, cands = self._title(walk, texts, content, page_title)
            if title_node is not None and title_node >= 0:
                content[title_node:last[title_node] + 1] = True
        return NCEResult(sep, forest, content, cut, title_node, title_text, cands)

    # ---- 2. comment removal
    def _comment_cut(self, parent, last, chars, forest, texts) -> int | None:
        L: list[int] = []
        i, n = 0, len(parent)
        while i < n:
            if forest[i] and self.a4 <= chars[i] <= self.a5:
                L.append(i)
                i = int(last[i]) + 1  # its descendants are not visited
            else:
                i += 1
        uf = list(range(len(L)))
        size = [1] * len(L)

        def find(x: int) -> int:
            while uf[x] != x:
                uf[x] = uf[uf[x]]
                x = uf[x]
            return x

        for j in range(len(L)):
            tj = texts[L[j]]
            for i2 in range(max(0, j - self.a6 - 1), j):
                ti = texts[L[i2]]
                if lcs_length(ti, tj) < self.a7 * min(len(ti), len(tj)):
                    continue
                a, b = find(i2), find(j)
                if a != b:
                    uf[b] = a
                    size[a] += size[b]
                if size[find(j)] >= 3:
                    root = find(j)
                    members = [k for k in range(j + 1) if find(k) == root]
                    n1, n2 = L[members[0]], L[members[1]]
                    return _child_towards(parent, _lca(parent, n1, n2), n1)
        return None

    # ---- 3. the title
    def _title(self, walk, texts, content, page_title) -> tuple[int | None, str, list[int]]:
        first = int(np.flatnonzero(content)[0])
        body_bag = Counter()
        for node, text in walk.segments:
            if content[node]:
                body_bag.update(tokenize(text))
        best, best_len, best_text, cands = None, -1, "", []

        def consider(node: int, text: str) -> None:
            nonlocal best, best_len, best_text
            bag = Counter(tokenize(text))
            size = sum(bag.values())
            if size == 0:
                return
            if node == -1 or (size <= self.a8 and sum((bag & body_bag).values()) >= self.a9 * size):
                cands.append(node)
                if len(text) > best_len:
                    best, best_len, best_text = node, len(text), text

        if page_title:
            consider(-1, page_title)  # the <title> element is a candidate by rule 1
        for v in range(first):
            if texts[v]:
                consider(v, texts[v])
        return best, best_text, cands

    # ---- the Method protocol
    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        res = self.run(walk, _page_title(page))
        return np.where(res.content, CONTENT, NOISE)

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str:
        """The title (``<title>`` included) and the content's text, in document order."""
        walk = walk if walk is not None else walk_of(page)
        res = self.run(walk, _page_title(page))
        body = [t for node, t in walk.segments if res.content[node]]
        head = [res.title_text] if res.title_node == -1 and res.title_text else []
        return "\n".join(head + body)


def _page_title(page: "Page") -> str:
    import re

    from hwnoise.extractors.base import capped_page

    text = capped_page(page.read_html(), page.http_charset)  # as walked: a title past the cap is in no node
    m = re.search(r"<title[^>]*>(.*?)</title", text, re.I | re.S)
    if not m:
        return ""
    import html as _html

    return " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", m.group(1))).split())


def _ancestors(parent: np.ndarray, v: int) -> list[int]:
    out = [v]
    while parent[v] >= 0:
        v = int(parent[v])
        out.append(v)
    return out


def _lca(parent: np.ndarray, a: int, b: int) -> int:
    anc = set(_ancestors(parent, a))
    for v in _ancestors(parent, b):
        if v in anc:
            return v
    return 0


def _child_towards(parent: np.ndarray, top: int, v: int) -> int:
    """The child of ``top`` on the path down to ``v`` (``v`` itself when ``top`` is ``v``)."""
    while parent[v] >= 0 and parent[v] != top:
        v = int(parent[v])
    return v


def make(**options: Any) -> NCE:
    """The ``nce`` method; options a0..a9, tr, sibling_chars, sibling_link_density, comments,
    title (see the module docstring)."""
    known = set(DEFAULTS) | {"sibling_chars", "sibling_link_density", "comments", "title"}
    bad = set(options) - known
    if bad:
        raise TypeError(f"nce: unknown options {', '.join(sorted(bad))}; known: {', '.join(sorted(known))}")
    kw: dict[str, Any] = {}
    for k, v in options.items():
        kw[k] = option_flag(v) if k in ("comments", "title") else (None if v is None else float(v))
    if "a6" in kw:
        kw["a6"] = int(kw["a6"])
    return NCE(**kw)
