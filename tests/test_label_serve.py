"""``hwnoise label --serve``: the labelling page, in real Chromium over real HTTP on 127.0.0.1."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset

CHROMIUM = "/usr/bin/chromium"
FIGURE = Path(__file__).resolve().parent.parent / "docs" / "figures" / "label-page.png"


class _Outside(BaseHTTPRequestHandler):
    """A server standing for the rest of the web: it counts every request that reaches it."""
    hits: list[str] = []

    def do_GET(self):  # noqa: N802
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.fixture()
def outside():
    _Outside.hits = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Outside)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", _Outside.hits
    srv.shutdown()
    srv.server_close()


def _page(term: str, other: str) -> bytes:
    recs = "".join(f"<li><h3>{term.title()} book number {i}: a long and useful title</h3>"
                   f"<p>About {term}, in stock, {i} copies, ships from our warehouse.</p></li>"
                   for i in range(1, 4))
    return (f"<html><head><title>{term}</title><link rel='stylesheet' href='{other}/s.css'>"
            f"<script>fetch('{other}/fetch?{term}')</script></head>"
            f"<body><div id='nav'><a href='{other}/home'>Home</a> <a href='/about'>About us</a></div>"
            f"<h1>Results for {term}</h1><img src='{other}/img.png'><img src='/local.png'>"
            f"<ul>{recs}</ul><div onclick=\"fetch('{other}/click')\"><p>Copyright 2026 Example "
            f"Books. All rights reserved.</p></div></body></html>").encode()


@pytest.fixture()
def crawl(tmp_path, outside):
    other, _ = outside
    ds = Dataset.create(tmp_path / "shop", name="shop", source="test")
    for term in ("gardens", "rivers", "bridges"):
        sub = ds.add_submission({"url": f"http://shop.example/?q={term}",
                                 "fields": [{"name": "q", "value": term}]})
        ds.write_page(sub["id"], _page(term, other))
    ds.write_query([{"term": t, "kind": "value", "submissions": []}
                    for t in ("gardens", "rivers", "bridges")])
    weights = tmp_path / "equal-weights.json"
    weights.write_text('{"bias": 0, "weights": {"sitelevel": 1, "query": 1, "cetd": 1, "records": 1}}')
    assert main(["label", str(ds.path), "--auto", "--no-general", "--extractors", "",
                 "--weights", str(weights)]) == 0
    return ds


def _get(url: str, data: bytes | None = None) -> int:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_requests_without_the_token_are_refused(crawl):
    from hwnoise.labelling.serve import make_server

    srv = make_server(crawl)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = srv.url.split("?")[0]
        pid = crawl.page_ids()[0]
        before = crawl.labels_path.read_bytes()
        assert _get(srv.url) == 200
        assert _get(base) == 403
        assert _get(base + "?t=wrong") == 403
        assert _get(f"{base}frame/{pid}") == 403
        assert _get(f"{base}api/label", b'{"page": "%s", "node": 0, "label": "N"}' % pid.encode()) == 403
        assert crawl.labels_path.read_bytes() == before  # nothing written
        assert _get(f"{base}frame/..%2f..%2fetc?t={srv.token}") in (400, 404)
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_post_whose_body_is_not_a_json_object_is_a_400(crawl):
    import json

    from hwnoise.labelling.serve import make_server

    srv = make_server(crawl)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = srv.url.split("?")[0]
        before = crawl.labels_path.read_bytes()
        for path, want in (("api/label", '{"page": ..., "node": ..., "label": "S"|"N"}'),
                           ("api/check", '{"page": ..., "checked": true}')):
            for body in (b"[1]", b'"x"', b"3", b"null"):
                req = urllib.request.Request(f"{base}{path}?t={srv.token}", data=body,
                                             headers={"Content-Type": "application/json"})
                with pytest.raises(urllib.error.HTTPError) as err:
                    urllib.request.urlopen(req, timeout=30)
                assert err.value.code == 400, (path, body)
                msg = json.loads(err.value.read())["error"]
                assert msg == f"the body must be a JSON object such as {want}", (path, body)
        assert crawl.labels_path.read_bytes() == before  # nothing written
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_post_of_bad_json_or_a_negative_length_is_a_400(crawl):
    """A body nested too deeply was a 500 (RecursionError); a negative Content-Length made the
    handler read until the client hung up."""
    import http.client
    import json
    from urllib.parse import urlsplit

    from hwnoise.labelling.serve import make_server

    srv = make_server(crawl)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = srv.url.split("?")[0]
        for body, says in ((b"{bad", "the request body: not valid JSON: Expecting property name"),
                           (b"[" * 100_000, "the request body: JSON nested too deeply"),
                           (b'"\xff"', "the request body: not JSON text in UTF-8")):
            req = urllib.request.Request(f"{base}api/label?t={srv.token}", data=body,
                                         headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=30)
            assert err.value.code == 400 and json.loads(err.value.read())["error"].startswith(says)
        where = urlsplit(base)
        conn = http.client.HTTPConnection(where.hostname, where.port, timeout=20)
        conn.putrequest("POST", f"/api/label?t={srv.token}")
        conn.putheader("Content-Length", "-1")
        conn.endheaders()
        answer = conn.getresponse()
        assert answer.status == 400 and b"negative Content-Length" in answer.read()
        conn.close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_cli_serves_on_loopback_with_token(crawl):
    exe = Path(sys.executable).with_name("hwnoise")
    proc = subprocess.Popen([str(exe), "label", str(crawl.path), "--serve", "--port", "0", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?t=" in url
        assert _get(url) == 200
        assert _get(url.split("?")[0]) == 403
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_browser_shows_page_click_flips_label_on_screen_and_disk(crawl, outside, tmp_path):
    _, hits = outside
    with _in_chromium(crawl) as (srv, browser):
        page = browser.new_page(viewport={"width": 1100, "height": 620})
        page.goto(srv.url)
        frame = page.frame_locator("#frame")
        h3 = frame.locator("li:nth-child(1) > h3")
        h3.wait_for()
        # the app marks the page shown on <body> last, after its status request: wait for it
        page.wait_for_function(
            "() => { const d = document.getElementById('frame').contentDocument;"
            " return d && d.querySelectorAll('[data-hw-label=\"N\"]').length > 0"
            " && document.body.getAttribute('data-page'); }")
        pid = page.evaluate("document.body.getAttribute('data-page')")
        assert pid
        node = int(h3.get_attribute("data-hw-node"))
        before = h3.get_attribute("data-hw-label")
        assert before == "N"
        # the template (the nav links) is drawn as noise
        assert frame.locator("#nav > a").first.get_attribute("data-hw-label") == "S"
        shot = tmp_path / "label-page.png"
        page.screenshot(path=str(shot))
        if os.environ.get("HWNOISE_UPDATE_FIGURES"):
            FIGURE.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(shot, FIGURE)
        h3.click()
        page.wait_for_function(
            f"() => document.getElementById('frame').contentDocument"
            f".querySelector('[data-hw-node=\"{node}\"]').getAttribute('data-hw-label') === 'S'")
        page.wait_for_function("() => document.getElementById('saved').textContent.includes('saved')")
        lab = Dataset(crawl.path).read_labels()
        mine = lab[(lab["page"] == pid) & (lab["node"] == node) & (lab["set_by"] == "person")]
        assert len(mine) == 1 and mine.iloc[0]["label"] == "S"
        # a key marks the page checked, saved too
        page.keyboard.press("c")
        page.wait_for_function("() => document.getElementById('checked').checked")
        lab = Dataset(crawl.path).read_labels()
        assert lab.loc[lab["page"] == pid, "checked"].all()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => document.body.getAttribute('data-page') !== '{pid}'")
    # nothing the stored pages asked for (stylesheet, script fetch, images, handlers) left
    # the labelling server; its own-origin image was refused for want of the token
    assert hits == []
    assert srv.refused >= 1


def _serve(ds):
    from hwnoise.labelling.serve import make_server

    srv = make_server(ds)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@contextlib.contextmanager
def _served(ds):
    """The labelling server on ``ds``, running in a thread, shut after the block."""
    srv = _serve(ds)
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def _browser(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])


@contextlib.contextmanager
def _in_chromium(ds):
    """The labelling server on ``ds`` and a Chromium driven by Playwright: ``(server, browser)``,
    both ended after the block whatever it did."""
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    with _served(ds) as srv, sync_playwright() as pw:
        browser = _browser(pw)
        try:
            yield srv, browser
        finally:
            browser.close()


def _frame_js(page, expr: str):
    """``expr`` evaluated with ``d`` the frame's document."""
    return page.evaluate(f"(() => {{ const d = document.getElementById('frame').contentDocument; return {expr}; }})()")


