"""WARC in: ``hwnoise import warc FILE.warc.gz... --into DIR``.

Reads WARC files (gzipped per record or not, Common Crawl's, Heritrix's, wget's, Browsertrix's,
``hwnoise collect --warc``'s) with warcio, and writes one dataset folder per site under DIR.
Each ``response`` record of status 200 with an HTML payload becomes a page: its bytes are the
HTTP payload as received (de-chunked and content-decoded by warcio, never re-encoded), its
submission is the GET submission of its URL (the query string's parameters are the fields, so
the domain query comes from the result URLs, as ``hwnoise collect urls.txt`` would make it), and
its journal line keeps the status, headers, charset and where in which WARC it was found.
Other records, non-200 responses and payloads that are not HTML (by their Content-Type, or by
their bytes: ``decode.sniff_html``, as the features stage decides) are skipped and counted; a
page already imported (same ID) is not written twice. A ``revisit`` record (a deduplicating crawl's)
is a page with the payload of the response of its payload digest read before in the run.
"""
from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path

from hwnoise.dataset import Dataset, now_iso, page_id, site_of
from hwnoise.decode import charset_of, content_type, sniff_html
from hwnoise.errors import HwnoiseError
from hwnoise.forms.submissions import submission_from_url
from hwnoise.progress import info

from . import (ImportFormatError, _unit_dir, _write_query, apply_requery, check_query, finish_unfinished,
               mark_unfinished, requery, with_query)

HTML_TYPES = ("text/html", "application/xhtml+xml")
#: The URL an ARC record's header line starts with (``filedesc://x.arc``, ``http://...``, ``dns:host``):
#: warcio reads any line of five or more words as one, so a text file given as a WARC was one "record".
_ARC_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+\Z")


def warc_files(sources: Iterable[str | Path]) -> list[Path]:
    """The WARC files named, a folder standing for its ``*.warc`` and ``*.warc.gz`` files."""
    out: list[Path] = []
    for src in sources:
        src = Path(src)
        if src.is_dir():
            found = sorted(p for p in src.rglob("*") if p.name.endswith((".warc", ".warc.gz")) and p.is_file())
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
    """Whether a response is an HTML page: declared as one (or not declared at all), and its bytes
    one by the rule the features stage skips pages by (``sniff_html``): an empty body or an image
    sent as text/html is none."""
    ctype = content_type(ctype)[0] or ctype.split(";")[0].strip().lower()
    if ctype and ctype not in HTML_TYPES:
        return False
    return sniff_html(payload) is None


def html_responses(path: Path, counts: dict) -> Iterator[tuple[dict, bytes]]:
    """The HTML 200 responses of one WARC as ``(info, payload)``; the rest counted. A file that
    ends inside a record, or whose record cannot be parsed (a download or a crawl cut short, a
    damaged file), keeps the records before it: where it stops is said on stderr with the
    record's byte offset, and counted (``counts["truncated"]``); a file whose first record cannot
    be read is an error."""
    from warcio.archiveiterator import ArchiveIterator

    last, start, end, broken = None, 0, 0, None
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        records = iter(it)
        while True:
            try:
                rec = next(records)
                if rec.format.startswith("warc") and (rec.rec_type is None or not _declared_length(rec)):
                    raise ValueError("a record without WARC-Type or Content-Length")  # headers cut off
                if rec.format.startswith("arc") and not _ARC_URI.match(rec.rec_headers.get_header("uri") or ""):
                    raise ValueError("no WARC record header here (nor an ARC one: its first field is no URL)")
                counts["records"] += 1
                item = _html_response(rec, it, path, counts)
                last, start = rec, it.get_record_offset()
                end = start + it.get_record_length()
            except StopIteration:
                break
            except Exception as exc:  # noqa: BLE001 - warcio raises many kinds on a damaged record
                why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                if last is None:
                    raise ImportFormatError(f"{path}: not a readable WARC file: {why}") from None
                broken = (end, why)
                break
            if item is not None:
                yield item
        cut = _cut_at(fh, last, start, end) if broken is None else broken[0]
        if last is None and cut is None and fh.seek(0, 2) > 0:  # bytes, but not one whole record
            raise ImportFormatError(f"{path}: not a readable WARC file: no whole record in it")
    if cut is not None:
        counts["truncated"] = counts.get("truncated", 0) + 1
        where = (f"cannot read the record at byte {cut} ({broken[1]}: cut short or damaged?)" if broken
                 else f"the file ends inside the record at byte {cut} (a download or a crawl cut short?)")
        info(f"{path}: {where}; the records before it were read, the rest is left out")


