"""A real HTTP server on 127.0.0.1 that misbehaves on purpose (shared by the forms/ tests).

Routes (path part of the URL; ``key`` in the query string keeps per-test counters apart):

- ``/robots.txt``        ``server.robots`` (None: 404); by default disallows ``/private``
- ``/page?i=N&sleep=S``  a small result page echoing its query, after ``sleep`` seconds
- ``/slow?sleep=S``      answers after ``S`` seconds (default 3)
- ``/reset?fails=N``     sends headers and part of the body, then resets the connection
                         (the first N times per key; default always)
- ``/flaky``             500 twice per key, then a page
- ``/busy?after=S``      429 with ``Retry-After: S`` (default 1) the first time per key, then a page
- ``/endless``           streams HTML forever
- ``/wrong-charset``     UTF-8 bytes declared as ISO-8859-1
- ``/loop`` ``/loop2``   redirect to each other
- ``/redirect?to=URL&code=302``  redirects to any URL (private addresses, ``file:``...); without
                         ``to``, a page with that status and no Location
- ``/redirect-body?n=N&enc=E``  a 302 with a body of N bytes (default 50 MB), labelled with
                         Content-Encoding E if given; counts the bodies sent whole
- ``/early-hints?sleep=S``  a ``103 Early Hints``, then after S seconds (default 0.3) the page
- ``/two-lengths``       two Content-Length headers that disagree
- ``/two-types?second=T``  a page with two Content-Type headers: ``text/html`` and T
- ``/odd-header?line=L&frame=length|chunked&close=1``  a page whose headers hold the line L (default
                         ``Garbage line here``, no colon) before its Content-Type and its framing
                         (Content-Length, or chunked); kept alive unless ``close``
- ``/many-headers?n=N&line=L``  a page (kept alive) after N headers ``X-Hn: v`` and one header
                         ``X-Long`` of L bytes (default 0: none)
- ``/transfer-coded?te=CODINGS``  a gzip-compressed page under ``Transfer-Encoding: CODINGS``
                         (default ``gzip, chunked``; chunked if CODINGS names chunked), kept alive
- ``/no-page?code=204``  an answer with no body (204, 205, 304...), labelled ``text/html``
- ``/partial``           a 206 Partial Content: the first 100 bytes of a page, with their Content-Range
                         (though no range was asked)
- ``/redirect-raw?to=URL&enc=E``  a 302 whose Location is the bytes of URL in encoding E
                         (default utf-8)
- ``/cut-short?enc=gzip|deflate|br``  the first half of a compressed page, Content-Length honest
- ``/image``             a PNG, ``/big`` a body larger than the tests' limits
- ``/not-gzip``          ``Content-Encoding: gzip`` over a body that is not gzip
- ``/gzip-bomb``         a gzip body of 1 KB that decodes to 1 MB
- ``/gone``              404
- ``/trickle?every=S&n=N``  Content-Length N (default 2000), then one byte every S seconds
                         (default 0.05): the read timeout never fires, only a page time limit
- ``/trickle-headers?every=S&n=N``  the status line, then a header trickled a byte at a time
- ``/no-type?kind=png|html|text``  a body with no Content-Type header (PNG bytes by default)
- ``/utf7``              ``charset=utf-7`` with a UTF-7 ``<script>`` in the body
- ``/private/...``       a page robots.txt disallows
- ``/form`` ``/post-form``  a search form (GET; POST multipart-free), ``/search`` its results
- ``/form-action?action=A``  a one-field search form whose action is A
- ``/session-form``      a search form that sets a session cookie (``sid``, one per visit), as
                         session-based search sites do; ``/session-search`` its results, answered
                         only with that cookie (without it: a 302 back to the form, as such sites do)
- ``/no-answer``         closes the connection without answering; ``/not-http`` answers bytes
                         that are no HTTP (no status line)
- ``/held``              a page answered only once ``server.release`` is set (``server.held`` is
                         set when the request comes): a collect caught midway, for as long as a test needs
- ``/served/NAME``       ``server.pages[NAME]``: ``(content type, body bytes)`` a test put there

``TRAVERSING_IDS`` are submission ids that would leave the dataset folder (``hostile_lines``
makes JSON lines of them pointing at this server).

``server.log`` holds ``(monotonic time, method, path with query, body)`` for every request,
``server.connections`` counts TCP connections accepted.
"""
from __future__ import annotations

import gzip
import html
import socket
import struct
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, urlsplit

DEFAULT_ROBOTS = "User-agent: *\nDisallow: /private\n"

