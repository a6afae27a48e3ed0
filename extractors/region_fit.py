"""Fitting a model's region scorer (``extractors.regions.RegionScorer``) on its training pages.

The scorer learns which groups of alike siblings are regions of records from pages whose node
labels came from a model that did not see them, as a new page's do: the inner CV's
out-of-fold probabilities (``training.threshold.inner_cv``, kept on the model as ``inner_oof``
by ``training.spec.fit_spec`` when the spec has ``regions``). Each training page whose gold has
records becomes a ``RegionPage``: its candidates (``region_candidates``), their targets (the
share of a candidate's records that are gold records: by the paper's metric, a record holding
the same text XPaths as a gold one), the labels' own records and the gold content. The scorer's
threshold is the one with the best record F1 + node content F1 over the pages, each page scored
by a scorer fitted on the other folds' pages (``oof_scores``); the scorer kept is fitted on
every page. ``bench/records_ranker.py`` and ``bench/build_regions.py`` use the same steps.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hwnoise.extractors.records import GroupingOptions, record_rows, rows_inside, walk_xpaths
from hwnoise.extractors.regions import Candidate, RegionScorer, combine_regions, region_candidates
from hwnoise.features.columns import CONTENT, LABEL, NOISE
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.training.record_metrics import expand_records, record_scores

if TYPE_CHECKING:
    import pandas as pd

    from hwnoise.dataset import Page

__all__ = ["RegionPage", "region_page", "page_result", "records_result", "summary", "training_set",
           "oof_scores", "best_threshold", "best_setting", "fit_scorer", "model_region_scorer", "THRESHOLDS",
           "VETOES", "METRICS"]

#: The scorer thresholds tried.
THRESHOLDS = np.round(np.arange(0.1, 0.91, 0.05), 2)
#: The vetoes tried in mode ``rest`` (``regions.combine_regions``; 0 is none).
VETOES = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3)
#: Record F1 as NEXT-EVAL's paper computes it (records expanded to their text XPaths), or over
#: the records' own XPaths.
METRICS = ("paper", "element")


@dataclass
class RegionPage:
    """What fitting and choosing a scorer needs of one training page."""

    page: str
    X: np.ndarray                 # the candidates' REGION_FEATURES
    y: np.ndarray                 # per candidate, the share of its records that are gold (paper)
    y_element: np.ndarray         # the same, counting only the gold's very elements
    cands: list[Candidate]
    xp: list[str]                 # every row's XPath in the gold's form
    text_keys: list[str]          # the page's text-map keys (the paper's metric)
    gold: list[list[str]]
    last: np.ndarray
    current: list[list[int]]      # the labels' own records (rows)
    labels: np.ndarray            # bool per row: content by the labels
    gold_content: np.ndarray      # bool per row: content by the gold


#: The labels' records the scorer's fit joins candidates to: without ``drop_thin``, which (like
#: ``drop_unsure``) applies to the records the scorer's candidates have joined, after the fit's choice;
#: and with snapping as before session 34 (``box_fields``, ``drop_boxes``, ``thin_cut`` off), so that
#: each fold's threshold and veto are the ones chosen before those steps.
_FIT_GROUPING = GroupingOptions(rich_fields=0, box_fields=0, drop_boxes=False, thin_cut=0, thin_cut_any=False)


def region_page(page_id: str, walk, labels: np.ndarray, proba: np.ndarray | None,
                gold_records: list[list[str]], gold_content: np.ndarray) -> RegionPage:
    """One page's ``RegionPage`` from its walk (made with ``keep_tree``), its labels and
    probabilities (out of fold) and its gold (record XPaths, node labels)."""
    xp, text_keys = walk_xpaths(walk, text_keys=True)
    gold = [[normalize_xpath(x) for x in r] for r in gold_records]
    cands, X = region_candidates(walk, labels, proba)
    single = {g[0] for g in gold if len(g) == 1}
    same_text = set(expand_records(gold, text_keys))
    y_el = np.asarray([np.mean([xp[r] in single for r in c.rows]) for c in cands])
    y = np.asarray([np.mean([e in same_text for e in expand_records([[xp[r]] for r in c.rows], text_keys)])
                    for c in cands])
    return RegionPage(page_id, X, y, y_el, cands, xp, text_keys, gold, np.asarray(walk.last, dtype=np.int64),
                      record_rows(walk, labels, proba, options=_FIT_GROUPING), np.asarray(labels == CONTENT),
                      np.asarray(gold_content, dtype=bool))


def page_records(item: RegionPage, scores: np.ndarray, t: float, mode: str,
                 veto: float = 0.0) -> list[list[int]]:
    """The page's records (rows): the labels' own (``mode`` "labels") or joined with the
    candidates kept at ``t`` (``combine_regions``)."""
    if mode == "labels":
        return item.current
    return combine_regions(item.current, item.cands, scores, item.last, t, mode, veto)


def page_result(item: RegionPage, scores: np.ndarray, t: float, mode: str,
                metric: str = "paper", veto: float = 0.0) -> tuple[float, int, int, int]:
    """Record F1 and the content's TP, FP, FN when the content is the records' rows (the
    labels on a page without records)."""
    return records_result(item, page_records(item, scores, t, mode, veto), metric)


def records_result(item: RegionPage, recs: list[list[int]], metric: str = "paper") -> tuple[float, int, int, int]:
    """``page_result`` of the page's records ``recs`` (rows)."""
    pred = rows_inside(recs, item.last) if recs else item.labels
    g = item.gold_content
    f1 = record_scores([[item.xp[r] for r in rec] for rec in recs], item.gold,
                       item.text_keys if metric == "paper" else None)["record_f1"]
    return f1, int((pred & g).sum()), int((pred & ~g).sum()), int((~pred & g).sum())


