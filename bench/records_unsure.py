"""Which share of the page's most confident region should a region reach to stay? Scored on the
cached predictions of ``bench/records_predict.py`` (the same folds, labels and records as
``hwnoise evaluate DATASET --methods model --protocol cross-site``), without refitting.

For each share R (and each absolute cut ``aC``), every page's final records lose the regions whose
confidence (``records.region_conf``) is under R times the page's most confident region's (under C),
the page's hidden records are added as ``hwnoise evaluate`` adds them, and the page's record F1 is
computed; then, for each fold, the share best on the other folds is scored on it (held out).
Share 0 reproduces the cached run's record F1. README "Records" (session 23)::

    python bench/records_predict.py DATASET P [--seed 2]
    python bench/records_unsure.py DATASET P
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import _regions, drop_unsure, records_from_labels, walk_xpaths, with_hidden
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.training.record_metrics import page_record_scores

CUTS = (0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, "a0.2", "a0.3", "a0.4")


def page_scores(dataset: Path, preds: Path) -> pd.DataFrame:
    """One row per page: its fold and its record F1 under each of ``CUTS``."""
    fold = json.loads((preds / "meta.json").read_text())["pages"]
    out = {}
    for page in Dataset(dataset).pages():
        cached = preds / f"{page.id}.records.json"
        if not cached.exists() or page.read_records() is None:
            continue
        walk = walk_of(page, keep_tree=True)
        xp, keys = walk_xpaths(walk, text_keys=True)
        gold = [[normalize_xpath(x) for x in r] for r in page.read_records()]
        z = np.load(preds / f"{page.id}.npz", allow_pickle=True)
        labels, proba = z["labels"], z["proba"]
        recs = json.loads(cached.read_text())
        key, _, conf = _regions(walk, recs, proba) if recs else ([], {}, {})
        row = {"fold": fold[page.id]}
        for c in CUTS:
            if isinstance(c, str):  # an absolute cut
                kept = [r for k, r in zip(key, recs) if conf[k] >= float(c[1:])]
            else:  # a share of the page's surest region: the product's own rule
                kept = drop_unsure(walk, recs, proba, c)
            found = with_hidden(records_from_labels(walk, labels, xp, proba, records=kept), walk.root,
                                walk.elements, xp)
            row[c] = page_record_scores([r.xpaths for r in found], gold, keys)["record_f1"]
        out[page.id] = row
    return pd.DataFrame.from_dict(out, orient="index")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("preds", type=Path, help="the folder bench/records_predict.py wrote")
    a = ap.parse_args(argv)
    d = page_scores(a.dataset, a.preds)
    base = d[0].to_numpy(float)
    print("| cut | record F1 | paired with 0 |\n|---|---:|---:|")
    for c in CUTS:
        diff = d[c].to_numpy(float) - base
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
        print(f"| {c} | {d[c].mean():.4f} | {diff.mean():+.4f} ± {se:.4f} ({(diff > 1e-9).sum()} up, "
              f"{(diff < -1e-9).sum()} down) |")
    held = []
    for f in sorted(d["fold"].unique()):
        train, test = d[d["fold"] != f], d[d["fold"] == f]
        best = max(CUTS, key=lambda c: train[c].mean())
        held += list(test[best])
        print(f"fold {f}: chosen on the others {best}, held out {test[best].mean():.4f} (share 0: {test[0].mean():.4f})")
    print(f"held out over all pages {np.mean(held):.4f} against {base.mean():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
