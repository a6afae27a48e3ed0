"""Webstemmer (seed 001): layout blocks, the weighted MCS similarity, DiffScore, and the
TITLE/MAIN extraction of a page matched to its layout pattern."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import pytest

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import ExtractorError, walk_of
from hwnoise.extractors.webstemmer import (MAIN, SUB, TITLE, Block, diff_score, letters, make,
                                           mcs_align, page_blocks, similarity)
from hwnoise.features.walk import walk_page


def test_weight_counts_letters_only():
    assert letters("Hi, there! 42 — ok?") == "Hithere42ok"
    assert Block("p", "日本語、です。").weight == 5     # kanji and kana count, punctuation does not


def test_similarity_of_block_sequences_with_a_known_value():
    a = [Block("h1", "abc"), Block("p", "abcde"), Block("td", "ab")]
    b = [Block("h1", "xyz"), Block("td", "wxyz"), Block("li", "abcdef")]
    # MCS of the keys: h1, td -> (3 + 3) + (2 + 4) = 12 of (3 + 5 + 2) + (3 + 4 + 6) = 23
    assert similarity(a, b) == pytest.approx(12 / 23)
    assert similarity(a, a) == pytest.approx(1.0)
    assert similarity(a, [Block("ul", "abc")]) == 0.0
    # the weighted MCS prefers the heavy match over the longer light one
    c = [Block("x", "a"), Block("y", "a"), Block("z", "abcdefghij")]
    d = [Block("z", "abcdefghij"), Block("x", "a"), Block("y", "a")]
    assert similarity(c, d) == pytest.approx(20 / 24)
    assert mcs_align(c, d) == {2: 0}


def test_diffscore():
    assert diff_score(["Same text", "Same text", "Same text"]) == 0.0
    assert diff_score(["abcd", "wxyz"]) == 1.0
    assert diff_score(["abcd", "abxy"]) == pytest.approx((8 - 4) / 8)
    assert diff_score(["only one"]) == 0.0


def test_layout_blocks_cut_at_block_elements_and_merge_paragraph_runs():
    html = ('<html><head><title>T</title></head><body><div class="nav"><a href="/">Home</a> | '
            '<a href="/n">News</a></div><div id="art"><h2>Head</h2><p>One <b>bold</b> word.</p>'
            "<p>Two.</p><p>Three.</p></div></body></html>")
    walk = walk_page(html)
    blocks = page_blocks(walk, title="T")
    assert [b.key for b in blocks] == ["title", "body/div", "body/div/h2", "body/div/p"]
    assert blocks[1].text == "Home | News"
    assert blocks[3].text == "One bold word.\nTwo.\nThree."     # three <p> in a row: one block
    unmerged = page_blocks(walk, merge=False)
    assert [b.text for b in unmerged][-3:] == ["One bold word.", "Two.", "Three."]


NAV = '<div class="nav"><a href="/">Home</a> <a href="/world">World news</a> <a href="/sport">Sport</a></div>'
FOOT = '<div class="foot">Copyright 2024 The Daily Example, all rights reserved</div>'


def _words(rng, n: int) -> list[str]:
    return ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(rng.integers(3, 9))))
            for _ in range(n)]


def _story(i: int, foot: bool = True) -> str:
    rng = np.random.default_rng(i)            # each story its own words: its text changes
    title = " ".join(_words(rng, 5)).capitalize()
    paras = [title + " " + " ".join(_words(rng, 30))] + [" ".join(_words(rng, 30)) for _ in range(3)]
    body = "".join(f"<p>{p}.</p>" for p in paras)
    return (f"<html><head><title>{title} - Daily Example</title></head><body>{NAV}"
            f'<div class="main"><h1 class="headline">{title}</h1><div class="body">{body}</div></div>'
            f"{FOOT if foot else ''}</body></html>")


def _pages(root: Path, htmls: list[str]) -> list:
    ds = Dataset.create(root, name="site")
    for i, h in enumerate(htmls):
        ds.write_page(f"p{i:02d}", h.encode())
    return list(ds.pages())


def test_pattern_title_main_and_extraction(tmp_path):
    pages = _pages(tmp_path / "ds", [_story(i) for i in range(7)] + [_story(40), _story(41, foot=False)])
    ws = make().fit(pages[:7])
    assert len(ws.patterns_) == 1 and len(ws.patterns_[0].pages) == 7
    pat = ws.patterns_[0]
    kinds = dict(zip((b.key for b in pat.blocks), pat.kinds))
    assert kinds["body/div:class=main/h1:class=headline"] == TITLE
    assert kinds["div:class=main/div:class=body/p"] == MAIN
    assert kinds["body/div:class=nav"] is None               # static: DiffScore 0
    assert kinds["body/div:class=foot"] is None
    assert pat.diff[0] > 0.5 and pat.diff[1] == 0.0
    assert kinds["title"] == SUB                              # changes, but is not the title block

    page = pages[7]
    out = ws.extract_blocks(page)
    assert [k for k, _, _ in out] == [SUB, TITLE, MAIN]
    text = ws.extract(page)
    walk = walk_of(page)
    h1 = walk.rows["text"][walk.rows["tag"] == "h1"].iloc[0]
    last_p = walk.rows["text"][walk.rows["tag"] == "p"].iloc[-1]
    assert text.startswith(h1 + "\n") and text.endswith(last_p)
    assert "World news" not in text and "Copyright" not in text
    labels = ws.node_labels(page, walk)
    content = set(walk.rows["tag"][labels == "N"])
    assert content == {"h1", "p"}


def test_strict_mode_disqualifies_a_pattern_with_a_missing_block(tmp_path):
    pages = _pages(tmp_path / "ds", [_story(i) for i in range(7)] + [_story(41, foot=False)])
    page = pages[7]                                           # no footer block
    assert "Daily Example" not in make().fit(pages[:7]).extract(page)
    assert len(make().fit(pages[:7]).extract(page)) > 500
    strict = make(strict=True).fit(pages[:7])
    assert strict.extract(page) == ""
    assert set(strict.node_labels(page, walk_of(page))) == {"S"}


def test_a_different_layout_forms_its_own_cluster(tmp_path):
    other = ('<html><body><table><tr><td class="menu">Index of sections and links</td></tr>'
             '<tr><td class="list">Listing page {i} with many entries of the archive</td></tr></table>'
             "</body></html>")
    htmls = [_story(i) for i in range(5)] + [other.format(i=i) for i in range(3)]
    ws = make().fit(_pages(tmp_path / "ds", htmls))
    assert sorted(len(c) for c in ws.clusters_) == [3, 5]
    assert ws.similarity_[0, 5] < 0.97 < ws.similarity_[0, 1]


def test_unfitted_is_a_clear_error(tmp_path):
    pages = _pages(tmp_path / "ds", [_story(1)])
    with pytest.raises(ExtractorError, match="fit"):
        make().extract(pages[0])