def summary(results: Sequence[tuple[float, int, int, int]]) -> tuple[float, float]:
    """Mean record F1 over pages and node content F1 over all their nodes."""
    tp, fp, fn = (sum(r[k] for r in results) for k in (1, 2, 3))
    return float(np.mean([r[0] for r in results])) if results else 0.0, 2 * tp / max(2 * tp + fp + fn, 1)


def training_set(items: Sequence[RegionPage], metric: str = "paper",
                 keep: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates' features, targets (at least half their records gold) and weights that make
    every page weigh the same; ``keep``: per page, which candidates to use (all when None)."""
    keep = [np.ones(len(it.y), dtype=bool) for it in items] if keep is None else list(keep)
    X = np.vstack([it.X[m] for it, m in zip(items, keep)]) if items else np.zeros((0, 0))
    y = np.concatenate([(it.y if metric == "paper" else it.y_element)[m] for it, m in zip(items, keep)]) >= 0.5
    w = np.concatenate([np.full(int(m.sum()), 1.0 / max(int(m.sum()), 1)) for m in keep])
    return X, y, w


def oof_scores(items: Sequence[RegionPage], fold_of: dict[str, int], metric: str = "paper",
               seed: int = 0) -> dict[str, np.ndarray]:
    """Each page's candidates scored by a scorer fitted on the other folds' pages."""
    out = {}
    for k in sorted(set(fold_of[it.page] for it in items)):
        train = [it for it in items if fold_of[it.page] != k]
        sc = RegionScorer.fit(*training_set(train, metric), seed=seed)
        out.update({it.page: sc.scores(it.X) for it in items if fold_of[it.page] == k})
    return out


def best_threshold(items: Sequence[RegionPage], scores: dict[str, np.ndarray], mode: str,
                   metric: str = "paper") -> float:
    """The threshold with the best record F1 + content F1 on ``items`` (scored out of fold);
    of equals, the nearest 0.5."""
    return best_setting(items, scores, mode, metric, vetoes=(0.0,))[0]


def best_setting(items: Sequence[RegionPage], scores: dict[str, np.ndarray], mode: str,
                 metric: str = "paper", vetoes: Sequence[float] = VETOES) -> tuple[float, float]:
    """The threshold and veto (mode ``rest`` only; 0 otherwise) with the best record F1 +
    content F1 on ``items`` (scored out of fold); of equals, the smallest veto and the
    threshold nearest 0.5."""
    grid = [(t, v) for t in THRESHOLDS for v in (vetoes if mode == "rest" else (0.0,))]
    seen: list[dict] = [{} for _ in items]  # per page, the result of each record set met (settings repeat them)

    def result(k: int, it: RegionPage, t: float, v: float) -> tuple[float, int, int, int]:
        recs = page_records(it, scores[it.page], t, mode, v)
        key = tuple(map(tuple, recs))
        if key not in seen[k]:
            seen[k][key] = records_result(it, recs, metric)
        return seen[k][key]

    res = {(t, v): sum(summary([result(k, it, t, v) for k, it in enumerate(items)])) for t, v in grid}
    t, v = max(grid, key=lambda tv: (res[tv], -tv[1], -abs(tv[0] - 0.5)))
    return float(t), float(v)


def fit_scorer(items: Sequence[RegionPage], mode: str, *, folds: int = 5, fold_of: dict[str, int] | None = None,
               metric: str = "paper", seed: int = 0, info: dict | None = None) -> RegionScorer | None:
    """A scorer fitted on every page of ``items``, its threshold chosen on out-of-fold scores
    (``fold_of``: each page's fold; by default the pages dealt to ``folds`` folds in order); None
    with fewer than two pages or no positive candidate. ``info`` gains the record F1 and content
    F1 without and with it, out of fold."""
    if len(items) < 2:
        return None
    X, y, w = training_set(items, metric)
    if not y.any() or y.all():
        return None
    if fold_of is None:
        fold_of = {it.page: i % min(folds, len(items))
                   for i, it in enumerate(sorted(items, key=lambda it: it.page))}
    scores = oof_scores(items, fold_of, metric, seed)
    t, veto = best_setting(items, scores, mode, metric)
    before = summary([page_result(it, scores[it.page], 1.01, "labels", metric) for it in items])
    after = summary([page_result(it, scores[it.page], t, mode, metric, veto) for it in items])
    info = dict(info or {})
    info.update(pages=len(items), candidates=int(len(y)), positives=int(y.sum()), metric=metric,
                threshold_choice={"record_f1": [round(before[0], 4), round(after[0], 4)],
                                  "content_f1": [round(before[1], 4), round(after[1], 4)]})
    return RegionScorer.fit(X, y, w, threshold=t, seed=seed, info=info, mode=mode, veto=veto)


def model_region_scorer(model, rows: "pd.DataFrame", pages: Sequence["Page"], *,
                        progress: bool = False) -> RegionScorer | None:
    """The region scorer of a model whose spec has ``regions``, fitted on ``pages`` (those of
    the training ``rows`` whose gold has records) with the labels the model's inner CV gave them
    out of fold (``model.inner_oof``); None when there is nothing to fit on."""
    cv = getattr(model, "inner_oof", None)
    mode = getattr(getattr(model, "spec", None), "regions", None)
    if cv is None or mode is None or not len(cv.rows) or not {"dataset", "page", "node"} <= set(rows.columns):
        return None
    from hwnoise.extractors.base import walk_of
    from hwnoise.progress import progress as bar

    keys = rows[["dataset", "page", "node"]].iloc[cv.rows]
    gold_n = (rows[LABEL].iloc[cv.rows].astype(str).to_numpy() == CONTENT)
    at: dict[tuple[str, str], np.ndarray] = {}
    for (ds, pid), pos in keys.groupby(["dataset", "page"], sort=False).indices.items():
        at[(str(ds), str(pid))] = pos
    t = model.threshold if model.threshold is not None else 0.5
    nodes = keys["node"].to_numpy()
    todo = [(p, recs) for p in pages if (p.dataset.name, p.id) in at and (recs := p.read_records()) is not None]
    items = []
    for page, recs in (bar(todo, desc="regions", unit="page") if progress else todo):
        pos = at[(page.dataset.name, page.id)]
        walk = walk_of(page, keep_tree=True)  # its tree gives the XPaths: one walk a page
        n = len(walk.rows)
        node = nodes[pos]
        if node.max(initial=-1) >= n:
            continue  # rows of another walk (a rendered dataset): not lined up with this one
        proba = np.zeros(n)
        proba[node] = cv.proba[pos]
        gold = np.zeros(n, dtype=bool)
        gold[node] = gold_n[pos]
        labels = np.where(proba >= t, CONTENT, NOISE).astype(object)
        items.append(region_page(f"{page.dataset.name}/{page.id}", walk, labels, proba, recs, gold))
    scorer = fit_scorer(items, mode, info={"fitted_on": "the training pages' inner-CV labels"})
    if scorer is not None:
        from hwnoise.progress import info

        rec, con = (scorer.info["threshold_choice"][k] for k in ("record_f1", "content_f1"))
        veto = f", veto {scorer.veto:.2f}" if scorer.veto else ""
        info(f"model: region scorer ({mode}) fitted on {len(items)} pages with records, threshold "
             f"{scorer.threshold:.2f}{veto}; out of fold record F1 {rec[0]:.3f} -> {rec[1]:.3f}, "
             f"content F1 {con[0]:.3f} -> {con[1]:.3f}")
    return scorer
