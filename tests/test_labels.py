"""Labels from gold text: LCS alignment, own words first, subtree for wrappers, empty is noise."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hwnoise.features.labels import aligned_words, label_page
from hwnoise.features.walk import walk_page

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"

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


def _random_rows(rng, n_max=80):
    """A random tree's ``last`` and words (their owners in document order, aligned or not)."""
    from hwnoise.features.measures import subtree_last

    n = rng.randint(0, n_max)
    parent = np.array([-1] + [rng.randrange(i) if rng.random() < 0.4 else i - 1 for i in range(1, n)],
                      dtype=np.int64)[:n]
    last = subtree_last(parent) if n else np.zeros(0, np.int64)
    m = rng.randint(0, 3 * n) if n else 0
    owner = np.array(sorted(rng.randrange(n) for _ in range(m)), dtype=np.int64)
    mask = np.array([rng.random() < rng.choice([0.1, 0.5, 0.9]) for _ in range(m)], dtype=bool)
    return owner, mask, last, n


def test_compiled_label_rule_equals_the_numpy_rule(monkeypatch):
    """``label_rule`` compiled (``features/_walk.c``: the words' counts and the half rule in one
    pass) equals ``half_rule`` of numpy's bincounts, its reference, on random trees and words
    (rows without words, wrappers, exact halves); what it cannot take goes to numpy; and a
    page's labels are the same either way."""
    import random

    from hwnoise.features import labels, native

    ext = native.load("hwnoise.features._walk")
    if ext is None:
        pytest.skip("the compiled helpers were not built")
    monkeypatch.setattr(native, "ext", ext)
    rng = random.Random(3)
    for _ in range(300):
        owner, mask, last, n = _random_rows(rng)
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


def test_label_bytes_compiled_equal_the_numpy_rule(monkeypatch):
    """``label_bytes`` (the label column's "S"/"N" bytes, written by the compiled ``label_rule``
    given the two byte values) equals ``half_rule``'s booleans as those bytes, its reference, on
    random trees and words; out-of-range input goes to numpy; without the compiled part the
    numpy code gives the same."""
    import random

    from hwnoise.features import labels, native

    ext = native.load("hwnoise.features._walk")
    if ext is None:
        pytest.skip("the compiled helpers were not built")
    rng = random.Random(5)
    for _ in range(300):
        owner, mask, last, n = _random_rows(rng)
        want = "".join("N" if c else "S" for c in labels.half_rule(last, *labels._word_counts(owner, mask, n)))
        out = bytearray(b"?" * n)
        assert ext.label_rule(owner, mask, last, out, ord("S"), ord("N")) is True
        assert out.decode() == want
        monkeypatch.setattr(native, "ext", ext)
        assert labels.label_bytes(owner, mask, last, n).decode() == want
        monkeypatch.setattr(native, "ext", None)
        assert labels.label_bytes(owner, mask, last, n).decode() == want
    monkeypatch.setattr(native, "ext", ext)
    last = np.array([1, 1], dtype=np.int64)
    assert ext.label_rule(np.array([2], dtype=np.int64), np.ones(1, bool), last, bytearray(2), 83, 78) is False
    owner = np.array([2], dtype=np.int64)  # out of range: the compiled part declines, numpy decides
    want = labels.half_rule(last, *labels._word_counts(owner, np.ones(1, bool), 2))
    assert labels.label_bytes(owner, np.ones(1, bool), last, 2).decode() == "".join("N" if c else "S" for c in want)


def _same_label_column(walk, gold, **kw):
    """``page_label_column`` gives ``page_labels``' labels (numpy's: no compiled part) and their
    counts."""
    from hwnoise.features import native
    from hwnoise.features.labels import page_label_column, page_labels

    ext, native.ext = native.ext, None
    try:
        want = page_labels(walk, gold, **kw).tolist()
    finally:
        native.ext = ext
    column, labelled, content = page_label_column(walk, gold, **kw)
    assert column.tolist() == want
    assert (labelled, content) == (sum(v is not None for v in want), want.count("N"))
    return column


def test_page_label_column_equals_page_labels(monkeypatch):
    """The features stage's label column (``page_label_column``): "S"/"N" bytes for a page with
    gold text alone, ``page_labels``' object array otherwise (no gold, stored labels, records),
    the same labels and counts either way, with the compiled part and without."""
    import pandas as pd

    from hwnoise.features import native
    from hwnoise.features.measures import Utf8Column

    ext = native.ext
    for compiled in (ext, None):
        monkeypatch.setattr(native, "ext", compiled)
        walk = walk_page(PAGE)
        assert isinstance(_same_label_column(walk, GOLD), Utf8Column)
        for gold in ("", "nothing of the page", GOLD.upper(), "storm " * 40):
            assert isinstance(_same_label_column(walk_page(PAGE), gold), Utf8Column)
        assert isinstance(_same_label_column(walk_page("<html><body></body></html>"), GOLD), Utf8Column)
        assert not isinstance(_same_label_column(walk, None), Utf8Column)
        rows = walk.rows
        stored = pd.DataFrame({"node": [0, 2], "xpath": [rows["xpath"].iloc[0], rows["xpath"].iloc[2]],
                               "label": ["N", "S"], "set_by": ["person", "auto"]})
        assert not isinstance(_same_label_column(walk, GOLD, stored=stored), Utf8Column)
        assert not isinstance(_same_label_column(walk, None, stored=stored), Utf8Column)
        html = PAGE.encode()
        column = _same_label_column(walk, GOLD, html=html, records=[["/html/body/div[2]"]])
        assert not isinstance(column, Utf8Column)
        assert isinstance(_same_label_column(walk, GOLD, html=None, records=[["/html/body/div[2]"]]),
                          Utf8Column)  # records without the page's bytes: page_labels' gold text


@pytest.mark.datasets
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets not present")
def test_page_label_column_equals_page_labels_on_big9(monkeypatch):
    """Every 3rd page of big9 with its gold: the label column of ``page_label_column``, with the
    compiled part and with numpy alone, equals numpy's ``page_labels``."""
    from hwnoise.features import native

    pages = sorted((DATASETS / "big9").glob("*/html/*"))[::3]
    assert len(pages) > 20
    ext = native.ext
    for p in pages:
        gold_path = p.parent.parent / "gold" / (p.stem + ".txt")
        if not gold_path.exists():
            continue
        gold = gold_path.read_text(encoding="utf-8", errors="replace")
        data = p.read_bytes()
        for compiled in (ext, None):
            monkeypatch.setattr(native, "ext", compiled)
            _same_label_column(walk_page(data), gold)
