"""The region scorer: candidate groups of alike siblings, their features, the choice among them,
the scorer's JSON form in model.json, and records added where the labels missed a region."""
from __future__ import annotations

import json

import numpy as np
import pytest

from hwnoise.errors import HwnoiseError
from hwnoise.extractors.records import record_rows, records_content
from hwnoise.extractors.regions import (REGION_FEATURES, Candidate, RegionScorer, choose_regions,
                                        combine_regions, innermost, region_candidates, scored_records,
                                        scorer_of)
from hwnoise.features.walk import walk_page
from hwnoise.training.model import ModelError, NoiseModel

NAV = "<div id=nav><a href=/>Home</a> <a href=/about>About us</a> <a href=/help>Help</a></div>"


def _page(n: int = 6, wrap: bool = True) -> bytes:
    """A menu of 3 alike links, then a list of n cards; with ``wrap`` each li holds one div with
    all of its text (``li > div``)."""
    def card(k: int) -> str:
        body = (f"<a href=/b/{k}>The long title of book number {k}</a><span>by Author {k}</span>"
                f"<span>${10 + k}.50</span>")
        return f"<li><div class=card>{body}</div></li>" if wrap else f"<li>{body}</li>"
    return (f"<html><body>{NAV}<main><ul class=results>{''.join(card(k) for k in range(n))}</ul></main>"
            "</body></html>").encode()


def _by_tag(walk, cands):
    tags = walk.rows["tag"].tolist()
    return {(tags[c.rows[0]], c.inner): c for c in cands}


def test_candidates_are_alike_sibling_groups_at_both_levels():
    walk = walk_page(_page(6))
    labels = np.full(len(walk.rows), "S", dtype=object)
    cands, X = region_candidates(walk, labels, None)
    assert X.shape == (len(cands), len(REGION_FEATURES)) and np.isfinite(X).all()
    got = _by_tag(walk, cands)
    outer, inner = got[("li", False)], got[("div", True)]
    assert len(outer.rows) == 6 and outer.group == inner.group
    parent = walk.rows["parent"].to_numpy()
    assert [int(parent[i]) for i in inner.rows] == outer.rows  # each card's only child
    col = {f: X[cands.index(outer), k] for k, f in enumerate(REGION_FEATURES)}
    assert col["members"] == 6 and col["inner"] == 0 and col["tag_li"] == 1 and col["rank"] == 0
    assert col["rel_largest"] == 1.0 and col["candidates"] == len(cands)
    menu = got[("a", False)]  # the menu's three links are a group too, a smaller one
    assert X[cands.index(menu), REGION_FEATURES.index("rel_largest")] < 0.5
    # without a single-child chain the cards have no inner level
    flat = walk_page(_page(6, wrap=False))
    assert ("div", True) not in _by_tag(flat, region_candidates(flat, ["S"] * len(flat.rows), None)[0])


def _grid(rows: int, per_row: int) -> bytes:
    """A grid of ``rows`` alike row divs, each holding ``per_row`` cards."""
    def card(k: int) -> str:
        return f"<div class=card><a href=/p/{k}>Product number {k}</a><span>${k}.99</span></div>"
    body = "".join(f"<div class=row>{''.join(card(r * per_row + c) for c in range(per_row))}</div>"
                   for r in range(rows))
    return f"<html><body>{NAV}<main><div class=grid>{body}</div></main></body></html>".encode()


@pytest.mark.parametrize("per_row", [2, 4])
def test_a_grid_is_one_candidate_across_its_rows(per_row):
    walk = walk_page(_grid(3, per_row), keep_tree=True)
    cands, X = region_candidates(walk, ["S"] * len(walk.rows), None)
    cards = [i for i, el in enumerate(walk.elements) if el.get("class") == "card"]
    assert len(cards) == 3 * per_row
    got = [c for c in cands if c.rows == cards]
    assert len(got) == 1  # every card of the three rows, in document order, one candidate
    col = dict(zip(REGION_FEATURES, X[cands.index(got[0])]))
    assert col["members"] == 3 * per_row and col["log_parents"] == pytest.approx(np.log1p(3))
    # each row's own group is a candidate too where it has enough members (4, not 2)
    rows = {tuple(c.rows) for c in cands}
    assert (tuple(cards[:per_row]) in rows) == (per_row >= 3)
    last = np.asarray(walk.last)
    scores = np.asarray([0.9 if c is got[0] else 0.6 for c in cands])
    assert choose_regions(cands, scores, last, threshold=0.5)[0] is got[0]


