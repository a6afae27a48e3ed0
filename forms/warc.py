"""WARC out: what ``hwnoise collect`` fetched, as a WARC/1.1 file other web-archive tools read.

The WARC is written with warcio (the Webrecorder library that pywb and Browsertrix use), one
gzip member per record. Each fetched page becomes a *record set*: for every redirect hop the
journal lists, a request record and a response record (its status and ``Location``, as the
journal recorded them), then the request and the response of the page itself, its payload the
bytes the server sent (de-chunked and content-decoded, as written to ``pages/ID.html``; so
``Content-Encoding`` and ``Transfer-Encoding`` are left out and ``Content-Length`` is the payload's).
Every record carries ``WARC-Payload-Digest`` and ``WARC-Block-Digest``, and two extension
fields: ``Hwnoise-Submission`` (the page ID) and ``Hwnoise-Record-Set`` (``i/n``).

A record set is built in memory, appended with one write and fsynced. The WARC is a function of
the journal and the pages: on opening, :class:`WarcLog` scans the file, cuts anything after the
last complete record set (a run killed mid-append: a torn tail, the only damage it cuts; a WARC
damaged where whole records follow is refused, left as it was), and writes the sets of pages that are done
in the journal but not yet in the WARC (a run killed between the page and the WARC); a page
already in the WARC is never written twice.
"""
from __future__ import annotations

import datetime as _dt
import io
import os
import threading
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from hwnoise import __version__
from hwnoise.dataset import Dataset
from hwnoise.errors import HwnoiseError

from .submissions import encoded_fields, form_body

#: response headers left out of the record: the payload is stored decoded and de-chunked
_DROPPED = {"content-encoding", "transfer-encoding", "content-length", "connection", "keep-alive"}
SUBMISSION = "Hwnoise-Submission"
RECORD_SET = "Hwnoise-Record-Set"


class WarcError(HwnoiseError):
    """A WARC file cannot be read or written."""


def _warcio():
    try:
        from warcio.archiveiterator import ArchiveIterator
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter
    except ImportError:  # pragma: no cover - a declared dependency
        raise WarcError("WARC support needs warcio: pip install 'warcio>=1.7'") from None
    return ArchiveIterator, StatusAndHeaders, WARCWriter


def warc_date(iso: str | None) -> str | None:
    """``2026-11-23T10:00:00+00:00`` → ``2026-11-23T10:00:00Z`` (WARC-Date), None if unparsable."""
    if not iso:
        return None
    try:
        when = _dt.datetime.fromisoformat(iso)
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _target(url: str) -> str:
    """The request line's target, as it went on the wire: percent-encoded as requests sends
    it (a URL with ``café`` in it made warcio, which writes HTTP headers as ASCII, raise)."""
    from requests.utils import requote_uri

    parts = urlsplit(url)
    return requote_uri((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))


def record_set(journal: dict, body: bytes, *, user_agent: str | None = None,
               submission: dict | None = None) -> bytes:
    """The gzipped WARC records of one fetched page (redirect hops, then the page), as bytes; a
    POST's request body encoded as it was sent, in the ``submission``'s charset and enctype
    (a multipart body with a boundary of its own: the one sent is not kept)."""
    _, StatusAndHeaders, WARCWriter = _warcio()
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    sid = journal["submission"]
    date = warc_date(journal.get("finished")) or warc_date(journal.get("started"))
    method = (journal.get("method") or "GET").upper()
    fields = journal.get("fields") or []
    exchanges: list[tuple[str, str, bytes, int, list, bytes]] = []  # method, url, req body, status, headers, body
    form = form_body(encoded_fields(fields, (submission or {}).get("charset")), (submission or {}).get("enctype"))
    for hop in journal.get("redirects") or []:
        req_body = form[0] if method == "POST" else b""
        exchanges.append((method, hop["url"], req_body, int(hop["status"]),
                          [("Location", hop.get("location", "")), ("Content-Length", "0")], b""))
        if hop["status"] == 303 or (hop["status"] in (301, 302) and method == "POST"):
            method = "GET"
    headers = [(k, v) for k, v in (journal.get("headers") or {}).items() if k.lower() not in _DROPPED]
    headers.append(("Content-Length", str(len(body))))
    req_body = form[0] if method == "POST" else b""
    exchanges.append((method, journal.get("final_url") or journal["url"], req_body,
                      int(journal.get("status") or 200), headers, body))
    total = 2 * len(exchanges)
    for i, (meth, url, rbody, status, rheaders, payload) in enumerate(exchanges):
        host = urlsplit(url).netloc
        req_headers = [("Host", host), ("User-Agent", user_agent or "hwnoise"),
                       ("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")]
        if rbody:
            req_headers += [("Content-Type", form[1]),
                            ("Content-Length", str(len(rbody)))]
        extra = {SUBMISSION: sid}
        if date:
            extra["WARC-Date"] = date
        resp = writer.create_warc_record(
            url, "response", payload=io.BytesIO(payload), length=len(payload),
            http_headers=StatusAndHeaders(f"{status} {_reason(status)}", rheaders, protocol="HTTP/1.1"),
            warc_headers_dict={**extra, RECORD_SET: f"{2 * i + 2}/{total}"})
        req = writer.create_warc_record(
            url, "request", payload=io.BytesIO(rbody), length=len(rbody),
            http_headers=StatusAndHeaders(f"{meth} {_target(url)}", req_headers, protocol="HTTP/1.1",
                                          is_http_request=True),
            warc_headers_dict={**extra, RECORD_SET: f"{2 * i + 1}/{total}"})
        req.rec_headers.add_header("WARC-Concurrent-To", resp.rec_headers.get_header("WARC-Record-ID"))
        writer.write_record(req)   # request first, as Heritrix and Common Crawl write them
        writer.write_record(resp)
    return out.getvalue()


