"""Record-structure features (features/record_struct.py) on pages walked by the real walker, and
their feature group in the one assembly (features/assembly.py, training/spec.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hwnoise.features.assembly import assemble_html
from hwnoise.features.record_struct import RECORD_FEATURES, alike_groups, record_struct, tag_distance, tag_string
from hwnoise.features.walk import walk_page
from hwnoise.training.model import resolve_features as feature_groups
from hwnoise.training.spec import preset_spec, resolve_preset


def _record(i: int) -> str:
    extra = "<span class='badge'>new</span>" if i % 3 == 0 else ""  # records vary a little
    return (f"<div class='card'><h3><a href='/p/{i}'>Oak chair model {i}</a></h3>{extra}"
            f"<p>A sturdy chair with a woven seat, number {i}, in stock.</p>"
            f"<ul><li>oak</li><li>42 cm</li><li>{10 + i} EUR</li></ul></div>")


NAV = "".join(f"<li><a href='/c/{k}'>Cat {k}</a></li>" for k in range(5))
HTML = (f"<html><body><header><ul class='menu'>{NAV}</ul></header>"
        f"<main><h1>Chairs</h1><div class='results'>{''.join(_record(i) for i in range(6))}</div></main>"
        "<div class='side'><p>About us and our long story of the shop</p><table><tr><td>x</td></tr></table>"
        "<form><input name='q'><button>Go</button></form></div>"
        "<footer><p>Copyright 2024 the chair shop</p></footer></body></html>")


def _page():
    walk = walk_page(HTML)
    rows = pd.concat([walk.rows, record_struct(walk)], axis=1)
    return walk, rows


def test_columns_one_row_each_and_finite():
    walk, rows = _page()
    cols = record_struct(walk)
    assert list(cols.columns) == RECORD_FEATURES and len(cols) == len(walk)
    assert np.isfinite(cols.to_numpy()).all()


def test_records_and_region_of_a_listing():
    _, rows = _page()
    cards = rows.index[rows["xpath"].str.match(r".*/div\[\d+\]$") & (rows["tag"] == "div")
                       & rows["xpath"].str.contains("main")].tolist()
    cards = [i for i in cards if rows.loc[rows.loc[i, "parent"], "tag"] == "div"]
    assert len(cards) == 6
    assert (rows.loc[cards, "rs_alike"] == 6).all() and (rows.loc[cards, "rs_is_record"] == 1).all()
    assert (rows.loc[cards, "rs_main_depth"] == 0).all() and (rows.loc[cards, "rs_main_pos"] == 0).all()
    # the cards are alike though two carry a badge the others lack
    assert (rows.loc[cards, "rs_alike_dist"] <= 0.5).all()
    region = int(rows.loc[cards[0], "parent"])
    assert rows.loc[region, "rs_is_region"] == 1 and rows.loc[region, "rs_in_record"] == 0
    assert rows.loc[region, "rs_region_cover"] == 1.0  # the cards hold all of its text
    # everything inside a card: in the page's biggest region, one or two levels below the card
    first, end = cards[0], cards[1]
    inside = range(first + 1, end)
    assert all(rows.loc[i, "rs_in_record"] == 1 and rows.loc[i, "rs_main_rel"] == 1 for i in inside)
    assert sorted({rows.loc[i, "rs_main_depth"] for i in inside}) == [1.0, 2.0]
    assert all(0 < rows.loc[i, "rs_main_pos"] < 1 for i in inside)
    # the list items inside a card: their nearest record is the item, their main one the card
    li = [i for i in inside if rows.loc[i, "tag"] == "li"]
    assert len(li) == 3
    assert all(rows.loc[i, "rs_near_depth"] == 0 and rows.loc[i, "rs_main_depth"] == 2 for i in li)
    assert all(rows.loc[i, "rs_near_share"] < rows.loc[i, "rs_main_share"] for i in li)


def test_menu_is_a_smaller_link_region_and_the_rest_is_outside():
    _, rows = _page()
    menu = rows.index[rows["xpath"].str.contains("header") & (rows["tag"] == "li")].tolist()
    assert len(menu) == 5 and (rows.loc[menu, "rs_is_record"] == 1).all()
    assert (rows.loc[menu, "rs_main_rel"] < 0.5).all() and (rows.loc[menu, "rs_main_ld"] == 1).all()
    card_ld = rows.loc[rows["tag"] == "h3", "rs_main_ld"].iloc[0]
    assert 0 < card_ld < 0.5
    lone = rows.index[rows["tag"].isin(["table", "form", "footer"])].tolist()
    assert len(lone) == 3
    assert (rows.loc[lone, "rs_in_record"] == 0).all() and (rows.loc[lone, "rs_main_depth"] == -1).all()
    assert (rows.loc[lone, "rs_alike"] == 1).all() and (rows.loc[lone, "rs_alike_dist"] == 1).all()


def test_unlike_siblings_are_no_records():
    html = ("<html><body><div>" + "<section><h2>A title</h2><p>text</p></section>"
            "<section><table><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table></section>"
            "<section><form><input><input><select><option>a</option></select></form></section>"
            "</div></body></html>")
    walk = walk_page(html)
    rows = pd.concat([walk.rows, record_struct(walk)], axis=1)
    sec = rows.index[rows["tag"] == "section"]
    assert len(sec) == 3
    assert (rows.loc[sec, "rs_alike"] == 3).all()  # three of one tag ...
    assert (rows.loc[sec, "rs_is_record"] == 0).all()  # ... but not alike
    assert (rows.loc[sec, "rs_alike_dist"] > 0.5).all()


def test_alike_groups_distances():
    walk = walk_page("<html><body><ul><li><b>a</b></li><li><b>b</b></li><li><b>c</b><i>d</i></li>"
                     "</ul><p>x</p></body></html>")
    parent = np.asarray(walk.column("parent"))
    gid, dist = alike_groups(parent, list(walk.column("tag")), np.asarray(walk.last))
    tags = list(walk.column("tag"))
    li = [i for i, t in enumerate(tags) if t == "li"]
    assert len({int(gid[i]) for i in li}) == 1
    assert np.isnan(dist[li[0]]) and dist[li[1]] == 0.0
    assert np.isclose(dist[li[2]], 1 / 2.5)  # one tag more, mean length 2.5
    assert gid[tags.index("p")] != gid[li[0]]


def test_feature_group_in_the_assembly_and_the_spec():
    feats = feature_groups("page+records")
    assert set(RECORD_FEATURES) <= set(feats) and "link_density" in feats
    assert feature_groups("page") == [f for f in feats if not f.startswith("rs_")]
    spec = resolve_preset(preset_spec("general"), 5, {"features": "page+records"})
    assert set(RECORD_FEATURES) <= set(spec.columns())
    got = assemble_html(HTML, ["chars", "rs_main_rel", "rs_is_record"])
    assert got.missing == []
    walk = walk_page(HTML)
    want = record_struct(walk)
    assert np.array_equal(got.rows["rs_main_rel"].to_numpy(), want["rs_main_rel"].to_numpy())


def test_rows_that_do_not_line_up_get_missing_values():
    from hwnoise.features.assembly import assemble

    walk = walk_page(HTML)
    rows = walk.rows.iloc[:5]  # five rows of a longer walk, no walk_node to place them
    got = assemble(rows, walk, None, ["chars", "rs_alike"])
    assert got.rows["rs_alike"].isna().all()


def test_a_page_of_body_only():
    walk = walk_page("<html><body></body></html>")
    cols = record_struct(walk)
    assert len(cols) == len(walk) and (cols["rs_in_record"] == 0).all()


def test_tag_string_and_distance_are_mdrs():
    """One character per tag, the same character for the same tag across calls that share a
    code; the edit distance over the mean length (MDR's normalised distance)."""
    code: dict[str, str] = {}
    a = tag_string(["li", "a", "span"], code)
    b = tag_string(["li", "a"], code)
    assert len(a) == 3 and b == a[:2]
    assert tag_distance(a, b) == 1 / 2.5      # one insertion over a mean length of 2.5
    assert tag_distance(a, a) == 0.0 and tag_distance("", "") == 0.0
    assert tag_distance(a, tag_string(["tr", "td"], code)) == 3 / 2.5


def test_two_giant_lists_side_by_side_are_not_compared_tag_by_tag(monkeypatch):
    """Two big same-tag siblings of unlike shape (two result lists side by side) had their whole
    tag strings compared by edit distance, in the product of their lengths (200,000 results a
    side: 25 s in record_struct, 73 s in MDR); past ``MAX_COMPARED`` tags they are unlike without
    it, and the work stays in proportion to the page (counted here as the lengths compared)."""
    from hwnoise.extractors.mdr import mdr_records
    from hwnoise.features import record_struct as rs

    work, levenshtein = [], rs.Levenshtein

    class Counting:
        @staticmethod
        def distance(a, b, **kw):
            work.append(len(a) * len(b))
            return levenshtein.distance(a, b, **kw)

    n = rs.MAX_COMPARED  # items a side: each side's tag string is 2 or 3 times longer
    html = ("<html><body><div><div>" + "<p><b>x</b> a</p>" * n + "</div><div>"
            + "<p><i>y</i><i>z</i></p>" * n + "</div></div></body></html>")
    walk = walk_page(html.encode())
    monkeypatch.setattr(rs, "Levenshtein", Counting)
    cols = record_struct(walk)
    mdr = mdr_records(walk)
    monkeypatch.undo()
    rows = len(walk.rows)
    assert sum(work) < 2_000 * rows  # MDR compares up to 10 items to 10 (5e7); was 1.25e9, the product
    sides = walk.rows.index[walk.rows["xpath"].isin(["/html/body/div[1]/div[1]", "/html/body/div[1]/div[2]"])]
    assert (cols.loc[sides, "rs_alike_dist"] == 1.0).all()     # unlike, as the edit distance said
    assert len(mdr) == 2 * n                                   # each list's items, as before
