"""A learned keep/drop of the grouping's final regions in place of its hard region filters, offline
over ``bench/records_raw.py`` caches (issue 17; docs/records.md, "A learned keep or drop of the final regions": tried, not kept).

The *pool*: ``record_rows`` with the size filter, ``drop_unsure`` and ``drop_thin`` off (``min_rel``,
``rel_conf``, ``rich_fields`` 0), the fold's region scorer on, and its *regions* (the records that
share a parent, ``records._regions``). The default grouping's regions are a subset of the pool's:
keeping those the default keeps (``in_base``) gives its records on every page, to the digit. Each
region gets 24 numbers (its share of the page's record text and of the largest region's, its
confidence and that relative to the page's surest, fields per record, thin-ness, whether another
region is rich, the three filters' verdicts, whether the default keeps it, the fold scorer's best
and mean score on its heads, depth, link density, records, ranks) and a target.

Decisions (``--mode``), each learner fitted on the regions of the other four folds' pages of a seed
(the folds of its ``meta.json``), its threshold(s) chosen by inner folds on those four (best record
F1 + pooled node content F1), applied to the held-out fold:

- ``keep``: target "at least half its records are gold records"; keep a region at p >= t (a page
  keeps its best region when none passes);
- ``flip``: the same learner; the default's regions are kept unless p < t_drop, the filtered ones
  added when p >= t_add (t_drop 0 and t_add 1.01 are the default);
- ``delta``: target "flipping this region alone (dropping a kept one, adding a filtered one) raises
  the page's record F1", weighted by how much; flip at p >= t.

``oracle`` gives the ceiling of any such decision: per page, greedy flips from the default's set
while the page's record F1 rises (any region, only additions, only drops). Usage::

    python bench/records_keep.py cv DATASET RAW1 RAW2 RAW3 RAW4 --mode flip --learner gb_d3
    python bench/records_keep.py oracle DATASET RAW1 RAW2 RAW3 RAW4

Every figure is scored as ``bench/records_raw.py replay`` scores it (the paper's record F1, hidden
records added; node content F1 pooled, content from the records).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))

from records_raw import cached_labels, read_cache  # noqa: E402  (the caches' one reader)

OFF = {"min_rel": 0.0, "rel_conf": 0.0, "rich_fields": 0.0}
FEATS = ["log_n", "size_share", "size_rel", "conf", "conf_rel", "conf_gap", "fields_mean", "fields_rel",
         "thin_share", "rich_other", "is_thin", "drop_size", "drop_unsure", "drop_thin", "in_base",
         "score_max", "score_mean", "depth", "link_density", "n_regions", "rank_size", "rank_conf",
         "log_chars_rec", "min_conf_ok"]
IB = FEATS.index("in_base")
LEARNERS = {
    "gb_d3": dict(max_iter=100, max_depth=3, min_samples_leaf=10, learning_rate=0.1),
    "gb_d2_50": dict(max_iter=50, max_depth=2, min_samples_leaf=20, learning_rate=0.1),
    "gb_d1_50": dict(max_iter=50, max_depth=1, min_samples_leaf=20, learning_rate=0.1),
    "lr1": dict(lr=1.0),
    "lr01": dict(lr=0.1),
}
KEEP_GRID = [float(t) for t in np.round(np.arange(0.05, 0.96, 0.05), 2)]
FLIP_GRID = [(a, b) for a in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3) for b in (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)]
DELTA_GRID = [(a, b) for a in (0.5, 0.6, 0.7, 0.8, 0.9, 1.01) for b in (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)]


class PageRun:
    """One page under one seed's cache: its pool of regions, their numbers, and a memoised score of
    any kept set."""

    def __init__(self, **kw):
        self.__dict__.update(kw)
        self.memo: dict = {}

    def result(self, kept=None, recs=None) -> tuple[float, int, int, int]:
        """(record F1, content TP, FP, FN) with the records of the regions ``kept`` (or ``recs``)."""
        from hwnoise.extractors import records as R
        from hwnoise.features.columns import CONTENT
        from hwnoise.training.record_metrics import page_record_scores

        if recs is None:
            mk = ("k", frozenset(kept))
            recs = [rec for k, rec in zip(self.key, self.recs) if k in mk[1]]
        else:
            mk = ("r", tuple(map(tuple, recs)))
        if mk in self.memo:
            return self.memo[mk]
        if not len(self.labels):
            f1, pred = 0.0, np.zeros(len(self.truth), dtype=bool)
        else:
            w = self.walk
            lab = R.records_content(w, self.labels, recs)
            got = R.with_hidden(R.records_from_labels(w, lab, self.xp, self.proba, records=recs), w.root,
                                w.elements, self.xp)
            f1 = page_record_scores([r.xpaths for r in got], self.gold, self.keys)["record_f1"]
            pred = np.asarray(lab == CONTENT)
        t = self.truth
        self.memo[mk] = out = (f1, int((pred & t).sum()), int((pred & ~t).sum()), int((~pred & t).sum()))
        return out

    def base_kept(self) -> frozenset:
        return frozenset(k for k, v in zip(self.regions, self.X[:, IB]) if v >= 0.5)


def summary(results) -> tuple[float, float]:
    """Mean record F1 over pages, node content F1 over all their nodes."""
    tp, fp, fn = (sum(r[k] for r in results) for k in (1, 2, 3))
    return float(np.mean([r[0] for r in results])), 2 * tp / max(2 * tp + fp + fn, 1)


def _depths(parent: np.ndarray) -> np.ndarray:
    d = np.zeros(len(parent), dtype=np.int64)
    for i, p in enumerate(parent):
        d[i] = d[p] + 1 if 0 <= p < i else 0
    return d


def build(dataset: Path, raws: list[Path]) -> dict[int, list[PageRun]]:
    """Per cache (by its seed), every page's ``PageRun``."""
    from hwnoise.extractors import records as R
    from hwnoise.extractors.base import walk_of
    from hwnoise.extractors.regions import region_candidates
    from hwnoise.features.columns import CONTENT
    from hwnoise.features.labels import page_labels
    from hwnoise.features.record_gold import normalize_xpath
    from hwnoise.training.record_metrics import expand_records

    metas, scorers = zip(*(read_cache(raw) for raw in raws)) if raws else ((), ())
    pool, base = R.GroupingOptions.from_dict(OFF), R.GroupingOptions()
    out: dict[int, list[PageRun]] = {int(m["seed"]): [] for m in metas}
    for page in Dataset(dataset).pages():
        records = page.read_records()
        if records is None or any(page.id not in m["pages"] for m in metas):
            continue
        walk = walk_of(page, keep_tree=True)
        xp, keys = R.walk_xpaths(walk, text_keys=True)
        gold = [[normalize_xpath(x) for x in r] for r in records]
        truth = np.asarray(page_labels(walk, page.read_gold(), html=page.read_html(), records=records),
                           dtype=object) == CONTENT
        same_text = set(expand_records(gold, keys))
        rows = walk.rows
        parent = rows["parent"].to_numpy(dtype=np.int64)
        chars = rows["chars"].to_numpy(dtype=np.int64)
        link = rows["link_chars"].to_numpy(dtype=np.float64)
        last = np.asarray(walk.last, dtype=np.int64)
        depth = _depths(parent)
        per_node = R.subtree_fields(R._own(rows), last)
        for raw, meta, sc_of in zip(raws, metas, scorers):
            fold = int(meta["pages"][page.id])
            labels, proba = cached_labels(raw, page.id)
            sc = sc_of[fold]
            run = PageRun(page=page.id, fold=fold, walk=walk, labels=labels, proba=proba, xp=xp, keys=keys,
                          gold=gold, truth=truth, recs=[], key=[], regions=[], base=[],
                          X=np.zeros((0, len(FEATS))), share=np.zeros(0))
            out[int(meta["seed"])].append(run)
            if not len(labels):
                continue
            recs = R.record_rows(walk, labels, proba, options=pool, scorer=sc)
            run.base = R.record_rows(walk, labels, proba, options=base, scorer=sc)
            if not recs:
                continue
            key, size, conf = R._regions(walk, recs, proba)
            regions = list(dict.fromkeys(key))
            cs, cx = region_candidates(walk, labels, proba) if sc is not None else ([], None)
            head_score: dict[int, float] = {}
            for c, v in zip(cs, sc.scores(cx) if cs else []):
                for r in c.rows:
                    head_score[r] = max(head_score.get(r, 0.0), float(v))
            base_rows = {r for rec in run.base for r in rec}
            fields: dict[int, list[int]] = {}
            for k, rec in zip(key, recs):
                fields.setdefault(k, []).append(int(sum(per_node[r] for r in rec)))
            fmean = {k: float(np.mean(f)) for k, f in fields.items()}
            thin = {k: float(np.mean([x <= 1 for x in f])) for k, f in fields.items()}
            top_size, tot_size, top_conf = max(size.values()), sum(size.values()) or 1, max(conf.values())
            rich = {k for k in regions if fmean[k] >= R.RICH_FIELDS}
            by_size = sorted(regions, key=lambda k: -size[k])
            by_conf = sorted(regions, key=lambda k: -conf[k])
            X, y = [], []
            for k in regions:
                rr = [rec for kk, rec in zip(key, recs) if kk == k]
                heads = [rec[0] for rec in rr]
                allrows = [r for rec in rr for r in rec]
                scs = [head_score.get(h, 0.0) for h in heads]
                is_thin, rich_other = thin[k] >= R.THIN_SHARE, bool(rich - {k})
                ch = float(chars[allrows].sum())
                v = dict(
                    log_n=np.log1p(len(rr)), size_share=size[k] / tot_size, size_rel=size[k] / top_size,
                    conf=conf[k], conf_rel=conf[k] / max(top_conf, 1e-9), conf_gap=top_conf - conf[k],
                    fields_mean=fmean[k], fields_rel=fmean[k] / max(max(fmean.values()), 1e-9),
                    thin_share=thin[k], rich_other=float(rich_other), is_thin=float(is_thin),
                    drop_size=float(size[k] < base.min_rel * top_size),
                    drop_unsure=float(proba is not None and conf[k] < base.rel_conf * top_conf),
                    drop_thin=float(is_thin and rich_other and len(recs) >= 2),
                    in_base=float(np.mean([h in base_rows for h in heads])),
                    score_max=max(scs), score_mean=float(np.mean(scs)), depth=float(depth[heads[0]]),
                    link_density=float(link[allrows].sum()) / max(ch, 1.0), n_regions=float(len(regions)),
                    rank_size=float(by_size.index(k)), rank_conf=float(by_conf.index(k)),
                    log_chars_rec=np.log1p(ch / len(rr)), min_conf_ok=float(conf[k] >= base.min_conf))
                X.append([v[f] for f in FEATS])
                y.append(float(np.mean([e in same_text for e in expand_records([[xp[r] for r in rec] for rec in rr],
                                                                                 keys)])))
            run.recs, run.key, run.regions = recs, key, regions
            run.X, run.share = np.asarray(X, dtype=np.float64), np.asarray(y)
    return out


