"""The collector: fetch every submission's result page into a dataset, losing nothing.

Each fetch is written on its own: the page (atomically) and then its journal line, so a run
killed at any moment leaves a dataset the next run completes: a submission whose last journal
line is a success with its page on disk (same size) is never fetched again, a page without
its journal line is fetched again and replaced (same ID, so nothing is duplicated), and a
failure stays in the journal and is retried only when asked (``retry_failed``).

Hosts are fetched in parallel (``workers``), one request at a time per host.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any
from urllib.parse import urlsplit

import requests

from hwnoise.dataset import Dataset, kept_without_a_page, now_iso, page_id
from hwnoise.errors import HwnoiseError, counted
from hwnoise.progress import bar, info

from .fetch import DEFAULT_MAX_BYTES, DEFAULT_MAX_RETRY_AFTER, DEFAULT_PAGE_TIMEOUT, Fetcher, FetchError, FetchSettings
from .query import write_domain_query
from .submissions import make_submission

#: the keys of a journal line, in the order they are written
JOURNAL_KEYS = ("submission", "url", "method", "fields", "final_url", "redirects", "status", "headers",
                "http_charset", "encoding", "encoding_source", "bytes", "sha256", "attempts",
                "started", "finished", "error")


def _encoding(body: bytes, http_charset: str | None) -> tuple[str | None, str | None]:
    try:
        from hwnoise.decode import sniff_encoding
    except ImportError:  # pragma: no cover - decode.py is a base module
        return http_charset, "http" if http_charset else None
    return sniff_encoding(body, http_charset)


def is_done(dataset: Dataset, record: dict | None) -> bool:
    """Whether a journal line is a success whose page is on disk with the size it records."""
    if not record or record.get("error") or not record.get("sha256") or kept_without_a_page(record):
        return False
    path = dataset.page_path(record["submission"])
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return False
    return record.get("bytes") is None or size == record["bytes"]


class _Writer:
    """Writes a page and then its journal line, one fetch at a time (threads share it)."""

    def __init__(self, dataset: Dataset, warc=None):
        self.dataset = dataset
        self.warc = warc  # a forms.warc.WarcLog, or None
        self.lock = threading.Lock()

    def write(self, sub: dict, record: dict, body: bytes | None) -> None:
        with self.lock:
            if body is not None:
                self.dataset.write_page(sub["id"], body)
            self.dataset.append_journal(record)
            if self.warc is not None and body is not None:
                self.warc.add(record, body, sub)


def repair_torn_tail(path) -> bool:
    """Cut a torn last line (a run killed mid-append) so that new lines start on their own;
    the lost record's page is simply fetched again. Returns whether anything was cut."""
    try:
        with open(path, "rb+") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            if size == 0:
                return False
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return False
            start = size
            while start > 0:  # find the last newline, reading backwards in blocks
                block = min(1 << 16, start)
                start -= block
                fh.seek(start)
                cut = fh.read(block).rfind(b"\n")
                if cut >= 0:
                    break
            keep = start + cut + 1 if start >= 0 and cut >= 0 else 0
            fh.seek(keep)
            try:  # a whole record that only lacks its newline is kept
                json.loads(fh.read().decode("utf-8"))
                fh.seek(0, 2)
                fh.write(b"\n")
                return False
            except ValueError:
                fh.truncate(keep)
                return True
    except FileNotFoundError:
        return False


