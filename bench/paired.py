"""Is a change real? Two ``hwnoise evaluate`` runs on the same pages, compared page by page.

    python bench/paired.py BEFORE AFTER [--metric record_f1 text_f1 content_f1 ...] [--method model]
                           [--dataset wcxb-listing wcxb-collection]

BEFORE and AFTER are evaluate output folders (or their ``pages.csv``). For each metric and
method, over the pages both runs scored: the two means, the mean of the per-page differences,
its standard error and a 95 % interval (normal approximation; pages are the unit, as the
benchmarks average them), and how many pages went up, down or stayed. With 100 pages whose
scores run from 0 to 1, a difference under about two standard errors is within what page-level
noise gives: say so rather than call it a gain.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from hwnoise.text import standard_error

KEYS = ["dataset", "method", "page"]


def read_pages(path: Path) -> pd.DataFrame:
    """An evaluate run's per-page scores (``pages.csv`` in the folder, or the file itself)."""
    f = path / "pages.csv" if path.is_dir() else path
    if not f.is_file():
        raise SystemExit(f"paired: {f} not found: give an 'hwnoise evaluate' output folder or its pages.csv")
    return pd.read_csv(f, dtype={"page": str})


def paired(before: pd.DataFrame, after: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per method: means, mean difference, its standard error and 95 % interval, pages up/down."""
    if metric not in before or metric not in after:
        raise SystemExit(f"paired: no column {metric!r} in both runs")
    both = before[KEYS + [metric]].merge(after[KEYS + [metric]], on=KEYS, suffixes=("_a", "_b")).dropna()
    rows = []
    for method, g in both.groupby("method", sort=True):
        d = (g[f"{metric}_b"] - g[f"{metric}_a"]).to_numpy()
        se = standard_error(d)
        se = float("nan") if se is None else se
        m = float(d.mean())
        rows.append({"metric": metric, "method": method, "pages": len(d),
                     "before": g[f"{metric}_a"].mean(), "after": g[f"{metric}_b"].mean(), "diff": m,
                     "se": se, "ci_low": m - 1.96 * se, "ci_high": m + 1.96 * se,
                     "up": int((d > 1e-9).sum()), "down": int((d < -1e-9).sum()), "same": int((abs(d) <= 1e-9).sum())})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--metric", nargs="+", default=["record_f1", "text_f1", "content_f1"])
    ap.add_argument("--method", default=None, help="only this method (default: every method in both runs)")
    ap.add_argument("--dataset", nargs="+", default=None,
                    help="only the pages of these datasets, pooled (e.g. WCXB's wcxb-listing wcxb-collection)")
    a = ap.parse_args(argv)
    b, c = read_pages(a.before), read_pages(a.after)
    if a.dataset:
        missing = sorted(set(a.dataset) - set(b["dataset"].astype(str)) - set(c["dataset"].astype(str)))
        if missing:
            print(f"paired: no pages of dataset(s) {', '.join(missing)} in either run (theirs: "
                  f"{', '.join(sorted(set(b['dataset'].astype(str)) | set(c['dataset'].astype(str))))})",
                  file=sys.stderr)
            return 1
        b, c = b[b.dataset.astype(str).isin(a.dataset)], c[c.dataset.astype(str).isin(a.dataset)]
    if a.method:
        b, c = b[b.method == a.method], c[c.method == a.method]
    both = [m for m in a.metric if m in b and m in c]
    if not both:  # e.g. content_f1 in a run older than session 23, whose pages.csv lacks it
        print(f"paired: none of {', '.join(a.metric)} is a column of both runs' pages.csv "
              f"(their columns: {', '.join(sorted(set(b.columns) & set(c.columns)))})", file=sys.stderr)
        return 1
    out = pd.concat([paired(b, c, m) for m in both], ignore_index=True)
    print(out.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
