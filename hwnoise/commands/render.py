"""``hwnoise render``: what headless Chromium shows of every page, to DATASET/render.parquet."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "render",
        help="render every page in headless Chromium and store computed styles and boxes",
        description=(
            "Load every page of each dataset from its stored bytes in headless Chromium (Debian's\n"
            "/usr/bin/chromium, 1366x768) and write DATASET/render.parquet: for every element the\n"
            "walker emits (keyed page, node) its computed display, visibility, opacity, font\n"
            "size and weight, colour and box. No request leaves the machine (every request is\n"
            "refused), scripts are off unless --scripts. A page over the time limit or that\n"
            "crashes the browser is recorded in DATASET/render_failed.jsonl and the run goes on.\n"
            "A rerun renders only the pages not rendered yet. 'hwnoise features' then drops what\n"
            "the browser hides and adds the rendered features; methods mss and wang read it.\n"
            "Several dataset folders (DIR/*, as 'hwnoise features' takes them) are all checked\n"
            "first, then rendered one after the other."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("datasets", metavar="DATASET", nargs="+",
                   help="dataset folders, each rendered into its own render.parquet")
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
    from hwnoise.errors import HwnoiseError

    if args.workers < 1:
        raise HwnoiseError(f"--workers must be at least 1, not {args.workers}")
    if not args.timeout > 0:
        raise HwnoiseError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    spec = getattr(args, "scheduler", "local") or "local"
    if spec == "threads":
        raise HwnoiseError("render runs its browsers in processes: use --scheduler local (with --workers) "
                           "or a Dask scheduler whose workers run --nthreads 1")
    from hwnoise.features.render import render_dataset
    from hwnoise.scheduler import for_workers

    # every folder checked before the first page is rendered; absolute for a cluster's workers
    datasets = _datasets(for_workers(spec, args.datasets))
    opts = dict(scripts=args.scripts, timeout=args.timeout, progress=not args.no_progress,
                retry_failed=args.retry_failed, force=args.force)
    if spec in ("local", "sync"):
        summaries = [render_dataset(ds, workers=1 if spec == "sync" else args.workers, **opts)
                     for ds in datasets]
    else:
        from hwnoise.scheduler import Scheduler

        with Scheduler(spec, args.workers, sees=[ds.path for ds in datasets]) as sched:
            summaries = [render_dataset(ds, workers=args.workers, scheduler=sched, **opts) for ds in datasets]
    # as for one dataset: status 1 only where a dataset's pages all failed (none rendered)
    return 0 if all(s["failed"] == 0 or s["rendered"] > 0 for s in summaries) else 1


def _datasets(targets: list) -> list:
    """The dataset folders ``targets``, each checked (a folder, a dataset), in the order given."""
    from pathlib import Path

    from hwnoise.dataset import Dataset
    from hwnoise.errors import HwnoiseError

    out = []
    for t in targets:
        if not Path(t).is_dir():
            raise HwnoiseError(f"{t}: no such dataset folder" + (" (several targets must all be dataset folders)"
                                                                 if len(targets) > 1 else ""))
        out.append(Dataset(t))
    return out