def _estimator(params: dict):
    if "lr" in params:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(C=params["lr"], max_iter=2000))
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(random_state=0, **params)


def _fit(runs: list[PageRun], params: dict, mode: str):
    runs = [r for r in runs if len(r.X)]
    X = np.vstack([r.X for r in runs])
    if mode == "delta":
        dl = np.concatenate([r.delta for r in runs])
        m = np.abs(dl) > 1e-9
        X, y, w = X[m], dl[m] > 0, np.abs(dl[m]) / np.abs(dl[m]).mean()
    else:  # every page weighing the same
        y = np.concatenate([r.share for r in runs]) >= 0.5
        w = np.concatenate([np.full(len(r.X), 1.0 / len(r.X)) for r in runs])
    if y.all() or not y.any():
        return None
    est = _estimator(params)
    est.fit(X, y, **({"logisticregression__sample_weight": w} if hasattr(est, "steps") else {"sample_weight": w}))
    return est


def _proba(est, run: PageRun, mode: str) -> np.ndarray:
    if est is None or not len(run.X):
        return (np.zeros if mode == "delta" else np.ones)(len(run.X))
    return est.predict_proba(run.X)[:, 1]


def kept_of(run: PageRun, p: np.ndarray, t, mode: str) -> frozenset:
    """The regions a page keeps under decision ``mode`` at threshold(s) ``t``."""
    if not run.regions:
        return frozenset()
    inb = run.X[:, IB] >= 0.5
    if mode == "keep":
        keep = {k for k, v in zip(run.regions, p) if v >= t} or {run.regions[int(np.argmax(p))]}
    elif mode == "flip":
        keep = {k for k, v, i in zip(run.regions, p, inb) if (v >= t[0] if i else v >= t[1])}
    else:
        keep = {k for k, v, i in zip(run.regions, p, inb) if ((v < t[0]) if i else (v >= t[1]))}
    return frozenset(keep or run.base_kept() or {run.regions[int(np.argmax(p))]})


