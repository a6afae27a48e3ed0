"""Exact isotonic smoothing against the 256-level grid on real big9 page trees (random scores).

Run: ``python bench/bench_smoothing.py`` (reads ../shared/datasets/big9; 20 pages).
"""
import csv, time, numpy as np
from pathlib import Path
from hwnoise.features.walk import walk_page
from hwnoise.extractors.isotonic import smooth_tree, tree_cost
root = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "big9"
pages = list(csv.DictReader(open(root / "pages.tsv", encoding="utf-8"), delimiter="\t"))[:200:10]
rng = np.random.default_rng(0)
te = tg = 0; n_nodes = 0; gaps = []
for r in pages:
    html = (root / r["folder"] / "html" / r["html_file"]).read_bytes()
    parent = walk_page(html, [r["query"]]).rows["parent"].to_numpy()
    y = rng.random(len(parent)) ** 3
    n_nodes += len(parent)
    t = time.perf_counter(); xe = smooth_tree(parent, y, 0.01); te += time.perf_counter() - t
    t = time.perf_counter(); xg = smooth_tree(parent, y, 0.01, levels=256); tg += time.perf_counter() - t
    gaps.append(tree_cost(parent, y, xg, 0.01) - tree_cost(parent, y, xe, 0.01))
print(f"{len(pages)} big9 pages, {n_nodes} nodes, random scores u^3, c=0.01: exact {te:.1f} s, levels=256 {tg:.1f} s; "
      f"grid cost minus exact cost: min {min(gaps):.2e} max {max(gaps):.2e}")
