"""The polite, safe fetcher against a real server on 127.0.0.1 that misbehaves."""
from __future__ import annotations

import email.utils
import time

import pytest

from misbehaving_server import DEFAULT_ROBOTS

from hwnoise.errors import HwnoiseError
from hwnoise.forms.fetch import (BlockedURL, BodyError, Fetcher, FetchError, RobotsDenied, RobotsRules,
                                 parse_retry_after)


def fetcher(**kw):
    opts = dict(allow_private=True, delay=0, backoff=0.01, timeout=(2, 2), robots=True)
    opts.update(kw)
    return Fetcher(**opts)


def requests_to(srv, prefix, since=0):
    return [entry for entry in srv.log[since:] if entry[2].startswith(prefix)]


def test_one_session_per_host_reuses_its_connection_and_names_hwnoise(srv):
    before = srv.connections
    with fetcher() as f:
        for i in range(20):
            res = f.fetch(srv.url(f"/page?i={i}"))
            assert res.status == 200 and f"<b>i</b> {i}" in res.body.decode()
    assert srv.connections - before <= 2           # keep-alive: not one connection per page
    assert "hwnoise" in srv.log[-1][4]
    with fetcher(user_agent="MyLab-crawler/2 (+mailto:me@example.org)") as f:
        f.fetch(srv.url("/page?ua=1"))
    assert srv.log[-1][4] == "MyLab-crawler/2 (+mailto:me@example.org)"


def test_slow_answer_hits_the_read_timeout(srv):
    with fetcher(timeout=(2, 0.3), retries=1) as f:
        with pytest.raises(FetchError) as err:
            f.fetch(srv.url("/slow?sleep=2"))
    assert "read timeout" in str(err.value) and srv.url("/slow?sleep=2") in str(err.value)
    assert err.value.attempts == 2


def test_reset_mid_body_is_retried_then_given_up(srv):
    with fetcher() as f:
        res = f.fetch(srv.url("/reset?key=once&fails=1"))
        assert res.status == 200 and res.attempts == 2 and b"after 1 resets" in res.body
        with pytest.raises(FetchError, match=r"/reset\?key=always: connection .*after 4 attempts") as err:
            f.fetch(srv.url("/reset?key=always"))
    assert len(requests_to(srv, "/reset?key=always")) == 4     # 1 + 3 retries
    assert err.value.attempts == 4


def test_500_twice_then_success(srv):
    with fetcher() as f:
        res = f.fetch(srv.url("/flaky?key=f1"))
    assert res.status == 200 and res.attempts == 3 and b"after 2 errors" in res.body
    assert len(requests_to(srv, "/flaky?key=f1")) == 3
    with fetcher(retries=1) as f, pytest.raises(FetchError, match=r"HTTP 500 \(after 2 attempts\)") as err:
        f.fetch(srv.url("/flaky?key=f2"))
    assert err.value.status == 500


def test_429_waits_as_long_as_retry_after_says(srv):
    n = len(srv.log)
    with fetcher(backoff=0) as f:
        res = f.fetch(srv.url("/busy?key=b1&after=1"))
    assert res.status == 200 and res.attempts == 2
    (t1, *_), (t2, *_) = requests_to(srv, "/busy?key=b1", n)
    assert t2 - t1 >= 0.95          # the server asked for 1 s; backoff alone would be 0
    # a Retry-After beyond the limit is not slept through
    with fetcher(max_retry_after=5) as f, pytest.raises(FetchError, match="Retry-After 3600 s exceeds"):
        f.fetch(srv.url("/busy?key=b2&after=3600"))


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after(when) <= 31
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("soon") is None


def test_endless_body_is_cut_off_and_big_body_refused_by_its_length(srv):
    with fetcher(max_bytes=200_000) as f:
        with pytest.raises(BodyError, match=r"/endless: body cut off after 200000 bytes"):
            f.fetch(srv.url("/endless"))
    with fetcher(max_bytes=10_000) as f, pytest.raises(BodyError, match=r"/big: body of 50026 bytes exceeds"):
        f.fetch(srv.url("/big"))


