"""CETD's rules (Sun, Song & Liao 2011) on made trees and small made pages with known answers."""
from __future__ import annotations

import numpy as np
import pytest

from hwnoise.extractors.cetd import MARKED, PATH, UNMARKED, cetd_extract, cetd_labels, cetd_marks
from hwnoise.extractors.base import text_from_labels
from hwnoise.features.walk import walk_page
from hwnoise.text import text_scores


def test_rules_on_a_made_tree():
    #  0 body  ctd 10  ds 30
    #  1  div A ctd 20 ds 50   <- highest DensitySum: content; threshold min(20, 10) = 10
    #  2   p    ctd 30
    #  3   p    ctd 20
    #  4  div B ctd 12 ds 15   <- CTD >= 10: the max-DensitySum node of its subtree (5) is content
    #  5   ul   ctd 11 ds 20
    #  6    li  ctd 11
    #  7  div C ctd 5  ds 40   <- below the threshold: the recursion stops here...
    #  8   p    ctd 100        <- ...so even this dense node stays out
    parent = np.array([-1, 0, 1, 1, 0, 4, 5, 0, 7])
    ctd = np.array([10, 20, 30, 20, 12, 11, 11, 5, 100], dtype=float)
    ds = np.array([30, 50, 0, 0, 15, 20, 0, 40, 0], dtype=float)
    marks, threshold = cetd_marks(parent, ctd, ds)
    assert threshold == pytest.approx(10)
    assert marks.tolist() == [PATH, MARKED, MARKED, MARKED, PATH, MARKED, MARKED, UNMARKED, UNMARKED]


def test_threshold_is_the_lowest_ctd_on_the_path_to_body():
    # body > div(ctd 3) > section(ctd 50, ds max): threshold 3, not body's 8
    parent = np.array([-1, 0, 1, 2, 0])
    ctd = np.array([8, 3, 50, 60, 4], dtype=float)
    ds = np.array([7, 50, 60, 0, 0], dtype=float)
    marks, threshold = cetd_marks(parent, ctd, ds)
    assert threshold == pytest.approx(3)
    assert marks.tolist() == [PATH, PATH, MARKED, MARKED, MARKED]  # node 4: ctd 4 >= 3, itself


def test_ties_go_to_the_first_node_in_document_order():
    parent = np.array([-1, 0, 0])
    ctd = np.array([1, 5, 5], dtype=float)
    ds = np.array([0, 9, 9], dtype=float)
    marks, threshold = cetd_marks(parent, ctd, ds)
    # node 1 is the target; body is then visited and node 2 (ctd 5 >= 1) marks itself
    assert marks[1] == MARKED and threshold == pytest.approx(1)
    parent = np.array([-1, 0, 0])
    ctd = np.array([1, 5, 0.5], dtype=float)
    marks, _ = cetd_marks(parent, ctd, np.array([0, 9, 9], dtype=float))
    assert marks.tolist() == [PATH, MARKED, UNMARKED]  # the later tie, below the threshold, stays out


def test_the_li_example_of_seed_003():
    html = ("<html><body><ul><li class=\"medium-image\"><h3 class=\"feature-header\"><a class=\"story\">"
            "Model journalist</a></h3><p>How the BBC's Brian Hanrahan became a household name</p><hr>"
            "</li></ul></body></html>")
    walk = walk_page(html)
    assert walk.rows["tag"].tolist() == ["body", "ul", "li", "h3", "a", "p", "hr"]
    marks, threshold = cetd_marks(walk.rows["parent"].to_numpy(), walk.rows["ctd"].to_numpy(),
                                  walk.rows["density_sum"].to_numpy())
    # li holds the highest DensitySum (206.4798); the lowest CTD on li..body is body's 28.1723
    assert threshold == pytest.approx(28.1723, abs=1e-4)
    assert marks.tolist() == [PATH, PATH, MARKED, MARKED, MARKED, MARKED, MARKED]
    assert cetd_labels(walk).tolist() == ["S", "S", "N", "N", "N", "N", "N"]
    # laid out as innerText: the heading, then the paragraph after a blank line
    assert cetd_extract(html) == "Model journalist\n\nHow the BBC's Brian Hanrahan became a household name"


SENTENCES = [f"Sentence {i} of the story tells the reader what happened in the valley during the "
             "long winter." for i in range(12)]
ARTICLE = " ".join(SENTENCES)

PAGE = f"""<html><head><title>t</title><style>p {{color: red}}</style></head><body>
<div id="nav"><ul>{''.join(f'<li><a href="/s{i}">Section {i}</a></li>' for i in range(12))}</ul></div>
<div id="main"><h1>Winter in the valley</h1>
<p>{' '.join(SENTENCES[:4])}</p><p>{' '.join(SENTENCES[4:8])}</p><p>{' '.join(SENTENCES[8:])}</p></div>
<div id="side"><h3>Related</h3><ul>{''.join(f'<li><a href="/r{i}">Related story {i}</a></li>' for i in range(6))}</ul></div>
<div id="footer"><a href="/about">About</a> | <a href="/privacy">Privacy</a> | <a href="/contact">Contact</a></div>
<script>var x = "never shown";</script>
</body></html>"""


def test_a_news_like_page_keeps_the_article_and_drops_the_links():
    walk = walk_page(PAGE)
    labels = cetd_labels(walk)
    text = text_from_labels(walk, labels)
    assert cetd_extract(PAGE) == text
    assert "Winter in the valley" in text and "Sentence 11" in text
    for noise in ("Section 3", "Related story", "Privacy", "never shown"):
        assert noise not in text
    gold = "Winter in the valley\n" + ARTICLE
    assert text_scores(text, gold)["f1"] == 1.0
    tags = walk.rows["tag"].to_numpy()
    assert set(tags[labels == "N"]) <= {"div", "h1", "p"}


def test_an_empty_page_has_no_content():
    walk = walk_page("<html><body></body></html>")
    assert cetd_labels(walk).tolist() in (["S"], ["N"])
    assert cetd_extract("<html><body></body></html>") == ""
    assert cetd_extract(b"") == ""


def test_the_stacked_cetd_reads_the_models_walk_and_keeps_the_same_text(monkeypatch):
    """``run_extractor("cetd", html, walk=W)`` with W the model's walk (made with a query) gives
    the text of CETD on the bare page, without walking the page again."""
    from hwnoise.extractors import model as model_mod
    from hwnoise.features import walk as walk_mod
    from hwnoise.features.walk import walk_page

    html = ("<html><body><div class='nav'><a href='/'>Home</a> <a href='/a'>About</a> <a href='/b'>Blog</a>"
            "</div><div><h1>Oak chairs</h1><p>" + "A long paragraph about oak chairs and their seats. " * 12
            + "</p><p>" + "Another long paragraph on how the chairs are made by hand. " * 10
            + "</p></div><div class='foot'><a href='/c'>Contact</a></div></body></html>")
    bare = model_mod.run_extractor("cetd", html)
    assert "long paragraph" in bare and "Contact" not in bare
    walk = walk_page(html, ["oak", "chair"])
    model_mod._TEXT_CACHE.clear()
    calls = []
    real = walk_mod.walk_page
    monkeypatch.setattr(walk_mod, "walk_page", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert model_mod.run_extractor("cetd", html, walk=walk) == bare
    assert calls == []
