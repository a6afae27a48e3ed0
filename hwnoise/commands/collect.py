"""``hwnoise collect``: fetch the result pages of form submissions into a dataset folder."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hwnoise.commands._fetch_options import add_fetch_arguments, allowed_networks
from hwnoise.commands._types import number

if TYPE_CHECKING:
    from hwnoise.dataset import Dataset

EPILOG = """\
examples:
  hwnoise collect urls.txt --into books            # one GET URL a line (query strings = fields)
  hwnoise collect posts.jsonl --into books         # {"method": "POST", "action": ..., "fields": ...}
  hwnoise collect session.har --into books         # a browser's HAR export (pages only)
  hwnoise collect --form https://example.org/search --values values.csv --into books
  hwnoise collect urls.txt --into books --retry-failed   # resume, and retry what failed

A killed run resumes where it stopped: rerun the same command. Exit status 1 when no page
could be fetched. Pages saved already (page.html) are no SUBMISSIONS: put them in
SRC/html/NAME.html and 'hwnoise import plain SRC --into DIR' makes a dataset of them.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "collect", help="fetch the result pages of form submissions into a dataset",
        description=(
            "Fetch the result page of every form submission (GET URLs, JSON lines, a HAR file, or "
            "a form page filled with value sets) politely and safely, and write the dataset folder: "
            "pages/ID.html, submissions.jsonl, journal.jsonl (one line per fetch) and query.json "
            "(the domain query). robots.txt is honoured, one request at a time per host, only "
            "http/https, and no private, loopback or link-local address unless --allow-private."),
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("submissions", nargs="?", metavar="SUBMISSIONS",
                   help="file of submissions: GET URLs, JSON lines or HAR (not with --form); "
                        "not a saved page: pages saved already are imported with 'hwnoise import plain'")
    p.add_argument("--into", required=True, metavar="DATASET", help="dataset folder (created if missing)")
    p.add_argument("--format", default="auto", choices=["auto", "urls", "jsonl", "har"],
                   help="format of SUBMISSIONS (default: detected)")
    p.add_argument("--form", metavar="PAGE_URL", help="read the search form from this page (URL or file) ...")
    p.add_argument("--values", metavar="FILE", help="... and submit it once per value set in FILE "
                   "(JSON lines of {field: value}, or CSV with a header of field names or labels)")
    p.add_argument("--form-index", type=int, default=None,
                   help="which form of the page, 0 = the first (default: the one with the most fields)")
    add_fetch_arguments(p)
    p.add_argument("--retry-failed", action="store_true", help="fetch again what failed in earlier runs")
    p.add_argument("--workers", type=number(int, 1, "must be 1 or more"), default=4, help="hosts fetched at once (default 4)")
    p.add_argument("--warc", metavar="FILE.warc.gz",
                   help="also write what is fetched to this WARC/1.1 file (appended; safe to resume)")
    p.add_argument("--probes", type=number(int, 0, "must be 0 or more"), default=2, metavar="N",
                   help="after the pages, submit each form N times with made-up words in its text "
                        "fields and keep the answers in probes/ (what the site shows when nothing "
                        "matches; 'hwnoise label --auto' labels pages like them as without records). "
                        "Default 2; 0: none")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``hwnoise collect``: the submissions, the dataset, the fetches; exit 1 when no page could be fetched."""
    from hwnoise.progress import info

    allow = allowed_networks(args)
    subs, source, carried = _submissions(args, allow)
    ds = _open_dataset(args.into, source)
    summary = _fetch(args, subs, ds, allow, carried)
    if args.quiet:
        info(f"collect: {summary['fetched']} fetched, {summary['failed']} failed, {summary['skipped']} skipped")
    return _exit_status(ds, subs)


def _submissions(args: argparse.Namespace, allow: bool | list[str]) -> tuple[list[dict], str, dict]:
    """Read step: the submissions (from SUBMISSIONS, or the form and its value sets), their source
    and what fetching the form page left for the submissions' fetches (``collect``'s ``cookies``
    and ``robots_rules``: the form page's cookies, the robots.txt already read)."""
    from hwnoise.errors import HwnoiseError

    carried: dict = {}
    if args.form or args.values:
        (subs, carried), source = _form_submissions(args, allow), "form"
    elif args.submissions:
        from hwnoise.forms.submissions import read_submissions

        subs = read_submissions(args.submissions, args.format)
        source = args.format if args.format != "auto" else "submissions"
    else:
        raise HwnoiseError("nothing to collect: give a SUBMISSIONS file, or --form PAGE_URL --values FILE")
    if not subs:
        raise HwnoiseError(f"{args.submissions or args.values}: no submissions found")
    return subs, source, carried