def test_one_card_a_row_is_no_grid():
    walk = walk_page(_grid(4, 1))
    cands, X = region_candidates(walk, ["S"] * len(walk.rows), None)
    assert X[:, REGION_FEATURES.index("log_parents")].max() == pytest.approx(np.log1p(1))


def test_innermost_follows_single_child_chains_that_keep_the_text():
    # 0 body; 1 li > 2 div (all of li's text) > 3 a; 4 li with 5 div and 6 span (two children)
    parent = np.array([-1, 0, 1, 2, 0, 4, 4])
    chars = np.array([30, 10, 10, 10, 20, 5, 15])
    assert innermost(parent, chars).tolist() == [0, 3, 3, 3, 4, 5, 6]


def test_choose_regions_keeps_the_best_of_overlapping_candidates_above_the_threshold():
    # 0 root (subtree 0..6); three items 1, 3, 5, each with one child 2, 4, 6
    last = np.array([6, 2, 2, 4, 4, 6, 6])
    outer = Candidate(rows=[1, 3, 5], group=0, inner=False)
    inner = Candidate(rows=[2, 4, 6], group=0, inner=True)
    whole = Candidate(rows=[0], group=1, inner=False)
    cands = [outer, inner, whole]
    assert choose_regions(cands, np.array([0.9, 0.8, 0.1]), last, threshold=0.5) == [outer]
    assert choose_regions(cands, np.array([0.7, 0.8, 0.1]), last, threshold=0.5) == [inner]
    assert choose_regions(cands, np.array([0.7, 0.8, 0.95]), last, threshold=0.5) == [whole]
    assert choose_regions(cands, np.array([0.4, 0.3, 0.2]), last, threshold=0.5) == []
    taken = np.zeros(7, dtype=bool)
    taken[4] = True  # a row already in a record: no candidate holding it or inside it
    assert choose_regions(cands, np.array([0.9, 0.8, 0.7]), last, threshold=0.5, taken=taken) == []


def _scorer(threshold: float = 0.5) -> RegionScorer:
    """A scorer that learnt: groups of 5 or more holding most of the largest group's text are records."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, len(REGION_FEATURES)))
    X[:, REGION_FEATURES.index("members")] = rng.integers(2, 30, size=400)
    y = (X[:, REGION_FEATURES.index("rel_largest")] > 0.6) & (X[:, REGION_FEATURES.index("members")] >= 5)
    return RegionScorer.fit(X, y, threshold=threshold, info={"note": "test"})


def test_scorer_json_round_trip_and_errors():
    sc = _scorer()
    again = RegionScorer.from_dict(json.loads(json.dumps(sc.to_dict())))
    X = np.random.default_rng(1).uniform(0, 1, size=(50, len(REGION_FEATURES))) * 20
    assert np.array_equal(sc.scores(X), again.scores(X)) and again.threshold == 0.5
    assert again.info == {"note": "test"} and again.mode == "add"
    rest = RegionScorer.from_dict(dict(sc.to_dict(), mode="rest"))
    assert rest.mode == "rest" and RegionScorer.from_dict(rest.to_dict()).mode == "rest"
    old = sc.to_dict()
    del old["mode"], old["veto"]  # a file written before the modes and the veto: "add", no veto
    assert RegionScorer.from_dict(old).mode == "add" and RegionScorer.from_dict(old).veto == 0
    assert RegionScorer.from_dict(dict(sc.to_dict(), veto=0.1)).veto == 0.1
    for mutate, match in ((lambda d: d.update(mode="all"), "'mode'"),
                          (lambda d: d.update(veto=-0.1), "'veto'"), (lambda d: d.update(veto="x"), "'veto'"),
                          (lambda d: d.update(features=REGION_FEATURES[:-1]), "other region features"),
                          (lambda d: d.update(threshold=2), "threshold"),
                          (lambda d: d["trees"]["trees"][0].update(left="x"), "region scorer")):
        bad = json.loads(json.dumps(sc.to_dict()))
        mutate(bad)
        with pytest.raises(HwnoiseError, match=match):
            RegionScorer.from_dict(bad)


def test_records_the_labels_missed_are_added_and_labelled_ones_kept():
    """All noise by the labels: no records without the scorer, the cards with it (one level,
    never both), and the content is theirs; a region the labels give stays theirs."""
    walk = walk_page(_page(6, wrap=False))
    noise = np.full(len(walk.rows), "S", dtype=object)
    sc = _scorer(threshold=0.5)
    assert record_rows(walk, noise) == []
    got = record_rows(walk, noise, scorer=sc)
    tags = walk.rows["tag"].tolist()
    assert [[tags[r] for r in rec] for rec in got] == [["li"]] * 6
    assert scored_records(walk, noise, None, [], sc) == got
    xs = walk.rows["xpath"].tolist()
    cards = np.asarray([x.startswith("/html/body/main[1]/ul[1]/li[") for x in xs])
    assert (records_content(walk, noise, record_rows(walk, noise, scorer=sc)) == np.where(cards, "N", "S")).all()
    assert (records_content(walk, noise, record_rows(walk, noise)) == noise).all()  # no records: the labels stay
    lab = np.where(cards, "N", "S").astype(object)  # the labels give the cards
    assert record_rows(walk, lab, scorer=sc) == record_rows(walk, lab)
    assert record_rows(walk, noise, scorer=_scorer(threshold=1.0)) == []  # keeps nothing


def test_region_modes_decide_who_wins_an_overlap():
    """The labels give the first card's title as one record; the scorer keeps the cards. ``add``
    keeps the labels' records and no candidate that touches one (the cards lose), ``rest`` the
    cards and the labels' records they do not touch, ``alone`` the cards only."""
    walk = walk_page(_page(6, wrap=False))
    last = np.asarray(walk.last, dtype=np.int64)
    tags = walk.rows["tag"].tolist()
    lis = [i for i, t in enumerate(tags) if t == "li"]
    title = lis[0] + 1                                  # the first card's <a>
    menu = [i for i, t in enumerate(tags) if t == "a"][0]  # a nav link, outside every card
    card = Candidate(rows=lis, group=0, inner=False)
    scores = np.array([0.9])
    add = combine_regions([[title], [menu]], [card], scores, last, 0.5, "add")
    assert add == sorted([[menu], [title]])
    rest = combine_regions([[title], [menu]], [card], scores, last, 0.5, "rest")
    assert rest == sorted([[menu]] + [[r] for r in lis])
    assert combine_regions([[title], [menu]], [card], scores, last, 0.5, "alone") == [[r] for r in lis]
    assert combine_regions([[menu]], [card], np.array([0.1]), last, 0.5, "rest") == [[menu]]
    with pytest.raises(ValueError, match="region mode"):
        combine_regions([], [card], scores, last, 0.5, "both")


