"""``hwnoise extract URL``: a page fetched over real HTTP (a server on 127.0.0.1), as ``collect``
fetches it, then extracted as the same bytes in a file are; the fetcher's rules hold."""
from __future__ import annotations

import json

import pytest

from hwnoise.cli import main

#: A result page whose text needs its charset: windows-1252 bytes, declared only by the HTTP header.
PAGE = ("<html><head><title>Caf\xe9 search</title></head><body><div id=nav><a href=/>Home</a> "
        "<a href=/about>About</a></div><div id=results><h2>Caf\xe9 cr\xe8me</h2>"
        "<p>A long description of the caf\xe9 cr\xe8me, na\xefve and strong, with enough words to be "
        "the content of this page and not its menu.</p></div></body></html>").encode("cp1252")


def _extract(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["extract", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("charset", ["windows-1252", "koi8-r"])
def test_a_url_is_fetched_and_extracted_as_its_bytes_in_a_file_with_the_declared_charset(srv, tmp_path, capsys,
                                                                                        charset):
    """A URL given as a PAGE was taken for a file name ('http:/127.0.0.1:…: cannot read the page:
    No such file or directory'). It is fetched, and its text is what the same bytes give from a
    file read with the charset the response declared (the same bytes under KOI8-R read otherwise)."""
    srv.pages["cafe"] = (f"text/html; charset={charset}", PAGE)
    page = tmp_path / "cafe.html"
    page.write_bytes(PAGE)
    code, from_file, _ = _extract(capsys, str(page), "--charset", charset)
    assert code == 0 and ("Café crème" in from_file) == (charset == "windows-1252")
    code, fetched, err = _extract(capsys, srv.url("/served/cafe"), "--allow-private", "--delay", "0")
    assert (code, fetched) == (0, from_file), err


def test_urls_go_out_as_json_lines_with_the_final_url_and_a_failing_one_is_skipped(srv, capsys):
    srv.pages["cafe"] = ("text/html; charset=windows-1252", PAGE)
    moved = srv.url("/redirect?to=" + srv.url("/served/cafe"))
    urls = [moved, srv.url("/gone"), srv.url("/private/secret"), srv.url("/image")]
    code, out, err = _extract(capsys, *urls, "--allow-private", "--delay", "0", "--retries", "0")
    assert code == 1
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(r["page"], r["url"]) for r in lines] == [(moved, srv.url("/served/cafe"))]
    assert "Café crème" in lines[0]["text"]
    skipped = [line for line in err.splitlines() if line.startswith("hwnoise: extract: skipped ")]
    assert len(skipped) == 3
    assert srv.url("/gone") in skipped[0] and "404" in skipped[0]
    assert srv.url("/private/secret") in skipped[1] and "robots.txt" in skipped[1]
    assert srv.url("/image") in skipped[2]


def test_a_loopback_url_is_refused_unless_allowed_and_the_error_says_how(srv, capsys):
    srv.pages["cafe"] = ("text/html; charset=windows-1252", PAGE)
    hits = srv.hits("/served/cafe")
    code, out, err = _extract(capsys, srv.url("/served/cafe"))
    assert code == 1 and out == ""
    assert err.startswith("hwnoise: error: " + srv.url("/served/cafe")) and "--allow-private" in err
    assert srv.hits("/served/cafe") == hits  # nothing was sent


def test_records_of_a_fetched_page_carry_its_url(srv, capsys):
    rows = "".join(f"<li class=item><a href=/p{i}>Product {i}</a> <span>price {i}0 EUR</span> "
                   f"<span>in stock, ships in {i} days</span></li>" for i in range(1, 9))
    html = f"<html><body><div><a href=/>Home</a></div><ul id=results>{rows}</ul></body></html>"
    srv.pages["list"] = ("text/html; charset=utf-8", html.encode())
    code, out, err = _extract(capsys, srv.url("/served/list"), "--records", "--allow-private", "--delay", "0")
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert recs and all(r["page"] == srv.url("/served/list") and r["url"] == srv.url("/served/list") for r in recs)
