"""Cache a cross-site run's node predictions per page, so the grouping of labels into records
can be studied offline (``bench/records_loss.py``) without refitting the model.

The folds are ``hwnoise evaluate``'s own (``hwnoise.evaluate.plan`` and ``fit_fold``: the same
pages in the same folds, the same fitted model as ``hwnoise evaluate DATASET --methods model
--protocol cross-site``). For every test page it writes ``OUT/PAGE.npz`` with the model's
labels (``labels``, "S"/"N" per walker row) and its content probability (``proba``; NaN
where the classifier gives none), both ``ModelMethod.node_predictions``, the records it grouped
(``OUT/PAGE.records.json``, each a list of walker rows, where the model groups records), and ``OUT/meta.json``
(preset, features, seed, folds, each page's fold). Usage::

    python bench/records_predict.py DATASET OUT [--preset general] [--features page+records]
                                    [--content-from nodes|records]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.evaluate import EvalSettings, fit_fold, load_pages, plan
from hwnoise.extractors.base import walk_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--preset", default="auto")
    ap.add_argument("--features", default=None)
    ap.add_argument("--content-from", choices=("nodes", "records"), default=None,
                    help="the spec's content_from (default: the preset's); nodes keeps the model's own labels")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--folds", type=int, default=5)
    a = ap.parse_args()
    opts = {"preset": a.preset}
    if a.features:
        opts["features"] = a.features
    if a.content_from:
        opts["content_from"] = a.content_from
    settings = EvalSettings(methods=("model",), options={"model": opts}, seed=a.seed)
    folds, _ = plan([Dataset(a.dataset)], "cross-site", False, seed=a.seed, k=a.folds)
    a.out.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": str(a.dataset), "options": opts, "seed": a.seed, "folds": a.folds, "pages": {}}
    for fold in folds:
        t0 = time.perf_counter()
        methods, _, _ = fit_fold(fold, settings)
        method = methods["model"]
        meta["spec"] = method.spec.to_dict()
        meta["features_used"] = list(method.model.features)
        for page in load_pages(fold.test):
            walk = walk_of(page, keep_tree=True)
            labels, proba, records = method.node_predictions(page, walk, records=True)  # what evaluate groups
            labels = np.asarray(labels, dtype=object)
            proba = np.full(len(labels), np.nan) if proba is None else proba
            np.savez_compressed(a.out / f"{page.id}.npz", labels=labels.astype(str), proba=proba)
            if records is not None:  # the records the model grouped (rows), as evaluate scores them
                (a.out / f"{page.id}.records.json").write_text(json.dumps([[int(r) for r in rec] for rec in records]))
            meta["pages"][page.id] = fold.index
        print(f"fold {fold.index + 1}/{fold.total}: {len(fold.test)} pages, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    (a.out / "meta.json").write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
