"""Webstemmer's layout patterns (seed 001; Shinyama 2007).

1. A page becomes a sequence of *layout blocks*: the text of the page cut at block-level
   elements (p, div, h3, td, ...). A block's key is the path of its last three elements with
   their ``class``, ``id`` and ``align`` attributes (``tr/td:align=left/span:class=standard``,
   as in seed 001's pattern file); the page's ``<title>`` is the first block, key ``title``.
2. Similarity of two pages A, B: the weighted maximum common sequence of their block keys,
   ``Sim = sum over matched pairs (W(a) + W(b)) / (sum_A W + sum_B W)``, W = letters (every
   character that is not punctuation, space or a symbol).
3. Hierarchical clustering (average linkage) of the training pages at similarity ``t`` (0.97).
4. A layout pattern per cluster of at least two pages: the blocks of its central page (the
   one most similar to the others), each aligned with the other pages' blocks by the MCS.
   ``DiffScore(E) = sum_pairs (W(s1) + W(s2) - 2 |MCS(s1, s2)|) / sum_pairs (W(s1) + W(s2))``
   over the pairs of texts aligned with block E; ``MainScore(E) = DiffScore(E) * mean W``.
5. MAIN: blocks with DiffScore >= ``diff_threshold`` (0.5) and MainScore >= ``main_threshold``
   (50). TITLE: among the blocks before the first main block (``<title>`` included), the one
   whose text is most contained in the main text (mean over the cluster's pages of
   |MCS(title, main)| / W(title)), if that is at least ``title_threshold`` (0.6). SUB: the
   other blocks with DiffScore >= ``diff_threshold``.
6. Extraction: the page's blocks are matched to the most similar pattern; in strict mode
   (``strict=True``, Webstemmer's ``-S``, off by default as there) a pattern any of whose
   blocks is missing from the page is disqualified. The text
   is TITLE and MAIN; a page no pattern matches yields nothing.

Choices (seed 001 gives no numbers for -T and -M; 0.5 and 50 are the values we take for
Webstemmer's defaults): consecutive blocks with the same key are merged into one block (the
paragraphs of an article are one block, so articles of different lengths share a layout);
``Sim``'s numerator counts both sides of a matched pair, so that identical layouts score 1 (as
the threshold 0.97 presumes); DiffScore of a block aligned on one page only is 0 (nothing to
compare: treated as static). |MCS(s1, s2)| is the longest common subsequence of the two texts'
letters (``hwnoise.text.lcs_length``), as the seed writes it; two unrelated English news texts
share about 40 % of their letters that way (DiffScore 0.60-0.64 on big9 gold texts), close to
the -T threshold 0.5 (Webstemmer's own code counts difflib's matching blocks, which finds
fewer). Anchor-text titles need the site's link graph, which the shared
datasets do not have: titles always come from the main text. Clusters of one page have no
DiffScore and make no pattern.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hwnoise.extractors.base import ExtractorError, WalkMethod, option_flag, walk_of
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.elements import shown_elements
from hwnoise.markup import BLOCK_TAGS
from hwnoise.text import lcs_length

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["Webstemmer", "make", "Block", "Pattern", "page_blocks", "similarity", "mcs_align",
           "diff_score", "letters", "BLOCK_TAGS"]

_ATTRS = ("class", "id", "align")
TITLE, MAIN, SUB = "TITLE", "MAIN", "SUB"


def letters(text: str) -> str:
    """The characters of ``text`` that count for Weight: no punctuation, spaces or symbols."""
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


@dataclass
class Block:
    """One layout block: its key, its text, and the walker nodes whose text it holds."""

    key: str
    text: str
    nodes: list[int] = field(default_factory=list)

    @property
    def letters(self) -> str:
        return letters(self.text)

    @property
    def weight(self) -> int:
        return len(self.letters)


def _step(el, tag: str) -> str:
    if el is None:
        return tag
    parts = [tag] + [f"{a}={el.get(a)}" for a in _ATTRS if el.get(a)]
    return ":".join(parts)


def page_blocks(walk: "PageWalk", elements: Sequence | None = None, title: str = "",
                depth: int = 3, merge: bool = True) -> list[Block]:
    """The layout-block sequence of a page (see the module docstring)."""
    r = walk.rows
    tags = r["tag"].tolist()
    parent = r["parent"].to_numpy()
    n = len(tags)
    steps = [_step(elements[i] if elements is not None else None, tags[i]) for i in range(n)]
    owner = np.zeros(n, dtype=np.int64)
    key = [""] * n
    chain: list[list[str]] = [[] for _ in range(n)]
    for i in range(n):
        p = parent[i]
        up = chain[p] if p >= 0 else []
        chain[i] = (up + [steps[i]])[-depth:]
        owner[i] = i if (tags[i] in BLOCK_TAGS or p < 0) else owner[p]
    for i in range(n):
        key[i] = "/".join(chain[owner[i]])
    blocks: list[Block] = []
    if title:
        blocks.append(Block("title", title, []))
    prev_owner = None
    for node, text in walk.segments:
        o = int(owner[node])
        if blocks and prev_owner == o:
            b = blocks[-1]
            b.text += " " + text
            if node not in b.nodes:
                b.nodes.append(node)
        else:
            blocks.append(Block(key[o], text, [node]))
        prev_owner = o
    if merge:
        merged: list[Block] = []
        for b in blocks:
            if merged and merged[-1].key == b.key and b.key != "title":
                m = merged[-1]
                m.text += "\n" + b.text
                m.nodes.extend(x for x in b.nodes if x not in m.nodes)
            else:
                merged.append(Block(b.key, b.text, list(b.nodes)))
        blocks = merged
    return blocks


def _wmcs(ka: np.ndarray, wa: np.ndarray, kb: np.ndarray, wb: np.ndarray) -> np.ndarray:
    """The DP table of the weighted maximum common sequence (match value W(a) + W(b))."""
    la, lb = len(ka), len(kb)
    D = np.zeros((la + 1, lb + 1))
    for i in range(1, la + 1):
        gain = np.where(kb == ka[i - 1], wa[i - 1] + wb, -np.inf)
        cand = np.maximum(D[i - 1, 1:], D[i - 1, :-1] + gain)
        D[i, 1:] = np.maximum.accumulate(cand)
    return D


def _codes(a: Sequence[Block], b: Sequence[Block]) -> tuple[np.ndarray, ...]:
    vocab: dict[str, int] = {}
    ka = np.array([vocab.setdefault(x.key, len(vocab)) for x in a], dtype=np.int64)
    kb = np.array([vocab.setdefault(x.key, len(vocab)) for x in b], dtype=np.int64)
    wa = np.array([x.weight for x in a], dtype=float)
    wb = np.array([x.weight for x in b], dtype=float)
    return ka, wa, kb, wb


def similarity(a: Sequence[Block], b: Sequence[Block]) -> float:
    """Seed 001's Sim(A, B) over block keys, weights = letters (1.0 for identical layouts)."""
    if not a or not b:
        return 0.0
    ka, wa, kb, wb = _codes(a, b)
    total = wa.sum() + wb.sum()
    if total == 0:
        return 1.0 if list(ka) == list(kb) else 0.0
    return float(_wmcs(ka, wa, kb, wb)[-1, -1] / total)


