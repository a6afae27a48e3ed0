"""The whole record grouping rerun offline: cache a cross-site run's *raw* node labels and content
probabilities (before any grouping) and each fold's region scorer, then rerun ``record_rows`` --
the labels' grouping, the scorer's regions, the steps after them -- under grouping settings, page
by page, without refitting anything.

``bench/records_predict.py`` caches a run's final records, which serves the steps after the region
scorer only (``drop_thin``, ``drop_unsure``); this one serves every step of the grouping, as long as
the region scorer's fit does not see the step (``region_fit._FIT_GROUPING``) and the node model's
features do not change. The folds and fits are ``hwnoise evaluate``'s own (``plan``, ``fit_fold``),
so at the code of the run ``replay`` with no option gives ``hwnoise evaluate DATASET --methods model
--protocol cross-site --seed S``'s record F1 and node content F1 to the digit (docs/records.md,
session 34). Usage::

    python bench/records_raw.py predict DATASET RAW [--seed 1]         # about 10 min on 2 cores
    python bench/records_raw.py replay DATASET RAW '{"before": {"box_fields": 0}, "now": {}}' --csv out.csv

``replay`` prints each setting's mean record F1 (the paper's metric, hidden records added as
``evaluate`` adds them), its pooled node content F1 (content from the records) and its per-fold
means; ``--csv`` writes every page's record F1 under each setting, with its fold.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from hwnoise.dataset import Dataset


def predict(dataset: Path, out: Path, seed: int, folds: int = 5) -> None:
    """Fit every fold as ``hwnoise evaluate`` does and cache each test page's raw labels and
    probabilities (``OUT/PAGE.npz``) and each fold's region scorer (``OUT/meta.json``)."""
    from hwnoise.evaluate import EvalSettings, fit_fold, load_pages, plan
    from hwnoise.extractors.base import walk_of
    from hwnoise.features.assembly import assemble_page
    from hwnoise.extractors.model import on_walk_rows, run_extractor

    settings = EvalSettings(methods=("model",), options={"model": {"preset": "auto"}}, seed=seed)
    plan_folds, _ = plan([Dataset(dataset)], "cross-site", False, seed=seed, k=folds)
    out.mkdir(parents=True, exist_ok=True)
    meta: dict = {"dataset": str(dataset), "seed": seed, "pages": {}, "regions": {}}
    for fold in plan_folds:
        t0 = time.perf_counter()
        method = fit_fold(fold, settings)[0]["model"]
        model = method.model
        meta["regions"][fold.index] = getattr(model, "regions", None)
        for page in load_pages(fold.test):
            walk = walk_of(page, keep_tree=True)
            rows = assemble_page(page, model.features, stacker=run_extractor, cache=method.cache, walk=walk).rows
            labels, p = on_walk_rows(*model.predict_with_proba(rows, proba=len(rows) > 0), rows, walk)
            labels = np.asarray(labels, dtype=object)
            p = np.full(len(labels), np.nan) if p is None else p
            np.savez_compressed(out / f"{page.id}.npz", labels=labels.astype(str), proba=p)
            meta["pages"][page.id] = fold.index
        print(f"fold {fold.index + 1}/{fold.total}: {time.perf_counter() - t0:.0f} s", flush=True)
        (out / "meta.json").write_text(json.dumps(meta, default=str), encoding="utf-8")


def read_cache(raw: Path) -> tuple[dict, dict]:
    """A cache's ``meta.json`` and each fold's region scorer (None where the fold had none)."""
    from hwnoise.extractors.regions import RegionScorer

    meta = json.loads((raw / "meta.json").read_text(encoding="utf-8"))
    return meta, {int(k): (RegionScorer.from_dict(v) if v else None) for k, v in meta["regions"].items()}


def cached_labels(raw: Path, page_id: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A cached page's raw labels and content probabilities (None when the model gave none)."""
    z = np.load(raw / f"{page_id}.npz")
    return z["labels"].astype(object), (None if np.isnan(z["proba"]).all() else z["proba"])


def replay(dataset: Path, raw: Path, settings: dict[str, dict]) -> tuple[pd.DataFrame, dict[str, float]]:
    """Every cached page's record F1 under each named setting (``GroupingOptions`` knobs), and each
    setting's pooled node content F1."""
    from hwnoise.extractors.base import walk_of
    from hwnoise.extractors import records as R
    from hwnoise.features.labels import page_labels
    from hwnoise.features.record_gold import normalize_xpath
    from hwnoise.training.metrics import node_scores
    from hwnoise.training.record_metrics import page_record_scores

    meta, scorers = read_cache(raw)
    options = {name: R.GroupingOptions.from_dict(o) for name, o in settings.items()}
    rows, gold_labels, content = [], [], {name: [] for name in settings}
    for page in Dataset(dataset).pages():
        records = page.read_records()
        if page.id not in meta["pages"] or records is None:
            continue
        fold = meta["pages"][page.id]
        walk = walk_of(page, keep_tree=True)
        labels, proba = cached_labels(raw, page.id)
        xp, keys = R.walk_xpaths(walk, text_keys=True)
        gold = [[normalize_xpath(x) for x in r] for r in records]
        gold_labels.append(np.asarray(page_labels(walk, page.read_gold(), html=page.read_html(), records=records),
                                      dtype=object))
        row = {"page": page.id, "fold": fold}
        for name, opt in options.items():
            recs = R.record_rows(walk, labels, proba, options=opt, scorer=scorers[fold]) if len(labels) else []
            lab = R.records_content(walk, labels, recs)  # the preset's content_from "records"
            got = R.with_hidden(R.records_from_labels(walk, lab, xp, proba, records=recs), walk.root, walk.elements, xp)
            row[name] = page_record_scores([r.xpaths for r in got], gold, keys)["record_f1"]
            content[name].append(lab)
        rows.append(row)
    truth = np.concatenate(gold_labels) if gold_labels else np.zeros(0, dtype=object)
    cf = {name: node_scores(truth, np.concatenate(v))["content_f1"] for name, v in content.items() if v}
    return pd.DataFrame(rows), cf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict", help="cache the raw labels and the fold scorers")
    p.add_argument("dataset", type=Path)
    p.add_argument("raw", type=Path)
    p.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("replay", help="rerun the grouping under settings")
    r.add_argument("dataset", type=Path)
    r.add_argument("raw", type=Path)
    r.add_argument("settings", help='JSON: {"NAME": {KNOB: VALUE, ...}, ...} (GroupingOptions knobs)')
    r.add_argument("--csv", type=Path)
    a = ap.parse_args()
    if a.cmd == "predict":
        predict(a.dataset, a.raw, a.seed)
        return
    table, cf = replay(a.dataset, a.raw, json.loads(a.settings))
    for name in cf:
        print(f"{name}: record F1 {table[name].mean():.4f}, content F1 {cf[name]:.4f}, per fold "
              f"{table.groupby('fold')[name].mean().round(3).tolist()}")
    if a.csv:
        table.to_csv(a.csv, index=False)


if __name__ == "__main__":
    main()
