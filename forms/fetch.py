"""The polite, safe fetcher: one ``requests.Session`` per host, built from small policies.

Like Scrapy's downloader middlewares, each concern is one small class built from one
settings object (:class:`FetchSettings`) and able to switch itself off:

- :class:`AddressPolicy` — only http/https; private, loopback, link-local (and other
  non-public) addresses refused unless allowed, checked after DNS resolution, at connect
  time too (so a DNS answer that changes between the check and the connect cannot slip
  through), and again on every redirect hop.
- :class:`RobotsPolicy` — robots.txt per host (RFC 9309, parsed by Protego), ``Crawl-delay``
  applied (capped at ``MAX_CRAWL_DELAY``, with a message).
- :class:`HostThrottle` — one request at a time per host, ``delay`` seconds apart.
- :class:`RetryPolicy` — retries with exponential backoff on connection errors,
  timeouts, 429 and 5xx, honouring ``Retry-After`` (seconds or an HTTP date); a connection
  closed without an answer is retried once at most, an answer that is not HTTP never.
- :class:`RedirectPolicy` — redirects followed by hand within a limit, every hop
  recorded and checked.
- one cookie jar for the crawl (``Fetcher.cookies``): a session cookie a site sets (on its form
  page: ``Form.cookies``) goes with the next requests, as a browser's does.
- :class:`BodyPolicy` — a maximum body size (streamed and cut off), a time limit on the whole
  response (``page_timeout``: a body trickled a byte at a time is cut), and a content-type
  check (a response without one is sniffed as browsers do: ``hwnoise.decode.sniff_html``); an
  answer that has no page (204, 205, 304) or part of one (206: no range is asked) is refused.

:class:`Fetcher` ties them together; ``Fetcher.fetch`` returns a :class:`FetchResult` or
raises :class:`FetchError` (naming the URL, and carrying what was learnt: status, headers,
redirects).
"""
from __future__ import annotations

import email.parser
import email.utils
import functools
import http.client
import io
import ipaddress
import re
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from hwnoise import __version__
from hwnoise.decode import charset_of, content_type, sniff_html
from hwnoise.errors import HwnoiseError, counted

from .submissions import encoded_fields, form_body