def fetch_one(fetcher: Fetcher, sub: dict) -> tuple[dict, bytes | None]:
    """Fetch one submission; return its journal line and the body (None on failure)."""
    started = now_iso()
    record: dict[str, Any] = {"submission": sub["id"], "url": sub["url"], "method": sub.get("method", "GET"),
                              "fields": sub.get("fields") or []}
    try:
        res = fetcher.fetch(sub["url"], sub.get("method", "GET"), sub.get("fields"), sub.get("enctype"),
                            sub.get("charset"))
    except FetchError as exc:
        record.update(final_url=exc.final_url, redirects=exc.redirects, status=exc.status,
                      headers=exc.headers, http_charset=None, encoding=None, encoding_source=None,
                      bytes=None, sha256=None, attempts=exc.attempts, started=started,
                      finished=now_iso(), error=str(exc))
        return {k: record.get(k) for k in JOURNAL_KEYS}, None
    except (requests.RequestException, ValueError, UnicodeError) as exc:
        # a URL requests cannot send (bad host, bad port...): kept as a failure, the crawl goes on
        record.update(started=started, finished=now_iso(), attempts=1,
                      error=f"{sub['url']}: cannot be fetched: {type(exc).__name__}: {exc}"[:500])
        return {k: record.get(k) for k in JOURNAL_KEYS}, None
    encoding, source = _encoding(res.body, res.http_charset)
    record.update(final_url=res.final_url, redirects=res.redirects, status=res.status, headers=res.headers,
                  http_charset=res.http_charset, encoding=encoding, encoding_source=source,
                  bytes=len(res.body), sha256=hashlib.sha256(res.body).hexdigest(), attempts=res.attempts,
                  started=started, finished=now_iso(), error=None)
    return {k: record.get(k) for k in JOURNAL_KEYS}, res.body


def _probe(fetcher: Fetcher, dataset: Dataset, subs: list[dict], per_action: int) -> int:
    """Fetch the probes of ``subs``' forms not fetched before; return how many were fetched."""
    from .probe import probe_submissions

    done = {rec["submission"] for rec, _ in dataset.probes()}
    fetched = 0
    for sub in probe_submissions(subs, per_action):
        sub["id"] = page_id(sub["method"], sub["url"], sub["fields"])
        if sub["id"] in done:
            continue
        record, body = fetch_one(fetcher, sub)
        dataset.write_probe(record, body)
        fetched += body is not None
    return fetched


def _normalized(sub: dict) -> dict:
    """A submission with its ``url`` (built from ``action`` and ``fields`` when missing)."""
    if sub.get("url"):
        return sub
    if not sub.get("action"):
        raise HwnoiseError(f"submission {sub.get('id', '')!r} has neither 'url' nor 'action'")
    built = make_submission(sub.get("method", "GET"), sub["action"], sub.get("fields") or [],
                            enctype=sub.get("enctype"), charset=sub.get("charset"))
    return {**sub, **built}


def collect(submissions: Iterable[dict], dataset: Dataset, *, allow_private: bool | Iterable[str] = False,
            delay: float = 1.0, user_agent: str | None = None, timeout: float | tuple[float, float] = (5, 30),
            max_bytes: int = DEFAULT_MAX_BYTES, retries: int = 3, backoff: float = 0.5,
            max_retry_after: float = DEFAULT_MAX_RETRY_AFTER, max_redirects: int = 10, retry_failed: bool = False, workers: int = 4, robots: bool = True,
            progress: bool = True, warc: str | None = None,
            page_timeout: float = DEFAULT_PAGE_TIMEOUT, probes: int = 2, cookies: Iterable | None = None,
            robots_rules: dict | None = None) -> dict:
    """Fetch the result page of every submission into ``dataset``; return
    ``{fetched, failed, skipped, failed_before}`` for this run.

    ``skipped`` counts submissions not fetched now: done before, or failed before and not
    retried (those are also counted in ``failed_before``). Writes the domain query at the end.
    ``warc``: also append what was fetched to this WARC file (see ``hwnoise.forms.warc``).
    ``page_timeout``: most seconds one response may take in all (a trickled body is cut and
    journaled as a failure). ``max_retry_after``: the longest Retry-After waited for (an answer
    asking longer is a failure). Submission ids that are not safe file names are stored under
    ``hwnoise.dataset.safe_id`` names (the given id kept as ``given_id``). ``probes``: after
    the pages, that many probes per form action (``hwnoise.forms.probe``: the site's answer
    to a search nothing matches), fetched once and kept in ``probes/``, never as pages.
    ``cookies``: sent as a browser would from the start (the form page's: ``Form.cookies``).
    ``robots_rules``: the robots.txt already read in this run (the form page's: ``Form.robots_rules``),
    not read again.
    """
    settings = FetchSettings(user_agent=user_agent, delay=delay, timeout=timeout, max_bytes=max_bytes,
                             page_timeout=page_timeout,
                             retries=retries, backoff=backoff, max_retry_after=max_retry_after,
                             max_redirects=max_redirects,
                             allow_private=allow_private, robots=robots)
    with _only_collect_of(dataset):
        return _run(submissions, dataset, settings, retry_failed=retry_failed, workers=workers, progress=progress,
                    warc=warc, probes=probes, cookies=cookies, robots_rules=robots_rules)