def test_a_body_that_is_not_what_its_content_encoding_says_is_one_clear_failure(srv):
    # a server that labels a plain body gzip: no retry (it would answer the same), status kept
    with fetcher() as f, pytest.raises(BodyError, match=r"/not-gzip: the body does not decode as its "
                                                        r"Content-Encoding \(gzip\) says: incorrect header"
                                                        r" check; not kept") as err:
        f.fetch(srv.url("/not-gzip"))
    assert err.value.status == 200 and err.value.attempts == 1 and srv.hits("/not-gzip") == 1


def test_the_size_limit_holds_after_decompression(srv):
    # 1 KB on the wire, 1 MB decoded: the limit is the page's, not the wire's
    with fetcher(max_bytes=100_000) as f, pytest.raises(BodyError, match=r"/gzip-bomb: body cut off after 100000"):
        f.fetch(srv.url("/gzip-bomb"))
    with fetcher(max_bytes=2_000_000) as f:
        assert len(f.fetch(srv.url("/gzip-bomb")).body) == 1_000_026


def test_content_type_check_and_http_errors(srv):
    with fetcher() as f:
        with pytest.raises(BodyError, match="content type 'image/png' is not HTML"):
            f.fetch(srv.url("/image"))
        with pytest.raises(FetchError, match=r"/gone: HTTP 404") as err:
            f.fetch(srv.url("/gone"))
    assert err.value.status == 404 and err.value.attempts == 1   # 404 is not retried


def test_declared_charset_is_reported_as_declared(srv):
    with fetcher() as f:
        res = f.fetch(srv.url("/wrong-charset"))
    assert res.http_charset == "ISO-8859-1"
    assert "São Paulo".encode("utf-8") in res.body          # bytes as received, untouched


def test_redirects_are_followed_recorded_and_limited(srv):
    with fetcher() as f:
        res = f.fetch(srv.url("/redirect?code=301&to=/page%3Fmoved%3D1"))
        assert res.final_url == srv.url("/page?moved=1")
        assert res.redirects == [{"url": srv.url("/redirect?code=301&to=/page%3Fmoved%3D1"), "status": 301,
                                  "location": srv.url("/page?moved=1")}]
    with fetcher(max_redirects=5) as f, pytest.raises(FetchError, match="more than 5 redirects") as err:
        f.fetch(srv.url("/loop"))
    assert len(err.value.redirects) == 6
    assert {h["url"] for h in err.value.redirects} == {srv.url("/loop"), srv.url("/loop2")}


def test_post_form_body_and_303_becomes_get(srv):
    with fetcher() as f:
        res = f.fetch(srv.url("/search"), "POST", [{"name": "item_name", "value": "café"},
                                                   {"name": "x", "value": "1"}])
        assert b"Results (POST)" in res.body and "café".encode() in res.body
        assert srv.log[-1][3] == b"item_name=caf%C3%A9&x=1"
        res = f.fetch(srv.url("/redirect?code=303&to=/search%3Fafter%3Dpost"), "POST",
                      [{"name": "a", "value": "b"}])
    assert srv.log[-1][1] == "GET" and b"Results (GET)" in res.body