def nested(runs: list[PageRun], params: dict, mode: str) -> tuple[dict[int, frozenset], dict[int, object]]:
    """Each page's kept regions, decided held out, and each outer fold's chosen threshold(s)."""
    grid = {"keep": KEEP_GRID, "flip": FLIP_GRID, "delta": DELTA_GRID}[mode]
    # of equals: keep, the nearest 0.5; flip and delta, the nearest the default
    tie = {"keep": lambda t: -abs(t - 0.5), "flip": lambda t: (-t[0], t[1]), "delta": lambda t: t}[mode]
    out, chosen = {}, {}
    for k in sorted({r.fold for r in runs}):
        train, test = [r for r in runs if r.fold != k], [r for r in runs if r.fold == k]
        oof = {}
        for j in sorted({r.fold for r in train}):
            est = _fit([r for r in train if r.fold != j], params, mode)
            oof.update({id(r): _proba(est, r, mode) for r in train if r.fold == j})
        res = {t: sum(summary([r.result(kept_of(r, oof[id(r)], t, mode)) for r in train])) for t in grid}
        t = max(grid, key=lambda t: (res[t], tie(t)))
        chosen[k] = t
        est = _fit(train, params, mode)
        out.update({id(r): kept_of(r, _proba(est, r, mode), t, mode) for r in test})
    return out, chosen


