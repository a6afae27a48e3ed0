"""WARC in and out, against a real local HTTP server and real warcio: collect --warc writes a
WARC that warcio reads back with the server's bytes; a WARC written by warcio imports byte for
byte with its query from the URLs; a killed and resumed crawl leaves a valid WARC, no duplicates."""
from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from hwnoise.dataset import Dataset
from hwnoise.features.importers import ImportFormatError
from hwnoise.features.importers.warc import import_warc, warc_files
from hwnoise.forms.warc import RECORD_SET, SUBMISSION, scan

REPO = Path(__file__).resolve().parents[1]


def body_for(path: str) -> bytes:
    """What the server sends for a result page (a list of results): distinct, and not UTF-8 for
    some."""
    q = parse_qsl(urlsplit(path).query)
    words = " ".join(v for _, v in q)
    results = "".join(f"<tr><td><a href=/r{k}>Résultat {k} pour {words}</a></td>"
                      f"<td><span>Auteur {k}</span> <b>{10 + k}.50</b></td></tr>" for k in range(6))
    text = f"<html><head><title>r</title></head><body><h1>Résultats</h1><p>{words}</p>" \
           f"<table><tbody>{results}</tbody></table><div>footer {path}</div></body></html>"
    return text.encode("latin-1" if "latin" in path else "utf-8")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        q = dict(parse_qsl(parts.query))
        if q.get("sleep"):
            time.sleep(float(q["sleep"]))
        if parts.path == "/robots.txt":
            return self._send(404, b"", "text/plain")
        if parts.path == "/gate":  # answered once the test opens the gate: a collect caught midway
            self.server.gated.set()  # type: ignore[attr-defined]
            self.server.gate.wait(30)  # type: ignore[attr-defined]  # a safety net only: the test opens it
            return self._send(200, body_for(self.path), "text/html; charset=utf-8")
        if parts.path == "/go":
            return self._send(302, b"", "text/html", {"Location": "/search?" + parts.query})
        if parts.path == "/search":
            body = body_for(self.path)
            self.server.sent[self.path] = body  # type: ignore[attr-defined]
            ctype = "text/html; charset=" + ("iso-8859-1" if "latin" in self.path else "utf-8")
            if q.get("enc") == "gzip":
                return self._send(200, gzip.compress(body), ctype, {"Content-Encoding": "gzip"})
            if q.get("enc") == "chunked":
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(0, len(body), 50):
                    part = body[i:i + 50]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
                return None
            return self._send(200, body, ctype)
        return self._send(404, b"<html>not here</html>", "text/html")

    def do_POST(self) -> None:
        """A search answered by POST: the request's body and Content-Type kept in ``posted``."""
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posted.append((self.headers.get("Content-Type"), data))  # type: ignore[attr-defined]
        return self._send(200, b"<html><body><p>results</p></body></html>", "text/html; charset=utf-8")

    def _send(self, status: int, body: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.hits, httpd.sent, httpd.posted = [], {}, []  # type: ignore[attr-defined]
    httpd.gate, httpd.gated = threading.Event(), threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def url(server, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def collect_cli(*args: str, check: bool = True) -> int:
    """``hwnoise collect ... --allow-private --delay 0 --quiet`` in this process."""
    from hwnoise.cli import main

    code = main(["collect", *args, "--allow-private", "--delay", "0", "--quiet"])
    if check:
        assert code == 0
    return code


def read_warc(path: Path) -> list[dict]:
    out = []
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh, check_digests="raise"):
            out.append({"type": rec.rec_type, "uri": rec.rec_headers.get_header("WARC-Target-URI"),
                        "version": rec.rec_headers.protocol,
                        "sid": rec.rec_headers.get_header(SUBMISSION),
                        "set": rec.rec_headers.get_header(RECORD_SET),
                        "digest": rec.rec_headers.get_header("WARC-Payload-Digest"),
                        "status": rec.http_headers.get_statuscode() if rec.http_headers else None,
                        "payload": rec.content_stream().read()})
    return out


def test_collect_warc_holds_what_the_server_sent(server, tmp_path):
    paths = ["/search?q=tea&page=1", "/search?q=caf%C3%A9&enc=gzip", "/search?q=latin&cat=books",
             "/search?q=long&enc=chunked", "/go?q=moved", "/missing?q=x"]
    (tmp_path / "urls.txt").write_text("\n".join(url(server, p) for p in paths) + "\n")
    warc = tmp_path / "crawl.warc.gz"
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc", str(warc))
    recs = read_warc(warc)
    assert recs[0]["type"] == "warcinfo" and all(r["version"] == "WARC/1.1" for r in recs)
    pages = [r for r in recs if r["type"] == "response" and r["status"] == "200"]
    assert len(pages) == 5                                    # one per page; the 404 is not a page
    for r in pages:
        path = r["uri"].split(str(server.server_address[1]), 1)[1]
        assert r["payload"] == server.sent[path]              # de-chunked, decoded, not re-encoded
        assert r["digest"].startswith("sha1:")
    hop = [r for r in recs if r["type"] == "response" and r["status"] == "302"]
    assert len(hop) == 1 and hop[0]["uri"].endswith("/go?q=moved")
    assert sum(r["type"] == "request" for r in recs) == 6     # 5 pages + 1 redirect hop
    ds = Dataset(tmp_path / "ds")
    for r in pages:
        assert r["payload"] == (ds.path / "pages" / f"{r['sid']}.html").read_bytes()

    # and back in: one dataset per site, the same bytes, the query from the URLs
    [folder], counts = import_warc([warc], tmp_path / "imported", progress=False)
    assert counts["imported"] == 5 and counts["skipped_status"] == 1
    imp = Dataset(folder)
    got = {p.url: p.read_html() for p in imp.pages()}
    assert got == {r["uri"]: r["payload"] for r in pages}
    assert {"tea", "books", "latin", "cat"} <= set(imp.query_terms())
    latin = next(p for p in imp.pages() if "latin" in p.url)
    assert latin.http_charset == "iso-8859-1" and {"name": "cat", "value": "books"}.items() <= latin.fields[1].items()


def test_warc_written_by_warcio_imports_byte_for_byte(tmp_path):
    """A WARC another tool wrote (warcio, uncompressed and gzipped, two files, Common Crawl's
    habits: request records, a chunked payload stored raw, a gzip-encoded payload stored raw)."""
    pages = {f"https://www.shop.example/find?q=blue+{i}&sort=price": ("<html><body><p>item %d é</p></body></html>" % i)
             .encode("utf-8") for i in range(4)}
    pages["https://other.example/list?cat=tools"] = b"<!DOCTYPE html><html><body>tools</body></html>"

    def write(path: Path, items, gz: bool) -> None:
        with open(path, "wb") as fh:
            w = WARCWriter(fh, gzip=gz)
            for u, body, extra in items:
                status, ctype, enc = extra
                headers = [("Content-Type", ctype)]
                payload = body
                if enc == "chunked":
                    payload = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                                       for i in range(0, len(body), 7)) + b"0\r\n\r\n"
                    headers.append(("Transfer-Encoding", "chunked"))
                elif enc == "gzip":
                    payload = gzip.compress(body)
                    headers += [("Content-Encoding", "gzip"), ("Content-Length", str(len(payload)))]
                else:
                    headers.append(("Content-Length", str(len(payload))))
                w.write_record(w.create_warc_record(u, "request", payload=io.BytesIO(b""), length=0,
                               http_headers=StatusAndHeaders("GET / ", [("Host", "x")], protocol="HTTP/1.1",
                                                             is_http_request=True)))
                w.write_record(w.create_warc_record(u, "response", payload=io.BytesIO(payload), length=len(payload),
                               http_headers=StatusAndHeaders(status, headers, protocol="HTTP/1.1")))

    urls = list(pages)
    write(tmp_path / "a.warc.gz", [(urls[0], pages[urls[0]], ("200 OK", "text/html; charset=utf-8", None)),
                                   (urls[1], pages[urls[1]], ("200 OK", "text/html", "chunked")),
                                   ("https://www.shop.example/logo.png", b"\x89PNG", ("200 OK", "image/png", None)),
                                   ("https://www.shop.example/find?q=gone", b"<html>", ("404 Not Found", "text/html", None))],
          gz=True)
    write(tmp_path / "b.warc", [(urls[2], pages[urls[2]], ("200 OK", "text/html", "gzip")),
                                (urls[3], pages[urls[3]], ("200 OK", "application/xhtml+xml", None)),
                                (urls[4], pages[urls[4]], ("200 OK", "text/html", None)),
                                (urls[0], pages[urls[0]], ("200 OK", "text/html", None))], gz=False)
    folders, counts = import_warc([tmp_path / "a.warc.gz", tmp_path / "b.warc"], tmp_path / "out", progress=False)
    assert sorted(f.name for f in folders) == ["other.example", "shop.example"]
    assert counts == {**counts, "imported": 5, "skipped_status": 1, "skipped_type": 1, "duplicates": 1,
                      "not_response": 8}
    got = {p.url: p.read_html() for f in folders for p in Dataset(f).pages()}
    assert got == pages                                          # byte for byte
    shop = Dataset(tmp_path / "out" / "shop.example")
    sub = next(s for s in shop.submissions() if s["url"] == urls[0])
    assert sub["method"] == "GET" and [(f["name"], f["value"]) for f in sub["fields"]] == [("q", "blue 0"), ("sort", "price")]
    assert {"q", "sort", "blue", "price"} <= set(shop.query_terms())
    # importing again adds nothing
    _, again = import_warc([tmp_path / "a.warc.gz", tmp_path / "b.warc"], tmp_path / "out", progress=False)
    assert again["imported"] == 0 and again["duplicates"] == 6
    assert len(shop.submissions()) == 4


