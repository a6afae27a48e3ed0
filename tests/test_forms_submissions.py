"""Submissions in: GET URL lines, JSON lines (POST), HAR exports; clear errors."""
from __future__ import annotations

import json

import pytest

from hwnoise.errors import HwnoiseError
from hwnoise.forms.submissions import SubmissionsError, detect_format, read_submissions


def test_url_lines_become_get_submissions_with_their_query_fields(tmp_path):
    f = tmp_path / "urls.txt"
    f.write_text("# drinks\n"
                 "http://www.drinkgenius.com/search.php?item_name=chocolate&description=cherry\n"
                 "\n"
                 "https://example.org/find?q=caf%C3%A9+noir&page=2&empty=\n")
    subs = read_submissions(f)
    assert len(subs) == 2
    a, b = subs
    assert a["method"] == "GET"
    assert a["action"] == "http://www.drinkgenius.com/search.php"
    assert a["url"] == "http://www.drinkgenius.com/search.php?item_name=chocolate&description=cherry"
    assert [(x["name"], x["value"]) for x in a["fields"]] == [("item_name", "chocolate"), ("description", "cherry")]
    assert all(x["label"] is None for x in a["fields"])
    # values are URL-decoded; blank values are kept (the form sent them)
    assert [(x["name"], x["value"]) for x in b["fields"]] == [("q", "café noir"), ("page", "2"), ("empty", "")]


def test_json_lines_carry_post_forms_and_labels(tmp_path):
    f = tmp_path / "subs.jsonl"
    lines = [
        {"method": "post", "action": "https://books.example/search",
         "fields": [{"name": "ttl", "value": "dune", "label": "Title"}, {"name": "yr", "value": 1965}]},
        {"method": "GET", "action": "https://books.example/search?old=1", "fields": {"q": "dune", "tag": ["a", "b"]}},
    ]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    post, get = read_submissions(f)
    assert post["method"] == "POST" and post["url"] == "https://books.example/search"
    assert post["fields"] == [{"name": "ttl", "value": "dune", "label": "Title"},
                              {"name": "yr", "value": "1965", "label": None}]
    # GET: the fields replace the action's query string, as a browser does
    assert get["url"] == "https://books.example/search?q=dune&tag=a&tag=b"
    assert get["action"] == "https://books.example/search"


def test_mixed_file_in_auto_mode_and_strict_named_formats(tmp_path):
    f = tmp_path / "mixed.txt"
    f.write_text('http://a.example/s?q=1\n{"method": "POST", "action": "http://a.example/p", "fields": []}\n')
    assert [s["method"] for s in read_submissions(f)] == ["GET", "POST"]
    with pytest.raises(SubmissionsError, match=r"mixed.txt:2: a JSON line"):
        read_submissions(f, fmt="urls")
    with pytest.raises(SubmissionsError, match=r"mixed.txt:1: not a JSON object"):
        read_submissions(f, fmt="jsonl")


def _har(entries):
    return {"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "120"}, "entries": entries}}


def test_har_export_keeps_pages_and_form_posts_only(tmp_path):
    entries = [
        {"request": {"method": "GET", "url": "https://shop.example/search?kw=red+shoes&size=42",
                     "queryString": [{"name": "kw", "value": "red shoes"}, {"name": "size", "value": "42"}]},
         "response": {"status": 200, "content": {"mimeType": "text/html; charset=utf-8"}}},
        {"request": {"method": "GET", "url": "https://shop.example/logo.png"},
         "response": {"status": 200, "content": {"mimeType": "image/png"}}},
        {"request": {"method": "GET", "url": "data:image/gif;base64,R0lGOD"},
         "response": {"status": 200, "content": {"mimeType": "image/gif"}}},
        {"_resourceType": "document",
         "request": {"method": "POST", "url": "https://shop.example/advanced",
                     "postData": {"mimeType": "application/x-www-form-urlencoded",
                                  "params": [{"name": "brand", "value": "Acme"}, {"name": "max", "value": "50"}]}},
         "response": {"status": 200, "content": {"mimeType": "text/html"}}},
        {"request": {"method": "POST", "url": "https://shop.example/login",
                     "postData": {"mimeType": "application/x-www-form-urlencoded", "text": "user=bo&remember=1"}},
         "response": {"status": 200, "content": {"mimeType": "text/html"}}},
        {"_resourceType": "xhr", "request": {"method": "POST", "url": "https://shop.example/api",
                                             "postData": {"mimeType": "application/json", "text": "{}"}}},
    ]
    f = tmp_path / "session.json"   # detected by content, not by name
    f.write_text(json.dumps(_har(entries), indent=1))
    assert detect_format(f) == "har"
    subs = read_submissions(f)
    assert [(s["method"], s["url"]) for s in subs] == [
        ("GET", "https://shop.example/search?kw=red+shoes&size=42"),
        ("POST", "https://shop.example/advanced"),
        ("POST", "https://shop.example/login")]
    assert [(x["name"], x["value"]) for x in subs[0]["fields"]] == [("kw", "red shoes"), ("size", "42")]
    assert [(x["name"], x["value"]) for x in subs[1]["fields"]] == [("brand", "Acme"), ("max", "50")]
    assert [(x["name"], x["value"]) for x in subs[2]["fields"]] == [("user", "bo"), ("remember", "1")]


@pytest.mark.parametrize("content, fmt, message", [
    ("http://ok.example/?a=1\nfile:///etc/passwd\n", "auto", r"bad.txt:2: 'file:///etc/passwd' is not an http or https URL"),
    ("http://ok.example/?a=1\nhttp://x.example/a b\n", "auto", r"bad.txt:2: .* is not one URL"),
    ('{"method": "GET", "action": "http://a.example/"}\n{"method": "PUT", "action": "http://a.example/"}\n',
     "auto", r"bad.txt:2: method 'PUT' is not GET or POST"),
    ('{"method": "POST", "fields": []}\n', "auto", r"bad.txt:1: no 'action'"),
    ('{"method": "POST", "action": "http://a.example/",\n', "jsonl", r"bad.txt:1: not valid JSON"),
    ('{"action": "http://a.example/", "fields": "q=1"}\n', "auto", r"bad.txt:1: 'fields' must be"),
])
def test_bad_lines_name_the_file_and_line(tmp_path, content, fmt, message):
    f = tmp_path / "bad.txt"
    f.write_text(content)
    with pytest.raises(SubmissionsError, match=message) as err:
        read_submissions(f, fmt=fmt)
    assert isinstance(err.value, HwnoiseError)


def test_missing_file_and_unknown_format_are_clear(tmp_path):
    with pytest.raises(SubmissionsError, match="no such submissions file"):
        read_submissions(tmp_path / "nope.txt")
    (tmp_path / "a.txt").write_text("http://a.example/\n")
    with pytest.raises(SubmissionsError, match="unknown submissions format 'csv'"):
        read_submissions(tmp_path / "a.txt", fmt="csv")
    (tmp_path / "x.har").write_text('{"nolog": 1}')
    with pytest.raises(SubmissionsError, match=r"x.har: not a HAR file"):
        read_submissions(tmp_path / "x.har")


def test_method_prefixed_url_lines(tmp_path):
    f = tmp_path / "u.txt"
    f.write_text("POST https://a.example/find?q=tea&n=2\nGET https://a.example/find?q=tea#top\n")
    post, get = read_submissions(f)
    assert post["method"] == "POST" and post["url"] == "https://a.example/find"
    assert [(x["name"], x["value"]) for x in post["fields"]] == [("q", "tea"), ("n", "2")]
    assert get["url"] == "https://a.example/find?q=tea"       # the fragment is never sent
