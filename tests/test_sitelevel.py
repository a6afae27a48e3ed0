"""SiteLevel (seed 000): hashes shared by p % of a site's pages, and the 85 % HTML rule."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import ExtractorError, walk_of
from hwnoise.extractors.registry import get_method
from hwnoise.extractors.sitelevel import make, template_by_share, template_stats
from hwnoise.features.elements import shown_elements

NAV = '<ul class="nav"><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul>'


def _page(i: int, extra: str = "") -> str:
    return (f"<html><head><title>Story {i}</title></head><body>{NAV}"
            f'<div class="story"><h1>Headline number {i} of the week</h1>'
            f"<p>Unique body text for story {i} about item {i * 7} and more words.</p>{extra}</div>"
            "<p class='foot'>Copyright The Site</p></body></html>")


def _dataset(root: Path, htmls: list[str]) -> list:
    ds = Dataset.create(root, name="site")
    for i, h in enumerate(htmls):
        ds.write_page(f"p{i:02d}", h.encode())
    return list(ds.pages())


def _labels_by_text(method, page) -> dict[str, str]:
    walk = walk_of(page)
    labels = method.node_labels(page, walk)
    return {t: lab for t, lab in zip(walk.rows["text"], labels) if t}


def test_a_hash_shared_by_ten_percent_of_the_pages_is_template(tmp_path):
    # 20 training pages: the promo line is on 2 of them (10 %), the rare line on 1 (5 %)
    htmls = []
    for i in range(20):
        extra = "<p>Promo: subscribe today</p>" if i in (3, 11) else ""
        extra += "<p>Rare aside seen once</p>" if i == 5 else ""
        htmls.append(_page(i, extra))
    test_html = _page(99, "<p>Promo: subscribe today</p><p>Rare aside seen once</p>")
    pages = _dataset(tmp_path / "ds", htmls + [test_html])
    train, test = pages[:20], pages[20]

    sl = make(p=0.10).fit(train)
    lab = _labels_by_text(sl, test)
    assert lab["Home"] == "S" and lab["Copyright The Site"] == "S"
    assert lab["Promo: subscribe today"] == "S"           # 2 of 20 pages = 10 %
    assert lab["Rare aside seen once"] == "N"             # 1 of 20 pages: below 10 %
    assert lab["Unique body text for story 99 about item 693 and more words."] == "N"

    # a higher p turns the promo back into content
    lab15 = _labels_by_text(make(p=0.15).fit(train), test)
    assert lab15["Promo: subscribe today"] == "N" and lab15["Home"] == "S"
    # the registry builds the same method by name
    assert get_method("sitelevel", p=0.1).name == "sitelevel"


def test_the_85_percent_rule_on_a_made_tree():
    # body(0) > div(1) > [ul(2) tmpl, p(3)] ; body > div(4) > [ul(5) tmpl, p(6)]
    parent = np.array([-1, 0, 1, 1, 0, 4, 4])
    # div 1: 100 bytes, 85 in its template ul -> template; div 4: 100 bytes, 84 in template
    html_len = np.array([230.0, 100, 85, 5, 100, 84, 6])
    tmpl = np.array([False, False, True, False, False, True, False])
    out = template_by_share(parent, html_len, tmpl, 0.85)
    assert out.tolist() == [False, True, True, False, False, True, False]
    # body: 100 (div 1, now template) + 84 (inside div 4) = 184 of 230 = 0.8 -> not template
    assert not out[0]
    out2 = template_by_share(parent, np.array([200.0, 100, 85, 5, 100, 84, 6]), tmpl, 0.85)
    # body now: (100 + 84) / 200 = 0.92 -> template through its template child div 1
    assert out2[0] and out2[1] and not out2[4]


def test_the_85_percent_rule_on_pages(tmp_path):
    # a box with a short unique caption and a long template menu: >= 85 % of its HTML is
    # template, so the box (and its caption) are template although the caption is unique
    menu = "<ul>" + "".join(f'<li><a href="/s{k}">Section number {k}</a></li>' for k in range(12)) + "</ul>"
    htmls = [f'<html><body><div class="box"><b>Box {i}</b>{menu}</div>'
             f"<div class='art'><p>Article {i} text words here and there.</p>{menu[:60]}</ul></div>"
             "</body></html>" for i in range(10)]
    pages = _dataset(tmp_path / "ds", htmls)
    sl = make().fit(pages[:8])
    page = pages[9]
    walk = walk_of(page)
    flags = sl.template_flags(page, walk)
    view = shown_elements(page.read_html(), None, len(walk.rows), walk.rows["tag"].tolist())
    assert view.aligned
    rows = walk.rows
    box = int(rows.index[rows["xpath"] == "/html/body/div[1]"][0])
    art = int(rows.index[rows["xpath"] == "/html/body/div[2]"][0])
    caption = int(rows.index[rows["text"] == "Box 9"][0])
    assert flags[box]                      # >= 85 % of its HTML lies in the template menu
    assert not flags[art]                  # the article's template share is far below 85 %
    assert not flags[caption]              # the caption's own hash is not template...
    assert sl.node_labels(page, walk)[caption] == "N"


def test_template_stats_count_training_nodes(tmp_path):
    pages = _dataset(tmp_path / "ds", [_page(i) for i in range(10)])
    st = template_stats(pages)
    assert st["pages"] == 10
    nodes = sum(len(walk_of(p).rows) for p in pages)
    assert st["nodes"] == nodes
    assert 0 < st["template_nodes"] < nodes
    assert st["share"] == pytest.approx(st["template_nodes"] / nodes)


def test_bad_options_and_unfitted_use_are_clear_errors(tmp_path):
    with pytest.raises(ExtractorError, match="p must be"):
        make(p=0)
    with pytest.raises(ExtractorError, match="unknown key"):
        make(key="colour")
    pages = _dataset(tmp_path / "ds", [_page(1)])
    with pytest.raises(ExtractorError, match="fit"):
        make().node_labels(pages[0], walk_of(pages[0]))


@pytest.mark.parametrize("key", ["subtree", "html"])
def test_other_hash_keys(tmp_path, key):
    pages = _dataset(tmp_path / "ds", [_page(i) for i in range(6)])
    sl = make(key=key).fit(pages[:5])
    lab = _labels_by_text(sl, pages[5])
    assert lab["Home"] == "S"
    assert lab["Unique body text for story 5 about item 35 and more words."] == "N"


def test_statistics_table_is_printed_per_dataset(tmp_path, capsys):
    from hwnoise.extractors.sitelevel import main

    _dataset(tmp_path / "a", [_page(i) for i in range(4)])
    assert main([str(tmp_path / "a"), "--p", "0.5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["dataset", "pages", "nodes", "template", "share"]
    name, pages, nodes, tmpl, share = out[1].split()
    assert name == "site" and pages == "4" and 0 < int(tmpl) < int(nodes)
    assert share == f"{100 * int(tmpl) / int(nodes):.2f}%"


@pytest.mark.datasets
@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "shared" / "datasets" / "big9").is_dir(),
                    reason="needs ../shared/datasets/big9")
def test_lxml_elements_line_up_with_the_walk_on_big9(tmp_path):
    from hwnoise.features.importers import import_dataset

    src = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "big9"
    folders = import_dataset("big9", src, tmp_path, progress=False)
    pages = [p for f in folders[::5] for p in list(Dataset(f).pages())[:2]]
    for page in pages:
        walk = walk_of(page)
        view = shown_elements(page.read_html(), page.http_charset, len(walk.rows),
                              walk.rows["tag"].tolist())
        assert view.aligned, page.html_path
        assert np.all(view.html_len >= walk.rows["chars"].to_numpy())  # markup holds the text
