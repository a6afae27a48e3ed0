"""``hwnoise extract``: the content text of pages, by a trained model or the shipped ``general``.

A batch tool: many pages, dataset folders, URLs (fetched as ``collect`` fetches), or one page on
standard input; plain text for one page, JSON lines ``{"page", "url", "text"}`` for several (or
with ``--jsonl``), or with ``--records`` one JSON line per data record; a progress bar on stderr;
``--workers`` processes.
``--warc`` reads every HTML response of WARC files.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import NamedTuple

from hwnoise.commands._types import charset_label


#: Said on stderr when pages gave no text: the usual cause, and what to do.
NO_TEXT_HINT = ("hwnoise: extract: a page that gives no text is a search that found nothing, or often a page "
                "built by its scripts, and "
                "hwnoise runs none (it reads <noscript>, as a browser without scripts would, and places "
                "what React and Marko stream out of order); save such pages from a browser after they loaded, or "
                "fetch the site's version for clients without scripts")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract", help="print the content text of pages, by a trained model (default: general)",
        description=(
            "Label each node of each page noise or content with a model and write the own text of "
            "the content nodes in document order. PAGES are HTML files (also gzip-compressed), "
            "folders of them (every .html/.htm/.xhtml file below, .gz too), dataset folders (every "
            "page, walked with the dataset's query and its stored features), http(s) URLs (fetched "
            "first, as 'hwnoise collect' fetches: see the fetching options), or '-' (one page on "
            "standard input). Without --model a model shipped with hwnoise is used, trained on every "
            "shared dataset: 'general', or with --records 'records' (the same with the "
            "record-structure features, trained to find data records). One page gives plain text; several, or --jsonl, give JSON "
            "lines {\"page\", \"url\", \"text\"}. A page that cannot be read or is not HTML is "
            "reported on stderr and skipped (exit status 1 at the end)."
        ),
    )
    p.add_argument("pages", metavar="PAGE", nargs="*",
                   help="HTML files, folders of them, dataset folders, http(s) URLs, or '-' (the "
                        "page's bytes on standard input)")
    p.add_argument("--warc", metavar="FILE", nargs="+",
                   help="instead of PAGES: every 200 HTML response of these WARC files, written as "
                        "JSON lines {url, warc, offset, text} on stdout")
    p.add_argument("--model", "-m", default=None,
                   help="the model: 'general' (the default, shipped), 'records' (shipped; the default "
                        "with --records), or the folder or model.json 'hwnoise train --out' wrote")
    p.add_argument("--query", help="the search terms that led to the pages (replaces the model's "
                                   "domain query, or the dataset's)")
    p.add_argument("--charset", type=charset_label, help="the charset the server declared (as the HTTP header would)")
    p.add_argument("-o", "--out", metavar="FILE", default=None,
                   help="write the text or JSON lines into FILE instead of standard output (as "
                        "FILE.part until the run ends: a stopped run keeps what it wrote there)")
    p.add_argument("--jsonl", action="store_true",
                   help="JSON lines {\"page\", \"url\", \"text\"} even for one page")
    p.add_argument("--markdown", action="store_true",
                   help="the text as Markdown (CommonMark with GitHub's tables): headings, list items, "
                        "quotes and tables as such, the other blocks paragraphs; with --jsonl and --warc "
                        "the \"text\" fields hold it. Without it: plain text laid out as a browser's innerText")
    p.add_argument("--workers", "-j", type=int, default=1, metavar="N",
                   help="processes to extract with (default 1; 0: one per core)")
    p.add_argument("--records", action="store_true",
                   help="write each page's data records instead, one JSON line a record: "
                        '{"page", "record", "xpath", "text", "fields": [{"xpath", "text"}]} '
                        '(and "url" when the page has one); default model: records. Records the page '
                        'holds but hides, alike to the shown ones (results paginated in the browser, '
                        'collapsed groups), come too, marked "hidden": true')
    p.add_argument("--shown-only", action="store_true",
                   help="with --records: only the records the page shows, none of those it hides")
    p.add_argument("--allow-pickle", action="store_true",
                   help="allow loading a pickled model (only for model files you trust)")
    from hwnoise.scheduler import add_argument

    add_argument(p, "extraction from many --warc files (one task per file)")
    from hwnoise.commands._fetch_options import add_fetch_arguments

    add_fetch_arguments(p.add_argument_group(
        "fetching URLs", "A PAGE that is an http(s) URL is fetched (GET) before the extraction, as 'hwnoise "
        "collect' fetches: robots.txt honoured, one request at a time per host, no private or loopback "
        "address unless allowed, only HTML kept; the charset the response declares is the page's. A "
        "URL that cannot be fetched is reported and skipped like an unreadable file."))
    p.set_defaults(func=run)


class Options(NamedTuple):
    """What each page of a run is extracted with (it travels to the workers with their pages)."""

    query: str | None = None
    charset: str | None = None
    records: str | None = None  # None: the content text; "all", or "shown" with --shown-only
    markdown: bool = False

    @classmethod
    def of(cls, args: argparse.Namespace) -> "Options":
        return cls(args.query, args.charset, ("shown" if args.shown_only else "all") if args.records else None,
                   args.markdown)


# -- the work units: (name, url, source) where source is a file, "-" bytes, or (dataset, page id) --

def _units(args: argparse.Namespace) -> list[tuple]:
    from hwnoise.dataset import Dataset
    from hwnoise.errors import HwnoiseError
    from hwnoise.pagefiles import PAGE_SUFFIXES, is_url, page_files

    units: list[tuple] = []
    fetched = _fetched([item for item in args.pages if is_url(item)], args)
    for item in args.pages:
        if item == "-":
            units.append(("-", "", ("stdin", sys.stdin.buffer.read())))
            continue
        if is_url(item):
            units.append(fetched.pop(0))
            continue
        path = Path(item)
        if path.is_dir() and (path / "dataset.json").exists():
            ds = Dataset(path)
            before = len(units)
            for page in ds.pages():
                units.append((page.id, page.url or "", ("page", str(ds.path), page.id)))
            if len(units) == before:  # said before the work, as for a folder without page files
                raise HwnoiseError(f"{path}: a dataset with no pages yet, nothing to extract ('hwnoise "
                                   "collect' or 'hwnoise import' its pages first)")
        elif path.is_dir():  # a folder of pages: every page file below it
            files = page_files(path, recursive=True)
            if not files:
                raise HwnoiseError(f"{path}: no page files in this folder (names ending "
                                   f"{', '.join(PAGE_SUFFIXES)}, or those + .gz) and no dataset.json; "
                                   "give HTML files, a folder of them, or a dataset folder")
            units.extend((str(f.relative_to(path)), "", ("file", str(f))) for f in files)
        else:
            units.append((path.name, "", ("file", str(path))))
    return units


def _fetched(urls: list[str], args: argparse.Namespace) -> list[tuple]:
    """The units of ``urls``, fetched now, in order, with one fetcher (its per-host delay and
    robots.txt shared): ``(url, final url, ("fetched", body, charset, error))``, ``body`` None
    and ``error`` the fetcher's message for a URL that gave no page."""
    if not urls:
        return []
    from hwnoise.commands._fetch_options import fetch_settings
    from hwnoise.forms.fetch import Fetcher, FetchError
    from hwnoise.progress import bar

    units = []
    with Fetcher(fetch_settings(args)) as fetcher, bar(total=len(urls), desc="fetch", unit="page") as pbar:
        for url in urls:
            try:
                got = fetcher.fetch(url)
            except FetchError as exc:
                units.append((url, url, ("fetched", None, None, f"{url}: {exc}" if url not in str(exc) else str(exc))))
            else:
                units.append((url, got.final_url, ("fetched", got.body, got.http_charset, None)))
            pbar.update(1)
    return units