def _html_response(rec, it, path: Path, counts: dict) -> tuple[dict, bytes | None] | None:
    """``(info, payload)`` of an HTML 200 response record, else None (what it is, counted); of a
    revisit record of one, ``(info, None)`` (``_revisit``)."""
    if rec.rec_type == "revisit" and rec.http_headers:
        return _revisit(rec, it, path, counts)
    if rec.rec_type != "response" or not rec.http_headers:
        counts["not_response"] += 1
        return None
    counts["responses"] += 1
    url = _page_url(rec, counts)
    if url is None:
        return None
    payload = rec.content_stream().read()
    if getattr(rec.raw_stream, "limit", 0) > 0:  # the file ended inside this record: its payload is cut
        return None
    ctype = rec.http_headers.get_header("Content-Type") or ""
    if not _is_html(ctype, payload):
        counts["skipped_type"] += 1
        return None
    return _info(rec, it, path, url, ctype), payload


def _page_url(rec, counts: dict) -> str | None:
    """The http(s) URL of a 200 response (or revisit) record, else None (counted as skipped)."""
    if rec.http_headers.get_statuscode() != "200":
        counts["skipped_status"] += 1
        return None
    url = rec.rec_headers.get_header("WARC-Target-URI") or ""
    if not url.lower().startswith(("http://", "https://")):
        counts["skipped_url"] += 1
        return None
    return url


def _info(rec, it, path: Path, url: str, ctype: str) -> dict:
    """What the journal keeps of a response or revisit record, and its payload's digest."""
    headers = {k.lower(): v for k, v in rec.http_headers.headers}
    return {"url": url, "status": 200, "headers": headers, "http_charset": charset_of(ctype),
            "date": rec.rec_headers.get_header("WARC-Date"), "warc": str(path),
            "warc_offset": it.get_record_offset(),
            "payload_digest": (rec.rec_headers.get_header("WARC-Payload-Digest") or "").strip()}


def _revisit(rec, it, path: Path, counts: dict) -> tuple[dict, None] | None:
    """``(info, None)`` of a revisit record of an HTML 200 response, else None (counted). A crawl
    that deduplicates (``wget --warc-dedup``, Heritrix, Browsertrix) writes one in place of a
    response whose payload it has stored before (``WARC-Payload-Digest``): the payload is that
    response's, found by ``_import_response`` among those read before. They were counted as
    "other records", and the pages they stand for left out without a word."""
    counts["revisits"] = counts.get("revisits", 0) + 1
    url = _page_url(rec, counts)
    if url is None:
        return None
    ctype = rec.http_headers.get_header("Content-Type") or ""
    declared = content_type(ctype)[0] or ctype.split(";")[0].strip().lower()
    if declared and declared not in HTML_TYPES:
        counts["skipped_type"] += 1
        return None
    return {**_info(rec, it, path, url, ctype), "revisit": True}, None


def _declared_length(rec) -> bool:
    """Whether the record's headers say its length (a header block cut short may not)."""
    return (rec.rec_headers.get_header("Content-Length") or "").strip().isdigit()


def _cut_at(fh, last, start: int, end: int) -> int | None:
    """The offset of the record the file was cut in, if it was: its last record (``start``; fewer
    bytes than its Content-Length), or bytes after it (``end``) that are not a whole record (a gzip
    member cut short, a record's headers cut off); None for a whole file (blank lines may follow)."""
    if last is None:
        return None
    if getattr(last.raw_stream, "limit", 0) > 0:
        return start
    fh.seek(end)
    tail = fh.read(4096)
    return end if tail.strip() else None


#: The dataset folder of each site written so far, with the IDs of the pages already in it and
#: the pages imported before that this run gives a query (``requery``).
_Sites = dict[str, tuple[Dataset, set[str], list[dict]]]


def import_warc(sources: Iterable[str | Path], into: str | Path, *, limit: int | None = None,
                progress: bool = True, query: str | None = None) -> tuple[list[Path], dict]:
    """Import WARC files into one dataset folder per site under ``into``; return the folders
    written (in the order first written) and the counts of what was read and skipped. ``query``
    (search terms) is the query of every page whose URL has no field ``q`` (``with_query``), as
    ``import_dataset`` gives it."""
    sources = list(sources)
    files = warc_files(sources)
    if limit is not None and limit < 1:
        raise ImportFormatError(f"--limit must be at least 1, not {limit}")
    check_query(query)
    into = Path(into)
    counts = {"records": 0, "responses": 0, "imported": 0, "duplicates": 0, "not_response": 0,
              "skipped_status": 0, "skipped_type": 0, "skipped_url": 0}
    rerun = shlex.join(["hwnoise", "import", "warc", *map(str, sources), "--into", str(into)])  # imports the rest
    sites = _import_files(files, into, counts, limit=limit, progress=progress, query=query, rerun=rerun)
    out = [_finish_site(ds, requeried) for ds, _, requeried in sites.values()]
    if not out and not counts["records"]:
        raise HwnoiseError(f"{', '.join(map(str, files))}: no WARC record found")
    return out, counts


