"""The text-level metric of seed 003 §4.1: the bit-parallel LCS against Figure 4.1's table."""
from __future__ import annotations

import random

import numpy as np
import pytest

from hwnoise.text import lcs_length, lcs_mask, mean_text_scores, standard_error, text_scores, tokenize


def lcs_table(x: list[str], y: list[str]) -> int:
    """LCS-LENGTH of Figure 4.1 (Cormen et al.): the O(mn) table c, returning c[m, n]."""
    m, n = len(x), len(y)
    c = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            if x[i - 1] == y[j - 1]:
                c[i][j] = c[i - 1][j - 1] + 1
            elif c[i - 1][j] >= c[i][j - 1]:
                c[i][j] = c[i - 1][j]
            else:
                c[i][j] = c[i][j - 1]
    return c[m][n]


def is_subsequence(sub: list[str], seq: list[str]) -> bool:
    it = iter(seq)
    return all(w in it for w in sub)


def random_words(rng: random.Random, n: int, vocab: int) -> list[str]:
    return [f"w{rng.randrange(vocab)}" for _ in range(n)]


def test_figure_4_1_example():
    # Cormen's example: X = ABCBDAB, Y = BDCABA, LCS length 4 (e.g. BCBA)
    x, y = list("ABCBDAB"), list("BDCABA")
    assert lcs_table(x, y) == 4
    assert lcs_length(x, y) == 4


@pytest.mark.parametrize("seed", range(12))
def test_bit_parallel_lcs_matches_the_table_on_random_cases(seed):
    rng = random.Random(seed)
    for _ in range(25):
        vocab = rng.choice([2, 3, 5, 20, 200])
        a = random_words(rng, rng.randrange(0, 90), vocab)
        b = random_words(rng, rng.randrange(0, 150), vocab)  # > 64 words: more than one machine word
        expected = lcs_table(a, b)
        assert lcs_length(a, b) == expected
        mask = lcs_mask(a, b)
        assert mask.dtype == bool and len(mask) == len(a)
        assert int(mask.sum()) == expected
        assert is_subsequence([w for w, keep in zip(a, mask) if keep], b)


def test_empty_sides():
    assert lcs_length([], ["a"]) == 0 and lcs_length(["a"], []) == 0
    assert lcs_mask([], ["a"]).shape == (0,)
    assert not lcs_mask(["a", "b"], []).any()
    assert text_scores("", "") == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert text_scores("some words", "") == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert text_scores("", "gold words") == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    # punctuation only is no word at all
    assert text_scores("-- | --", "")["f1"] == 1.0


def test_precision_recall_f1_over_words():
    gold = "The BBC's reporter filed the story"
    extracted = "Menu Home the BBC's reporter filed story Footer"
    a, b = tokenize(extracted), tokenize(gold)
    assert "bbc's" in a  # one word, as the tokeniser defines it
    common = lcs_table(a, b)  # the, bbc's, reporter, filed, story
    assert common == 5
    s = text_scores(extracted, gold)
    assert s["precision"] == pytest.approx(5 / 8)
    assert s["recall"] == pytest.approx(5 / 6)
    assert s["f1"] == pytest.approx(2 * (5 / 8) * (5 / 6) / (5 / 8 + 5 / 6))
    # order matters: the same words reversed share only one word in order
    assert text_scores("c b a", "a b c")["precision"] == pytest.approx(1 / 3)


def test_mean_scores_and_f1_of_means_differ():
    rows = [{"precision": 1.0, "recall": 0.2, "f1": 2 * 0.2 / 1.2},
            {"precision": 0.2, "recall": 1.0, "f1": 2 * 0.2 / 1.2}]
    m = mean_text_scores(rows)
    assert m["text_precision"] == pytest.approx(0.6) and m["text_recall"] == pytest.approx(0.6)
    assert m["text_f1"] == pytest.approx(1 / 3)
    assert m["text_f1_of_means"] == pytest.approx(0.6)
    assert m["text_f1_se"] == pytest.approx(0.0)  # both pages score 1/3
    assert mean_text_scores([]) == {}
    assert "text_f1_se" not in mean_text_scores(rows[:1])  # one page: no spread to tell


def test_standard_error_of_a_mean_over_pages():
    f1 = [0.2, 0.4, 0.9, 1.0]
    assert standard_error(f1) == pytest.approx(np.std(f1, ddof=1) / 2)
    assert standard_error([0.5]) is None and standard_error([]) is None
    rows = [{"precision": f, "recall": f, "f1": f} for f in f1]
    assert mean_text_scores(rows)["text_f1_se"] == pytest.approx(standard_error(f1))


def test_ten_thousand_by_ten_thousand_words():
    rng = np.random.default_rng(7)
    a = [f"w{i}" for i in rng.integers(0, 1000, size=10_000)]
    # b: a with 1,000 words deleted and 1,000 words that a never has inserted -> LCS is 9,000
    drop = set(rng.choice(10_000, size=1_000, replace=False).tolist())
    kept = [w for i, w in enumerate(a) if i not in drop]
    b = list(kept)
    for pos in sorted(rng.choice(len(b), size=1_000, replace=False).tolist(), reverse=True):
        b.insert(pos, "zzz-not-in-a")
    assert len(a) == len(b) == 10_000
    assert lcs_length(a, b) == 9_000
    s = text_scores(a, b)
    assert s["precision"] == pytest.approx(0.9) and s["recall"] == pytest.approx(0.9)
    assert int(lcs_mask(a, b).sum()) == 9_000