_MODEL = None
_CACHE = None


def _init(model_path: str, allow_pickle: bool) -> None:
    global _MODEL, _CACHE
    from hwnoise.extractors.model import load_model
    from hwnoise.features.assembly import FeatureCache

    _MODEL = load_model(model_path, allow_pickle=allow_pickle)
    _CACHE = FeatureCache()


def _page_bytes(src: tuple) -> bytes:
    """The bytes of a file or standard-input unit; a HwnoiseError when unreadable or not HTML."""
    from hwnoise.decode import require_html
    from hwnoise.pagefiles import read_page_file

    if src[0] == "stdin":
        return require_html(src[1], "standard input")
    if src[0] == "fetched":
        from hwnoise.errors import HwnoiseError

        if src[3] is not None:
            raise HwnoiseError(src[3])
        return src[1]  # the fetcher kept HTML only
    return require_html(read_page_file(src[1]), src[1])


def _one(unit: tuple, opts: Options) -> tuple[str, str, "str | list[dict] | None", str | None, list]:
    """``(name, url, out, error, missing)`` for one unit (run in a worker or in-process): ``out``
    is the page's content text, or with ``opts.records`` its records as ``record_json`` dicts."""
    from hwnoise.decode import SNIFF_PREFIX, require_html
    from hwnoise.errors import HwnoiseError
    from hwnoise.extractors.model import extract_html, extract_page, page_predictions, records_html
    from hwnoise.extractors.records import records_json

    name, url, src = unit
    query, charset, records, markdown = opts
    try:
        if src[0] == "page":
            from hwnoise.dataset import Dataset

            page = Dataset(src[1]).page(src[2])
            try:  # skipped as the features stage skips it, not walked into a page of no text
                with open(page.html_path, "rb") as fh:  # the prefix sniffing reads, not the page twice
                    require_html(fh.read(SNIFF_PREFIX), str(page.html_path))
            except HwnoiseError as exc:
                return name, url, None, str(exc), []
            if not records:
                return name, url, extract_page(_MODEL, page, _CACHE, query=query, markdown=markdown), None, []
            walk, labels, proba, recs = page_predictions(_MODEL, page, _CACHE, query, proba=True, records=True)
            return name, url, records_json(name, page.read_html(), walk, labels, proba,
                                           http_charset=page.http_charset, records=recs,
                                           hidden=records != "shown"), None, []
        try:
            data = _page_bytes(src)
        except HwnoiseError as exc:
            return name, url, None, str(exc), []
        if src[0] == "fetched" and not charset:  # what the response declared, unless --charset says
            charset = src[2]
        if not records:
            text, missing = extract_html(_MODEL, data, http_charset=charset, query=query, markdown=markdown)
            return name, url, text, None, missing
        found, missing = records_html(_MODEL, data, http_charset=charset, query=query, page=name,
                                      hidden=records != "shown")
        return name, url, found, None, missing
    except HwnoiseError:
        raise
    except Exception as exc:  # noqa: BLE001 - one page failing never stops the batch
        return name, url, None, f"{name}: {type(exc).__name__}: {exc}"[:300], []


