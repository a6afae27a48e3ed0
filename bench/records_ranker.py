"""A learned chooser of data regions, on a cached cross-site run: record F1 with page-grouped folds.

    python bench/records_ranker.py DATASET PRED_DIR [--cache FILE]

Each page's candidates are its groups of alike siblings at the outer and the inner level
(``region_candidates``), described by their structure and by the node model's
probabilities from the cached run (``bench/records_predict.py``: every page predicted by a model
that did not see it). A candidate's target is whether at least half of its records are gold
records. For each fold of the run, a gradient-boosted scorer is fitted on the other folds'
pages, its threshold chosen by inner folds on those pages (the best mean record F1), and the
fold's own pages are scored three ways: ``add``, the labels' grouping (``extractors.records``)
plus the kept candidates that overlap none of its records; ``alone``, the kept candidates only; ``rest``, the
kept candidates plus the labels' records that overlap none of them. Beside them, ``labels``:
the labels' grouping alone.
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import records_from_labels, row_xpaths
from hwnoise.features.columns import CONTENT
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.features.record_struct import _group_median, _is_record, alike_groups
from hwnoise.training.record_metrics import record_scores

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records_regions import inner_of  # noqa: E402

THRESHOLDS = np.round(np.arange(0.1, 0.91, 0.05), 2)

_TAGS = ("tr", "li", "div", "article", "section", "a", "td", "p", "span", "dd", "table", "ul")

REGION_FEATURES: list[str] = [
    "members", "log_members", "inner", "page_share", "rel_largest", "rank", "parent_cover",
    "dist", "depth", "len_mean", "len_cv", "link_density", "proba", "proba_min", "proba_q25",
    "proba_rows", "content_share", "content_cover", "rows_mean", "fields_mean", "chain_share",
    "outer_groups", "inner_groups", "parent_proba", "rows_proba", "candidates", "img_share",
    "a_share", "text_per_field", "head_proba_gap",
] + [f"tag_{t}" for t in _TAGS] + ["tag_other"]


@dataclass
class Candidate:
    """One candidate record set: its records' head rows (one element each), its group id and level."""

    rows: list[int]
    group: int
    inner: bool


def _subtree_sum(values: np.ndarray, last: np.ndarray) -> np.ndarray:
    cs = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    return cs[last + 1] - cs[np.arange(len(last))]


def region_candidates(walk, labels, proba: np.ndarray | None) -> tuple[list[Candidate], np.ndarray]:
    """The page's candidate record sets and their features (one row each, ``REGION_FEATURES``)."""
    rows = walk.rows
    n = len(rows)
    if n == 0:
        return [], np.zeros((0, len(REGION_FEATURES)))
    parent = rows["parent"].to_numpy(dtype=np.int64)
    tags = rows["tag"].tolist()
    chars = rows["chars"].to_numpy(dtype=np.float64)
    own = rows["own_chars"].to_numpy(dtype=np.float64)
    link = rows["link_chars"].to_numpy(dtype=np.float64)
    depth = rows["distance"].to_numpy(dtype=np.float64)
    last = np.asarray(walk.last, dtype=np.int64)
    content = np.asarray(labels, dtype=object) == CONTENT
    p = np.full(n, 0.5) if proba is None else np.where(np.isnan(proba), 0.5, proba)
    gid, dist = alike_groups(parent, tags, last)
    count = np.bincount(gid)
    gdist = _group_median(gid, dist, len(count))
    is_rec = _is_record(gid, count, gdist, parent)
    inner = inner_of(parent, chars.astype(np.int64))
    sub_rows = (last - np.arange(n) + 1).astype(np.float64)
    sub_pw = _subtree_sum(p * own, last)          # probability-weighted own characters below
    sub_own = _subtree_sum(own, last)
    sub_content = _subtree_sum(np.where(content, own, 0.0), last)
    sub_fields = _subtree_sum((own > 0).astype(np.float64), last)
    sub_rec = _subtree_sum(is_rec.astype(np.float64), last)   # record rows in each subtree, itself included
    sub_img = _subtree_sum(np.asarray([t == "img" for t in tags], dtype=np.float64), last)
    sub_a = _subtree_sum(np.asarray([t == "a" for t in tags], dtype=np.float64), last)
    rec_anc = np.zeros(n)   # record rows among each row's ancestors
    for i in range(1, n):
        q = parent[i]
        if q >= 0:
            rec_anc[i] = rec_anc[q] + is_rec[q]
    page_chars = max(chars.max(), 1.0)
    page_content = max(float(np.where(content, own, 0.0).sum()), 1.0)
    mean_p = np.where(sub_own > 0, sub_pw / np.maximum(sub_own, 1), p)
    groups = np.unique(gid[is_rec])
    gchars = {int(g): float(chars[gid == g].sum()) for g in groups}
    largest = max(gchars.values(), default=1.0)
    order = sorted(gchars, key=lambda g: -gchars[g])
    rank = {g: k for k, g in enumerate(order)}
    cands: list[Candidate] = []
    feats: list[list[float]] = []
    for g in groups:
        g = int(g)
        m = np.flatnonzero((gid == g) & is_rec)
        m = m[chars[m] > 0]
        if len(m) < 2:
            continue
        inn = inner[m]
        levels = [(False, m)] + ([(True, inn)] if (inn != m).any() else [])
        for is_inner, heads in levels:
            lens = chars[m]
            own_sum = sub_own[m].sum()
            pw = sub_pw[m].sum() / max(own_sum, 1.0)
            per = mean_p[m]
            tag = tags[int(heads[0])]
            pa = int(parent[m[0]])
            f = [len(m), np.log1p(len(m)), float(is_inner), gchars[g] / page_chars, gchars[g] / largest,
                 rank[g], gchars[g] / max(chars[pa], 1.0), gdist[g], depth[m[0]], lens.mean(),
                 lens.std() / max(lens.mean(), 1.0), link[m].sum() / max(gchars[g], 1.0), pw, per.min(),
                 np.quantile(per, 0.25), p[heads].mean(), sub_content[m].sum() / max(own_sum, 1.0),
                 sub_content[m].sum() / page_content, sub_rows[m].mean(), sub_fields[m].mean(),
                 float((inn != m).mean()), rec_anc[m[0]], (sub_rec[m] - 1).mean(), mean_p[pa],
                 p[m].mean(), 0.0, (sub_img[m] > 0).mean(), (sub_a[m] > 0).mean(),
                 lens.mean() / max(sub_fields[m].mean(), 1.0), p[inn].mean() - p[m].mean()]
            f += [float(tag == t) for t in _TAGS] + [float(tag not in _TAGS)]
            cands.append(Candidate(rows=[int(h) for h in heads], group=g, inner=is_inner))
            feats.append(f)
    X = np.asarray(feats, dtype=np.float64).reshape(len(feats), len(REGION_FEATURES))
    X[:, REGION_FEATURES.index("candidates")] = len(cands)
    return cands, X


