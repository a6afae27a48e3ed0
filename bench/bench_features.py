"""Pages per second of the features stage, of an lxml parse alone and of trafilatura.extract.

All three run in one process on the same pages (big9 and WCXB dev pages from
../shared/datasets, read into memory first), one after the other, and the
ratios are printed:

    python bench/bench_features.py --pages 60

"features" is the whole per-page stage: decode (hwnoise.decode) + parse + drop
what is hidden + walk + every measure (``walk_page`` with a query) + labels
from gold text where the page has gold. "walk" is ``walk_page`` alone (decode
included, no labels). "parse" is ``lxml.etree.fromstring`` of the page's bytes
with an HTML parser (libxml2 decoding them itself).

``--probe DATASET...`` instead asks which extended features help: per dataset
(with features.parquet), a seeded 66 % split of its pages, a CART tree with
entropy (scikit-learn; a quick stand-in for J48) on the thesis's five features
and on the five plus each group of extended features; it prints the mean
content F1 (class N, node level) over the datasets:

    python bench/bench_features.py --probe /tmp/imp/big9-*
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"


def load_pages(n: int, seed: int = 0) -> list[tuple[str, bytes, str | None]]:
    """``n`` pages, half big9 and half WCXB dev: (name, bytes, gold text or None)."""
    rng = random.Random(seed)
    big9 = sorted((DATASETS / "big9").glob("big5-*/html/*"))
    wcxb = sorted((DATASETS / "wcxb" / "dev" / "html").glob("*.html.gz"))
    if not big9 and not wcxb:
        sys.exit(f"no pages under {DATASETS} (big9, wcxb)")
    pick = rng.sample(big9, min(len(big9), n // 2)) + rng.sample(wcxb, min(len(wcxb), n - n // 2))
    out = []
    for p in pick:
        if p.suffix == ".gz":
            data = gzip.decompress(p.read_bytes())
            gt = p.parent.parent / "ground-truth" / (p.name[:-len(".html.gz")] + ".json")
            gold = None
            if gt.exists():
                try:
                    gold = (json.loads(gt.read_text(encoding="utf-8")).get("ground_truth") or {}).get("main_content")
                except (ValueError, AttributeError):
                    gold = None
        else:
            data = p.read_bytes()
            g = p.parent.parent / "gold" / (p.stem + ".txt")
            gold = g.read_bytes().decode("utf-8", "replace") if g.exists() else None
        out.append((p.name, data, gold))
    return out


def timed(fn, pages, repeat: int = 1) -> float:
    """CPU seconds of this process (not wall time: the machine may be shared) for one pass,
    the best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for page in pages:
            fn(page)
        best = min(best, time.process_time() - t)
    return best


PROBE_GROUPS = {
    "thesis five": [],
    "+ link_density, chars, own_chars": ["link_density", "chars", "own_chars"],
    "+ tag_code": ["tag_code"],
    "+ position, chars_before": ["position", "chars_before"],
    "+ own_query_score": ["own_query_score"],
    "+ parent_ctd, children, sibling_same_tag": ["parent_ctd", "children", "sibling_same_tag"],
    "+ sitelevel": ["sitelevel"],
}


def probe(datasets: list[str], seed: int = 1) -> dict[str, float]:
    """Mean content F1 per feature group over the datasets (pages split 66/34, seeded)."""
    import numpy as np
    import pandas as pd
    from sklearn.metrics import f1_score
    from sklearn.tree import DecisionTreeClassifier

    from hwnoise.features.columns import EXTENDED_FEATURES, THESIS_FEATURES

    groups = dict(PROBE_GROUPS)
    groups["+ all extended"] = list(EXTENDED_FEATURES)
    scores: dict[str, list[float]] = {g: [] for g in groups}
    for d in datasets:
        path = Path(d) / "features.parquet"
        if not path.exists():
            print(f"skipping {d}: no features.parquet", file=sys.stderr)
            continue
        df = pd.read_parquet(path)
        df = df[df["label"].notna()]
        pages = np.random.default_rng(seed).permutation(sorted(df["page"].unique()))
        train = df["page"].isin(set(pages[:int(round(0.66 * len(pages)))])).to_numpy()
        y = (df["label"] == "N").to_numpy()
        if train.all() or not train.any():
            continue
        for g, extra in groups.items():
            x = df[THESIS_FEATURES + extra].to_numpy(dtype=float)
            tree = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=0)
            tree.fit(x[train], y[train])
            scores[g].append(f1_score(y[~train], tree.predict(x[~train]), zero_division=0))
    return {g: float(np.mean(v)) for g, v in scores.items() if v}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=60, help="pages (half big9, half WCXB; default 60)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="passes per method; the best counts")
    ap.add_argument("--no-trafilatura", action="store_true")
    ap.add_argument("--probe", nargs="+", metavar="DATASET",
                    help="instead: which extended features help (datasets with features.parquet)")
    args = ap.parse_args(argv)
    if args.probe:
        for group, f1 in probe(args.probe).items():
            print(f"{group:45s} content F1 {f1:.3f}")
        return 0

    from hwnoise.features.labels import label_page
    from hwnoise.features.walk import walk_page

    pages = load_pages(args.pages, args.seed)
    query = ["news", "search", "price", "review", "2009", "amd"]
    parser = etree.HTMLParser(huge_tree=True, remove_comments=True)

    def parse(page):
        etree.fromstring(page[1], parser)

    def walk(page):
        walk_page(page[1], query)

    def features(page):
        w = walk_page(page[1], query)
        if page[2] is not None:
            label_page(w, page[2])

    def trafilatura(page):
        import trafilatura as tr

        tr.extract(page[1])

    mb = sum(len(p[1]) for p in pages) / 1e6
    for fn in (parse, walk, features):  # warm up imports and caches
        fn(pages[0])
    r = args.repeat
    results = {"parse": timed(parse, pages, r), "walk": timed(walk, pages, r),
               "features": timed(features, pages, r)}
    if not args.no_trafilatura:
        trafilatura(pages[0])
        results["trafilatura"] = timed(trafilatura, pages, r)
    n = len(pages)
    print(f"{n} pages ({mb:.1f} MB; big9 and WCXB dev), seed {args.seed}, CPU time, best of {r}")
    for name, secs in results.items():
        print(f"  {name:12s} {n / secs:8.1f} pages/s  {1000 * secs / n:7.2f} ms/page  "
              f"{secs / results['parse']:5.2f}x parse")
    print(f"walk / parse = {results['walk'] / results['parse']:.2f} (target <= 2)")
    print(f"features / parse = {results['features'] / results['parse']:.2f}")
    if "trafilatura" in results:
        print(f"trafilatura / features = {results['trafilatura'] / results['features']:.2f} "
              "(target > 1: features faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