def run(args: argparse.Namespace) -> int:
    from hwnoise.scheduler import no_idle_threads

    no_idle_threads()
    from hwnoise.errors import HwnoiseError
    from hwnoise.outputs import output_stream
    from hwnoise.progress import bar, info

    _check_args(args)
    args.model_path = _model_path(args)
    args.model = args.model or ("records" if args.records else "general")
    if args.warc:
        return _extract_warc(args)
    _init(args.model_path, args.allow_pickle)
    units = _units(args)
    _refuse_out_among_inputs(args.out, [(name, src[1]) for name, _, src in units if src[0] == "file"])
    jsonl = args.jsonl or len(units) != 1
    workers = (os.cpu_count() or 1) if args.workers == 0 else args.workers
    workers = max(1, min(workers, len(units)))
    tally = {"failed": 0, "records": 0, "hidden": 0, "empty": 0}
    missing_seen: set[str] = set()
    with output_stream(args.out) as out, bar(total=len(units), desc="extract", unit="page") as pbar, \
            _results(units, args, workers) as results:
        for name, url, text, error, missing in results:
            pbar.update(1)
            if error is not None:
                if len(units) == 1:
                    raise HwnoiseError(error)
                tally["failed"] += 1
                info(f"hwnoise: extract: skipped {error}")
                continue
            missing_seen.update(missing)
            _write(out, args, jsonl, name, url, text, tally)
    _summary(args, len(units), tally, missing_seen)
    return 1 if tally["failed"] else 0


def _model_path(args: argparse.Namespace) -> str:
    """What to load: the model ``--model`` names, or without it the shipped model's own file
    (``general``, or ``records`` with --records), never a file or folder of that name that the
    current folder happens to hold."""
    if args.model:
        return args.model
    from hwnoise.training.model import shipped_model_path

    return str(shipped_model_path("records" if args.records else "general"))