def test_the_veto_drops_the_labels_records_of_a_group_the_scorer_rejects():
    """In mode ``rest``, a labels' record heading only candidates scored below the veto (a menu
    the node model took for content) goes; one no candidate heads, or one of a group scored at
    the veto or above, stays; a page the veto would leave with no record keeps the labels'."""
    walk = walk_page(_page(6, wrap=False))
    last = np.asarray(walk.last, dtype=np.int64)
    tags = walk.rows["tag"].tolist()
    lis = [i for i, t in enumerate(tags) if t == "li"]
    links = [i for i, t in enumerate(tags) if t == "a"][:3]   # the menu's three links
    cards = Candidate(rows=lis, group=0, inner=False)
    menu = Candidate(rows=links, group=1, inner=False)
    recs = [[r] for r in links] + [[r] for r in lis]
    low = np.array([0.3, 0.02])                               # neither kept at 0.5: the labels' records stay
    assert combine_regions(recs, [cards, menu], low, last, 0.5, "rest") == sorted(recs)
    assert combine_regions(recs, [cards, menu], low, last, 0.5, "rest", veto=0.05) == [[r] for r in lis]
    assert combine_regions(recs, [cards, menu], low, last, 0.5, "rest", veto=0.02) == sorted(recs)  # at the veto
    lone = [[lis[0] + 1]]                                     # a title no candidate heads
    assert combine_regions(lone + [[r] for r in links], [cards, menu], low, last, 0.5, "rest",
                           veto=0.05) == lone
    only_menu = [[r] for r in links]
    assert combine_regions(only_menu, [cards, menu], low, last, 0.5, "rest", veto=0.05) == only_menu
    high = np.array([0.9, 0.02])                              # the cards are kept: the menu goes
    assert combine_regions(only_menu, [cards, menu], high, last, 0.5, "rest", veto=0.05) == [[r] for r in lis]
    assert combine_regions(only_menu, [cards, menu], high, last, 0.5, "add", veto=0.05) == sorted(
        only_menu + [[r] for r in lis])                       # the veto is for ``rest`` only


