"""The rendered mode: what headless Chromium computes for every element the walker emits.

``render_dataset(dataset)`` loads every page of a dataset in Debian's Chromium
(``/usr/bin/chromium``, driven by Playwright over the DevTools protocol) and
writes ``DATASET/render.parquet``: one row per walker row, keyed ``(page, node)``,
with the computed ``display``, ``visibility``, ``opacity``, ``font_size`` (px),
``font_weight``, ``color`` (``rgb(...)``) and the border box ``x, y, width,
height`` (CSS px, page coordinates) at a 1366×768 viewport.

How the join is made exact: the page is walked once by ``features.walk.walk_page``
keeping its lxml tree (``keep_tree=True``); the walk's elements, its rows in order,
each get an attribute ``data-hwnode="i"`` in that tree, and the tree, serialised, is
what Chromium loads. One JavaScript call then reads every ``[data-hwnode]`` element.
``render_dataset`` also checks each page's element tags against the walk's rows and
records the page as failed when they disagree, so a misjoin can never be written. A node the browser lost (its parser or a script removed it) keeps its
row with ``display`` "" and NaN numbers.

Safety: no request leaves the machine. The page's stored bytes, decoded and tagged,
are written into a fresh ``about:blank`` document, one per page (``set_content``: no
navigation, so relative URLs lead nowhere; no timer or change of a page's scripts outlives
it); every request the page then makes (images, style sheets, frames, fetches) is refused
inside the browser (DevTools ``Network.setBlockedURLs`` with ``*``) and logged; as a second
guard the browser's proxy is a closed port on 127.0.0.1 with loopback not bypassed. ``<meta http-equiv=refresh>`` is removed and a
page that navigates away anyway is recorded as failed. Scripts are off unless
``scripts=True``. The page keeps its own doctype (none: quirks mode, as it was).

Robustness: every page has a time limit (``timeout`` seconds for the load, and a
watchdog that kills the browser's process group when a page overruns it), so a
page that hangs or crashes the browser is recorded as failed in
``DATASET/render_failed.jsonl`` and the run goes on with a fresh browser. Each
browser is a Chromium process this module starts itself, in its own process
group, with a fresh empty profile that is removed afterwards.

Reruns: a page already in ``render.parquet`` (or recorded as failed, unless
``retry_failed``) is not rendered again. Results are merged into
``render.parquet`` atomically (temp file + rename) every few pages, so a killed
run keeps what it had rendered.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from lxml import etree

from hwnoise.dataset import Dataset, append_jsonl, now_iso, read_jsonl
from hwnoise.errors import HwnoiseError, PageError
from hwnoise.features.elements import shown_elements
from hwnoise.features.media import VIEWPORT  # the screen pages are laid out for (seed 002 §4.2:
#                                              1366x768); the walk answers media queries for it
from hwnoise.features.walk import walk_page

__all__ = ["render_dataset", "render_page", "tagged_html", "Browser",
           "RenderError", "NoBrowserError", "PageRenderError", "RENDER_COLUMNS", "VIEWPORT", "CHROMIUM",
           "check_browser", "chromium_available",
           "read_render", "render_path", "page_render"]

#: Debian's Chromium.
CHROMIUM = os.environ.get("HWNOISE_CHROMIUM", "/usr/bin/chromium")
#: Columns of render.parquet, in order.
RENDER_COLUMNS = ["page", "node", "tag", "display", "visibility", "opacity", "font_size",
                  "font_weight", "color", "x", "y", "width", "height"]
_NUM = ["opacity", "font_size", "font_weight", "x", "y", "width", "height"]
ATTR = "data-hwnode"
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars", "--mute-audio", "--disable-extensions",
          "--disable-default-apps", "--no-default-browser-check", "--disable-breakpad",
          "--disable-crash-reporter",
          # a second guard: anything not refused inside the browser goes to a closed local port
          "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
          "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]
_FLUSH_PAGES = 25
_FLUSH_SECONDS = 30.0

#: Every ``[data-hwnode]`` element's style and box, as one JSON string: Playwright hands a returned
#: array over value by value (24-30 s to read 200,000 elements, 3.2 s as one string). JSON has no
#: NaN, +-Infinity or -0 (``JSON.stringify`` makes them null and 0), so those numbers go as their
#: names, which ``float`` reads back (``_collected``).
_COLLECT_JS = """() => {
  const out = [];
  const sx = window.scrollX, sy = window.scrollY;
  const num = v => Number.isFinite(v) && !Object.is(v, -0) ? v : Object.is(v, -0) ? '-0' : String(v);
  for (const e of document.querySelectorAll('[data-hwnode]')) {
    const s = getComputedStyle(e);
    const r = e.getBoundingClientRect();
    out.push([num(+e.getAttribute('data-hwnode')), s.display, s.visibility, num(+s.opacity),
              num(parseFloat(s.fontSize)), num(+s.fontWeight || 400), s.color,
              num(r.left + sx), num(r.top + sy), num(r.width), num(r.height)]);
  }
  return JSON.stringify(out);
}"""
#: the places of the numbers in a row of ``_COLLECT_JS``
_JS_NUMBERS = (0, 3, 4, 5, 7, 8, 9, 10)


class _Navigated(Exception):
    """The page left the document it was written into: ``to URL``, or ``it reloaded itself``."""


class RenderError(HwnoiseError):
    """The browser cannot be used, or a page could not be rendered (names the page)."""


class NoBrowserError(RenderError):
    """No Chromium or no Playwright here: no page can be rendered on this machine, so a method
    that renders pages stops on it rather than count every page as one the browser failed."""


_NO_PLAYWRIGHT = ("the rendered mode needs Playwright for Python: pip install 'hwnoise[render]' "
                  "(never 'playwright install': hwnoise uses Debian's chromium)")


def _no_chromium() -> str:
    return (f"{CHROMIUM}: no Chromium there; install Debian's 'chromium' package "
            "(apt-get install -y chromium) or set HWNOISE_CHROMIUM")


def check_browser() -> None:
    """A ``NoBrowserError`` when this machine cannot render: no Chromium at ``CHROMIUM``, or no
    Playwright. Asked before any page, since every page would fail alike and be recorded as
    failed (a rerun after the install then rendered none of them)."""
    import importlib

    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        raise NoBrowserError(_no_chromium())
    try:
        importlib.import_module("playwright.sync_api")
    except ImportError:
        raise NoBrowserError(_NO_PLAYWRIGHT) from None


class PageRenderError(RenderError, PageError):
    """A page the browser could not render (over the time limit, navigated away, crashed the
    browser); the browser itself works, and the next page gets a fresh one."""


def chromium_available() -> bool:
    """True when the Chromium executable and Playwright are both there."""
    try:
        check_browser()
    except RenderError:
        return False
    return True


def render_path(dataset: Dataset | str | os.PathLike) -> Path:
    path = dataset.path if isinstance(dataset, Dataset) else Path(dataset)
    return path / "render.parquet"


def read_render(dataset: Dataset | str | os.PathLike, pages: list[str] | None = None) -> pd.DataFrame | None:
    """``DATASET/render.parquet`` (only ``pages`` when given), or None when it does not exist."""
    path = render_path(dataset)
    if not path.exists():
        return None
    filters = [("page", "in", list(pages))] if pages is not None else None
    return _read_rows(path, filters=filters)


def _read_rows(path: Path, **options) -> pd.DataFrame:
    """``render.parquet`` read (``pd.read_parquet``'s ``options``); a file that cannot be read (a
    copy cut short, a disk that failed, not Parquet) is one line naming it and what to do."""
    try:
        return pd.read_parquet(path, **options)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is one clear line
        raise RenderError(f"{path}: cannot read the rendered rows ({type(exc).__name__}: {exc}); "
                          f"remove it and run 'hwnoise render {path.parent}' again") from None


# -- the page tagged with the walker's rows -----------------------------------------------------
def tagged_html(html: bytes | str, *, http_charset: str | None = None) -> tuple[str, list[str]]:
    """The page serialised with ``data-hwnode="i"`` on its i-th shown element, and their tags.

    ``<meta http-equiv=refresh>`` is removed so that the page cannot navigate away.
    """
    view = shown_elements(html, http_charset)
    return _tag_tree(view.root, view.elements)


def _tag_tree(root: etree._Element, els: list) -> tuple[str, list[str]]:
    """``tagged_html`` of a parsed tree and its shown elements (the tree is changed)."""
    for meta in root.xpath("//meta[@http-equiv]"):
        if str(meta.get("http-equiv", "")).strip().lower() == "refresh":
            meta.getparent().remove(meta)
    for el in root.xpath(f"//*[@{ATTR}]"):  # the page's own attributes of that name
        del el.attrib[ATTR]
    tags = []
    for i, el in enumerate(els):
        el.set(ATTR, str(i))
        tags.append(el.tag)
    out = etree.tostring(root, method="html", encoding="unicode")
    doctype = root.getroottree().docinfo.doctype  # "" keeps the page in quirks mode, as it was
    return (doctype + "\n" + out if doctype else out), tags


# -- Playwright's driver: one per process, shared by the browsers of that process -----------
_PW: dict[str, Any] = {"cm": None, "pw": None, "users": 0}


def _playwright_acquire():
    if _PW["pw"] is None:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise NoBrowserError(_NO_PLAYWRIGHT) from None
        cm = sync_playwright()
        _PW["pw"], _PW["cm"] = cm.__enter__(), cm
    _PW["users"] += 1
    return _PW["pw"]


def _playwright_release() -> None:
    _PW["users"] -= 1
    if _PW["users"] <= 0 and _PW["cm"] is not None:
        cm, _PW["cm"], _PW["pw"], _PW["users"] = _PW["cm"], None, None, 0
        try:
            cm.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - the driver may already be gone
            pass


#: Browsers this process started and has not ended yet (killed at exit, whatever happens).
_LIVE: "weakref.WeakSet[Browser]" = weakref.WeakSet()


@atexit.register
def _kill_live() -> None:
    for b in list(_LIVE):
        b._kill()


# -- one browser ---------------------------------------------------------------------------
def _kill_group(pid: int) -> None:
    """SIGKILL to process group ``pid`` (a Chromium started in a session of its own, and its children)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _remove_profile(profile: str) -> None:
    """A Chromium profile folder, and the singleton socket folder it links to."""
    _remove_singleton(Path(profile))
    shutil.rmtree(profile, ignore_errors=True)


