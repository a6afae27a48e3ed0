"""``hwnoise features``: the feature rows of a dataset (to features.parquet) or of one page (CSV)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hwnoise.commands._types import charset_label, worker_count
from hwnoise.errors import HwnoiseError

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Dataset

#: Columns printed for one page, in this order (then the extended features and the own text).
PAGE_COLUMNS = ["xpath", "tag", "chars", "tags", "link_chars", "link_tags", "td", "ctd",
                "density_sum", "query_score", "matches", "distance"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "features",
        help="compute one row of features per DOM node (a dataset, or one page as CSV)",
        description=(
            "With dataset folders: walk every page, label its nodes from the gold text and write\n"
            "DATASET/features.parquet (one row per shown element; a failing page is reported and\n"
            "skipped), one dataset after the other. With one HTML file: print its rows as CSV on\n"
            "stdout, QueryScore and matches counted for the --query terms."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", metavar="DATASET|PAGE.html", nargs="+",
                   help="dataset folders (each gets its features.parquet, one after the other), or "
                        "one HTML file (.html.gz is read too)")
    p.add_argument("--workers", type=worker_count, default=None,
                   help="processes for a dataset with --scheduler local (default: this machine's cores)")
    p.add_argument("--query", action="append", default=[], metavar="TERMS",
                   help='query terms for one page, e.g. --query "nome aprovado" (words split by '
                        "the tokeniser; repeat the option to give a multi-word term as a phrase)")
    p.add_argument("--charset", type=charset_label, default=None, help="the page's HTTP charset, if known")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    from hwnoise.scheduler import add_argument

    add_argument(p, "the walk of a dataset's pages")
    p.set_defaults(func=run)


def _terms(queries: list[str]) -> list[str]:
    from hwnoise.text import tokenize

    terms: list[str] = []
    if len(queries) == 1:
        terms = tokenize(queries[0])
    else:
        terms = [q for q in queries if q.strip()]
    return terms


def run(args) -> int:
    from hwnoise.scheduler import no_idle_threads

    no_idle_threads()
    targets = [Path(t) for t in args.target]
    if len(targets) > 1 or targets[0].is_dir():
        return _datasets(targets, args)
    return _page(targets[0], args)


def _dataset(target: Path) -> Dataset:
    """The dataset folder ``target``, checked, with a warning when its query has no terms."""
    from hwnoise.dataset import Dataset
    from hwnoise.outputs import check_out_dir
    from hwnoise.progress import info

    if not target.is_dir():
        raise HwnoiseError(f"{target}: not a dataset folder (several targets must all be dataset folders; "
                           "one HTML file goes alone)")
    ds = Dataset(target)
    check_out_dir(ds.path, "DATASET (features.parquet goes there)")
    unfinished = ds.meta.get("import_unfinished")
    if isinstance(unfinished, dict):  # hwnoise.features.importers.mark_unfinished's
        info(f"hwnoise: warning: {ds.path}: its import was stopped before it finished (started "
             f"{unfinished.get('started')}): it holds the pages imported so far only; run "
             f"'{unfinished.get('rerun')}' again to import the rest (nothing is imported twice)")
    if not ds.query_terms():  # also checks query.json's shape before any page is walked
        info(f"hwnoise: warning: {ds.query_path} has no terms: QueryScore and matches will be "
             "zero on every node (write the form's labels and values there as "
             '[{"term": ..., "kind": ...}])')
    return ds


def _refuse_page_options(args) -> None:
    """--query and --charset are one page's: with dataset folders they were dropped without a word
    (the pages walked with the dataset's query.json and each page's own charset)."""
    given = [name for name, value in (("--query", args.query), ("--charset", args.charset)) if value]
    if given:
        raise HwnoiseError(f"{' and '.join(given)} go with one page (PAGE.html), not with dataset folders: "
                           "a dataset's pages are walked with its query.json (write the terms there) "
                           "and each with the charset it was sent with")


def _datasets(targets: list[Path], args) -> int:
    """``features.parquet`` of every dataset in ``targets``, one after the other."""
    from hwnoise.features.build import build_features

    from hwnoise.scheduler import for_workers

    spec = getattr(args, "scheduler", "local") or "local"
    datasets = [_dataset(t) for t in for_workers(spec, targets)]  # all checked before the first is walked
    _refuse_page_options(args)  # after: a folder that is no dataset is said to be none first
    if spec in ("local", "sync"):  # this machine's process pool (or none)
        for ds in datasets:
            workers = 1 if spec == "sync" else (args.workers or os.cpu_count() or 1)
            if args.workers is None and sum(1 for _ in (ds.path / "pages").glob("*.html")) < 60:
                workers = 1  # a pool costs more than a few pages do
            build_features(ds, workers=workers, progress=not args.no_progress)
        args.quick_exit = True  # nothing left to close: the process may end without teardown
        return 0
    from hwnoise.scheduler import Scheduler

    with Scheduler(spec, args.workers, sees=[ds.path for ds in datasets]) as sched:
        for ds in datasets:
            build_features(ds, progress=not args.no_progress, scheduler=sched)
    return 0


def _page(target: Path, args) -> int:
    """One HTML file's rows as CSV on stdout."""
    from hwnoise.progress import info

    if not target.exists():
        raise HwnoiseError(f"{target}: no such file or folder (give a dataset folder or an HTML file)")
    from hwnoise.pagefiles import read_page_file

    data = read_page_file(target)
    from hwnoise.decode import sniff_html
    from hwnoise.features.build import page_rows

    why = sniff_html(data)
    if why:
        raise HwnoiseError(f"{target}: not HTML ({why}, whatever its name says); give the page's "
                           "HTML as the server sent it")
    terms = _terms(args.query)
    if not terms:
        info("hwnoise: warning: no query terms (--query is missing or empty): QueryScore and "
             'matches will be zero on every node; give the query, e.g. --query "nome aprovado"')
    rows = page_rows(data, terms, http_charset=args.charset)
    rest = [c for c in rows.columns if c not in PAGE_COLUMNS and c not in ("node", "parent")]
    rows[["node", "parent", *PAGE_COLUMNS, *rest]].to_csv(sys.stdout, index=False)
    return 0