def add_deltas(runs: list[PageRun]) -> None:
    for r in runs:
        b = r.base_kept()
        f = r.result(b)[0]
        r.delta = np.asarray([r.result(b ^ {k})[0] - f if b ^ {k} else 0.0 for k in r.regions])


def _line(name: str, runs: list[PageRun], res, base) -> np.ndarray:
    f, c = summary(res)
    diff = np.asarray([a[0] - b[0] for a, b in zip(res, base)])
    folds = sorted({r.fold for r in runs})
    pf = [round(float(np.mean([a[0] for r, a in zip(runs, res) if r.fold == k])), 3) for k in folds]
    pc = [round(summary([a for r, a in zip(runs, res) if r.fold == k])[1], 3) for k in folds]
    se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
    print(f"  {name}: record F1 {f:.4f}, content F1 {c:.4f}; paired {diff.mean():+.4f} +- {se:.4f} "
          f"(up {(diff > 1e-9).sum()}, down {(diff < -1e-9).sum()}); per fold {pf}, content {pc}", flush=True)
    return diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=("cv", "oracle"))
    ap.add_argument("dataset", type=Path)
    ap.add_argument("raw", type=Path, nargs="+", help="bench/records_raw.py predict caches, one per fold seed")
    ap.add_argument("--mode", choices=("keep", "flip", "delta"), default="flip")
    ap.add_argument("--learner", choices=sorted(LEARNERS), default="gb_d3")
    a = ap.parse_args()
    seeds = build(a.dataset, a.raw)
    diffs = []
    for seed, runs in seeds.items():
        base = [r.result(recs=r.base) for r in runs]
        pool = [r.result(r.regions) for r in runs]
        print(f"seed {seed}: default {summary(base)[0]:.4f} / {summary(base)[1]:.4f}; pool (filters off, "
              f"all kept) {summary(pool)[0]:.4f} / {summary(pool)[1]:.4f}; the default's regions of the pool "
              f"{summary([r.result(r.base_kept()) for r in runs])[0]:.4f}", flush=True)
        if a.cmd == "oracle":
            for which in ("both", "add", "drop"):
                res = []
                for r in runs:
                    b = r.base_kept()
                    kept, cur, moved = set(b), r.result(b)[0], True
                    while moved and r.regions:
                        moved = False
                        for k in r.regions:
                            if (which == "add" and k in b) or (which == "drop" and k not in b) or not kept ^ {k}:
                                continue
                            f = r.result(kept ^ {k})[0]
                            if f > cur + 1e-9:
                                kept, cur, moved = kept ^ {k}, f, True
                    res.append(r.result(kept))
                diffs.extend(_line(f"greedy oracle ({which})", runs, res, base))
            continue
        if a.mode == "delta":
            add_deltas(runs)
        kept, chosen = nested(runs, LEARNERS[a.learner], a.mode)
        diffs.extend(_line(f"{a.mode} {a.learner}, thresholds {list(chosen.values())}", runs,
                           [r.result(kept[id(r)]) for r in runs], base))
    if a.cmd == "cv" and len(seeds) > 1:
        d = np.asarray(diffs)
        print(f"over the {len(seeds)} seeds: paired {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(len(d)):.4f} "
              f"({len(d)} page-runs)")


if __name__ == "__main__":
    main()
