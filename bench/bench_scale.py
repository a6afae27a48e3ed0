"""Pages per second of ``features`` and ``evaluate`` on each scheduler.

Imports ``--pages`` big9 pages (``hwnoise import big9 --limit``, several site-years) into a temp
folder, then times, on the same datasets:

- ``sync``: one process;
- ``local``: a pool of ``--workers`` processes on this machine;
- ``dask-1`` and ``dask-2``: a real Dask cluster on 127.0.0.1 (``dask scheduler`` and 1 or 2
  ``dask worker --nthreads 1`` processes started here);
- ``dask-N``: the same with ``--cluster N`` worker processes.

``features`` is ``build_features`` of every dataset (pages walked and labelled); ``evaluate``
is ``hwnoise evaluate --methods model,cetd --protocol cv -k 3`` (fits per fold, pages scored in
batches). Each run's output is checked against the ``sync`` run (the same feature tables, the
same report.json scores) and the figures are printed as a table::

    python bench/bench_scale.py --pages 120 --cluster 4
    python bench/bench_scale.py --scheduler tcp://HEAD:8786   # and a cluster of your own
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
BIG9 = ROOT.parent / "shared" / "datasets" / "big9"


def start_cluster(n: int, tmp: Path) -> tuple[str, list[subprocess.Popen]]:
    """A ``dask scheduler`` and ``n`` single-threaded ``dask worker`` processes on 127.0.0.1."""
    from distributed import Client

    sched_file = tmp / f"scheduler-{n}.json"
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}

    def start(args: list[str], log: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=open(tmp / log, "wb"),
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)

    procs: list[subprocess.Popen] = []
    try:
        procs.append(start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                            "--scheduler-file", str(sched_file)], f"scheduler-{n}.log"))
        address = None
        while address is None:  # the file appears before it is written
            time.sleep(0.1)
            try:
                address = json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                pass
        procs += [start(["worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                        f"worker-{n}-{i}.log") for i in range(n)]
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=120)
    except BaseException:
        stop(procs)
        raise
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()


def scores(report: dict) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in report["results"]]


def run(name: str, spec: str, workers: int | None, dirs: list[Path], out: Path) -> dict:
    from hwnoise.evaluate import evaluate
    from hwnoise.features.build import build_features
    from hwnoise.scheduler import Scheduler

    row: dict = {"run": name}
    with Scheduler(spec, workers) as sched:
        t0 = time.perf_counter()
        for d in dirs:
            if spec == "local":  # features' own process pool, as 'hwnoise features --workers' uses
                build_features(d, workers=workers or 1, progress=False)
            else:
                build_features(d, progress=False, scheduler=sched)
        row["features_s"] = time.perf_counter() - t0
        tables = {d.name: pd.read_parquet(d / "features.parquet") for d in dirs}
        t0 = time.perf_counter()
        report = evaluate(dirs, methods=["model", "cetd"], protocol="cv", k=3, out=out / name,
                          figures=False, scheduler=sched)
        row["evaluate_s"] = time.perf_counter() - t0
    return {**row, "tables": tables, "scores": scores(report)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=120, help="big9 pages to import (default 120)")
    ap.add_argument("--workers", type=int, default=2, help="processes of the local pool (default 2)")
    ap.add_argument("--cluster", type=int, default=4, help="worker processes of the larger cluster (default 4)")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="also time a running Dask cluster (its workers must see this machine's temp folder)")
    args = ap.parse_args()
    os.environ.setdefault("HWNOISE_PROGRESS", "0")
    from hwnoise.features.importers import import_dataset

    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    dirs = import_dataset("big9", BIG9, tmp / "data", limit=args.pages, progress=False)
    pages = sum(1 for d in dirs for _ in (d / "pages").glob("*.html"))
    print(f"{pages} big9 pages in {len(dirs)} datasets; {os.cpu_count()} cores here", file=sys.stderr)
    rows = [run("sync", "sync", None, dirs, tmp / "out"),
            run(f"local-{args.workers}", "local", args.workers, dirs, tmp / "out")]
    for n in sorted({1, 2, args.cluster}):
        address, procs = start_cluster(n, tmp)
        try:
            rows.append(run(f"dask-{n}", address, None, dirs, tmp / "out"))
        finally:
            stop(procs)
    if args.scheduler:
        rows.append(run(args.scheduler, args.scheduler, None, dirs, tmp / "out"))
    base = rows[0]
    print("| run | features pages/s | evaluate pages/s | same tables and scores as sync |")
    print("|---|---:|---:|---|")
    for r in rows:
        same = all(r["tables"][k].equals(base["tables"][k]) for k in base["tables"]) and r["scores"] == base["scores"]
        print(f"| {r['run']} | {pages / r['features_s']:.1f} | {pages / r['evaluate_s']:.1f} | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
