"""Page ids as file names (issue 14) and site_of as the registrable domain."""
from __future__ import annotations

import socket

import pytest

from hwnoise import dataset as dataset_mod
from hwnoise.dataset import Dataset, is_safe_id, safe_id, site_of


@pytest.mark.parametrize("pid", ["../../x", "sub/../../../x", "/etc/passwd", "..", ".", "", "a\x00b", "x" * 300,
                                 "C:\\windows\\x", "CON", "nul.txt", ".hidden", "a b", "é", 5, None, ["a"]])
def test_unsafe_ids_map_to_safe_distinct_names(pid):
    name = safe_id(pid)
    assert is_safe_id(name) and name != pid and "/" not in name and "\\" not in name
    assert len(name) <= 128 and safe_id(name) == name                     # idempotent


def test_safe_ids_are_kept_and_mapped_ids_do_not_collide():
    for pid in ("0a1b2c3d4e5f6a7b", "book-12", "page_3.v2", "A"):
        assert safe_id(pid) == pid
    mapped = {safe_id(p) for p in ("a/b", "a:b", "a b", "a\x00b", "../a/b")}
    assert len(mapped) == 5


def test_paths_built_from_ids_stay_in_the_folder(tmp_path):
    ds = Dataset.create(tmp_path / "ds")
    for pid in ("../../x", "/abs", "a\x00b", "y" * 400):
        for path in (ds.page_path(pid), ds.gold_file(pid), ds.write_page(pid, b"<p>x"), ds.write_gold(pid, "x")):
            assert path.parent.parent == ds.path
    assert not (tmp_path / "x.html").exists()


def test_a_page_file_named_by_hand_is_left_out_with_the_name_to_give_it(tmp_path):
    """A page dropped into pages/ under a name that is no page ID ("my page.html") was listed and
    then read from the file its ID maps to, which does not exist: every command skipped it naming
    that other file. It is left out with one warning that says what to rename it to, and read as
    a page once renamed."""
    import subprocess
    import sys

    ds = Dataset.create(tmp_path / "ds")
    ds.write_page("p1", b"<html><body><p>first page</p></body></html>")
    stray = ds.path / "pages" / "my page.html"
    stray.write_bytes(b"<html><body><p>dropped by hand</p></body></html>")
    code = ("from hwnoise.dataset import Dataset; d = Dataset(%r); "
            "print([p.id for p in d.pages()], [p.id for p in d.pages()])" % str(ds.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['p1'] ['p1']"
    want = safe_id("my page") + ".html"
    assert out.stderr.count("warning") == 1 and str(stray) in out.stderr and f"rename it to {want}" in out.stderr
    stray.rename(ds.path / "pages" / want)
    pages = {p.id: p for p in Dataset(ds.path).pages()}
    assert pages[want[:-5]].read_html() == b"<html><body><p>dropped by hand</p></body></html>"


def test_create_refuses_a_file_and_an_unwritable_place(tmp_path):
    (tmp_path / "f").write_text("keep")
    with pytest.raises(dataset_mod.DatasetError, match="not a folder"):
        Dataset.create(tmp_path / "f")
    with pytest.raises(dataset_mod.DatasetError, match="cannot create"):
        Dataset.create("/proc/hwnoise-no/ds")
    assert (tmp_path / "f").read_text() == "keep"


@pytest.mark.parametrize("url,site", [
    ("http://news.example.com/a", "example.com"), ("https://shop.example.com/b?q=1", "example.com"),
    ("http://www.example.com/", "example.com"), ("http://a.b.example.co.uk/", "example.co.uk"),
    ("https://alice.github.io/x", "alice.github.io"),           # a private suffix: one site per user
    ("http://127.0.0.1:8001/p", "127.0.0.1"), ("http://[::1]:80/", "::1"), ("http://localhost/x", "localhost"),
    ("http://EXAMPLE.ORG./", "example.org"), ("", ""), (None, ""), ("http://[::1", ""), ("not a url", ""),
])
def test_site_of_is_the_registrable_domain(url, site):
    assert site_of(url) == site


def test_site_of_needs_no_network(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("site_of touched the network")

    monkeypatch.setattr(dataset_mod, "_EXTRACT", None)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    assert site_of("http://news.bbc.co.uk/x") == site_of("http://shop.bbc.co.uk/") == "bbc.co.uk"


@pytest.mark.parametrize("query", ['{"term": "x"}', '["x", "y"]', '[{"kind": "name"}]', "5", "[" * 50_000])
def test_a_query_json_of_the_wrong_shape_is_one_clear_error(tmp_path, query):
    ds = Dataset.create(tmp_path / "ds")
    ds.query_path.write_text(query)
    with pytest.raises(dataset_mod.DatasetError, match="query.json"):
        ds.query_terms()


def test_a_page_asked_for_by_an_id_it_does_not_have_is_one_clear_error(tmp_path):
    """``Dataset.page`` of an unknown ID named the folder nowhere: it made a page of no
    submission, whose ``read_html`` was a bare FileNotFoundError. It is found by its name too."""
    ds = Dataset.create(tmp_path / "ds")
    sub = ds.add_submission({"url": "source:plain/html/cats.html", "name": "cats"})
    ds.write_page(sub["id"], b"<p>cats")
    with pytest.raises(dataset_mod.DatasetError, match=r"ds: no page 'nosuch' among its 1 submission\(s\) "
                                                       rf"\(IDs such as '{sub['id']}'"):
        ds.page("nosuch")
    assert ds.page("cats").id == sub["id"] and ds.page("cats").read_html() == b"<p>cats"
    assert ds.page(sub["id"]).read_html() == b"<p>cats"


def test_reading_a_submission_not_fetched_says_why_and_what_to_run(tmp_path):
    ds = Dataset.create(tmp_path / "ds")
    waiting, failed = (ds.add_submission({"url": f"http://example.org/?q={q}"}) for q in ("a", "b"))
    ds.append_journal({"submission": failed["id"], "error": "HTTP 503 after 3 attempts"})
    with pytest.raises(FileNotFoundError, match="has no page file: not fetched yet; 'hwnoise collect .*--retry-failed'"):
        ds.page(waiting["id"]).read_html()
    with pytest.raises(FileNotFoundError, match=r"its fetch failed \(HTTP 503 after 3 attempts\)"):
        ds.page(failed["id"]).read_html()
