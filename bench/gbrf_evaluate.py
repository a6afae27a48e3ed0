"""``hwnoise evaluate`` with the mean of the preset's gradient boosting and a random forest as its
classifier (docs/models.md, "Other learners, and a mean of two"): a measurement, not a classifier
hwnoise offers (its forest would not fit a shipped JSON model).

    python bench/gbrf_evaluate.py wc/wcxb-* --preset general --protocol cross-site --methods model \\
        --scheduler threads -o OUT

Every argument goes to ``hwnoise evaluate``; ``--classifier`` is set here to ``GbRf``, which is
registered as ``hwnoise.bench_gbrf.GbRf`` for the run (``--classifier`` names only scikit-learn and
hwnoise classes). Use ``--scheduler threads`` or ``sync``: worker processes would not have it.
"""
from __future__ import annotations

import sys
import types

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class GbRf(ClassifierMixin, BaseEstimator):
    """The mean probability of a ``HistGradientBoostingClassifier`` (the preset's) and a
    ``RandomForestClassifier`` (missing values as -1)."""

    def __init__(self, n_estimators: int = 100, min_samples_leaf: int = 20, random_state: int = 1):
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

        X = np.asarray(X, dtype=float)
        self.gb_ = HistGradientBoostingClassifier(random_state=self.random_state).fit(
            X, y, sample_weight=sample_weight)
        self.rf_ = RandomForestClassifier(n_estimators=self.n_estimators, min_samples_leaf=self.min_samples_leaf,
                                          max_features="sqrt", n_jobs=2, random_state=self.random_state).fit(
            np.nan_to_num(X, nan=-1.0), y, sample_weight=sample_weight)
        self.classes_, self.n_features_in_ = self.gb_.classes_, X.shape[1]
        return self

    def predict_proba(self, X):
        X = np.asarray(X, dtype=float)
        return (self.gb_.predict_proba(X) + self.rf_.predict_proba(np.nan_to_num(X, nan=-1.0))) / 2

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def main(argv: list[str] | None = None) -> int:
    module = types.ModuleType("hwnoise.bench_gbrf")
    module.GbRf = GbRf
    sys.modules[module.__name__] = module
    from hwnoise.cli import main as hwnoise_main

    args = list(sys.argv[1:] if argv is None else argv)
    return hwnoise_main(["evaluate", *args, "--classifier", "hwnoise.bench_gbrf.GbRf"])


if __name__ == "__main__":
    sys.exit(main())
