"""The one tokeniser, the LCS over word ids and the text-level metric.

Every stage that splits text into words or compares word sequences calls this
module, so "a word" means the same thing in labels, query matching and scores.
"""
from __future__ import annotations

import itertools
import re
import unicodedata
from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from hwnoise import native

WORD_RE = re.compile(r"\w+(?:['\u2019]\w+)*")
_WORD_OR_NUL = re.compile(WORD_RE.pattern + "|\x00")
_SPACE_RE = re.compile(r"\s+")


def words(text: str) -> list[str]:
    """``WORD_RE.findall(text)``: the words of already normalised text. The compiled ``words``
    of ``hwnoise/_tokens.c`` when built (the regex is the reference it equals,
    tests/test_text_words.py), the regex otherwise."""
    ext = native.tokens
    return ext.words(text) if ext is not None else WORD_RE.findall(text)


def nul_words(text: str) -> tuple[np.ndarray, list[str], int]:
    """The words of normalised texts joined by NUL, in one pass: ``(index of each word's
    text, words, number of NULs)`` (int64 indices; no word holds a NUL)."""
    ext = native.tokens
    if ext is not None:
        found, segs, nuls = ext.words(text, True)
        return np.frombuffer(segs, dtype=np.int64), found, nuls
    found = _WORD_OR_NUL.findall(text)
    sep = np.fromiter(map("\x00".__eq__, found), dtype=bool, count=len(found))
    word = ~sep
    return (np.cumsum(sep, dtype=np.int64)[word], list(itertools.compress(found, word.tolist())),
            int(np.count_nonzero(sep)))


def nul_word_ids(text: str | list[str], other: str) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """``nul_words(text)`` and ``words(other)`` as word ids (int64; equal words, equal ids, over
    both; in order of first appearance, ``text`` first), for an LCS of the two that needs no
    word strings: ``(index of each word's text, text's ids, number of NULs, other's ids)``. A
    list of texts is read as ``"\x00".join(text)``. The compiled ``text_ids`` makes them
    without making the words, and a list's without joining it."""
    ext = native.tokens
    if ext is not None:
        ids, segs, nuls, other_ids = ext.text_ids(text, other)
        return (np.frombuffer(segs, dtype=np.int64), np.frombuffer(ids, dtype=np.int64), nuls,
                np.frombuffer(other_ids, dtype=np.int64))
    seg, found, nuls = nul_words(text if isinstance(text, str) else "\x00".join(text))
    vocab: dict[str, int] = {}
    ids = [vocab.setdefault(w, len(vocab)) for w in found]
    other_ids = [vocab.setdefault(w, len(vocab)) for w in words(other)]
    return seg, np.array(ids, dtype=np.int64), nuls, np.array(other_ids, dtype=np.int64)