DEFAULT_USER_AGENT = f"hwnoise/{__version__} (hidden-web research crawler; robots.txt token hwnoise)"
ROBOTS_TOKEN = "hwnoise"
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
#: Seconds one response (headers and body) may take in all, however slowly it trickles.
DEFAULT_PAGE_TIMEOUT = 120.0
#: The longest Retry-After waited for before a retry; an answer asking longer fails at once.
DEFAULT_MAX_RETRY_AFTER = 120.0
HTML_TYPES = ("text/html", "application/xhtml+xml", "application/xml", "text/xml", "text/plain")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 507, 508, 509, 520, 521, 522, 523, 524})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: answers that carry no page, whatever their Content-Type says (hwnoise asks nothing conditional: a
#: 304 too is no page)
NO_PAGE_STATUSES = frozenset({204, 205, 304})


class FetchError(HwnoiseError):
    """A fetch failed; the message names the URL. ``status``, ``headers``, ``redirects`` and
    ``final_url`` keep what was learnt before the failure (for the journal)."""

    def __init__(self, url: str, message: str, *, status: int | None = None,
                 headers: dict | None = None, redirects: list | None = None,
                 final_url: str | None = None, attempts: int = 0):
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = message
        self.status = status
        self.headers = headers or {}
        self.redirects = redirects or []
        self.final_url = final_url
        self.attempts = attempts


class BlockedURL(FetchError):
    """The URL's scheme or address is not allowed (never retried)."""


class RobotsDenied(FetchError):
    """robots.txt disallows the URL for hwnoise (never retried)."""


class BodyError(FetchError):
    """The body is too large or not HTML, or the answer has no page (never retried)."""


class PageTimeout(BodyError):
    """The response did not complete within the page time limit (never retried: a server that
    trickles a page would trickle it again)."""


@dataclass
class FetchSettings:
    """Everything the policies read; one object travels through the fetcher."""

    user_agent: str | None = None
    delay: float = 1.0
    timeout: tuple[float, float] = (5.0, 30.0)
    page_timeout: float = DEFAULT_PAGE_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    retries: int = 3
    backoff: float = 0.5
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER
    max_redirects: int = 10
    allow_private: bool | Iterable[str] = False
    robots: bool = True
    content_types: tuple[str, ...] = HTML_TYPES

    def __post_init__(self) -> None:
        self.user_agent = self.user_agent or DEFAULT_USER_AGENT
        if isinstance(self.timeout, (int, float)):
            self.timeout = (float(self.timeout), float(self.timeout))
        self.timeout = tuple(self.timeout)  # type: ignore[assignment]


@dataclass
class FetchResult:
    """A page fetched: its bytes and what the journal records about the exchange."""

    url: str
    final_url: str
    method: str
    status: int
    headers: dict[str, str]
    body: bytes
    redirects: list[dict] = field(default_factory=list)
    http_charset: str | None = None
    attempts: int = 1


# -- addresses ---------------------------------------------------------------------------------

class AddressPolicy:
    """Which schemes and IP addresses may be fetched.

    ``allow_private``: False (public addresses only), True (any address), or networks
    ("127.0.0.1", "10.0.0.0/8") that are allowed beside the public ones.
    """

    def __init__(self, allow_private: bool | Iterable[str] = False):
        self.allow_all = allow_private is True
        self.networks = []
        if allow_private not in (True, False, None):
            for net in allow_private:  # type: ignore[union-attr]
                try:
                    self.networks.append(ipaddress.ip_network(str(net), strict=False))
                except ValueError:
                    raise HwnoiseError(f"allowed network {net!r} is not an IP address or CIDR block") from None

    def check_scheme(self, url: str) -> None:
        try:
            parts = urlsplit(url)
        except ValueError as exc:  # "http://[::1" (a Location header can say anything)
            raise BlockedURL(url, f"not a valid URL ({exc})") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise BlockedURL(url, f"scheme {parts.scheme or '(none)'!r} refused: only http and https are fetched")
        if not parts.hostname:
            raise BlockedURL(url, "no host in the URL")
        try:  # what requests and the resolver would refuse later, as errors of another kind
            parts.port
            urllib3.util.parse_url(url)
            parts.hostname.encode("idna")
        except (ValueError, UnicodeError) as exc:
            raise BlockedURL(url, f"not a valid URL ({exc})") from None

    def address_allowed(self, ip: str) -> bool:
        if self.allow_all:
            return True
        addr = ipaddress.ip_address(ip.split("%", 1)[0])
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
            addr = addr.ipv4_mapped
        if any(addr in net for net in self.networks):
            return True
        return addr.is_global and not (addr.is_multicast or addr.is_reserved or addr.is_unspecified)

    def resolve(self, host: str, port: int, url: str) -> list[str]:
        """Every address ``host`` resolves to, all of them allowed, or BlockedURL."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise FetchError(url, f"cannot resolve host {host!r}: {exc.strerror or exc}") from None
        ips = list(dict.fromkeys(info[4][0] for info in infos))
        bad = [ip for ip in ips if not self.address_allowed(ip)]
        if bad:
            raise BlockedURL(url, f"host {host!r} resolves to a private, loopback or link-local address "
                                  f"({', '.join(bad)}); refused (pass --allow-private to fetch it)")
        return ips

    def check(self, url: str) -> None:
        """Scheme and address check of one URL (each redirect hop goes through it)."""
        self.check_scheme(url)
        if self.allow_all:
            return
        parts = urlsplit(url)
        self.resolve(parts.hostname or "", parts.port or (443 if parts.scheme.lower() == "https" else 80), url)


#: thread ident -> the urllib3 connection that thread is sending its request on (for the
#: page-time watchdog, which shuts that socket down when the page's time is up).
_ACTIVE_CONN: dict[int, Any] = {}


def _tracked(base: type) -> dict:
    def request(self, *args: Any, **kwargs: Any):
        _ACTIVE_CONN[threading.get_ident()] = self
        return base.request(self, *args, **kwargs)
    return {"request": request}


class _FinalResponse(http.client.HTTPResponse):
    """A response read past its interim (1xx) responses, its headers read as a browser reads
    them. http.client skips a ``100 Continue`` only: a ``103 Early Hints`` was taken for the
    answer (an empty page of status 103), and the real answer, left on the kept-alive connection,
    was read as the answer to the next request (its page stored under the wrong submission). 101
    (never asked for) stays final."""

    def _read_status(self):  # type: ignore[override]
        while True:
            version, status, reason = super()._read_status()
            if status == 101 or not 100 <= status < 200:
                return version, status, reason
            _header_lines(self.fp)  # the interim response's headers, skipped

    def begin(self, *args: Any, **kwargs: Any) -> None:
        if self.headers is None and _begin_reads_fp():
            self._begin_as_browser(*args, **kwargs)
        else:  # a Python whose begin reads otherwise: its own header parsing, unchanged
            super().begin(*args, **kwargs)

    def _begin_as_browser(self, *args: Any, **kwargs: Any) -> None:
        """Read the status and header lines off the wire, and let http.client's ``begin`` read
        them from memory, the lines a browser skips left out (:func:`_browser_header_lines`);
        the body stays on the wire, where ``begin`` leaves it."""
        wire = self.fp
        version, status, reason = self._read_status()
        lines = _browser_header_lines(_header_lines(wire))
        self.fp = io.BytesIO(b"".join([f"{version} {status} {reason.strip()}\r\n".encode("latin-1"),
                                       *_framing_lines(lines), b"\r\n"]))
        try:
            super().begin(*args, **kwargs)
        finally:
            self.fp = wire
        # all the lines, read as parse_headers reads them, without its limits (100 lines of 64 KiB)
        text = b"".join([*lines, b"\r\n"]).decode("iso-8859-1")
        self.headers = self.msg = email.parser.Parser(_class=http.client.HTTPMessage).parsestr(text)


#: a header name as browsers take it (RFC 9110's token)
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: the most bytes of header lines read, as Chromium reads them: any number of lines, of any length,
#: within 256 KiB in all (its kMaxHeaderBufSize; beyond, ERR_RESPONSE_HEADERS_TOO_BIG). http.client
#: refused more than 100 lines or a line over 64 KiB, which browsers read.
MAX_HEADER_BYTES = 256 * 1024
#: the headers http.client's ``begin`` frames the body with (the first of each is the one it reads)
_FRAMING = frozenset({b"transfer-encoding", b"content-length", b"connection", b"keep-alive", b"proxy-connection"})


class HeadersTooBig(http.client.HTTPException):
    """The header lines of an answer exceed ``MAX_HEADER_BYTES``: no browser reads them."""


def _header_lines(fp: Any) -> list[bytes]:
    """The header lines read off ``fp``, up to the empty line that ends them (not included);
    HeadersTooBig past ``MAX_HEADER_BYTES``."""
    lines: list[bytes] = []
    left = MAX_HEADER_BYTES
    while True:
        line = fp.readline(left + 1)
        left -= len(line)
        if left < 0:
            raise HeadersTooBig(f"response headers over {MAX_HEADER_BYTES // 1024} KiB")
        if line in (b"\r\n", b"\n", b""):
            return lines
        lines.append(line)


def _framing_lines(lines: list[bytes]) -> list[bytes]:
    """The first line of each header ``begin`` frames the body with (with its folded lines):
    the few lines ``begin`` needs, within http.client's limits, for the same framing."""
    kept: list[bytes] = []
    seen: set[bytes] = set()
    keeping = False
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            if keeping:
                kept[-1] += line
            continue
        name = line.partition(b":")[0].lower()
        keeping = name in _FRAMING and name not in seen
        if keeping:
            seen.add(name)
            kept.append(line)
    return [_framing_facts(line) if len(line) > http.client._MAXLINE else line for line in kept]


def _framing_facts(line: bytes) -> bytes:
    """A framing header's line too long for ``begin`` (over 64 KiB: LineTooLong), cut to what
    ``begin`` reads of it: whether the value holds ``close`` and ``keep-alive`` (Connection,
    Keep-Alive, Proxy-Connection), or the value itself when it is short once its blanks and folds
    go (Transfer-Encoding is chunked only when it is ``chunked`` alone). The whole line stays in
    the answer's headers; a Content-Length of that size is no number and stays refused."""
    name, _, value = line.partition(b":")
    value = b" ".join(value.split())
    if len(value) > 1024 and name.lower() != b"content-length":
        low = value.lower()
        value = b", ".join(t for t in (b"close", b"keep-alive") if t in low) or b"x-long"
    return name + b": " + value + b"\r\n"


def _browser_header_lines(lines: list[bytes]) -> list[bytes]:
    """The header lines a browser reads: Chromium skips a line without a colon, or whose name
    (blanks around it trimmed) is not a token, with the lines folded under it. http.client's
    email parser ended the headers at such a line: every header after it was lost (Content-Length:
    a kept-alive body was read until a read timeout; Transfer-Encoding: the chunk sizes were kept
    in the page)."""
    kept: list[bytes] = []
    keeping = False
    for line in lines:
        if line[:1] in (b" ", b"\t"):  # a folded line goes with the line it continues
            if keeping:
                kept.append(line)
            continue
        name, colon, rest = line.partition(b":")
        name = name.strip(b" \t")
        keeping = bool(colon) and _TOKEN.fullmatch(name) is not None
        if keeping:
            kept.append(name + b":" + rest)
    return kept


@functools.cache
def _begin_reads_fp() -> bool:
    """Whether http.client's ``begin`` reads the status and headers through ``fp`` and leaves the
    body there, as :meth:`_FinalResponse._begin_as_browser` relies on (checked once, on an answer
    in memory): if a Python's ``begin`` does not, headers are read by http.client alone."""

    class Canned:
        def makefile(self, mode: str) -> io.BytesIO:
            return io.BytesIO(b"HTTP/1.1 200 OK\r\nNo colon\r\nContent-Length: 2\r\n\r\nok")

    try:
        resp = _FinalResponse(Canned())
        resp._begin_as_browser()
        return resp.length == 2 and resp.read() == b"ok"
    except Exception:  # noqa: BLE001 - any change of http.client's internals switches it off
        return False


def _guarded_adapter(policy: AddressPolicy) -> HTTPAdapter:
    """An HTTPAdapter whose connections connect only to addresses ``policy`` allows, checked
    on the addresses actually dialled (no gap between check and connect), whose
    connections are known to the page-time watchdog, and whose responses skip interim 1xx
    answers (:class:`_FinalResponse`)."""

    def new_conn(base):
        def _new_conn(self):
            host = self._dns_host
            ips = policy.resolve(host, self.port, f"{'https' if base is HTTPSConnection else 'http'}://{host}:{self.port}/")
            last: Exception | None = None
            for ip in ips:
                self._dns_host = ip
                try:
                    return base._new_conn(self)
                except Exception as exc:  # noqa: BLE001 - try the next address
                    last = exc
                finally:
                    self._dns_host = host
            raise last  # type: ignore[misc]
        return _new_conn

    def members(base: type) -> dict:
        return {**_tracked(base), "response_class": _FinalResponse,
                **({} if policy.allow_all else {"_new_conn": new_conn(base)})}

    http_conn = type("GuardedHTTPConnection", (HTTPConnection,), members(HTTPConnection))
    https_conn = type("GuardedHTTPSConnection", (HTTPSConnection,), members(HTTPSConnection))
    http_pool = type("GuardedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn})
    https_pool = type("GuardedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn})

    class GuardedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": http_pool, "https": https_pool}

    return GuardedAdapter(max_retries=0)


class _PageClock:
    """A watchdog for one exchange: when ``seconds`` pass before ``stop``, it shuts the socket
    of the calling thread's request down, so a read blocked on a trickle returns at once (the
    read timeout alone restarts with every byte)."""

    def __init__(self, seconds: float):
        self.expired = False
        self._ident = threading.get_ident()
        self._lock = threading.Lock()
        self._done = False
        self._timer = threading.Timer(max(0.0, seconds), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            conn = _ACTIVE_CONN.get(self._ident)
            sock = getattr(conn, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()


class _Session(requests.Session):
    """A session that neither follows nor previews redirects: the fetcher follows them by hand,
    every hop checked. requests previews the next request even with ``allow_redirects=False``
    (``Response.next``), and that preview reads the redirect's whole body into memory first,
    unbounded and before the body limit is applied (a 302 with an endless or a gzip-bomb body
    took gigabytes), and parses its Location (a bad one raised from inside ``request``)."""

    def resolve_redirects(self, *args: Any, **kwargs: Any):
        return iter(())


# -- per-host throttling -------------------------------------------------------------------------

class HostThrottle:
    """One request at a time per host, ``delay`` seconds between the end of one and the
    start of the next (robots.txt's Crawl-delay raises it)."""

    def __init__(self, delay: float):
        self.delay = max(0.0, float(delay))
        self._locks: dict[str, threading.Lock] = {}
        self._last: dict[str, float] = {}
        self._delays: dict[str, float] = {}
        self._guard = threading.Lock()

    def set_delay(self, host: str, delay: float) -> None:
        self._delays[host] = max(self.delay, delay)

    def lock(self, host: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(host, threading.Lock())

    def wait(self, host: str) -> None:
        """Sleep until ``host`` may be asked again (call with the host's lock held)."""
        delay = self._delays.get(host, self.delay)
        last = self._last.get(host)
        if delay > 0 and last is not None:
            pause = last + delay - time.monotonic()
            if pause > 0:
                time.sleep(pause)

    def done(self, host: str) -> None:
        self._last[host] = time.monotonic()


# -- retries ---------------------------------------------------------------------------------------

class RetryPolicy:
    """When to try again, and how long to wait first."""

    def __init__(self, retries: int, backoff: float, max_retry_after: float):
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        self.max_retry_after = max_retry_after

    def retries_of(self, exc: BaseException) -> int:
        """How many retries a transport error gets: ``retries``, but at most one for a connection
        the server closed without answering (a kept-alive connection closed as it was reused:
        Chromium (156, checked) sends the request again once then, on a new connection not at all, and shows
        ERR_EMPTY_RESPONSE; a server that closes every connection unanswered does it again)."""
        if isinstance(_innermost(exc), http.client.RemoteDisconnected):
            return min(self.retries, 1)
        return self.retries

    def retryable_status(self, status: int) -> bool:
        return status in RETRY_STATUSES or 500 <= status < 600 and status != 501

    def wait_for(self, attempt: int, headers: dict | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based): Retry-After when the
        server sent one, else backoff · 2^(attempt-1)."""
        after = parse_retry_after((headers or {}).get("retry-after"))
        if after is not None:
            return after
        return self.backoff * (2 ** (attempt - 1))


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit is true of '²' and '٣' too
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


# -- robots.txt -------------------------------------------------------------------------------------

#: The longest Crawl-delay obeyed, in seconds; a robots.txt asking more is capped (with a message).
MAX_CRAWL_DELAY = 60.0

_UA_LINE = re.compile(r"^(\s*user-agent\s*:\s*)([^/#\s]*)/[^#\s]*", re.IGNORECASE | re.MULTILINE)


class RobotsRules:
    """The rules of one robots.txt for one crawler, read by Protego (Scrapy's RFC 9309 parser):
    the groups naming the crawler's token (else ``*``), the longest matching pattern wins,
    Allow on a tie, ``*`` and ``$`` in patterns, percent-encoding normalised. Crawl-delay (not in
    the RFC, widely used) is read with decimals. A ``User-agent: name/1.0`` line names ``name``
    (the product token without its version)."""

    def __init__(self, lines: list[str] | str = (), token: str = ROBOTS_TOKEN):
        from protego import Protego

        text = lines if isinstance(lines, str) else "\n".join(lines)
        self.token = token.lower()
        self._rules = Protego.parse(_UA_LINE.sub(r"\1\2", text))
        self.crawl_delay: float | None = self._rules.crawl_delay(self.token)
        #: the delay obeyed between requests (Crawl-delay capped at MAX_CRAWL_DELAY; set by RobotsPolicy)
        self.delay: float | None = None

    def allowed(self, url: str) -> bool:
        return self._rules.can_fetch(url, self.token)


#: the most of a robots.txt read (RFC 9309 asks at least 500 KiB)
ROBOTS_MAX_BYTES = 512 * 1024


class RobotsPolicy:
    """robots.txt per host (fetched once, through the same safe path), RFC 9309 semantics:
    4xx means no rules (401/403 too, as RFC 9309 says), 5xx or unreachable means disallow all.

    ``rules``: the cache of robots.txt read by another fetcher of the same run (``Fetcher.robots.rules``:
    the form page's), so that each host's robots.txt is read once per run, not once per fetcher; its
    Crawl-delay is applied to this fetcher's throttle too."""

    def __init__(self, fetcher: "Fetcher", enabled: bool, rules: dict | None = None):
        self.fetcher = fetcher
        self.enabled = enabled
        #: origin -> its rules, or why its robots.txt could not be read (shared with ``rules`` given)
        self.rules: dict[str, RobotsRules | str] = rules if rules is not None else {}
        self._throttled: set[str] = set()  # the origins whose Crawl-delay this fetcher's throttle has
        self._guard = threading.Lock()
        self._host_locks: dict[str, threading.Lock] = {}

    def check(self, url: str) -> None:
        if not self.enabled:
            return
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        with self._guard:
            lock = self._host_locks.setdefault(origin, threading.Lock())
        with lock:
            if origin not in self.rules:
                self.rules[origin] = self._load(origin)
            rules = self.rules[origin]
            if origin not in self._throttled:
                self._throttled.add(origin)
                if isinstance(rules, RobotsRules) and rules.delay:
                    self.fetcher.throttle.set_delay(parts.netloc.lower(), rules.delay)
        if isinstance(rules, str):
            raise RobotsDenied(url, f"robots.txt of {origin} could not be read ({rules}); nothing fetched "
                                    "from this host (pass --no-robots to ignore robots.txt)")
        if not rules.allowed(url):
            raise RobotsDenied(url, f"disallowed by {origin}/robots.txt for {ROBOTS_TOKEN} "
                                    "(pass --no-robots to ignore robots.txt)")

    def _load(self, origin: str) -> RobotsRules | str:
        try:
            res = self.fetcher._exchange_with_redirects("GET", origin + "/robots.txt", None, None,
                                                        content_check=False, max_bytes=ROBOTS_MAX_BYTES,
                                                        robots=False, prefix=True)
        except FetchError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                return RobotsRules()
            return exc.reason
        body = res.body
        if len(body) >= ROBOTS_MAX_BYTES and 200 <= res.status < 300:
            # RFC 9309 2.5: a crawler parses at least 500 KiB; past its limit the rest is left out, as
            # Google does (it was 'could not be read', the host never fetched, and told to raise
            # --max-bytes, which sets no robots.txt limit); the line the limit cuts is left out too
            body = body[:body.rfind(b"\n") + 1]
            from hwnoise.progress import info

            info(f"hwnoise: {origin}/robots.txt is longer than {ROBOTS_MAX_BYTES // 1024} KiB; its rules "
                 f"in the first {ROBOTS_MAX_BYTES // 1024} KiB are followed (RFC 9309)")
        rules = RobotsRules(body.decode("utf-8", errors="replace") if 200 <= res.status < 300 else "")
        delay = rules.crawl_delay
        if delay and delay > MAX_CRAWL_DELAY:
            from hwnoise.progress import info

            info(f"hwnoise: {origin}/robots.txt asks a Crawl-delay of {delay:g} s; "
                 f"waiting {MAX_CRAWL_DELAY:g} s between requests instead (the cap)")
            delay = MAX_CRAWL_DELAY
        rules.delay = delay if delay and delay > 0 else None  # applied by ``check``, per fetcher
        return rules


# -- the fetcher ---------------------------------------------------------------------------------

class Fetcher:
    """Fetch pages politely and safely. Thread-safe: use one Fetcher for a whole crawl."""

    def __init__(self, settings: FetchSettings | None = None, *, cookies: Iterable | None = None,
                 robots_rules: dict | None = None, **kw: Any):
        """``cookies``: a cookie jar (or cookies) to start from, e.g. those of the form page.
        ``robots_rules``: the robots.txt already read in this run (another fetcher's
        ``robots.rules``, e.g. the form page's ``Form.robots_rules``), shared, not read again."""
        self.settings = settings or FetchSettings(**kw)
        s = self.settings
        self.address = AddressPolicy(s.allow_private)
        self.throttle = HostThrottle(s.delay)
        self.retry = RetryPolicy(s.retries, s.backoff, s.max_retry_after)
        self.robots = RobotsPolicy(self, s.robots, robots_rules)
        self._sessions: dict[str, requests.Session] = {}
        self._guard = threading.Lock()
        #: one cookie jar for every host's session, as a browser has (cookies go by their domain)
        self.cookies = requests.cookies.RequestsCookieJar()
        for cookie in cookies or ():
            self.cookies.set_cookie(cookie)

    # sessions: one per host, so keep-alive connections are reused
    def session(self, host: str) -> requests.Session:
        with self._guard:
            sess = self._sessions.get(host)
            if sess is None:
                sess = _Session()
                sess.cookies = self.cookies
                sess.headers["User-Agent"] = self.settings.user_agent  # type: ignore[assignment]
                sess.headers["Accept"] = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
                adapter = _guarded_adapter(self.address)
                sess.mount("http://", adapter)
                sess.mount("https://", adapter)
                self._sessions[host] = sess
            return sess

    def close(self) -> None:
        with self._guard:
            for sess in self._sessions.values():
                sess.close()
            self._sessions.clear()

    def __enter__(self) -> "Fetcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # public entry point
    def fetch(self, url: str, method: str = "GET", fields: list[dict] | None = None,
              enctype: str | None = None, charset: str | None = None) -> FetchResult:
        """Fetch ``url`` (GET, or POST with ``fields`` as the form body, encoded in ``charset``:
        the form's encoding, UTF-8 by default); retries, redirects, robots.txt, address and body
        checks included. Raises FetchError naming the URL."""
        method = method.upper()
        data = encoded_fields(fields, charset) if method == "POST" else None
        return self._exchange_with_redirects(method, url, data, enctype, content_check=True,
                                             max_bytes=self.settings.max_bytes, robots=True)

    # redirects: by hand, every hop checked and recorded
    def _exchange_with_redirects(self, method: str, url: str, data: list | None, enctype: str | None, *,
                                 content_check: bool, max_bytes: int, robots: bool,
                                 prefix: bool = False) -> FetchResult:
        hops: list[dict] = []
        current, attempts = url, 0
        seen: set[tuple[str, str]] = set()
        while True:
            try:
                self.address.check(current)
                if robots:
                    self.robots.check(current)
                res = self._with_retries(method, current, data, enctype, content_check, max_bytes, prefix)
            except FetchError as exc:
                exc.redirects = hops + exc.redirects
                exc.final_url = exc.final_url or current
                exc.attempts += attempts
                if current != url and not exc.args[0].startswith(url):
                    exc.args = (f"{url}: {exc.args[0]} (reached by redirect)",)
                raise
            attempts += res.attempts
            if res.status in REDIRECT_STATUSES and "location" not in res.headers:
                # a redirect to nowhere: its body was not kept, so it is no page either
                raise FetchError(url, f"HTTP {res.status} without a Location header", status=res.status,
                                 headers=res.headers, redirects=hops, final_url=current, attempts=attempts)
            if res.status not in REDIRECT_STATUSES:
                res.url, res.redirects, res.attempts = url, hops, attempts
                return res
            location = _location(res.headers["location"])
            try:
                target = urljoin(current, location)
            except ValueError:  # not a URL: the check of the next hop refuses it, naming it
                target = location
            hops.append({"url": current, "status": res.status, "location": target})
            if len(hops) > self.settings.max_redirects:
                loop = " (a redirect loop)" if (method, target) in seen else ""
                raise FetchError(url, f"more than {counted(self.settings.max_redirects, 'redirect')}{loop}: "
                                      + " -> ".join(h["url"] for h in hops[-4:]) + f" -> {target}",
                                 status=res.status, headers=res.headers, redirects=hops,
                                 final_url=target, attempts=attempts)
            seen.add((method, current))
            if res.status == 303 or (res.status in (301, 302) and method == "POST"):
                method, data = "GET", None
            current = target

    def _with_retries(self, method: str, url: str, data: list | None, enctype: str | None,
                      content_check: bool, max_bytes: int, prefix: bool = False) -> FetchResult:
        attempt = 0
        while True:
            attempt += 1
            try:
                res = self._exchange(method, url, data, enctype, content_check, max_bytes, prefix)
            except (BlockedURL, RobotsDenied, BodyError) as exc:  # PageTimeout is a BodyError
                exc.attempts = attempt
                raise
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                    urllib3.exceptions.HTTPError) as exc:
                if _not_http(exc):  # the same server answers the same bytes again: no browser retries
                    raise FetchError(url, f"{_describe(exc)}; not retried", attempts=attempt) from None
                if attempt > self.retry.retries_of(exc):
                    raise FetchError(url, f"{_describe(exc)} (after {counted(attempt, 'attempt')})",
                                     attempts=attempt) from None
                time.sleep(self.retry.wait_for(attempt))
                continue
            res.attempts = attempt
            if self.retry.retryable_status(res.status):
                wait = self.retry.wait_for(attempt, res.headers)
                if attempt > self.retry.retries or wait > self.retry.max_retry_after:
                    why = (f"Retry-After {wait:.0f} s exceeds the limit of {self.retry.max_retry_after:g} s "
                           "(raise --max-retry-after)"
                           if attempt <= self.retry.retries else f"after {counted(attempt, 'attempt')}")
                    raise FetchError(url, f"HTTP {res.status} ({why})", status=res.status,
                                     headers=res.headers, attempts=attempt)
                time.sleep(wait)
                continue
            if res.status >= 400 and res.status not in REDIRECT_STATUSES:
                raise FetchError(url, f"HTTP {res.status}", status=res.status, headers=res.headers,
                                 attempts=attempt)
            return res

    def _exchange(self, method: str, url: str, data: list | None, enctype: str | None,
                  content_check: bool, max_bytes: int, prefix: bool = False) -> FetchResult:
        """One request and its (bounded) body, holding the host's slot."""
        host = urlsplit(url).netloc.lower()
        sess = self.session(host)
        kwargs = self._request_kwargs(data, enctype)
        with self.throttle.lock(host):
            self.throttle.wait(host)
            clock = _PageClock(self.settings.page_timeout)
            try:
                status, headers, body = self._send(sess, method, url, kwargs, clock, content_check, max_bytes,
                                                   prefix)
            finally:
                clock.stop()
                self.throttle.done(host)
        if clock.expired:  # a read cut by the watchdog may end quietly (headers cut mid-line)
            raise self._page_timeout(url, status, headers)
        if content_check and status < 300 and not headers.get("content-type"):
            self._check_sniffed(url, status, headers, body)
        return FetchResult(url=url, final_url=url, method=method, status=status, headers=headers, body=body,
                           http_charset=charset_of(headers.get("content-type")))

    def _request_kwargs(self, data: list | None, enctype: str | None) -> dict[str, Any]:
        """requests' arguments: the timeouts, no redirects, a streamed body, the fields
        (``encoded_fields``: multipart or not)."""
        kwargs: dict[str, Any] = {"timeout": self.settings.timeout, "allow_redirects": False, "stream": True}
        if data is not None:
            body, ctype = form_body(data, enctype)
            kwargs["data"], kwargs["headers"] = body, {"Content-Type": ctype}
        return kwargs

    def _send(self, sess: requests.Session, method: str, url: str, kwargs: dict[str, Any], clock: _PageClock,
              content_check: bool, max_bytes: int, prefix: bool = False) -> tuple[int, dict, bytes]:
        """Send the request, read its checked, bounded body; a transport error past the page time: PageTimeout."""
        status, headers = None, {}
        try:
            resp = sess.request(method, url, **kwargs)
            try:
                headers = {k.lower(): v for k, v in resp.headers.items()}
                status = resp.status_code
                if content_check and status in NO_PAGE_STATUSES:
                    raise self._no_page(url, status, headers)
                if content_check and status == 206:
                    raise self._partial(url, headers)
                if content_check and status < 300:
                    self._check_type(url, status, headers)
                # read even a redirect's or an error's (bounded) body, so the connection is reused
                try:
                    body = self._read_body(url, resp, status, headers, max_bytes, clock, prefix)
                except BodyError:
                    if status not in REDIRECT_STATUSES or "location" not in headers or clock.expired:
                        raise
                    body = b""  # a redirect's body is never kept: one too big or undecodable is
                    # dropped with its connection, and the redirect followed (as browsers do)
                if status in REDIRECT_STATUSES:
                    body = b""
            finally:
                resp.close()
        except requests.exceptions.InvalidHeader as exc:  # Content-Length given twice, unequal
            raise BodyError(url, f"the length of the answer is not known ({exc}); not kept",
                            status=status, headers=headers) from None
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if clock.expired:
                raise self._page_timeout(url, status, headers) from None
            if _wrapped(exc, HeadersTooBig):  # the same server sends the same headers: no retry
                raise BodyError(url, f"the response headers exceed {MAX_HEADER_BYTES // 1024} KiB, the most a "
                                     "browser reads (Chromium: ERR_RESPONSE_HEADERS_TOO_BIG); not kept") from None
            raise
        return status, headers, body

    def _page_timeout(self, url: str, status: int | None, headers: dict) -> PageTimeout:
        """The error of a response cut by the page time limit."""
        return PageTimeout(url, f"response not complete after {self.settings.page_timeout:g} s, the page time "
                                "limit (raise --page-timeout); cut", status=status, headers=headers)

    def _no_page(self, url: str, status: int, headers: dict) -> BodyError:
        """The error of an answer that has no page (a 204 to a search, a 304 to a request that
        asked nothing conditional): it was kept as an empty page, journaled a success."""
        why = ", though the request was not conditional" if status == 304 else ""
        return BodyError(url, f"HTTP {status} {http.HTTPStatus(status).phrase}{why}: the server answered with "
                              "no page; not kept", status=status, headers=headers)

    def _partial(self, url: str, headers: dict) -> BodyError:
        """The error of a 206 (hwnoise asks no range): part of a page, kept before as the whole one."""
        got = headers.get("content-range")
        return BodyError(url, f"HTTP 206 Partial Content{f' ({got})' if got else ''}: the server sent part of a "
                              "page, though no range was asked; not kept", status=206, headers=headers)

    def _check_type(self, url: str, status: int, headers: dict) -> None:
        given = headers.get("content-type", "")
        ctype = content_type(given)[0] or given.split(";")[0].strip().lower()
        if ctype and ctype not in self.settings.content_types:
            raise BodyError(url, f"content type {ctype!r} is not HTML; not kept", status=status, headers=headers)

    def _check_sniffed(self, url: str, status: int, headers: dict, body: bytes) -> None:
        """A body sent without a Content-Type is kept only if it looks like HTML (sniffed as browsers do)."""
        reason = sniff_html(body)
        if reason:
            raise BodyError(url, f"no Content-Type, and the body is {reason}, not HTML; not kept",
                            status=status, headers=headers)

    def _read_body(self, url: str, resp: requests.Response, status: int, headers: dict, max_bytes: int,
                   clock: _PageClock | None = None, prefix: bool = False) -> bytes:
        """The body, at most ``max_bytes`` of it decoded (a longer one a ``BodyError``; with ``prefix``,
        its first ``max_bytes``, the rest left unread: robots.txt, RFC 9309 section 2.5)."""
        coded = _transfer_codings(headers.get("transfer-encoding"))
        if status < 300 and coded:  # checked before reading: unchunked, its end is only the close
            raise BodyError(url, f"Transfer-Encoding {headers['transfer-encoding']!r}: the body is sent with the "
                                 f"transfer coding {', '.join(coded)!r}, which browsers do not decode; not kept",
                            status=status, headers=headers)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes and "content-encoding" not in headers and not prefix:
            raise BodyError(url, f"body of {int(declared)} bytes exceeds the maximum of {counted(max_bytes, 'byte')} "
                                 "(raise --max-bytes)", status=status, headers=headers)
        chunks, size = [], 0
        try:
            for chunk in resp.iter_content(65536):  # decoded: the limit holds after decompression
                size += len(chunk)
                if size > max_bytes and prefix:
                    chunks.append(chunk[:len(chunk) - (size - max_bytes)])
                    return b"".join(chunks)
                if size > max_bytes:
                    raise BodyError(url, f"body cut off after {counted(max_bytes, 'byte')}, the maximum (raise --max-bytes)",
                                    status=status, headers=headers)
                chunks.append(chunk)
                if clock is not None and clock.expired:
                    raise self._page_timeout(url, status, headers)
        except requests.exceptions.ContentDecodingError as exc:  # the server's headers are wrong: a
            # browser shows an error page too (no retry: the same server sends the same headers)
            raise BodyError(url, f"the body does not decode as its Content-Encoding "
                                 f"({headers.get('content-encoding', '?')}) says: {_decoding_reason(exc)}; "
                                 "not kept", status=status, headers=headers) from None
        if status < 300 and not _decoded_whole(resp):
            raise BodyError(url, f"the body does not decode as its Content-Encoding "
                                 f"({headers.get('content-encoding', '?')}) says: its compressed stream "
                                 f"is cut short ({counted(size, 'byte')} decoded); not kept", status=status, headers=headers)
        return b"".join(chunks)


#: the printable ASCII a Location keeps as it is (its own percent-escapes included)
_URL_SAFE = "".join(map(chr, range(0x21, 0x7F)))


def _location(value: str) -> str:
    """A Location header as the URL a browser follows. http.client reads header bytes as
    latin-1, but a Location that is not ASCII is sent in UTF-8 (requests re-reads it so when
    it follows redirects itself): taken as latin-1, ``/café`` was followed to
    ``/caf%C3%83%C2%A9``. Bytes that are not UTF-8 are percent-encoded as they are."""
    value = value.strip()
    try:
        raw = value.encode("latin-1")
    except UnicodeEncodeError:
        return value
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return quote(raw, safe=_URL_SAFE)


def _transfer_codings(value: str | None) -> list[str]:
    """The codings of a Transfer-Encoding header besides chunked (and identity, which codes
    nothing). No browser decodes them: de-chunked, a gzip one was kept as the page, compressed."""
    codings = (part.strip().lower() for part in (value or "").split(","))
    return [c for c in codings if c and c not in ("chunked", "identity")]


def _decoded_whole(resp: requests.Response) -> bool:
    """Whether the body's Content-Encoding decoders reached the end of their compressed
    streams. urllib3 hands out what a gzip, deflate or brotli stream cut short decodes to, without
    a word (its zstd decoder alone raises), and the page was kept as whole: half a page, or
    an empty one. A body with nothing on the wire, or a decoder not known here, counts as whole."""
    raw = resp.raw
    decoder = getattr(raw, "_decoder", None)
    if decoder is None or not raw.tell():
        return True
    swallowing = getattr(getattr(urllib3.response, "GzipDecoderState", None), "SWALLOW_DATA", None)
    for dec in getattr(decoder, "_decoders", [decoder]):
        obj = getattr(dec, "_obj", None)
        if obj is None or (swallowing is not None and getattr(dec, "_state", None) == swallowing):
            continue  # gzip ignores what trails a whole member, as other gzip readers do
        ended = getattr(obj, "eof", None)
        if ended is None and hasattr(obj, "is_finished"):
            ended = obj.is_finished()
        if ended is False:
            return False
    return True


def _wrapped(exc: BaseException, kind: type) -> bool:
    """Whether ``exc`` is, or wraps (in its args, as urllib3 and requests wrap), an error of ``kind``."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        inner = todo.pop()
        if isinstance(inner, kind):
            return True
        if isinstance(inner, BaseException) and id(inner) not in seen:
            seen.add(id(inner))
            todo.extend(inner.args)
    return False


def _decoding_reason(exc: Exception) -> str:
    """The decompressor's own words from a ``ContentDecodingError`` (urllib3 wraps them twice)."""
    inner: object = exc
    while isinstance(inner, BaseException) and inner.args:
        inner = inner.args[-1]
    return str(inner).split(": ", 1)[-1] if str(inner) else type(exc).__name__


def _innermost(exc: BaseException) -> BaseException:
    """The exception a transport error wraps, deepest first (requests wraps urllib3's, which
    wraps http.client's in its args)."""
    seen = 0
    while seen < 10:
        inner = next((a for a in exc.args if isinstance(a, BaseException)), None) or exc.__cause__ or exc.__context__
        if inner is None:
            return exc
        exc, seen = inner, seen + 1
    return exc


def _not_http(exc: BaseException) -> bool:
    """Whether a transport error is an answer that is not HTTP (bytes without a status line):
    a server that answers so answers so again (Chromium: ERR_INVALID_HTTP_RESPONSE, not retried).
    A connection closed without answering (``RemoteDisconnected``, a BadStatusLine too) is not it."""
    cause = _innermost(exc)
    return isinstance(cause, http.client.BadStatusLine) and not isinstance(cause, http.client.RemoteDisconnected)


def _describe(exc: Exception) -> str:
    """A one-line reason for a transport error."""
    if isinstance(exc, requests.ConnectTimeout):
        return "connect timeout"
    if isinstance(exc, (requests.ReadTimeout, urllib3.exceptions.ReadTimeoutError)):
        return "read timeout"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "connection broken mid-body"
    if isinstance(exc, requests.ConnectionError):
        text = str(exc)
        if "Connection refused" in text:
            return "connection refused"
        if "reset" in text.lower():
            return "connection reset"
        if "timed out" in text.lower():
            return "read timeout"
        cause = _innermost(exc)
        if isinstance(cause, http.client.RemoteDisconnected):
            return "the server closed the connection without answering"
        if isinstance(cause, http.client.BadStatusLine):
            line = (cause.args[0] if cause.args else "") or ""
            return f"the answer is not HTTP (it begins {str(line)[:60]!r}, no status line)"
        return "connection error: " + text.split(":")[-1].strip().rstrip(")'\"")[:120]
    return f"{type(exc).__name__}: {exc}"[:200]
