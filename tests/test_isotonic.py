"""Isotonic smoothing (seed 000; Chakrabarti, Kumar & Punera 2007): the tree program against
brute force, and the whole method on a small made site."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import ExtractorError, text_from_labels, walk_of
from hwnoise.extractors.isotonic import (FEATURES, isotonic_tree, make, node_features,
                                         smooth_tree, tree_cost)
from hwnoise.features.elements import shown_elements


def _random_tree(rng, n):
    return np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])


def _brute(parent, y, c):
    """The least cost over every assignment of the distinct scores to the nodes."""
    values = np.unique(y)
    X = np.array(list(itertools.product(values, repeat=len(y))))
    has = parent >= 0
    PX = X[:, np.where(has, parent, 0)]
    ok = np.all(~has | (X >= PX), axis=1)
    cost = ((X - y) ** 2).sum(axis=1) + c * (has & (X != PX)).sum(axis=1)
    return cost[ok].min()


@pytest.mark.parametrize("c", [0.0, 0.01, 0.1, 1.0])
def test_grid_smoothing_matches_brute_force_over_the_scores(c):
    """The ``levels`` approximation is exact over its grid (here every distinct score), and the
    exact solver never costs more than the best assignment of those scores."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 7))
        parent = _random_tree(rng, n)
        y = rng.random(n)
        x = smooth_tree(parent, y, c, levels=10 ** 6)
        brute = _brute(parent, y, c)
        assert tree_cost(parent, y, x, c) == pytest.approx(brute, abs=1e-12)
        assert tree_cost(parent, y, smooth_tree(parent, y, c), c) <= brute + 1e-12


def _unrestricted(parent, y, c):
    """An independent optimum: for every set of cut edges, the least squares with one free real
    value per component and parent <= child across cut edges (scipy's SLSQP), plus c per cut."""
    from scipy.optimize import minimize

    y = np.asarray(y, dtype=float)
    n = len(y)
    edges = [i for i in range(n) if parent[i] >= 0]
    best = np.inf
    for cut in itertools.product([False, True], repeat=len(edges)):
        comp = list(range(n))
        for e, is_cut in zip(edges, cut):
            if not is_cut:
                comp[e] = comp[parent[e]]      # parents come first: the component of the parent
        labels = {r: k for k, r in enumerate(sorted(set(comp)))}
        m = np.array([labels[r] for r in comp])
        cons = [{"type": "ineq", "fun": (lambda z, a=m[e], b=m[parent[e]]: z[a] - z[b])}
                for e, is_cut in zip(edges, cut) if is_cut]
        z0 = np.array([y[m == k].mean() for k in range(len(labels))])
        res = minimize(lambda z: ((z[m] - y) ** 2).sum(), z0, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        best = min(best, res.fun + c * sum(cut))
    return best


def test_smoothing_is_the_unrestricted_optimum_of_seed_000_objective():
    # the case: parent 0.2, child 0.1 (a child below its parent), c = 0.01
    x = smooth_tree([-1, 0], [0.2, 0.1], 0.01)
    assert x.tolist() == pytest.approx([0.15, 0.15])
    assert tree_cost([-1, 0], [0.2, 0.1], x, 0.01) == pytest.approx(0.005)
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(1, 6))
        parent = _random_tree(rng, n)
        y = rng.random(n)
        c = float(rng.choice([0.0, 0.01, 0.05, 0.3]))
        x = smooth_tree(parent, y, c)
        assert tree_cost(parent, y, x, c) == pytest.approx(_unrestricted(parent, y, c), abs=1e-9)


def test_smoothed_scores_respect_the_tree_constraint():
    rng = np.random.default_rng(3)
    parent = _random_tree(rng, 400)
    y = rng.random(400)
    for c in (0.01, 0.1, 1.0):
        x = smooth_tree(parent, y, c)
        assert np.all(x[1:] >= x[parent[1:]] - 1e-12)  # a child is at least as template as its parent
    # a huge penalty leaves one value for the whole tree; no penalty and a monotone input
    # leave the scores as they are
    assert len(np.unique(smooth_tree(parent, y, 1e6))) == 1
    chain = np.arange(-1, 5)
    mono = np.array([0.1, 0.2, 0.4, 0.6, 0.9, 0.95])
    assert smooth_tree(chain, mono, 0.0).tolist() == mono.tolist()


