"""Training time, peak memory and held-out accuracy of C45Classifier and of Weka J48, side by side.

Both learners read the same generated ARFF files (five node-like features, ``result {S,N}``,
label noise); each runs in its own process, whose peak resident memory is read with wait4.
Times are wall-clock (and CPU for hwnoise) of building the model only; Weka's is the
"Time taken to build model" it prints. Run from the repo root:

    python bench/bench_train.py                    # 200k and 1M rows
    python bench/bench_train.py --rows 20000 200000 --test-rows 50000
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

FIVE = ["ctd", "density_sum", "query_score", "matches", "distance"]


def make_rows(n: int, seed: int) -> pd.DataFrame:
    """Node-like rows: skewed text densities, sparse query matches, depths, 10 % label noise."""
    rng = np.random.default_rng(seed)
    ctd = rng.gamma(1.5, 20, n) * (rng.random(n) < 0.7)
    dsum = rng.gamma(1.2, 50, n) * (rng.random(n) < 0.5)
    qs = np.round(rng.exponential(0.5, n) * (rng.random(n) < 0.3), 2)
    matches = rng.poisson(0.3, n).astype(float)
    depth = rng.integers(1, 30, n).astype(float)
    score = 0.04 * ctd + 0.01 * dsum + qs + 0.5 * matches - 0.08 * depth + rng.normal(size=n)
    label = np.where(score > 0.8, "N", "S")
    flip = rng.random(n) < 0.10
    label[flip] = np.where(label[flip] == "N", "S", "N")
    return pd.DataFrame({"ctd": ctd.round(6), "density_sum": dsum.round(6), "query_score": qs,
                         "matches": matches, "distance": depth, "result": label})


def write_arff(df: pd.DataFrame, path: Path, relation: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"@relation {relation}\n\n")
        for name in FIVE:
            fh.write(f"@attribute {name} numeric\n")
        fh.write("@attribute result {S,N}\n\n@data\n")
        df.to_csv(fh, header=False, index=False, na_rep="?")


def read_arff_fast(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The numeric ARFF files written above, read with pandas (the bench times fitting)."""
    with open(path, encoding="utf-8") as fh:
        for skip, line in enumerate(fh, 1):
            if line.strip().lower() == "@data":
                break
    df = pd.read_csv(path, skiprows=skip, header=None, na_values="?")
    return df.iloc[:, :-1].to_numpy(np.float64), df.iloc[:, -1].to_numpy(object)


def child_c45(train: Path, test: Path, tree_out: Path) -> None:
    """Runs in its own process: load, fit, predict; prints one JSON line."""
    from hwnoise.training.c45 import C45Classifier
    from hwnoise.training.j48_text import export_j48
    t0 = time.perf_counter()
    X, y = read_arff_fast(train)
    Xt, yt = read_arff_fast(test)
    load = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    clf = C45Classifier().fit(X, y, class_order=["S", "N"])
    fit, cpu = time.perf_counter() - t1, time.process_time() - c1
    acc = 100 * float(np.mean(clf.predict(Xt) == yt))
    tree_out.write_text(export_j48(clf, FIVE), encoding="utf-8")
    print(json.dumps({"load_s": load, "fit_s": fit, "fit_cpu_s": cpu, "accuracy": acc,
                      "leaves": clf.n_leaves_, "size": clf.node_count_}))


