"""``hwnoise label --auto``: the labels file, its precedence (gold > person > auto), reruns."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.features.labels import resolve_labels

NAV = "<div id='nav'><a href='/'>Home</a> <a href='/a'>About us</a> <a href='/s'>Search the catalogue</a></div>"
FOOT = "<div id='foot'><p>Copyright 2026 Example Books Ltd. All rights reserved.</p></div>"
RECORDS = [
    ("gardens", ["A history of English gardens and their makers through four centuries",
                 "Gardens of the south: planting for dry summers and mild wet winters"]),
    ("rivers", ["Rivers of Europe: a travellers guide from the Rhine to the Danube delta",
                "The river keepers: stories of locks, weirs and the people who ran them"]),
    ("bridges", ["Bridges that changed engineering, from stone arches to steel cables",
                 "Building the long bridge: a memoir of a civil engineer in the fifties"]),
    ("clocks", ["Clockmakers of London and the craft of the longcase clock explained",
                "Time kept: mechanical clocks in churches, towers and village squares"]),
]


def _page(term: str, titles: list[str]) -> bytes:
    recs = "".join(f"<li class='rec'><h3>{t}</h3><p>Subject {term}. In stock, ships in two days "
                   f"from our warehouse, {i + 3} copies left.</p></li>" for i, t in enumerate(titles))
    return (f"<html><head><title>Results for {term}</title></head><body>{NAV}"
            f"<h1>Results for {term}</h1><ul id='results'>{recs}</ul>{FOOT}</body></html>").encode()


@pytest.fixture()
def crawl(tmp_path):
    ds = Dataset.create(tmp_path / "books", name="books", source="test")
    for term, titles in RECORDS:
        sub = ds.add_submission({"url": f"http://books.example/search?q={term}",
                                 "fields": [{"name": "q", "value": term}]})
        ds.write_page(sub["id"], _page(term, titles))
    ds.write_query([{"term": t, "kind": "value", "submissions": []} for t, _ in RECORDS])
    return ds


#: Equal votes: these tests are about the labels file, its precedence and reruns; the shipped
#: weights (fitted with the extractors voting) are measured by bench/label_auto.py.
EQUAL = '{"bias": 0, "weights": {"sitelevel": 1, "query": 1, "cetd": 1, "records": 1}}'


def _auto(ds, *extra) -> int:
    weights = ds.path.parent / "equal-weights.json"
    weights.write_text(EQUAL)
    if "--weights" not in extra:
        extra = ("--weights", str(weights), *extra)
    return main(["label", str(ds.path), "--auto", "--no-general", "--extractors", "", *extra])


def test_resolve_labels_precedence():
    gold = np.array(["N", None, None, None], dtype=object)
    person = np.array(["S", "S", None, None], dtype=object)
    auto = np.array(["S", "N", "N", None], dtype=object)
    assert resolve_labels(4, gold, person, auto).tolist() == ["N", "S", "N", None]
    assert resolve_labels(2, None, None).tolist() == [None, None]


def test_auto_labels_template_noise_records_content(crawl):
    assert _auto(crawl) == 0
    lab = crawl.read_labels()
    for col in ("page", "node", "xpath", "label", "source", "confidence", "set_by", "time"):
        assert col in lab.columns
    assert set(lab["set_by"]) == {"auto"} and lab["confidence"].between(0.5, 1).all()
    assert {"v_sitelevel", "v_cetd", "v_query"} <= set(lab.columns)
    nav = lab[lab["xpath"].str.contains(r"/body/div\[1\]/a")]
    recs = lab[lab["xpath"].str.contains(r"/ul\[1\]/li\[\d\]/h3\[1\]$")]
    assert len(nav) == 12 and (nav["label"] == "S").all()
    assert len(recs) == 8 and (recs["label"] == "N").all()


def test_each_page_is_walked_once(crawl, monkeypatch):
    """SiteLevel's hashes, the votes and the phrases come from one walk of each page (the
    labelling used to walk every page three times: SiteLevel's fit, the votes, SiteLevel's flags)."""
    import hwnoise.features.walk as walk_module

    seen: list[int] = []
    real = walk_module.walk_page

    def counting(html, *args, **kwargs):
        seen.append(len(html))
        return real(html, *args, **kwargs)

    monkeypatch.setattr(walk_module, "walk_page", counting)
    assert _auto(crawl) == 0
    assert len(seen) == len(RECORDS)
    lab = crawl.read_labels()
    assert (lab["v_sitelevel"] < 0).any() and (lab["v_sitelevel"] > 0).any()


def _no_results(term: str) -> bytes:
    tips = "".join(f"<li>{t}</li>" for t in ("Check the spelling of your keywords.",
                                              "Try fewer or more general words.",
                                              "Search all categories of the catalogue."))
    return (f"<html><body>{NAV}<h1>Results for {term}</h1><div class='none'><p>No results for "
            f"\u201c{term}\u201d in our catalogue.</p><ul>{tips}</ul></div>{FOOT}</body></html>").encode()


def test_pages_like_the_probes_are_pages_without_records(crawl):
    """A page that shows what the site shows for a search nothing matches (the probes that
    'hwnoise collect' keeps) is labelled noise throughout; pages with records are not touched."""
    sub = crawl.add_submission({"url": "http://books.example/search?q=lighthouses",
                                "fields": [{"name": "q", "value": "lighthouses"}]})
    crawl.write_page(sub["id"], _no_results("lighthouses"))
    empty = sub["id"]
    assert _auto(crawl) == 0
    before = crawl.read_labels()
    assert (before.loc[before["page"] == empty, "label"] == "N").any()  # the notice passes for content
    assert "v_noresult" not in before.columns
    for k, word in enumerate(("zqxkcvbnm", "zqwrtpsdf")):
        url = f"http://books.example/search?q={word}"
        crawl.write_probe({"submission": f"probe{k}", "url": url, "error": None,
                           "fields": [{"name": "q", "value": word}]}, _no_results(word))
    assert len(crawl.probes()) == 2
    assert _auto(crawl) == 0
    lab = crawl.read_labels()
    on_empty = lab["page"] == empty
    assert (lab.loc[on_empty, "label"] == "S").all() and (lab.loc[on_empty, "v_noresult"] == -1).all()
    assert (lab.loc[~on_empty, "v_noresult"] == 0).all()
    assert (lab.loc[~on_empty, "label"].to_numpy() == before.loc[before["page"] != empty, "label"].to_numpy()).all()


def test_person_label_survives_rerun_and_wins_in_features(crawl):
    assert _auto(crawl) == 0
    lab = crawl.read_labels()
    target = lab[lab["xpath"].str.endswith("/ul[1]/li[1]/h3[1]")].iloc[0]
    person = target.copy()
    person["label"], person["set_by"], person["source"], person["confidence"] = "S", "person", "person", 1.0
    crawl.write_labels(pd.concat([lab, person.to_frame().T], ignore_index=True))
    assert _auto(crawl) == 0  # the rerun keeps what the person set
    lab2 = crawl.read_labels()
    kept = lab2[(lab2["set_by"] == "person")]
    assert len(kept) == 1 and kept.iloc[0]["label"] == "S"
    assert main(["features", str(crawl.path)]) == 0
    feats = crawl.read_features()
    row = feats[(feats["page"] == target["page"]) & (feats["node"] == target["node"])]
    assert row.iloc[0]["label"] == "S"  # person over auto
    other = feats[(feats["page"] != target["page"]) & feats["xpath"].str.endswith("/ul[1]/li[1]/h3[1]")]
    assert (other["label"] == "N").all()
    # gold wins over the person: write gold that keeps the first record's title
    term, titles = next((t, ti) for t, ti in RECORDS
                        if crawl.page(target["page"]).fields[0]["value"] == t)
    crawl.write_gold(target["page"], "\n".join(titles))
    assert main(["features", str(crawl.path)]) == 0
    feats = crawl.read_features()
    row = feats[(feats["page"] == target["page"]) & (feats["node"] == target["node"])]
    assert row.iloc[0]["label"] == "N"


def test_train_uses_auto_labels_and_recomputes_stale_features(crawl, tmp_path, capsys):
    assert main(["features", str(crawl.path)]) == 0  # no gold, no labels: nothing to train on
    assert crawl.read_features()["label"].isna().all()
    assert _auto(crawl) == 0
    out = tmp_path / "model"
    assert main(["train", str(crawl.path), "--preset", "thesis", "--out", str(out), "--no-tree", "--protocol", "cv",
                 "-k", "2"]) == 0
    assert "recomputing" in capsys.readouterr().err
    assert (out / "model.json").exists()
    assert crawl.read_features()["label"].notna().all()


@pytest.mark.parametrize("content, says", [
    (b"{not json", ":1: not valid JSON: Expecting property name enclosed in double quotes (column 2)"),
    # these two were tracebacks (UnicodeDecodeError, RecursionError)
    (b'{"bias": "\xff"}', ": not JSON text in UTF-8, UTF-16 or UTF-32"),
    (b"[" * 100_000 + b"]" * 100_000, ": JSON nested too deeply"),
])
def test_bad_weights_file_is_one_line(crawl, tmp_path, capsys, content, says):
    bad = tmp_path / "w.json"
    bad.write_bytes(content)
    assert _auto(crawl, "--weights", str(bad)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"hwnoise: error: {bad}{says}")
    assert not (crawl.path / "labels.parquet").exists()


@pytest.mark.parametrize("content, says", [
    ('{"bias": "x"}', "'bias' must be a number, not 'x'"),
    ("[1, 2]", "not a JSON object but list"),
    ('{"weights": {"sitelvel": 1}}', "'weights' names 'sitelvel', no source"),
    ('{"weights": {"cetd": null}}', "the weight of 'cetd' must be a number"),
    ('{"prior": 2}', "'prior' must be a share between 0 and 1"),
])
def test_weights_of_the_wrong_shape_are_one_line_before_the_work(crawl, tmp_path, capsys, content, says):
    # they failed with a traceback after every page had been walked and voted on
    bad = tmp_path / "w.json"
    bad.write_text(content)
    assert _auto(crawl, "--weights", str(bad)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"hwnoise: error: {bad}: {says}" in err
    assert not (crawl.path / "labels.parquet").exists()


def test_extractors_asked_by_name_must_be_ones_to_ask(crawl, capsys):
    # an unknown name was left out without a word, as was --refine -1
    assert main(["label", str(crawl.path), "--auto", "--no-general", "--extractors", "trafilatura,bogus"]) == 1
    assert "--extractors: 'bogus' is no extractor to ask; choose among trafilatura" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["label", str(crawl.path), "--auto", "--refine", "-1"])
    assert stop.value.code == 2 and "'-1': give 0 or more rounds" in capsys.readouterr().err


def test_vote_moves_to_the_datasets_own_content_share():
    """Weights fitted where 8 % of nodes were content, used on a result list where 45 % are:
    the fixed vote calls a two-against-one majority noise; moved to the share the votes imply
    (EM, ``shift_prior``), it calls it content, and labels the nodes as well as a vote that
    knew the true share."""
    from hwnoise.labelling.auto import combine

    rng = np.random.default_rng(0)
    n, share, rel = 6000, 0.45, 0.8  # three independent sources, each right 80 % of the time
    content = rng.random(n) < share
    votes = {f"v_{s}": np.where(rng.random(n) < rel, 1.0, -1.0) * np.where(content, 1.0, -1.0)
             for s in ("sitelevel", "cetd", "trafilatura")}
    table = pd.DataFrame(votes)
    w = float(np.log(rel / (1 - rel)))
    weights = {"bias": float(np.log(0.08 / 0.92)), "prior": 0.08,
               "weights": {"sitelevel": w, "cetd": w, "trafilatura": w}}
    truth = np.where(content, "N", "S")
    fixed, _ = combine(table, weights, adapt_prior=False)
    moved, conf = combine(table, weights)
    knew, _ = combine(table, {**weights, "bias": float(np.log(share / (1 - share)))}, adapt_prior=False)
    assert ((fixed == "N") == (table.sum(axis=1) == 3)).all()  # only unanimous votes are content
    assert abs((moved == "N").mean() - share) < 0.05
    assert (moved == truth).mean() >= (knew == truth).mean() - 0.005
    assert (moved == truth).mean() > (fixed == truth).mean() + 0.1
    # where the share is the weights' own, the vote stays where it was
    few = np.where(rng.random(n) < 0.08, 1.0, -1.0)
    low = pd.DataFrame({c: np.where(rng.random(n) < rel, 1.0, -1.0) * few for c in votes})
    assert (combine(low, weights)[0] == combine(low, weights, adapt_prior=False)[0]).mean() > 0.97


def test_phrases_marks_a_templated_sentence_with_slots_noise():
    """A sentence the site repeats with the query in a slot differs as a whole on every page
    (SiteLevel sees no repetition) but is mostly the site's phrases: ``phrases`` votes noise
    on it, and has no opinion on the records."""
    from hwnoise.features.walk import walk_page
    from hwnoise.labelling.auto import page_phrases, phrases_vote

    walks = []
    for i, (term, titles) in enumerate(RECORDS):
        ad = (f"<p class='ad'>Cheap {term} titles from $4.99. Free delivery on {term} orders over "
              f"$25, gift wrap included.</p>")
        head = f"<p class='count'>Showing 1-20 of {i + 21} results for {term} in all books</p>"
        walks.append(walk_page(_page(term, titles).replace(b"</h1>", f"</h1>{head}{ad}".encode()), []))
    votes = phrases_vote([page_phrases(w) for w in walks], [len(w.rows) for w in walks])
    for w, v in zip(walks, votes):
        xp = w.rows["xpath"].to_numpy()
        assert v[np.flatnonzero(xp == "/html/body/p[1]")[0]] == -1  # "Showing ... results for"
        assert v[np.flatnonzero(xp == "/html/body/p[2]")[0]] == -1  # the ad
        titles = [j for j, x in enumerate(xp) if x.endswith("/h3[1]")]
        assert len(titles) == 2 and (v[titles] == 0).all()


def test_a_corrupt_feature_table_is_one_line_and_the_labels_stay(crawl, capsys):
    """The shipped general model reads the dataset's stored rows: with features.parquet damaged,
    --auto printed a 'skipped' line for every page, then wrote an empty labels table (0 pages,
    content share nan) and exited 0. Now the run stops at the table, naming it, and writes nothing."""
    assert _auto(crawl) == 0
    before = crawl.labels_path.read_bytes()
    assert main(["features", str(crawl.path)]) == 0
    part = next(crawl.features_path.rglob("*.parquet")) if crawl.features_path.is_dir() else crawl.features_path
    part.write_bytes(part.read_bytes()[:200])
    capsys.readouterr()
    weights = crawl.path.parent / "equal-weights.json"
    code = main(["label", str(crawl.path), "--auto", "--extractors", "", "--weights", str(weights)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "cannot read the feature table" in err and str(part) in err
    assert "skipped" not in err and "Traceback" not in err
    assert crawl.labels_path.read_bytes() == before


def test_nothing_to_label_leaves_the_table_and_a_persons_rows_as_they_were(crawl, capsys):
    """With no page to label, --auto merged the stored table with itself: every rerun doubled
    the rows a person set (1, 2, 4...) and said it had kept them."""
    assert _auto(crawl) == 0
    lab = crawl.read_labels()
    person = lab.iloc[[0]].copy()
    person["set_by"], person["source"] = "person", "person"
    crawl.write_labels(pd.concat([lab, person], ignore_index=True))
    before = crawl.labels_path.read_bytes()
    for f in (crawl.path / "pages").iterdir():  # a dataset without pages (its crawl not run yet)
        f.unlink()
    for _ in range(2):
        capsys.readouterr()
        assert _auto(crawl) == 1
        err = capsys.readouterr().err
        assert "nothing to label" in err and "no pages" in err and "Traceback" not in err
    assert crawl.labels_path.read_bytes() == before


def test_a_page_that_is_not_html_is_skipped_and_named_not_labelled(crawl, capsys):
    """A binary file among the pages was walked into nodes and labelled (the features stage
    skips it as not HTML, so its labels were noise in the table and its content share)."""
    sub = crawl.add_submission({"url": "http://books.example/search?q=zz", "fields": [{"name": "q", "value": "zz"}]})
    crawl.write_page(sub["id"], bytes(range(256)) * 20)
    capsys.readouterr()
    assert _auto(crawl) == 0
    err = capsys.readouterr().err
    assert f"skipped {crawl.page_path(sub['id'])}: not HTML (binary data)" in err
    lab = crawl.read_labels()
    assert sub["id"] not in set(lab["page"]) and len(set(lab["page"])) == len(RECORDS)
    assert f"label books: {len(RECORDS)} pages" in err


@pytest.mark.parametrize("damage", ["cut short", "another table"])
def test_a_labels_table_it_cannot_use_is_one_line_before_the_walk_saying_how_to_go_on(crawl, capsys, damage):
    """A labels.parquet cut short was 'rerun hwnoise label --auto', the very command that failed
    on it; one of another shape (a user's own table) skipped every page on a KeyError in --auto
    (then 'nothing to label') and was a traceback in 'hwnoise features'."""
    assert _auto(crawl) == 0
    if damage == "cut short":
        crawl.labels_path.write_bytes(crawl.labels_path.read_bytes()[:300])
    else:
        pd.DataFrame({"url": ["a"], "verdict": ["S"]}).to_parquet(crawl.labels_path)
    before = crawl.labels_path.read_bytes()
    for argv in (["label", str(crawl.path), "--auto", "--no-general", "--extractors", "",
                  "--weights", str(crawl.path.parent / "equal-weights.json")], ["features", str(crawl.path)]):
        capsys.readouterr()
        assert main(argv) == 1
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.startswith("hwnoise: error: ")]
        assert len(lines) == 1 and "Traceback" not in err and "skipped" not in err, err
        assert lines[0].startswith(f"hwnoise: error: {crawl.labels_path}: ")
        assert f"move it aside (mv {crawl.labels_path} {crawl.labels_path}.bad)" in lines[0]
        if damage == "another table":
            assert "not a labels table of hwnoise (no column page, node" in lines[0] and "it has url, verdict" in lines[0]
        assert "label books" not in err  # said before the walk, not after every page
    assert crawl.labels_path.read_bytes() == before
    crawl.labels_path.rename(crawl.labels_path.with_name("labels.parquet.bad"))  # as it says: then it runs
    assert _auto(crawl) == 0


@pytest.mark.parametrize("argv, says", [
    (["--serve", "--refine", "3", "--no-open"], "--refine: goes with --auto"),
    (["--serve", "--extractors", "", "--fixed-prior"], "--extractors, --fixed-prior: go with --auto"),
    (["--auto", "--port", "8123"], "--port: goes with --serve"),
])
def test_an_option_of_the_other_mode_is_refused_not_dropped(crawl, capsys, argv, says):
    """'label --serve --refine 3' served the page and 'label --auto --port N' made the labels as
    if the option had not been given."""
    assert main(["label", str(crawl.path), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"hwnoise: error: {says}") and err.count("\n") == 1, err
    assert not crawl.labels_path.exists()
