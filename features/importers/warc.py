"""WARC in: ``hwnoise import warc FILE.warc.gz... --into DIR``.

Reads WARC files (gzipped per record or not, Common Crawl's, Heritrix's, wget's, Browsertrix's,
``hwnoise collect --warc``'s) with warcio, and writes one dataset folder per site under DIR.
Each ``response`` record of status 200 with an HTML payload becomes a page: its bytes are the
HTTP payload as received (de-chunked and content-decoded by warcio, never re-encoded), its
submission is the GET submission of its URL (the query string's parameters are the fields, so
the domain query comes from the result URLs, as ``hwnoise collect urls.txt`` would make it), and
its journal line keeps the status, headers, charset and where in which WARC it was found.
Other records, non-200 responses and non-HTML payloads are skipped and counted; a page already
imported (same ID) is not written twice.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from hwnoise.dataset import Dataset, now_iso, page_id, site_of
from hwnoise.errors import HwnoiseError
from hwnoise.forms.submissions import submission_from_url

from . import ImportFormatError, _unit_dir, _write_query

HTML_TYPES = ("text/html", "application/xhtml+xml")


def warc_files(sources: Iterable[str | Path]) -> list[Path]:
    """The WARC files named, a folder standing for its ``*.warc`` and ``*.warc.gz`` files."""
    out: list[Path] = []
    for src in sources:
        src = Path(src)
        if src.is_dir():
            found = sorted(p for p in src.rglob("*") if p.name.endswith((".warc", ".warc.gz")))
            if not found:
                raise ImportFormatError(f"{src}: no .warc or .warc.gz file in this folder")
            out += found
        elif src.is_file():
            out.append(src)
        else:
            raise ImportFormatError(f"{src}: no such file or folder (a WARC file to import)")
    return out


def _imported(ds: Dataset, rec: dict | None) -> bool:
    """Whether a journal line is a page already written with the size it records."""
    if not rec or rec.get("error") or not rec.get("sha256"):
        return False
    path = ds.page_path(rec["submission"])
    return path.is_file() and path.stat().st_size == rec.get("bytes", -1)


def _is_html(ctype: str, payload: bytes) -> bool:
    ctype = ctype.split(";")[0].strip().lower()
    if ctype:
        return ctype in HTML_TYPES
    head = payload[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def html_responses(path: Path, counts: dict) -> Iterator[tuple[dict, bytes]]:
    """The HTML 200 responses of one WARC as ``(info, payload)``; the rest counted."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    from hwnoise.forms.fetch import charset_of

    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        try:
            for rec in it:
                counts["records"] += 1
                if rec.rec_type != "response" or not rec.http_headers:
                    counts["not_response"] += 1
                    continue
                counts["responses"] += 1
                status = rec.http_headers.get_statuscode()
                if status != "200":
                    counts["skipped_status"] += 1
                    continue
                url = rec.rec_headers.get_header("WARC-Target-URI") or ""
                if not url.lower().startswith(("http://", "https://")):
                    counts["skipped_url"] += 1
                    continue
                payload = rec.content_stream().read()
                ctype = rec.http_headers.get_header("Content-Type") or ""
                if not _is_html(ctype, payload):
                    counts["skipped_type"] += 1
                    continue
                headers = {k.lower(): v for k, v in rec.http_headers.headers}
                yield {"url": url, "status": int(status), "headers": headers, "http_charset": charset_of(ctype),
                       "date": rec.rec_headers.get_header("WARC-Date"), "warc": str(path),
                       "warc_offset": it.get_record_offset()}, payload
        except (ArchiveLoadFailed, OSError, EOFError, ValueError) as exc:
            raise ImportFormatError(f"{path}: not a readable WARC file after record {counts['records']}: "
                                    f"{str(exc).splitlines()[0][:200]}") from None


def import_warc(sources: Iterable[str | Path], into: str | Path, *, limit: int | None = None,
                progress: bool = True) -> tuple[list[Path], dict]:
    """Import WARC files into one dataset folder per site under ``into``; return the folders
    written (in the order first written) and the counts of what was read and skipped."""
    files = warc_files(sources)
    if limit is not None and limit < 1:
        raise ImportFormatError(f"--limit must be at least 1, not {limit}")
    into = Path(into)
    counts = {"records": 0, "responses": 0, "imported": 0, "duplicates": 0, "not_response": 0,
              "skipped_status": 0, "skipped_type": 0, "skipped_url": 0}
    units: dict[str, tuple[Dataset, set[str]]] = {}
    bar = None
    if progress:
        from hwnoise.progress import bar as _bar

        bar = _bar(total=len(files), desc="import warc", unit="file")
    try:
        for path in files:
            for info, payload in html_responses(path, counts):
                site = site_of(info["url"]) or "warc"
                if site not in units:
                    ds = Dataset.create(_unit_dir(into, site), name=site, source="warc", format="warc",
                                        notes="imported from WARC responses (status 200, HTML)")
                    units[site] = (ds, {sid for sid, rec in ds.journal().items() if _imported(ds, rec)})
                ds, done = units[site]
                sub = submission_from_url(info["url"])
                sub["id"] = page_id(sub["method"], sub.get("action") or sub["url"], sub["fields"])
                if sub["id"] in done:
                    counts["duplicates"] += 1
                    continue
                ds.write_page(sub["id"], payload)
                ds.add_submission({**sub, "site": site, "source": f"{path.name}@{info['warc_offset']}"})
                ds.append_journal({
                    "submission": sub["id"], "url": info["url"], "method": "GET", "fields": sub["fields"],
                    "final_url": info["url"], "redirects": [], "status": info["status"],
                    "headers": info["headers"], "http_charset": info["http_charset"], "bytes": len(payload),
                    "sha256": hashlib.sha256(payload).hexdigest(), "started": info["date"],
                    "finished": info["date"], "error": None, "warc": info["warc"],
                    "warc_offset": info["warc_offset"], "imported": now_iso()})
                done.add(sub["id"])
                counts["imported"] += 1
                if limit is not None and counts["imported"] >= limit:
                    break
            if bar is not None:
                bar.update(1)
            if limit is not None and counts["imported"] >= limit:
                break
    finally:
        if bar is not None:
            bar.close()
    out = []
    for ds, _ in units.values():
        writer = _write_query(ds)
        ds.update_meta(counts={"pages": sum(1 for _ in (ds.path / "pages").glob("*.html")), "gold": 0,
                               "submissions": len(ds.submissions())}, query_written_by=writer)
        out.append(ds.path)
    if not out and not counts["records"]:
        raise HwnoiseError(f"{', '.join(map(str, files))}: no WARC record found")
    return out, counts