def _check_args(args: argparse.Namespace) -> None:
    """The options' combinations that cannot be run, each one clear line."""
    from hwnoise.errors import HwnoiseError

    if args.shown_only and not args.records:
        raise HwnoiseError("--shown-only goes with --records (it leaves out the records a page hides)")
    if args.markdown and args.records:
        raise HwnoiseError("--markdown is for the content text; --records writes JSON lines of records")
    if args.warc and args.pages:
        raise HwnoiseError("give either PAGES or --warc FILE, not both")
    if not args.warc and not args.pages:
        raise HwnoiseError("nothing to extract: give PAGE.html files, dataset folders, http(s) URLs, "
                           "'-' for standard input, or --warc FILE")
    if args.pages.count("-") > 1:  # standard input holds one page: a second '-' would read nothing
        raise HwnoiseError(f"'-' (the page on standard input) is given {args.pages.count('-')} times; give it once")
    datasets = [p for p in args.pages if p != "-" and (Path(p) / "dataset.json").is_file()]
    if args.charset and datasets:  # a dataset's page is read with its own (journal.jsonl): dropped
        raise HwnoiseError(f"--charset goes with page files, '-' and --warc, not with dataset folders "
                           f"({datasets[0]}): a dataset's pages are read with the charset each was sent with")
    if not args.warc and args.workers < 0:
        raise HwnoiseError(f"--workers must be 0 (one per core) or more, not {args.workers}")
    if args.out:
        from hwnoise.outputs import check_out_file

        check_out_file(args.out, "-o/--out")  # before the work, not after it
    if args.query is not None:
        from hwnoise.text import tokenize

        if not tokenize(args.query):  # it replaces the model's (or the dataset's) query with none
            from hwnoise.progress import info

            info("hwnoise: warning: --query gives no words: QueryScore and matches will be zero on every "
                 "node; give the search terms, e.g. --query \"nome aprovado\", or leave --query out for "
                 "the model's domain query (a dataset's pages: the dataset's)")


def _refuse_out_among_inputs(out: str | None, inputs: list[tuple[str, str]]) -> None:
    """One line, before the work, when ``-o FILE`` is one of the files to read (``inputs``: name
    and path): the text was renamed over the page (or WARC) it came from, and the page was lost."""
    from hwnoise.errors import HwnoiseError

    if not out:
        return
    try:
        st = os.stat(out)
    except OSError:  # no such file yet: none of the inputs
        return
    for name, path in inputs:
        try:
            other = os.stat(path)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            raise HwnoiseError(f"-o/--out {out}: is one of the files to extract from ({name}), which the "
                               "output would replace; give another file")