def mcs_align(a: Sequence[Block], b: Sequence[Block]) -> dict[int, int]:
    """One maximum common sequence of two block sequences: {index in a: index in b}."""
    if not a or not b:
        return {}
    ka, wa, kb, wb = _codes(a, b)
    # zero-weight blocks still align: give every block a tiny weight
    D = _wmcs(ka, wa + 1e-6, kb, wb + 1e-6)
    i, j, out = len(a), len(b), {}
    while i > 0 and j > 0:
        if D[i, j] == D[i - 1, j]:
            i -= 1
        elif D[i, j] == D[i, j - 1]:
            j -= 1
        else:
            out[i - 1] = j - 1
            i, j = i - 1, j - 1
    return out


def diff_score(texts: Sequence[str]) -> float:
    """Seed 001's DiffScore over the texts aligned with one block (all pairs)."""
    ls = [letters(t) for t in texts]
    num = den = 0.0
    for x in range(len(ls)):
        for y in range(x + 1, len(ls)):
            s = len(ls[x]) + len(ls[y])
            num += s - 2 * lcs_length(ls[x], ls[y])
            den += s
    return num / den if den else 0.0


@dataclass
class Pattern:
    """A layout pattern: the central page's blocks with DiffScore, MainScore and kinds."""

    name: str
    blocks: list[Block]
    pages: list[str]
    diff: np.ndarray
    main: np.ndarray
    kinds: list[str | None]
    score: float