def choose_regions(cands: list[Candidate], scores: np.ndarray, last: np.ndarray, *,
                   threshold: float = 0.5, taken: np.ndarray | None = None) -> list[Candidate]:
    """The candidates scored at least ``threshold`` whose records overlap no row of a
    better-scored candidate kept (a record inside or around another's) nor of ``taken`` (a bool
    per row: rows already in records), best first."""
    inside = np.zeros(len(last), dtype=bool) if taken is None else taken.copy()
    kept: list[Candidate] = []
    for k in np.argsort(-scores, kind="stable"):
        if scores[k] < threshold:
            break
        c = cands[k]
        if any(inside[r:int(last[r]) + 1].any() for r in c.rows):
            continue  # the subtree holds a kept row (around a record), or is inside one
        kept.append(c)
        for r in c.rows:
            inside[r:int(last[r]) + 1] = True
    return kept


def page_item(page, pred_dir: Path) -> dict | None:
    records = page.read_records()
    f = pred_dir / f"{page.id}.npz"
    if records is None or not f.is_file():
        return None
    z = np.load(f)
    labels = z["labels"].astype(object)
    proba = z["proba"] if not np.isnan(z["proba"]).all() else None
    walk, html = walk_of(page), page.read_html()
    xp = row_xpaths(html, len(walk.rows))
    gold = [[normalize_xpath(x) for x in r] for r in records]
    cands, X = region_candidates(walk, labels, proba)
    single = {g[0] for g in gold if len(g) == 1}
    y = np.asarray([np.mean([xp[r] in single for r in c.rows]) for c in cands])
    current = [r.xpaths for r in records_from_labels(walk, labels, xp, proba)]
    last = np.asarray(walk.last, dtype=np.int64)
    at = {x: i for i, x in enumerate(xp)}
    return {"page": page.id, "X": X, "y": y, "cands": cands, "xp": xp, "gold": gold,
            "current": current, "last": last, "current_rows": [[at[x] for x in r] for r in current]}


MODES = ("add", "alone", "rest")


def decode(item: dict, scores: np.ndarray, t: float, mode: str) -> list[list[str]]:
    """The page's records (XPaths) from the candidates' ``scores`` at threshold ``t``."""
    last, xp = item["last"], item["xp"]
    taken = np.zeros(len(last), dtype=bool)
    if mode == "add":
        for r in (r for rows in item["current_rows"] for r in rows):
            taken[r:int(last[r]) + 1] = True
    kept = choose_regions(item["cands"], scores, last, threshold=t, taken=taken)
    recs = [[xp[r]] for c in kept for r in c.rows]
    if mode == "add":
        return item["current"] + recs
    if mode == "rest":
        for rows in item["current_rows"]:
            if not any(taken[r:int(last[r]) + 1].any() for r in rows):
                recs.append([xp[r] for r in rows])
    return recs