def run_measured(cmd: list[str]) -> tuple[str, str, float, float]:
    """Run cmd; return stdout, stderr, wall seconds and peak RSS in MB (wait4's ru_maxrss)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return out.read(), err.read(), wall, usage.ru_maxrss / 1024


def bench_size(rows: int, test_rows: int, workdir: Path, seed: int, weka: bool, xmx: str) -> dict:
    train, test = workdir / f"train_{rows}.arff", workdir / f"test_{rows}.arff"
    t0 = time.perf_counter()
    write_arff(make_rows(rows, seed), train, f"bench{rows}")
    write_arff(make_rows(test_rows, seed + 1), test, f"bench{rows}_test")
    print(f"[{rows} rows] wrote ARFF files in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    ours_tree = workdir / f"c45_{rows}.txt"
    out, err, wall, rss = run_measured([sys.executable, __file__, "--child-c45", str(train), str(test),
                                        str(ours_tree)])
    if not out.strip():
        raise SystemExit(f"C45Classifier run failed:\n{err}")
    ours = json.loads(out.strip().splitlines()[-1]) | {"wall_s": wall, "rss_mb": rss}
    result = {"rows": rows, "test_rows": test_rows, "c45": ours}
    print(f"[{rows} rows] C45Classifier: fit {ours['fit_s']:.1f} s, peak {rss:.0f} MB", file=sys.stderr)
    if weka:
        from hwnoise.training.j48_text import extract_tree_text
        from hwnoise.training.weka import WEKA_JAR
        cmd = ["java", f"-Xmx{xmx}", "-cp", WEKA_JAR, "weka.classifiers.trees.J48",
               "-t", str(train), "-T", str(test), "-C", "0.25", "-M", "2"]
        out, err, wall, rss = run_measured(cmd)
        build = re.search(r"Time taken to build model: ([\d.]+) seconds", out)
        acc = re.search(r"=== Error on test data ===.*?Correctly Classified Instances\s+\d+\s+([\d.]+)\s*%",
                        out, re.S)
        if not build or not acc:
            raise SystemExit(f"Weka J48 failed:\n{(err or out)[-2000:]}")
        tree = extract_tree_text(out)
        leaves = int(re.search(r"Number of Leaves  :\s*(\d+)", tree).group(1))
        size = int(re.search(r"Size of the tree :\s*(\d+)", tree).group(1))
        result["weka"] = {"fit_s": float(build.group(1)), "wall_s": wall, "rss_mb": rss,
                          "accuracy": float(acc.group(1)), "leaves": leaves, "size": size}
        result["same_tree"] = tree == ours_tree.read_text(encoding="utf-8")
        print(f"[{rows} rows] Weka J48: build {build.group(1)} s, peak {rss:.0f} MB", file=sys.stderr)
    return result


def print_table(results: list[dict]) -> None:
    head = (f"{'rows':>9} | {'learner':<14} | {'build s':>8} | {'cpu s':>6} | {'process s':>9} | "
            f"{'peak MB':>8} | {'test acc %':>10} | {'leaves':>6} | same tree")
    print(head)
    print("-" * len(head))
    for r in results:
        c = r["c45"]
        print(f"{r['rows']:>9} | {'C45Classifier':<14} | {c['fit_s']:>8.1f} | {c['fit_cpu_s']:>6.1f} | "
              f"{c['wall_s']:>9.1f} | {c['rss_mb']:>8.0f} | {c['accuracy']:>10.4f} | {c['leaves']:>6} |")
        if "weka" in r:
            w = r["weka"]
            print(f"{r['rows']:>9} | {'Weka J48':<14} | {w['fit_s']:>8.1f} | {'':>6} | {w['wall_s']:>9.1f} | "
                  f"{w['rss_mb']:>8.0f} | {w['accuracy']:>10.4f} | {w['leaves']:>6} | "
                  f"{'yes' if r['same_tree'] else 'NO'}")
            print(f"{'':>9} | {'ratio J48/ours':<14} | {w['fit_s'] / c['fit_s']:>7.1f}x | {'':>6} | "
                  f"{w['wall_s'] / c['wall_s']:>8.1f}x | {w['rss_mb'] / c['rss_mb']:>7.1f}x |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[200_000, 1_000_000],
                    help="training rows per run (default: 200000 1000000)")
    ap.add_argument("--test-rows", type=int, default=100_000, help="rows of the held-out file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=None, help="where the ARFF files go (default: a temp dir)")
    ap.add_argument("--no-weka", action="store_true", help="time C45Classifier only")
    ap.add_argument("--xmx", default="3g", help="Java heap for Weka (default 3g)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    ap.add_argument("--child-c45", nargs=3, metavar=("TRAIN", "TEST", "TREE_OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_c45:
        child_c45(*map(Path, args.child_c45))
        return 0
    weka = not args.no_weka
    if weka:
        from hwnoise.training.weka import weka_available
        if not weka_available():
            print("Weka is not installed: timing C45Classifier only", file=sys.stderr)
            weka = False
    with tempfile.TemporaryDirectory(prefix="hwnoise-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results = [bench_size(n, args.test_rows, workdir, args.seed, weka, args.xmx) for n in args.rows]
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
