"""The named classifiers keep scikit-learn's estimator contract."""
from __future__ import annotations

import numpy as np

from hwnoise.training.classifiers import PrunedCART


def test_pruned_cart_passes_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(PrunedCART(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []


def test_pruned_cart_takes_missing_values_and_refuses_predict_before_fit():
    import pytest
    from sklearn.exceptions import NotFittedError

    rng = np.random.RandomState(0)
    X = rng.rand(60, 3)
    y = (X[:, 0] > 0.5).astype(int)
    with pytest.raises(NotFittedError):
        PrunedCART().predict(X)
    holes = np.where(X > 0.9, np.nan, X)
    assert (PrunedCART().fit(holes, y).predict(holes) == y).mean() > 0.8
