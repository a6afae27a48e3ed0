"""The compiled sums of ``measures.tree_measures`` (``features/_walk.c`` ``tree_sums``) equal
their numpy reference (``subtree_sum``, ``sibling_structure``, ``query_scores``) to the bit."""
from __future__ import annotations

import numpy as np
import pytest

from hwnoise.features import measures, native

pytestmark = pytest.mark.skipif(native.ext is None, reason="the compiled walk is not built")


def _tree(rng: np.random.Generator, n: int, deep: bool = False) -> np.ndarray:
    """A random parent array in document order: each row's parent is a row on the path from
    the root to the previous row (so subtrees are contiguous)."""
    parent = np.full(n, -1, dtype=np.int64)
    path = [0]
    for i in range(1, n):
        keep = len(path) if deep and rng.random() < 0.8 else int(rng.integers(1, len(path) + 1))
        del path[keep:]
        parent[i] = path[-1]
        path.append(i)
    return parent


def _reference(parent, last, own, own_link, is_a, factor, matches, own_matches):
    nth, children, same = measures.sibling_structure(parent, [], factor)
    return ((measures.subtree_sum(own, last), measures.subtree_sum(own_link, last),
             measures.subtree_sum(is_a, last), nth, children),
            (same, measures.query_scores(parent, matches), measures.query_scores(parent, own_matches)))


@pytest.mark.parametrize("seed", range(40))
def test_tree_sums_equal_the_numpy_measures_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 3, 17, 200, 2000]))
    parent = _tree(rng, n, deep=seed % 3 == 0)
    last = measures.subtree_last(parent)
    own = rng.integers(0, 400, n) * (rng.random(n) < 0.6)
    own_link = (own * rng.random(n) * (rng.random(n) < 0.3)).astype(np.int64)
    is_a = (rng.random(n) < 0.2).astype(np.int64)
    n_tags = int(rng.integers(1, 30))
    tags = [f"t{k}" for k in rng.integers(0, n_tags, n)]
    factor = measures.tag_factor(tags)
    matches = rng.integers(0, 4, n) * (rng.random(n) < 0.1)
    own_matches = rng.integers(0, 3, n) * (rng.random(n) < 0.05)
    got = measures._tree_sums(parent, last, own, own_link, is_a, factor, matches, own_matches)
    want = _reference(parent, last, own, own_link, is_a, factor, matches, own_matches)
    assert got is not None
    for g, w in zip(got[0] + got[1], want[0] + want[1]):
        assert g.dtype == w.dtype
        assert np.array_equal(g, w)  # floats too: the same additions in the same order


def test_query_score_sums_in_numpy_order_at_every_level():
    # 1/3 + 1/7 ... : sums whose value depends on the order of the additions
    rng = np.random.default_rng(7)
    parent = _tree(rng, 3000, deep=True)
    matches = rng.integers(1, 50, 3000)
    factor = measures.tag_factor(["div"] * 3000)
    z = np.zeros(3000, np.int64)
    got = measures._tree_sums(parent, measures.subtree_last(parent), z, z, z, factor, matches, z)
    assert got[1][1].tobytes() == measures.query_scores(parent, matches).tobytes()


@pytest.mark.parametrize("case", ["root_has_parent", "parent_after_row", "last_past_end", "code_out_of_range"])
def test_rows_that_are_not_a_tree_in_document_order_go_to_numpy(case):
    parent = np.array([-1, 0, 1, 0], dtype=np.int64)
    last = measures.subtree_last(parent)
    codes, uniq = np.zeros(4, np.int64), ["div"]
    if case == "root_has_parent":
        parent = np.array([0, 0, 1, 0], dtype=np.int64)
    elif case == "parent_after_row":
        parent = np.array([-1, 2, 0, 0], dtype=np.int64)
    elif case == "last_past_end":
        last = last.copy()
        last[1] = 4
    else:
        codes = np.array([0, 0, 1, 0], dtype=np.int64)
    z = np.zeros(4, np.int64)
    assert measures._tree_sums(parent, last, z, z, z, (codes, uniq), z, z) is None