def normalize(text: str) -> str:
    """NFKC and case-fold: the form in which words and query terms are compared."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokenize(text: str) -> list[str]:
    """Words of ``text``: NFKC, case-folded, ``\\w+(?:['’]\\w+)*`` ("BBC's" is one word).

    Accents are kept: "café" and "cafe" are different words, as a search
    engine without accent folding would treat them (see README, "Words").
    """
    if not text:
        return []
    return words(normalize(text))


def collapse_space(text: str) -> str:
    """Strip ``text`` and collapse its inner whitespace runs to one space (CETD's C counts this)."""
    return _SPACE_RE.sub(" ", text).strip()


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two word sequences (bit-parallel)."""
    if not a or not b:
        return 0
    from rapidfuzz.distance import LCSseq  # imported when used: hwnoise features starts without it

    return int(LCSseq.similarity(a, b))


#: The most memory rapidfuzz's alignment (``LCSseq.opcodes``) may take: its bit matrix holds a
#: bit for every pair of words of the two sides' middles (what lies between their common prefix
#: and suffix), so two sequences of millions of words that differ throughout would ask for
#: terabytes (a 50 MB page: ``std::bad_alloc`` after minutes, at 5 GB). Beyond it the alignment
#: is refused with a MemoryError that says so, which the stages report as that page's failure.
MAX_ALIGN_BYTES = 4 << 30


def _middles(a: Sequence, b: Sequence) -> tuple[int, int]:
    """The lengths of ``a`` and ``b`` without their common prefix and suffix."""
    n = min(len(a), len(b))
    if isinstance(a, array) and isinstance(b, array) and a.typecode == b.typecode == "q":
        x, y = np.frombuffer(a, dtype=np.int64), np.frombuffer(b, dtype=np.int64)
        diff = np.flatnonzero(x[:n] != y[:n])
        pre = int(diff[0]) if len(diff) else n
        rest = n - pre
        diff = np.flatnonzero(x[len(x) - rest:][::-1] != y[len(y) - rest:][::-1])
        suf = int(diff[0]) if len(diff) else rest
    else:
        pre = next((i for i in range(n) if a[i] != b[i]), n)
        rest = n - pre
        suf = next((i for i in range(rest) if a[-1 - i] != b[-1 - i]), rest)
    return len(a) - pre - suf, len(b) - pre - suf


def lcs_blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """One LCS of ``a`` and ``b`` as aligned runs ``(a_start, b_start, length)``. Lists of
    words go to the LCS as word ids when the compiled helpers are built (``word_ids``: equal
    words, equal ids), which it compares faster than strings; the alignment is the same."""
    if len(a) == 0 or len(b) == 0:
        return []
    from rapidfuzz.distance import LCSseq

    ext = native.tokens
    if ext is not None and type(a) is list and type(b) is list:
        ids_a, ids_b = ext.word_ids(a, b)
        a, b = array("q"), array("q")
        a.frombytes(ids_a)
        b.frombytes(ids_b)
    elif isinstance(a, np.ndarray) and isinstance(b, np.ndarray):  # word ids (nul_word_ids)
        a, b = _id_array(a), _id_array(b)
    ma, mb = _middles(a, b)
    need = mb * ((ma + 63) // 64) * 8
    if need > MAX_ALIGN_BYTES:
        raise MemoryError(f"aligning {len(a):,} words with {len(b):,} would take {need / 2**30:,.0f} GiB "
                          f"(more than {MAX_ALIGN_BYTES >> 30} GiB): a page this large is beyond what hwnoise "
                          "aligns; cut it into smaller pages ('hwnoise collect' keeps 10 MiB a page, --max-bytes)")
    return [(op.src_start, op.dest_start, op.src_end - op.src_start)
            for op in LCSseq.opcodes(a, b) if op.tag == "equal"]


def _id_array(ids: np.ndarray) -> array:
    """Word ids (non-negative integers) as the ``array('q')`` rapidfuzz reads as a sequence."""
    out = array("q")
    out.frombytes(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
    return out


def lcs_mask(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Boolean mask over ``a``: True where a word of ``a`` is part of one LCS with ``b``: the
    one of ``lcs_blocks`` (rapidfuzz's). Word ids (int64 arrays, ``nul_word_ids``) go to the
    compiled ``lcs_mask`` of ``hwnoise/_tokens.c`` when built, which gives the same LCS
    (rapidfuzz's steps on fewer, densely numbered words; tests/test_text_words.py compares
    them) in a quarter of the time; ``lcs_blocks`` is the reference and the fallback."""
    ext = native.tokens
    if (ext is not None and isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            and a.dtype == np.int64 and b.dtype == np.int64):
        made = ext.lcs_mask(np.ascontiguousarray(a), np.ascontiguousarray(b))
        if made is not None:
            return np.frombuffer(made, dtype=bool)
    mask = np.zeros(len(a), dtype=bool)
    for start, _, length in lcs_blocks(a, b):
        mask[start:start + length] = True
    return mask


def text_scores(extracted: str | Sequence[str], gold: str | Sequence[str]) -> dict[str, float]:
    """Text-level P, R, F1 of seed 003 §4.1: P = |LCS|/|a|, R = |LCS|/|b| over words.

    An empty side scores 1 when the other is empty too, else 0.
    """
    a = tokenize(extracted) if isinstance(extracted, str) else list(extracted)
    b = tokenize(gold) if isinstance(gold, str) else list(gold)
    if not a and not b:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    if not a or not b:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    common = lcs_length(a, b)
    p, r = common / len(a), common / len(b)
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f1}


def standard_error(values: Sequence[float]) -> float | None:
    """The standard error of a mean over pages (the pages' sample standard deviation over the
    square root of their number); None under two pages. How far a dataset's mean page score may
    move with other pages of the same kind: reports print 1.96 of it beside the mean. Two methods
    scored on the same pages are compared by their per-page differences (``bench/paired.py``)."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) >= 2 else None


def mean_text_scores(per_page: Iterable[dict[str, float]]) -> dict[str, float]:
    """Dataset-level text scores: means over pages, and the F1 of the means (Tables 4.1, 4.3);
    ``text_f1_se``, the standard error of the mean F1, from two pages on."""
    rows = list(per_page)
    if not rows:
        return {}
    p = float(np.mean([r["precision"] for r in rows]))
    r_ = float(np.mean([r["recall"] for r in rows]))
    f1s = [r["f1"] for r in rows]
    f1 = float(np.mean(f1s))
    of_means = 2 * p * r_ / (p + r_) if p + r_ else 0.0
    out = {"text_precision": p, "text_recall": r_, "text_f1": f1, "text_f1_of_means": of_means}
    se = standard_error(f1s)
    if se is not None:
        out["text_f1_se"] = se
    return out
