"""Labels from gold text: LCS alignment, own words first, subtree for wrappers, empty is noise."""
from __future__ import annotations

import numpy as np

from hwnoise.features.labels import aligned_words, label_page
from hwnoise.features.walk import walk_page

PAGE = """<html><body>
<div id="nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></div>
<div id="main">
  <h1>Storm hits the coast</h1>
  <p>The storm reached the coast on Monday night.</p>
  <p>News of the damage spread <b>quickly</b> through the town.</p>
  <hr>
  <ul><li>Related: storm news</li><li>Weather news today</li></ul>
</div>
<div id="foot">Copyright news corp</div>
</body></html>"""
GOLD = ("Storm hits the coast\n\nThe storm reached the coast on Monday night. "
        "News of the damage spread quickly through the town.")


def labels_by_xpath(html, gold):
    walk = walk_page(html)
    return dict(zip(walk.rows["xpath"], label_page(walk, gold))), walk


def test_content_and_noise_from_gold():
    lab, _ = labels_by_xpath(PAGE, GOLD)
    main = "/html/body/div[2]"
    assert lab[f"{main}/h1[1]"] == "N"
    assert lab[f"{main}/p[1]"] == "N" and lab[f"{main}/p[2]"] == "N"
    assert lab[f"{main}/p[2]/b[1]"] == "N"
    assert lab["/html/body/div[1]/a[2]"] == "S"  # "News" in the menu: LCS takes the later one
    assert lab[f"{main}/ul[1]/li[1]"] == "S" and lab[f"{main}/ul[1]/li[2]"] == "S"
    assert lab["/html/body/div[3]"] == "S"
    assert lab[f"{main}/hr[1]"] == "S"  # no words in its subtree


def test_wrappers_without_own_words_follow_their_subtree():
    lab, _ = labels_by_xpath(PAGE, GOLD)
    assert lab["/html/body/div[2]"] == "N"  # 21 of its 27 words aligned
    assert lab["/html/body/div[1]"] == "S"  # the menu: none aligned
    assert lab["/html/body/div[2]/ul[1]"] == "S"
    # body: 21 of 33 words aligned
    assert lab["/html/body"] == "N"


def test_alignment_is_by_lcs_not_substring():
    # "news" appears in the menu before the gold's "News": a substring search would take both
    walk = walk_page(PAGE)
    own_words, own_aligned = aligned_words(walk, GOLD)
    assert own_aligned.sum() == len(GOLD.split())  # every gold word aligned exactly once
    menu_links = walk.rows.index[walk.rows["xpath"].str.startswith("/html/body/div[1]/a")]
    assert own_aligned[menu_links].sum() == 0


def test_half_of_own_words_is_enough():
    walk = walk_page("<body><p>alpha beta gamma delta</p><p>one two three</p></body>")
    lab = label_page(walk, "alpha beta xx one")
    assert lab.tolist() == ["S", "N", "S"]  # 2 of 4 aligned: N; 1 of 3: S; body 3 of 7: S


def test_no_gold_gives_none_and_empty_gold_gives_noise():
    walk = walk_page(PAGE)
    assert all(v is None for v in label_page(walk, None))
    assert set(label_page(walk, "")) == {"S"}


def test_labels_align_with_rows_and_hidden_text_is_not_a_word():
    html = "<body><p>visible words here</p><p style='display:none'>visible words here</p></body>"
    walk = walk_page(html)
    lab = label_page(walk, "visible words here")
    assert len(lab) == len(walk.rows) == 2
    assert lab.tolist() == ["N", "N"]
    assert isinstance(lab, np.ndarray)


def test_label_arrays_are_object_arrays_of_their_own():
    """``label_page`` returns a fresh object array of "S"/"N" each call: a caller that writes
    into one (``resolve_labels``, ``rows[LABEL] = ...``) changes no other page's labels."""
    walk = walk_page(PAGE)
    first = label_page(walk, GOLD)
    second = label_page(walk, GOLD)
    assert first.dtype == object and set(first.tolist()) == {"S", "N"}
    first[:] = None
    assert set(second.tolist()) == {"S", "N"}
    assert set(label_page(walk, GOLD).tolist()) == {"S", "N"}


def test_compiled_label_rule_equals_the_numpy_rule(monkeypatch):
    """``label_rule`` compiled (``features/_walk.c``: the words' counts and the half rule in one
    pass) equals ``half_rule`` of numpy's bincounts, its reference, on random trees and words
    (rows without words, wrappers, exact halves); what it cannot take goes to numpy; and a
    page's labels are the same either way."""
    import random

    import pytest

    from hwnoise.features import labels, native
    from hwnoise.features.measures import subtree_last

    ext = native.load("hwnoise.features._walk")
    if ext is None:
        pytest.skip("the compiled helpers were not built")
    monkeypatch.setattr(native, "ext", ext)
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(0, 80)
        parent = np.array([-1] + [rng.randrange(i) if rng.random() < 0.4 else i - 1 for i in range(1, n)],
                          dtype=np.int64)[:n]
        last = subtree_last(parent) if n else np.zeros(0, np.int64)
        m = rng.randint(0, 3 * n) if n else 0
        owner = np.array(sorted(rng.randrange(n) for _ in range(m)), dtype=np.int64)
        mask = np.array([rng.random() < rng.choice([0.1, 0.5, 0.9]) for _ in range(m)], dtype=bool)
        want = labels.half_rule(last, *labels._word_counts(owner, mask, n))
        out = np.empty(n, dtype=bool)
        assert ext.label_rule(owner, mask, last, out) is True
        assert out.tolist() == want.tolist()
        assert labels.label_rule(owner, mask, last, n).tolist() == want.tolist()
    out = np.empty(2, dtype=bool)
    last = np.array([1, 1], dtype=np.int64)
    assert ext.label_rule(np.array([2], dtype=np.int64), np.ones(1, bool), last, out) is False
    assert ext.label_rule(np.zeros(0, np.int64), np.zeros(0, bool), np.array([2, 1], dtype=np.int64), out) is False
    assert ext.label_rule(np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(1, np.int64), out) is False
    walk = walk_page(PAGE)
    got = label_page(walk, GOLD)
    monkeypatch.setattr(native, "ext", None)
    assert label_page(walk_page(PAGE), GOLD).tolist() == got.tolist()
