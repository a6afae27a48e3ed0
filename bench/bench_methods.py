"""Pages per second of sitelevel, isotonic, webstemmer and nce beside trafilatura's, in one run.

Each method is timed on the same big9 test pages, one after the other, in one process:

    python bench/bench_methods.py --site-years 4

For every site-year picked (imported into a temporary folder with ``hwnoise import big9``),
the first 7 pages train the methods that need training (fit time is reported apart) and the
last 3 are extracted. "extract" is the whole per-page job each method does for
``hwnoise evaluate``: the walk (decode, parse, measures) plus the method's own work; the walk
alone is timed too, so that what a method adds is visible. trafilatura is
``trafilatura.extract`` on the decoded page.

``--isotonic-tables`` prints instead the eight configurations of Tables 7-8 of seed 000
(smoothing off/on, c = 0.01, 0.1, 1, trained per dataset or pooled over the site-years used)
with ``hwnoise.evaluate`` (pages protocol, seed 1): text P, R, F1 (means over the test pages),
node-level F1 of the noise class (the paper's "template") and seconds per test page.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
METHODS = ["sitelevel", "isotonic", "webstemmer", "nce"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site-years", type=int, default=4, help="big9 site-years to use (default 4)")
    ap.add_argument("--train", type=int, default=7, help="training pages per site-year (default 7)")
    ap.add_argument("--isotonic-tables", action="store_true",
                    help="the eight configurations of Tables 7-8 of seed 000 instead")
    args = ap.parse_args(argv)
    if not (DATASETS / "big9").is_dir():
        sys.exit(f"no big9 under {DATASETS}")
    if args.isotonic_tables:
        return isotonic_tables(args.site_years)

    from hwnoise.dataset import Dataset
    from hwnoise.extractors.base import walk_of
    from hwnoise.extractors.external import decode
    from hwnoise.extractors.registry import get_method
    from hwnoise.features.importers import import_dataset
    import trafilatura

    with tempfile.TemporaryDirectory() as tmp:
        folders = import_dataset("big9", DATASETS / "big9", tmp, progress=False)
        step = max(1, len(folders) // args.site_years)
        units = []
        for f in folders[::step][:args.site_years]:
            pages = list(Dataset(f).pages())
            units.append((pages[:args.train], pages[args.train:]))
        test_pages = [p for _, test in units for p in test]
        blobs = [(p.read_html(), p.http_charset) for p in test_pages]
        n = len(test_pages)

        def rate(seconds: float) -> float:
            return n / seconds if seconds > 0 else float("inf")

        results: dict[str, tuple[float, float]] = {}
        for (html, cs), p in zip(blobs, test_pages):  # warm-up: imports, caches, page files
            trafilatura.extract(decode(html, cs))
            walk_of(p)
        t = time.perf_counter()
        for html, cs in blobs:
            trafilatura.extract(decode(html, cs))
        results["trafilatura"] = (0.0, time.perf_counter() - t)
        t = time.perf_counter()
        for p in test_pages:
            walk_of(p)
        results["walk alone"] = (0.0, time.perf_counter() - t)
        for name in METHODS:
            fit = run = 0.0
            for train, test in units:
                m = get_method(name)
                t = time.perf_counter()
                m.fit(train)
                fit += time.perf_counter() - t
                t = time.perf_counter()
                for p in test:
                    walk = walk_of(p)
                    if hasattr(m, "node_labels"):
                        m.node_labels(p, walk)
                    else:
                        m.extract(p)
                run += time.perf_counter() - t
            results[name] = (fit, run)

    base = rate(results["trafilatura"][1])
    print(f"{n} big9 test pages ({len(units)} site-years, {args.train} training pages each)")
    print(f"{'method':<12} {'pages/s':>9} {'x trafilatura':>14} {'fit s/site-year':>16}")
    for name, (fit, run) in results.items():
        r = rate(run)
        print(f"{name:<12} {r:9.1f} {r / base:14.2f} {fit / len(units):16.2f}")
    return 0


def isotonic_tables(site_years: int) -> int:
    """Tables 7-8 of seed 000 on big9 site-years: P, R, F1 and time per configuration."""
    import numpy as np

    from hwnoise.evaluate import evaluate
    from hwnoise.features.importers import import_dataset

    with tempfile.TemporaryDirectory() as tmp:
        folders = import_dataset("big9", DATASETS / "big9", tmp, progress=False)
        step = max(1, len(folders) // site_years)
        use = [str(f) for f in folders[::step][:site_years]]
        configs = [(False, "dataset", None), (False, "pooled", None)]
        configs += [(True, t, c) for c in (0.01, 0.1, 1.0) for t in ("dataset", "pooled")]
        print(f"isotonic on {len(use)} big9 site-years (pages protocol, seed 1); pooled = "
              "own training pages + every page of the other site-years used")
        print(f"{'smoothing':<10}{'training':<9}{'c':>6}{'text P':>8}{'text R':>8}{'text F1':>8}"
              f"{'tmpl F1':>8}{'s/page':>8}")
        for smoothing, training, c in configs:
            opts = {"smoothing": smoothing, "training": training, "c": c or 0.01,
                    "pool": use if training == "pooled" else ()}
            t = time.perf_counter()
            rep = evaluate(use, methods=["isotonic"], protocol="pages", seed=1,
                           method_options={"isotonic": opts}, figures=False)
            secs = time.perf_counter() - t
            res = rep["results"]
            pages = sum(r["pages"] for r in res)
            mean = lambda k: float(np.mean([r[k] for r in res if k in r]))  # noqa: E731
            # F1 of the noise ("template") class from the pooled confusion counts
            rr, rc, cr = (sum(r.get(k, 0) for r in res) for k in ("RR", "RC", "CR"))
            p_t = rr / (rr + cr) if rr + cr else 0.0
            r_t = rr / (rr + rc) if rr + rc else 0.0
            f_t = 2 * p_t * r_t / (p_t + r_t) if p_t + r_t else 0.0
            print(f"{'yes' if smoothing else 'no':<10}{training:<9}{(c if c else '-'):>6}"
                  f"{mean('text_precision'):8.3f}{mean('text_recall'):8.3f}{mean('text_f1'):8.3f}"
                  f"{f_t:8.3f}{secs / max(pages, 1):8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