def _one_page(tmp_path, html: str, auto: bool = True) -> Dataset:
    ds = Dataset.create(tmp_path / "one", name="one", source="test")
    sub = ds.add_submission({"url": "http://shop.example/?q=x", "fields": [{"name": "q", "value": "x"}]})
    ds.write_page(sub["id"], html.encode())
    if auto:
        weights = tmp_path / "w.json"
        weights.write_text('{"bias": 0, "weights": {"sitelevel": 1, "query": 1, "cetd": 1, "records": 1}}')
        assert main(["label", str(ds.path), "--auto", "--no-general", "--extractors", "",
                     "--weights", str(weights)]) == 0
    return ds


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_a_page_without_automatic_labels_is_shown_and_labelled(tmp_path):
    """A node with no label had confidence NaN in /api/labels, which is not JSON: the app threw
    and drew nothing, and a click labelled nothing (served before --auto, or a page crawled after)."""
    import json

    ds = _one_page(tmp_path, "<html><body><h1>Results for x</h1><p>One result about x.</p></body></html>",
                   auto=False)
    with _in_chromium(ds) as (srv, browser):
        pid = ds.page_ids()[0]
        with urllib.request.urlopen(f"{srv.url.split('?')[0]}api/labels/{pid}?t={srv.token}", timeout=30) as r:
            nodes = json.loads(r.read(), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))["nodes"]
        assert nodes and all(n["confidence"] is None and n["label"] is None for n in nodes)
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url)
        page.wait_for_function(f"() => document.body.getAttribute('data-page') === '{pid}'")
        h1 = page.frame_locator("#frame").locator("h1")
        h1.click()
        page.wait_for_function("() => document.getElementById('saved').textContent.includes('saved')")
        assert h1.get_attribute("data-hw-label") == "N" and errors == []
        lab = Dataset(ds.path).read_labels()
        assert list(lab.loc[lab["xpath"] == "/html/body/h1[1]", "label"]) == ["N"]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_a_middle_click_on_a_stored_link_opens_nothing(tmp_path, outside):
    """A middle click fires auxclick, not click: the link opened in a new tab (the sandbox lets a
    user's new tab through, the frame's CSP does not cover it) and the request left the server."""
    other, hits = outside
    ds = _one_page(tmp_path, f"<html><body><h1>Results for x</h1><p>One result: <a id='out' "
                             f"href='{other}/middle'>a link to elsewhere</a></p></body></html>")
    with _in_chromium(ds) as (srv, browser):
        context = browser.new_context()
        page = context.new_page()
        page.goto(srv.url)
        page.wait_for_function("() => document.body.getAttribute('data-page')")
        link = page.frame_locator("#frame").locator("#out")
        link.click(button="middle")
        link.click(modifiers=["Control"])
        link.click(modifiers=["Shift"])
        page.wait_for_timeout(1500)
        assert [p.url for p in context.pages] == [page.url]
    assert hits == []


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_a_stored_page_cannot_loosen_the_referrer_policy(tmp_path):
    """``<meta name=referrer content=unsafe-url>`` (or a ``referrerpolicy`` attribute) overrode the
    frame's ``Referrer-Policy: no-referrer``: whatever the frame then asked for or opened carried
    its URL, the token with it (a link opened in a new tab sent it to the link's host)."""
    ds = _one_page(tmp_path, "<html><head><meta name='referrer' content='unsafe-url'></head><body>"
                             "<h1>Results for x</h1><p>One result <img src='/meta.png'>"
                             "<img src='/attr.png' referrerpolicy='unsafe-url'></p></body></html>")
    with _in_chromium(ds) as (srv, browser):
        page = browser.new_page()
        sent = {}
        page.on("request", lambda r: sent.__setitem__(r.url.split("/")[-1], r.headers.get("referer")))
        page.goto(srv.url)
        page.wait_for_function("() => document.body.getAttribute('data-page')")
        page.wait_for_timeout(500)
    assert set(sent) >= {"meta.png", "attr.png"}
    assert not sent["meta.png"] and not sent["attr.png"], sent  # no Referer (Playwright says "")


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_markup_in_a_foreign_style_stays_text(tmp_path):
    """lxml keeps ``<svg><style>``'s text raw and wrote it back raw, but a browser parses a style
    under ``<svg>``/``<math>`` as markup: the frame came alive with a ``<meta http-equiv=refresh>``
    and elements the sanitiser never saw (here one claiming to be node 1)."""
    ds = _one_page(tmp_path, "<html><head><style><!-- h1 { color: rgb(1, 2, 3) } --></style></head><body>"
                             "<h1>Results for x</h1><p>One result</p>"
                             "<svg><style><meta http-equiv='refresh' content='0;url=/r'>"
                             "<p id='in-svg' data-hw-node='1'>x</p></style></svg><math><mtext><table>"
                             "<mglyph><style><img id='in-math' src='/m.png'></style></mglyph></table></mtext>"
                             "</math></body></html>")
    with _in_chromium(ds) as (srv, browser):
        page = browser.new_page()
        said = []
        page.on("console", lambda m: said.append(m.text))
        page.goto(srv.url)
        page.wait_for_function("() => document.body.getAttribute('data-page')")
        page.wait_for_timeout(500)
        assert _frame_js(page, "d.querySelectorAll('meta[http-equiv=refresh], #in-svg, #in-math').length") == 0
        assert _frame_js(page, "getComputedStyle(d.querySelector('h1')).color") == "rgb(1, 2, 3)"
        assert not [s for s in said if "refresh" in s]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_a_stored_page_cannot_name_its_own_nodes(tmp_path):
    """A page's own ``data-hw-node`` on an element the walk does not show (a ``<canvas>``'s
    fallback, which a frame without scripts shows) was kept: a click on it flipped the node it
    named (here the h1 alone), and the app drew that node's label on it."""
    ds = _one_page(tmp_path, "<html><body><h1>Results for x</h1><p>One result</p><canvas>"
                             "<p id='fake' data-hw-node='1' data-hw-label='N'>Click me</p></canvas></body></html>")
    with _in_chromium(ds) as (srv, browser):
        page = browser.new_page()
        page.goto(srv.url)
        page.wait_for_function("() => document.body.getAttribute('data-page')")
        fake = page.frame_locator("#frame").locator("#fake")
        assert fake.is_visible()
        assert fake.get_attribute("data-hw-node") is None
        fake.click()
        page.wait_for_timeout(1000)
    lab = Dataset(ds.path).read_labels()
    # the click went to the nearest element the walk shows: the body (node 0) and its subtree
    assert 0 in set(lab.loc[lab["set_by"] == "person", "node"])


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_a_page_that_needs_scripts_shows_its_noscript_nodes(tmp_path):
    """A page with its text in ``<noscript>`` is walked as a browser without scripts shows it,
    the noscript content being the rows; the frame dropped every ``<noscript>``, so such a page
    was blank with nothing to click."""
    ds = _one_page(tmp_path, "<html><body><noscript><div><h1>Results for x, the whole list</h1>"
                             "<p>One result about x, in stock, ships from our warehouse today.</p>"
                             "</div></noscript></body></html>")
    with _in_chromium(ds) as (srv, browser):
        page = browser.new_page()
        page.goto(srv.url)
        page.wait_for_function("() => document.body.getAttribute('data-page')")
        n = page.evaluate("nodes.length")
        assert n > 2 and _frame_js(page, "d.querySelectorAll('[data-hw-node]').length") == n
        h1 = page.frame_locator("#frame").locator("h1")
        assert h1.is_visible()
        node = int(h1.get_attribute("data-hw-node"))
        before = h1.get_attribute("data-hw-label")
        h1.click()
        page.wait_for_function(f"() => document.getElementById('frame').contentDocument.querySelector("
                               f"'[data-hw-node=\"{node}\"]').getAttribute('data-hw-label') !== '{before}'")