@contextlib.contextmanager
def _only_collect_of(dataset: Dataset) -> Iterator[None]:
    """Hold ``dataset``'s folder locked (an advisory ``flock`` on the folder itself: no file is
    written, so a rerun still changes nothing; released when the process ends, however it ends),
    or refuse: a second collect into the same folder at once fetched every page again, doubled
    the journal's lines and wrote each page's records twice into a shared WARC."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): no guard
        yield
        return
    fd = os.open(dataset.path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HwnoiseError(f"{dataset.path}: another 'hwnoise collect' is writing this dataset now; "
                               "wait for it to end (a rerun then resumes where it stopped)") from None
        yield
    finally:
        os.close(fd)


def _run(submissions: Iterable[dict], dataset: Dataset, settings: FetchSettings, *, retry_failed: bool,
         workers: int, progress: bool, warc: str | None, probes: int, cookies: Iterable | None,
         robots_rules: dict | None) -> dict:
    """``collect``'s run, the dataset locked: plan, fetch, probe, report."""
    warc_log = _warc_log(warc, settings) if warc else None  # first: a WARC refused leaves the dataset as it was
    with warc_log if warc_log is not None else contextlib.nullcontext():
        unique, pending, skipped, failed_before = _plan(submissions, dataset, retry_failed, progress)
        if warc_log is not None:
            warc_log.backfill(dataset, is_done)
        writer = _Writer(dataset, warc_log)
        stop = threading.Event()
        with Fetcher(settings, cookies=cookies, robots_rules=robots_rules) as fetcher:
            counts, errors = _fetch_all(fetcher, writer, pending, workers, stop, progress)
            probed = _probe(fetcher, dataset, unique, probes) if probes > 0 and not stop.is_set() else 0
    write_domain_query(dataset)
    summary = {"fetched": counts["fetched"], "failed": counts["failed"], "skipped": skipped,
               "failed_before": failed_before}
    if progress:
        _report(summary, probed, errors, dataset)
    return summary


def _plan(submissions: Iterable[dict], dataset: Dataset, retry_failed: bool,
          progress: bool) -> tuple[list[dict], list[dict], int, int]:
    """The run's submissions, added to the dataset (a torn last line of an interrupted run cut
    first): ``(unique, pending, skipped, failed_before)``, pending those neither done nor failed
    before (unless ``retry_failed``)."""
    for path in (dataset.submissions_path, dataset.journal_path):
        if repair_torn_tail(path):
            info(f"{path}: cut a torn last line left by an interrupted run")
    subs = [dataset.add_submission(_normalized(s)) for s in submissions]
    unique = list(OrderedDict((s["id"], s) for s in subs).values())
    mapped = [s for s in unique if "given_id" in s]
    if mapped and progress:
        info(f"hwnoise: collect: {len(mapped)} submission id(s) are not safe file names "
             f"(e.g. {str(mapped[0]['given_id'])[:60]!r}); their pages are stored as pages/SAFE_ID.html, "
             "the id given kept as given_id in submissions.jsonl")
    journal = dataset.journal()
    _drop_kept_without_a_page(dataset, unique, journal)
    pending, skipped, failed_before = [], 0, 0
    for sub in unique:
        rec = journal.get(sub["id"])
        if is_done(dataset, rec):
            skipped += 1
        elif rec and rec.get("error") and not retry_failed:
            skipped += 1
            failed_before += 1
        else:
            pending.append(sub)
    return unique, pending, skipped, failed_before