def test_tree_measures_are_the_same_with_either(monkeypatch):
    rng = np.random.default_rng(3)
    n = 500
    parent = _tree(rng, n)
    tags = [str(t) for t in rng.choice(["div", "a", "p", "li", "span"], n)]
    own = rng.integers(0, 90, n)
    args = (parent, tags, np.zeros(n, np.int64), own, own // 3, rng.integers(0, 2, n),
            rng.integers(0, 2, n), np.cumsum(own) - own, "/html/body")
    compiled = measures.tree_measures(*args)
    monkeypatch.setattr(native, "ext", None)
    reference = measures.tree_measures(*args)
    assert compiled.keys() == reference.keys()
    for k, v in reference.items():
        assert np.array_equal(np.asarray(compiled[k]), np.asarray(v)), k


def _ctd_original(c, t, lc, lt):
    """CTD as measures.composite_text_density computed it before its logs moved into
    ``_ctd_from_parts`` (numpy.where throughout)."""
    import math

    c, lc = c.astype(np.float64), lc.astype(np.float64)
    t1 = np.where(t == 0, 1, t).astype(np.float64)
    lc1 = np.where(lc == 0, 1.0, lc)
    lt1 = np.where(lt == 0, 1, lt).astype(np.float64)
    nonlink = c - lc
    nonlink1 = np.where(nonlink == 0, 1.0, nonlink)
    cb, lcb = (c[0], lc[0]) if len(c) else (0.0, 0.0)
    cb1 = cb if cb else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        extra = (c / nonlink1) * lc + (lcb / cb1) * c
        b = np.where(extra == 0, 1.0, np.log(extra + math.e))
        lnb = np.log(b)
        lnb = np.where(lnb == 0, 1.0, lnb)
        ratio = (c / lc1) * (t1 / lt1)
        ctd = (c / t1) * np.log(np.where(ratio > 0, ratio, 1.0)) / lnb
    return np.where(c == 0, 0.0, ctd)


@pytest.mark.parametrize("seed", range(30))
def test_tree_tail_equals_the_numpy_columns_bit_for_bit(seed, monkeypatch):
    """``tree_tail`` and ``ctd_tail`` (the arithmetic around CTD's logs, compiled) give the
    numpy code's ctd, td, link_density, position, chars_before, density_sum and parent_ctd to
    the bit, and CTD equals its formula as it was written with numpy.where: random trees with
    no links, all links, empty rows and a textless body."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 1500))
    parent = _tree(rng, n, deep=seed % 3 == 0)
    last = measures.subtree_last(parent)
    own = rng.integers(0, 200, n) * (rng.random(n) < 0.7)
    if seed % 5 == 0:
        own[0] = 0
    link = {0: np.zeros(n, np.int64), 1: own.copy()}.get(seed % 4, (own * rng.random(n)).astype(np.int64))
    is_a = (rng.random(n) < 0.2).astype(np.int64)
    chars, lchars, ltags = (measures.subtree_sum(v, last) for v in (own, link, is_a))
    tags_ = np.maximum(last - np.arange(n), 1)
    prior = np.cumsum(own) - own
    got = measures._tree_tail(chars, tags_, lchars, ltags, parent, prior)
    assert got is not None
    ctd = _ctd_original(chars, tags_, lchars, ltags)
    density = np.zeros(n)
    np.add.at(density, parent[1:], ctd[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (ctd, chars / tags_, np.where(chars > 0, lchars / np.where(chars > 0, chars, 1), 0.0),
                np.arange(n) / max(n, 1), prior.astype(np.float64) / (chars[0] or 1), density,
                np.where(parent >= 0, ctd[np.maximum(parent, 0)], 0.0))
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == np.float64 and a.tobytes() == b.tobytes(), k
    assert measures.composite_text_density(chars, tags_, lchars, ltags).tobytes() == ctd.tobytes()
    bad = parent.copy()
    if n > 2:
        bad[2] = 2  # not a tree in document order: numpy decides
        assert measures._tree_tail(chars, tags_, lchars, ltags, bad, prior) is None