FORM_PAGE = """<!DOCTYPE html>
<html><head><title>Drink search</title></head><body>
<h1>Advanced search</h1>
<form action="search" method="{method}" id="f">
  <input type="hidden" name="session" value="s3cr3t">
  <table>
    <tr><td>Drink name</td><td><input type="text" name="item_name"></td></tr>
    <tr><td>Ingredient</td><td><input type="text" name="description" placeholder="e.g. cherry"></td></tr>
  </table>
  <label for="cat">Category</label>
  <select id="cat" name="cat"><option value="">Any</option><option value="ck">Cocktails</option>
    <option value="sh" selected>Shots</option></select>
  <label><input type="checkbox" name="alcoholic" value="yes" checked> Alcoholic only</label>
  <input type="text" name="maxPrice" aria-label="Highest price">
  <input type="submit" name="go" value="Find drinks">
</form>
<p>Other forms below are not the search.</p>
<form action="/newsletter" method="post"><input name="email" placeholder="Your e-mail"></form>
</body></html>
"""


PNG_BYTES = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
             b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
             b"\x00\x00\x00\x00IEND\xaeB`\x82")

#: ids that would write (or read) outside the dataset folder, or cannot be a file name at all
TRAVERSING_IDS = ["../../escaped", "sub/../../../escaped2", "/tmp/hwnoise-absolute-escape", "..", ".",
                  "a\x00b", "x" * 300, "..\\..\\win", "CON", " spaced id "]


def hostile_lines(server: "MisbehavingServer") -> str:
    """JSON lines, one per ``TRAVERSING_IDS`` id, each a distinct page of ``server``."""
    import json

    return "".join(json.dumps({"id": pid, "url": server.url(f"/page?n={i}")}) + "\n"
                   for i, pid in enumerate(TRAVERSING_IDS))


