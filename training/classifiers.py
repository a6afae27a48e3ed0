"""The classifiers ``hwnoise train --classifier`` offers, by name.

- ``j48``: ``C45Classifier``, Weka J48's C4.5 (confidence 0.25, min 2 objects): the default.
- ``j48-unpruned``: the same tree without pruning (J48 ``-U``).
- ``cart``: scikit-learn's CART with cost-complexity pruning; ``ccp_alpha="auto"`` picks the
  pruning strength by an inner 3-fold cross-validation (grouped by page when pages are known).
- ``rf``: random forest (100 trees); ``gb``: histogram gradient boosting; ``logreg``: scaled
  logistic regression.
- ``gb+rf``: ``BoostedForest``, the mean of ``gb``'s probability and a small random forest's
  (docs/models.md, "Other learners, and a mean of two").
- any other scikit-learn classifier by dotted name, e.g. ``sklearn.ensemble.ExtraTreesClassifier``.
"""
from __future__ import annotations

import importlib
import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone, is_classifier
from sklearn.model_selection import GroupKFold, StratifiedKFold, check_cv
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from hwnoise.errors import HwnoiseError

NAMES = ("j48", "j48-unpruned", "cart", "rf", "gb", "gb+rf", "logreg")


class ClassifierError(HwnoiseError):
    """An unknown classifier name or bad parameters."""


class PrunedCART(ClassifierMixin, BaseEstimator):
    """CART (scikit-learn's DecisionTreeClassifier) with cost-complexity pruning.

    With ``ccp_alpha="auto"`` the pruning strength is chosen among up to ``n_alphas`` values of
    the pruning path by an inner ``cv``-fold cross-validation on at most ``max_rows`` rows
    (grouped when ``fit`` gets ``groups``; ``cv`` may also be a scikit-learn splitter or a list of
    (train, test) index pairs); the best mean (weighted) accuracy wins, ties going to the
    stronger pruning (the smaller tree). The final tree is fitted on all rows. Sample weights
    count as repeated rows everywhere, as scikit-learn's estimator checks require.
    """

    def __init__(self, ccp_alpha="auto", criterion: str = "gini", min_samples_leaf: int = 1,
                 cv: int = 3, n_alphas: int = 12, max_rows: int = 50_000, random_state: int = 1):
        self.ccp_alpha = ccp_alpha
        self.criterion = criterion
        self.min_samples_leaf = min_samples_leaf
        self.cv = cv
        self.n_alphas = n_alphas
        self.max_rows = max_rows
        self.random_state = random_state

    def _tree(self, alpha: float) -> DecisionTreeClassifier:
        return DecisionTreeClassifier(criterion=self.criterion, min_samples_leaf=self.min_samples_leaf,
                                      ccp_alpha=alpha, random_state=self.random_state)

    def _choose_alpha(self, X, y, groups, w) -> float:
        given_splits = not isinstance(self.cv, (int, np.integer))
        idx = np.arange(len(y))
        if len(idx) > self.max_rows and not given_splits:  # given splits index every row
            rng = np.random.RandomState(self.random_state)
            idx = np.sort(rng.choice(idx, self.max_rows, replace=False))
        Xs, ys, ws = X[idx], y[idx], w[idx]
        gs = None if groups is None else np.asarray(groups)[idx]
        alphas = self._tree(0.0).cost_complexity_pruning_path(Xs, ys, sample_weight=ws).ccp_alphas[:-1]
        alphas = np.unique(np.clip(alphas, 0, None))
        if len(alphas) <= 1:
            return 0.0
        alphas = np.unique(np.quantile(alphas, np.linspace(0, 1, self.n_alphas)))
        if given_splits:  # a scikit-learn CV splitter or an iterable of (train, test) indices
            folds = list(check_cv(self.cv, ys, classifier=True).split(Xs, ys, gs))
        elif gs is not None and len(np.unique(gs)) >= self.cv:
            folds = list(GroupKFold(n_splits=self.cv).split(Xs, ys, gs))
        else:
            n_min = np.min(np.unique(ys, return_counts=True)[1])
            if n_min < 2:
                return float(alphas[0])
            folds = list(StratifiedKFold(n_splits=min(self.cv, n_min), shuffle=True,
                                         random_state=self.random_state).split(Xs, ys))
        means = []
        for a in alphas:
            acc = []
            for tr, te in folds:
                hit = self._tree(a).fit(Xs[tr], ys[tr], sample_weight=ws[tr]).predict(Xs[te]) == ys[te]
                acc.append(np.average(hit, weights=ws[te]) if ws[te].sum() > 0 else np.mean(hit))
            means.append(np.mean(acc))
        means = np.asarray(means)
        best = np.flatnonzero(means >= means.max() - 1e-12)
        return float(alphas[best[-1]])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # scikit-learn's trees send missing values down a side
        return tags

    def fit(self, X, y, groups=None, sample_weight=None):
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        w = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if self.ccp_alpha == "auto":
            alpha = self._choose_alpha(X, y, groups, w)
        else:
            alpha = float(self.ccp_alpha)
        self.ccp_alpha_ = alpha
        self.tree_model_ = self._tree(alpha).fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.tree_model_.classes_
        return self

    def predict(self, X):
        check_is_fitted(self, "tree_model_")
        return self.tree_model_.predict(validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False))

    def predict_proba(self, X):
        check_is_fitted(self, "tree_model_")
        return self.tree_model_.predict_proba(validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False))