@pytest.mark.parametrize("target, why", [
    ("file:///etc/passwd", "scheme 'file' refused"),
    ("data:text/html,<h1>hi</h1>", "scheme 'data' refused"),
    ("ftp://ftp.example.org/x", "scheme 'ftp' refused"),
    ("http://10.20.30.40/admin", "private, loopback or link-local address \\(10.20.30.40\\)"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
    ("http://[::1]:9/", "::1"),
])
def test_redirects_to_unsafe_targets_are_refused(srv, target, why):
    from urllib.parse import quote
    start = srv.url("/redirect?to=" + quote(target, safe=""))
    n = len(srv.log)
    # the test server is on 127.0.0.1: allow exactly that address, nothing else private
    with fetcher(allow_private=["127.0.0.1/32"]) as f, pytest.raises(BlockedURL, match=why) as err:
        f.fetch(start)
    assert str(err.value).startswith(start)                  # names the URL asked for
    assert err.value.redirects[0]["location"] == target
    assert len(srv.log) - n <= 2                             # robots.txt at most, and the redirect


def test_private_addresses_refused_by_default_after_dns(srv):
    with Fetcher(delay=0) as f:
        for url in (srv.url("/page"), f"http://localhost:{srv.port}/page", "http://169.254.169.254/",
                    "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/"):
            with pytest.raises(BlockedURL, match="private, loopback or link-local") as err:
                f.fetch(url)
            assert isinstance(err.value, HwnoiseError) and url in str(err.value)
        # the check also sits on the connection itself (a DNS answer that changes after the
        # check cannot slip through): bypass the URL check and the socket is still refused
        with pytest.raises(BlockedURL, match="127.0.0.1"):
            f._exchange("GET", srv.url("/page"), None, None, True, 1000)


def test_robots_txt_disallow_and_crawl_delay(srv):
    srv.robots = "User-agent: *\nDisallow: /private\nCrawl-delay: 0.4\n"
    try:
        n = len(srv.log)
        with fetcher() as f:
            with pytest.raises(RobotsDenied, match=r"/private/x: disallowed by .*robots.txt"):
                f.fetch(srv.url("/private/x"))
            f.fetch(srv.url("/page?cd=1"))
            f.fetch(srv.url("/page?cd=2"))
        log = srv.log[n:]
        assert [e[2] for e in log] == ["/robots.txt", "/page?cd=1", "/page?cd=2"]   # robots read once
        assert log[2][0] - log[1][0] >= 0.38
        with fetcher(robots=False) as f:
            assert f.fetch(srv.url("/private/x")).status == 200
        srv.robots = "500"
        with fetcher(retries=0) as f, pytest.raises(RobotsDenied, match="could not be read"):
            f.fetch(srv.url("/page?r=500"))
        srv.robots = None            # 404: no rules
        with fetcher() as f:
            assert f.fetch(srv.url("/private/y")).status == 200
    finally:
        srv.robots = "User-agent: *\nDisallow: /private\n"


def test_per_host_delay_between_requests(srv):
    n = len(srv.log)
    with fetcher(delay=0.3, robots=False) as f:
        for i in range(3):
            f.fetch(srv.url(f"/page?d={i}"))
    times = [e[0] for e in requests_to(srv, "/page?d=", n)]
    assert len(times) == 3 and all(b - a >= 0.29 for a, b in zip(times, times[1:]))


def test_robots_rules_rfc9309():
    txt = """
# comments and unknown lines are ignored
Sitemap: https://x.example/sitemap.xml
User-agent: *
Disallow: /search
Allow: /search/about$
Disallow: /*?sessionid=
Crawl-delay: 10

User-agent: Googlebot
User-agent: hwnoise/0.1
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$
Crawl-delay: 0.5
"""
    ours = RobotsRules(txt)
    assert ours.crawl_delay == 0.5                      # our own group, not *
    assert not ours.allowed("http://x.example/private/a")
    assert ours.allowed("http://x.example/private/open/1")   # the longer Allow wins
    assert not ours.allowed("http://x.example/doc/a.pdf")
    assert ours.allowed("http://x.example/doc/a.pdf?x=1")    # $ anchors the end
    assert ours.allowed("http://x.example/search?q=1")       # * group does not apply to us
    other = RobotsRules(txt, token="somebot")
    assert other.crawl_delay == 10
    assert not other.allowed("http://x.example/search?q=1")
    assert other.allowed("http://x.example/search/about")
    assert not other.allowed("http://x.example/search/about/more")
    assert not other.allowed("http://x.example/list?sessionid=9")
    assert other.allowed("http://x.example/list?page=2&sessionid=9")
    assert other.allowed("http://x.example/robots.txt")
    # percent-encoding compared decoded; equal length: Allow wins
    enc = RobotsRules("User-agent: *\nDisallow: /caf%C3%A9\nAllow: /a\nDisallow: /a\n")
    assert not enc.allowed("http://x.example/café/menu")
    assert enc.allowed("http://x.example/a")
    assert RobotsRules("").allowed("http://x.example/anything")
    assert RobotsRules("User-agent: *\nDisallow:\n").allowed("http://x.example/anything")


def test_a_redirect_s_body_is_neither_read_whole_nor_kept(srv):
    # requests previews the next request even when not following redirects, and that preview
    # read the whole body of a redirect before the body limit applied (an endless or gzip-bomb
    # body took gigabytes). Now the body is bounded, and one too big or undecodable is dropped.
    with fetcher(max_bytes=100_000) as f:
        res = f.fetch(srv.url("/redirect-body?key=rb1&n=50000000"))
        assert res.status == 200 and res.final_url == srv.url("/page?after=redirect-body")
        assert res.redirects[0]["status"] == 302
        res = f.fetch(srv.url("/redirect-body?key=rb2&n=40&enc=gzip"))    # a body that is not gzip
        assert res.status == 200 and res.final_url == srv.url("/page?after=redirect-body")
    assert srv.counters[("redirect-body-sent", "rb1")] == 0              # the 50 MB were not read


def test_a_retry_after_of_digits_that_are_not_ascii_is_ignored(srv):
    # 'Retry-After: ²' (byte 0xB2, read as latin-1): str.isdigit() is true of it and float()
    # then raised ValueError out of the fetcher; it is no delay, so the backoff applies
    assert parse_retry_after("\xb2") is None and parse_retry_after("\u0663") is None
    with fetcher() as f:
        res = f.fetch(srv.url("/busy?key=b3&after=%C2%B2"))
    assert res.status == 200 and res.attempts == 2


def test_a_location_in_utf8_is_followed_as_browsers_do(srv):
    # http.client reads header bytes as latin-1: a UTF-8 Location "/page?q=café" was followed
    # to /page?q=caf%C3%83%C2%A9 (mojibake); bytes that are not UTF-8 go percent-encoded
    from urllib.parse import quote
    n = len(srv.log)
    with fetcher() as f:
        res = f.fetch(srv.url("/redirect-raw?to=" + quote("/page?q=café")))
        assert res.final_url == srv.url("/page?q=café") == res.redirects[0]["location"]
        assert "<b>q</b> café" in res.body.decode()
        res = f.fetch(srv.url("/redirect-raw?enc=latin-1&to=" + quote("/page?q=caf\xe9")))
        assert res.final_url == srv.url("/page?q=caf%E9")
    assert [e[2] for e in requests_to(srv, "/page", n)] == ["/page?q=caf%C3%A9", "/page?q=caf%E9"]


def test_a_compressed_body_cut_short_is_not_kept_as_a_page(srv):
    # urllib3 hands out what a cut gzip, deflate or brotli stream decodes to, without a word:
    # half a page (an empty one for brotli) was kept as the page, journaled as a success
    import importlib.util
    encodings = ["gzip", "deflate"] + (["br"] if importlib.util.find_spec("brotli") else [])
    with fetcher() as f:
        for enc in encodings:
            with pytest.raises(BodyError, match=rf"/cut-short\?enc={enc}: the body does not decode as its "
                                                rf"Content-Encoding \({enc}\) says: its compressed stream is "
                                                r"cut short") as err:
                f.fetch(srv.url(f"/cut-short?enc={enc}"))
            assert err.value.status == 200 and err.value.attempts == 1


def test_a_redirect_without_a_location_is_an_error_not_an_empty_page(srv):
    # its body was dropped as a redirect's, and the answer kept as a page: 0 bytes, status 302
    with fetcher() as f:
        for code in (301, 302, 303, 307, 308):
            with pytest.raises(FetchError, match=rf"/redirect\?code={code}: HTTP {code} without a Location") as err:
                f.fetch(srv.url(f"/redirect?code={code}"))
            assert err.value.status == code and err.value.attempts == 1


def test_a_content_type_sent_twice_is_read_as_browsers_read_it(srv):
    """Two Content-Type headers (requests joins them: 'text/html, text/html') made the page
    refused as "content type 'text/html, text/html' is not HTML"; browsers take the last MIME type
    that parses, and keep an earlier charset when the same type comes again without one."""
    with fetcher() as f:
        res = f.fetch(srv.url("/two-types"))
        assert res.status == 200 and b"two types" in res.body and res.http_charset is None
        assert f.fetch(srv.url("/two-types?second=text/html;%20charset=koi8-r")).http_charset == "koi8-r"
        with pytest.raises(FetchError, match="content type 'image/png' is not HTML"):
            f.fetch(srv.url("/two-types?second=image/png"))


@pytest.mark.parametrize("line", ["Garbage line here", "Bad Name: spaces in it", "HTTP/1.1 200 OK"])
def test_a_header_line_browsers_skip_does_not_hide_the_headers_after_it(srv, line):
    # http.client's header parser stopped at a line without a colon (or whose name is not a
    # token): the headers after it were lost. Kept alive, the body (its length lost) was read
    # until the server closed: "read timeout"; closed, the page lost its charset, and a chunked
    # one was kept with its chunk sizes in it. Browsers skip such a line and read on.
    from urllib.parse import quote

    with fetcher(retries=0) as f:
        for frame in ("length", "chunked"):
            for close in ("", "1"):
                res = f.fetch(srv.url(f"/odd-header?frame={frame}&close={close}&line={quote(line)}"))
                assert res.status == 200 and res.http_charset == "utf-8" and line not in str(res.headers)
                assert res.body.startswith(b"<!DOCTYPE html>") and res.body.endswith(b"</html>")
                assert b"(odd header)" in res.body


def test_a_transfer_coding_browsers_do_not_decode_is_one_clear_failure(srv):
    # 'Transfer-Encoding: gzip, chunked' was de-chunked and the gzip bytes kept as the page;
    # 'gzip' alone, kept alive, was read until a read timeout. No browser decodes gzip as a
    # transfer coding: refused at once, naming the header, not retried
    with fetcher() as f:
        for te in ("gzip, chunked", "gzip", "chunked, gzip", "x-frob, chunked"):
            coded = te.replace("chunked", "").strip(", ")
            with pytest.raises(BodyError, match=rf"/transfer-coded\?te={te}: Transfer-Encoding '{te}': the body is "
                                                rf"sent with the transfer coding '{coded}', which browsers do not "
                                                r"decode; not kept") as err:
                f.fetch(srv.url(f"/transfer-coded?te={te}"))
            assert err.value.status == 200 and err.value.attempts == 1
        assert b"<b>after</b> te" in f.fetch(srv.url("/page?after=te")).body    # the next page unharmed


#: answers whose headers Chromium reads (more than 100 lines; a line over 64 KiB), and one it refuses
#: (ERR_RESPONSE_HEADERS_TOO_BIG: over 256 KiB), as checked by test_chromium_reads_the_same_headers
READ_HEADERS, REFUSED_HEADERS = ("/many-headers?n=101", "/many-headers?n=5000", "/many-headers?line=100000",
                                 "/many-headers?connection=100000", "/many-headers?connection=100000&last=close"), \
    "/many-headers?n=100&line=270000"


def test_headers_a_browser_reads_are_read_and_more_is_one_clear_failure(srv):
    # http.client refused more than 100 header lines, or one over 64 KiB, and the fetch was
    # retried ('connection error: ...got more than 100 headers'); Chromium reads any number of
    # lines within 256 KiB in all
    with fetcher(retries=2) as f:
        for path in READ_HEADERS:
            res = f.fetch(srv.url(path))
            assert res.status == 200 and res.http_charset == "utf-8" and b"(many headers)" in res.body
            assert res.body.endswith(b"</html>") and res.attempts == 1
        assert f.fetch(srv.url("/many-headers?line=100000")).headers["x-long"] == "a" * 100000
        assert f.fetch(srv.url("/many-headers?n=5000")).headers["x-h4999"] == "v"
        # a framing header (here Connection) over 64 KiB: http.client's LineTooLong was raised when
        # its line was handed on to begin(); its framing facts are kept, the whole line in the headers
        for last in ("keep-alive", "close"):
            res = f.fetch(srv.url(f"/many-headers?connection=100000&last={last}"))
            assert res.status == 200 and b"(many headers)" in res.body and res.attempts == 1
            assert len(res.headers["connection"]) > 65536 and res.headers["connection"].endswith(last)
        since = len(srv.log)
        with pytest.raises(BodyError, match=r"/many-headers\?n=100&line=270000: the response headers exceed "
                                            r"256 KiB, the most a browser reads .*; not kept$") as err:
            f.fetch(srv.url(REFUSED_HEADERS))
        assert err.value.attempts == 1 and len(requests_to(srv, "/many-headers", since)) == 1   # not retried
        assert b"<b>after</b> h" in f.fetch(srv.url("/page?after=h")).body    # the next page unharmed


@pytest.mark.skipif(not __import__("os").path.exists("/usr/bin/chromium"), reason="no /usr/bin/chromium")
def test_chromium_reads_the_same_headers(srv):
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = browser.new_page()
            for path in READ_HEADERS:
                assert page.goto(srv.url(path)).status == 200 and "(many headers)" in page.content()
            with pytest.raises(Error, match="ERR_RESPONSE_HEADERS_TOO_BIG"):
                page.goto(srv.url(REFUSED_HEADERS))
        finally:
            browser.close()


def test_a_robots_txt_past_the_limit_is_read_up_to_it(srv, capsys):
    # RFC 9309 2.5: parse at least 500 KiB, the rest may be left out (Google does). One longer was
    # 'could not be read': nothing fetched from the host, and the user told to raise --max-bytes,
    # which sets no robots.txt limit
    from hwnoise.forms.fetch import ROBOTS_MAX_BYTES

    head = "User-agent: *\nDisallow: /private\n"
    srv.robots = head + "# padding\n" * (ROBOTS_MAX_BYTES // 10) + "Disallow: /page\n"
    try:
        with fetcher() as f:
            assert f.fetch(srv.url("/page?robots=long")).status == 200      # a rule past the limit: left out
            with pytest.raises(RobotsDenied, match="disallowed by"):          # one before it: followed
                f.fetch(srv.url("/private/long"))
        assert "robots.txt is longer than 512 KiB; its rules in the first 512 KiB are followed" in \
            capsys.readouterr().err
        srv.robots = head + "# padding\n" * (ROBOTS_MAX_BYTES // 10 - 4)       # under the limit: no message
        with fetcher() as f:
            f.fetch(srv.url("/page?robots=short"))
        assert "longer than" not in capsys.readouterr().err
    finally:
        srv.robots = DEFAULT_ROBOTS


def test_no_answer_and_an_answer_that_is_not_http_are_named_so(srv):
    # were "connection error: ('Connection aborted.', RemoteDisconnected('Remote end closed connection
    # without response" and "... BadStatusLine('GARBAGE\r\n": a repr cut off mid-quote
    with fetcher(retries=0) as f:
        with pytest.raises(FetchError) as caught:
            f.fetch(srv.url("/no-answer"))
        assert "/no-answer: the server closed the connection without answering (after 1 attempt)" in str(caught.value)
        with pytest.raises(FetchError) as caught:
            f.fetch(srv.url("/not-http"))
        assert "/not-http: the answer is not HTTP (it begins 'GARBAGE\\r\\n', no status line)" in str(caught.value)


def test_an_answer_that_is_not_http_is_not_retried_and_a_closed_connection_once(srv):
    # both were retried as a transient error, four requests with --retries 3. Bytes that are no
    # HTTP come again on every try (no browser or crawler tries again); a connection closed without
    # an answer may be a keep-alive connection the server closed as it was reused (Chromium sends
    # the request again once then), so it is tried once more, not more
    with fetcher(retries=3) as f:
        n = len(srv.log)
        with pytest.raises(FetchError) as caught:
            f.fetch(srv.url("/not-http?key=retries"))
        assert len(requests_to(srv, "/not-http", n)) == 1 and caught.value.attempts == 1
        assert "the answer is not HTTP (it begins 'GARBAGE\\r\\n', no status line); not retried" in str(caught.value)
        n = len(srv.log)
        with pytest.raises(FetchError) as caught:
            f.fetch(srv.url("/no-answer?key=retries"))
        assert len(requests_to(srv, "/no-answer", n)) == 2 and caught.value.attempts == 2
        assert "the server closed the connection without answering (after 2 attempts)" in str(caught.value)
    with fetcher(retries=0) as f:                                  # no retries asked: none
        n = len(srv.log)
        with pytest.raises(FetchError) as caught:
            f.fetch(srv.url("/no-answer?key=retries0"))
        assert len(requests_to(srv, "/no-answer", n)) == 1 and caught.value.attempts == 1


def test_counts_of_one_are_said_in_the_singular(srv):
    # "after 1 attempts", "the maximum of 1 bytes", "more than 1 redirects"
    with fetcher(retries=0) as f, pytest.raises(FetchError) as caught:
        f.fetch(srv.url("/flaky?key=singular"))
    assert str(caught.value).endswith("/flaky?key=singular: HTTP 500 (after 1 attempt)")
    with fetcher(max_bytes=1) as f:
        with pytest.raises(BodyError, match=r"/big: body of 50026 bytes exceeds the maximum of 1 byte \(raise"):
            f.fetch(srv.url("/big"))
        with pytest.raises(BodyError, match=r"/endless: body cut off after 1 byte, the maximum"):
            f.fetch(srv.url("/endless"))
    with fetcher(max_redirects=1) as f, pytest.raises(FetchError, match=r"more than 1 redirect \(a redirect loop\)"):
        f.fetch(srv.url("/loop"))