def test_the_shipped_records_model_carries_a_scorer_and_a_damaged_one_is_named(tmp_path):
    from hwnoise.extractors.model import load_model
    from hwnoise.training.model import shipped_model_path

    model = load_model("records")
    sc = scorer_of(model)
    assert sc is not None and 0 < sc.threshold < 1 and sc.info["pages"] == 100
    assert sc.mode == "rest" and 0 < sc.veto < 1  # bench/build_regions.py chose one
    assert scorer_of(load_model("general")) is None
    doc = json.loads(shipped_model_path("records").read_text(encoding="utf-8"))
    bad = tmp_path / "model.json"
    doc["regions"] = ["not", "an", "object"]
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ModelError, match="'regions'"):
        NoiseModel.load(bad)
    doc["regions"] = {"features": ["x"], "threshold": 0.5, "trees": {}}
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(HwnoiseError, match="other region features"):
        scorer_of(NoiseModel.load(bad))


def _records_src(root, n_pages: int = 6):
    """A plain folder of listing pages (a menu, then cards) of ``n_pages`` sites, the cards
    given as gold records (``records/NAME.json``)."""
    src = root / "src"
    for sub in ("html", "records"):
        (src / sub).mkdir(parents=True)
    for k in range(n_pages):
        n = 4 + k % 3
        html = _page(n, wrap=bool(k % 2)).decode().replace(
            "<html>", f"<html><head><link rel=canonical href='https://site{k}.example/s'></head>")
        (src / "html" / f"p{k}.html").write_text(html, encoding="utf-8")
        recs = [[f"/body[1]/main[1]/ul[1]/li[{j}]"] for j in range(1, n + 1)]
        (src / "records" / f"p{k}.json").write_text(json.dumps(recs), encoding="utf-8")
    return src


def test_training_a_spec_with_regions_fits_its_scorer_on_the_inner_cv_labels(tmp_path, capsys):
    """``hwnoise train --preset records`` (spec ``regions: rest``) saves a region scorer fitted
    on the training pages' out-of-fold labels, and evaluate's ModelMethod fits one the same
    way; extract --records applies it. A spec without ``regions`` gets none."""
    from hwnoise.cli import main
    from hwnoise.dataset import Dataset
    from hwnoise.extractors.model import ModelMethod, load_model

    into = tmp_path / "ds"
    assert main(["import", "plain", str(_records_src(tmp_path)), "--into", str(into), "-q"]) == 0
    (ds_path,) = [p for p in into.iterdir() if p.is_dir()]
    assert main(["features", str(ds_path)]) == 0
    out = tmp_path / "m"
    assert main(["train", str(ds_path), "--preset", "records", "--all-pages", "--out", str(out),
                 "--no-tree"]) == 0
    assert "model: region scorer (rest) fitted on 6 pages with records" in capsys.readouterr().err
    meta = json.loads((out / "model.json").read_text())
    assert meta["spec"]["regions"] == "rest"
    regions = meta["regions"]
    assert regions["mode"] == "rest" and regions["info"]["pages"] == 6
    assert regions["info"]["fitted_on"] == "the training pages' inner-CV labels"
    model = load_model(out)
    assert scorer_of(model) is not None and scorer_of(model).mode == "rest"
    assert getattr(model, "inner_oof", None) is None  # the fit's own data is not kept
    page = tmp_path / "new.html"
    page.write_bytes(_page(5))
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(out), "--records"]) == 0
    got = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(got) == 5 and all("The long title of book number" in r["text"] for r in got)
    method = ModelMethod(preset="records").fit(list(Dataset(ds_path).pages()))
    assert scorer_of(method.model) is not None and method.model.regions["mode"] == "rest"
    plain = ModelMethod(preset="records", regions=None).fit(list(Dataset(ds_path).pages()))
    assert getattr(plain.model, "regions", None) is None


def test_regions_option_over_the_preset():
    """--regions MODE|none on train and evaluate (one parser): over the records preset's rest."""
    import argparse

    from hwnoise.commands._model_options import add_model_options, model_options
    from hwnoise.training.spec import SpecError, with_overrides, preset_spec
    from hwnoise.training.train import model_spec

    p = argparse.ArgumentParser()
    add_model_options(p)
    assert model_options(p.parse_args(["--regions", "none"])) == {"preset": None, "regions": None}
    assert model_options(p.parse_args([])) == {"preset": None}
    assert model_spec({"preset": "records"}, n_sites=3).regions == "rest"
    assert model_spec({"preset": "records", "regions": None}, n_sites=3).regions is None
    assert model_spec({"preset": "general", "regions": "add"}, n_sites=3).regions == "add"
    assert with_overrides(preset_spec("records"), {"regions": "alone"}).regions == "alone"
    with pytest.raises(SpecError, match="regions"):
        with_overrides(preset_spec("records"), {"regions": "both"})
