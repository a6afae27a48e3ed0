"""Content a page streams out of order (React's $RC / $RS, Marko's $af): placed where the page's
scripts put it."""
from __future__ import annotations

from lxml import etree

import pytest

from hwnoise.features import native, walk
from hwnoise.features.streamed import place_streamed
from hwnoise.features.walk import parse_html, walk_page
from script_fixtures import MARKO, STREAMED, words


ORDER = ("Shop home Sofas Two sofas Orndorff Sofa, two colours Kirkwood Sofa, in stock end of the list "
         "Static text after the list. Reviews: rated 4.5 of 5 Footer links")


def test_segments_go_where_the_scripts_put_them_and_unplaced_ones_stay_hidden():
    walk = walk_page(STREAMED)
    assert words(walk) == ORDER.split() and walk.streamed == 2 and walk_page("<p>x</p>").streamed == 0
    rows = walk.rows.set_index("xpath")
    assert rows.loc["/html/body/main[1]/ul[1]/li[2]", "text"] == "Kirkwood Sofa, in stock"
    assert rows.loc["/html/body/main[1]/section[1]", "text"] == "Reviews: rated 4.5 of 5"
    assert "template" not in set(walk.rows["tag"])  # the gaps are gone
    # the boundary's fallback (a skeleton without text) stays: its end is a comment the parser drops
    assert rows.loc["/html/body/main[1]/div[1]", "chars"] == 0


def test_place_streamed_counts_and_skips_calls_it_cannot_follow():
    root, _ = parse_html(STREAMED)
    assert place_streamed(root) == 2
    assert place_streamed(root) == 0  # done: the segments and gaps are gone
    broken = STREAMED.replace('<template id="P:1"></template>', "")  # a call whose gap is missing
    root, _ = parse_html(broken)
    assert place_streamed(root) == 1
    assert root.xpath('//div[@id="S:1"]/@hidden') == [""]  # left hidden, as a browser leaves it
    assert "Reviews" not in " ".join(words(walk_page(broken)))


def test_pages_without_streaming_are_left_alone():
    page = "<body><div hidden id='S:0'><p>x</p></div><template id='B:0'></template><p>$R is no call</p></body>"
    root, _ = parse_html(page)
    before = etree.tostring(root)
    assert place_streamed(root) == 0 and etree.tostring(root) == before
    assert words(walk_page(page)) == ["$R", "is", "no", "call"]


def test_texts_with_control_characters_are_moved_too():
    # libxml2 keeps a C0 control in a text, lxml refuses to be given one: moving such a text was
    # a ValueError out of walk_page; whitespace ones go as a space, the others as U+FFFD
    page = ('<body><p>a</p>\x01<template id="B:0"></template><div hidden id="S:0">seg\x02ment\x0cx</div>'
            '\x1btail<script>$RC("B:0","S:0")</script></body>')
    walk = walk_page(page)
    assert walk.streamed == 1 and walk.segments == [(1, "a"), (0, "\ufffdseg\ufffdment x\ufffdtail")]


MARKO_ORDER = ("Shop home Results for lamps Filter by material: Brass and paper only 3 results Brass desk "
               "lamp, 40 euros Paper floor lamp, 25 euros Glass table lamp, 60 euros Prices include taxes. "
               "Footer links")


def test_marko_fragments_go_where_the_scripts_put_them_in_the_order_they_wait_for():
    walk = walk_page(MARKO)
    assert words(walk) == MARKO_ORDER.split() and walk.streamed == 3
    rows = walk.rows.set_index("xpath")
    assert rows.loc["/html/body/main[1]/ul[1]/li[3]", "text"] == "Glass table lamp, 60 euros"
    assert rows.loc["/html/body/main[1]/aside[1]", "text"] == "Filter by material: and only"
    assert "Loading" not in MARKO_ORDER and "Never" not in MARKO_ORDER  # the skeleton went, 4 stays hidden


def test_marko_calls_it_cannot_follow():
    root, _ = parse_html(MARKO)
    assert place_streamed(root) == 3 and place_streamed(root) == 0
    # fragment 3 waits for 2, which never comes: 3 stays where it was, hidden
    root, _ = parse_html(MARKO.replace("<script>$afshop(2)</script>", ""))
    assert place_streamed(root) == 1
    assert root.xpath('//div[@id="afshop3"]/b/text()') == ["Brass", "paper"]
    # no placeholder: the browser's fragment takes the children and nobody attaches it
    page = ("<body><p>a</p><div id='af7' style='display:none'>gone <i>too</i></div>"
            "<script>$af(7)</script><p>b</p></body>")
    root, _ = parse_html(page)
    assert place_streamed(root) == 0 and root.xpath("//div[@id='af7']")[0].xpath("string()") == ""
    # a call whose fragment is missing places nothing; "$af(0, ...)" waits for nothing (0 is false)
    page = ("<body><span id='afph1'>x</span><div id='af1' style='display:none'>y</div>"
            "<script>$af(2); $af(1, 0)</script></body>")
    assert place_streamed(parse_html(page)[0]) == 1 and words(walk_page(page)) == ["y"]


SEGMENT_CASES = {
    "react": (STREAMED, True),
    "marko": (MARKO, True),
    "marko, runtime id, hidden attribute": ("<body><div hidden id='af_r12'>a</div></body>", True),
    "marko id shown": ("<body><div id='af1'>x</div></body>", False),
    "marko-like id, no digit at the end": ("<body><div id='after' style='display:none'>x</div></body>", False),
    "marko-like id, other characters": ("<body><div id='af-1' hidden>x</div><p hidden id='AF1'>y</p></body>", False),
    "no hidden": ("<body><div id='S:0'>x</div></body>", False),
    "hidden, other id": ("<body><div hidden id='s:0'>x</div><p hidden id='XS:1'>y</p></body>", False),
    "hidden on another element": ("<body><p hidden>a</p><div id='S:2'>b</div></body>", False),
    "any tag, id by an entity": ("<body><table><tr hidden id='S&#58;4'><td>c</td></tr></table></body>", True),
    "hidden by style too": ("<body><div hidden style='display:none' id='S:5'>d</div></body>", True),
    "dropped tag": ("<body><template hidden id='S:1'></template><p>e</p></body>", False),
    "empty": ("", False),
}


@pytest.mark.parametrize("name", sorted(SEGMENT_CASES))
def test_the_visit_notes_a_streamed_segment_compiled_and_in_python(name):
    """The visit (which reads every element's attributes anyway) says when it skipped a part
    React or Marko streamed; only then does the walk look for the calls that place it."""
    html, want = SEGMENT_CASES[name]
    root, _ = parse_html(html)
    py: list = []
    walk._visit_python(root, set(), seen=py)
    assert bool(py) is want
    if native.ext is not None:
        c: list = []
        walk._visit(root, set(), seen=c)
        assert bool(c) is want
