"""Tree ensembles as plain arrays, so that a ``gb``, ``rf`` or ``gb+rf`` model is saved as JSON,
not a pickle.

Each tree is its nodes' feature, threshold, missing-value direction, children and leaf value, as
scikit-learn fitted them; every ensemble predicts exactly as its estimator does on numeric data
(NaN goes where training sent missing values, ``x <= threshold`` goes left):

- :class:`TreeEnsemble` (``HistGradientBoostingClassifier``): the class-1 probability is the
  logistic of the baseline plus the sum of the leaves reached (learning rate in the leaf values);
- :class:`ForestEnsemble` (``RandomForestClassifier``): the mean over the trees of the leaf's
  class-1 share (the rows compared as float32, as scikit-learn's trees compare them);
- :class:`MeanEnsemble` (``BoostedForest``, ``gb+rf``): the mean of its members' probabilities.

:func:`json_form` turns a fitted estimator into one of them.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from hwnoise import native
from hwnoise.errors import HwnoiseError
from hwnoise.jsontext import whole_numbers

__all__ = ["ForestEnsemble", "MeanEnsemble", "TreeEnsemble", "json_form"]

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


def _tree_to_dict(t: dict[str, np.ndarray]) -> dict:
    return {"feature": t["feature"].tolist(), "threshold": [float(v) for v in t["threshold"]],
            "missing_left": t["missing_left"].astype(int).tolist(),
            "left": t["left"].tolist(), "right": t["right"].tolist(),
            "leaf": t["leaf"].astype(int).tolist(), "value": [float(v) for v in t["value"]]}


def _tree_from_dict(t, i: int, n_features: int) -> dict[str, np.ndarray]:
    """Tree ``i``'s arrays from JSON, checked: same lengths, numbers, splits on existing
    features, children after their parent and inside the tree, finite leaf values."""
    if not isinstance(t, dict) or any(not isinstance(t.get(k), list) for k in _FIELDS):
        raise ValueError(f"tree {i} lacks one of {', '.join(_FIELDS)}")
    n = len(t["feature"])
    if n == 0 or any(len(t[k]) != n for k in _FIELDS):
        raise ValueError(f"tree {i}: arrays of different lengths")
    try:
        arr = {"feature": whole_numbers(t["feature"], "feature"),
               "threshold": np.asarray(t["threshold"], dtype=np.float64),
               "missing_left": np.asarray(t["missing_left"], dtype=np.int64).astype(bool),
               "left": whole_numbers(t["left"], "left"), "right": whole_numbers(t["right"], "right"),
               "leaf": np.asarray(t["leaf"], dtype=np.int64).astype(bool),
               "value": np.asarray(t["value"], dtype=np.float64)}
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"tree {i}: non-numeric entries ({exc})") from None
    inner = ~arr["leaf"]
    if (inner.any() and ((arr["feature"][inner] < 0).any() or (arr["feature"][inner] >= n_features).any()
                         or (arr["left"][inner] <= np.flatnonzero(inner)).any()
                         or (arr["right"][inner] <= np.flatnonzero(inner)).any()
                         or (arr["left"][inner] >= n).any() or (arr["right"][inner] >= n).any())):
        raise ValueError(f"tree {i}: a split names a feature or child out of range")
    if np.isnan(arr["threshold"][inner]).any():  # every row would go right (+-inf are scikit-learn's own)
        raise ValueError(f"tree {i}: a split at a threshold that is not a number")
    if not np.isfinite(arr["value"]).all():
        raise ValueError(f"tree {i}: leaf values must be finite")
    return arr


def _header_from_dict(d, kind: str) -> tuple[list[str], int, list[dict[str, np.ndarray]], dict]:
    """The classes, feature count, checked trees and parameters of a ``kind`` ensemble's JSON."""
    if not isinstance(d, dict) or d.get("kind") != kind:
        raise ValueError(f"not a {kind} tree ensemble")
    classes = d.get("classes")
    n_features = d.get("n_features")
    if not (isinstance(classes, list) and len(classes) == 2 and all(isinstance(c, str) for c in classes)):
        raise ValueError("'classes' must be two strings")
    if not isinstance(n_features, int) or isinstance(n_features, bool) or not 0 < n_features < 100_000:
        raise ValueError("'n_features' must be a positive integer")
    raw = d.get("trees")
    if not isinstance(raw, list) or not raw:
        raise ValueError("'trees' must be a non-empty list")
    trees = [_tree_from_dict(t, i, n_features) for i, t in enumerate(raw)]
    params = d.get("params") if isinstance(d.get("params"), dict) else {}
    return classes, n_features, trees, params