def scan(path: str | os.PathLike) -> tuple[set[str], int, int]:
    """Scan a WARC hwnoise wrote: ``(submission IDs of complete record sets, end offset of the
    last complete set, file size)``. Reading stops at the first record that does not parse or
    whose block digest is wrong (a torn tail)."""
    done, good_end, size, _ = _scan(path)
    return done, good_end, size


def _scan(path: str | os.PathLike) -> tuple[set[str], int, int, int]:
    """:func:`scan`, and the offset where reading stopped: the end of the last whole record (the
    size when every record read)."""
    ArchiveIterator, _, _ = _warcio()
    path = Path(path)
    size = path.stat().st_size
    done: set[str] = set()
    good_end = read_end = 0
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh, check_digests="raise")
        try:
            for rec in it:
                rec.content_stream().read()
                it.read_to_end(rec)
                end = it.get_record_offset() + it.get_record_length()
                if end > size:
                    break
                if end == size and not _member_whole(fh, it.get_record_offset(), end):
                    break  # the last gzip member cut short: warcio reads what it holds as a whole record
                read_end = end
                sid = rec.rec_headers.get_header(SUBMISSION)
                part = rec.rec_headers.get_header(RECORD_SET)
                if not sid or not part:
                    good_end = end  # warcinfo and other records stand alone
                    continue
                i, _, n = part.partition("/")
                if i == n:
                    done.add(sid)
                    good_end = end
        except Exception:  # noqa: BLE001 - any parse error marks the torn tail
            pass
    return done, good_end, size, read_end


def _whole_record_at(fh, start: int, size: int) -> bool:
    """Whether a whole WARC record (gzipped or not, its digests right) begins at ``start`` of
    ``fh`` and ends within the file."""
    ArchiveIterator, _, _ = _warcio()
    fh.seek(start)
    try:
        it = ArchiveIterator(fh, check_digests="raise")
        for rec in it:
            rec.content_stream().read()
            it.read_to_end(rec)
            end = start + it.get_record_offset() + it.get_record_length()
            return end <= size and _member_whole(fh, start, end)
    except Exception:  # noqa: BLE001 - no record there
        return False
    return False


def _record_after(path: Path, start: int, size: int) -> int | None:
    """The offset of the first whole record that begins after ``start`` (a gzip member's magic or
    a ``WARC/1.`` version line there), or None: the bytes after ``start`` are a torn tail."""
    import mmap

    if size <= start + 1:
        return None
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        marks = [b"\x1f\x8b\x08", b"WARC/1."]
        found = [data.find(m, start + 1) for m in marks]
        while any(at >= 0 for at in found):
            at = min(a for a in found if a >= 0)
            if _whole_record_at(fh, at, size):
                return at
            found = [data.find(m, at + 1) if a == at else a for m, a in zip(marks, found)]
    return None


def _member_whole(fh, start: int, end: int) -> bool:
    """Whether the bytes ``start:end`` of ``fh`` end where their gzip member ends (True of bytes
    that are no gzip: a plain WARC's records carry their digests). ``fh`` is left where it was."""
    import zlib

    at = fh.tell()
    try:
        fh.seek(start)
        if fh.read(2) != b"\x1f\x8b":
            return True
        fh.seek(start)
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        left = end - start
        while left > 0 and not member.eof:
            chunk = fh.read(min(left, 1 << 16))
            if not chunk:
                break
            left -= len(chunk)
            while chunk and not member.eof:
                member.decompress(chunk, 1 << 16)
                chunk = member.unconsumed_tail
        return member.eof
    except zlib.error:
        return False
    finally:
        fh.seek(at)


def _starts_as_a_warc(path: Path) -> bool:
    """Whether a file begins as a WARC does (a ``WARC/`` version line, gzipped or not): one whose
    first record is torn (a run killed in its first write) is one; a text file, a gzip of one (its
    first member read), or any other is not."""
    with open(path, "rb") as fh:
        head = fh.read(6)
        if not head.startswith(b"\x1f\x8b"):
            return head.startswith(b"WARC/")
        fh.seek(0)
        return _gzip_starts_as_a_warc(fh)