@contextlib.contextmanager
def _results(units: list, args: argparse.Namespace, workers: int):
    """``_one``'s results in the units' order: here, or in ``workers`` processes."""
    opts = Options.of(args)
    if workers == 1:
        yield (_one(u, opts) for u in units)
        return
    from hwnoise.scheduler import pool_imap

    size = max(1, min(16, len(units) // (4 * workers) or 1))
    chunks = [(units[k:k + size], opts) for k in range(0, len(units), size)]
    done = pool_imap(_many, chunks, workers=workers, window=4 * workers, alone=_units_alone, lost=_unit_lost,
                     initializer=_init, initargs=(args.model_path, args.allow_pickle))
    try:
        yield (result for results in done for result in results)
    finally:
        done.close()  # its pool shut down now, on an error or an interrupt too


def _many(units: list, opts: Options) -> list[tuple]:
    """``_one`` over a few units (one task of the local pool)."""
    return [_one(u, opts) for u in units]


def _units_alone(chunk: tuple) -> list[tuple]:
    """A task of ``_many`` whose worker died, as one task a unit."""
    units, *rest = chunk
    return [([u], *rest) for u in units]


def _unit_lost(piece: tuple, why: str) -> list[tuple]:
    """The result of a page whose extraction kills its process on its own: a skipped page."""
    name, url, _src = piece[0][0]
    return [(name, url, None, f"{name}: the process extracting it {why} (the page alone, after a worker "
                              "of the pool died)", [])]


def _write(out, args: argparse.Namespace, jsonl: bool, name: str, url: str, text, tally: dict) -> None:
    """One page's output on ``out``: its records as JSON lines, or its text (a JSON line, or as it is)."""
    from hwnoise.outputs import json_line

    if args.records:
        tally["records"] += len(text)
        tally["hidden"] += _hidden(text)
        for rec in text:
            out.write(json_line({**rec, "url": url} if url else rec) + "\n")
    elif jsonl:
        out.write(json_line({"page": name, "url": url, "text": text}) + "\n")
    else:
        out.write(text + ("\n" if text and not text.endswith("\n") else ""))
    if not args.records and not text.strip():
        tally["empty"] += 1
    out.flush()


def _summary(args: argparse.Namespace, n_units: int, tally: dict, missing_seen: set[str]) -> None:
    """The run's last lines on stderr."""
    from hwnoise.progress import info

    failed = tally["failed"]
    _warn_missing(missing_seen)
    if args.records:
        info(f"hwnoise extract --records: {_records_found(tally['records'], tally['hidden'])} in "
             f"{n_units - failed} page(s)" + (f", {failed} skipped" if failed else "") + f" (model {args.model})")
    elif n_units > 1 or failed:
        info(f"hwnoise extract: {n_units - failed} page(s) extracted, {failed} skipped"
             + (f", {tally['empty']} with no text" if tally["empty"] else ""))
    if tally["empty"]:
        info(NO_TEXT_HINT)


def _warn_missing(missing_seen: set[str]) -> None:
    """Name the model's features the pages could not give (taken as missing values)."""
    from hwnoise.features.columns import needs_dataset_features
    from hwnoise.progress import info

    dataset_level = sorted(f for f in missing_seen if needs_dataset_features([f]))
    unknown = sorted(missing_seen - set(dataset_level))
    if dataset_level:
        info(f"hwnoise: extract: warning: the model's feature(s) {', '.join(dataset_level)} need a "
             "dataset (e.g. sitelevel): taken as missing on bare pages; extract from the dataset "
             "folder to use them")
    if unknown:
        info(f"hwnoise: extract: warning: the model's feature(s) {', '.join(map(repr, unknown))} are none hwnoise "
             "computes from a page (a model trained on another tool's ARFF file?): taken as missing")


def _hidden(records: list[dict]) -> int:
    """How many of a page's records (``records_json``'s dicts) its page hides."""
    return sum(1 for rec in records if rec.get("hidden"))


def _records_found(n: int, hidden: int) -> str:
    """The summary's count of records: "N records", and how many of them the pages hide."""
    return f"{n} records" + (f" ({hidden} of them hidden by their pages)" if hidden else "")


def _warc_lines(path: str, model, opts: Options) -> tuple[list[str], dict, set[str]]:
    """The JSON lines of one WARC file, the counts of what was read and the model features its
    pages could not give (one scheduler task): one line a response with its text, or with
    ``opts.records`` one a data record of each response."""
    from hwnoise.extractors.model import extract_html, records_html
    from hwnoise.features.importers.warc import html_responses
    from hwnoise.outputs import json_line

    counts = {"records": 0, "responses": 0, "not_response": 0, "skipped_status": 0, "skipped_type": 0,
              "skipped_url": 0, "pages": 0, "data_records": 0, "hidden_records": 0}
    lines: list[str] = []
    missing_seen: set[str] = set()
    query, charset, records, markdown = opts
    for rec, payload in html_responses(Path(path), counts):
        counts["pages"] += 1
        enc = charset or rec["http_charset"]
        where = {"url": rec["url"], "warc": rec["warc"], "offset": rec["warc_offset"]}
        if records:
            found, missing = records_html(model, payload, http_charset=enc, query=query, page=rec["url"],
                                          hidden=records != "shown")
            counts["data_records"] += len(found)
            counts["hidden_records"] += _hidden(found)
            lines.extend(json_line({**where, **r}) for r in found)
        else:
            text, missing = extract_html(model, payload, http_charset=enc, query=query, markdown=markdown)
            lines.append(json_line({**where, "text": text}))
        missing_seen.update(missing)
    return lines, counts, missing_seen


def _extract_warc(args: argparse.Namespace) -> int:
    """Every 200 HTML response of the WARC files, one JSON line each, in file order."""
    from hwnoise.extractors.model import load_model
    from hwnoise.features.importers.warc import warc_files
    from hwnoise.outputs import output_stream
    from hwnoise.progress import info
    from hwnoise.scheduler import Scheduler, for_workers

    model = load_model(args.model_path, allow_pickle=args.allow_pickle)
    spec = getattr(args, "scheduler", "local") or "local"
    files = [str(p) for p in for_workers(spec, warc_files(args.warc))]
    _refuse_out_among_inputs(args.out, [(f, f) for f in files])
    total: dict[str, int] = {}

    def emit(_i: int, result: tuple) -> None:
        for k, v in result[1].items():
            total[k] = total.get(k, 0) + v

    with Scheduler(spec, sees=files) as sched:
        handle = sched.share(model) if len(files) > 1 else model
        results = sched.map(_warc_lines, files, handle, Options.of(args),
                            on_result=emit, small=len(files) < 2, desc="extract", unit="file")
    missing_seen: set[str] = set()
    with output_stream(args.out) as out:
        for lines, _, missing in results:
            missing_seen.update(missing)
            for line in lines:
                out.write(line + "\n")
        out.flush()
    _warn_missing(missing_seen)
    found = (_records_found(total.get("data_records", 0), total.get("hidden_records", 0)) + " in ") \
        if args.records else ""
    info(f"hwnoise extract: {found}{total.get('pages', 0)} pages from {total.get('responses', 0)} responses "
         f"(skipped {total.get('skipped_status', 0)} not 200, {total.get('skipped_type', 0)} not HTML"
         + (f"; {total['truncated']} file(s) cut short inside a record" if total.get("truncated") else "") + ")")
    return 0
