"""Record-level scores (NEXT-EVAL's metric): predicted and gold records matched one to one.

A record is given as XPaths (the elements that make it up, written as the gold writes them,
``/body[1]/div[3]/...``). As the paper's evaluation code does (``mapResponseToFullXPath``),
each record, predicted or gold, is first *expanded* to the keys of the page's flat text map
(``features.record_gold.text_xpaths``: the XPaths of the elements that hold text) that start
with one of its XPaths (``expand_records``), so a record and its only child, which hold the same
text, are the same record. Without the text map (``text_keys=None``) the records are compared
as the sets of their own XPaths, a stricter figure (``element_record_*`` in reports): there the
record must be the gold's very element. On one page the overlap of a predicted record P and a
gold record G is their Jaccard index |P ∩ G| / |P ∪ G| (1 when both are empty, as the paper's
``calculateOverlap``); predicted and gold records are paired one to one by
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

from hwnoise.text import standard_error

__all__ = ["record_scores", "mean_record_scores", "expand_records", "page_record_scores"]


def expand_records(records: Sequence[Iterable[str]], text_keys: Sequence[str]) -> list[frozenset]:
    """Each record as the positions of the sorted ``text_keys`` that start with one of its
    XPaths: the paper's ``mapResponseToFullXPath`` (a string prefix; every step ends in ``]``,
    so it takes the element and its descendants, not ``li[10]`` for ``li[1]``). ``text_keys``
    must be sorted: the keys that start with a prefix are one run of them."""
    from bisect import bisect_left

    out = []
    for rec in records:
        got: set[int] = set()
        for x in rec:
            lo = bisect_left(text_keys, x)
            hi = bisect_left(text_keys, x + "\U0010ffff", lo)
            got.update(range(lo, hi))
        out.append(frozenset(got))
    return out


def record_scores(predicted: Sequence[Iterable[str]], gold: Sequence[Iterable[str]],
                  text_keys: Sequence[str] | None = None) -> dict:
    """``{record_precision, record_recall, record_f1, records, gold_records, matched}`` of one
    page; with the page's sorted ``text_keys`` the paper's way (records expanded to the text
    below them, a record with no text kept), without them over the records' own XPaths."""
    from scipy.optimize import linear_sum_assignment

    if text_keys is not None:
        pred, gold_ = expand_records(predicted, text_keys), expand_records(gold, text_keys)
    else:
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
    empty_p = [i for i, p in enumerate(pred) if not p]
    empty_g = [j for j, g in enumerate(gold_) if not g]
    if empty_p and empty_g:  # two records without text: the paper's overlap of empty sets is 1
        sim[np.ix_(empty_p, empty_g)] = 1.0
    rows, cols = linear_sum_assignment(sim, maximize=True)
    credit = float(sim[rows, cols].sum())
    p, r = credit / len(pred), credit / len(gold_)
    out.update(record_precision=p, record_recall=r,
               record_f1=(2 * p * r / (p + r)) if p + r > 0 else 0.0,
               matched=int((sim[rows, cols] > 0).sum()))
    return out


def page_record_scores(predicted: Sequence[Iterable[str]], gold: Sequence[Iterable[str]],
                       text_keys: Sequence[str]) -> dict:
    """One page's scores as ``hwnoise evaluate`` reports them: the paper's (``record_scores``
    with the page's ``text_keys``) and, as ``element_record_*``, those over the records' own
    XPaths."""
    out = record_scores(predicted, gold, text_keys)
    strict = record_scores(predicted, gold)
    out.update({f"element_{k}": strict[k] for k in ("record_precision", "record_recall", "record_f1")})
    return out


def mean_record_scores(rows: Sequence[dict]) -> dict:
    """Page-averaged record precision, recall and F1 (and the mean F1 recomputed from the
    mean precision and recall, ``record_f1_of_means``; ``record_f1_se``, the standard error of the
    mean F1, from two pages on); the ``element_record_*`` scores too where every row has them."""
    if not rows:
        return {}
    p = float(np.mean([r["record_precision"] for r in rows]))
    r = float(np.mean([r["record_recall"] for r in rows]))
    f1s = [x["record_f1"] for x in rows]
    out = {"record_precision": p, "record_recall": r,
           "record_f1": float(np.mean(f1s)),
           "record_f1_of_means": (2 * p * r / (p + r)) if p + r > 0 else 0.0,
           "record_pages": len(rows)}
    se = standard_error(f1s)
    if se is not None:
        out["record_f1_se"] = se
    for k in ("element_record_precision", "element_record_recall", "element_record_f1"):
        if all(k in x for x in rows):
            out[k] = float(np.mean([x[k] for x in rows]))
    return out
