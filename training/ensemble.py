"""Gradient-boosted trees as plain arrays, so that a ``gb`` model is saved as JSON, not a pickle.

:class:`TreeEnsemble` holds, per tree, each node's feature, threshold, missing-value direction,
children and leaf value, as scikit-learn's ``HistGradientBoostingClassifier`` fitted them, and
predicts exactly as that estimator does on numeric data: NaN goes where training sent missing
values, ``x <= threshold`` goes left, the class-1 probability is the logistic of the baseline
plus the sum of the leaves reached (learning rate included in the leaf values).
"""
from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from hwnoise import native
from hwnoise.errors import HwnoiseError

__all__ = ["TreeEnsemble"]

_FIELDS = ("feature", "threshold", "missing_left", "left", "right", "leaf", "value")


def _expit(raw: np.ndarray) -> np.ndarray:
    """scipy's expit, scikit-learn's binomial link (numpy's 1 / (1 + exp(-x)) differs in the last
    bit): compiled when ``training/_trees.c`` is (the same doubles, and no scipy import at the
    start of ``hwnoise extract``), else scipy's own."""
    compiled = native.trees
    if compiled is not None:
        return np.frombuffer(compiled.expit(np.ascontiguousarray(raw, dtype=np.float64)), dtype=np.float64)
    from scipy.special import expit

    return expit(raw)