def _drop_kept_without_a_page(dataset: Dataset, subs: list[dict], journal: dict[str, dict]) -> None:
    """Remove the files an older run kept from answers without a whole page (``kept_without_a_page``),
    so that they are no pages while they are fetched again (and fail, said so)."""
    stale = [s for s in subs if kept_without_a_page(journal.get(s["id"]))]
    for sub in stale:
        dataset.page_path(sub["id"]).unlink(missing_ok=True)
    if stale:
        codes = sorted({journal[s["id"]]["status"] for s in stale})
        info(f"hwnoise: collect: {len(stale)} page(s) an earlier run kept from answers without a whole page "
             f"(HTTP {', '.join(map(str, codes))}; e.g. {stale[0]['url']}) are no pages: their files removed, "
             "fetched again")


def _warc_log(warc: str, settings: FetchSettings):
    """The WARC file to append to, locked for the run, its torn tail cut (the pages it lacks are
    written once the run's plan is made: ``WarcLog.backfill``)."""
    from .warc import WarcLog

    warc_log = WarcLog(warc, user_agent=settings.user_agent)
    if warc_log.cut:
        info(f"{warc}: cut {counted(warc_log.cut, 'byte')} of a record set torn by an interrupted run")
    return warc_log


def _fetch_all(fetcher: Fetcher, writer: _Writer, pending: list[dict], workers: int, stop: threading.Event,
               progress: bool) -> tuple[dict, list[str]]:
    """Fetch ``pending``: one thread per host (up to ``workers``), each host's pages in order at
    its delay; every page written as it comes. Returns the counts and the errors."""
    by_host: dict[str, list[dict]] = OrderedDict()
    for sub in pending:
        by_host.setdefault(urlsplit(sub["url"]).netloc.lower(), []).append(sub)
    counts = {"fetched": 0, "failed": 0}
    errors: list[str] = []
    lock = threading.Lock()
    pbar = bar(total=len(pending), desc="collect", unit="page") if progress and pending else None

    def run_host(items: list[dict]) -> None:
        for sub in items:
            if stop.is_set():
                return
            record, body = fetch_one(fetcher, sub)
            writer.write(sub, record, body)
            with lock:
                if record["error"]:
                    counts["failed"] += 1
                    errors.append(record["error"])
                else:
                    counts["fetched"] += 1
                if pbar is not None:
                    pbar.update(1)
                    pbar.set_postfix(fetched=counts["fetched"], failed=counts["failed"], refresh=False)

    try:
        if len(by_host) <= 1 or workers <= 1:
            for items in by_host.values():
                run_host(items)
        else:
            with ThreadPoolExecutor(max_workers=min(workers, len(by_host))) as pool:
                futures = [pool.submit(run_host, items) for items in by_host.values()]
                try:
                    for fut in as_completed(futures):
                        fut.result()
                except BaseException:
                    stop.set()
                    raise
    finally:
        if pbar is not None:
            pbar.close()
    return counts, errors


def _report(summary: dict, probed: int, errors: list[str], dataset: Dataset) -> None:
    """The run's summary on stderr: counts, probes, the first failures, what to rerun."""
    info(f"collect: {summary['fetched']} fetched, {summary['failed']} failed, {summary['skipped']} skipped "
         f"(already fetched or failed before) -> {dataset.path}")
    if probed:
        info(f"  {probed} probe(s) of a search nothing matches -> {dataset.path / 'probes'}")
    for err in errors[:5]:
        info(f"  failed: {err}")
    if len(errors) > 5:
        info(f"  ... and {counted(len(errors) - 5, 'more failure', 'more failures')} (see {dataset.journal_path})")
    if summary["failed_before"]:
        info(f"  {counted(summary['failed_before'], 'submission')} failed in an earlier run; rerun with --retry-failed "
             "to try them again")
