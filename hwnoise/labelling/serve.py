"""The labelling page (``hwnoise label DATASET --serve``): a person corrects node labels.

A standard-library ``ThreadingHTTPServer`` on 127.0.0.1 serves a small static app
(``static/``: plain HTML/JS/CSS, no build step) and a JSON API over the dataset folder:

- ``GET /`` the app; ``GET /static/NAME`` its files;
- ``GET /frame/ID`` the stored page as a browser shows it, made safe: scripts, ``on*``
  handlers, ``<base>``, refreshes and ``javascript:`` URLs removed, every shown element tagged
  ``data-hw-node="ROW"`` (the walker's row, by ``features.elements.shown_elements``, which walks
  with the walker's parser and hiding rules), served with a Content-Security-Policy that lets no
  request leave the server and sandboxes the page even when its URL is opened alone (and the
  server refuses every request without the token), shown in an
  ``<iframe sandbox="allow-same-origin">`` (no scripts run in it; the app draws over it);
- ``GET /api/pages`` pages, checked marks, the suggested next page and the per-site model's
  page-grouped CV score on the checked pages; ``GET /api/labels/ID`` a page's nodes and labels;
- ``POST /api/label`` ``{page, node, label, subtree}`` sets a person's label (on the node's
  subtree too when asked); ``POST /api/check`` ``{page, checked}``.

Every request must carry the token printed with the URL (``?t=`` or ``X-Hwnoise-Token``),
name 127.0.0.1 or localhost with the server's port as its ``Host`` and, when it has an
``Origin``, come from there;
every change is written at once through ``Dataset.write_labels`` (temp file + rename, inside
the dataset folder only). Displayed labels follow the precedence of the features stage:
a person's label over the automatic one.
"""
from __future__ import annotations

import hmac
import json
import re
import secrets
import sys
import threading
import webbrowser
from functools import partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd

from hwnoise.dataset import LABEL_COLUMNS, Dataset, now_iso
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.jsontext import parse_json

__all__ = ["LabelStore", "make_server", "serve", "FRAME_CSP", "safe_page"]

#: The policy of a stored page: nothing but same-origin images and inline styles, which
#: the server answers only with the token (so in practice: nothing leaves the frame).
FRAME_CSP = ("default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline' 'self'; "
             "font-src 'self' data:; form-action 'none'; frame-src 'none'; base-uri 'none'")
APP_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
           "img-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; "
           "form-action 'none'")
_STATIC = {"index.html": "text/html", "app.js": "text/javascript", "app.css": "text/css"}
_PAGE_ID = re.compile(r"^[A-Za-z0-9._-]{1,200}$")
_URL_ATTRS = ("href", "src", "action", "formaction", "srcset", "poster", "background", "data")
#: What a URL parser drops before it reads the scheme: C0 controls and spaces at either end,
#: tabs and newlines anywhere ("java\tscript:" is "javascript:").
_URL_IGNORED = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$|[\t\n\r]")
#: The frame's policy as a header: the meta copy in the page cannot sandbox, the header can, so
#: a frame URL opened outside the app (a tab of its own) runs nothing either.
_FRAME_HEADER_CSP = FRAME_CSP + "; sandbox allow-same-origin"


def _script_url(name: str, value: str) -> bool:
    """Whether attribute ``name`` holds a URL whose scheme runs script (``javascript:``,
    ``vbscript:``), as a browser would read it (``xlink:href`` too, and controls ignored)."""
    name = name.lower()
    if name not in _URL_ATTRS and not name.endswith(":href"):
        return False
    return _URL_IGNORED.sub("", value).lower().startswith(("javascript:", "vbscript:"))


