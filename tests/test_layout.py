"""The content text laid out as lines and as Markdown (``hwnoise.extractors.layout``), read back by
a real CommonMark parser (markdown-it-py, with GitHub's tables) where it is installed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hwnoise.extractors.base import markdown_from_labels, text_from_labels
from hwnoise.features.walk import walk_page
from hwnoise.text import tokenize

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"

PAGE = (
    "<html><body><div class='menu'><a href='/'>Home</a> <a href='/n'>News</a></div>"
    "<h1>Oak chairs *new* [2024]</h1>"
    "<p>A <a href='/r'>report</a> in <b>bold</b>.<br>Its second line</p>"
    "<ul><li>one</li><li><p>two, first part</p><p>two, second part</p></li></ul>"
    "<ol><li>first</li><li>1. a number of the text</li></ol>"
    "<blockquote><p>quoted words</p></blockquote>"
    "<table><tr><th>Name</th><th>Price | VAT</th></tr><tr><td>Chair</td><td>$5 <b>net</b></td></tr></table>"
    "<p># not a heading</p><p>1. Finland</p><div>- no item &amp;amp; no entity &lt;b&gt;</div></body></html>")


def _all_content(walk, menu: bool = False) -> np.ndarray:
    tags = walk.column("tag")
    labels = np.array(["N"] * len(tags), dtype=object)
    if not menu:
        labels[[k for k in range(4)]] = "S"  # body's first div and its two links: the menu
        labels[0] = "N"
    return labels


def test_markdown_writes_each_block_as_what_it_is():
    walk = walk_page(PAGE)
    assert markdown_from_labels(walk, _all_content(walk)) == (
        "# Oak chairs \\*new\\* \\[2024\\]\n\n"
        "A report in bold .\\\nIts second line\n\n"
        "- one\n- two, first part\\\n  two, second part\n\n"
        "1. first\n1. 1\\. a number of the text\n\n"
        "> quoted words\n\n"
        "| Name | Price \\| VAT |\n| --- | --- |\n| Chair | $5 net |\n\n"
        "\\# not a heading\n\n1\\. Finland\n\n\\- no item \\&amp; no entity \\<b>")


def _commonmark():
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py (the test extra) is not installed")
    return markdown_it.MarkdownIt("commonmark").enable("table")


def _words_of_html(html: str) -> list[str]:
    import lxml.html

    return tokenize(" ".join(lxml.html.fromstring(f"<div>{html}</div>").itertext())) if html.strip() else []


def test_a_commonmark_parser_reads_the_blocks_and_the_words_back():
    md = _commonmark()
    walk = walk_page(PAGE)
    labels = _all_content(walk)
    tokens = [t.type for block in md.parse(markdown_from_labels(walk, labels)) for t in [block, *(block.children or [])]]
    assert tokens.count("heading_open") == 1 and tokens.count("hardbreak") == 2
    assert tokens.count("bullet_list_open") == 1 and tokens.count("ordered_list_open") == 1
    assert tokens.count("list_item_open") == 4 and tokens.count("blockquote_open") == 1
    assert tokens.count("th_open") == 2 and tokens.count("td_open") == 2
    # nothing of the page's own text was taken for syntax, nothing added to it
    assert _words_of_html(md.render(markdown_from_labels(walk, labels))) == tokenize(text_from_labels(walk, labels))


def test_any_choice_of_content_keeps_the_words():
    md = _commonmark()
    walk = walk_page(PAGE)
    rng = np.random.default_rng(3)
    for _ in range(60):
        labels = np.where(rng.random(len(walk.column("tag"))) < 0.6, "N", "S").astype(object)
        assert _words_of_html(md.render(markdown_from_labels(walk, labels))) == \
            tokenize(text_from_labels(walk, labels)), labels


@pytest.mark.datasets
@pytest.mark.skipif(not (SHARED / "readability").is_dir(), reason="../shared/datasets/readability is absent")
def test_real_pages_keep_their_words_in_markdown(tmp_path):
    # the gold's content of Mozilla Readability's test pages: CommonMark gives back every word
    from hwnoise.dataset import Dataset
    from hwnoise.extractors.base import walk_of
    from hwnoise.features.importers import import_dataset
    from hwnoise.features.labels import page_labels

    md = _commonmark()
    [folder] = import_dataset("readability", SHARED / "readability", tmp_path / "r", limit=40, progress=False)
    checked = 0
    for page in Dataset(folder).pages():
        walk = walk_of(page)
        labels = page_labels(walk, page.read_gold())
        text = text_from_labels(walk, labels)
        assert _words_of_html(md.render(markdown_from_labels(walk, labels))) == tokenize(text), page.id
        checked += bool(text)
    assert checked >= 30


ARTICLE = (
    "<html><head><title>Oak</title></head><body><div class='nav'><a href='/'>Home</a> <a href='/s'>Shop</a></div>"
    "<article><h1>How oak chairs are made</h1>"
    + "".join(f"<p>Step {k}: the joiner cuts the <a href='/o'>oak</a> and planes each leg by hand, "
              f"then fits the rails and glues the seat, as chairs were made a hundred years ago.</p>"
              for k in range(1, 6))
    + "<ul><li>Oak from the hills</li><li>Linseed oil</li></ul></article>"
    "<footer><a href='/t'>Terms</a></footer></body></html>").encode()


def test_extract_markdown_on_the_command_line(tmp_path, capsys):
    import io
    import json

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from hwnoise.cli import main
    from hwnoise.extractors.model import label_with_model, load_model

    page = tmp_path / "page.html"
    page.write_bytes(ARTICLE)
    want = markdown_from_labels(*label_with_model(load_model("general"), ARTICLE))
    assert want.startswith("# How oak chairs are made\n\nStep 1: the joiner cuts the oak and planes")
    assert main(["extract", "--markdown", str(page)]) == 0
    assert capsys.readouterr().out == want + "\n"
    assert main(["extract", "--markdown", "--jsonl", str(page)]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == want
    with open(tmp_path / "a.warc", "wb") as fh:
        w = WARCWriter(fh, gzip=False)
        w.write_record(w.create_warc_record("https://a.example/oak", "response", payload=io.BytesIO(ARTICLE),
                       http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")))
    assert main(["extract", "--markdown", "--warc", str(tmp_path / "a.warc")]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == want
    assert main(["extract", "--markdown", "--records", str(page)]) == 1
    assert capsys.readouterr().err.strip() == \
        "hwnoise: error: --markdown is for the content text; --records writes JSON lines of records"


def test_nearest_ancestor_by_jumping_is_the_walk_up_from_each_row():
    from hwnoise.extractors.layout import nearest

    def walk_up(row, tags, parent, wanted, stop):
        while row >= 0:
            if tags[row] in wanted:
                return row
            if tags[row] in stop:
                return -1
            row = parent[row]
        return -1

    rng = np.random.default_rng(11)
    names = ["div", "li", "ul", "table", "td", "span", "blockquote"]
    for n in (1, 2, 30, 400):
        parent = np.array([-1] + [int(rng.integers(0, k)) for k in range(1, n)], dtype=np.int64)
        tags = [names[int(k)] for k in rng.integers(0, len(names), n)]
        for wanted, stop in (({"li"}, set()), ({"td"}, {"table"}), ({"ul", "blockquote"}, {"span"})):
            assert nearest(tags, parent, wanted, stop).tolist() == \
                [walk_up(r, tags, parent, wanted, stop) for r in range(n)]


def test_a_list_in_a_list_item_is_nested_under_it():
    walk = walk_page("<html><body><ul><li>a<ul><li>under a</li><li>also<ol><li>deeper</li></ol></li></ul></li>"
                     "<li>b</li></ul></body></html>")
    labels = np.array(["N"] * len(walk.column("tag")), dtype=object)
    assert markdown_from_labels(walk, labels) == "- a\n  - under a\n  - also\n    1. deeper\n- b"
    md = _commonmark()
    depth, deepest = 0, 0
    for token in md.parse(markdown_from_labels(walk, labels)):
        depth += token.type.endswith("_list_open") - token.type.endswith("_list_close")
        deepest = max(deepest, depth)
    assert deepest == 3
