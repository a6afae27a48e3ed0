"""``hwnoise extract``: the content text of one page, by a trained model."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract", help="print the content text of a page, by a trained model",
        description=(
            "Walk PAGE.html, label each node noise or content with the model that 'hwnoise train' "
            "saved, and print the own text of the content nodes in document order. The model's "
            "domain query is used unless --query is given."
        ),
    )
    p.add_argument("page", metavar="PAGE.html", nargs="?",
                   help="the page (its bytes as received); '-' reads stdin")
    p.add_argument("--warc", metavar="FILE", nargs="+",
                   help="instead of PAGE.html: every 200 HTML response of these WARC files, written as "
                        "JSON lines {url, warc, offset, text} on stdout")
    p.add_argument("--model", "-m", required=True, help="the model file or the folder 'hwnoise train --out' wrote")
    p.add_argument("--query", help="the query that led to this page (replaces the model's domain query)")
    p.add_argument("--charset", help="the charset the server declared (as the HTTP header would)")
    p.add_argument("--records", action="store_true",
                   help="write the page's data records instead, one JSON line each: "
                        '{"page", "record", "xpath", "text", "fields": [{"xpath", "text"}]}')
    p.add_argument("--allow-pickle", action="store_true",
                   help="allow loading a pickled model (only for model files you trust)")
    from hwnoise.scheduler import add_argument

    add_argument(p, "extraction from many --warc files (one task per file)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.errors import HwnoiseError
    from hwnoise.extractors.model import extract_with_model, load_model

    if args.warc:
        if args.page:
            raise HwnoiseError("give either PAGE.html or --warc FILE, not both")
        return _extract_warc(args)
    if not args.page:
        raise HwnoiseError("nothing to extract: give PAGE.html (or '-' for stdin), or --warc FILE")
    if args.page == "-":
        data = sys.stdin.buffer.read()
    else:
        path = Path(args.page)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise HwnoiseError(f"{path}: cannot read the page: {exc.strerror}") from None
    from hwnoise.decode import sniff_html

    why = sniff_html(data)
    if why:
        raise HwnoiseError(f"{args.page if args.page != '-' else 'stdin'}: not HTML ({why}, whatever "
                           "its name says); give the page's HTML as the server sent it")
    model = load_model(args.model, allow_pickle=args.allow_pickle)
    if getattr(args, "records", False):
        return _records(model, data, args)
    text = extract_with_model(model, data, http_charset=args.charset, query=args.query)
    sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))
    return 0


def _records(model, data: bytes, args: argparse.Namespace) -> int:
    """``--records``: the model's content nodes grouped into records, JSON lines on stdout."""
    import json

    from hwnoise.extractors.model import label_with_model
    from hwnoise.extractors.records import page_records, record_json
    from hwnoise.progress import info

    walk, labels = label_with_model(model, data, http_charset=args.charset, query=args.query)
    name = "-" if args.page == "-" else Path(args.page).name
    records = page_records(data, walk, labels, http_charset=args.charset) if len(walk.rows) else []
    for k, rec in enumerate(records, 1):
        sys.stdout.write(json.dumps(record_json(name, k, rec), ensure_ascii=False) + "\n")
    info(f"hwnoise extract --records: {len(records)} records in {name}")
    return 0


def _warc_lines(path: str, model, charset: str | None, query: str | None) -> tuple[list[str], dict]:
    """The JSON lines of one WARC file, and the counts of what was read (one scheduler task)."""
    import json

    from hwnoise.extractors.model import extract_with_model
    from hwnoise.features.importers.warc import html_responses

    counts = {"records": 0, "responses": 0, "not_response": 0, "skipped_status": 0, "skipped_type": 0,
              "skipped_url": 0}
    lines = []
    for rec, payload in html_responses(Path(path), counts):
        text = extract_with_model(model, payload, http_charset=charset or rec["http_charset"], query=query)
        lines.append(json.dumps({"url": rec["url"], "warc": rec["warc"], "offset": rec["warc_offset"],
                                 "text": text}, ensure_ascii=False))
    return lines, counts


def _extract_warc(args: argparse.Namespace) -> int:
    """Every 200 HTML response of the WARC files, one JSON line each, in file order."""
    from hwnoise.extractors.model import load_model
    from hwnoise.features.importers.warc import warc_files
    from hwnoise.progress import info
    from hwnoise.scheduler import Scheduler

    model = load_model(args.model, allow_pickle=args.allow_pickle)
    files = [str(p) for p in warc_files(args.warc)]
    total: dict[str, int] = {}
    pages = 0

    def emit(_i: int, result: tuple) -> None:
        nonlocal pages
        lines, counts = result
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
        pages += len(lines)

    with Scheduler(getattr(args, "scheduler", "local") or "local") as sched:
        handle = sched.share(model) if len(files) > 1 else model
        results = sched.map(_warc_lines, files, handle, args.charset, args.query, on_result=emit,
                            small=len(files) < 2, desc="extract", unit="file")
    for lines, _ in results:
        for line in lines:
            sys.stdout.write(line + "\n")
    sys.stdout.flush()
    info(f"hwnoise extract: {pages} pages from {total.get('responses', 0)} responses (skipped "
         f"{total.get('skipped_status', 0)} not 200, {total.get('skipped_type', 0)} not HTML)")
    return 0
