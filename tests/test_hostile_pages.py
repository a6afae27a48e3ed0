"""Pages built to blow up parsing or the walk (issue 14): caps applied before libxml2 parses."""
from __future__ import annotations

import tracemalloc

from hwnoise.features import limits
from hwnoise.features.limits import MAX_ATTRIBUTES, MAX_TEXT_RUN, cap_text
from hwnoise.features.walk import parse_html, walk_page


def test_attributes_per_element_are_capped_before_parsing():
    attrs = " ".join(f'a{i}="v{i}"' for i in range(20_000))
    html = f"<html><body><div id=big {attrs}>inside</div><p>after the big element</p></body></html>"
    root, _ = parse_html(html)
    big = root.find(".//div")
    assert len(big.attrib) == MAX_ATTRIBUTES and big.get("id") == "big" and big.text == "inside"
    assert root.find(".//p").text == "after the big element"


def test_attributes_with_quoted_brackets_and_boolean_ones_are_capped_too():
    attrs = " ".join(f'b{i} c{i}="x>y"' for i in range(3000))
    capped = cap_text(f"<p {attrs}>t</p>")
    root, _ = parse_html(capped)
    assert len(root.find(".//p").attrib) == MAX_ATTRIBUTES and root.find(".//p").text == "t"


def test_ordinary_pages_are_left_alone():
    html = "<html><body>" + "<div class=a><p>some words <a href='/x'>link</a></p></div>" * 2000 + "</body></html>"
    assert cap_text(html) is html
    assert cap_text("plain text without tags") == "plain text without tags"


