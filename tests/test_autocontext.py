"""Auto-context columns (features/autocontext.py) on a hand-built page, values worked out by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hwnoise.features.autocontext import AUTOCONTEXT_FEATURES, autocontext_columns
from hwnoise.features.context import context_columns, signature_groups

HTML = b"""<html><body><ul class="results"><li class="item">
<a>one result</a></li><li class="item"><a>two results here</a></li><li class="item"><a>three</a></li>
</ul><div class="nav">menu links</div></body></html>"""


def page() -> pd.DataFrame:
    # html > body > (ul > 3 x li > a), div; own_chars only on the a's and the div
    rows = pd.DataFrame({
        "node": range(9),
        "parent": [-1, 0, 1, 2, 3, 2, 5, 2, 7],
        "tag": ["html", "body", "ul", "li", "a", "li", "a", "li", "a"],
        "own_chars": [0, 0, 0, 0, 10, 0, 30, 0, 5],
    })
    rows["chars"] = [55, 55, 45, 10, 10, 30, 30, 5, 5]
    return rows


def page_with_nav() -> pd.DataFrame:
    rows = page()
    nav = pd.DataFrame({"node": [9], "parent": [1], "tag": ["div"], "own_chars": [10], "chars": [10]})
    rows = pd.concat([rows, nav], ignore_index=True)
    rows.loc[[0, 1], "chars"] = 65
    return rows


P = np.array([0.1, 0.2, 0.3, 0.5, 0.8, 0.6, 0.9, 0.4, 0.2, 0.1])


def test_records_and_tree_by_hand():
    rows = page_with_nav()
    g = signature_groups(rows, sig=rows["tag"].to_numpy())
    assert list(g.record) == [-1, -1, -1, 3, 3, 5, 5, 7, 7, -1]  # the li's are the records
    ac = autocontext_columns(rows, P, g)
    assert list(ac.columns) == AUTOCONTEXT_FEATURES
    a = ac.iloc[6]  # the second record's link: p 0.9, 30 characters
    assert a.ac_p == 0.9 and a.ac_parent == 0.6 and a.ac_grand == 0.3
    assert a.ac_sub == pytest.approx(0.9)
    # the ul's subtree: (10*0.8 + 30*0.9 + 5*0.2) / 45
    assert a.ac_grand_sub == pytest.approx((8 + 27 + 1) / 45)
    # the record (li #5) and its mates: subtrees 0.8, 0.9, 0.2 -> others' mean 0.5, min 0.2, max 0.9
    assert a.ac_rec == pytest.approx(0.9)
    assert a.ac_mates_mean == pytest.approx(0.5)
    assert (a.ac_mates_min, a.ac_mates_max) == (pytest.approx(0.2), pytest.approx(0.9))
    assert a.ac_mates_n == pytest.approx(np.log1p(3))
    assert a.ac_field == pytest.approx(0.5)  # the other records' links: 0.8 and 0.2
    li = ac.iloc[5]
    assert li.ac_kids_mean == 0.9 and li.ac_kids_max == 0.9
    assert li.ac_sib == pytest.approx((0.5 + 0.4) / 2)
    assert li.ac_sib_sub == pytest.approx((8 + 1) / 15)
    nav = ac.iloc[9]  # outside any record
    assert np.isnan(nav.ac_rec) and np.isnan(nav.ac_mates_mean) and np.isnan(nav.ac_field)
    # the page: text nodes 4, 6, 8, 9 with 10, 30, 5, 10 characters
    mean = (8 + 27 + 1 + 1) / 55
    assert a.ac_page_mean == pytest.approx(mean)
    assert a.ac_page_hi == pytest.approx(40 / 55)
    assert a.ac_rank == 1.0 and a.ac_max_rel == 1.0
    assert nav.ac_rel == pytest.approx(0.1 - mean)
    assert np.isnan(li.ac_rank)  # no text of its own


def test_missing_probabilities_are_left_out():
    rows = page_with_nav()
    p = P.copy()
    p[8] = np.nan  # the third record's link has no probability
    ac = autocontext_columns(rows, p, signature_groups(rows, sig=rows["tag"].to_numpy()))
    assert ac.iloc[6].ac_grand_sub == pytest.approx((8 + 27) / 40)
    assert np.isnan(ac.iloc[7].ac_sub)  # its record's subtree has no probability at all
    assert ac.iloc[6].ac_mates_mean == pytest.approx(0.8)
    assert ac.iloc[6].ac_field == pytest.approx(0.8)


def test_signature_groups_are_the_context_columns_groups():
    """One idea in one place: the groups auto-context reads are those ctx_sig_* describe."""
    rows = page_with_nav()
    html = HTML
    g = signature_groups(rows, html)
    ctx = context_columns(rows, html)
    assert np.array_equal(g.count, ctx["ctx_sig_siblings"].to_numpy())
    assert np.array_equal(g.record >= 0, ctx["ctx_in_record"].to_numpy() == 1)


def test_empty_page():
    rows = page().iloc[:0]
    ac = autocontext_columns(rows, np.zeros(0), signature_groups(rows))
    assert list(ac.columns) == AUTOCONTEXT_FEATURES and len(ac) == 0