def safe_page(html: bytes, http_charset: str | None, n_rows: int, tags: list[str]) -> str:
    """The page's HTML with ``data-hw-node`` on every shown element and nothing that runs."""
    from lxml import etree, html as lhtml

    from hwnoise.features.elements import shown_elements

    view = shown_elements(html, http_charset, n_rows, tags)
    root = view.elements[0].getroottree().getroot() if view.elements else lhtml.fromstring("<html/>")
    for el in root.iter():  # the page's own marks (on what the walk does not show) are not nodes
        if isinstance(el.tag, str):
            for k in [k for k in el.attrib if k.lower() in ("data-hw-node", "data-hw-label")]:
                del el.attrib[k]
    for i, el in enumerate(view.elements):
        el.set("data-hw-node", str(i))
    for el in list(root.iter()):
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.lower()
        if tag == "noscript" and view.walk is not None and view.walk.scripting_off:
            # the walk showed its content (a page that needs scripts): so does the frame, under a
            # name no parser reads as raw text, whether scripting is on or off
            el.tag = tag = "hw-noscript"
        if tag in ("script", "noscript", "base", "iframe", "frame", "object", "embed", "link") or (
                tag == "meta" and (el.get("http-equiv") or "").lower() in ("refresh", "content-security-policy")) or (
                tag == "meta" and (el.get("name") or "").strip().lower() == "referrer"):
            _drop(el)  # a page's own referrer policy would send the frame's URL, token and all
            continue
        if tag == "style" and el.text and "<" in el.text:
            # lxml keeps a <style>'s text raw, but under <svg> or <math> a browser parses it as
            # markup ("<svg><style><meta http-equiv=refresh ...>" is a live refresh): no "<" left
            # (a CSS "<!--" means nothing; in a string, \3c is the same character)
            el.text = el.text.replace("<!--", "").replace("<", "\\3c ")
        for k in list(el.attrib):
            v = el.attrib[k]
            if k.lower().startswith("on") or k.lower() == "referrerpolicy" or _script_url(k, v):
                del el.attrib[k]
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    meta = etree.SubElement(head, "meta")
    meta.set("http-equiv", "Content-Security-Policy")
    meta.set("content", FRAME_CSP)
    head.insert(0, meta)
    charset = etree.Element("meta")
    charset.set("charset", "utf-8")
    head.insert(0, charset)
    for m in head.findall("meta"):
        if m is not charset and (m.get("charset") or "content-type" == (m.get("http-equiv") or "").lower()):
            head.remove(m)
    return "<!DOCTYPE html>\n" + etree.tostring(root, method="html", encoding="unicode")