def _simple_params(est: Any) -> dict:
    return {k: v for k, v in est.get_params(deep=False).items()
            if isinstance(v, (int, float, str, bool)) or v is None}


class _Trees:
    """What every ensemble of binary trees shares: the arrays, the sum of the leaves each row
    reaches (compiled when ``training/_trees.c`` is built), the class and the parameters."""

    allows_nan = True  # NaN goes where training sent missing values
    kind = ""

    def __init__(self, trees: list[dict[str, np.ndarray]], classes: list[str], n_features: int,
                 params: dict | None = None):
        self.trees = trees
        self.classes_ = np.asarray(classes, dtype=object)
        self.n_features_in_ = int(n_features)
        self.params = dict(params or {})

    def _check(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} features, the model {self.n_features_in_}")
        return X

    def _leaf_sums(self, X: np.ndarray, start: float = 0.0) -> np.ndarray:
        """``start`` plus, for each row, the values of the leaves it reaches, tree after tree."""
        compiled = native.trees
        if compiled is not None and len(X):
            f = self._flat
            got = compiled.tree_sums(np.ascontiguousarray(X), X.shape[1], f["feature"], f["threshold"],
                                     f["missing_left"], f["left"], f["right"], f["leaf"], f["value"],
                                     f["roots"], start)
            if got is not None:
                return np.frombuffer(got, dtype=np.float64).copy()
        return self._descend(X, start)

    def _descend(self, X: np.ndarray, start: float = 0.0) -> np.ndarray:
        """The reference the compiled ``tree_sums`` equals: each tree a level at a time over the
        rows still above a leaf, the leaves' values added tree after tree."""
        n = len(X)
        raw = np.full(n, float(start))
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

    def _dict(self) -> dict:
        return {"kind": self.kind, "classes": [str(c) for c in self.classes_],
                "n_features": self.n_features_in_, "params": self.params,
                "trees": [_tree_to_dict(t) for t in self.trees]}

    def predict_proba(self, X) -> np.ndarray:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    def predict(self, X) -> np.ndarray:
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]

    def get_params(self, deep: bool = False) -> dict:
        return dict(self.params)


class TreeEnsemble(_Trees):
    """A fitted binary gradient-boosted tree ensemble rebuilt from arrays (predict only)."""

    kind = "gradient-boosting"

    def __init__(self, trees: list[dict[str, np.ndarray]], baseline: float, classes: list[str],
                 n_features: int, params: dict | None = None):
        super().__init__(trees, classes, n_features, params)
        self.baseline = float(baseline)

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
        return cls(trees, float(np.ravel(est._baseline_prediction)[0]), [str(c) for c in est.classes_],
                   est.n_features_in_, _simple_params(est))

    def to_dict(self) -> dict:
        return {**self._dict(), "baseline": self.baseline}

    @classmethod
    def from_dict(cls, d: dict) -> "TreeEnsemble":
        """Rebuild from :meth:`to_dict`, checking that every array is well formed."""
        classes, n_features, trees, params = _header_from_dict(d, cls.kind)
        baseline = d.get("baseline")
        if not isinstance(baseline, (int, float)) or isinstance(baseline, bool) or not np.isfinite(baseline):
            raise ValueError("'baseline' must be a finite number")
        return cls(trees, float(baseline), classes, n_features, params)

    def decision_function(self, X) -> np.ndarray:
        return self._leaf_sums(self._check(X), self.baseline)

    def predict_proba(self, X) -> np.ndarray:
        p = _expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])


