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
that overlap none of them. Beside them, ``labels``: the labels' grouping alone. The content is
the records' rows (``content_from="records"``; the labels on a page without records).
"""
from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import record_rows, row_xpaths, rows_inside
from hwnoise.extractors.regions import REGION_FEATURES, REGION_MODES, RegionScorer, combine_regions, region_candidates
from hwnoise.features.columns import CONTENT
from hwnoise.features.labels import page_labels
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.training.record_metrics import expand_records, record_scores

METRIC = "paper"
THRESHOLDS = np.round(np.arange(0.1, 0.91, 0.05), 2)

def page_item(page, pred_dir: Path) -> dict | None:
    """What the bench needs of one page: candidates, their features and targets, the labels'
    records, the gold records and node labels."""
    records = page.read_records()
    f = pred_dir / f"{page.id}.npz"
    if records is None or not f.is_file():
        return None
    z = np.load(f)
    labels = z["labels"].astype(object)
    proba = z["proba"] if not np.isnan(z["proba"]).all() else None
    walk, html = walk_of(page), page.read_html()
    xp, text_keys = row_xpaths(html, len(walk.rows), text_keys=True)
    gold = [[normalize_xpath(x) for x in r] for r in records]
    cands, X = region_candidates(walk, labels, proba)
    single = {g[0] for g in gold if len(g) == 1}
    y = np.asarray([np.mean([xp[r] in single for r in c.rows]) for c in cands])
    # the paper's metric: a candidate's record is a gold one when it holds the same text XPaths
    same_text = set(expand_records(gold, text_keys))
    y_paper = np.asarray([np.mean([e in same_text for e in expand_records([[xp[r]] for r in c.rows], text_keys)])
                          for c in cands])
    current = record_rows(walk, labels, proba)
    gold_labels = np.asarray(page_labels(walk, page.read_gold(), html=html, records=records), dtype=object)
    return {"page": page.id, "X": X, "y": y, "y_paper": y_paper, "text_keys": text_keys,
            "cands": cands, "xp": xp, "gold": gold,
            "last": np.asarray(walk.last, dtype=np.int64), "current_rows": current,
            "current": [[xp[r] for r in rec] for rec in current],
            "labels": labels == CONTENT, "gold_content": gold_labels == CONTENT}


MODES = REGION_MODES


def decode_rows(item: dict, scores: np.ndarray, t: float, mode: str) -> list[list[int]]:
    """The page's records (rows) from the candidates' ``scores`` at threshold ``t``: the labels'
    grouping alone (``labels``), or joined with the kept candidates as a model's scorer does
    (``extractors.regions.combine_regions``)."""
    if mode == "labels":
        return item["current_rows"]
    return combine_regions(item["current_rows"], item["cands"], scores, item["last"], t, mode)


def decode(item: dict, scores: np.ndarray, t: float, mode: str) -> list[list[str]]:
    """The page's records as XPaths (``decode_rows``)."""
    return [[item["xp"][r] for r in rec] for rec in decode_rows(item, scores, t, mode)]


def f1(item: dict, recs: list[list[str]]) -> float:
    """Record F1 of one page by the chosen metric (``--metric``)."""
    return record_scores(recs, item["gold"], item["text_keys"] if METRIC == "paper" else None)["record_f1"]


def target(item: dict) -> np.ndarray:
    """Each candidate's share of gold records, by the chosen metric."""
    return item["y_paper"] if METRIC == "paper" else item["y"]


def page_result(item: dict, scores: np.ndarray, t: float, mode: str) -> tuple[float, int, int, int]:
    """Record F1 and the content's TP, FP, FN when the content is the records' rows
    (``records_content``: the labels kept on a page without records)."""
    recs = decode_rows(item, scores, t, mode)
    pred = rows_inside(recs, item["last"]) if recs else item["labels"]
    g = item["gold_content"]
    return (f1(item, [[item["xp"][r] for r in rec] for rec in recs]),
            int((pred & g).sum()), int((pred & ~g).sum()), int((~pred & g).sum()))


def summary(results: list[tuple[float, int, int, int]]) -> tuple[float, float]:
    """Mean record F1 over pages and node content F1 over all their nodes."""
    tp, fp, fn = (sum(r[k] for r in results) for k in (1, 2, 3))
    return float(np.mean([r[0] for r in results])), 2 * tp / max(2 * tp + fp + fn, 1)


FREE_ONLY = False  # --free: fit on the candidates that overlap none of the labels' records


def free(item: dict) -> np.ndarray:
    """Which candidates overlap none of the labels' records."""
    last = item["last"]
    taken = rows_inside(item["current_rows"], last)
    return np.asarray([not any(taken[r:int(last[r]) + 1].any() for r in c.rows) for c in item["cands"]], dtype=bool)


