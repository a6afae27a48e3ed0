"""A page's own query read from the page (prototype, off by default): its title's words, less
the site's name and stopwords, count in QueryScore where they appear."""
from __future__ import annotations

import lxml.html

from hwnoise.features.page_terms import ENV, page_terms
from hwnoise.features.walk import walk_page

PAGE = b"""<html><head><title>Vintage Guitars for Sale | MusicShop</title></head><body>
<div id="nav"><a href="/">Home</a> <a href="/about">About us</a> MusicShop</div>
<ul id="list"><li>Fender vintage guitars, 1962</li><li>Gibson guitars, used</li></ul>
<form><input type="search" name="q" value="telecaster"><input type="hidden" value="secret"></form>
</body></html>"""


def test_title_words_less_site_name_and_stopwords_inputs_and_url():
    root = lxml.html.fromstring(PAGE)
    assert page_terms(root, ("title",)) == ["vintage", "guitars", "sale"]
    assert page_terms(root, ("inputs",)) == ["telecaster"]
    assert page_terms(root, ("url",), "https://shop.example/find?q=red+amp&page=2") == ["red", "amp"]


def test_off_by_default_and_on_the_title_words_score_where_they_appear(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    rows = walk_page(PAGE).rows.set_index("xpath")
    assert (rows["query_score"] == 0).all() and (rows["own_query_score"] == 0).all()
    monkeypatch.setenv(ENV, "title")
    rows = walk_page(PAGE).rows.set_index("xpath")
    assert rows.loc["/html/body/ul[1]", "query_score"] > 0
    assert rows.loc["/html/body/ul[1]/li[1]", "matches"] == 2  # vintage, guitars
    assert rows.loc["/html/body/div[1]", "query_score"] == 0  # the site's name is no term
    assert (rows["own_query_score"] == rows["query_score"]).all()


def test_a_page_with_own_terms_keeps_them(monkeypatch):
    monkeypatch.setenv(ENV, "title")
    rows = walk_page(PAGE, own_terms=["gibson"]).rows.set_index("xpath")
    assert rows.loc["/html/body/ul[1]/li[2]", "matches"] == 0  # no domain query, none derived
    assert rows.loc["/html/body/ul[1]/li[2]", "own_query_score"] > 0
    assert rows.loc["/html/body/ul[1]/li[1]", "own_query_score"] == 0
