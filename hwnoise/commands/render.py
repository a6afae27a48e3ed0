"""``hwnoise render``: what headless Chromium shows of every page, to DATASET/render.parquet."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "render",
        help="render every page in headless Chromium and store computed styles and boxes",
        description=(
            "Load every page of a dataset from its stored bytes in headless Chromium (Debian's\n"
            "/usr/bin/chromium, 1366x768) and write DATASET/render.parquet: for every element the\n"
            "walker emits (keyed page, node) its computed display, visibility, opacity, font\n"
            "size and weight, colour and box. No request leaves the machine (every request is\n"
            "refused), scripts are off unless --scripts. A page over the time limit or that\n"
            "crashes the browser is recorded in DATASET/render_failed.jsonl and the run goes on.\n"
            "A rerun renders only the pages not rendered yet. 'hwnoise features' then drops what\n"
            "the browser hides and adds the rendered features; methods mss and wang read it."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dataset", metavar="DATASET", help="a dataset folder")
    p.add_argument("--workers", type=int, default=2,
                   help="browsers rendering in parallel, one process each (default 2)")
    p.add_argument("--scripts", action="store_true",
                   help="let the pages' scripts run (default: off; requests stay refused)")
    p.add_argument("--timeout", type=float, default=15.0,
                   help="seconds a page may take to load and be read (default 15)")
    p.add_argument("--retry-failed", action="store_true",
                   help="render again the pages recorded as failed")
    p.add_argument("--force", action="store_true", help="render every page again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or summary")
    from hwnoise.scheduler import add_argument

    add_argument(p, "the rendering (local: --workers browser processes here)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from hwnoise.errors import HwnoiseError
    from hwnoise.features.render import render_dataset

    if args.workers < 1:
        raise HwnoiseError(f"--workers must be at least 1, not {args.workers}")
    if not args.timeout > 0:
        raise HwnoiseError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    if not Path(args.dataset).is_dir():
        raise HwnoiseError(f"{args.dataset}: no such dataset folder")
    spec = getattr(args, "scheduler", "local") or "local"
    opts = dict(scripts=args.scripts, timeout=args.timeout, progress=not args.no_progress,
                retry_failed=args.retry_failed, force=args.force)
    if spec == "threads":
        raise HwnoiseError("render runs its browsers in processes: use --scheduler local (with --workers) "
                           "or a Dask scheduler whose workers run --nthreads 1")
    if spec in ("local", "sync"):
        summary = render_dataset(args.dataset, workers=1 if spec == "sync" else args.workers, **opts)
    else:
        from hwnoise.scheduler import Scheduler, for_workers

        with Scheduler(spec, args.workers) as sched:
            summary = render_dataset(for_workers(sched, [args.dataset])[0], workers=args.workers,
                                     scheduler=sched, **opts)
    return 0 if summary["failed"] == 0 or summary["rendered"] > 0 else 1