def training_set(items: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates' features, targets, and weights that make every page weigh the same."""
    keep = [free(it) if FREE_ONLY else np.ones(len(it["y"]), dtype=bool) for it in items]
    X = np.vstack([it["X"][m] for it, m in zip(items, keep)])
    y = np.concatenate([target(it)[m] for it, m in zip(items, keep)]) >= 0.5
    w = np.concatenate([np.full(m.sum(), 1.0 / max(m.sum(), 1)) for m in keep])
    return X, y, w


def fit(items: list[dict]) -> RegionScorer:
    return RegionScorer.fit(*training_set(items))


def oof_scores(items: list[dict], fold_of: dict) -> dict[str, np.ndarray]:
    """Each page's candidates scored by a scorer fitted on the other folds' pages."""
    out = {}
    for k in sorted({fold_of[it["page"]] for it in items}):
        sc = fit([it for it in items if fold_of[it["page"]] != k])
        out.update({it["page"]: sc.scores(it["X"]) for it in items if fold_of[it["page"]] == k})
    return out


def best_t(items: list[dict], scores: dict[str, np.ndarray], mode: str) -> float:
    """The threshold with the best record F1 + content F1 on ``items`` (scored out of fold)."""
    res = {t: sum(summary([page_result(it, scores[it["page"]], t, mode) for it in items])) for t in THRESHOLDS}
    return float(max(THRESHOLDS, key=lambda t: (res[t], -abs(t - 0.5))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path)
    ap.add_argument("--cache", type=Path, default=None, help="pickle of the pages' candidates (made if absent)")
    ap.add_argument("--free", action="store_true",
                    help="fit on the candidates that overlap none of the labels' records only")
    ap.add_argument("--metric", choices=("paper", "element"), default="paper",
                    help="record F1 as NEXT-EVAL's paper computes it (records expanded to their text "
                         "XPaths, the default) or over the records' own XPaths (element)")
    a = ap.parse_args(argv)
    global FREE_ONLY, METRIC
    FREE_ONLY, METRIC = a.free, a.metric
    fold_of = json.loads((a.pred / "meta.json").read_text(encoding="utf-8"))["pages"]
    items = load_items(a.dataset, a.pred, a.cache)
    print(f"{len(items)} pages, {sum(len(it['y']) for it in items)} candidates, "
          f"{len(REGION_FEATURES)} features")
    keys = ("labels", *MODES)
    out: dict[str, list] = {k: [] for k in keys}
    per_fold: dict[str, list[tuple[float, float]]] = {k: [] for k in keys}
    for k in sorted(set(fold_of.values())):
        tr = [it for it in items if fold_of[it["page"]] != k]
        te = [it for it in items if fold_of[it["page"]] == k]
        scorer = fit(tr)
        inner = oof_scores(tr, fold_of)  # the other folds' pages, each scored without its own fold
        ts = {"labels": 1.0, **{mode: best_t(tr, inner, mode) for mode in MODES}}
        for key in keys:
            got = [page_result(it, scorer.scores(it["X"]), ts[key], key) for it in te]
            out[key] += got
            per_fold[key].append(summary(got))
        print(f"fold {k}: " + ", ".join(f"{key} {per_fold[key][-1][0]:.3f} ({per_fold[key][-1][1]:.3f})"
                                        for key in keys)
              + "  (thresholds " + ", ".join(f"{m} {ts[m]:.2f}" for m in MODES) + ")", flush=True)
    print("record F1 (node content F1), each fold's threshold chosen on the other folds' pages:")
    for key in keys:
        rec, con = summary(out[key])
        print(f"  {key}: {rec:.3f} ({con:.3f}) over {len(out[key])} pages; per fold "
              + " ".join(f"{r:.3f} ({c:.3f})" for r, c in per_fold[key]))
    # how well the scorer ranks: each page's candidates scored out of fold
    oof = oof_scores(items, fold_of)
    alone = [np.asarray([f1(it, [[it["xp"][r]] for r in c.rows]) for c in it["cands"]]) for it in items]
    top = [a[np.argmax(oof[it["page"]])] if len(a) else 0.0 for it, a in zip(items, alone)]
    best = [a.max() if len(a) else 0.0 for a in alone]
    print(f"one candidate a page (out of fold): the top-scored {np.mean(top):.3f}, the best (oracle) {np.mean(best):.3f}")
    lab = np.asarray([f1(it, it["current"]) for it in items])
    for t in (0.3, 0.5):
        al = np.asarray([f1(it, decode(it, oof[it["page"]], t, "alone")) for it in items])
        print(f"per page the better of the labels' grouping and 'alone' at {t} (oracle): "
              f"{np.maximum(lab, al).mean():.3f} (labels {lab.mean():.3f}, alone {al.mean():.3f})")
    return 0


def load_items(dataset: Path, pred: Path, cache: Path | None) -> list[dict]:
    """Every page's ``page_item``, from ``cache`` when it exists (written when it does not)."""
    if cache and cache.is_file():
        return pickle.loads(cache.read_bytes())
    items = [it for it in (page_item(p, pred) for p in Dataset(dataset).pages()) if it]
    if cache:
        cache.write_bytes(pickle.dumps(items))
    return items


if __name__ == "__main__":
    raise SystemExit(main())
