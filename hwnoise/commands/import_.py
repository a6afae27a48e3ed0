"""``hwnoise import FORMAT SRC --into DIR``: public datasets into hwnoise dataset folders."""
from __future__ import annotations

import argparse

from hwnoise.commands._types import number

#: Kept here so that ``--help`` does not import the importers (lxml) just to list formats.
_FORMATS = ["big9", "cleaneval", "dragnet", "l3s", "readability", "wcxb", "swde", "plain", "warc",
            "nexteval"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import", help="turn a public dataset (big9, cleaneval, ...) into hwnoise dataset folders",
        description=(
            "Read a dataset in its upstream layout (as its publishers ship it; README.md's "
            "Commands section lists what each importer reads) and "
            "write hwnoise dataset folders under --into: big9 one per site-year, swde one per "
            "site, wcxb one per page type, the others one. Pages are copied as they are, gold "
            "text is taken as DESIGN.md says, page IDs are stable (re-importing duplicates "
            "nothing). 'plain' reads a folder of html/NAME.html with gold/NAME.txt, and optionally "
            "records/NAME.json (gold records as XPaths, node gold) and query/NAME.txt (the search "
            "terms that found the page). 'warc' reads "
            "WARC files (many SRC; gzip or not): one folder per site, each 200 HTML response a page, "
            "its URL's query string the submission's fields. Prints the dataset folders written, "
            "one a line."
        ),
    )
    p.add_argument("format", choices=_FORMATS, metavar="FORMAT", help=f"one of: {', '.join(_FORMATS)}")
    p.add_argument("src", metavar="SRC", nargs="+",
                   help="the dataset's folder as its publishers ship it, e.g. a download of big9 "
                        "(for warc: WARC files or folders)")
    p.add_argument("--into", required=True, metavar="DIR", help="folder to write the dataset folders in")
    p.add_argument("--limit", type=number(int, 1, "give 1 or more pages"), default=None, metavar="N",
                   help="import only the first N pages")
    p.add_argument("--query", default=None, metavar="TERMS",
                   help="the search terms that found the pages: the query of every page imported "
                        "that has none of its own ('plain' reads one per page from query/NAME.txt)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import time

    from hwnoise.features.importers import import_dataset
    from hwnoise.outputs import check_out_dir
    from hwnoise.progress import info

    check_out_dir(args.into, "--into")
    _refuse_dataset_folder(args.into)
    start = time.perf_counter()
    if args.format == "warc":
        from hwnoise.features.importers.warc import import_warc

        paths, c = import_warc(args.src, args.into, limit=args.limit, progress=not args.quiet,
                                query=args.query)
        info(f"hwnoise import warc: {c['imported']} pages imported from {c['responses']} responses; skipped "
             f"{c['skipped_status']} not 200, {c['skipped_type']} not HTML, {c['duplicates']} already "
             f"imported, {c['not_response']} other records"
             + (f"; {c['truncated']} file(s) cut short inside a record (said above)" if c.get("truncated") else "")
             + (f"; {c['revisits_unresolved']} revisit record(s) left out: the response each repeats is in "
                "no WARC given (a deduplicating crawl's: give its earlier WARCs too, before these)"
                if c.get("revisits_unresolved") else ""))
    else:
        if len(args.src) != 1:
            from hwnoise.errors import HwnoiseError

            raise HwnoiseError(f"import {args.format}: give one SRC folder, not {len(args.src)}")
        paths = import_dataset(args.format, args.src[0], args.into, limit=args.limit, progress=not args.quiet,
                               query=args.query)
    pages = gold = 0
    problems: dict[str, int] = {}
    from hwnoise.dataset import Dataset
    from hwnoise.features.importers import PROBLEMS

    for path in paths:
        print(path, flush=True)
        ds = Dataset(path)
        if not ds.query_terms():
            info(f"hwnoise: warning: {ds.query_path} has no terms (the source gives no query): "
                 "QueryScore and matches will be zero on every node; import again with --query "
                 "\"the search terms\", or write the form's labels and values there as "
                 '[{"term": ..., "kind": ...}] before \'hwnoise features\'')
        counts = json.loads((path / "dataset.json").read_text(encoding="utf-8")).get("counts", {})
        pages += counts.get("pages", 0)
        gold += counts.get("gold", 0)
        for kind in PROBLEMS:
            problems[kind] = problems.get(kind, 0) + counts.get(kind, 0)
    said = "".join(f"; {n} {PROBLEMS[kind]} (said above)" for kind, n in problems.items() if n)
    info(f"hwnoise import {args.format}: {len(paths)} dataset folder(s), {pages} pages, "
         f"{gold} with gold, in {time.perf_counter() - start:.1f} s{said}")
    if not paths:  # a script's next step ('hwnoise features DIR') would find nothing: a failure
        from hwnoise.errors import HwnoiseError

        raise HwnoiseError(f"import {args.format}: nothing imported from {', '.join(args.src)}: "
                           + _NOTHING.get(args.format, "no page that is HTML (the lines above say why)"))
    return 0


def _refuse_dataset_folder(into: str) -> None:
    """Refuse ``--into`` a dataset folder (the one an import printed, given to add to it): the
    import wrote a second dataset folder inside it (``DATASET/NAME``), which no stage reads as
    the first's pages."""
    from pathlib import Path

    from hwnoise.errors import HwnoiseError

    p = Path(into)
    if (p / "dataset.json").is_file():
        raise HwnoiseError(f"--into {p}: is a dataset folder (it holds dataset.json); --into is the folder the "
                           f"dataset folders go in: give {p.parent} to import into {p} again (the import "
                           "writes DIR/NAME)")


#: What an import that wrote no dataset folder found, by format (the others: no page at all).
_NOTHING = {
    "plain": "no page (html/NAME.html, .htm, .xhtml, each also .gz) that is HTML",
    "warc": "no response of status 200 that is HTML (the counts above)",
}