def result_page(fields: list[tuple[str, str]], note: str = "") -> bytes:
    items = "".join(f"<li><b>{html.escape(k)}</b> {html.escape(v)}</li>" for k, v in fields)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Results</title></head><body>"
            f"<div id=nav><a href='/'>Home</a></div><h1>Results{html.escape(note)}</h1><ul>{items}</ul>"
            f"<div id=footer>(c) misbehaving server</div></body></html>").encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, *args) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # as real servers do: no Nagle delay between the header and body writes
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.lock:
            self.server.owner.connections += 1

    # -- helpers
    def _send(self, status: int, body: bytes = b"", ctype: str = "text/html; charset=utf-8",
              headers: dict | None = None) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _count(self, name: str, key: str) -> int:
        with self.server.lock:
            self.server.owner.counters[(name, key)] += 1
            return self.server.owner.counters[(name, key)]

    def do_GET(self) -> None:
        self._route(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._route(self.rfile.read(length))

    def _route(self, body: bytes) -> None:
        owner = self.server.owner
        with self.server.lock:
            owner.log.append((time.monotonic(), self.command, self.path, body, self.headers.get("User-Agent")))
        parts = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        key = q.get("key", "")
        path = parts.path
        if path == "/robots.txt":
            if owner.robots is None:
                return self._send(404, b"no robots here", "text/plain")
            if owner.robots == "500":
                return self._send(500, b"oops", "text/plain")
            return self._send(200, owner.robots.encode(), "text/plain")
        if path == "/page":
            if q.get("sleep"):
                time.sleep(float(q["sleep"]))
            return self._send(200, result_page(parse_qsl(parts.query)))
        if path == "/slow":
            time.sleep(float(q.get("sleep", 3)))
            return self._send(200, result_page([], " (slow)"))
        if path == "/reset":
            n = self._count("reset", key)
            if n <= int(q.get("fails", 10 ** 6)):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", "5000")
                self.end_headers()
                self.wfile.write(b"<html><body>" + b"x" * 100)
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            return self._send(200, result_page([], f" after {n - 1} resets"))
        if path == "/flaky":
            n = self._count("flaky", key)
            if n <= 2:
                return self._send(500, b"<h1>Internal Server Error</h1>")
            return self._send(200, result_page([], f" after {n - 1} errors"))
        if path == "/busy":
            n = self._count("busy", key)
            if n == 1:
                return self._send(429, b"slow down", "text/plain", {"Retry-After": q.get("after", "1")})
            return self._send(200, result_page([], " after 429"))
        if path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(b"<html><body>")
                chunk = b"<p>" + b"endless " * 1000 + b"</p>\n"
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        if path == "/wrong-charset":
            text = "<html><body><p>Café em São Paulo: açaí, pão de queijo</p></body></html>"
            return self._send(200, text.encode("utf-8"), "text/html; charset=ISO-8859-1")
        if path == "/loop":
            return self._send(302, b"", headers={"Location": "/loop2"})
        if path == "/loop2":
            return self._send(302, b"", headers={"Location": "/loop"})
        if path == "/redirect":
            if "to" not in q:  # a redirect to nowhere, with a body
                return self._send(int(q.get("code", 302)), result_page([], " (no Location)"))
            return self._send(int(q.get("code", 302)), b"", headers={"Location": q["to"]})
        if path == "/redirect-body":  # a redirect with a body of n bytes (gzip-labelled if enc=gzip)
            n = int(q.get("n", 50_000_000))
            self.send_response(302)
            self.send_header("Location", "/page?after=redirect-body")
            self.send_header("Content-Type", "text/html")
            if q.get("enc"):
                self.send_header("Content-Encoding", q["enc"])
            self.send_header("Content-Length", str(n))
            self.end_headers()
            try:
                block = b"m" * 65536
                for _ in range(n // len(block)):
                    self.wfile.write(block)
                self.wfile.write(b"m" * (n % len(block)))
                self.wfile.flush()
                self._count("redirect-body-sent", key)
            except OSError:
                self.close_connection = True
            return
        if path == "/early-hints":  # a 103 first, the answer a moment later (as an origin that
            # sends hints while it builds the page)
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n")
            self.wfile.flush()
            time.sleep(float(q.get("sleep", 0.3)))
            return self._send(200, result_page(parse_qsl(parts.query), " (after early hints)"))
        if path == "/two-lengths":  # two Content-Length headers that disagree
            page = result_page([], " (two lengths)")
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 7\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(page) + page)
            self.close_connection = True
            return
        if path == "/two-types":  # Content-Type sent twice (a proxy's and the origin's)
            page = result_page([], " (two types)")
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Type: %s\r\n"
                             b"Content-Length: %d\r\n\r\n" % (q.get("second", "text/html").encode(), len(page))
                             + page)
            return
        if path == "/odd-header":  # a header line a browser skips, before the headers that matter
            page = result_page([], " (odd header)")
            framing, body = b"Content-Length: %d\r\n" % len(page), page
            if q.get("frame") == "chunked":
                framing, body = b"Transfer-Encoding: chunked\r\n", b"%x\r\n%s\r\n0\r\n\r\n" % (len(page), page)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Before: 1\r\n" + q.get("line", "Garbage line here").encode()
                             + b"\r\nContent-Type: text/html; charset=utf-8\r\n" + framing
                             + (b"Connection: close\r\n" if q.get("close") else b"") + b"\r\n" + body)
            self.close_connection = bool(q.get("close"))
            return
        if path == "/many-headers":  # more header lines, or a longer one, than http.client reads
            page = result_page([], " (many headers)")
            lines = b"".join(b"X-H%d: v\r\n" % i for i in range(int(q.get("n", 0))))
            if int(q.get("line", 0)):
                lines += b"X-Long: %s\r\n" % (b"a" * int(q["line"]))
            if int(q.get("connection", 0)):  # a framing header's line over 64 KiB, its token last
                lines += b"Connection: %s%s\r\n" % (b"x-pad, " * (int(q["connection"]) // 7),
                                                      q.get("last", "keep-alive").encode())
            self.close_connection = "close" in q.get("last", "")
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n%sContent-Length: %d"
                             b"\r\n\r\n%s" % (lines, len(page), page))
            return
        if path == "/transfer-coded":  # a transfer coding no browser decodes
            te = q.get("te", "gzip, chunked")
            body = gzip.compress(result_page([], " (transfer-coded)"))
            if "chunked" in te:
                body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: %s\r\n\r\n%s"
                             % (te.encode(), body))
            return
        if path == "/no-page":  # an answer that has no page, whatever its Content-Type says
            self.send_response(int(q.get("code", 204)))
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            return
        if path == "/partial":  # a range nobody asked for: a cache or a server that answers ranges anyway
            page = result_page([], " (whole)" + " padding" * 50)
            return self._send(206, page[:100], headers={"Content-Range": f"bytes 0-99/{len(page)}"})
        if path == "/redirect-raw":  # a Location of raw bytes: ``to`` encoded as ``enc``
            location = q["to"].encode(q.get("enc", "utf-8")).decode("latin-1")
            return self._send(302, b"", headers={"Location": location})
        if path == "/cut-short":  # a compressed page cut in half, its Content-Length the half's
            import zlib
            page = result_page([], " (whole)" + " padding" * 200)
            packed = {"gzip": gzip.compress, "deflate": zlib.compress,
                      "br": lambda b: __import__("brotli").compress(b)}[q.get("enc", "gzip")](page)
            return self._send(200, packed[: len(packed) // 2], headers={"Content-Encoding": q.get("enc", "gzip")})
        if path == "/image":
            return self._send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
        if path == "/big":
            return self._send(200, b"<html><body>" + b"b" * 50_000 + b"</body></html>")
        if path == "/not-gzip":
            return self._send(200, b"<html><body>plain, not gzip</body></html>",
                              headers={"Content-Encoding": "gzip"})
        if path == "/gzip-bomb":
            return self._send(200, gzip.compress(b"<html><body>" + b" " * 1_000_000 + b"</body></html>", 9),
                              headers={"Content-Encoding": "gzip"})
        if path == "/trickle":
            n, every = int(q.get("n", 2000)), float(q.get("every", 0.05))
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            self.wfile.flush()
            try:
                for _ in range(n):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(every)
            except OSError:
                pass
            self.close_connection = True
            return
        if path == "/trickle-headers":
            n, every = int(q.get("n", 2000)), float(q.get("every", 0.05))
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                self.wfile.flush()
                for _ in range(n):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(every)
                self.wfile.write(b"\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            self.close_connection = True
            return
        if path == "/no-type":
            kind = q.get("kind", "png")
            body = {"png": PNG_BYTES, "html": result_page([], " (no type)"),
                    "text": b"Plain notes, no markup at all.\n"}[kind]
            return self._send(200, body, ctype="")
        if path == "/utf7":
            return self._send(200, b"<html><body><p>+ADw-script+AD4-alert(1)+ADw-/script+AD4-</p></body></html>",
                              "text/html; charset=utf-7")
        if path == "/gone":
            return self._send(404, b"<h1>Not found</h1>")
        if path.startswith("/private"):
            return self._send(200, result_page([], " private"))
        if path == "/form-action":  # a search form whose action is ``action``, as given
            return self._send(200, f'<html><body><form action="{html.escape(q["action"])}">'
                                   '<input name="q"></form></body></html>'.encode())
        if path == "/session-form":
            sid = f"s{self._count('session', key)}"
            with self.server.lock:
                owner.sessions.add(sid)
            return self._send(200, b'<form action="/session-search"><input name="q"></form>',
                              headers={"Set-Cookie": f"sid={sid}; Path=/; HttpOnly"})
        if path == "/session-search":
            cookies = dict(c.strip().partition("=")[::2] for c in (self.headers.get("Cookie") or "").split(";")
                           if "=" in c)
            if cookies.get("sid") not in owner.sessions:
                return self._send(302, b"", headers={"Location": "/session-form?expired=1"})
            return self._send(200, result_page(parse_qsl(parts.query), f" (session {cookies['sid']})"))
        if path == "/no-answer":
            self.close_connection = True
            return
        if path == "/not-http":
            self.wfile.write(b"GARBAGE\r\n\r\n<html>hi</html>")
            self.close_connection = True
            return
        if path == "/held":
            owner.held.set()
            owner.release.wait(30)  # a safety net only: the test sets it
            return self._send(200, result_page(parse_qsl(parts.query)))
        if path.startswith("/served/") and path[len("/served/"):] in owner.pages:
            ctype, page = owner.pages[path[len("/served/"):]]
            return self._send(200, page, ctype)
        if path in ("/form", "/post-form"):
            return self._send(200, FORM_PAGE.format(method="get" if path == "/form" else "post").encode())
        if path == "/search":
            fields = parse_qsl(parts.query, keep_blank_values=True) if self.command == "GET" else \
                parse_qsl(body.decode(), keep_blank_values=True)
            return self._send(200, result_page(fields, f" ({self.command})"))
        return self._send(404, b"<h1>Not found</h1>")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:  # resets and broken pipes are the point
        pass


class MisbehavingServer:
    """``with MisbehavingServer() as srv: srv.url("/flaky?key=a")``"""

    def __init__(self) -> None:
        self.robots: str | None = DEFAULT_ROBOTS
        self.log: list[tuple] = []
        self.pages: dict[str, tuple[str, bytes]] = {}
        self.sessions: set[str] = set()
        self.counters: Counter = Counter()
        self.connections = 0
        self.held, self.release = threading.Event(), threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._httpd.lock = threading.Lock()  # type: ignore[attr-defined]
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def hits(self, prefix: str) -> int:
        """Requests whose path (with query) starts with ``prefix``."""
        return sum(1 for entry in self.log if entry[2].startswith(prefix))

    def __enter__(self) -> "MisbehavingServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # the same server as a pytest-friendly start/stop
    start = __enter__

    def stop(self) -> None:
        self.__exit__()
