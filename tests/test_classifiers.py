"""The named classifiers keep scikit-learn's estimator contract."""
from __future__ import annotations

import numpy as np

from hwnoise.training.classifiers import BoostedForest, PrunedCART


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


def test_boosted_forest_passes_check_estimator_but_what_a_forest_cannot():
    """gb+rf keeps the contract; like scikit-learn's own RandomForestClassifier (marked so in
    scikit-learn's tests), a bootstrap's weights are not repeated rows."""
    from sklearn.utils.estimator_checks import check_estimator

    from hwnoise.training.model import threads

    expected = {"check_sample_weight_equivalence_on_dense_data":
                "a forest's bootstrap: sample weights are not repeated rows"}
    with threads():
        results = check_estimator(BoostedForest(n_estimators=5), on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []


def test_boosted_forest_is_the_mean_of_its_two_learners():
    from hwnoise.training.model import threads

    rng = np.random.RandomState(0)
    X = rng.rand(400, 4)
    X[::9, 2] = np.nan
    y = np.where(X[:, 0] + rng.normal(0, 0.2, 400) > 0.5, "N", "S")
    with threads():
        est = BoostedForest(n_estimators=10, max_leaf_nodes=8, random_state=3).fit(X, y)
    assert list(est.classes_) == ["N", "S"] and est.n_iter_ == est.gb_.n_iter_
    assert all(t.get_n_leaves() <= 8 for t in est.rf_.estimators_)
    assert np.array_equal(est.predict_proba(X), (est.gb_.predict_proba(X) + est.rf_.predict_proba(X)) / 2)
    assert (est.predict(X) == y).mean() > 0.8


def test_a_wrong_parameter_is_a_classifier_error_before_any_fit():
    """scikit-learn checks its estimators' parameters only at fit, deep in a run: a wrong
    ``--param`` there was a traceback. ``make_classifier`` checks them as it makes the estimator,
    inside a pipeline too; hwnoise's own estimators, which declare no constraints, pass as before."""
    import pytest

    from hwnoise.training.classifiers import ClassifierError, make_classifier

    for name, params, said in [("gb", {"max_depth": "abc"}, "'max_depth' parameter of HistGradientBoostingClassifier"),
                               ("rf", {"n_estimators": -1}, "'n_estimators' parameter of RandomForestClassifier"),
                               ("logreg", {"C": "x"}, "'C' parameter of LogisticRegression")]:
        with pytest.raises(ClassifierError, match=f"classifier {name}: The {said}"):
            make_classifier(name, **params)
    for name in ("j48", "j48-unpruned", "cart", "gb", "gb+rf", "rf", "logreg"):
        make_classifier(name)
