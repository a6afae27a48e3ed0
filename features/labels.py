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

from hwnoise.features import native
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.measures import Utf8Column
from hwnoise.text import lcs_mask, normalize, nul_word_ids, nul_words, tokenize

__all__ = ["label_page", "aligned_words", "word_alignment", "label_rule", "label_bytes", "page_labels",
           "page_label_column", "label_counts", "resolve_labels", "stored_labels"]


def aligned_words(walk, gold_text: str) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``(own_words, own_aligned)``: the row's own words and how many aligned with gold."""
    owner, mask = word_alignment(walk, gold_text)
    return _word_counts(owner, mask, len(walk))


def word_alignment(walk, gold_text: str) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, mask)``: the row owning each of the page's words (document order) and whether
    the word aligned with the gold text's (one LCS)."""
    seg_owner, texts = walk.segment_arrays()
    ids = nul_word_ids(walk.normalized_segments(), normalize(gold_text or "")) if texts else None
    if ids is not None and ids[2] == len(texts) - 1:  # word ids only: no word strings made
        return seg_owner[ids[0]], lcs_mask(ids[1], ids[3])
    owner, words = segment_words(walk)  # no text, or a NUL inside a text (not from the walk)
    return owner, lcs_mask(words, tokenize(gold_text or ""))


def _word_counts(owner: np.ndarray, mask: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, its own words and how many of them ``mask`` marks."""
    own_words = np.bincount(owner, minlength=n)[:n] if n else np.zeros(0, dtype=np.int64)
    own_aligned = (np.bincount(owner[mask], minlength=n)[:n] if n
                   else np.zeros(0, dtype=np.int64))
    return own_words.astype(np.int64), own_aligned.astype(np.int64)


def segment_words(walk) -> tuple[np.ndarray, list[str]]:
    """``(owner, words)``: the page's words (``hwnoise.text.tokenize`` of each segment) in
    document order and the row that owns each. One pass over the normalised segments
    joined by NUL (``hwnoise.text.nul_words``; no word holds a NUL), the owners in numpy."""
    seg_owner, texts = walk.segment_arrays()
    if not texts:
        return np.zeros(0, dtype=np.int64), []
    seg, found, nuls = nul_words("\x00".join(walk.normalized_segments()))
    if nuls != len(texts) - 1:  # a NUL inside a text (not from the walk): one by one
        per = [tokenize(t) for t in texts]
        return (np.repeat(seg_owner, [len(w) for w in per]).astype(np.int64),
                [w for ws in per for w in ws])
    return seg_owner[seg], found


def label_page(walk, gold_text: str | None) -> np.ndarray:
    """"S"/"N" for every row of ``walk`` (a ``PageWalk``) from the page's gold text.

    Returns an object array aligned with ``walk.rows``; all None when
    ``gold_text`` is None (the page has no gold).
    """
    n = len(walk)
    if gold_text is None:
        return np.full(n, None, dtype=object)
    owner, mask = word_alignment(walk, gold_text)
    content = label_rule(owner, mask, np.asarray(walk.last, dtype=np.int64), n)
    return _NOISE_CONTENT[content.astype(np.intp)]


_NOISE_CONTENT = np.array([NOISE, CONTENT], dtype=object)


def label_rule(owner: np.ndarray, mask: np.ndarray, last: np.ndarray, n: int) -> np.ndarray:
    """``half_rule`` of the rows' words (``word_alignment``: each word's row, and whether it is
    marked), True = content: the counts and the rule in one compiled pass (``features/_walk.c``
    ``label_rule``) when it is there, else ``_word_counts`` and ``half_rule``, its reference."""
    if native.ext is not None:
        out = np.empty(n, dtype=bool)
        if native.ext.label_rule(np.ascontiguousarray(owner, dtype=np.int64), np.ascontiguousarray(mask, dtype=bool),
                                 np.ascontiguousarray(last, dtype=np.int64), out):
            return out
    return half_rule(last, *_word_counts(owner, mask, n))


def label_bytes(owner: np.ndarray, mask: np.ndarray, last: np.ndarray, n: int) -> bytearray:
    """``label_rule``'s rows as one byte each, ``NOISE`` or ``CONTENT`` ("S"/"N"): the label
    column's UTF-8 data, written by the compiled ``label_rule`` when it is there; the numpy
    ``half_rule``, its reference, else."""
    owner = np.ascontiguousarray(owner, dtype=np.int64)
    mask, last = np.ascontiguousarray(mask, dtype=bool), np.ascontiguousarray(last, dtype=np.int64)
    if native.ext is not None:
        out = bytearray(n)
        if native.ext.label_rule(owner, mask, last, out, ord(NOISE), ord(CONTENT)):
            return out
    content = half_rule(last, *_word_counts(owner, mask, n))
    return bytearray(np.where(content, ord(CONTENT), ord(NOISE)).astype(np.uint8).tobytes())


def half_rule(last: np.ndarray, own_words: np.ndarray, own_marked: np.ndarray) -> np.ndarray:
    """The labelling rule, as booleans (True = content): an element is content when at least
    half of its own words are marked; with no own words, when at least half of its subtree's
    words are; with no words in its subtree, it is noise. ``last`` is ``PageWalk.last``."""
    idx = np.arange(len(last), dtype=np.int64)
    cw = np.concatenate(([0], np.cumsum(own_words)))
    cm = np.concatenate(([0], np.cumsum(own_marked)))
    sub_words = cw[last + 1] - cw[idx]
    sub_marked = cm[last + 1] - cm[idx]
    return np.where(own_words > 0, 2 * own_marked >= own_words,
                    (sub_words > 0) & (2 * sub_marked >= sub_words))


def resolve_labels(n: int, *layers: np.ndarray | None) -> np.ndarray:
    """THE precedence of node labels: ``layers`` in order of authority, each an array of
    "S"/"N"/None aligned with the rows (or None for a layer the page lacks); a row takes the
    label of the first layer that has one, None when none has.

    The order callers pass (``page_labels``): gold text > a person's label > auto label.
    """
    out = np.full(n, None, dtype=object)
    for layer in reversed([x for x in layers if x is not None]):
        layer = np.asarray(layer, dtype=object)
        has = np.array([v in (NOISE, CONTENT) for v in layer], dtype=bool)
        out[has] = layer[has]
    return out


def stored_labels(rows, stored, set_by: str) -> np.ndarray:
    """The labels of ``stored`` (rows of ``labels.parquet`` for one page) set by ``set_by``
    (auto|person), aligned with the walk's ``rows``; a stored node whose xpath differs from
    the row's (the page changed since it was labelled) is ignored."""
    n = len(rows)
    out = np.full(n, None, dtype=object)
    if stored is None or len(stored) == 0:
        return out
    sel = stored[stored["set_by"] == set_by]
    node = sel["node"].to_numpy(dtype=np.int64)
    ok = (node >= 0) & (node < n)
    node, lab, xp = node[ok], sel["label"].to_numpy()[ok], sel["xpath"].to_numpy()[ok]
    same = np.asarray(rows["xpath"].to_numpy()[node] == xp, dtype=bool)
    out[node[same]] = lab[same]
    return out