class BoostedForest(ClassifierMixin, BaseEstimator):
    """The mean of two tree ensembles' class probabilities: histogram gradient boosting (``gb``,
    with scikit-learn's defaults unless given) and a random forest of ``n_estimators`` trees of at
    most ``max_leaf_nodes`` leaves (leaves of at least ``min_samples_leaf`` rows, ``max_features``
    columns tried at each split).

    Why: across sites, the forest's averaged trees rank a page's nodes differently enough from
    boosting's that their mean scores better than either (docs/models.md, "Other learners, and a
    mean of two"); the forest's trees are capped so that the model, saved as arrays
    (``training/ensemble.py``), stays a few MB of JSON. Missing values: both learners send them
    where training sent them (scikit-learn's trees support NaN natively).
    """

    def __init__(self, n_estimators: int = 100, max_leaf_nodes: int | None = 255,
                 min_samples_leaf: int = 20, max_features="sqrt", learning_rate: float = 0.1,
                 max_iter: int = 100, random_state=None, n_jobs: int | None = 1):
        self.n_estimators = n_estimators
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def fit(self, X, y, sample_weight=None):
        from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        self.gb_ = HistGradientBoostingClassifier(learning_rate=self.learning_rate, max_iter=self.max_iter,
                                                  random_state=self.random_state)
        self.gb_.fit(X, y, sample_weight=sample_weight)
        self.rf_ = RandomForestClassifier(n_estimators=self.n_estimators, max_leaf_nodes=self.max_leaf_nodes,
                                          min_samples_leaf=self.min_samples_leaf,
                                          max_features=self.max_features, n_jobs=self.n_jobs,
                                          random_state=self.random_state)
        self.rf_.fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.gb_.classes_
        self.n_iter_ = self.gb_.n_iter_
        return self

    def predict_proba(self, X):
        check_is_fitted(self, "rf_")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        return (self.gb_.predict_proba(X) + self.rf_.predict_proba(X)) / 2

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _c45(**params):
    from hwnoise.training.c45 import C45Classifier

    return C45Classifier(**params)


def _dotted(name: str, params: dict):
    module_name, _, cls_name = name.rpartition(".")
    if not module_name:
        raise ClassifierError(f"unknown classifier {name!r}; choose one of {', '.join(NAMES)} "
                              "or a dotted scikit-learn class name such as "
                              "sklearn.ensemble.ExtraTreesClassifier")
    if not (module_name == "sklearn" or module_name.startswith(("sklearn.", "hwnoise."))):
        raise ClassifierError(f"{name}: only scikit-learn (sklearn.*) and hwnoise classifiers "
                              "can be named")
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError):
        raise ClassifierError(f"no classifier {name!r} (module {module_name} has no {cls_name})") from None
    if not inspect.isclass(cls) or not is_classifier(cls()):
        raise ClassifierError(f"{name} is not a scikit-learn classifier")
    return cls(**params)


def make_classifier(name: str = "j48", *, seed: int | None = 1, **params):
    """A fresh, unfitted estimator for ``name`` (see the module docstring), with ``params``
    passed to it; ``seed`` becomes ``random_state`` where the estimator takes one."""
    name = (name or "j48").strip()
    key = name.lower()
    try:
        if key == "j48":
            est = _c45(**params)
        elif key == "j48-unpruned":
            est = _c45(unpruned=True, **params)
        elif key == "cart":
            est = PrunedCART(**params)
        elif key == "rf":
            from sklearn.ensemble import RandomForestClassifier

            est = RandomForestClassifier(**{"n_estimators": 100, "n_jobs": 1, **params})
        elif key == "gb":
            from sklearn.ensemble import HistGradientBoostingClassifier

            est = HistGradientBoostingClassifier(**params)
        elif key == "gb+rf":
            est = BoostedForest(**params)
        elif key == "logreg":
            from sklearn.linear_model import LogisticRegression
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            est = make_pipeline(StandardScaler(), LogisticRegression(**{"max_iter": 1000, **params}))
        else:
            est = _dotted(name, params)
    except TypeError as exc:
        raise ClassifierError(f"classifier {name}: {exc}") from None
    _check_params(est, name)
    if seed is not None:
        _seed(est, seed, explicit="random_state" in params)
    return est


def _check_params(est, name: str) -> None:
    """scikit-learn's own check of an estimator's parameters (its declared constraints), made
    here rather than at ``fit``, where a wrong ``--param`` (``max_depth=abc``) stopped a run deep
    in a fit with a traceback; estimators that declare none (hwnoise's own) are not checked."""
    for part in [est] + [step for _, step in getattr(est, "steps", [])]:
        validate = getattr(part, "_validate_params", None)
        if validate is None or getattr(part, "_parameter_constraints", None) is None:
            continue
        try:
            validate()
        except (TypeError, ValueError) as exc:
            raise ClassifierError(f"classifier {name}: {exc}") from None


def _seed(est, seed: int, explicit: bool) -> None:
    if explicit:
        return
    keys = [k for k in est.get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
    if keys:
        est.set_params(**{k: seed for k in keys})


def fresh(est):
    """An unfitted copy of ``est`` with the same parameters."""
    return clone(est)
