"""Context features (features/context.py): record structure, position, per-page z-scores and
class/id tokens, on pages walked by the real walker and re-parsed by lxml."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hwnoise.features.context import CONTEXT_FEATURES, add_context_features, context_columns
from hwnoise.features.walk import walk_page

RECORDS = "".join(f"<li class='item item-{i}'><a href='/p/{i}'>Product {i}</a>"
                  f"<p>A sturdy oak chair number {i} with a woven seat and long legs.</p></li>"
                  for i in range(5))
HTML = ("<html><body><div id='top-nav' class='nav'><a href='/'>Home</a> <a href='/x'>Shop</a></div>"
        f"<div class='content'><h1>Chairs</h1><ul class='results'>{RECORDS}</ul></div>"
        "<p class='promo'>Subscribe to our letter</p>"
        "<footer><p>Copyright 2024 the chair shop</p></footer></body></html>")


def _page():
    walk = walk_page(HTML)
    rows = add_context_features(walk.rows, HTML)
    return walk, rows


def test_columns_are_documented_and_rows_kept():
    walk, rows = _page()
    assert len(rows) == len(walk.rows)
    assert list(rows.columns[: len(walk.rows.columns)]) == list(walk.rows.columns)
    assert all(c in rows.columns for c in CONTEXT_FEATURES)
    # added twice: replaced, not duplicated
    again = add_context_features(rows, HTML)
    assert list(again.columns) == list(rows.columns)


def test_record_structure():
    walk, rows = _page()
    tags = rows["tag"].tolist()
    li = [i for i, t in enumerate(tags) if t == "li"]
    assert len(li) == 5
    # five siblings share li + class tokens (digits dropped: item-3 -> item)
    assert (rows.loc[li, "ctx_sig_siblings"] == 5).all()
    assert (rows.loc[li, "ctx_in_record"] == 1).all() and (rows.loc[li, "ctx_record_depth"] == 0).all()
    # the records hold all of the list's characters
    assert np.allclose(rows.loc[li, "ctx_sig_share"].sum() / 5, 1.0)
    inside = [i for i in range(len(tags)) if tags[i] in ("a", "p") and rows.loc[i, "parent"] in li]
    assert inside and (rows.loc[inside, "ctx_record_depth"] == 1).all()
    # the nav, its links and the footer are not in a record (two links are too few)
    nav = tags.index("div")
    assert rows.loc[nav, "ctx_in_record"] == 0 and rows.loc[nav, "ctx_record_depth"] == -1
    share = rows.loc[li[0], "ctx_record_page_share"]
    assert 0.5 < share < 1.0


def test_class_tokens_position_and_tags():
    walk, rows = _page()
    tags = rows["tag"].tolist()
    nav = tags.index("div")
    assert rows.loc[nav, "ctx_cls_noise"] == 1 and rows.loc[nav, "ctx_cls_content"] == 0
    link = nav + 1
    assert rows.loc[link, "ctx_cls_noise"] == 0 and rows.loc[link, "ctx_anc_noise"] == 1
    li = tags.index("li")
    assert rows.loc[li, "ctx_cls_content"] == 1  # "item"
    assert rows.loc[li + 1, "ctx_anc_content"] == 1 and rows.loc[li + 1, "ctx_anc_noise"] == 0
    promo = [i for i, t in enumerate(tags) if t == "p"][-2]
    assert rows.loc[promo, "ctx_cls_noise"] == 1
    foot = tags.index("footer")
    assert rows.loc[foot + 1, "ctx_tag_noise"] == 1 and rows.loc[li, "ctx_tag_noise"] == 0
    pos = rows["ctx_text_pos"].to_numpy()
    assert pos[0] == 0 and pos[foot] > pos[li] > pos[nav] and pos.max() <= 1
    rank = rows["ctx_ctd_rank"].to_numpy()
    ctd = rows["ctd"].to_numpy()
    assert 0 < rank.min() and rank.max() <= 1  # ties share their mean rank
    assert rank[np.argmax(ctd)] == rank.max() and rank[np.argmin(ctd)] == rank.min()
    assert abs(rows["ctx_chars_z"].mean()) < 1e-9


def test_without_html_the_tag_stands_in_and_class_columns_are_missing():
    walk = walk_page(HTML)
    cols = context_columns(walk.rows)
    assert cols["ctx_cls_noise"].isna().all() and cols["ctx_anc_content"].isna().all()
    li = walk.rows.index[walk.rows["tag"] == "li"]
    assert (cols.loc[li, "ctx_sig_siblings"] == 5).all()
    # HTML that does not line up with the rows (another page): class columns missing, no error
    other = context_columns(walk.rows, "<html><body><p>x</p></body></html>")
    assert other["ctx_cls_noise"].isna().all()


def test_stored_rows_with_node_ids_and_an_empty_page():
    walk = walk_page(HTML)
    rows = walk.rows.copy()
    rows["node"] += 100  # ids that are not positions
    rows["parent"] = np.where(rows["parent"] >= 0, rows["parent"] + 100, -1)
    a = context_columns(walk.rows, HTML)
    b = context_columns(rows, HTML)
    pd.testing.assert_frame_equal(a, b)
    empty = context_columns(walk.rows.iloc[:0])
    assert list(empty.columns) == CONTEXT_FEATURES and len(empty) == 0


def test_model_method_trains_and_predicts_with_context_columns():
    from hwnoise.extractors.model import ModelMethod
    from hwnoise.features.labels import label_page

    walk = walk_page(HTML)
    gold = "\n".join(f"Product {i}\nA sturdy oak chair number {i} with a woven seat and long legs."
                     for i in range(5))
    rows = add_context_features(walk.rows, HTML).assign(label=label_page(walk, gold), page="p1")
    m = ModelMethod(classifier="cart", features="ctd,link_density", page_context=True)
    assert set(CONTEXT_FEATURES) <= set(m.features)
    m.fit_rows(rows)
    labels = m.model.predict(rows)
    assert (labels == rows["label"].to_numpy()).mean() > 0.9
    # rows without the columns (thesis protocol): computed from the rows alone
    m2 = ModelMethod(classifier="cart", features="ctd", page_context=True)
    m2.fit_rows(walk.rows.assign(label=label_page(walk, gold), page="p1"))
    assert m2.model is not None


def test_a_kept_tree_gives_the_class_columns_without_walking_the_page_again(monkeypatch):
    """``walk=`` (a walk of the same HTML that kept its tree, with a query even): the same columns
    as walking the HTML again, and no second walk; a walk without its tree is walked again."""
    from hwnoise.features import walk as walk_mod

    plain = context_columns(walk_page(HTML).rows, HTML)
    kept = walk_page(HTML, ["oak", "chair"], keep_tree=True)
    calls = []
    real = walk_mod.walk_page
    monkeypatch.setattr(walk_mod, "walk_page", lambda *a, **k: calls.append(1) or real(*a, **k))
    shared = context_columns(kept.rows, HTML, walk=kept)
    assert calls == []
    pd.testing.assert_frame_equal(shared, plain)
    assert shared["ctx_cls_noise"].sum() > 0 and shared["ctx_cls_content"].sum() > 0
    context_columns(kept.rows, HTML, walk=walk_page(HTML))  # no tree kept: walked again
    assert calls == [1]


def test_a_dataset_page_with_page_context_is_walked_once(tmp_path, monkeypatch):
    """``assemble_page`` (what ``train`` assembles a page with): a model with page-context
    columns gets them from one walk that keeps its tree, the same as a second walk gave."""
    from hwnoise.dataset import Dataset
    from hwnoise.features import walk as walk_mod
    from hwnoise.features.assembly import assemble_page

    ds = Dataset.create(tmp_path / "d", name="site")
    ds.write_page("p0", HTML.encode())
    page = next(iter(ds.pages()))
    feats = ["ctd", "ctx_cls_noise", "ctx_anc_noise", "ctx_sig_share"]
    calls = []
    real = walk_mod.walk_page
    monkeypatch.setattr(walk_mod, "walk_page", lambda *a, **k: calls.append(k.get("keep_tree")) or real(*a, **k))
    got = assemble_page(page, feats).rows
    assert calls == [True]
    expected = context_columns(walk_page(HTML).rows, HTML)
    np.testing.assert_array_equal(got["ctx_cls_noise"].to_numpy(), expected["ctx_cls_noise"].to_numpy())
    assert got["ctx_cls_noise"].sum() > 0
