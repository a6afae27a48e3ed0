"""Learning curve of the labelling page: text F1 against the number of checked pages.

Reads the folders ``bench/label_auto.py`` left in its --work folder (each dataset copied without
gold, with its auto labels made with that site's cross-site fold weights) and the original
dataset folders (with gold). A person who checks a page is simulated by the gold-derived labels
of that page (a perfect checker). For k checked pages (a seeded random order, --repeats
orders), a per-site C4.5 tree on the thesis features (``hwnoise train``'s default today) is fit
on:

- ``checked + auto``: the k checked pages' labels and the auto labels of the other pages;
- ``checked only``: the k checked pages alone (k >= 1);

and scored by text F1 (LCS over words, ``hwnoise.text.text_scores``) on the unchecked pages
against their gold. Prints the means per group (big9 / demo) and writes a PNG.

    nice -n 10 python bench/label_curve.py /tmp/b9/big9-* /tmp/demo/dataset \
        --work /tmp/label-bench-work --png docs/figures/label-curve.png
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import text_from_labels, walk_of
from hwnoise.features.columns import THESIS_FEATURES
from hwnoise.features.labels import label_page, stored_labels
from hwnoise.text import text_scores
from hwnoise.training.c45 import C45Classifier


def load(src: Path, work: Path) -> list[dict]:
    lab = Dataset(work / src.name).read_labels()
    by_page = dict(tuple(lab.groupby("page", sort=False)))
    out = []
    ds = Dataset(src)
    for page in ds.pages():
        if page.id not in by_page:
            continue
        walk = walk_of(page)
        gold_text = page.read_gold() or ""
        auto = stored_labels(walk.rows, by_page[page.id], "auto")
        auto = np.where(pd.isna(auto), "S", auto).astype(object)
        out.append({"walk": walk, "X": walk.rows[THESIS_FEATURES].to_numpy(float),
                    "gold": label_page(walk, gold_text), "auto": auto, "gold_text": gold_text})
    return out


def score(pages: list[dict], train_idx: list[int], labels_of, test_idx: list[int]) -> float | None:
    if not test_idx or not train_idx:
        return None
    X = np.concatenate([pages[i]["X"] for i in train_idx])
    y = np.concatenate([labels_of(i) for i in train_idx])
    if len(set(y)) < 2:
        pred_all = {i: np.full(len(pages[i]["X"]), y[0], dtype=object) for i in test_idx}
    else:
        clf = C45Classifier().fit(X, y)
        pred_all = {i: clf.predict(pages[i]["X"]) for i in test_idx}
    f1 = [text_scores(text_from_labels(pages[i]["walk"], pred_all[i]), pages[i]["gold_text"])["f1"]
          for i in test_idx]
    return float(np.mean(f1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="*", type=Path)
    ap.add_argument("--plot-from", nargs="+", type=Path, default=None, metavar="CURVE.json",
                    help="only plot: the --out files of earlier runs, together")
    ap.add_argument("--work", type=Path, default=Path("/tmp/label-bench-work"))
    ap.add_argument("--ks", default="0,1,2,3,5,8")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--png", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    rows = []
    if args.plot_from:
        for f in args.plot_from:
            rows.extend(json.loads(f.read_text())["rows"])
        args.datasets = []
    for src in args.datasets:
        pages = load(src, args.work)
        n = len(pages)
        group = "big9" if src.name.startswith("big9-") else Dataset(src).name
        for rep in range(args.repeats):
            order = list(np.random.default_rng(rep).permutation(n))
            for k in ks:
                if k >= n:
                    continue
                checked, rest = order[:k], order[k:]
                both = score(pages, list(range(n)),
                             lambda i: pages[i]["gold"] if i in checked else pages[i]["auto"], rest)
                only = score(pages, checked, lambda i: pages[i]["gold"], rest) if k else None
                rows.append({"dataset": src.name, "group": group, "repeat": rep, "k": k,
                             "checked_plus_auto": both, "checked_only": only})
        print(f"{src.name}: {n} pages done", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    per_ds = df.groupby(["group", "dataset", "k"])[["checked_plus_auto", "checked_only"]].mean()
    curve = per_ds.groupby(["group", "k"]).mean().reset_index()
    print(curve.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if args.out:
        args.out.write_text(json.dumps({"curve": curve.to_dict("records"),
                                        "rows": rows}, indent=1, default=float))
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
        for (group, g), colour in zip(curve.groupby("group"), ("#2166ac", "#b2182b", "#1a9850")):
            ax.plot(g["k"], g["checked_plus_auto"], "-o", color=colour, label=f"{group}: checked + auto labels")
            gg = g[g["k"] > 0]
            ax.plot(gg["k"], gg["checked_only"], "--s", color=colour, alpha=.7, label=f"{group}: checked pages only")
        ax.set_xlabel("checked pages (per site-year / site)")
        ax.set_ylabel("text F1 on the unchecked pages")
        ax.grid(alpha=.3)
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        fig.savefig(args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
