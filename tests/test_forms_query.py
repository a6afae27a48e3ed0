"""The domain query (seed 003 §3.1, §5.1): terms split, repeats dropped, kinds and sources kept."""
from __future__ import annotations

import pytest

from hwnoise.dataset import Dataset
from hwnoise.forms.query import build_query, split_terms, write_domain_query
from hwnoise.forms.submissions import submission_from_url


@pytest.mark.parametrize("text, terms", [
    ("item_name", ["item", "name"]),
    ("camelCase", ["camel", "case"]),
    ("maxPriceUSD", ["max", "price", "usd"]),
    ("HTMLParser", ["html", "parser"]),
    ("isbn13", ["isbn", "13"]),
    ("page2of10", ["page", "2", "of", "10"]),
    ("chocolate%20cake", ["chocolate", "cake"]),
    ("caf%C3%A9+Noir", ["café", "noir"]),
    ("red%2520wine", ["red", "wine"]),                 # doubly encoded
    ("price-min", ["price", "min"]),
    ("BBC's", ["bbc's"]),                              # the one tokeniser's words
    ("Ｆｕｌｌ　Width", ["full", "width"]),             # NFKC
    ("", []),
    (None, []),
])
def test_split_terms(text, terms):
    assert split_terms(text) == terms


def test_values_keep_their_case_joins():
    # a person searched for "McDonald": the page shows McDonald, not "mc donald"
    assert split_terms("McDonald", split_case=False) == ["mcdonald"]
    assert split_terms("iPhone13", split_case=False) == ["iphone13"]


def test_the_drinkgenius_example_of_figure_3_1():
    sub = submission_from_url("http://www.drinkgenius.com/advanced-search.php?item_name=chocolate&description=cherry")
    sub["id"] = "s1"
    query = build_query([sub])
    assert [(q["term"], q["kind"]) for q in query] == [
        ("item", "name"), ("name", "name"), ("chocolate", "value"), ("description", "name"), ("cherry", "value")]
    assert all(q["submissions"] == ["s1"] for q in query)


def test_repeats_dropped_sources_kept_and_kinds_apart():
    subs = [
        {"id": "a", "method": "GET", "action": "http://x/s", "url": "http://x/s?title=Dune",
         "fields": [{"name": "title", "value": "Dune", "label": "Book title"},
                    {"name": "csrf", "value": "9f8e7d", "label": None, "type": "hidden"}]},
        {"id": "b", "method": "GET", "action": "http://x/s", "url": "http://x/s?title=Emma+Title",
         "fields": [{"name": "title", "value": "Emma Title", "label": "Book title"}]},
        {"id": "c", "method": "GET", "action": "http://x/s", "url": "http://x/s?title=Dune",
         "fields": [{"name": "title", "value": "dune", "label": "Book title"}]},
    ]
    query = build_query(subs)
    by = {(q["term"], q["kind"]): q["submissions"] for q in query}
    assert len(by) == len(query)                              # one entry per (term, kind)
    assert by[("title", "name")] == ["a", "b", "c"]
    assert by[("dune", "value")] == ["a", "c"]                # case-folded, one entry
    assert by[("title", "value")] == ["b"]                    # the same word as a value is kept apart
    assert by[("book", "visible_label")] == ["a", "b", "c"]
    assert ("9f8e7d", "value") not in by                      # hidden values: no person typed them
    assert ("csrf", "name") in by


def test_write_domain_query_to_the_dataset(tmp_path):
    ds = Dataset.create(tmp_path / "ds", name="t")
    sub = ds.add_submission(submission_from_url("http://x.example/s?itemName=tea&year=2013"))
    query = write_domain_query(ds)
    assert Dataset(tmp_path / "ds").query() == query
    assert ds.query_terms(kinds=["value"]) == ["tea", "2013"]
    assert ds.query_terms(kinds=["name"]) == ["item", "name", "year"]
    assert all(q["submissions"] == [sub["id"]] for q in query)