class Webstemmer(WalkMethod):
    """Layout patterns learnt from a site's training pages; TITLE and MAIN of a matching page."""

    name = "webstemmer"
    needs_training = True

    def __init__(self, t: float = 0.97, diff_threshold: float = 0.5, main_threshold: float = 50.0,
                 title_threshold: float = 0.6, strict: bool = False, merge: bool = True,
                 depth: int = 3, linkage: str = "average") -> None:
        super().__init__()
        self.t, self.diff_threshold, self.main_threshold = t, diff_threshold, main_threshold
        self.title_threshold, self.strict, self.merge, self.depth = title_threshold, strict, merge, depth
        self.linkage = linkage
        self.patterns_: list[Pattern] | None = None
        self.clusters_: list[list[str]] = []

    def blocks(self, page: "Page", walk: "PageWalk | None" = None) -> list[Block]:
        walk = walk if walk is not None else walk_of(page, keep_tree=True)
        view = shown_elements(page.read_html(), page.http_charset, len(walk), walk.column("tag"),
                              walk=walk)
        return page_blocks(walk, view.elements if view.aligned else None, view.title,
                           self.depth, self.merge)

    def fit(self, pages: Sequence["Page"]) -> "Webstemmer":
        seqs = [self.blocks(p) for p in pages]
        ids = [p.id for p in pages]
        n = len(seqs)
        S = np.eye(n)
        for i in range(n):
            for j in range(i + 1, n):
                S[i, j] = S[j, i] = similarity(seqs[i], seqs[j])
        self.similarity_ = S
        labels = self._cluster(S)
        self.patterns_, self.clusters_ = [], []
        for lab in np.unique(labels):
            members = np.flatnonzero(labels == lab)
            self.clusters_.append([ids[m] for m in members])
            if len(members) < 2:
                continue
            self.patterns_.append(self._pattern([seqs[m] for m in members], [ids[m] for m in members],
                                                S[np.ix_(members, members)]))
        self.patterns_.sort(key=lambda p: -p.score)
        return self

    def _cluster(self, S: np.ndarray) -> np.ndarray:
        n = len(S)
        if n < 2:
            return np.zeros(n, dtype=int)
        from scipy.cluster.hierarchy import fcluster, linkage
        from scipy.spatial.distance import squareform

        D = np.clip(1.0 - S, 0.0, None)
        np.fill_diagonal(D, 0.0)
        Z = linkage(squareform(D, checks=False), method=self.linkage)
        return fcluster(Z, t=1.0 - self.t, criterion="distance")

    def _pattern(self, seqs: list[list[Block]], ids: list[str], S: np.ndarray) -> Pattern:
        c = int(np.argmax(S.sum(axis=1)))
        base = seqs[c]
        aligned: list[list[str]] = [[b.text] for b in base]
        per_page: list[dict[int, str]] = [{k: b.text for k, b in enumerate(base)}]
        for m, seq in enumerate(seqs):
            if m == c:
                continue
            al = mcs_align(base, seq)
            per_page.append({k: seq[v].text for k, v in al.items()})
            for k, v in al.items():
                aligned[k].append(seq[v].text)
        diff = np.array([diff_score(ts) if len(ts) > 1 else 0.0 for ts in aligned])
        meanw = np.array([np.mean([len(letters(t)) for t in ts]) for ts in aligned])
        main = diff * meanw
        kinds: list[str | None] = [None] * len(base)
        is_main = (diff >= self.diff_threshold) & (main >= self.main_threshold)
        if is_main.any():
            top = int(np.argmax(np.where(is_main, main, -1)))
            first_main = int(np.flatnonzero(is_main)[0])
            best, best_sim = None, self.title_threshold
            for k in range(first_main):
                sims = []
                for pp in per_page:
                    if k in pp and top in pp:
                        tl = letters(pp[k])
                        sims.append(lcs_length(tl, letters(pp[top])) / len(tl) if tl else 0.0)
                s = float(np.mean(sims)) if sims else 0.0
                if s >= best_sim and (base[k].key == "title" or diff[k] >= self.diff_threshold):
                    best, best_sim = k, s
            if best is not None:
                kinds[best] = TITLE
                is_main[best] = False
        for k in range(len(base)):
            if kinds[k] is None and is_main[k]:
                kinds[k] = MAIN
            elif kinds[k] is None and diff[k] >= self.diff_threshold:
                kinds[k] = SUB
        score = float(np.log(len(seqs)) * main[is_main].sum())
        return Pattern(ids[c], base, ids, diff, main, kinds, score)

    def match(self, blocks: list[Block]) -> tuple[Pattern | None, dict[int, int]]:
        """The most similar pattern (strict mode: with every block present) and its alignment."""
        if self.patterns_ is None:
            raise ExtractorError("webstemmer: call fit(pages) with a site's training pages first")
        best, best_sim, best_al = None, -1.0, {}
        for pat in self.patterns_:
            al = mcs_align(pat.blocks, blocks)
            if self.strict and len(al) < len(pat.blocks):
                continue
            s = similarity(pat.blocks, blocks)
            if s > best_sim:
                best, best_sim, best_al = pat, s, al
        return best, best_al

    def extract_blocks(self, page: "Page", walk: "PageWalk | None" = None) -> list[tuple[str, str, list[int]]]:
        """(kind, text, nodes) for each TITLE, MAIN and SUB block of the page, in page order."""
        blocks = self.blocks(page, walk)
        pat, al = self.match(blocks)
        if pat is None:
            return []
        out = []
        for k, v in sorted(al.items(), key=lambda kv: kv[1]):
            kind = pat.kinds[k]
            if kind is not None:
                out.append((kind, blocks[v].text, blocks[v].nodes))
        return out

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str:
        """TITLE and MAIN text (``<title>`` included when it is the title block)."""
        return "\n".join(t for kind, t, _ in self.extract_blocks(page, walk) if kind in (TITLE, MAIN))

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        labels = np.full(len(walk.rows), NOISE, dtype=object)
        for kind, _, nodes in self.extract_blocks(page, walk):
            if kind in (TITLE, MAIN):
                labels[nodes] = CONTENT
        return labels


def make(t: float = 0.97, diff_threshold: float = 0.5, main_threshold: float = 50.0,
         title_threshold: float = 0.6, strict: Any = False, merge: Any = True, depth: int = 3,
         linkage: str = "average") -> Webstemmer:
    """The ``webstemmer`` method (options as in the module docstring)."""
    return Webstemmer(t=float(t), diff_threshold=float(diff_threshold),
                      main_threshold=float(main_threshold), title_threshold=float(title_threshold),
                      strict=option_flag(strict), merge=option_flag(merge), depth=int(depth), linkage=linkage)