def _import_files(files: list[Path], into: Path, counts: dict, *, limit: int | None,
                  progress: bool, query: str | None = None, rerun: str = "hwnoise import warc") -> _Sites:
    """The HTML responses of the files, in order, written as pages until ``limit`` pages are
    imported (a progress bar over the files when asked); returns the sites' folders."""
    sites: _Sites = {}
    originals: dict[str, Path] = {}  # payload digest -> the page file of the response read this run
    bar = None
    if progress:
        from hwnoise.progress import bar as _bar

        bar = _bar(total=len(files), desc="import warc", unit="file")
    try:
        for path in files:
            for meta, payload in html_responses(path, counts):
                _import_response(sites, into, path, meta, payload, counts, query, rerun, originals)
                if _limit_reached(limit, counts):
                    break
            if bar is not None:
                bar.update(1)
            if _limit_reached(limit, counts):
                break
    finally:
        if bar is not None:
            bar.close()
    return sites


def _limit_reached(limit: int | None, counts: dict) -> bool:
    """Whether ``limit`` pages have been imported."""
    return limit is not None and counts["imported"] >= limit


def _import_response(sites: _Sites, into: Path, path: Path, meta: dict, payload: bytes | None,
                     counts: dict, query: str | None = None, rerun: str = "hwnoise import warc",
                     originals: dict[str, Path] | None = None) -> None:
    """One HTML response written as a page of its site's folder (opened at the site's first
    page): its bytes, submission and journal line; a page already imported is counted instead.
    A revisit (``payload`` None) takes the payload of the response of its digest read before
    (``originals``, this run's page files by payload digest); without one it is counted."""
    originals = {} if originals is None else originals
    digest = meta.get("payload_digest") or ""
    site = site_of(meta["url"]) or "warc"
    original = originals.get(digest) if digest else None
    if payload is None and original is None and site not in sites and not _unit_dir(into, site).is_dir():
        counts["revisits_unresolved"] = counts.get("revisits_unresolved", 0) + 1  # no folder made for it
        return
    if site not in sites:
        sites[site] = _open_site(into, site, rerun)
    ds, done, requeried = sites[site]
    sub = submission_from_url(meta["url"])
    sub["id"] = page_id(sub["method"], sub.get("action") or sub["url"], sub["fields"])
    own, sub["fields"] = sub["fields"], with_query(sub["fields"], query)  # after the ID: IDs stay stable
    if sub["id"] in done:
        counts["duplicates"] += 1
        if sub["fields"] != own:
            requery(ds.add_submission(sub), sub["fields"], own, requeried)
        if digest:
            originals.setdefault(digest, ds.page_path(sub["id"]))
        return
    if payload is None:
        if original is None or not original.is_file():
            counts["revisits_unresolved"] = counts.get("revisits_unresolved", 0) + 1
            return
        payload = original.read_bytes()
        if not _is_html(meta["headers"].get("content-type", ""), payload):
            counts["skipped_type"] += 1
            return
    ds.write_page(sub["id"], payload)
    if digest:
        originals.setdefault(digest, ds.page_path(sub["id"]))
    requery(ds.add_submission({**sub, "site": site, "source": f"{path.name}@{meta['warc_offset']}"}),
            sub["fields"], own, requeried)
    ds.append_journal(_journal_line({**sub, "fields": own}, meta, payload))  # the fields it was fetched with
    done.add(sub["id"])
    counts["imported"] += 1


def _open_site(into: Path, site: str, rerun: str) -> tuple[Dataset, set[str], list[dict]]:
    """A site's dataset folder, created (or reopened) with the IDs of the pages already imported."""
    ds = Dataset.create(_unit_dir(into, site), name=site, source="warc", format="warc",
                        notes="imported from WARC responses (status 200, HTML)")
    mark_unfinished(ds, rerun)
    return ds, {sid for sid, rec in ds.journal().items() if _imported(ds, rec)}, []


def _journal_line(sub: dict, meta: dict, payload: bytes) -> dict:
    """The journal line of an imported response: the fetch as the WARC recorded it, and where."""
    return {
        "submission": sub["id"], "url": meta["url"], "method": "GET", "fields": sub["fields"],
        "final_url": meta["url"], "redirects": [], "status": meta["status"],
        "headers": meta["headers"], "http_charset": meta["http_charset"], "bytes": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(), "started": meta["date"],
        "finished": meta["date"], "error": None, "warc": meta["warc"],
        "warc_offset": meta["warc_offset"], "imported": now_iso(),
        **({"warc_revisit_of": meta["payload_digest"]} if meta.get("revisit") else {})}


def _finish_site(ds: Dataset, requeried: list[dict]) -> Path:
    """One site's folder finished: the query given this run recorded for the pages imported before
    (``apply_requery``), its domain query written, its counts put in ``dataset.json``."""
    apply_requery(ds, requeried)
    writer = _write_query(ds)
    finish_unfinished(ds)
    ds.update_meta(counts={"pages": sum(1 for _ in (ds.path / "pages").glob("*.html")), "gold": 0,
                           "submissions": len(ds.submissions())}, query_written_by=writer)
    return ds.path
