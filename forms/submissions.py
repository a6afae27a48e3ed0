"""Form submissions in: GET URL lines, JSON lines (POST forms too) and HAR files.

A submission is ``{method, action, url, fields: [{name, value, label}]}``: ``action`` is
where the form sends its data, ``url`` the URL fetched (the action with the query string
for GET), ``fields`` the names and values sent, each with the label a person sees where it
is known (None otherwise). ``charset``, when the form's encoding is not UTF-8, is the encoding
its names and values are sent in, as a browser sends them (``&#N;`` for a character the
encoding lacks).
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hwnoise.decode import form_codec, normalize_label
from hwnoise.errors import HwnoiseError
from hwnoise.jsontext import parse_json

FORMATS = ("auto", "urls", "jsonl", "har")
METHODS = ("GET", "POST")


class SubmissionsError(HwnoiseError):
    """A submissions file cannot be read; the message names the file and line."""


def _check_url(url: str, where: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port out of range or not a number
    except ValueError as exc:
        raise SubmissionsError(f"{where}: {url[:200]!r} is not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise SubmissionsError(f"{where}: {url[:200]!r} is not an http or https URL")


def strip_query(url: str) -> str:
    """``url`` without its query string and fragment."""
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, p.path, "", ""))


class NoFile(bytes):
    """The value of a file control no file is chosen for (``type`` "file"): empty, and in a
    multipart body a part with an empty ``filename``, as a browser sends it."""


def encoded_fields(fields: list[dict] | None, charset: str | None = None) -> list[tuple[bytes, bytes]]:
    """``[(name, value)]`` as bytes in ``charset`` (a ``normalize_label`` name; None: UTF-8),
    each character the encoding lacks as ``&#N;``, as a browser encodes a form's entries
    (a file control's value ``NoFile``: hwnoise uploads no file)."""
    codec = form_codec(charset)
    return [(str(f.get("name", "")).encode(codec, "xmlcharrefreplace"),
             NoFile() if f.get("type") == "file" else
             ("" if f.get("value") is None else str(f["value"])).encode(codec, "xmlcharrefreplace"))
            for f in fields or ()]


def form_body(pairs: list[tuple[bytes, bytes]], enctype: str | None = None) -> tuple[bytes, str]:
    """The body a browser POSTs for a form's encoded entries (``encoded_fields``) and its
    Content-Type: multipart/form-data, text/plain (a line ``name=value`` an entry, as is), else
    urlencoded (a browser sends any other enctype, multipart/mixed too, urlencoded)."""
    kind = (enctype or "").split(";")[0].strip().lower()
    if kind == "text/plain":
        return b"".join(b"%s=%s\r\n" % pair for pair in pairs), "text/plain"
    if kind == "multipart/form-data":
        boundary = "----hwnoise" + secrets.token_hex(12)
        quote_name = {ord("\n"): b"%0A", ord("\r"): b"%0D", ord('"'): b"%22"}
        parts = [b'--%s\r\nContent-Disposition: form-data; name="%s"%s\r\n\r\n%s\r\n'
                 % (boundary.encode(), b"".join(quote_name.get(c, bytes((c,))) for c in name),
                    b'; filename=""\r\nContent-Type: application/octet-stream' if isinstance(value, NoFile) else b"",
                    value)
                 for name, value in pairs]
        return b"".join(parts) + b"--%s--\r\n" % boundary.encode(), f"multipart/form-data; boundary={boundary}"
    return urlencode(pairs).encode("ascii"), "application/x-www-form-urlencoded"


def make_submission(method: str, action: str, fields: list[dict], *, enctype: str | None = None,
                    charset: str | None = None, **extra: Any) -> dict:
    """A submission dict; for GET the URL is the action with the fields as its query string
    (the action's own query replaced, as browsers do), encoded in ``charset`` (the form's
    encoding, kept in the submission unless it is UTF-8)."""
    method = method.upper()
    fields = [{"name": str(f["name"]), "value": "" if f.get("value") is None else str(f["value"]),
               "label": f.get("label"), **{k: v for k, v in f.items() if k not in ("name", "value", "label")}}
              for f in fields]
    if method == "GET":
        base = strip_query(action)
        query = urlencode(encoded_fields(fields, charset))
        url = f"{base}?{query}" if query else base
        action = base
    else:
        url = urlunsplit(urlsplit(action)._replace(fragment=""))
    sub = {"method": method, "action": action, "url": url, "fields": fields}
    if enctype and method == "POST" and enctype.lower() != "application/x-www-form-urlencoded":
        sub["enctype"] = enctype
    if form_codec(charset) != "utf-8":
        sub["charset"] = charset
    sub.update(extra)
    return sub


def submission_from_url(url: str, method: str = "GET") -> dict:
    """A submission from a URL with its query string, every parameter a field. GET fetches the
    URL as given (not re-encoded, without its fragment); POST ("POST URL" lines) sends the
    parameters as the form body to the URL without its query."""
    parts = urlsplit(url)
    fields = [{"name": k, "value": v, "label": None} for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    sub = make_submission(method, url if method.upper() == "GET" else strip_query(url), fields)
    if sub["method"] == "GET":
        sub["url"] = urlunsplit(parts._replace(fragment=""))
    return sub


def _fields_of(raw: Any, where: str) -> list[dict]:
    if raw is None:
        return []
    if isinstance(raw, dict):
        out = []
        for k, v in raw.items():
            for item in (v if isinstance(v, list) else [v]):
                out.append({"name": k, "value": item, "label": None})
        return out
    if isinstance(raw, list):
        out = []
        for i, f in enumerate(raw):
            if isinstance(f, dict) and isinstance(f.get("name"), (str, int, float)):
                out.append({"name": f["name"], "value": f.get("value", ""), "label": f.get("label"),
                            **({"type": f["type"]} if f.get("type") else {})})
            elif isinstance(f, (list, tuple)) and len(f) == 2:
                out.append({"name": f[0], "value": f[1], "label": None})
            else:
                raise SubmissionsError(f"{where}: field {i} is neither {{name, value}} nor [name, value]")
        return out
    raise SubmissionsError(f"{where}: 'fields' must be a list of {{name, value, label}} or an object")


def submission_from_json(obj: Any, where: str) -> dict:
    """A submission from one JSON object: ``method``, ``action`` (or ``url``), ``fields``."""
    if not isinstance(obj, dict):
        raise SubmissionsError(f"{where}: expected a JSON object with method, action and fields")
    method = str(obj.get("method") or "GET").upper()
    if method not in METHODS:
        raise SubmissionsError(f"{where}: method {method!r} is not GET or POST")
    action = obj.get("action") or obj.get("url")
    if not action or not isinstance(action, str):
        raise SubmissionsError(f"{where}: no 'action' (or 'url') given")
    _check_url(action, where)
    fields = _fields_of(obj.get("fields"), where)
    enctype = obj.get("enctype")
    if enctype is not None and not isinstance(enctype, str):
        raise SubmissionsError(f"{where}: 'enctype' must be a string such as \"multipart/form-data\"")
    charset = obj.get("charset")
    if charset is not None and (not isinstance(charset, str) or normalize_label(charset) is None):
        raise SubmissionsError(f"{where}: 'charset' {charset!r} is no encoding a browser knows "
                               "(e.g. \"windows-1252\", \"shift_jis\")")
    for key in ("id", "site"):
        if obj.get(key) is not None and not isinstance(obj[key], (str, int)):
            raise SubmissionsError(f"{where}: {key!r} must be a string")
    if isinstance(obj.get("id"), str) and not obj["id"].strip():
        raise SubmissionsError(f"{where}: 'id' is empty (leave it out to have one made)")
    extra = {k: obj[k] for k in ("id", "site", "form") if obj.get(k) not in (None, "")}
    if method == "GET" and not fields and "fields" not in obj:
        return {**submission_from_url(action), **extra}
    return make_submission(method, action, fields, enctype=enctype,
                           charset=normalize_label(charset) if charset else None, **extra)


def _read_lines(path: Path, fmt: str) -> list[dict]:
    out = []
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        where = f"{path}:{n}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            if fmt == "urls":
                raise SubmissionsError(f"{where}: a JSON line in a file read as --format urls")
            out.append(submission_from_json(parse_json(line, where, SubmissionsError, at_line=True), where))
            continue
        if fmt == "jsonl":
            raise SubmissionsError(f"{where}: not a JSON object (the file is read as --format jsonl)")
        method, _, rest = line.partition(" ")
        if method.upper() in METHODS and rest.strip():
            url, method = rest.strip(), method.upper()
        else:
            url, method = line, "GET"
        if " " in url:
            raise SubmissionsError(f"{where}: {url[:200]!r} is not one URL (spaces must be %20 or +)")
        _check_url(url, where)
        out.append(submission_from_url(url, method))
    return out


def _is_document(entry: dict) -> bool:
    """Whether a HAR entry is a page (not an image, script, style sheet...)."""
    rtype = entry.get("_resourceType") or entry.get("_resource_type")
    if rtype:
        return str(rtype).lower() in ("document", "main_frame", "sub_frame")
    mime = (((entry.get("response") or {}).get("content") or {}).get("mimeType") or "").lower()
    return not mime or any(t in mime for t in ("html", "xml", "text/plain"))


def _read_har(path: Path) -> list[dict]:
    har = parse_json(path.read_text(encoding="utf-8-sig", errors="replace"), str(path), SubmissionsError)
    log = har.get("log") if isinstance(har, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise SubmissionsError(f"{path}: not a HAR file (no log.entries)")
    out = []
    for i, entry in enumerate(entries):
        where = f"{path}: log.entries[{i}]"
        req = entry.get("request") if isinstance(entry, dict) else None
        if not isinstance(req, dict) or not req.get("url"):
            raise SubmissionsError(f"{where}: no request.url")
        url, method = str(req["url"]), str(req.get("method") or "GET").upper()
        try:
            scheme = urlsplit(url).scheme.lower()
        except ValueError:
            raise SubmissionsError(f"{where}: {url[:200]!r} is not a valid URL") from None
        if scheme not in ("http", "https") or not _is_document(entry):
            continue  # data:, blob:, extensions; images, scripts, styles
        _check_url(url, where)
        if method == "GET":
            out.append(submission_from_url(url))
        elif method == "POST":
            post = req.get("postData") or {}
            if not isinstance(post, dict):
                raise SubmissionsError(f"{where}: request.postData is not an object")
            mime = str(post.get("mimeType") or "application/x-www-form-urlencoded")
            if post.get("params"):
                if not isinstance(post["params"], list) or not all(isinstance(p, dict) for p in post["params"]):
                    raise SubmissionsError(f"{where}: request.postData.params is not a list of objects")
                fields = [{"name": p.get("name", ""), "value": p.get("value", ""), "label": None}
                          for p in post["params"] if "fileName" not in p]
            elif "urlencoded" in mime.lower() and post.get("text") is not None:
                fields = [{"name": k, "value": v, "label": None}
                          for k, v in parse_qsl(str(post["text"]), keep_blank_values=True)]
            elif not post.get("text"):
                fields = []
            else:
                continue  # JSON/XHR bodies are not form submissions
            out.append(make_submission("POST", url, fields, enctype=mime.split(";")[0].strip()))
    return out


def detect_format(path: str | os.PathLike) -> str:
    """urls, jsonl or har, from the name and the first characters of the file."""
    path = Path(path)
    if path.suffix.lower() == ".har":
        return "har"
    with open(path, "rb") as fh:
        head = fh.read(4096).decode("utf-8-sig", errors="replace").lstrip()
    if head.startswith("{") and '"log"' in head.split("\n", 1)[0] + head[:200]:
        return "har"
    if head.startswith("[") or head.startswith("{"):
        return "jsonl"
    return "urls"


def _refuse_saved_page(path: Path) -> None:
    """A saved page (HTML or XML markup, or gzip data) given as SUBMISSIONS was read as URL
    lines, its first line refused as 'not one URL': say what it is, what collect reads, and how
    pages saved already become a dataset. No line of a submissions file starts with '<'."""
    with open(path, "rb") as fh:
        head = fh.read(512)
    markup = head.decode("utf-8-sig", errors="replace").lstrip().startswith("<")
    if not (markup or head.startswith(b"\x1f\x8b")):
        return
    raise SubmissionsError(
        f"{path}: {'a saved page (markup)' if markup else 'gzip data'}, not a file of submissions: collect "
        "fetches pages from a file of GET URLs (one a line), JSON lines of submissions or a HAR "
        "file, or from a form page with --form PAGE --values FILE. To make a dataset of pages saved "
        "already, put them in SRC/html/ (NAME.html, .gz too) and run 'hwnoise import plain SRC --into DIR'")


def read_submissions(path: str | os.PathLike, fmt: str = "auto") -> list[dict]:
    """Every submission in ``path``, in file order (repeats kept; the dataset drops them).

    ``fmt``: auto | urls | jsonl | har. In ``auto`` a plain file may mix URL lines and JSON
    lines; a HAR file is recognised by its ``.har`` name or its ``log`` object; a file holding
    one JSON array of submissions is read too.
    """
    given, path = str(path), Path(path)
    if fmt not in FORMATS:
        raise SubmissionsError(f"unknown submissions format {fmt!r}; use one of {', '.join(FORMATS)}")
    if not path.is_file():
        if given.lower().startswith(("http://", "https://")):
            raise SubmissionsError(f"{given}: SUBMISSIONS is a file of them, not a URL: put the URL in a "
                                   "file (one a line) and give that, or read the search form from the page "
                                   "with --form URL --values FILE")
        raise SubmissionsError(f"{path}: no such submissions file")
    _refuse_saved_page(path)
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "har":
        return _read_har(path)
    head = path.read_text(encoding="utf-8-sig", errors="replace").lstrip()
    if head.startswith("["):
        items = parse_json(head, str(path), SubmissionsError)
        if not isinstance(items, list):
            raise SubmissionsError(f"{path}: not a JSON array of submissions")
        return [submission_from_json(obj, f"{path}: item {i}") for i, obj in enumerate(items)]
    return _read_lines(path, "auto" if fmt == "auto" else kind)