class ForestEnsemble(_Trees):
    """A fitted binary random forest rebuilt from arrays (predict only): each leaf's value is its
    share of class 1, as the tree's ``predict_proba`` gives it."""

    kind = "random-forest"

    @classmethod
    def from_sklearn(cls, est: Any) -> "ForestEnsemble":
        """The arrays of a fitted binary ``RandomForestClassifier`` (one output)."""
        from sklearn.ensemble import RandomForestClassifier

        if not isinstance(est, RandomForestClassifier):
            raise HwnoiseError(f"{type(est).__name__} has no JSON form here (only rf)")
        if len(est.classes_) != 2 or getattr(est, "n_outputs_", 1) != 1:
            raise HwnoiseError("a JSON rf model needs one output of exactly two classes")
        trees = []
        for tree in est.estimators_:
            t = tree.tree_
            counts = t.value[:, 0, :2].astype(np.float64)
            total = counts.sum(axis=1)
            total[total == 0.0] = 1.0
            leaf = t.children_left == -1
            trees.append({"feature": np.where(leaf, 0, t.feature).astype(np.int64),
                          "threshold": np.where(leaf, 0.0, t.threshold).astype(np.float64),
                          "missing_left": np.asarray(t.missing_go_to_left).astype(bool),
                          "left": np.where(leaf, 0, t.children_left).astype(np.int64),
                          "right": np.where(leaf, 0, t.children_right).astype(np.int64),
                          "leaf": leaf, "value": np.where(leaf, counts[:, 1] / total, 0.0)})
        return cls(trees, [str(c) for c in est.classes_], est.n_features_in_, _simple_params(est))

    def to_dict(self) -> dict:
        return self._dict()

    @classmethod
    def from_dict(cls, d: dict) -> "ForestEnsemble":
        """Rebuild from :meth:`to_dict`, checking that every array is well formed."""
        classes, n_features, trees, params = _header_from_dict(d, cls.kind)
        return cls(trees, classes, n_features, params)

    def predict_proba(self, X) -> np.ndarray:
        X = self._check(X).astype(np.float32).astype(np.float64)  # scikit-learn's trees compare float32
        p = self._leaf_sums(X) / len(self.trees)
        return np.column_stack([1.0 - p, p])


_KINDS = {k.kind: k for k in (TreeEnsemble, ForestEnsemble)}


class MeanEnsemble:
    """The mean of tree ensembles' class probabilities (``gb+rf``), rebuilt from arrays."""

    allows_nan = True
    kind = "mean"

    def __init__(self, members: list[_Trees], params: dict | None = None):
        self.members = list(members)
        self.classes_ = self.members[0].classes_
        self.n_features_in_ = self.members[0].n_features_in_
        self.params = dict(params or {})

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params, "members": [m.to_dict() for m in self.members]}

    @classmethod
    def from_dict(cls, d: dict) -> "MeanEnsemble":
        """Rebuild from :meth:`to_dict`: two or more members of known kinds, alike in classes and
        features."""
        if not isinstance(d, dict) or d.get("kind") != cls.kind:
            raise ValueError("not a mean of tree ensembles")
        raw = d.get("members")
        if not isinstance(raw, list) or len(raw) < 2:
            raise ValueError("'members' must list at least two ensembles")
        members = []
        for i, m in enumerate(raw):
            kind = m.get("kind") if isinstance(m, dict) else None
            if kind not in _KINDS:
                raise ValueError(f"member {i}: kind must be one of {', '.join(_KINDS)}, not {kind!r}")
            members.append(_KINDS[kind].from_dict(m))
        first = members[0]
        if any(list(m.classes_) != list(first.classes_) or m.n_features_in_ != first.n_features_in_
               for m in members):
            raise ValueError("the members differ in classes or features")
        params = d.get("params") if isinstance(d.get("params"), dict) else {}
        return cls(members, params)

    def predict_proba(self, X) -> np.ndarray:
        total = self.members[0].predict_proba(X)
        for m in self.members[1:]:
            total = total + m.predict_proba(X)
        return total / len(self.members)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def get_params(self, deep: bool = False) -> dict:
        return dict(self.params)


def json_form(est: Any) -> "_Trees | MeanEnsemble | None":
    """The JSON-serialisable stand-in of a fitted ``gb``, ``rf`` or ``gb+rf`` estimator, or None
    for another estimator (or one with no JSON form, e.g. categorical splits)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    from hwnoise.training.classifiers import BoostedForest

    try:
        if isinstance(est, HistGradientBoostingClassifier):
            return TreeEnsemble.from_sklearn(est)
        if isinstance(est, RandomForestClassifier):
            return ForestEnsemble.from_sklearn(est)
        if isinstance(est, BoostedForest) and hasattr(est, "rf_"):
            return MeanEnsemble([TreeEnsemble.from_sklearn(est.gb_), ForestEnsemble.from_sklearn(est.rf_)],
                                _simple_params(est))
    except HwnoiseError:
        return None
    return None
