"""Record-level scores (NEXT-EVAL's metric): predicted and gold records matched one to one.

A record is a set of XPaths (the elements that make it up, written as the gold writes them,
``/body[1]/div[3]/...``). On one page the overlap of a predicted record P and a gold record G
is their Jaccard index |P ∩ G| / |P ∪ G|; predicted and gold records are paired one to one by
the Hungarian algorithm (``scipy.optimize.linear_sum_assignment``) maximising the total
overlap, and each pair earns its overlap as partial credit. With T the summed credit,
precision = T / |predicted|, recall = T / |gold|, F1 their harmonic mean (0 when both are 0).
A page with no gold records and no predictions scores 1; with predictions but no gold, or
gold but no predictions, 0. Over many pages the scores are averaged page by page
(``mean_record_scores``), every page weighing the same, as the benchmark's paper reports.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["record_scores", "mean_record_scores"]


def record_scores(predicted: Sequence[Iterable[str]], gold: Sequence[Iterable[str]]) -> dict:
    """``{record_precision, record_recall, record_f1, records, gold_records, matched}`` of one page."""
    from scipy.optimize import linear_sum_assignment

    pred = [frozenset(p) for p in predicted if p]
    gold_ = [frozenset(g) for g in gold if g]
    out = {"records": len(pred), "gold_records": len(gold_)}
    if not pred or not gold_:
        same = float(not pred and not gold_)
        out.update(record_precision=same, record_recall=same, record_f1=same, matched=0)
        return out
    # sparse overlaps: only pairs sharing an XPath have a non-zero Jaccard index
    by_x: dict[str, list[int]] = {}
    for j, g in enumerate(gold_):
        for x in g:
            by_x.setdefault(x, []).append(j)
    sim = np.zeros((len(pred), len(gold_)), dtype=np.float64)
    for i, p in enumerate(pred):
        for j in {j for x in p for j in by_x.get(x, ())}:
            inter = len(p & gold_[j])
            sim[i, j] = inter / (len(p) + len(gold_[j]) - inter)
    rows, cols = linear_sum_assignment(sim, maximize=True)
    credit = float(sim[rows, cols].sum())
    p, r = credit / len(pred), credit / len(gold_)
    out.update(record_precision=p, record_recall=r,
               record_f1=(2 * p * r / (p + r)) if p + r > 0 else 0.0,
               matched=int((sim[rows, cols] > 0).sum()))
    return out


def mean_record_scores(rows: Sequence[dict]) -> dict:
    """Page-averaged record precision, recall and F1 (and the mean F1 recomputed from the
    mean precision and recall, ``record_f1_of_means``)."""
    if not rows:
        return {}
    p = float(np.mean([r["record_precision"] for r in rows]))
    r = float(np.mean([r["record_recall"] for r in rows]))
    return {"record_precision": p, "record_recall": r,
            "record_f1": float(np.mean([x["record_f1"] for x in rows])),
            "record_f1_of_means": (2 * p * r / (p + r)) if p + r > 0 else 0.0,
            "record_pages": len(rows)}
