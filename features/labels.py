"""Node labels from gold text: noise (S) or content (N) for every row of a walk.

How (DESIGN.md "Labels from gold text"):

1. The page's words are the tokens (``hwnoise.text.tokenize``) of the walk's
   text segments in document order, each word owned by the element that
   directly holds its text node; the gold words are the tokens of the gold text.
2. The two sequences are aligned by LCS (``hwnoise.text.lcs_mask``, one longest
   common subsequence), not by substring search, so a word that also appears in
   a menu aligns only where the order of the gold text puts it.
3. An element with own words (words in its direct text) is content (N) when at
   least half of its own words aligned.
4. An element without own words (a wrapper such as ``<ul>``, ``<tr>``, ``<div>``)
   is content when at least half of the words in its subtree aligned.
5. An element with no words in its subtree (``<br>``, ``<hr>``, ``<img>``, an
   empty cell) is noise (S).

Elements the walk dropped as invisible have no row and get no label. Without
gold text (``None``) ``label_page`` returns None labels; an empty gold text
makes every element noise.
"""
from __future__ import annotations

import numpy as np

from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.text import lcs_mask, tokenize

__all__ = ["label_page", "aligned_words"]


def aligned_words(walk, gold_text: str) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``(own_words, own_aligned)``: the row's own words and how many aligned with gold."""
    n = len(walk.rows)
    owners: list[int] = []
    words: list[str] = []
    for node, text in walk.segments:
        toks = tokenize(text)
        if toks:
            words.extend(toks)
            owners.extend([node] * len(toks))
    owner = np.asarray(owners, dtype=np.int64)
    own_words = np.bincount(owner, minlength=n)[:n] if n else np.zeros(0, dtype=np.int64)
    mask = lcs_mask(words, tokenize(gold_text or ""))
    own_aligned = (np.bincount(owner[mask], minlength=n)[:n] if n
                   else np.zeros(0, dtype=np.int64))
    return own_words.astype(np.int64), own_aligned.astype(np.int64)


def _subtree_last(walk) -> np.ndarray:
    last = getattr(walk, "last", None)
    n = len(walk.rows)
    if last is not None and len(last) == n:
        return np.asarray(last, dtype=np.int64)
    # rows are in document order: a subtree ends before the next row at its depth or above
    depth = walk.rows["distance"].to_numpy()
    out = np.empty(n, dtype=np.int64)
    stack: list[int] = []
    for i in range(n):
        while stack and depth[stack[-1]] >= depth[i]:
            out[stack.pop()] = i - 1
        stack.append(i)
    for j in stack:
        out[j] = n - 1
    return out


def label_page(walk, gold_text: str | None) -> np.ndarray:
    """"S"/"N" for every row of ``walk`` (a ``PageWalk``) from the page's gold text.

    Returns an object array aligned with ``walk.rows``; all None when
    ``gold_text`` is None (the page has no gold).
    """
    n = len(walk.rows)
    if gold_text is None:
        return np.full(n, None, dtype=object)
    own_words, own_aligned = aligned_words(walk, gold_text)
    idx = np.arange(n, dtype=np.int64)
    last = _subtree_last(walk)
    cw = np.concatenate(([0], np.cumsum(own_words)))
    ca = np.concatenate(([0], np.cumsum(own_aligned)))
    sub_words = cw[last + 1] - cw[idx]
    sub_aligned = ca[last + 1] - ca[idx]
    content = np.where(own_words > 0, 2 * own_aligned >= own_words,
                       (sub_words > 0) & (2 * sub_aligned >= sub_words))
    return np.where(content, CONTENT, NOISE).astype(object)