def _refused(url: str, body: bytes) -> str:
    """POST ``body`` as JSON to ``url``, which must answer 400: its error message."""
    import json

    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=30)
    assert err.value.code == 400
    return json.loads(err.value.read())["error"]


def test_a_label_post_whose_node_is_not_a_number_is_a_400(crawl):
    """A node of null, a list or 1e400 raised TypeError/OverflowError in int(): a 500."""
    with _served(crawl) as srv:
        base = srv.url.split("?")[0]
        before = crawl.labels_path.read_bytes()
        pid = crawl.page_ids()[0]
        for node in ("null", "[1]", "1e400", '{"a": 1}'):
            body = b'{"page": "%s", "node": %s, "label": "N"}' % (pid.encode(), node.encode())
            assert _refused(f"{base}api/label?t={srv.token}", body) == "want {page, node, label: S|N}", node
        assert crawl.labels_path.read_bytes() == before


def test_yes_or_no_fields_take_json_booleans_only(crawl):
    """``"checked": "no"`` and ``"subtree": "false"`` were read as true (``bool()`` of a string)."""
    import json

    with _served(crawl) as srv:
        base = srv.url.split("?")[0]
        before = crawl.labels_path.read_bytes()
        pid = crawl.page_ids()[0]
        for path, body, want in (
                ("api/check", {"page": pid, "checked": "no"}, "want {page, checked: true or false}"),
                ("api/check", {"page": pid, "checked": 0}, "want {page, checked: true or false}"),
                ("api/label", {"page": pid, "node": 0, "label": "S", "subtree": "false"},
                 "want subtree: true or false")):
            assert _refused(f"{base}{path}?t={srv.token}", json.dumps(body).encode()) == want, body
        assert crawl.labels_path.read_bytes() == before
        req = urllib.request.Request(f"{base}api/check?t={srv.token}",
                                     data=json.dumps({"page": pid, "checked": False}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert json.loads(r.read()) == {"page": pid, "checked": False}


def test_script_urls_are_removed_as_a_browser_reads_them(crawl):
    """A ``javascript:`` URL with a tab inside or a control character before it, or in
    ``xlink:href``, was kept (only exact prefixes in a list of attributes were removed); and the
    frame's own response sandboxes it, so a frame URL opened in a tab of its own runs nothing."""
    from lxml import html as lhtml

    from hwnoise.labelling.serve import safe_page

    page = (b'<html><body><p>Text here</p><a href="java\tscript:alert(1)">a</a>'
            b'<button formaction="\x01javascript:alert(2)">b</button>'
            b'<svg><a xlink:href="javascript:alert(3)"><text>c</text></a></svg>'
            b'<a href=" JaVaScRiPt:alert(4)">d</a><a href="/ok">e</a></body></html>')
    out = safe_page(page, None, None, None)
    root = lhtml.fromstring(out)
    urls = [v for el in root.iter() if isinstance(el.tag, str) for k, v in el.attrib.items()
            if k.lower().endswith(("href", "action"))]
    assert urls == ["/ok"]
    with _served(crawl) as srv:
        base = srv.url.split("?")[0]
        with urllib.request.urlopen(f"{base}frame/{crawl.page_ids()[0]}?t={srv.token}", timeout=30) as r:
            policy = [d.strip() for d in r.headers["Content-Security-Policy"].split(";")]
        assert "sandbox allow-same-origin" in policy and "default-src 'none'" in policy


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_a_page_elsewhere_cannot_post_even_with_the_token(crawl, tmp_path):
    """The token was the only check: a page on another origin that had it (from a Referer, a
    shared screenshot of the URL) could POST a text/plain body, a simple request with no
    preflight, and the label was written; a rebound DNS name reached the server the same way."""
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    import http.client

    from playwright.sync_api import sync_playwright

    srv = _serve(crawl)
    pid = crawl.page_ids()[0]
    before = crawl.labels_path.read_bytes()
    target = f"{srv.url.split('?')[0]}api/label?t={srv.token}"

    class Evil(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = (f"<script>fetch('{target}', {{method: 'POST', mode: 'no-cors', headers: "
                    f"{{'Content-Type': 'text/plain'}}, body: JSON.stringify({{page: '{pid}', node: 1, "
                    f"label: 'S', subtree: true}})}}).then(() => document.title = 'sent')</script>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    evil = ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as pw:
            browser = _browser(pw)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
            page.wait_for_function("() => document.title === 'sent'")
            browser.close()
        assert crawl.labels_path.read_bytes() == before
        conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=20)
        conn.request("GET", f"/api/pages?t={srv.token}", headers={"Host": "rebound.example"})
        assert conn.getresponse().status == 403
        conn.close()
        assert _get(srv.url) == 200 and _get(srv.url.replace("127.0.0.1", "localhost")) == 200
    finally:
        srv.shutdown()
        srv.server_close()
        evil.shutdown()
        evil.server_close()


def test_a_save_killed_before_its_rename_leaves_no_temp_file_after_the_next_start(crawl, capsys):
    """A save killed outright (SIGKILL, out of memory) left ``.labels.parquet.*.tmp`` beside the
    labels for good; the next start removes the temp files of writers that are gone, and only
    those: not one of a process that runs, nor one of the old naming until it is an hour old."""
    import signal
    import socket
    import time

    before = crawl.read_labels()
    # a real process saving the labels, stopped between its temp file and the rename, then killed
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import os, sys, time\n"
         "from hwnoise.dataset import Dataset\n"
         "def stuck(*a):\n"
         "    print('renaming', flush=True); time.sleep(3600)\n"
         "os.replace = stuck\n"
         "ds = Dataset(sys.argv[1]); ds.write_labels(ds.read_labels())\n", str(crawl.path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "renaming\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    left = list(crawl.path.glob(".labels.parquet.*.tmp"))
    assert len(left) == 1 and f".{child.pid}@" in left[0].name
    live = crawl.path / f".labels.parquet.{os.getpid()}@{socket.gethostname()}.abcd1234.tmp"
    old_style, fresh = crawl.path / ".labels.parquet.oldname1.tmp", crawl.path / ".labels.parquet.freshnm1.tmp"
    for f in (live, old_style, fresh):
        f.write_bytes(b"half a parquet file")
    os.utime(old_style, (time.time() - 7200, time.time() - 7200))
    not_ours = crawl.path / ".labels.parquet.notes.tmp"  # not the writer's pattern (8 characters)
    not_ours.write_text("mine")
    os.utime(not_ours, (time.time() - 7200, time.time() - 7200))
    capsys.readouterr()
    with _served(crawl):
        pass
    assert sorted(crawl.path.glob(".labels.parquet.*.tmp")) == sorted([live, fresh, not_ours])
    assert f"removed {left[0].name}, left by a save that was killed" in capsys.readouterr().err
    assert crawl.read_labels().equals(before)