@pytest.mark.parametrize("gz", [True, False])
def test_a_warc_cut_short_keeps_the_records_before_the_cut(tmp_path, capsys, gz):
    """A WARC whose download or crawl was cut short: the pages of the whole records before the
    cut are imported byte for byte, the cut one is not (its payload would be a part of the page),
    and the cut is said with the file and the record's offset; a whole file says nothing."""
    pages = {f"https://www.shop.example/find?q=item+{i}": (b"<html><body><p>item %d</p>%s</body></html>"
                                                           % (i, b"x" * 3000)) for i in range(4)}
    whole = tmp_path / ("whole.warc.gz" if gz else "whole.warc")
    offsets = []
    with open(whole, "wb") as fh:
        w = WARCWriter(fh, gzip=gz)
        for u, body in pages.items():
            offsets.append(fh.tell())
            w.write_record(w.create_warc_record(u, "response", payload=io.BytesIO(body), length=len(body),
                           http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                                                    ("Content-Length", str(len(body)))],
                                                         protocol="HTTP/1.1")))
    data = whole.read_bytes()
    _, counts = import_warc([whole], tmp_path / "whole-out", progress=False)
    assert counts["imported"] == 4 and "truncated" not in counts
    assert "cut short" not in capsys.readouterr().err
    urls = list(pages)
    # halfway into the last record (its payload); 60 bytes in (its headers); 5 bytes in
    for k, cut in enumerate([(offsets[3] + len(data)) // 2, offsets[3] + 60, offsets[3] + 5]):
        part = tmp_path / f"cut{k}{whole.suffix}"
        part.write_bytes(data[:cut])
        folders, counts = import_warc([part], tmp_path / f"out{k}", progress=False)
        got = {p.url: p.read_html() for f in folders for p in Dataset(f).pages()}
        assert got == {u: pages[u] for u in urls[:3]}, cut        # the whole records, byte for byte
        assert counts["truncated"] == 1
        err = capsys.readouterr().err
        assert f"{part}: " in err and "the record at byte" in err and "records before it were read" in err
    (tmp_path / "junk.warc").write_bytes(b"GIF89a" + bytes(200))
    with pytest.raises(ImportFormatError, match="junk.warc: not a readable WARC file"):
        import_warc([tmp_path / "junk.warc"], tmp_path / "junk-out", progress=False)


@pytest.mark.parametrize("gz", [True, False])
def test_a_warc_cut_anywhere_gives_whole_pages_or_one_clear_error(tmp_path, gz):
    """Every cut of a small WARC, byte after byte: what is read is whole pages only, a cut the
    reader can see is counted, and a file with no whole record is an ImportFormatError."""
    from hwnoise.features.importers.warc import html_responses

    pages = {f"https://www.shop.example/find?q=item+{i}": b"<html><body><p>item %d</p>%s</body></html>"
             % (i, b"abc " * 60) for i in range(3)}
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=gz)
    for u, body in pages.items():
        w.write_record(w.create_warc_record(u, "response", payload=io.BytesIO(body), length=len(body),
                       http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                                     protocol="HTTP/1.1")))
    data = buf.getvalue()
    part = tmp_path / "cut.warc"
    seen_cut = errors = 0
    for cut in range(1, len(data), 3 if gz else 5):
        part.write_bytes(data[:cut])
        counts = dict.fromkeys(("records", "responses", "not_response", "skipped_status", "skipped_type",
                                "skipped_url"), 0)
        try:
            got = list(html_responses(part, counts))
        except ImportFormatError as exc:
            assert "not a readable WARC file" in str(exc)
            errors += 1
            continue
        assert all(pages[m["url"]] == payload for m, payload in got), cut
        seen_cut += bool(counts.get("truncated"))
    assert errors and seen_cut > (len(data) // (3 if gz else 5)) // 2  # most cuts fall inside a record


def test_killed_crawl_resumes_into_a_valid_warc_without_duplicates(server, tmp_path):
    n = 16
    urls = [url(server, f"/search?q=k{i}&sleep=0.05") for i in range(n)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    into, warc = tmp_path / "ds", tmp_path / "crawl.warc.gz"
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "collect", str(tmp_path / "urls.txt"),
                             "--into", str(into), "--warc", str(warc), "--allow-private", "--delay", "0",
                             "--quiet"], env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = into / "journal.jsonl"
    while proc.poll() is None and (not journal.exists() or journal.read_bytes().count(b"\n") < 5):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    # make the worst cases certain: the last page's record set lost (killed between its journal
    # line and the WARC), and half a record set torn off the end (killed mid-append)
    done, good_end, size = scan(warc)
    assert good_end == size and len(done) >= 4
    with open(warc, "rb") as fh:
        it = ArchiveIterator(fh)
        starts = [it.get_record_offset() for rec in it if (rec.rec_headers.get_header(RECORD_SET) or "").startswith("1/")]
    os.truncate(warc, starts[-1])
    with open(warc, "ab") as fh:
        fh.write(b"\x1f\x8b\x08\x00" + os.urandom(40))
    assert len(scan(warc)[0]) == len(done) - 1

    collect_cli(str(tmp_path / "urls.txt"), "--into", str(into), "--warc", str(warc))
    recs = read_warc(warc)                                    # parses to the end, digests checked
    pages = [r for r in recs if r["type"] == "response"]
    assert sorted(r["uri"] for r in pages) == sorted(urls)    # every page once
    assert len({r["sid"] for r in pages}) == n
    ds = Dataset(into)
    for r in pages:
        assert r["payload"] == (ds.path / "pages" / f"{r['sid']}.html").read_bytes()
    before = warc.read_bytes()
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(into), "--warc", str(warc))
    assert warc.read_bytes() == before                        # a rerun changes nothing