class TreeEnsemble:
    """A fitted binary gradient-boosted tree ensemble rebuilt from arrays (predict only)."""

    allows_nan = True  # NaN goes where training sent missing values

    def __init__(self, trees: list[dict[str, np.ndarray]], baseline: float, classes: list[str],
                 n_features: int, params: dict | None = None):
        self.trees = trees
        self.baseline = float(baseline)
        self.classes_ = np.asarray(classes, dtype=object)
        self.n_features_in_ = int(n_features)
        self.params = dict(params or {})

    # -- from scikit-learn ----------------------------------------------------
    @classmethod
    def from_sklearn(cls, est: Any) -> "TreeEnsemble":
        """The arrays of a fitted binary ``HistGradientBoostingClassifier`` on numeric features."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        if not isinstance(est, HistGradientBoostingClassifier):
            raise HwnoiseError(f"{type(est).__name__} has no JSON form here (only gb)")
        if len(est.classes_) != 2:
            raise HwnoiseError("a JSON gb model needs exactly two classes")
        trees = []
        for per_iter in est._predictors:
            nodes = per_iter[0].nodes
            if nodes["is_categorical"].any():
                raise HwnoiseError("a gb model with categorical splits has no JSON form here")
            trees.append({"feature": nodes["feature_idx"].astype(np.int64),
                          "threshold": nodes["num_threshold"].astype(np.float64),
                          "missing_left": nodes["missing_go_to_left"].astype(bool),
                          "left": nodes["left"].astype(np.int64), "right": nodes["right"].astype(np.int64),
                          "leaf": nodes["is_leaf"].astype(bool), "value": nodes["value"].astype(np.float64)})
        params = {k: v for k, v in est.get_params(deep=False).items()
                  if isinstance(v, (int, float, str, bool)) or v is None}
        return cls(trees, float(np.ravel(est._baseline_prediction)[0]), [str(c) for c in est.classes_],
                   est.n_features_in_, params)

    # -- JSON -----------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"kind": "gradient-boosting", "baseline": self.baseline,
                "classes": [str(c) for c in self.classes_], "n_features": self.n_features_in_,
                "params": self.params,
                "trees": [{"feature": t["feature"].tolist(), "threshold": [float(v) for v in t["threshold"]],
                           "missing_left": t["missing_left"].astype(int).tolist(),
                           "left": t["left"].tolist(), "right": t["right"].tolist(),
                           "leaf": t["leaf"].astype(int).tolist(), "value": [float(v) for v in t["value"]]}
                          for t in self.trees]}

    @classmethod
    def from_dict(cls, d: dict) -> "TreeEnsemble":
        """Rebuild from :meth:`to_dict`, checking that every array is well formed."""
        if not isinstance(d, dict) or d.get("kind") != "gradient-boosting":
            raise ValueError("not a gradient-boosting tree ensemble")
        classes = d.get("classes")
        n_features = d.get("n_features")
        baseline = d.get("baseline")
        if not (isinstance(classes, list) and len(classes) == 2 and all(isinstance(c, str) for c in classes)):
            raise ValueError("'classes' must be two strings")
        if not isinstance(n_features, int) or isinstance(n_features, bool) or not 0 < n_features < 100_000:
            raise ValueError("'n_features' must be a positive integer")
        if not isinstance(baseline, (int, float)) or isinstance(baseline, bool) or not np.isfinite(baseline):
            raise ValueError("'baseline' must be a finite number")
        raw = d.get("trees")
        if not isinstance(raw, list) or not raw:
            raise ValueError("'trees' must be a non-empty list")
        trees = []
        for i, t in enumerate(raw):
            if not isinstance(t, dict) or any(not isinstance(t.get(k), list) for k in _FIELDS):
                raise ValueError(f"tree {i} lacks one of {', '.join(_FIELDS)}")
            n = len(t["feature"])
            if n == 0 or any(len(t[k]) != n for k in _FIELDS):
                raise ValueError(f"tree {i}: arrays of different lengths")
            try:
                arr = {"feature": np.asarray(t["feature"], dtype=np.int64),
                       "threshold": np.asarray(t["threshold"], dtype=np.float64),
                       "missing_left": np.asarray(t["missing_left"], dtype=np.int64).astype(bool),
                       "left": np.asarray(t["left"], dtype=np.int64), "right": np.asarray(t["right"], dtype=np.int64),
                       "leaf": np.asarray(t["leaf"], dtype=np.int64).astype(bool),
                       "value": np.asarray(t["value"], dtype=np.float64)}
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"tree {i}: non-numeric entries") from None
            inner = ~arr["leaf"]
            if (inner.any() and ((arr["feature"][inner] < 0).any() or (arr["feature"][inner] >= n_features).any()
                                 or (arr["left"][inner] <= np.flatnonzero(inner)).any()
                                 or (arr["right"][inner] <= np.flatnonzero(inner)).any()
                                 or (arr["left"][inner] >= n).any() or (arr["right"][inner] >= n).any())):
                raise ValueError(f"tree {i}: a split names a feature or child out of range")
            if not np.isfinite(arr["value"]).all():
                raise ValueError(f"tree {i}: leaf values must be finite")
            trees.append(arr)
        params = d.get("params") if isinstance(d.get("params"), dict) else {}
        return cls(trees, float(baseline), classes, n_features, params)

    # -- prediction -----------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} features, the model {self.n_features_in_}")
        compiled = native.trees
        if compiled is not None and len(X):
            f = self._flat
            got = compiled.tree_sums(np.ascontiguousarray(X), X.shape[1], f["feature"], f["threshold"],
                                     f["missing_left"], f["left"], f["right"], f["leaf"], f["value"],
                                     f["roots"], self.baseline)
            if got is not None:
                return np.frombuffer(got, dtype=np.float64).copy()
        return self._descend(X)

    def _descend(self, X: np.ndarray) -> np.ndarray:
        """The reference the compiled ``tree_sums`` equals: each tree a level at a time over the
        rows still above a leaf, the leaves' values added tree after tree."""
        n = len(X)
        raw = np.full(n, self.baseline)
        rows = np.arange(n)
        for t in self.trees:
            node = np.zeros(n, dtype=np.int64)
            active = ~t["leaf"][node]
            while active.any():  # children have larger indices: this ends
                cur = node[active]
                x = X[rows[active], t["feature"][cur]]
                left = np.where(np.isnan(x), t["missing_left"][cur], x <= t["threshold"][cur])
                node[active] = np.where(left, t["left"][cur], t["right"][cur])
                active = ~t["leaf"][node]
            raw += t["value"][node]
        return raw

    @cached_property
    def _flat(self) -> dict[str, np.ndarray]:
        """Every tree's nodes in one set of contiguous arrays for ``tree_sums`` (children as
        indices into them, ``roots`` each tree's first node), made on first use."""
        sizes = [len(t["leaf"]) for t in self.trees]
        roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        shift = np.repeat(roots, sizes)
        cat = {k: np.concatenate([t[k] for t in self.trees]) for k in _FIELDS}
        return {"feature": cat["feature"].astype(np.int64), "threshold": cat["threshold"].astype(np.float64),
                "missing_left": cat["missing_left"].astype(np.uint8),
                "left": (cat["left"] + shift).astype(np.int64), "right": (cat["right"] + shift).astype(np.int64),
                "leaf": cat["leaf"].astype(np.uint8), "value": cat["value"].astype(np.float64), "roots": roots}

    def predict_proba(self, X) -> np.ndarray:
        p = _expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]

    def get_params(self, deep: bool = False) -> dict:
        return dict(self.params)