def _drop(el) -> None:
    """Remove ``el`` and its subtree, keeping the text that follows it."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


class LabelStore:
    """The dataset's labels in memory (auto rows + a person's rows), saved at every change."""

    def __init__(self, ds: Dataset) -> None:
        from hwnoise.dataset import clear_stale_temps
        from hwnoise.progress import info

        self.ds = ds
        self.lock = threading.RLock()
        for tmp in clear_stale_temps(ds.labels_path):  # a save that was killed before its rename
            info(f"hwnoise label: removed {tmp.name}, left by a save that was killed; "
                 f"{ds.labels_path.name} holds the labels saved before it")
        self.pages = list(ds.pages())
        self.by_id = {p.id: p for p in self.pages}
        table = ds.read_labels()
        self.auto = table[table["set_by"] != "person"].reset_index(drop=True)
        person = table[table["set_by"] == "person"]
        self.person: dict[tuple[str, int], dict] = {
            (r["page"], int(r["node"])): r for r in person.to_dict("records")}
        self.checked = set(table.loc[table["checked"].astype(bool), "page"]) if len(table) else set()
        self._walks: dict[str, object] = {}
        self._auto_by_page = dict(tuple(self.auto.groupby("page", sort=False))) if len(self.auto) else {}

    # -- reading
    def walk(self, pid: str):
        with self.lock:
            if pid not in self._walks:
                from hwnoise.extractors.base import walk_of

                self._walks[pid] = walk_of(self.by_id[pid])
            return self._walks[pid]

    def page_labels(self, pid: str) -> pd.DataFrame:
        """One row per walker node: node, xpath, tag, last, label, confidence, set_by."""
        walk = self.walk(pid)
        rows = walk.rows
        n = len(rows)
        label = np.full(n, None, dtype=object)
        conf = np.full(n, np.nan)
        set_by = np.full(n, None, dtype=object)
        auto = self._auto_by_page.get(pid)
        xp = rows["xpath"].to_numpy()
        if auto is not None and len(auto):
            node = auto["node"].to_numpy(dtype=np.int64)
            ok = (node >= 0) & (node < n)
            ok[ok] = xp[node[ok]] == auto["xpath"].to_numpy()[ok]
            label[node[ok]] = auto["label"].to_numpy()[ok]
            conf[node[ok]] = auto["confidence"].to_numpy(dtype=float)[ok]
            set_by[node[ok]] = "auto"
        with self.lock:
            for (p, node), r in self.person.items():
                if p == pid and 0 <= node < n and xp[node] == r["xpath"]:
                    label[node], conf[node], set_by[node] = r["label"], 1.0, "person"
        return pd.DataFrame({"node": rows["node"].to_numpy(), "xpath": xp, "tag": rows["tag"].to_numpy(),
                             "last": np.asarray(walk.last), "label": label, "confidence": conf,
                             "set_by": set_by})

    # -- writing
    def set_label(self, pid: str, node: int, label: str, subtree: bool = True) -> list[int]:
        walk = self.walk(pid)
        last = int(np.asarray(walk.last)[node]) if subtree else node
        xp = walk.rows["xpath"].to_numpy()
        now = now_iso()
        with self.lock:
            for i in range(node, last + 1):
                self.person[(pid, i)] = {"page": pid, "node": i, "xpath": xp[i], "label": label,
                                         "source": "person", "confidence": 1.0, "set_by": "person",
                                         "time": now, "checked": pid in self.checked}
            self.save()
        return list(range(node, last + 1))

    def set_checked(self, pid: str, checked: bool) -> None:
        with self.lock:
            (self.checked.add if checked else self.checked.discard)(pid)
            if checked and not any(p == pid for p, _ in self.person) and pid not in self._auto_by_page:
                # a page with no labels at all keeps its mark through its body's row
                lab = self.page_labels(pid)
                self.person[(pid, 0)] = {"page": pid, "node": 0, "xpath": lab["xpath"].iloc[0],
                                         "label": NOISE, "source": "person", "confidence": 1.0,
                                         "set_by": "person", "time": now_iso(), "checked": True}
            self.save()

    def save(self) -> None:
        with self.lock:
            person = pd.DataFrame(list(self.person.values()), columns=list(LABEL_COLUMNS))
            table = pd.concat([self.auto, person], ignore_index=True) if len(person) else self.auto.copy()
            if len(table) == 0:
                table = pd.DataFrame({c: pd.Series(dtype=t) for c, t in LABEL_COLUMNS.items()})
            table["checked"] = table["page"].isin(self.checked).astype(bool)
            table["node"] = table["node"].astype("int64")
            table["confidence"] = table["confidence"].astype("float64")
            self.ds.write_labels(table)

    # -- the per-site model on the checked pages
    def model_status(self) -> dict:
        """Page-grouped CV of a C4.5 tree (the thesis features) trained on the checked pages,
        and the unchecked page it is least sure of."""
        from hwnoise.features.columns import THESIS_FEATURES
        from hwnoise.training.c45 import C45Classifier

        checked = [p.id for p in self.pages if p.id in self.checked]
        frames = []
        for pid in checked:
            lab = self.page_labels(pid)
            rows = self.walk(pid).rows
            keep = lab["label"].isin([NOISE, CONTENT]).to_numpy()
            frames.append(rows.loc[keep, THESIS_FEATURES].assign(y=lab["label"][keep].to_numpy(), g=pid))
        out: dict = {"checked": len(checked), "cv_f1": None, "cv_accuracy": None, "folds": 0}
        df = pd.concat(frames, ignore_index=True) if frames else None
        if df is not None and len(checked) >= 2 and df["y"].nunique() == 2:
            from sklearn.model_selection import GroupKFold

            k = min(5, len(checked))
            pred = np.empty(len(df), dtype=object)
            for tr, te in GroupKFold(n_splits=k).split(df, groups=df["g"]):
                clf = C45Classifier().fit(df.iloc[tr][THESIS_FEATURES].to_numpy(float), df["y"].iloc[tr])
                pred[te] = clf.predict(df.iloc[te][THESIS_FEATURES].to_numpy(float))
            y = df["y"].to_numpy()
            tp = int(((pred == CONTENT) & (y == CONTENT)).sum())
            prec = tp / max(int((pred == CONTENT).sum()), 1)
            rec = tp / max(int((y == CONTENT).sum()), 1)
            out.update(cv_f1=round(2 * prec * rec / (prec + rec), 4) if prec + rec else 0.0,
                       cv_accuracy=round(float((pred == y).mean()), 4), folds=k)
        unchecked = [p.id for p in self.pages if p.id not in self.checked]
        doubt: dict[str, float] = {}
        if df is not None and df["y"].nunique() == 2:
            clf = C45Classifier().fit(df[THESIS_FEATURES].to_numpy(float), df["y"])
            for pid in unchecked[:200]:
                proba = clf.predict_proba(self.walk(pid).rows[THESIS_FEATURES].to_numpy(float))
                doubt[pid] = float(1.0 - proba.max(axis=1).mean()) if len(proba) else 0.0
            out["by"] = "model"
        else:
            for pid in unchecked:
                a = self._auto_by_page.get(pid)
                doubt[pid] = float(1.0 - a["confidence"].mean()) if a is not None and len(a) else 1.0
            out["by"] = "auto confidence"
        out["next"] = max(doubt, key=doubt.get) if doubt else None
        out["doubt"] = doubt
        return out


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args) -> None:  # quiet: the terminal shows the URL only
        pass

    def _send(self, status: int, body: bytes, ctype: str, csp: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        if csp:
            self.send_header("Content-Security-Policy", csp)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj, status: int = 200) -> None:
        self._send(status, json.dumps(obj, default=_jsonable).encode(), "application/json")

    def _error(self, status: int, msg: str) -> None:
        self._json({"error": msg}, status)

    def _authorised(self, query: dict) -> bool:
        given = self.headers.get("X-Hwnoise-Token") or (query.get("t") or [""])[0]
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    def _own_origin(self) -> bool:
        """Whether the request names this server as its host and, when it has one, its origin:
        a page elsewhere that knows the token (or a rebound DNS name) is refused all the same."""
        port = self.server.server_address[1]
        hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        origin = self.headers.get("Origin")
        return (self.headers.get("Host") or "").lower() in hosts and (
            origin is None or origin.lower() in {f"http://{h}" for h in hosts})

    def _route(self, method: str) -> None:
        """Check the token, pick the endpoint's handler, and answer what it raises with 400/500."""
        url = urlsplit(self.path)
        if not self._authorised(parse_qs(url.query)) or not self._own_origin():
            self.server.refused += 1
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong token")
        parts = [p for p in url.path.split("/") if p]
        try:
            handler = self._pick(method, parts)
            if handler is not None:
                return handler()
        except (ValueError, json.JSONDecodeError) as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except Exception as exc:  # noqa: BLE001 - one bad page never stops the server
            print(f"hwnoise: label: {self.path.split('?')[0]}: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")
        return self._error(HTTPStatus.NOT_FOUND, "not found")

    def _pick(self, method: str, parts: list[str]):
        """The handler (no arguments) for this method and path, or None when there is none."""
        if method == "GET" and parts in ([], ["index.html"]):
            return partial(self._static, "index.html")
        if method == "GET" and len(parts) == 2 and parts[0] == "static" and parts[1] in _STATIC:
            return partial(self._static, parts[1])
        if len(parts) >= 2 and not _PAGE_ID.match(parts[-1]) and parts[0] in ("frame", "api"):
            return partial(self._error, HTTPStatus.BAD_REQUEST, "bad page id")
        if method == "GET" and len(parts) == 2 and parts[0] == "frame":
            return partial(self._frame, parts[1])
        if method == "GET" and parts == ["api", "pages"]:
            return self._pages
        if method == "GET" and len(parts) == 3 and parts[:2] == ["api", "labels"]:
            return partial(self._labels, parts[2])
        if method == "POST" and parts == ["api", "label"]:
            return partial(self._post, self._post_label, '{"page": ..., "node": ..., "label": "S"|"N"}')
        if method == "POST" and parts == ["api", "check"]:
            return partial(self._post, self._post_check, '{"page": ..., "checked": true}')
        return None

    def _frame(self, pid: str) -> None:
        """GET /frame/ID: the stored page made safe, under the frame's policy."""
        store = self.server.store
        page = store.by_id.get(pid)
        if page is None:
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        walk = store.walk(page.id)
        body = safe_page(page.read_html(), page.http_charset, len(walk.rows), walk.rows["tag"].tolist())
        self._send(200, body.encode("utf-8"), "text/html; charset=utf-8", _FRAME_HEADER_CSP)

    def _pages(self) -> None:
        """GET /api/pages: the pages, their checked marks and the per-site model's status."""
        store = self.server.store
        status = store.model_status()
        pages = [{"id": p.id, "url": p.url, "checked": p.id in store.checked,
                  "gold": p.gold_path.exists(), "doubt": status["doubt"].get(p.id)}
                 for p in store.pages]
        status.pop("doubt")
        self._json({"dataset": store.ds.name, "pages": pages, "model": status})

    def _labels(self, pid: str) -> None:
        """GET /api/labels/ID: a page's nodes with their shown labels."""
        store = self.server.store
        if pid not in store.by_id:
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        lab = store.page_labels(pid)
        # a node without a label has no confidence: null, not NaN (which JSON.parse refuses)
        lab["confidence"] = lab["confidence"].astype(object).where(lab["confidence"].notna(), None)
        self._json({"page": pid, "checked": pid in store.checked, "nodes": lab.to_dict("records")})

    def _post_label(self, body: dict, pid: str) -> None:
        """POST /api/label {page, node, label, subtree}: set a person's label."""
        store = self.server.store
        label = body.get("label")
        try:
            node = int(body.get("node", -1))
        except (TypeError, OverflowError):  # null, a list, 1e400: a 400 like "x" (ValueError)
            node = -1
        if label not in (NOISE, CONTENT) or not 0 <= node < len(store.walk(pid).rows):
            return self._error(HTTPStatus.BAD_REQUEST, "want {page, node, label: S|N}")
        subtree = body.get("subtree", True)
        if not isinstance(subtree, bool):  # "false" or "no" would be true to bool()
            return self._error(HTTPStatus.BAD_REQUEST, "want subtree: true or false")
        nodes = store.set_label(pid, node, label, subtree)
        self._json({"page": pid, "label": label, "nodes": nodes})

    def _post_check(self, body: dict, pid: str) -> None:
        """POST /api/check {page, checked}: mark a page checked or not."""
        store = self.server.store
        checked = body.get("checked", True)
        if not isinstance(checked, bool):  # "no" would be true to bool()
            return self._error(HTTPStatus.BAD_REQUEST, "want {page, checked: true or false}")
        store.set_checked(pid, checked)
        self._json({"page": pid, "checked": pid in store.checked})

    def _post(self, handler, example: str) -> None:
        """A POST's JSON object read and its page checked, then ``handler(body, page id)``; a body
        that is not a JSON object raises ValueError (a 400 naming ``example``)."""
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0:
            raise ValueError("a negative Content-Length")
        if n > 1_000_000:
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "too large")
        body = parse_json(self.rfile.read(n) or b"{}", "the request body", ValueError, at_line=True)
        if not isinstance(body, dict):
            raise ValueError(f"the body must be a JSON object such as {example}")
        pid = str(body.get("page", ""))
        if pid not in self.server.store.by_id:
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        handler(body, pid)

    def _static(self, name: str) -> None:
        data = (resources.files("hwnoise.labelling") / "static" / name).read_bytes()
        if name == "index.html":
            data = data.replace(b"{{TOKEN}}", self.server.token.encode())
        self._send(200, data, f"{_STATIC[name]}; charset=utf-8", APP_CSP)

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "GET or POST")

    do_DELETE = do_PUT


def _jsonable(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return None if np.isnan(x) else float(x)
    return None if x is pd.NA else str(x)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, store: LabelStore, token: str) -> None:
        super().__init__(addr, _Handler)
        self.store, self.token, self.refused = store, token, 0


def make_server(ds: Dataset | str, port: int = 0, token: str | None = None) -> _Server:
    """A labelling server bound to 127.0.0.1 (not started); ``.url`` carries the token."""
    ds = ds if isinstance(ds, Dataset) else Dataset(ds)
    srv = _Server(("127.0.0.1", int(port)), LabelStore(ds), token or secrets.token_urlsafe(24))
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/?t={srv.token}"
    return srv


def serve(ds: Dataset | str, *, port: int = 0, open_browser: bool = True) -> None:
    """Serve until interrupted; prints the URL (with its token) on stdout."""
    srv = make_server(ds, port)
    print(srv.url, flush=True)
    print(f"hwnoise label: serving {srv.store.ds.name} ({len(srv.store.pages)} pages) on "
          "127.0.0.1; every change is saved at once; Ctrl-C stops", file=sys.stderr, flush=True)
    if open_browser:
        webbrowser.open(srv.url)
    try:
        srv.serve_forever()
    finally:
        srv.server_close()