def _form_submissions(args: argparse.Namespace, allow: bool | list[str]) -> tuple[list[dict], dict]:
    """Read step for --form/--values: the form page filled with each value set (unknown names warned
    of), and the cookies the form page set and the robots.txt read to fetch it (``collect``'s keywords)."""
    from hwnoise.errors import HwnoiseError
    from hwnoise.progress import info

    if not (args.form and args.values):
        raise HwnoiseError("--form and --values go together: the form page and the value sets to submit")
    if args.submissions:
        raise HwnoiseError("give either SUBMISSIONS or --form/--values, not both")
    from hwnoise.forms.formpage import (read_form, read_values, submissions_from_form, unchoosable_values,
                                        unknown_fields)

    form = read_form(args.form, form_index=args.form_index, allow_private=allow or False,
                     user_agent=args.user_agent, timeout=tuple(args.timeout), robots=not args.no_robots,
                     max_bytes=args.max_bytes, page_timeout=args.page_timeout, retries=args.retries,
                     max_retry_after=args.max_retry_after)
    values = read_values(args.values)
    unchoosable = unchoosable_values(form, values)
    if unchoosable:  # a browser cannot send it; the site may answer it with an error page or everything
        more = f" (and {len(unchoosable) - 1} more)" if len(unchoosable) > 1 else ""
        hint = "use an option's value or its text" if "is none of its options" in unchoosable[0] else \
            "leave it out of the value sets"
        raise HwnoiseError(f"{args.values}: {unchoosable[0]}{more}; {hint}")
    unknown = unknown_fields(form, values)
    if unknown:
        info(f"hwnoise: warning: {args.values} names {', '.join(map(repr, unknown))}, which the form has "
             f"no field of (by name or label; its fields: {', '.join(repr(f.name) for f in form.fields)}); "
             "sent as given: check the spelling")
    return submissions_from_form(form, values), {"cookies": form.cookies, "robots_rules": form.robots_rules}


def _open_dataset(into: str, source: str) -> Dataset:
    """Dataset step: an existing dataset reopened untouched (a rerun changes nothing), else a new one."""
    from pathlib import Path

    from hwnoise.dataset import Dataset

    return Dataset(into) if (Path(into) / "dataset.json").is_file() else Dataset.create(into, source=source)


def _fetch(args: argparse.Namespace, subs: list[dict], ds: Dataset, allow: bool | list[str],
           carried: dict) -> dict:
    """Fetch step: every submission into the dataset, with the command's options (and the form
    page's cookies and robots.txt, ``carried``); the summary counts."""
    from hwnoise.forms.collect import collect

    return collect(subs, ds, allow_private=allow or False, delay=args.delay, user_agent=args.user_agent,
                   timeout=tuple(args.timeout), max_bytes=args.max_bytes, retries=args.retries,
                   page_timeout=args.page_timeout, max_retry_after=args.max_retry_after,
                   retry_failed=args.retry_failed, workers=args.workers, robots=not args.no_robots,
                   progress=not args.quiet, warc=args.warc, probes=args.probes, **carried)


def _exit_status(ds: Dataset, subs: list[dict]) -> int:
    """Exit step: 0 when at least one submission's page is fetched (now or before), else 1 and where to look."""
    from hwnoise.dataset import page_id, safe_id
    from hwnoise.forms.collect import is_done
    from hwnoise.progress import info

    journal = ds.journal()
    ids = {safe_id(s["id"]) if s.get("id") else page_id(s["method"], s.get("action") or s["url"], s["fields"])
           for s in subs}
    if not any(is_done(ds, journal.get(i)) for i in ids):
        info(f"hwnoise: nothing could be fetched; the reasons are in {ds.journal_path}")
        return 1
    return 0
