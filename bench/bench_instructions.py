"""Instructions, not seconds: the walk and the features stage against lxml's parse, counted by
valgrind's cachegrind, which the machine's load does not move.

    python bench/bench_instructions.py DATASET [--step 8] [--features]

Each figure is one process under ``valgrind --tool=cachegrind --cache-sim=no`` (with
``OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0``): ``read`` reads every ``--step``-th page of
DATASET (a dataset folder, e.g. ``bench_features.py``'s pooled corpus ``W/corpus/src`` or
``W/pages-100``); ``parse`` reads them and parses each with ``lxml.html.fromstring``; ``walk``
reads them and walks each with ``walk_page`` and ``bench_features.py``'s query. The parse and
the walk are printed minus ``read`` (start-up and reading), and the walk over the parse. With
``--features``, also ``hwnoise features DATASET --scheduler sync`` as one process (on a copy,
every page), over the parse of every page. Needs ``valgrind`` on the PATH; minutes per figure.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_features import QUERY  # noqa: E402


def child(mode: str, folder: str, step: int) -> None:
    """What one counted process does (run under valgrind)."""
    import lxml.html

    from hwnoise.dataset import Dataset
    from hwnoise.features.walk import TermMatcher, walk_page

    pages = [p.html_path.read_bytes() for p in Dataset(Path(folder)).pages()][::step]
    pages = [d for d in pages if d.strip()]
    query = TermMatcher(QUERY)
    if mode == "parse":
        for d in pages:
            lxml.html.fromstring(d)
    elif mode == "walk":
        for d in pages:
            walk_page(d, query)


def count(args: list[str]) -> int:
    """Instructions (cachegrind's ``I refs``) of one command."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                               f"--cachegrind-out-file={tmp}/out", *args],
                              capture_output=True, text=True,
                              env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if proc.returncode != 0 or not found:
        sys.exit(f"bench_instructions: {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path, nargs="?")
    ap.add_argument("--step", type=int, default=1, help="every STEP-th page (default: all)")
    ap.add_argument("--features", action="store_true",
                    help="also `hwnoise features --scheduler sync` as one process (every page)")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "FOLDER", "STEP"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], a.child[1], int(a.child[2]))
        return 0
    if a.dataset is None:
        ap.error("give a DATASET folder")
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions: valgrind is not on the PATH (apt-get install valgrind)")
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    got = {m: count([*me, m, str(a.dataset), str(a.step)]) for m in ("read", "parse", "walk")}
    parse, walk = got["parse"] - got["read"], got["walk"] - got["read"]
    print(f"{a.dataset}, every {a.step}. page; millions of instructions beyond reading the pages "
          f"({got['read'] / 1e6:.1f}):")
    print(f"  parse {parse / 1e6:.1f}")
    print(f"  walk  {walk / 1e6:.1f}  ({walk / parse:.2f}x the parse)")
    if a.features:
        whole = count([*me, "parse", str(a.dataset), "1"]) - got["read"] if a.step != 1 else parse
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / a.dataset.name
            shutil.copytree(a.dataset, copy, ignore=shutil.ignore_patterns("features.parquet"))
            feats = count([sys.executable, "-m", "hwnoise.cli", "features", str(copy),
                           "--scheduler", "sync", "--no-progress"])
        print(f"  hwnoise features, one process, start-up included: {feats / 1e6:.1f}  "
              f"({feats / whole:.2f}x the parse of every page)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