def f1(item: dict, recs: list[list[str]]) -> float:
    return record_scores(recs, item["gold"])["record_f1"]


FREE_ONLY = False  # --free: fit on the candidates that overlap none of the labels' records


def free(item: dict) -> np.ndarray:
    """Which candidates overlap none of the labels' records."""
    last = item["last"]
    taken = np.zeros(len(last), dtype=bool)
    for r in (r for rows in item["current_rows"] for r in rows):
        taken[r:int(last[r]) + 1] = True
    return np.asarray([not any(taken[r:int(last[r]) + 1].any() for r in c.rows) for c in item["cands"]], dtype=bool)


def training_set(items: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates' features, targets, and weights that make every page weigh the same."""
    keep = [free(it) if FREE_ONLY else np.ones(len(it["y"]), dtype=bool) for it in items]
    X = np.vstack([it["X"][m] for it, m in zip(items, keep)])
    y = np.concatenate([it["y"][m] for it, m in zip(items, keep)]) >= 0.5
    w = np.concatenate([np.full(m.sum(), 1.0 / max(m.sum(), 1)) for m in keep])
    return X, y, w


class Scorer:
    """A gradient-boosted scorer of candidates (scikit-learn's, as the general preset's)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, seed: int = 0):
        from sklearn.ensemble import HistGradientBoostingClassifier

        self.est = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                                  min_samples_leaf=10, random_state=seed).fit(X, y, sample_weight=w)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.est.predict_proba(X)[:, 1] if len(X) else np.zeros(0)


def fit(items: list[dict]) -> Scorer:
    return Scorer(*training_set(items))


def oof_scores(items: list[dict], fold_of: dict) -> dict[str, np.ndarray]:
    """Each page's candidates scored by a scorer fitted on the other folds' pages."""
    out = {}
    for k in sorted({fold_of[it["page"]] for it in items}):
        sc = fit([it for it in items if fold_of[it["page"]] != k])
        out.update({it["page"]: sc.scores(it["X"]) for it in items if fold_of[it["page"]] == k})
    return out


def best_t(items: list[dict], scores: dict[str, np.ndarray], mode: str) -> float:
    res = {t: np.mean([f1(it, decode(it, scores[it["page"]], t, mode)) for it in items]) for t in THRESHOLDS}
    return float(max(THRESHOLDS, key=lambda t: (res[t], -abs(t - 0.5))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path)
    ap.add_argument("--cache", type=Path, default=None, help="pickle of the pages' candidates (made if absent)")
    ap.add_argument("--free", action="store_true",
                    help="fit on the candidates that overlap none of the labels' records only")
    a = ap.parse_args(argv)
    global FREE_ONLY
    FREE_ONLY = a.free
    fold_of = json.loads((a.pred / "meta.json").read_text(encoding="utf-8"))["pages"]
    if a.cache and a.cache.is_file():
        items = pickle.loads(a.cache.read_bytes())
    else:
        items = [it for it in (page_item(p, a.pred) for p in Dataset(a.dataset).pages()) if it]
        if a.cache:
            a.cache.write_bytes(pickle.dumps(items))
    print(f"{len(items)} pages, {sum(len(it['y']) for it in items)} candidates, "
          f"{len(REGION_FEATURES)} features")
    out: dict[str, list[float]] = {"labels": [], **{m: [] for m in MODES}}
    per_fold: dict[str, list[float]] = {k: [] for k in out}
    for k in sorted(set(fold_of.values())):
        tr = [it for it in items if fold_of[it["page"]] != k]
        te = [it for it in items if fold_of[it["page"]] == k]
        scorer = fit(tr)
        inner = oof_scores(tr, fold_of)  # the other folds' pages, each scored without its own fold
        fold = {"labels": [f1(it, it["current"]) for it in te]}
        ts = {}
        for mode in MODES:
            ts[mode] = t = best_t(tr, inner, mode)
            fold[mode] = [f1(it, decode(it, scorer.scores(it["X"]), t, mode)) for it in te]
        for key, v in fold.items():
            out[key] += v
            per_fold[key].append(float(np.mean(v)))
        print(f"fold {k}: " + ", ".join(f"{key} {np.mean(v):.3f}" for key, v in fold.items())
              + "  (thresholds " + ", ".join(f"{m} {t:.2f}" for m, t in ts.items()) + ")", flush=True)
    for key, v in out.items():
        print(f"{key}: record F1 {np.mean(v):.3f} over {len(v)} pages; per fold "
              + " ".join(f"{x:.3f}" for x in per_fold[key]))
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


if __name__ == "__main__":
    raise SystemExit(main())
