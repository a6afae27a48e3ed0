"""Peak memory of ``hwnoise features``, ``train`` and ``evaluate`` as one dataset grows.

    python bench/bench_memory.py --work /tmp/speed-bench --sizes 100,1000,10000 --out /tmp/bench-memory.json

The datasets are those of ``bench/bench_features.py`` (the same ``--work`` folder): the pooled
corpus's pages repeated to 100, 1,000 and 10,000 pages of one dataset, gold and query kept (a
user's big crawl of one site). Per size, one after the other:

- ``hwnoise features DATASET --no-progress`` (writes ``features.parquet``, which the next two read);
- ``hwnoise train DATASET --out WORK/mem-train-N`` (preset auto: one site gives the site preset,
  J48 on 29 columns with trafilatura stacked; the pages protocol, one fit on 66 % of the pages);
- ``hwnoise evaluate DATASET --methods model --no-figures --out WORK/mem-evaluate-N`` (the same
  fit, then every test page scored, in worker processes).

For each: the max RSS of the largest process (``wait4``; what ``/usr/bin/time -f %M`` prints), the
peak of the summed RSS of the process and its workers (``/proc`` sampled every 0.25 s: a lower
bound, shared pages counted in each process), CPU seconds (user + system, the workers included)
and wall seconds; then the growth per 1,000 pages between the two largest sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_features import HWNOISE, corpus, repeated  # noqa: E402

COMMANDS = ("features", "train", "evaluate")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                stat = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kids.setdefault(int(stat[1]), []).append(int(p))
    return kids


def _rss_mb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int) -> int:
    """Summed RSS (MB) of ``root`` and its descendants now."""
    kids, todo, total = _children(), [root], 0
    while todo:
        pid = todo.pop()
        total += _rss_mb(pid)
        todo += kids.get(pid, [])
    return total


def measure(args: list[str]) -> dict:
    """Run a command; its CPU and wall seconds, the largest process's max RSS and the peak of
    the summed RSS of its process tree (MB)."""
    t = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.25)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, status, ru = os.wait4(proc.pid, 0)
    done.set()
    th.join()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(args)} failed with exit status {os.waitstatus_to_exitcode(status)}")
    return {"cpu": round(ru.ru_utime + ru.ru_stime, 1), "wall": round(time.perf_counter() - t, 1),
            "max_rss_mb": ru.ru_maxrss // 1024, "tree_rss_mb": peak[0]}


def command(name: str, ds: Path, work: Path, n: int) -> list[str]:
    if name == "features":
        return [*HWNOISE, "features", str(ds), "--no-progress"]
    if name == "train":
        return [*HWNOISE, "train", str(ds), "--out", str(work / f"mem-train-{n}")]
    return [*HWNOISE, "evaluate", str(ds), "--methods", "model", "--no-figures",
            "--out", str(work / f"mem-evaluate-{n}")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/hwnoise-bench-features",
                    help="bench_features.py's folder (corpus and repeated datasets, made once)")
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--commands", default=",".join(COMMANDS), help="of features,train,evaluate")
    ap.add_argument("--out", help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    base = corpus(work)
    names = [c for c in args.commands.split(",") if c.strip()]
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    results: dict = {"sizes": sizes, "runs": {}}
    print(f"{'pages':>6} {'command':9} {'max RSS':>8} {'tree RSS':>9} {'CPU s':>7} {'wall s':>7}", flush=True)
    for n in sizes:
        ds = repeated(base, n, work)
        for name in names:
            r = measure(command(name, ds, work, n))
            results["runs"].setdefault(name, {})[str(n)] = r
            print(f"{n:6d} {name:9} {r['max_rss_mb']:6d} MB {r['tree_rss_mb']:6d} MB {r['cpu']:7.1f} "
                  f"{r['wall']:7.1f}", flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps(results, indent=1))
    if len(sizes) >= 2:
        a, b = sorted(sizes)[-2:]
        for name in names:
            ra, rb = results["runs"][name][str(a)], results["runs"][name][str(b)]
            per = (rb["max_rss_mb"] - ra["max_rss_mb"]) / ((b - a) / 1000)
            results.setdefault("growth_mb_per_1000_pages", {})[name] = round(per, 1)
            print(f"{name}: max RSS grows {per:.1f} MB per 1,000 pages from {a} to {b} pages")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
