"""The probability threshold of a model, chosen by an inner cross-validation on training rows.

A node is content when the classifier's probability of content reaches the threshold. Across
sites the classifier's own 0.5 keeps too little; :func:`inner_threshold` picks the threshold
that scores best on out-of-fold predictions of the training rows only (grouped by site, by page
when there is one site), scored by :func:`page_char_f1`, a stand-in for text F1 that needs no walk.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hwnoise.features.columns import CONTENT, LABEL

__all__ = ["THRESHOLDS", "page_char_f1", "inner_threshold", "inner_cv", "InnerCV"]

THRESHOLDS = np.round(np.arange(0.05, 0.81, 0.05), 2)


def page_char_f1(df: pd.DataFrame, p_content: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Per threshold, the mean over pages of the F1 of content characters (each node weighted by
    its own characters)."""
    w = pd.to_numeric(df["own_chars"], errors="coerce").fillna(0).to_numpy(dtype=float) \
        if "own_chars" in df else np.ones(len(df))
    gold = (df[LABEL].astype(str).to_numpy() == CONTENT)
    keys = [c for c in ("dataset", "page") if c in df]
    page = (df.groupby(keys, sort=False).ngroup().to_numpy(dtype=np.int64) if keys
            else np.zeros(len(df), dtype=np.int64))
    npages = int(page.max()) + 1 if len(page) else 0
    g = np.bincount(page, weights=w * gold, minlength=npages)
    out = []
    for t in thresholds:
        pred = p_content >= t
        tp = np.bincount(page, weights=w * (pred & gold), minlength=npages)
        pp = np.bincount(page, weights=w * pred, minlength=npages)
        f1 = np.where(g + pp > 0, 2 * tp / np.maximum(g + pp, 1e-9), 0.0)
        out.append(f1[g > 0].mean() if (g > 0).any() else 0.0)
    return np.asarray(out)


@dataclass
class InnerCV:
    """An inner cross-validation's outcome: the chosen threshold and, for the labelled rows it
    scored (positions in the frame), their out-of-fold content probabilities."""

    threshold: float
    rows: np.ndarray
    proba: np.ndarray


def inner_threshold(df: pd.DataFrame, new_model: Callable, *, folds: int = 3,
                    thresholds: Sequence[float] = THRESHOLDS, rows: np.ndarray | None = None) -> float:
    """The threshold on the probability of content that scores best on out-of-fold predictions
    of an inner cross-validation over ``df`` (``inner_cv``)."""
    return inner_cv(df, new_model, folds=folds, thresholds=thresholds, rows=rows).threshold


def inner_cv(df: pd.DataFrame, new_model: Callable, *, folds: int = 3,
             thresholds: Sequence[float] = THRESHOLDS, rows: np.ndarray | None = None) -> InnerCV:
    """An inner cross-validation over ``df`` (over its rows at positions ``rows`` when given)
    grouped by site (by page when there is one site): every labelled row's out-of-fold
    probability of content and the threshold that scores best on them (page char F1).
    ``new_model()`` returns an unfitted NoiseModel. The folds fit and score on row positions:
    no copy of the rows' features."""
    from sklearn.model_selection import GroupKFold

    from hwnoise.progress import info

    frame = df
    idx = np.arange(len(df)) if rows is None else np.asarray(rows)
    idx = idx[df[LABEL].iloc[idx].isin(["S", "N"]).to_numpy()]
    df = df[[c for c in (LABEL, "own_chars", "dataset", "page", "site") if c in df]].iloc[idx] \
        .reset_index(drop=True)  # what the scores and the groups read, not the features
    key = "site" if "site" in df and df["site"].nunique() >= folds else "page"
    groups = df[key].astype(str).to_numpy() if key in df else np.arange(len(df))
    k = min(folds, len(np.unique(groups)))
    if k < 2:
        return InnerCV(0.5, idx[:0], np.zeros(0))
    p = np.zeros(len(df))
    for tr, te in GroupKFold(n_splits=k).split(df, groups=groups):
        m = new_model()
        m.fit(frame, rows=idx[tr])
        got = m.content_proba(frame, idx[te])  # the spec's union included
        p[te] = 0.0 if got is None else got
    scores = page_char_f1(df, p, thresholds)
    ts = np.asarray(thresholds)
    best = np.flatnonzero(scores >= scores.max() - 1e-12)
    chosen = float(ts[best[np.argmin(np.abs(ts[best] - 0.5))]])
    info(f"model: inner threshold {chosen:.2f} (page char F1 {scores.max():.3f}; "
         f"0.50 gives {page_char_f1(df, p, [0.5])[0]:.3f})")
    return InnerCV(chosen, idx, p)
