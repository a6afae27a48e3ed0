"""Would a bag of node models give better records than one? An offline check on the caches of
``bench/records_raw.py predict`` for several fold seeds.

For a page, each seed's cache holds the labels and content probabilities of the model of the
fold that held the page out: models trained on different sets of 80 other pages. Their mean
probability (cut at the mean of their thresholds, ``bagmean``) or their majority vote
(``bagvote``) is what a bag of those models would say of the page, a model none of whose
members saw it. Each is grouped as ``records_raw.py replay`` groups (every step, each seed's
fold region scorer in turn) and scored against the same seed's single model. Usage::

    python bench/records_bag.py DATASET RAW1 RAW2 RAW3 RAW4 [--csv per-page.csv]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from records_raw import cached_labels, read_cache

from hwnoise.dataset import Dataset


def _threshold(labels: np.ndarray, proba: np.ndarray) -> float:
    """The cut a fold's model used on a page: its least probable content node's probability."""
    content = proba[labels == "N"]
    return float(content.min()) if len(content) else 0.5


def bagged(dataset: Path, raws: list[Path]) -> tuple[pd.DataFrame, dict[str, float]]:
    """Each page's record F1 for each seed's single model and the two bags (with that seed's
    region scorer), and each variant's pooled node content F1."""
    from hwnoise.extractors import records as R
    from hwnoise.extractors.base import walk_of
    from hwnoise.features.labels import page_labels
    from hwnoise.features.record_gold import normalize_xpath
    from hwnoise.training.metrics import node_scores
    from hwnoise.training.record_metrics import page_record_scores

    caches = [read_cache(raw) for raw in raws]
    options = R.GroupingOptions.from_dict({})
    rows, truth, content = [], [], {}
    for page in Dataset(dataset).pages():
        records = page.read_records()
        if records is None or any(page.id not in meta["pages"] for meta, _ in caches):
            continue
        cached = [cached_labels(raw, page.id) for raw in raws]
        if not len(cached[0][0]) or any(p is None for _, p in cached):
            continue
        walk = walk_of(page, keep_tree=True)
        xp, keys = R.walk_xpaths(walk, text_keys=True)
        gold = [[normalize_xpath(x) for x in r] for r in records]
        truth.append(np.asarray(page_labels(walk, page.read_gold(), html=page.read_html(), records=records),
                                dtype=object))
        probas = np.vstack([p for _, p in cached])
        votes = (np.vstack([lab for lab, _ in cached]) == "N").sum(axis=0)
        mean = probas.mean(axis=0)
        cut = float(np.mean([_threshold(lab, p) for lab, p in cached]))
        row = {"page": page.id}
        for s, (meta, scorers) in enumerate(caches, 1):
            variants = {"single": cached[s - 1],
                        "bagmean": (np.where(mean >= cut, "N", "S").astype(object), mean),
                        "bagvote": (np.where(2 * votes >= len(raws), "N", "S").astype(object), mean)}
            for name, (labels, proba) in variants.items():
                recs = R.record_rows(walk, labels, proba, options=options, scorer=scorers[meta["pages"][page.id]])
                lab = R.records_content(walk, labels, recs)
                got = R.with_hidden(R.records_from_labels(walk, lab, xp, proba, records=recs),
                                    walk.root, walk.elements, xp)
                row[f"{name}{s}"] = page_record_scores([r.xpaths for r in got], gold, keys)["record_f1"]
                content.setdefault(f"{name}{s}", []).append(lab)
        rows.append(row)
    every = np.concatenate(truth) if truth else np.zeros(0, dtype=object)
    return pd.DataFrame(rows), {k: node_scores(every, np.concatenate(v))["content_f1"] for k, v in content.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", type=Path)
    p.add_argument("raws", type=Path, nargs="+", help="records_raw.py predict caches, one per fold seed")
    p.add_argument("--csv", type=Path)
    args = p.parse_args()
    df, content = bagged(args.dataset, args.raws)
    if args.csv:
        df.to_csv(args.csv, index=False)
    n = len(args.raws)
    for name in ("single", "bagmean", "bagvote"):
        cols = [f"{name}{s}" for s in range(1, n + 1)]
        print(f"{name:8s} record F1 " + " ".join(f"{df[c].mean():.4f}" for c in cols)
              + f"  mean {df[cols].mean(axis=1).mean():.4f}   content F1 "
              + " ".join(f"{content[c]:.4f}" for c in cols))
    for name in ("bagmean", "bagvote"):
        d = (df[[f"{name}{s}" for s in range(1, n + 1)]].to_numpy()
             - df[[f"single{s}" for s in range(1, n + 1)]].to_numpy()).ravel()
        print(f"{name} - single: {d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(len(d)):.4f} over {len(d)} page-runs "
              f"({(d > 0.005).sum()} up, {(d < -0.005).sum()} down)")


if __name__ == "__main__":
    main()