def page_label_column(walk, gold_text: str | None, *, html: bytes | str | None = None,
                      records: list[list[str]] | None = None, http_charset: str | None = None,
                      stored=None) -> tuple[object, int, int]:
    """``page_labels`` as the features stage's label column: ``(column, labelled rows, content
    rows)``. A page labelled by its gold text alone (no gold records, no stored labels: the
    usual case) gets a ``Utf8Column`` of "S"/"N" (one byte a row, ``label_bytes``), with no str
    per row; any other page ``page_labels``' object array, the same labels."""
    n = len(walk)
    if (gold_text is not None and (records is None or html is None)
            and (stored is None or len(stored) == 0)):
        owner, mask = word_alignment(walk, gold_text)
        data = label_bytes(owner, mask, walk.last, n)
        return Utf8Column(np.arange(n + 1, dtype=np.int32).tobytes(), data), n, data.count(ord(CONTENT))
    labels = page_labels(walk, gold_text, html=html, records=records, http_charset=http_charset,
                         stored=stored)
    return (labels, *label_counts(labels))


def label_counts(labels: np.ndarray) -> tuple[int, int]:
    """``(labelled, content)``: the labels that are not None and those equal to ``CONTENT``
    (``list.count``: identity first, no per-element ufunc loop over objects)."""
    values = labels.tolist()
    return len(values) - values.count(None), values.count(CONTENT)


def page_labels(walk, gold_text: str | None, *, html: bytes | str | None = None,
                records: list[list[str]] | None = None,
                http_charset: str | None = None, stored=None) -> np.ndarray:
    """A page's node labels, THE place of label precedence: gold records (XPaths of record
    elements, ``features.record_gold``: each named element and its subtree is content, all
    else noise) > gold text (``label_page``) > a person's label > an automatic one (``stored``:
    the page's rows of ``labels.parquet``, ``hwnoise label``; ``resolve_labels``). ``html``
    (the page's bytes) is needed to place the records; labels are None where nothing applies."""
    if records is not None and html is not None:
        from hwnoise.features.record_gold import record_labels, resolve_records

        gold = resolve_records(html, records, http_charset=http_charset, n_rows=len(walk.rows))
        content = record_labels(len(walk.rows), np.asarray(walk.last), gold)
        return np.where(content, CONTENT, NOISE).astype(object)
    n = len(walk)
    gold = label_page(walk, gold_text) if gold_text is not None else None
    if stored is None or len(stored) == 0:
        return gold if gold is not None else np.full(n, None, dtype=object)
    return resolve_labels(n, gold, stored_labels(walk.rows, stored, "person"),
                          stored_labels(walk.rows, stored, "auto"))