def _still_chromium(pid: int, profile: str) -> bool:
    """Whether process group ``pid`` is still the Chromium started with ``profile``: its leader
    runs with that profile, is a zombie, or is gone (a number stays taken while its group lives);
    not when the number now names another process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[-1].split()[:1]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return state == [b"Z"] or f"--user-data-dir={profile}".encode() in cmdline.split(b"\0")


def _started_with(profile: str) -> list[int]:
    """The processes running with the Chromium profile folder ``profile`` (Chromium and its
    children all name it), found in /proc."""
    flag = f"--user-data-dir={profile}".encode()
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if flag in cmdline.read_bytes().split(b"\0"):
                found.append(int(cmdline.parent.name))
        except (OSError, ValueError):
            continue
    return found


def _end_started_with(profile: str) -> bool:
    """SIGKILL to the process group of every process running with ``profile`` (``_started_with``);
    whether there was one."""
    found = _started_with(profile)
    for pid in found:
        try:
            _kill_group(os.getpgid(pid))
        except ProcessLookupError:
            pass
    return bool(found)


def end_orphan(pid: int, profile: str) -> None:
    """End the Chromium (``pid``, ``profile``) of a process that died without ending it (a render
    worker killed by a signal or the OOM killer: its Chromium runs in a session of its own)."""
    if _still_chromium(pid, profile):
        _kill_group(pid)
    _remove_profile(profile)


def _remove_singleton(profile: Path) -> None:
    """Remove the folder Chromium keeps its singleton socket in (``$TMPDIR/org.chromium.Chromium.*``,
    linked from the profile's ``SingletonSocket``), which a killed browser leaves behind."""
    try:
        target = Path(os.readlink(profile / "SingletonSocket")).parent
    except OSError:
        return
    if target.name.startswith("org.chromium.Chromium."):
        shutil.rmtree(target, ignore_errors=True)


def _artifacts_in(pw, profile: str) -> dict[str, str]:
    """``connect_over_cdp``'s option that puts Playwright's artifacts folder in the profile (Playwright
    1.61 and later), so that it goes with the profile: the driver otherwise makes
    ``$TMPDIR/playwright-artifacts-*`` and removes it as it closes, which it never does when SIGTERM
    to the process group (a batch system ending ``hwnoise render``) ends it."""
    import inspect

    if "artifacts_dir" not in inspect.signature(pw.chromium.connect_over_cdp).parameters:
        return {}
    folder = Path(profile) / "playwright-artifacts"
    folder.mkdir(exist_ok=True)
    return {"artifacts_dir": str(folder)}


class Browser:
    """One headless Chromium that this process starts, drives and kills (its process group).

    ``render(html, n)`` returns the rows of one page prepared by ``tagged_html``; a page that overruns
    ``timeout`` gets the browser killed and raises ``RenderError``; the next call starts a
    fresh browser. ``requests`` logs every request a page made, all refused (URLs).
    """

    def __init__(self, *, scripts: bool = False, timeout: float = 15.0, on_start=None,
                 profiles: str | None = None):
        self.scripts = scripts
        self.timeout = float(timeout)
        self.on_start = on_start  # called with (Chromium's pid, its profile folder) at each start
        self.profiles = profiles  # the folder its profile folders go in (None: TMPDIR)
        self._pw = None
        self._proc: subprocess.Popen | None = None
        self._profile: str | None = None
        self._browser = None
        self._context = None
        self._page = None
        self._refused: list[str] = []
        self._asked: list[str] = []
        #: navigations of the main frame since the page was written (a reload stays at about:blank);
        #: None before, while about:blank loads
        self._navigations: int | None = None
        self.requests: list[str] = []
        self.started = 0

    # lifecycle
    def _playwright(self):
        if self._pw is None:
            self._pw = _playwright_acquire()
        return self._pw

    def _start(self) -> None:
        if not os.path.isfile(CHROMIUM):
            raise NoBrowserError(_no_chromium())
        pw = self._playwright()
        self._profile = tempfile.mkdtemp(prefix="hwnoise-chromium-", dir=self.profiles)
        args = [CHROMIUM, *_FLAGS, f"--user-data-dir={self._profile}",
                f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "about:blank"]
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        if self.on_start is not None:
            self.on_start(self._proc.pid, self._profile)
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        port = ""
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if port_file.exists():
                port = port_file.read_text().split("\n")[0].strip()
                if port:
                    break
            time.sleep(0.05)
        if not port:
            self._kill()
            raise RenderError(f"{CHROMIUM} did not start (no DevTools port within 30 s)")
        try:
            self._browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}", timeout=30_000,
                                                         **_artifacts_in(pw, self._profile))
        except Exception as exc:  # noqa: BLE001 - never leave a browser behind
            self._kill()
            raise RenderError(f"cannot connect to {CHROMIUM}: {type(exc).__name__}: {exc}") from None
        _LIVE.add(self)
        self.started += 1
        try:
            self._context = self._browser.new_context(
                viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]},
                java_script_enabled=self.scripts, service_workers="block")
            self._page = self._context.new_page()
            cdp = self._context.new_cdp_session(self._page)
            cdp.send("Network.enable")
            cdp.send("Network.setBlockedURLs", {"urls": ["*"]})  # refused inside the browser
            self._page.on("requestfailed", lambda req: self._refused.append(req.url))
            self._page.on("request", lambda req: self._asked.append(req.url))
            self._page.on("framenavigated", self._navigated)
        except Exception as exc:  # noqa: BLE001 - never leave a browser behind
            self._kill()
            raise RenderError(f"cannot open a page in {CHROMIUM}: {type(exc).__name__}: {exc}") from None

    def _kill(self) -> None:
        """End this browser: its process group (Chromium and its children), then its profile."""
        proc, self._proc = self._proc, None
        self._browser = self._context = self._page = None
        _LIVE.discard(self)
        if proc is not None:
            _kill_group(proc.pid)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        elif self._profile:  # started but never held: Ctrl-C came inside subprocess.Popen
            _end_started_with(self._profile)
        if self._profile:
            _remove_profile(self._profile)
            self._profile = None

    def close(self) -> None:
        """Kill the browser and stop Playwright's driver."""
        self._kill()
        if self._pw is not None:
            self._pw = None
            _playwright_release()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # one page
    def _ready(self) -> None:
        """A live browser for the next page: started when there is none, and started afresh when the
        one there died after its last page (the OOM killer, or the time limit's kill landing as a
        read returned), which would fail the next page with 'TargetClosedError'."""
        if self._proc is not None and self._proc.poll() is not None:
            self._kill()
        if self._browser is None:
            self._start()

    def _load(self, html: str):
        """Load ``html`` into a new document and wait for its load event; returns the page.

        ``about:blank`` comes first: ``set_content`` writes into the document there is, so the last
        page's timers and what its scripts changed in the window would go on in this one.
        """
        self._ready()
        self._navigations = None
        self._page.goto("about:blank", timeout=self.timeout * 1000)
        self._navigations = 0
        self._page.set_content(html, wait_until="load", timeout=self.timeout * 1000)
        return self._page

    def _navigated(self, frame) -> None:
        """Count a navigation of the main frame (Playwright's ``framenavigated``)."""
        if self._navigations is not None and self._page is not None and frame == self._page.main_frame:
            self._navigations += 1

    def _left(self, page) -> str | None:
        """How the page left the document it was written into, or None when it did not."""
        if page.url != "about:blank":
            return f"to {page.url}"
        return "it reloaded itself" if self._navigations else None

    def _left_after_error(self) -> str | None:
        """``_left`` once the events a failed call left unread are read (a navigation destroys the
        document being read before Playwright reports it); None when the page cannot tell."""
        try:
            self._page.wait_for_timeout(100)
        except Exception:  # noqa: BLE001 - the browser or its page is gone
            return None
        return self._left(self._page)

    def render(self, html: str, n: int) -> tuple[list[list], list[str]]:
        """Load ``html`` (tagged by ``tagged_html``) and read nodes ``0..n-1``.

        Returns ``(rows, refused_urls)``; raises RenderError on a timeout or a crash
        (the browser is then dead and the next call starts a new one).
        """
        self._ready()
        self._refused, self._asked = [], []
        killed = threading.Event()

        def watchdog() -> None:
            killed.set()
            proc = self._proc
            if proc is not None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

        timer = threading.Timer(self.timeout + 5.0, watchdog)
        timer.daemon = True
        timer.start()
        try:
            page = self._load(html)
            raw = _collected(page.evaluate(_COLLECT_JS))
            if self._left(page):
                raise _Navigated(self._left(page))
        except _Navigated as exc:
            self._kill()
            raise PageRenderError(f"the page navigated away ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - a timeout or a crash: the browser is not reused
            timed_out = "Timeout" in type(exc).__name__ or killed.is_set()
            left = None if timed_out else self._left_after_error()
            self._kill()
            if timed_out:
                raise PageRenderError(f"over the {self.timeout:g} s time limit") from None
            if left:  # the document went while it was read
                raise PageRenderError(f"the page navigated away ({left})") from None
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise PageRenderError(f"browser failed: {type(exc).__name__}: {msg[:200]}") from None
        finally:
            timer.cancel()
        if killed.is_set():  # the kill came as the read returned: over the limit all the same
            self._kill()
            raise PageRenderError(f"over the {self.timeout:g} s time limit")
        # every request the page made was refused; log them (asked but not failed: blocked too)
        refused = list(dict.fromkeys(self._refused + self._asked))
        self.requests.extend(refused)
        rows = _rows_of(raw, n)
        return rows, refused

    def dom(self, html: str) -> str:
        """Load ``html`` as ``render`` does (no network) and return the document as Chromium then
        holds it (``outerHTML``): with ``scripts=True``, after the page's inline scripts ran."""
        return self._load(html).evaluate("document.documentElement.outerHTML")

    def shown_text(self, html: str) -> str:
        """Load ``html`` as ``dom`` does and return the text Chromium shows: the body's
        ``innerText`` (what CSS hides left out), "" without a body."""
        return self._load(html).evaluate("document.body ? document.body.innerText : ''")

    def screenshot(self, html: str, path: str | os.PathLike, *, width: int = 1000,
                   height: int = 700) -> Path:
        """Load ``html`` as ``render`` does (no network) and save a PNG of its top
        ``width`` x ``height`` CSS px (for figures)."""
        self._ready()
        self._page.set_viewport_size({"width": width, "height": height})
        page = self._load(html)
        page.screenshot(path=str(path), full_page=False)
        page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
        return Path(path)


def _collected(text: str) -> list[list]:
    """The rows ``_COLLECT_JS`` returned as JSON, with the numbers it sent by name (NaN,
    Infinity, -Infinity, -0) as the floats they are."""
    rows = json.loads(text)
    for row in rows:
        for i in _JS_NUMBERS:
            if isinstance(row[i], str):
                row[i] = float(row[i])
    return rows


def _rows_of(raw: list[list], n: int) -> list[list]:
    """One row per node 0..n-1 (a node the browser lost gets empty values)."""
    out: list[list | None] = [None] * n
    for r in raw:
        k = int(r[0])
        if 0 <= k < n and out[k] is None:
            out[k] = r
    missing = ["", "", np.nan, np.nan, np.nan, "", np.nan, np.nan, np.nan, np.nan]
    return [r if r is not None else [k, *missing] for k, r in enumerate(out)]


def _frame(page_id: str, tags: list[str], rows: list[list]) -> pd.DataFrame:
    arr = list(zip(*rows)) if rows else [[] for _ in range(11)]
    df = pd.DataFrame({
        "page": pd.Series([page_id] * len(rows), dtype=object),
        "node": np.asarray(arr[0], dtype=np.int64),
        "tag": pd.Series(tags, dtype=object),
        "display": pd.Series(arr[1], dtype=object),
        "visibility": pd.Series(arr[2], dtype=object),
        "opacity": np.asarray(arr[3], dtype=np.float64),
        "font_size": np.asarray(arr[4], dtype=np.float64),
        "font_weight": np.asarray(arr[5], dtype=np.float64),
        "color": pd.Series(arr[6], dtype=object),
        "x": np.asarray(arr[7], dtype=np.float64),
        "y": np.asarray(arr[8], dtype=np.float64),
        "width": np.asarray(arr[9], dtype=np.float64),
        "height": np.asarray(arr[10], dtype=np.float64),
    })
    return df[RENDER_COLUMNS]


def render_page(html: bytes | str, *, http_charset: str | None = None, scripts: bool = False,
                timeout: float = 15.0, browser: Browser | None = None, page_id: str = "") -> pd.DataFrame:
    """The render rows of one page (``RENDER_COLUMNS``; ``node`` = the walker's row index).

    Starts (and ends) a browser of its own unless ``browser`` is given.
    """
    text, tags = tagged_html(html, http_charset=http_charset)
    own = browser is None
    br = browser or Browser(scripts=scripts, timeout=timeout)
    try:
        rows, _ = br.render(text, len(tags))
    finally:
        if own:
            br.close()
    return _frame(page_id, tags, rows)


# -- a dataset -----------------------------------------------------------------------------
def _job(browser: Browser, job: tuple, check: bool) -> tuple[str, pd.DataFrame | None, str | None, int]:
    """Render one page of a dataset: ``(page id, rows, error, refused requests)``."""
    pid, html_path, charset = job
    try:
        data = Path(html_path).read_bytes()
    except OSError as exc:
        return pid, None, f"{html_path}: cannot read the page: {exc.strerror or exc}", 0
    try:
        walk = walk_page(data, (), http_charset=charset, keep_tree=True)  # the page's one walk
        walk_tags = list(walk.column("tag"))
        text, tags = _tag_tree(walk.root, walk.elements)
        if check and walk_tags != tags:  # the tree's tags, read after tagging, against the rows
            return pid, None, (f"{html_path}: the rendered elements do not match the walker's "
                               f"rows ({len(tags)} against {len(walk_tags)}); not stored"), 0
        rows, refused = browser.render(text, len(tags))
    except RenderError as exc:
        return pid, None, f"{html_path}: {exc}", 0
    except Exception as exc:  # noqa: BLE001 - one bad page never stops the run
        return pid, None, f"{html_path}: {type(exc).__name__}: {exc}", 0
    return pid, _frame(pid, tags, rows), None, len(refused)


def _worker(tasks, results, scripts: bool, timeout: float, check: bool, profiles: str) -> None:
    """A worker process: render pages from ``tasks`` until None, one browser at a time, its
    profiles in the run's folder ``profiles``."""
    _PW.update(cm=None, pw=None, users=0)  # a forked child never shares its parent's driver
    me = os.getpid()
    # each Chromium told to the parent, which ends it should this process be killed
    browser = Browser(scripts=scripts, timeout=timeout, profiles=profiles,
                      on_start=lambda pid, profile: results.put(("browser", (pid, profile), me)))
    try:
        while True:
            job = tasks.get()
            if job is None:
                break
            results.put(("start", job[0], os.getpid()))
            results.put(("done", *_job(browser, job, check)))
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the terminal's group; the run says it
        pass
    finally:
        browser.close()
        results.put(("exit", None, os.getpid()))


def _render_batch(jobs: list[tuple], scripts: bool, timeout: float, check: bool) -> list[tuple]:
    """A batch of pages rendered by one browser (one task on a ``hwnoise.scheduler``; Playwright's
    sync API wants one thread per process, so Dask workers for render run ``--nthreads 1``)."""
    with Browser(scripts=scripts, timeout=timeout) as browser:
        return [_job(browser, job, check) for job in jobs]


def _done_pages(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return set(_read_rows(path, columns=["page"])["page"].unique())


def _merge(path: Path, frames: list[pd.DataFrame]) -> None:
    """Merge new pages into render.parquet atomically (temp file + rename)."""
    if not frames:
        return
    new = pd.concat(frames, ignore_index=True)
    if path.exists():
        old = _read_rows(path)
        old = old[~old["page"].isin(set(new["page"]))]
        new = pd.concat([old, new], ignore_index=True)
    fd, tmp = tempfile.mkstemp(prefix=".render-", suffix=".parquet", dir=path.parent)
    os.close(fd)
    try:
        new[RENDER_COLUMNS].to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: most pages per task when a scheduler renders
_SCHED_BATCH = 32


def _plan_jobs(ds: Dataset, out: Path, failed_log: Path, *, retry_failed: bool,
               force: bool) -> tuple[list[tuple], int]:
    """The pages to render, as jobs ``(page id, file, charset)``, and how many are skipped:
    rendered already, or failed before and not to be retried."""
    done = _done_pages(out)  # read with force too: a file that cannot be merged into is said now
    done = set() if force else done
    failed_before = {r.get("page") for r in read_jsonl(failed_log)} if failed_log.exists() else set()
    jobs, skipped = [], 0
    for page in ds.pages():
        if page.id in done or (page.id in failed_before and not (retry_failed or force)):
            skipped += 1
            continue
        jobs.append((page.id, str(page.html_path), page.http_charset))
    return jobs, skipped


def _render_jobs(jobs: list[tuple], take, *, workers: int, scripts: bool, timeout: float, check: bool,
                 scheduler) -> None:
    """Render ``jobs``, each result handed to ``take``: in batches on the scheduler's workers,
    in one browser here, or in ``workers`` local browser processes."""
    if not jobs:
        return
    if scheduler is not None and not scheduler.inline:
        from hwnoise.scheduler import batches

        groups = batches(jobs, max(1, min(_SCHED_BATCH, -(-len(jobs) // (2 * scheduler.workers)))))
        for window in batches(groups, 2 * scheduler.workers):
            for results in scheduler.map(_render_batch, window, scripts, timeout, check):
                for result in results:
                    take(*result)
    elif workers == 1 or len(jobs) == 1:
        with Browser(scripts=scripts, timeout=timeout) as browser:
            for job in jobs:
                take(*_job(browser, job, check))
    else:
        _run_parallel(jobs, min(workers, len(jobs)), scripts, timeout, check, take)


def _check_options(workers: int, timeout: float) -> None:
    """Refuse a worker count or a time limit ``render_dataset`` cannot run with."""
    if workers < 1:
        raise RenderError(f"workers must be at least 1, not {workers}")
    if timeout <= 0:
        raise RenderError(f"timeout must be positive, not {timeout}")


class _Collector:
    """The collect and write steps of ``render_dataset``: each page's result counted, a failed
    page logged, rendered rows merged into render.parquet every few pages and at the end."""

    def __init__(self, out: Path, failed_log: Path, skipped: int, total: int, desc: str, progress: bool):
        from hwnoise.progress import bar

        self.out, self.failed_log = out, failed_log
        self.summary: dict[str, Any] = {"rendered": 0, "failed": 0, "skipped": skipped, "refused_requests": 0}
        self.frames: list[pd.DataFrame] = []
        self.last_flush = time.monotonic()
        self.pbar = bar(total=total, desc=desc, unit="page") if progress else None

    def take(self, pid: str, df: pd.DataFrame | None, error: str | None, refused: int) -> None:
        """One page's result: counted, logged when it failed, its rows kept for the next merge."""
        from hwnoise.progress import info

        self.summary["refused_requests"] += refused
        if error:
            self.summary["failed"] += 1
            append_jsonl(self.failed_log, {"page": pid, "error": error, "finished": now_iso()})
            info(f"hwnoise: render: {error}")
        else:
            self.summary["rendered"] += 1
            self.frames.append(df)
        if self.pbar is not None:
            self.pbar.update(1)
        if self._merge_due():
            _merge(self.out, self.frames)
            self.frames.clear()
            self.last_flush = time.monotonic()

    def _merge_due(self) -> bool:
        """Whether the rows kept are many enough, or old enough, to be merged now."""
        return len(self.frames) >= _FLUSH_PAGES or bool(
            self.frames and time.monotonic() - self.last_flush > _FLUSH_SECONDS)

    def close(self) -> None:
        """The rows not merged yet merged (also after an error or an interrupt), the bar closed."""
        _merge(self.out, self.frames)
        if self.pbar is not None:
            self.pbar.close()


def _summarise(summary: dict[str, Any], secs: float) -> dict[str, Any]:
    """The run's summary with its time and speed added."""
    summary["seconds"] = round(secs, 2)
    rendered = summary["rendered"]
    summary["pages_per_second"] = round(rendered / secs, 3) if secs > 0 and rendered else 0.0
    return summary


def _report(name: str, summary: dict[str, Any], out: Path) -> None:
    """The summary line for people (stderr)."""
    from hwnoise.progress import info

    info(f"hwnoise: render {name}: {summary['rendered']} rendered, {summary['failed']} failed, "
         f"{summary['skipped']} already done; {summary['refused_requests']} requests refused; "
         f"{summary['seconds']} s -> {out}")


def render_dataset(dataset: Dataset | str | os.PathLike, *, workers: int = 2, scripts: bool = False,
                   timeout: float = 15.0, progress: bool = True, retry_failed: bool = False,
                   force: bool = False, check: bool = True, scheduler=None) -> dict[str, Any]:
    """Render every page of ``dataset`` not rendered yet into ``DATASET/render.parquet``.

    Returns ``{"rendered", "failed", "skipped", "refused_requests", "seconds",
    "pages_per_second"}``. Failed pages are listed in ``DATASET/render_failed.jsonl``
    (page, file, reason) and are tried again only with ``retry_failed``; ``force``
    renders every page again. ``check`` compares each page's elements with the
    walker's rows before storing them. ``scheduler`` (a ``hwnoise.scheduler.Scheduler``, e.g.
    a Dask cluster whose workers have Chromium) renders batches of pages instead of ``workers``
    local processes.
    """
    ds = dataset if isinstance(dataset, Dataset) else Dataset(dataset)
    _check_options(workers, timeout)
    out = render_path(ds)
    failed_log = ds.path / "render_failed.jsonl"
    jobs, skipped = _plan_jobs(ds, out, failed_log, retry_failed=retry_failed, force=force)
    if jobs and (scheduler is None or scheduler.inline):  # a cluster's workers need them, not this machine
        check_browser()
    started = time.monotonic()
    collect = _Collector(out, failed_log, skipped, len(jobs), f"render {ds.name}", progress)
    try:
        _render_jobs(jobs, collect.take, workers=workers, scripts=scripts, timeout=timeout, check=check,
                     scheduler=scheduler)
    finally:
        collect.close()
    summary = _summarise(collect.summary, time.monotonic() - started)
    if progress:
        _report(ds.name, summary, out)
    return summary


class _Workers:
    """The worker processes of ``_run_parallel``: the page each is on, the pages still to come,
    and whether they have been told to stop."""

    def __init__(self, jobs: list[tuple], workers: int, scripts: bool, timeout: float, check: bool, take):
        from hwnoise.scheduler import pool_context

        # the local pool's start method (fork on Linux: the parent never starts Playwright or a
        # browser, and fork needs no main guard; HWNOISE_START_METHOD chooses another)
        self.ctx = pool_context()
        self.tasks, self.results = self.ctx.Queue(), self.ctx.Queue()
        for job in jobs:
            self.tasks.put(job)
        #: the run's folder of the workers' Chromium profiles: what a worker killed before it told
        #: of its browser (SIGTERM to the process group) started is found by it and ended
        self.profiles = tempfile.mkdtemp(prefix="hwnoise-render-")
        self.args = (self.tasks, self.results, scripts, timeout, check, self.profiles)
        self.take = take
        self.procs: dict[int, Any] = {}
        self.spawned = 0.0  # when the last worker was started (time.monotonic)
        for _ in range(workers):
            self._spawn()
        self.current: dict[int, str] = {}
        self.browsers: dict[int, tuple[int, str]] = {}  # worker pid -> its Chromium (pid, profile)
        self.pending = {job[0] for job in jobs}  # pages neither done nor recorded as failed
        self.stopping = False

    def _spawn(self) -> None:
        """Start one more worker process."""
        p = self.ctx.Process(target=_worker, args=self.args, daemon=True)
        p.start()
        self.procs[p.pid] = p
        self.spawned = time.monotonic()

    def busy(self) -> bool:
        """Whether to wait on: pages not done yet, or workers told to stop and not gone yet."""
        return bool(self.pending) or bool(self.stopping and self.procs)

    def receive(self) -> None:
        """Wait up to 2 s for a worker's message and act on it; on silence, replace dead workers."""
        import queue

        try:
            msg = self.results.get(timeout=2.0)
        except queue.Empty:
            self._replace_dead()
            self._find_lost()
            return
        self._handle(msg)
        if not self.pending and not self.stopping:
            self.stop()

    def _replace_dead(self) -> None:
        """A dead worker's page recorded as failed, and a new worker in its place while pages remain."""
        for pid_, p in list(self.procs.items()):
            if not p.is_alive():
                del self.procs[pid_]
                self._end_browser(pid_)
                page = self.current.pop(pid_, None)
                if page is not None:
                    self._failed(page, f"page {page}: the render worker died (exit {p.exitcode})")
                if self.pending and not self.stopping:
                    self._spawn()

    def _find_lost(self) -> None:
        """The pages no worker holds and none will take (the tasks are all taken, every worker is
        alive and idle, nothing said for 2 s, none started in the last 2 s: a new one may have
        taken a page and not said so yet): taken by a worker killed before it could say so,
        recorded as failed (the run waited for them for ever)."""
        if (not self.pending or self.stopping or self.current or not self.tasks.empty()
                or time.monotonic() - self.spawned < 2.0
                or not all(p.is_alive() for p in self.procs.values())):
            return
        for page in sorted(self.pending):
            self._failed(page, f"page {page}: taken by a render worker that was killed before it said "
                               "so; not rendered (--retry-failed tries it again)")

    def _failed(self, page: str, error: str) -> None:
        """A page that no worker will render, handed to ``take`` as failed."""
        self.pending.discard(page)
        self.take(page, None, error, 0)

    def _handle(self, msg: tuple) -> None:
        """A worker's message: it started a page, finished one (handed to ``take``), started a
        browser, or exited (having ended its browser)."""
        kind = msg[0]
        if kind == "start":
            self.current[msg[2]] = msg[1]
        elif kind == "done":
            _, pid, df, error, refused = msg
            for wpid, page in list(self.current.items()):
                if page == pid:
                    del self.current[wpid]
            self.pending.discard(pid)
            self.take(pid, df, error, refused)
        elif kind == "browser":
            self.browsers[msg[2]] = msg[1]
        elif kind == "exit":  # it ended its browser itself
            self.browsers.pop(msg[2], None)
            self.procs.pop(msg[2], None)

    def _end_browser(self, worker: int) -> None:
        """The Chromium of a worker that died without ending it (``end_orphan``)."""
        chromium = self.browsers.pop(worker, None)
        if chromium is not None:
            end_orphan(*chromium)

    def stop(self) -> None:
        """Tell every worker to stop once the tasks before it are taken."""
        self.stopping = True
        for _ in self.procs:
            self.tasks.put(None)

    def shutdown(self) -> None:
        """Stop the workers (also after an error or an interrupt) and wait for them, killing a stuck
        one; then end the browsers of workers that did not end their own."""
        if not self.stopping:
            self.stop()
        for p in list(self.procs.values()):
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        while True:  # the last messages: which workers ended their browsers themselves
            try:
                msg = self.results.get(timeout=0.1)
            except Exception:  # noqa: BLE001 - queue.Empty, or a message cut by a killed worker
                break
            if msg[0] in ("browser", "exit"):
                self._handle(msg)
        for worker in list(self.browsers):
            self._end_browser(worker)
        _end_profiles(self.profiles)


def _end_profiles(folder: str) -> None:
    """End every Chromium running with a profile in ``folder`` (the workers' of a run, also those
    no worker lived to tell of) and remove the folder with their profiles."""
    for profile in Path(folder).glob("hwnoise-chromium-*"):
        deadline = time.monotonic() + 10
        while _end_started_with(str(profile)) and time.monotonic() < deadline:
            time.sleep(0.05)  # gone before its profile is removed, so that it writes there no more
        _remove_profile(str(profile))
    shutil.rmtree(folder, ignore_errors=True)


def _run_parallel(jobs: list[tuple], workers: int, scripts: bool, timeout: float, check: bool,
                  take) -> None:
    """Feed ``jobs`` to worker processes; a worker that dies has its page recorded as failed
    and a new worker takes its place."""
    pool = _Workers(jobs, workers, scripts, timeout, check, take)
    try:
        while pool.busy():
            pool.receive()
    finally:
        pool.shutdown()


# -- one page of a dataset, for the methods that need the rendered page ---------------------
_CACHE: dict[str, tuple[int, dict[str, pd.DataFrame]]] = {}


def page_render(page, *, browser: Browser | None = None, render_missing: bool = True,
                scripts: bool = False, timeout: float = 15.0) -> pd.DataFrame | None:
    """The render rows of a dataset ``Page``: from ``DATASET/render.parquet`` when the page is
    there, else rendered now with ``browser`` (a fresh one when None) unless not
    ``render_missing``; None when neither gives rows."""
    path = render_path(page.dataset)
    if path.exists():
        key = str(path)
        stamp = path.stat().st_mtime_ns
        got = _CACHE.get(key)
        if got is None or got[0] != stamp:
            df = _read_rows(path)
            got = (stamp, {p: g.reset_index(drop=True) for p, g in df.groupby("page", sort=False)})
            _CACHE.clear()
            _CACHE[key] = got
        if page.id in got[1]:
            return got[1][page.id]
    if not render_missing:
        return None
    return render_page(page.read_html(), http_charset=page.http_charset, scripts=scripts,
                       timeout=timeout, browser=browser, page_id=page.id)