def _gzip_starts_as_a_warc(fh) -> bool:
    """Whether the first gzip member of ``fh`` begins with ``WARC/``, or is cut before it says
    (a prefix of a gzip member decompresses to a prefix of its text, never to an error)."""
    import zlib

    member = zlib.decompressobj(16 + zlib.MAX_WBITS)
    start = b""
    try:
        for _ in range(64):  # 4 MiB at most: a member that gives no 5 bytes in that is no WARC record
            chunk = fh.read(1 << 16)
            if not chunk:
                break
            start += member.decompress(chunk, 5 - len(start))
            while len(start) < 5 and member.unconsumed_tail and not member.eof:
                start += member.decompress(member.unconsumed_tail, 5 - len(start))
            if len(start) >= 5 or member.eof:
                break
    except zlib.error:
        return False  # gzip's magic, then no deflate stream: not even a torn gzip
    if len(start) >= 5 or member.eof:
        return start.startswith(b"WARC/")
    return b"WARC/".startswith(start)  # torn before its first five bytes


def _warcinfo(path: Path) -> bytes:
    _, _, WARCWriter = _warcio()
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    writer.write_record(writer.create_warcinfo_record(path.name, {
        "software": f"hwnoise/{__version__} (warcio)", "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}))
    return out.getvalue()


def _lock(path: Path) -> int | None:
    """Open ``path`` (made empty if it was not there) and hold it locked (an advisory ``flock``,
    released when the descriptor is closed or the process ends, however it ends), or refuse:
    two collects of different datasets into one WARC at once interleaved their writes, and one
    cut as a torn tail the record set the other was appending."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): no guard
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError as exc:
        raise WarcError(f"{path}: cannot open the WARC ({exc.strerror}); give --warc a file you can write") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise WarcError(f"{path}: another 'hwnoise collect' is writing this WARC now; wait for it to end, "
                        "or give --warc another file name") from None
    return fd


class WarcLog:
    """Appends the record set of each fetched page to a WARC file, once per page (threads share it).
    The WARC is held locked from opening to :meth:`close`: one collect writes it at a time."""

    def __init__(self, path: str | os.PathLike, *, user_agent: str | None = None):
        self.path = Path(path)
        self.user_agent = user_agent
        self.lock = threading.Lock()
        self.written = 0
        self.cut = 0
        if not self.path.name.endswith((".warc.gz", ".warc")):
            raise WarcError(f"{self.path}: a WARC file name ends in .warc.gz")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = _lock(self.path)
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        if self.path.exists() and self.path.stat().st_size:
            if not _starts_as_a_warc(self.path):
                # it was cut to nothing as a 'torn record set' (or, warcio reading a line of text as
                # a record, appended to) and the crawl's records written into it
                raise WarcError(f"{self.path}: exists and is no WARC file (it does not begin with a WARC record, "
                                "gzipped or not); give --warc a new file name, or the WARC of this crawl")
            self.done, good_end, size, read_end = _scan(self.path)
            if good_end < size:
                after = _record_after(self.path, read_end, size)
                if after is not None:
                    # cutting at the damage lost every record after it; only a torn tail is cut
                    raise WarcError(
                        f"{self.path}: damaged at byte {read_end} (no WARC record reads there), with whole records "
                        f"after it (from byte {after}); left as it was, nothing fetched: give --warc a new file name, "
                        "or move this WARC aside (check it with 'warcio check')")
                with open(self.path, "rb+") as fh:
                    fh.truncate(good_end)
                    fh.flush()
                    os.fsync(fh.fileno())
                self.cut = size - good_end
        else:
            self.done = set()
            self._append(_warcinfo(self.path))

    def close(self) -> None:
        """Let go of the WARC (its lock): the run is over."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "WarcLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _append(self, data: bytes) -> None:
        from hwnoise.dataset import append_synced

        append_synced(self.path, data)

    def add(self, journal: dict, body: bytes, submission: dict | None = None) -> bool:
        """Append the page's record set unless the WARC has it; return whether it was written."""
        sid = journal["submission"]
        with self.lock:
            if sid in self.done:
                return False
            self._append(record_set(journal, body, user_agent=self.user_agent, submission=submission))
            self.done.add(sid)
            self.written += 1
            return True

    def backfill(self, dataset: Dataset, is_done) -> int:
        """Write the pages done in the journal but missing from the WARC; return how many."""
        count = 0
        subs = {s["id"]: s for s in dataset.submissions()}
        for sid, rec in dataset.journal().items():
            if sid not in self.done and is_done(dataset, rec):
                count += self.add(rec, dataset.page_path(sid).read_bytes(), subs.get(sid))
        return count