def test_smoothing_pulls_an_isolated_score_to_its_neighbourhood():
    # body 0.2 > [nav 0.8 > (a 0.95, a 0.45, a 0.9), footer 0.6]: the lone low link inside the
    # template menu is pooled with its parent (the child may not be less template than it)
    parent = [-1, 0, 1, 1, 1, 0]
    y = [0.2, 0.8, 0.95, 0.45, 0.9, 0.6]
    assert (np.asarray(y) >= 0.5).tolist() == [False, True, True, False, True, True]
    assert smooth_tree(parent, y, 0.0).tolist() == pytest.approx([0.2, 0.625, 0.95, 0.625, 0.9, 0.6])
    assert isotonic_tree(parent, y, 0.0).tolist() == [False, True, True, True, True, True]
    # a large penalty leaves one component at the mean (0.65)
    assert isotonic_tree(parent, y, 10.0).tolist() == [True] * 6


NAV = ('<ul class="nav">' + "".join(f'<li><a href="/s{k}">Section {k} of the site</a></li>'
                                    for k in range(8)) + "</ul>")
ADS = '<div class="ad"><a href="http://ads.example.org/x">Buy things at the ad network now</a></div>'


def _site(root: Path, n: int = 14) -> list:
    ds = Dataset.create(root, name="site")
    for i in range(n):
        body = " ".join(f"Paragraph {j} of story {i} tells about river {i + j} and its town." for j in range(3))
        html = (f"<html><head><title>Story {i}</title></head><body>{NAV}<div class='story'>"
                f"<h1>Story {i} headline</h1><p>{body}</p><p>More on story {i}: the mayor said so.</p>"
                f"</div>{ADS}<p class='foot'>Copyright 2024 The Site</p></body></html>")
        ds.write_page(f"p{i:02d}", html.encode())
    return list(ds.pages())


def test_features_are_the_six_of_seed_000(tmp_path):
    page = _site(tmp_path / "ds", 1)[0]
    walk = walk_of(page)
    view = shown_elements(page.read_html(), None, len(walk.rows), walk.rows["tag"].tolist())
    X, area, geometry = node_features(walk, view, "http://www.site.example/a")
    assert X.shape == (len(walk.rows), len(FEATURES)) and geometry == "document-order"
    rows = walk.rows
    ad = int(rows.index[rows["xpath"] == "/html/body/div[2]"][0])
    nav = int(rows.index[rows["tag"] == "ul"][0])
    f = dict(zip(FEATURES, X[ad]))
    assert f["anchor_text_share"] == pytest.approx(1.0)
    assert f["intra_site_link_share"] == 0.0          # the ad links off-site
    assert dict(zip(FEATURES, X[nav]))["intra_site_link_share"] == 1.0  # relative links
    assert 0 < f["visible_text_share"] < 1
    assert X[0, FEATURES.index("top")] == 0.0        # body starts the page
    assert np.array_equal(area, rows["chars"].to_numpy(dtype=float))


def test_method_learns_templates_from_sitelevel_labels(tmp_path):
    pages = _site(tmp_path / "ds")
    for smoothing in (True, False):
        m = make(c=0.01, smoothing=smoothing).fit(pages[:12])
        assert len(m.cuts_) == 3 and np.all(np.diff(m.cuts_) >= 0)
        page = pages[13]
        walk = walk_of(page)
        labels = m.node_labels(page, walk)
        text = text_from_labels(walk, labels)
        assert "tells about river" in text
        assert "Section 3 of the site" not in text
        assert "Buy things" not in text
    assert m.geometry_ == {"document-order"}


def test_options_are_checked(tmp_path):
    with pytest.raises(ExtractorError, match="training"):
        make(training="everything")
    pages = _site(tmp_path / "ds", 2)
    with pytest.raises(ExtractorError, match="fit"):
        make().node_labels(pages[0], walk_of(pages[0]))


def test_pooled_training_adds_other_datasets_but_never_the_scored_one(tmp_path):
    own = _site(tmp_path / "a", 6)
    _site(tmp_path / "b", 6)
    m = make(training="pooled", pool=f"{tmp_path / 'a'},{tmp_path / 'b'}")
    pooled = m._pool_pages(own[:4])
    assert len(pooled) == 4 + 6  # dataset a's other pages (its test pages) stay out
    m.fit(own[:4])
    assert m.cuts_ is not None
