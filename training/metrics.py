"""Node-level scores: THE one place where hwnoise turns node labels into figures.

The confusion matrix is named as seed 003's Table 4.5 names it: RR noise as noise, RC noise as
content, CC content as content, CR content as noise. Precision, recall and F1 are computed per
class and averaged weighted by class support (the true count of each class), as Weka's
"Weighted Avg." row does; a class that is never predicted has precision 0 and a class that never
occurs has recall 0, as in Weka 3.6. ``content_f1`` (F1 of class N) is reported beside the
weighted figures because these flatter when noise dominates.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hwnoise.features.columns import CONTENT, NOISE

#: The confusion matrix's four counts, in the order seed 003's Table 4.5 gives them.
CONFUSION: tuple[str, ...] = ("RR", "RC", "CC", "CR")


def _safe_div(num: float, den: float) -> float:
    return float(num) / float(den) if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def confusion(y_true: Sequence | np.ndarray, y_pred: Sequence | np.ndarray) -> dict[str, int]:
    """RR, RC, CC, CR counts of two label arrays of "S"/"N" (other values raise ValueError)."""
    t = np.asarray(y_true, dtype=object).astype(str)
    p = np.asarray(y_pred, dtype=object).astype(str)
    if t.shape != p.shape:
        raise ValueError(f"y_true has {t.size} labels, y_pred {p.size}")
    for name, arr in (("y_true", t), ("y_pred", p)):
        odd = set(np.unique(arr)) - {NOISE, CONTENT}
        if odd:
            raise ValueError(f"{name} holds labels other than S/N: {sorted(odd)[:5]}")
    ts, ps = t == NOISE, p == NOISE
    return {"RR": int(np.sum(ts & ps)), "RC": int(np.sum(ts & ~ps)),
            "CC": int(np.sum(~ts & ~ps)), "CR": int(np.sum(~ts & ps))}


def scores_from_confusion(RR: int, RC: int, CC: int, CR: int) -> dict:
    """Every node score from the four counts (see node_scores)."""
    n_noise, n_content = RR + RC, CC + CR
    nodes = n_noise + n_content
    per = {}
    for cls, tp, fp, fn in ((NOISE, RR, CR, RC), (CONTENT, CC, RC, CR)):
        p, r = _safe_div(tp, tp + fp), _safe_div(tp, tp + fn)
        per[cls] = {"precision": p, "recall": r, "f1": _f1(p, r), "support": tp + fn}
    weighted = {
        key: _safe_div(per[NOISE][key] * n_noise + per[CONTENT][key] * n_content, nodes)
        for key in ("precision", "recall", "f1")
    }
    return {
        "nodes": nodes, "RR": RR, "RC": RC, "CC": CC, "CR": CR,
        **weighted,
        "content_f1": per[CONTENT]["f1"],
        "accuracy": _safe_div(RR + CC, nodes),
        **{f"{key}_{cls}": per[cls][key] for cls in (NOISE, CONTENT) for key in ("precision", "recall", "f1")},
    }


def node_scores(y_true: Sequence | np.ndarray, y_pred: Sequence | np.ndarray) -> dict:
    """Node-level scores of predicted labels against true ones (both arrays of "S"/"N").

    Returns ``{nodes, RR, RC, CC, CR, precision, recall, f1, content_f1, accuracy}`` where
    precision/recall/f1 are weighted by class support as Weka weights them, plus the per-class
    figures as flat keys ``precision_S, recall_S, f1_S, precision_N, recall_N, f1_N`` (flat, so a
    report record stays a flat JSON object).
    """
    return scores_from_confusion(**confusion(y_true, y_pred))


# -- any class set (a Weka user's ARFF file) -------------------------------------------------

def confusion_matrix(y_true: Sequence | np.ndarray, y_pred: Sequence | np.ndarray,
                     classes: Sequence[str]) -> np.ndarray:
    """The k x k confusion matrix (rows: actual class, columns: predicted) over ``classes``;
    a label outside ``classes`` raises ValueError."""
    classes = [str(c) for c in classes]
    t = np.asarray(y_true, dtype=object).astype(str)
    p = np.asarray(y_pred, dtype=object).astype(str)
    if t.shape != p.shape:
        raise ValueError(f"y_true has {t.size} labels, y_pred {p.size}")
    index = {c: i for i, c in enumerate(classes)}
    for name, arr in (("y_true", t), ("y_pred", p)):
        odd = set(np.unique(arr)) - set(classes)
        if odd:
            raise ValueError(f"{name} holds labels outside {classes}: {sorted(odd)[:5]}")
    k = len(classes)
    ti = np.fromiter((index[v] for v in t), dtype=np.int64, count=t.size)
    pi = np.fromiter((index[v] for v in p), dtype=np.int64, count=p.size)
    return np.bincount(ti * k + pi, minlength=k * k).reshape(k, k)


def scores_from_matrix(matrix: np.ndarray, classes: Sequence[str]) -> dict:
    """Weka's figures from a confusion matrix of any class set: per class precision, recall
    and F1 (0 when undefined, as Weka 3.6), their averages weighted by class support
    ("Weighted Avg."), accuracy, and the matrix itself (a list of rows, actual class first)."""
    m = np.asarray(matrix, dtype=np.float64)
    classes = [str(c) for c in classes]
    support = m.sum(axis=1)
    predicted = m.sum(axis=0)
    tp = np.diag(m)
    total = float(m.sum())
    per = {}
    for i, c in enumerate(classes):
        p, r = _safe_div(tp[i], predicted[i]), _safe_div(tp[i], support[i])
        per[c] = {"precision": p, "recall": r, "f1": _f1(p, r), "support": float(support[i])}
    weighted = {key: _safe_div(sum(per[c][key] * per[c]["support"] for c in classes), total)
                for key in ("precision", "recall", "f1")}
    matrix_out = [[int(v) if float(v).is_integer() else float(v) for v in row] for row in m]
    return {"nodes": int(total) if total.is_integer() else total, **weighted,
            "accuracy": _safe_div(float(tp.sum()), total), "per_class": per,
            "confusion": matrix_out}