def test_a_giant_text_node_is_cut_and_bounded_in_memory(monkeypatch):
    root, _ = parse_html("<html><body><p>" + "word " * 300_000 + "</p><div>tail</div></body></html>")
    assert len(root.find(".//p").text) == MAX_TEXT_RUN and root.find(".//div").text == "tail"
    # the walk's memory follows the cap, not the node: a 1 MB node under a 50,000-character cap
    # (uncapped, the walk of this page peaks at about 23 MB under tracemalloc)
    monkeypatch.setattr(limits, "MAX_TEXT_RUN", 50_000)
    html = ("<html><body><p>" + "word " * 200_000 + "</p><div>tail</div></body></html>").encode()
    tracemalloc.start()
    try:
        walk_page(html, ["word"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * len(html)


def test_a_giant_attribute_value_and_an_oversized_page_are_cut():
    assert len(cap_text('<p title="' + "v" * 50 + '">x</p>', max_text_run=20)) < 40
    page = "<p>" + "<b>x</b>" * 100
    cut = cap_text(page, max_chars=40)
    assert 30 <= len(cut) <= 40 and cut.count("<") == cut.count(">")     # cut before a tag, not in one
    assert limits.MAX_PAGE_CHARS == 32 << 20


def test_attributes_whose_values_all_hold_both_brackets_are_capped():
    """Every value holds '<' and '>' (the gap the old gate left): still capped, and parsed."""
    attrs = " ".join(f'b{i}="<i>{i}</i>"' for i in range(3000))
    capped = cap_text(f"<p {attrs}>t</p><div>after</div>")
    assert capped.count("</i>\"") == MAX_ATTRIBUTES
    root, _ = parse_html(capped)
    assert len(root.find(".//p").attrib) == MAX_ATTRIBUTES and root.find(".//div").text == "after"


def test_tag_starts_without_end_are_scanned_once():
    """'<a' repeated: the old gate retried the rest of the page at each one (quadratic:
    20,000 of them took 43 s); each position is now read once. Such text is left as it is."""
    for page in ("<a" * 300_000, '<a x="' * 100_000 + "'"):
        assert cap_text(page) is page
    one_tag = "<a x=" * 200_000                  # one element, 199,999 attributes 'x=<a'
    assert cap_text(one_tag) == "<a" + " x=<a" * MAX_ATTRIBUTES + "="   # the last, bare "x=" kept its "="
    many = ("<a " + "x " * (MAX_ATTRIBUTES - 1) + ">") * 300        # at the cap: untouched
    assert cap_text(many) is many


def test_a_page_nested_too_deep_with_tag_starts_without_end_is_flattened_in_one_pass():
    """A page past libxml2's depth limit is flattened by a scan of its tags first; that scan took
    cubic time on '<a' repeated without '>' (400 of them 4 s, 2,000 minutes): each position is
    now looked at a bounded number of times, and the tags found are the same as before."""
    from hwnoise.features.walk import MAX_DEPTH, flatten_deep

    deep = "<div>" * (MAX_DEPTH + 100) + "<p>Oak chair, forty euros</p>"
    for tail in ("<a" * 100_000, '<a x="' * 30_000 + "'", "<a " * 30_000 + '"' + ">"):
        flat = flatten_deep(deep + tail)
        assert flat.endswith(tail) and flat.count("<div>") == MAX_DEPTH
        assert "Oak chair, forty euros" in walk_page((deep + tail).encode(), []).rows["text"].tolist()
    # the longest name that gives a tag, else a shorter one up to a quote in it (as before)
    assert flatten_deep('<div><a"b c"d>x<i>y</i>', 1) == "<div> x y "  # <a "b c" d>
    assert flatten_deep("<div><x=\"</a'>y", 1) == "<div><x=\"</a'>y"  # no tag: x="... and a' never close


def test_a_cut_attribute_value_keeps_its_closing_quote(monkeypatch):
    """A class value longer than the run cap was cut with its quote left open: the value ran on
    over the page's next tags, the rest of the page became attributes of the element (past the
    attribute cap, which had already run: a 1 MB class name before 131,000 class words parsed in
    45 s) and the text of both elements was lost. The cut closes the quote now."""
    monkeypatch.setattr(limits, "MAX_TEXT_RUN", 20_000)
    words = " ".join(f"k{i}" for i in range(3 * MAX_ATTRIBUTES))
    html = f"<html><body><div class='{'c' * 30_000}'>first</div><div class='{words}'>second</div></body></html>"
    root, _ = parse_html(html)
    assert max(len(el.attrib) for el in root.iter()) <= MAX_ATTRIBUTES
    texts = walk_page(html, []).rows["text"].tolist()
    assert "first" in texts and "second" in texts
    # a value holding the tag's '>' still runs on to its own quote, as it did before the cut
    cut = cap_text("<p title='" + "v" * 50 + ">x</p>'>y</p>", max_text_run=20)
    assert cut == "<p title='" + "v" * 11 + ">x</p>'>y</p>"


def test_style_sheets_are_read_on_the_tree_flattened_to_chromiums_depth(monkeypatch):
    """A page nested deeper than ``MAX_DEPTH`` (closed properly, so within libxml2's 2,048 levels)
    had its style sheets' selectors run on the deep tree first, then again once flattened: 30
    descendant selectors cost the cube of the depth (1,000 levels a minute, 2,000 more than four).
    The tree is flattened before its styles are read; what they hide is the same."""
    from hwnoise.features import css
    from hwnoise.features.walk import MAX_DEPTH

    depths = []
    run_xpaths = css._run_xpaths

    def deepest(root, xpaths, hidden):
        depths.append(max(sum(1 for _ in el.iterancestors()) for el in root.iter()))
        return run_xpaths(root, xpaths, hidden)

    monkeypatch.setattr(css, "_run_xpaths", deepest)
    deep = MAX_DEPTH + 300
    html = ("<html><head><style>div div span[title] { display: none }</style></head><body>"
            + "<div><div><span title=t>hidden words</span></div>" + "<div>" * deep + "<em>deep words</em>"
            + "</div>" * deep + "</div>"
            + "<p>after the divs</p></body></html>")
    texts = walk_page(html.encode(), []).rows["text"].tolist()
    assert depths and max(depths) <= MAX_DEPTH + 2          # html, body, then at most MAX_DEPTH levels
    assert "hidden words" not in " ".join(texts)
    assert "deep words" in " ".join(texts) and "after the divs" in texts
