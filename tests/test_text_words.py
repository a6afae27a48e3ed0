"""The compiled tokeniser (``hwnoise/_tokens.c`` ``words``) equals its reference, the regex
``hwnoise.text.WORD_RE`` (and the labels' NUL-separated variant), on every code point."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest

from hwnoise import text
from hwnoise import native

pytestmark = pytest.mark.skipif(native.tokens is None, reason="the compiled tokeniser is not built")

WORD_OR_NUL = re.compile(text.WORD_RE.pattern + "|\x00")
EVERY = [chr(c) for c in range(0x110000)]


def _reference_nul(s: str) -> tuple[list[int], list[str], int]:
    """``nul_words`` by the regex alone: each word with the number of NULs before it."""
    segs, words, k = [], [], 0
    for w in WORD_OR_NUL.findall(s):
        if w == "\x00":
            k += 1
        else:
            segs.append(k)
            words.append(w)
    return segs, words, k


def _both(s: str) -> None:
    assert native.tokens.words(s) == text.WORD_RE.findall(s)
    found, segs, nuls = native.tokens.words(s, True)
    assert (np.frombuffer(segs, dtype=np.int64).tolist(), found, nuls) == _reference_nul(s)


def test_every_code_point_alone_is_a_word_or_a_separator_as_in_the_regex():
    _both(" ".join(EVERY))  # each code point between spaces: a word of one character or none
    _both("".join(EVERY))


def test_every_code_point_after_an_apostrophe_continues_a_word_as_in_the_regex():
    _both(" ".join("a'" + c for c in EVERY))
    _both(" ".join("a\u2019" + c for c in EVERY))
    _both(" ".join(c + "'b" for c in EVERY))


@pytest.mark.parametrize("seed", range(4))
def test_random_strings_of_word_apostrophe_nul_and_space_characters(seed):
    alphabet = ["a", "Z", "_", "7", "'", "\u2019", " ", "\x00", "\u00e9", "\u0663", "-", "\u00b2",
                "\u3000", "\U0001f600", "\U00010400", "\ud800", "\u00bd", "''", "\u2019\u2019"]
    rnd = random.Random(seed)
    for _ in range(5000):
        _both("".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 24))))


def test_examples():
    assert native.tokens.words("bbc's news’ it''s o'clock _x_ 3\u00bd") == [
        "bbc's", "news", "it", "s", "o'clock", "_x_", "3\u00bd"]
    seg, found, nuls = text.nul_words("a\x00\x00b c\x00")
    assert (seg.tolist(), found, nuls) == ([0, 2, 2], ["a", "b", "c"], 3)
    assert native.tokens.words("") == [] and text.nul_words("")[1:] == ([], 0)


def test_tokenize_uses_either_and_gives_the_same(monkeypatch):
    s = "Café BBC's\u00a0news — 2009 ＡＢＣ ﬁne o\u2019clock"
    compiled = text.tokenize(s)
    monkeypatch.setattr(native, "tokens", None)
    assert text.tokenize(s) == compiled == ["café", "bbc's", "news", "2009", "abc", "fine", "o\u2019clock"]


def test_nul_words_is_the_same_with_either(monkeypatch):
    s = "Bbc's\x00\x00news’ o'clock\x00\x00x_1 \u00bd\x00"
    seg, found, nuls = text.nul_words(s)
    monkeypatch.setattr(native, "tokens", None)
    ref = text.nul_words(s)
    assert seg.dtype == ref[0].dtype == np.int64
    assert (seg.tolist(), found, nuls) == (ref[0].tolist(), ref[1], ref[2]) == (
        [0, 2, 2, 4, 4], ["Bbc's", "news", "o'clock", "x_1", "\u00bd"], 5)


@pytest.mark.parametrize("seed", range(3))
def test_lcs_blocks_over_word_ids_equal_the_lcs_over_strings(seed, monkeypatch):
    rnd = random.Random(seed)
    vocab = ["a", "b", "é", "the", "news", "2009", "bbc's", "x" * 40, "\U0001f600"]
    pairs = [([rnd.choice(vocab) for _ in range(rnd.randint(0, 300))],
              [rnd.choice(vocab) for _ in range(rnd.randint(0, 300))]) for _ in range(60)]
    ids_a, ids_b = native.tokens.word_ids(["a", "b", "a"], ["c", "b"])
    assert (np.frombuffer(ids_a, np.int64).tolist(), np.frombuffer(ids_b, np.int64).tolist()) == (
        [0, 1, 0], [2, 1])
    compiled = [text.lcs_blocks(a, b) for a, b in pairs]
    monkeypatch.setattr(native, "tokens", None)
    assert compiled == [text.lcs_blocks(a, b) for a, b in pairs]
    assert sum(len(x) for x in compiled) > 100


def test_word_ids_reads_lists_that_a_words_hash_changes():
    """``word_ids`` hashes the words (a str subclass's ``__hash__`` is Python code, which may
    change the lists): it reads the lists as they were given, where it read freed items."""
    words = []

    class Shrinking(str):
        def __hash__(self):
            words.clear()
            return str.__hash__(self)

    words.extend([Shrinking("a")] + [str(k) for k in range(100)] + ["a"])
    ids_a, ids_b = native.tokens.word_ids(words, ["b", "a"])
    assert np.frombuffer(ids_a, np.int64).tolist() == list(range(101)) + [0]
    assert np.frombuffer(ids_b, np.int64).tolist() == [101, 0]


@pytest.mark.parametrize("seed", range(3))
def test_compiled_lcs_mask_is_rapidfuzzs_lcs(seed, monkeypatch):
    """``lcs_mask`` over word ids, compiled (``_tokens.c`` ``lcs_mask``: rapidfuzz's steps over
    the words both sides hold, densely numbered) against ``lcs_blocks`` (rapidfuzz's
    ``LCSseq.opcodes``): the same words of ``a`` aligned, also where several LCSs tie (small
    alphabets), across 64-word blocks, with common prefixes and suffixes, and empty sides."""
    rnd = random.Random(seed)
    cases = [([], []), ([0], []), ([], [0]), ([0, 1], [0, 1]), ([0, 1, 0], [0]), ([1, 0, 1], [1])]
    for _ in range(1500):
        na = rnd.choice([1, 2, 5, 20, 63, 64, 65, 127, 128, 129, 300])
        nb = rnd.choice([1, 2, 5, 20, 63, 64, 65, 130, 250])
        alpha = rnd.choice([1, 2, 3, 5, 10, 50])
        a = [rnd.randrange(alpha) for _ in range(na)]
        b = [rnd.randrange(alpha) for _ in range(nb)]
        if rnd.random() < 0.3:  # a common prefix and suffix
            affix = [rnd.randrange(alpha) for _ in range(rnd.randrange(1, 5))]
            a, b = affix + a + affix, affix + b + affix
        cases.append((a, b))
    ids = []
    for a, b in cases:  # numbered as nul_word_ids numbers them: first appearance, a first
        vocab: dict[int, int] = {}
        ids.append((np.array([vocab.setdefault(x, len(vocab)) for x in a], dtype=np.int64),
                    np.array([vocab.setdefault(x, len(vocab)) for x in b], dtype=np.int64)))
    compiled = [text.lcs_mask(a, b) for a, b in ids]
    assert native.tokens.lcs_mask(np.array([5], np.int64), np.array([0], np.int64)) is None  # id out of range
    monkeypatch.setattr(native, "tokens", None)
    for (a, b), got in zip(ids, compiled):
        want = text.lcs_mask(a, b)
        assert got.dtype == want.dtype == bool and got.tolist() == want.tolist(), (a.tolist(), b.tolist())
    assert sum(int(m.sum()) for m in compiled) > 10000


@pytest.mark.parametrize("seed", range(4))
def test_nul_word_ids_equal_the_ids_of_the_words(seed, monkeypatch):
    """The compiled ``text_ids`` gives the words' ids without making the words: the same ids
    (first appearance, text first) as numbering ``nul_words`` and ``words`` in Python, also
    when the two strings are stored with different widths (Latin-1 against UCS-2/UCS-4)."""
    rnd = random.Random(seed)
    alphabet = ["a", "b", "é", "'", "\u2019", " ", "\x00", "_", "7", "中", "\U0001f600x", "ab", "ba"]
    cases = []
    for _ in range(400):
        narrow = "".join(rnd.choice(alphabet[:8]) for _ in range(rnd.randint(0, 30)))  # Latin-1 only
        other = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        cases.append((narrow, other) if rnd.random() < 0.5 else (other, narrow))
    cases += [("", ""), ("a", ""), ("", "a"), ("\x00\x00", "a"), (" ".join(f"w{k}" for k in range(5000)),
                                                                 " ".join(f"w{k}" for k in range(4990, 6000)))]
    compiled = [text.nul_word_ids(a, b) for a, b in cases]
    monkeypatch.setattr(native, "tokens", None)
    for (a, b), got in zip(cases, compiled):
        want = text.nul_word_ids(a, b)
        assert got[2] == want[2]
        for g, w in zip(got[:2] + got[3:], want[:2] + want[3:]):
            assert g.dtype == w.dtype == np.int64 and g.tolist() == w.tolist()
        seg, found, _ = text.nul_words(a)
        words = found + text.words(b)
        ids = got[1].tolist() + got[3].tolist()
        assert all((words[i] == words[j]) == (ids[i] == ids[j]) for i in range(len(words))
                   for j in range(min(len(words), i + 5)))


@pytest.mark.parametrize("seed", range(3))
def test_compiled_lcs_mask_over_many_blocks_is_rapidfuzzs_lcs(seed, monkeypatch):
    """The compiled ``lcs_mask`` over pages of hundreds to thousands of words (many 64-word
    blocks) with a few words everywhere and most in one place, gold texts drawn from them in
    order with words dropped and added: the same words aligned as rapidfuzz's
    ``LCSseq.opcodes``."""
    rnd = random.Random(100 + seed)
    cases = []
    for _ in range(40):
        n = rnd.choice([65, 200, 700, 2000, 4000])
        common = rnd.randint(1, 8)
        a = [rnd.randrange(common) if rnd.random() < 0.3 else rnd.randrange(common, common + n)
             for _ in range(n)]
        lo = rnd.randrange(n)
        hi = min(n, lo + rnd.randint(1, n))
        b = [w if rnd.random() < 0.9 else rnd.randrange(2 * n) for w in a[lo:hi] if rnd.random() < 0.85]
        if rnd.random() < 0.3:
            b = b[::-1] if rnd.random() < 0.5 else b + a[:rnd.randrange(50)]
        cases.append((a, b))
    ids = []
    for a, b in cases:
        vocab: dict[int, int] = {}
        ids.append((np.array([vocab.setdefault(x, len(vocab)) for x in a], dtype=np.int64),
                    np.array([vocab.setdefault(x, len(vocab)) for x in b], dtype=np.int64)))
    compiled = [text.lcs_mask(a, b) for a, b in ids]
    monkeypatch.setattr(native, "tokens", None)
    for (a, b), got in zip(ids, compiled):
        assert got.tolist() == text.lcs_mask(a, b).tolist(), (len(a), len(b))
    assert sum(int(m.sum()) for m in compiled) > 10000


@pytest.mark.parametrize("seed", range(3))
def test_nul_word_ids_of_a_list_equal_those_of_the_joined_text(seed, monkeypatch):
    """A list of texts (``labels.word_alignment`` passes the walk's segments) is read by the
    compiled ``text_ids`` as if joined by NUL, without joining: the same ids, word indices and
    NUL count as the joined str, compiled and in Python, with texts of different widths in one
    list, empty texts, NULs inside a text, and an empty list; anything else in the list is a
    TypeError."""
    rnd = random.Random(seed)
    alphabet = ["a", "b", "é", "'", "\u2019", " ", "\x00", "_", "7", "中", "\U0001f600x", "ab", "ba"]
    cases = [([], "a b"), ([""], ""), (["", ""], "a"), (["a'", "b"], "a b"), (["'a", "b\x00c"], "c")]
    for _ in range(300):
        texts = ["".join(rnd.choice(alphabet[:rnd.choice([8, 13])]) for _ in range(rnd.randint(0, 12)))
                 for _ in range(rnd.randint(0, 8))]
        cases.append((texts, "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))))
    compiled = [(text.nul_word_ids(a, b), text.nul_word_ids("\x00".join(a), b)) for a, b in cases]
    monkeypatch.setattr(native, "tokens", None)
    for (a, b), (got, joined) in zip(cases, compiled):
        want = text.nul_word_ids(a, b)
        for one in (got, joined):
            assert one[2] == want[2], (a, b)
            assert [x.tolist() for x in one[:2] + one[3:]] == [x.tolist() for x in want[:2] + want[3:]], (a, b)
    monkeypatch.undo()
    with pytest.raises(TypeError):
        native.tokens.text_ids(["a", 3], "a")
    with pytest.raises(TypeError):
        native.tokens.text_ids(("a",), "a")


def test_labels_from_word_ids_equal_labels_from_words(monkeypatch):
    from hwnoise.features import labels
    from hwnoise.features.walk import walk_page

    page = ("<html><body><ul><li>Home</li><li>News’s</li></ul><p>Café BBC's report: the café opens"
            " in 2009.</p><p>Other café text</p><div>Home news</div></body></html>")
    gold = "BBC's report: the Café opens in 2009. Home news"
    walk = walk_page(page)
    by_ids = labels.aligned_words(walk, gold)
    monkeypatch.setattr(labels, "nul_word_ids", lambda t, o: (None, None, -1, None))  # the word path
    by_words = labels.aligned_words(walk, gold)
    assert [x.tolist() for x in by_ids] == [x.tolist() for x in by_words]
    assert by_ids[1].sum() > 0



@pytest.mark.parametrize("width", ["", "é", "中", "\U0001f600"])
def test_nul_word_ids_tell_apart_long_words_that_differ_late(width, monkeypatch):
    """Words of 1 to 40 characters that share all but their last character, or all but one in
    the middle, each repeated, in texts of each width, with thousands of distinct words (the
    table of words grows): the ids of the Python numbering. The compiled ``text_ids`` compares a
    word with a kept one 8 bytes a step, and only when their 64-bit hashes are equal: a compare
    that refuses equal words fails here (seen with its 8-byte test inverted); one that took
    unequal words for equal would show only on a collision of the hashes."""
    base = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    words = []
    for n in range(1, 41):
        stem = width + base[:n - 1] if width else base[:n]
        words += [stem[:-1] + c for c in "xyz"] + [stem[:k] + "_" + stem[k + 1:] for k in range(0, len(stem), 3)]
    words += [f"w{k}" for k in range(3000)]
    page = ["\u2019".join(words[k:k + 1]) + " " + " ".join(words[k + 1:k + 7]) for k in range(0, len(words), 7)]
    gold = " ".join(reversed(words[::2])) + " " + width
    compiled = text.nul_word_ids(page, gold)
    monkeypatch.setattr(native, "tokens", None)
    want = text.nul_word_ids(page, gold)
    assert compiled[2] == want[2]
    assert [x.tolist() for x in compiled[:2] + compiled[3:]] == [x.tolist() for x in want[:2] + want[3:]]
    assert len(set(compiled[1].tolist())) > 3000


def test_an_alignment_too_large_for_memory_is_refused_saying_so():
    """Two sides of 400,000 words that differ throughout (a 50 MB page against an extractor's
    text of it): the compiled LCS declines (its table would pass 1 GB) and rapidfuzz's bit matrix
    asked for 19 GiB, ending in ``MemoryError: std::bad_alloc`` after minutes on a real page. It is
    refused at once now, in words; sides that share a long prefix and suffix still align."""
    from hwnoise.text import lcs_mask

    a = np.arange(400_000, dtype=np.int64)
    with pytest.raises(MemoryError, match=r"aligning 400,000 words with 400,000 would take 19 GiB"):
        lcs_mask(a, a[::-1].copy())
    b = a.copy()
    b[200_000] = 400_001  # one word differs: the middles are one word each
    mask = lcs_mask(a, b)
    assert mask.sum() == 399_999 and not mask[200_000]