def test_pages_fetched_before_the_warc_are_backfilled_once(server, tmp_path, capsys):
    urls = [url(server, f"/search?q=b{i}") for i in range(3)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"))
    warc = tmp_path / "late.warc"
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc", str(warc))
    assert sorted(r["uri"] for r in read_warc(warc) if r["type"] == "response") == sorted(urls)
    capsys.readouterr()
    code = collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc",
                       str(tmp_path / "bad.txt"), check=False)
    assert code == 1 and capsys.readouterr().err.strip().splitlines()[-1].startswith("hwnoise: error: ")


def test_extract_reads_a_warc_and_writes_json_lines(server, tmp_path, monkeypatch, capsys):
    from test_train_cli import make_dataset

    from hwnoise.cli import main
    from hwnoise.extractors.model import extract_with_model, load_model

    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "model-signing.key"))
    ds = make_dataset(tmp_path / "alpha", "alpha", 1, ["a1.com", "a2.com"], n_pages=6)
    assert main(["train", str(ds.path), "--protocol", "pages", "--preset", "thesis", "--out", str(tmp_path / "model"),
                 "--scheduler", "sync"]) == 0
    urls = [url(server, p) for p in ("/search?q=x1", "/search?q=latin&a=b", "/missing?q=1")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    warc = tmp_path / "c.warc.gz"
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc", str(warc))
    capsys.readouterr()
    assert main(["extract", "--warc", str(warc), "-m", str(tmp_path / "model")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["url"] for x in lines] == urls[:2]
    model = load_model(tmp_path / "model")
    for x in lines:
        body = server.sent[x["url"].split(str(server.server_address[1]), 1)[1]]
        charset = "iso-8859-1" if "latin" in x["url"] else "utf-8"
        assert x["text"] == extract_with_model(model, body, http_charset=charset)
    assert main(["extract", "page.html", "--warc", str(warc), "-m", str(tmp_path / "model")]) == 1
    # --records: each response's data records, one JSON line a record, with where it came from
    from hwnoise.extractors.model import label_with_proba
    from hwnoise.extractors.records import page_records

    capsys.readouterr()
    assert main(["extract", "--warc", str(warc), "--records"]) == 0
    out, err = capsys.readouterr()
    recs = [json.loads(x) for x in out.splitlines()]
    shipped = load_model("records")
    want = []
    for u in urls[:2]:
        body = server.sent[u.split(str(server.server_address[1]), 1)[1]]
        charset = "iso-8859-1" if "latin" in u else "utf-8"
        walk, labels, proba = label_with_proba(shipped, body, http_charset=charset)
        want += [(u, r.xpaths[0]) for r in page_records(body, walk, labels, proba, http_charset=charset)]
    assert want and [(x["url"], x["xpath"]) for x in recs] == want and all(x["warc"] == str(warc) for x in recs)
    assert f"{len(want)} records in 2 pages from" in err


def test_a_url_that_is_not_ascii_goes_into_the_warc_as_it_went_on_the_wire(server, tmp_path):
    # the request line was written with the URL's own characters, and warcio writes HTTP
    # headers as ASCII: 'hwnoise collect --warc' of /search?q=café raised UnicodeEncodeError
    # after the page's journal line, and every rerun raised it again in the backfill
    (tmp_path / "urls.txt").write_text(url(server, "/search?q=café&w=1") + "\n" + url(server, "/search?q=tea&w=1") + "\n")
    warc = tmp_path / "crawl.warc.gz"
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc", str(warc), "--probes", "0")
    recs = read_warc(warc)
    assert len([r for r in recs if r["type"] == "response"]) == 2
    with open(warc, "rb") as fh:
        lines = [rec.http_headers.protocol + " " + rec.http_headers.statusline
                 for rec in ArchiveIterator(fh) if rec.rec_type == "request"]
    assert lines == ["GET /search?q=caf%C3%A9&w=1", "GET /search?q=tea&w=1"]
    assert {r["sid"] for r in recs if r["type"] == "response"} == set(Dataset(tmp_path / "ds").journal())


def test_a_folder_named_like_a_warc_inside_a_warc_folder_is_walked_not_opened(tmp_path):
    """``import warc FOLDER`` where FOLDER holds a subfolder named ``old.warc`` (and a dangling
    symlink named ``gone.warc.gz``): only files are WARC files; the folder's own WARCs are read."""
    src = tmp_path / "crawl"
    (src / "old.warc").mkdir(parents=True)
    with open(src / "old.warc" / "a.warc.gz", "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        w.write_record(w.create_warc_record(
            "https://a.example/find?q=oak", "response",
            payload=io.BytesIO(b"<html><body><p>oak chair</p></body></html>"),
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")))
    (src / "gone.warc.gz").symlink_to(tmp_path / "nowhere.warc.gz")
    assert warc_files([src]) == [src / "old.warc" / "a.warc.gz"]
    [folder], counts = import_warc([src], tmp_path / "out", progress=False)
    assert counts["imported"] == 1 and len(Dataset(folder).submissions()) == 1


def test_a_post_goes_into_the_warc_encoded_as_it_was_sent(server, tmp_path):
    # the request record's body was rebuilt as UTF-8 urlencoded whatever the form's charset and
    # enctype: a windows-1252 form's 'café' went in as caf%C3%A9 (sent: caf%E9), a multipart
    # body as urlencoded under an urlencoded Content-Type
    subs = [{"method": "POST", "action": url(server, "/post-a"), "charset": "windows-1252",
             "fields": [{"name": "q", "value": "café"}, {"name": "n", "value": "1"}]},
            {"method": "POST", "action": url(server, "/post-b"), "enctype": "multipart/form-data",
             "fields": [{"name": "q", "value": "tea"}]}]
    (tmp_path / "subs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in subs), encoding="utf-8")
    warc = tmp_path / "crawl.warc.gz"
    server.posted.clear()
    collect_cli(str(tmp_path / "subs.jsonl"), "--into", str(tmp_path / "ds"), "--warc", str(warc), "--probes", "0")
    sent = server.posted[-2:]
    with open(warc, "rb") as fh:
        reqs = {rec.rec_headers.get_header("WARC-Target-URI").rsplit("/", 1)[1]:
                (rec.http_headers.get_header("Content-Type"), rec.content_stream().read())
                for rec in ArchiveIterator(fh) if rec.rec_type == "request"}
    # told apart by the Content-Type: the multipart boundary is random hex, which can hold "caf"
    by_path = {("post-b" if ctype.startswith("multipart/") else "post-a"): (ctype, body) for ctype, body in sent}
    assert reqs["post-a"] == by_path["post-a"] == ("application/x-www-form-urlencoded", b"q=caf%E9&n=1")
    ctype, body = reqs["post-b"]
    assert ctype.startswith("multipart/form-data; boundary=") and by_path["post-b"][0].startswith(ctype[:30])
    boundary = ctype.split("boundary=", 1)[1].encode()
    assert body == b'--%s\r\nContent-Disposition: form-data; name="q"\r\n\r\ntea\r\n--%s--\r\n' % (boundary, boundary)


def test_a_warc_response_declared_html_that_is_no_html_is_skipped(tmp_path):
    """A 200 response declared text/html whose body is empty, an image or binary bytes (a soft
    error, a misconfigured server) was imported as a page, to be skipped only by the features
    stage; it is skipped and counted as not HTML by that stage's rule (``decode.sniff_html``),
    as an undeclared body that is no page is."""
    bodies = {"https://a.example/ok": (b"<html><body><p>fine</p></body></html>", "text/html"),
              "https://a.example/empty": (b"", "text/html; charset=utf-8"),
              "https://a.example/blank": (b"\r\n  \n", "text/html"),
              "https://a.example/img": (b"\x89PNG\r\n\x1a\n" + bytes(64), "text/html"),
              "https://a.example/none": (b"\x00\x01binary", ""),
              "https://a.example/typeless": (b"<!DOCTYPE html><html><body>no type</body></html>", "")}
    with open(tmp_path / "a.warc", "wb") as fh:
        w = WARCWriter(fh, gzip=False)
        for u, (body, ctype) in bodies.items():
            headers = [("Content-Length", str(len(body)))] + ([("Content-Type", ctype)] if ctype else [])
            w.write_record(w.create_warc_record(u, "response", payload=io.BytesIO(body), length=len(body),
                           http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")))
    [folder], counts = import_warc([tmp_path / "a.warc"], tmp_path / "out", progress=False)
    assert counts["imported"] == 2 and counts["skipped_type"] == 4, counts
    assert sorted(p.url for p in Dataset(folder).pages()) == ["https://a.example/ok", "https://a.example/typeless"]


@pytest.mark.parametrize("content", [
    b"my notes, not a WARC\n", b"<html>a page</html>",
    # gzipped: they passed the check (a gzip member) and were cut to nothing as a torn record set
    gzip.compress(b"my notes, not a WARC\n"), gzip.compress(b"<html>a page</html>"), gzip.compress(b"WA"),
    b"\x1f\x8b\x08\x00" + b"\xff" * 40,  # gzip's magic, then no deflate stream: no torn WARC either
], ids=["text", "html", "text.gz", "html.gz", "WA.gz", "bad.gz"])
def test_an_existing_file_that_is_no_warc_is_refused_not_cut(server, tmp_path, capsys, content):
    # it was taken for a WARC whose first record set was torn: cut to nothing, the crawl written in
    (tmp_path / "urls.txt").write_text(url(server, "/search?q=nowarc") + "\n")
    warc = tmp_path / "notes.warc.gz"
    warc.write_bytes(content)
    code = collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc", str(warc), check=False)
    err = capsys.readouterr().err
    assert code == 1 and err.strip().splitlines()[-1] == (
        f"hwnoise: error: {warc}: exists and is no WARC file (it does not begin with a WARC record, gzipped or "
        "not); give --warc a new file name, or the WARC of this crawl")
    assert warc.read_bytes() == content
    # a WARC whose first record was torn (a run killed in its first write) is still cut and resumed
    whole = tmp_path / "whole.warc.gz"
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds2"), "--warc", str(whole))
    for cut in (3, 12, 40, 200):  # torn in gzip's header, before any byte decompresses, or later (200:
        # within the warcinfo record, which warcio read as whole: the torn bytes were kept, the WARC unreadable)
        torn = tmp_path / f"torn{cut}.warc.gz"
        torn.write_bytes(whole.read_bytes()[:cut])
        collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / f"ds3-{cut}"), "--warc", str(torn))
        assert [r["uri"] for r in read_warc(torn) if r["type"] == "response"] == [url(server, "/search?q=nowarc")]


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_a_warc_damaged_in_the_middle_is_refused_and_left_as_it_was(server, tmp_path, capsys, gz):
    # damage found on reopening cut the WARC at the damage: every whole record after it was lost
    urls = [url(server, f"/search?q=mid{i}{gz}") for i in range(4)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    warc = tmp_path / ("crawl.warc.gz" if gz else "crawl.warc")
    collect_cli(str(tmp_path / "urls.txt"), "--into", str(tmp_path / "ds"), "--warc", str(warc))
    with open(warc, "rb") as fh:
        it = ArchiveIterator(fh)
        offsets = [(it.get_record_offset(), rec.rec_headers.get_header(RECORD_SET)) for rec in it]
    starts = [at for at, part in offsets if part == "1/2"]
    data = bytearray(warc.read_bytes())
    data[starts[1] + 30:starts[1] + 40] = b"\0" * 10      # the second page's request record
    warc.write_bytes(bytes(data))
    capsys.readouterr()
    (tmp_path / "more.txt").write_text(url(server, f"/search?q=after{gz}") + "\n")
    hits = len(server.hits)
    code = collect_cli(str(tmp_path / "more.txt"), "--into", str(tmp_path / "ds2"), "--warc", str(warc), check=False)
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err == (
        f"hwnoise: error: {warc}: damaged at byte {starts[1]} (no WARC record reads there), with whole records "
        f"after it (from byte {offsets[offsets.index((starts[1], '1/2')) + 1][0]}); left as it was, nothing fetched: give --warc a new file name, "
        "or move this WARC aside (check it with 'warcio check')\n")
    assert warc.read_bytes() == bytes(data) and len(server.hits) == hits   # byte for byte; no fetch
    # a torn tail (the last record set cut short, as a killed run leaves it) is still cut and resumed
    whole = bytes(data)[:starts[1]]
    warc.write_bytes(whole + bytes(data)[starts[3]:starts[3] + 300])
    collect_cli(str(tmp_path / "more.txt"), "--into", str(tmp_path / "ds2"), "--warc", str(warc))
    assert warc.read_bytes().startswith(whole)
    assert [r["uri"] for r in read_warc(warc) if r["type"] == "response"] == [urls[0], url(server, f"/search?q=after{gz}")]


def test_a_second_collect_into_a_warc_another_collect_writes_is_refused(server, tmp_path):
    # two collects of different datasets sharing one --warc both wrote it at once: their appends
    # could interleave, and one cut as a torn tail the record set the other was writing
    first_urls = [url(server, "/search?q=lock1"), url(server, "/gate?q=lock2")]
    (tmp_path / "a.txt").write_text("\n".join(first_urls) + "\n")
    (tmp_path / "b.txt").write_text(url(server, "/search?q=lockb") + "\n")
    warc = tmp_path / "shared.warc.gz"
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "hwnoise.cli", "collect", "--warc", str(warc), "--allow-private", "--delay", "0",
           "--quiet"]
    first = subprocess.Popen([*cmd, str(tmp_path / "a.txt"), "--into", str(tmp_path / "a")], env=env, cwd=REPO,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert server.gated.wait(30)  # the first collect is midway, its second page held
        second = subprocess.run([*cmd, str(tmp_path / "b.txt"), "--into", str(tmp_path / "b")], env=env, cwd=REPO,
                                capture_output=True, text=True)
        assert first.poll() is None   # still running when the second was refused
    finally:
        server.gate.set()
        first.wait()
    assert second.returncode == 1 and second.stderr == (
        f"hwnoise: error: {warc}: another 'hwnoise collect' is writing this WARC now; wait for it to end, "
        "or give --warc another file name\n")
    assert first.returncode == 0 and first.stderr.read().decode().startswith("collect: 2 fetched, 0 failed")
    assert not any("lockb" in hit for hit in server.hits)                  # the second fetched nothing
    assert not (tmp_path / "b" / "journal.jsonl").exists()
    recs = read_warc(warc)                                                   # parses to the end, digests checked
    assert [r["uri"] for r in recs if r["type"] == "response"] == first_urls
    assert sum(r["type"] == "warcinfo" for r in recs) == 1
    # the lock goes with the run: the second, run again, appends to the same WARC
    again = subprocess.run([*cmd, str(tmp_path / "b.txt"), "--into", str(tmp_path / "b")], env=env, cwd=REPO)
    assert again.returncode == 0
    assert [r["uri"] for r in read_warc(warc) if r["type"] == "response"] == [*first_urls, url(server, "/search?q=lockb")]


@pytest.mark.parametrize("text", [b"# notes of the crawl, saved over the WARC by mistake\n",
                                  b"<html><body>a page saved as crawl.warc by mistake</body></html>\n"])
def test_a_text_file_given_as_a_warc_is_refused_not_read_as_an_arc_record(tmp_path, text):
    """warcio reads any first line of five or more words as an ARC record's header: a text file
    given among the WARCs was counted as "1 other records" and the import went on without a word
    (alone, "nothing imported" said nothing of why). It is refused as no WARC, naming the file."""
    good = tmp_path / "a.warc"
    with open(good, "wb") as fh:
        w = WARCWriter(fh, gzip=False)
        w.write_record(w.create_warc_record(
            "https://shop.example/a", "response", payload=io.BytesIO(b"<html><body><p>a page</p></body></html>"),
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")))
    (tmp_path / "b.warc").write_bytes(text)
    with pytest.raises(ImportFormatError, match=r"b\.warc: not a readable WARC file: no WARC record header"):
        import_warc([good, tmp_path / "b.warc"], tmp_path / "out", progress=False)


def test_revisit_records_of_a_deduplicating_crawl_are_pages(tmp_path, capsys):
    """A crawl that deduplicates (wget --warc-dedup, Heritrix, Browsertrix) writes a revisit record
    in place of a response whose payload it stored before: two searches that show the same page,
    or a second crawl of the same pages. They were counted as "other records" and their pages
    left out without a word. A revisit of a response read in this run is a page with that
    response's bytes (once per URL); one whose response is in no WARC given is counted and said."""
    from hwnoise.cli import main

    first = b"<html><body><p>No book matches your search</p><p>Try other words</p></body></html>"
    digest = "sha1:" + __import__("base64").b32encode(__import__("hashlib").sha1(first).digest()).decode()
    html = [("Content-Type", "text/html; charset=utf-8")]

    def write(path: Path, records) -> None:
        with open(path, "wb") as fh:
            w = WARCWriter(fh, gzip=True)
            for rec in records:
                w.write_record(rec(w))

    def response(url: str, body: bytes):
        return lambda w: w.create_warc_record(url, "response", payload=io.BytesIO(body),
                                              http_headers=StatusAndHeaders("200 OK", html, protocol="HTTP/1.1"))

    def revisit(url: str, of: str, status: str = "200 OK", d: str = digest):
        return lambda w: w.create_revisit_record(url, d, of, "2024-01-01T00:00:00Z",
                                                 http_headers=StatusAndHeaders(status, html, protocol="HTTP/1.1"))

    shop = "https://shop.example/find"
    write(tmp_path / "1.warc.gz", [response(f"{shop}?q=zzz", first), revisit(f"{shop}?q=qqq", f"{shop}?q=zzz"),
                                   revisit(f"{shop}?q=gone", f"{shop}?q=zzz", status="404 Not Found")])
    write(tmp_path / "2.warc.gz", [revisit(f"{shop}?q=zzz", f"{shop}?q=zzz"),              # a second crawl
                                   revisit(f"{shop}?q=www", f"{shop}?q=www", d="sha1:AAAA")])  # its original: not given
    into = tmp_path / "out"
    assert main(["import", "warc", str(tmp_path / "1.warc.gz"), str(tmp_path / "2.warc.gz"), "--into", str(into),
                 "-q"]) == 0
    err = capsys.readouterr().err
    ds = Dataset(into / "shop.example")
    got = {p.url: p.read_html() for p in ds.pages()}
    assert got == {f"{shop}?q=zzz": first, f"{shop}?q=qqq": first}, err
    assert {"qqq", "zzz"} <= set(ds.query_terms())
    assert ("2 pages imported from 1 responses; skipped 1 not 200, 0 not HTML, 1 already imported" in err
            and "; 1 revisit record(s) left out: the response each repeats is in no WARC given" in err), err
    qqq = next(p for p in ds.pages() if p.url.endswith("qqq"))
    assert qqq.fetch["warc_revisit_of"] == digest
