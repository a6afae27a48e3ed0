"""A learned chooser of data regions, on a cached cross-site run: record F1 and node content F1
with page-grouped folds.

    python bench/records_ranker.py DATASET PRED_DIR [--cache FILE] [--free] [--metric paper|element]

PRED_DIR holds the node model's own labels and probabilities, every page predicted by a model
that did not see it (``bench/records_predict.py DATASET PRED_DIR --preset records
--content-from nodes``). Each page's candidates are its groups of alike siblings at the outer
and the inner level (``extractors.regions.region_candidates``). A candidate's target is whether
at least half of its records are gold records (with ``--metric paper``, the default, a record
that holds the same text XPaths as a gold one, as the paper's metric counts it; with
``element``, the gold's very element). For each fold of the run, the scorer
(``RegionScorer``) is fitted on the other folds' pages, its threshold chosen by inner folds on
those pages (the best record F1 + node content F1), and the fold's own pages are scored three
ways: ``add``, the labels' grouping (``extractors.records``) plus the kept candidates that
overlap none of its records (what a model with a scorer does, the shipped ``records`` model);
``alone``, the kept candidates only; ``rest``, the kept candidates plus the labels' records
that overlap none of them; ``rest+veto``, ``rest`` with the veto chosen beside its threshold
(what ``hwnoise train`` fits since session 14). Beside them, ``labels``: the labels' grouping
alone. The content is the records' rows (``content_from="records"``; the labels on a page without records).
"""
from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import rows_inside
from hwnoise.extractors.region_fit import (METRICS, RegionPage, best_setting, best_threshold, oof_scores,
                                           page_records, page_result, region_page, summary, training_set)
from hwnoise.extractors.regions import REGION_FEATURES, REGION_MODES, RegionScorer
from hwnoise.features.columns import CONTENT
from hwnoise.features.labels import page_labels
from hwnoise.training.record_metrics import record_scores

MODES = REGION_MODES
#: ``rest`` with the veto chosen beside its threshold (``region_fit.best_setting``), as ``hwnoise train`` fits it.
VETO = "rest+veto"


def page_item(page, pred_dir: Path) -> RegionPage | None:
    """One page's ``RegionPage`` from the cached run's labels and probabilities."""
    records = page.read_records()
    f = pred_dir / f"{page.id}.npz"
    if records is None or not f.is_file():
        return None
    z = np.load(f)
    labels = z["labels"].astype(object)
    proba = z["proba"] if not np.isnan(z["proba"]).all() else None
    walk, html = walk_of(page, keep_tree=True), page.read_html()
    gold_labels = np.asarray(page_labels(walk, page.read_gold(), html=html, records=records), dtype=object)
    return region_page(page.id, walk, labels, proba, records, gold_labels == CONTENT)


def free(item: RegionPage) -> np.ndarray:
    """Which candidates overlap none of the labels' records."""
    last = item.last
    taken = rows_inside(item.current, last)
    return np.asarray([not any(taken[r:int(last[r]) + 1].any() for r in c.rows) for c in item.cands], dtype=bool)


def fit(items: list[RegionPage], metric: str, free_only: bool) -> RegionScorer:
    return RegionScorer.fit(*training_set(items, metric, [free(it) for it in items] if free_only else None))


def f1(item: RegionPage, recs: list[list[int]], metric: str) -> float:
    return record_scores([[item.xp[r] for r in rec] for rec in recs], item.gold,
                         item.text_keys if metric == "paper" else None)["record_f1"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path)
    ap.add_argument("--cache", type=Path, default=None, help="pickle of the pages' candidates (made if absent)")
    ap.add_argument("--free", action="store_true",
                    help="fit on the candidates that overlap none of the labels' records only")
    ap.add_argument("--metric", choices=METRICS, default="paper",
                    help="record F1 as NEXT-EVAL's paper computes it (records expanded to their text "
                         "XPaths, the default) or over the records' own XPaths (element)")
    a = ap.parse_args(argv)
    metric = a.metric
    fold_of = json.loads((a.pred / "meta.json").read_text(encoding="utf-8"))["pages"]
    items = load_items(a.dataset, a.pred, a.cache)
    print(f"{len(items)} pages, {sum(len(it.y) for it in items)} candidates, "
          f"{len(REGION_FEATURES)} features")
    keys = ("labels", *MODES, VETO)
    out: dict[str, list] = {k: [] for k in keys}
    per_fold: dict[str, list[tuple[float, float]]] = {k: [] for k in keys}
    for k in sorted(set(fold_of.values())):
        tr = [it for it in items if fold_of[it.page] != k]
        te = [it for it in items if fold_of[it.page] == k]
        scorer = fit(tr, metric, a.free)
        inner = oof_scores(tr, fold_of, metric)  # the other folds' pages, each scored without its own fold
        ts = {"labels": 1.0, **{mode: best_threshold(tr, inner, mode, metric) for mode in MODES}}
        ts[VETO], veto = best_setting(tr, inner, "rest", metric)
        for key in keys:
            got = [page_result(it, scorer.scores(it.X), ts[key], "rest" if key == VETO else key, metric,
                               veto if key == VETO else 0.0) for it in te]
            out[key] += got
            per_fold[key].append(summary(got))
        print(f"fold {k}: " + ", ".join(f"{key} {per_fold[key][-1][0]:.3f} ({per_fold[key][-1][1]:.3f})"
                                        for key in keys)
              + "  (thresholds " + ", ".join(f"{m} {ts[m]:.2f}" for m in MODES)
              + f"; {VETO} {ts[VETO]:.2f}, veto {veto:.2f})", flush=True)
    print("record F1 (node content F1), each fold's threshold chosen on the other folds' pages:")
    for key in keys:
        rec, con = summary(out[key])
        print(f"  {key}: {rec:.3f} ({con:.3f}) over {len(out[key])} pages; per fold "
              + " ".join(f"{r:.3f} ({c:.3f})" for r, c in per_fold[key]))
    # how well the scorer ranks: each page's candidates scored out of fold
    oof = oof_scores(items, fold_of, metric)
    alone = [np.asarray([f1(it, [[r] for r in c.rows], metric) for c in it.cands]) for it in items]
    top = [a[np.argmax(oof[it.page])] if len(a) else 0.0 for it, a in zip(items, alone)]
    best = [a.max() if len(a) else 0.0 for a in alone]
    print(f"one candidate a page (out of fold): the top-scored {np.mean(top):.3f}, the best (oracle) {np.mean(best):.3f}")
    lab = np.asarray([f1(it, it.current, metric) for it in items])
    for t in (0.3, 0.5):
        al = np.asarray([f1(it, page_records(it, oof[it.page], t, "alone"), metric) for it in items])
        print(f"per page the better of the labels' grouping and 'alone' at {t} (oracle): "
              f"{np.maximum(lab, al).mean():.3f} (labels {lab.mean():.3f}, alone {al.mean():.3f})")
    return 0


def load_items(dataset: Path, pred: Path, cache: Path | None) -> list[RegionPage]:
    """Every page's ``page_item``, from ``cache`` when it exists (written when it does not)."""
    if cache and cache.is_file():
        return pickle.loads(cache.read_bytes())
    items = [it for it in (page_item(p, pred) for p in Dataset(dataset).pages()) if it]
    if cache:
        cache.write_bytes(pickle.dumps(items))
    return items


if __name__ == "__main__":
    raise SystemExit(main())
