"""Unit tests of C45Classifier: J48's split rules, MDL, -M, pruning, the sklearn contract, JSON."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from hwnoise.training import c45
from hwnoise.training.c45 import C45Classifier, C45Error, add_errs
from hwnoise.training.j48_text import (J48TextError, double_to_string, export_j48, java_double,
                                       parse_j48, round_double, tree_shape)


def noisy(n=600, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [10, 3, 1, 50]
    X[:, 1] = np.round(X[:, 1])
    y = np.where(X[:, 0] + 2 * X[:, 1] + rng.normal(size=n) * 6 > 0, "N", "S")
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


# ------------------------------------------------------------------ Stats.addErrs

def test_add_errs_matches_quinlans_table_for_zero_errors():
    """C4.5 book, U_25%(0, N): 0.750 for N=1, 0.206 per case for N=6, 0.143 for N=9."""
    assert add_errs(1, 0, 0.25) == pytest.approx(0.75)
    assert add_errs(6, 0, 0.25) / 6 == pytest.approx(0.206, abs=5e-4)
    assert add_errs(9, 0, 0.25) / 9 == pytest.approx(0.143, abs=5e-4)


def test_add_errs_interpolates_below_one_and_uses_normal_bound_above():
    base = add_errs(10, 0, 0.25)
    one = add_errs(10, 1, 0.25)
    assert add_errs(10, 0.5, 0.25) == pytest.approx(base + 0.5 * (one - base))
    z = 0.6744897501960817                      # normal quantile of 0.75
    n, e = 100.0, 10.0
    f = (e + 0.5) / n
    upper = (f + z * z / (2 * n) + z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))) / (1 + z * z / n)
    assert add_errs(n, e, 0.25) == pytest.approx(upper * n - e, rel=1e-12)
    assert add_errs(10, 9.6, 0.25) == pytest.approx(0.4)      # e + 0.5 >= N
    assert add_errs(10, 3, 0.6) == 0.0                         # CF > 0.5: no estimate


def test_confidence_is_rounded_like_a_java_float():
    cf32 = float(np.float32(0.1))
    assert add_errs(7, 0, 0.1) == pytest.approx(7 * (1 - cf32 ** (1 / 7)), rel=1e-15)
    assert add_errs(7, 0, 0.1) != 7 * (1 - 0.1 ** (1 / 7))


# ------------------------------------------------------------------ the numeric split

def reference_split(x, y, w, k, sum_w, min_obj, mdl=True):
    """C45Split.handleNumericAttribute written as J48's own loop (slow, obvious)."""
    known = ~np.isnan(x)
    xs, ys, ws = x[known], y[known], w[known]
    order = np.argsort(xs, kind="stable")
    xs, ys, ws = xs[order], ys[order], ws[order]
    lf = lambda v: 0.0 if v < 1e-6 else v * math.log(v) / math.log(2)
    tot = np.bincount(ys, weights=ws, minlength=k)
    known_w = tot.sum()
    min_split = 0.1 * known_w / k
    min_split = float(min_obj) if min_split <= min_obj + 1e-6 else min(min_split, 25.0)
    if len(xs) < 2 * min_split - 1e-6:
        return None
    old = lf(known_w) - sum(lf(t) for t in tot)
    left = np.zeros(k)
    best_gain, best_i, count = 0.0, -1, 0
    for i in range(1, len(xs)):
        left[ys[i - 1]] += ws[i - 1]
        if xs[i - 1] + 1e-5 < xs[i]:
            right = tot - left
            if left.sum() >= min_split - 1e-6 and right.sum() >= min_split - 1e-6:
                new = sum(lf(b.sum()) - sum(lf(c) for c in b) for b in (left, right))
                gain = (old - new) * (known_w / sum_w)
                gain = 0.0 if abs(gain) < 1e-6 else gain / known_w
                if gain > best_gain + 1e-6:
                    best_gain, best_i = gain, i
                count += 1
    if count == 0:
        return None
    gain = best_gain - (math.log2(count) / sum_w if mdl else 0.0)
    if gain <= 1e-6:
        return None
    return gain, (xs[best_i] + xs[best_i - 1]) / 2, count


@pytest.mark.parametrize("seed", range(25))
def test_vectorised_split_search_equals_j48_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    x = np.round(rng.normal(size=n) * rng.choice([1, 5, 100]), int(rng.integers(0, 3)))
    y = (x + rng.normal(size=n) * rng.uniform(0.5, 50) > 0).astype(np.intp)
    w = np.ones(n) if seed % 2 else rng.uniform(0.2, 2.0, n)
    if seed % 3 == 0:
        x[rng.random(n) < 0.2] = np.nan
    sum_w = float(w.sum())
    ref = reference_split(x, y, w, 2, sum_w, 2)
    got = c45._numeric_split(x, y, w, 2, sum_w, 2, True, 0)
    if ref is None:
        assert got is None
    else:
        assert got is not None
        assert got.info_gain == pytest.approx(ref[0], abs=1e-9)
        assert got.threshold == ref[1]


def test_mdl_correction_subtracts_log2_of_candidate_cuts():
    x = np.arange(40, dtype=float)
    y = (np.arange(40) % 3 == 0).astype(np.intp)            # weak pattern, 36 admissible cuts
    w = np.ones(40)
    plain = c45._numeric_split(x, y, w, 2, 40.0, 2, False, 0)
    corrected = c45._numeric_split(x, y, w, 2, 40.0, 2, True, 0)
    ref = reference_split(x, y, w, 2, 40.0, 2, mdl=False)
    assert plain is not None and ref is not None
    count = ref[2]
    assert count == 37                                      # cuts 2..38 leave >= 2 on each side
    expected = plain.info_gain - math.log2(count) / 40
    assert (corrected is None) == (expected <= 1e-6)
    if corrected is not None:
        assert corrected.info_gain == pytest.approx(expected)


def test_values_closer_than_1e5_are_never_cut_apart():
    x = np.array([1.0, 1.000004, 1.000008, 1.000009, 5.0, 5.0, 5.0, 5.0])
    y = np.array([0, 1, 1, 1, 0, 0, 0, 0])
    s = c45._numeric_split(x, y, np.ones(8), 2, 8.0, 2, True, 0)
    # 1.0 .. 1.000009 form one run of near-equal values: the only cut is before 5.0
    assert s is not None and s.threshold == pytest.approx((1.000009 + 5.0) / 2)


def test_min_split_is_a_tenth_of_the_class_share_clamped_to_m_and_25():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4000, 1))
    y = np.where(X[:, 0] > 2.6, "N", "S")                   # about 19 N at the top end
    clf = C45Classifier(unpruned=True, collapse_tree=False).fit(X, y)
    # 0.1 * 4000 / 2 = 200 -> clamped to 25: no branch of the root may hold fewer than 25 rows
    left, right = clf.children_left_[0], clf.children_right_[0]
    assert left >= 0
    assert clf.value_[left].sum() >= 25 and clf.value_[right].sum() >= 25
    assert min(clf.value_[left].sum(), clf.value_[right].sum()) == 25   # the cut J48 would pick
    small = C45Classifier(unpruned=True, min_num_obj=30).fit(X[:59], y[:59])
    assert small.node_count_ == 1                           # 59 < 2 * 30: a leaf


def test_min_num_obj_bounds_every_leaf_of_an_unpruned_tree():
    X, y = noisy(800, seed=4)
    for m in (2, 7, 20):
        clf = C45Classifier(min_num_obj=m, unpruned=True, collapse_tree=False).fit(X, y)
        leaves = clf.children_left_ < 0
        assert clf.value_[leaves].sum(axis=1).min() >= m


def test_thresholds_are_training_values_and_left_means_less_or_equal():
    X, y = noisy(500, seed=2)
    clf = C45Classifier().fit(X, y)
    inner = np.flatnonzero(clf.children_left_ >= 0)
    assert inner.size > 0
    for node in inner:
        assert clf.threshold_[node] in set(X[:, clf.feature_[node]].tolist())
    # J48's whichSubset: x <= threshold (within 1e-6) goes left
    t = clf.threshold_[0]
    assert c45._goes_left(np.array([t, t + 5e-7, t + 2e-6]), t).tolist() == [True, True, False]


def test_gain_filter_keeps_only_attributes_with_at_least_average_gain():
    """The root is the attribute of best gain ratio among those with gain >= average - 1e-3."""
    X, y = noisy(700, seed=7)
    clf = C45Classifier().fit(X, y)
    yi = (y == clf.classes_[1]).astype(np.intp)
    w = np.ones(len(y))
    splits = [c45._numeric_split(X[:, j], yi, w, 2, float(len(y)), 2, True, j) for j in range(4)]
    splits = [s for s in splits if s is not None]
    avg = sum(s.info_gain for s in splits) / len(splits)
    eligible = [s for s in splits if s.info_gain >= avg - 1e-3]
    assert clf.feature_[0] == max(eligible, key=lambda s: s.gain_ratio).feature


def test_single_class_and_tiny_data_give_a_root_leaf():
    X = np.arange(10, dtype=float).reshape(-1, 1)
    clf = C45Classifier().fit(X, ["S"] * 10)
    assert clf.node_count_ == 1 and list(clf.predict([[3.0]])) == ["S"]
    clf = C45Classifier().fit(X[:3], ["S", "N", "S"])           # 3 < 2 * M
    assert clf.node_count_ == 1
    text = export_j48(clf, ["x"])
    assert text == ("J48 pruned tree\n------------------\n: S (3.0/1.0)\n\n"
                    "Number of Leaves  : \t1\n\nSize of the tree : \t1\n")


# ------------------------------------------------------------------ pruning

def test_pruning_replaces_a_split_whose_pessimistic_errors_are_not_lower():
    # root: 10 S / 4 N; the best cut puts 2 N + 1 S on the left: leaves 9/2 errors vs 1 for a leaf split
    x = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], dtype=float)
    y = np.array(list("NNSSSNSSSSSSNS"))
    unpruned = C45Classifier(unpruned=True).fit(x.reshape(-1, 1), y, class_order=["S", "N"])
    pruned = C45Classifier().fit(x.reshape(-1, 1), y, class_order=["S", "N"])
    leaves = unpruned.children_left_ < 0
    est_tree = sum(c45._estimated_errors(v, 0.25) for v in unpruned.value_[leaves])
    est_leaf = c45._estimated_errors(unpruned.value_[0], 0.25)
    assert unpruned.node_count_ == 3
    assert (pruned.node_count_ == 1) == (est_leaf <= est_tree + 0.1)
    assert pruned.node_count_ <= unpruned.node_count_


def test_lower_confidence_prunes_more_and_unpruned_prunes_nothing():
    X, y = noisy(1500, seed=3)
    sizes = [C45Classifier(confidence=c).fit(X, y).node_count_ for c in (0.01, 0.1, 0.25, 0.5)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert C45Classifier(unpruned=True).fit(X, y).node_count_ >= sizes[-1]


def test_collapse_removes_subtrees_that_do_not_lower_training_errors():
    X, y = noisy(800, seed=9)
    raw = C45Classifier(unpruned=True, collapse_tree=False).fit(X, y)
    col = C45Classifier(unpruned=True).fit(X, y)
    assert col.node_count_ <= raw.node_count_
    # every internal node of a collapsed tree beats its own leaf by more than 1e-3 training errors
    def train_err(clf, node):
        if clf.children_left_[node] < 0:
            return c45._num_incorrect(clf.value_[node])
        return train_err(clf, clf.children_left_[node]) + train_err(clf, clf.children_right_[node])
    for node in np.flatnonzero(col.children_left_ >= 0):
        assert train_err(col, node) < c45._num_incorrect(col.value_[node]) - 1e-3


# ------------------------------------------------------------------ missing values

def test_missing_values_spread_with_fractional_weights():
    X, y = noisy(600, seed=5, missing=0.15)
    clf = C45Classifier().fit(X, y)
    assert clf.value_[0].sum() == pytest.approx(600)
    inner = np.flatnonzero(clf.children_left_ >= 0)
    for node in inner:                 # the children's weights add up to the parent's
        kids = clf.value_[clf.children_left_[node]].sum() + clf.value_[clf.children_right_[node]].sum()
        assert kids == pytest.approx(clf.value_[node].sum())
    assert any(v != round(v) for v in clf.value_.sum(axis=1))
    # a row with every value unknown goes down every branch: it gets the root's class mix
    row = np.full((1, X.shape[1]), np.nan)
    assert clf.predict_proba(row)[0] == pytest.approx(clf.value_[0] / clf.value_[0].sum())
    # any row: J48's getProbs, written as the obvious recursion over the arrays
    def ref(node, x, weight):
        l, r = clf.children_left_[node], clf.children_right_[node]
        if l < 0:
            return weight * clf.value_[node] / clf.value_[node].sum()
        v = x[clf.feature_[node]]
        if np.isnan(v):
            tot = clf.value_[node].sum()
            return sum(ref(c, x, weight * clf.value_[c].sum() / tot) for c in (l, r))
        return ref(l if v - clf.threshold_[node] < 1e-6 else r, x, weight)
    probes = X[:50].copy()
    probes[::2, clf.feature_[0]] = np.nan
    expect = np.array([ref(0, x, 1.0) for x in probes])
    np.testing.assert_allclose(clf.predict_proba(probes), expect, rtol=1e-12)


# ------------------------------------------------------------------ scikit-learn contract

def test_estimator_contract_pipeline_cv_and_grid_search():
    X, y = noisy(400, seed=1)
    clf = C45Classifier(min_num_obj=3)
    assert clf.get_params()["min_num_obj"] == 3 and not hasattr(clf, "classes_")
    with pytest.raises(NotFittedError):
        clf.predict(X)
    pipe = make_pipeline(FunctionTransformer(), C45Classifier())
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.7
    grid = GridSearchCV(C45Classifier(), {"confidence": [0.1, 0.25], "min_num_obj": [2, 10]}, cv=3).fit(X, y)
    assert set(grid.best_params_) == {"confidence", "min_num_obj"}
    fitted = clone(clf).fit(X, y)
    assert list(fitted.classes_) == ["N", "S"] and fitted.n_features_in_ == 4


def test_bad_parameters_are_rejected():
    X, y = noisy(50)
    with pytest.raises(ValueError, match="confidence"):
        C45Classifier(confidence=0.9).fit(X, y)
    with pytest.raises(ValueError, match="min_num_obj"):
        C45Classifier(min_num_obj=-1).fit(X, y)
    with pytest.raises(ValueError, match="class_order"):
        C45Classifier().fit(X, y, class_order=["S"])


def test_class_order_breaks_ties_toward_the_first_class():
    X = np.array([[0.0], [0.0]])
    y = ["N", "S"]
    assert C45Classifier().fit(X, y, class_order=["S", "N"]).predict([[0.0]])[0] == "S"
    assert C45Classifier().fit(X, y).predict([[0.0]])[0] == "N"


def test_check_estimator_passes():
    from sklearn.utils.estimator_checks import check_estimator
    results = check_estimator(C45Classifier(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []


# ------------------------------------------------------------------ JSON and text

def test_to_dict_round_trips_through_json():
    X, y = noisy(500, seed=6, missing=0.05)
    clf = C45Classifier(confidence=0.2).fit(X, y)
    back = C45Classifier.from_dict(json.loads(json.dumps(clf.to_dict())))
    assert back.get_params() == clf.get_params()
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    assert export_j48(back, list("abcd")) == export_j48(clf, list("abcd"))
    bad = clf.to_dict()
    bad["children_left"][0] = 10 ** 6
    with pytest.raises(C45Error):
        C45Classifier.from_dict(bad)
    with pytest.raises(C45Error):
        C45Classifier.from_dict({"format": "other"})


def test_export_and_parse_agree_with_the_arrays():
    X, y = noisy(500, seed=8)
    clf = C45Classifier().fit(X, y)
    text = clf.export_text(["a", "b", "c", "d"])
    parsed = parse_j48(text)
    assert tree_shape(parsed) == (clf.n_leaves_, clf.node_count_) == (parsed["n_leaves"], parsed["size"])
    assert parsed["tree"]["attribute"] == "abcd"[clf.feature_[0]]
    assert parsed["tree"]["threshold_text"] == double_to_string(clf.threshold_[0], 6)
    with pytest.raises(J48TextError, match="line"):
        parse_j48("J48 pruned tree\n------------------\n\na <= 1\n|   b > 2: S (1.0)\n")


@pytest.mark.parametrize("value,six,java", [
    (0.0, "0", "0.0"), (5e-7, "0.000001", "5.0E-7"), (-0.5, "-0.5", "-0.5"),
    (123.4567894, "123.456789", "123.4567894"), (1e7, "10000000", "1.0E7"),
    (1e13, "1.0E13", "1.0E13"), (2.5e-4, "0.00025", "2.5E-4"), (0.1 + 0.2, "0.3", "0.30000000000000004")])
def test_weka_number_formatting(value, six, java):
    """Values checked against weka.core.Utils.doubleToString and Java's Double.toString."""
    assert double_to_string(value, 6) == six
    assert java_double(value) == java
    assert java_double(round_double(2.675)) == "2.68"


def test_best_cut_follows_j48s_tolerant_running_best():
    """J48 keeps the first gain that beats the running best by more than 1e-6, not the argmax."""
    def loop(g):
        best, idx = 0.0, -1
        for i, x in enumerate(g):
            if x - best > 1e-6:
                best, idx = x, i
        return idx
    rng = np.random.default_rng(0)
    cases = [np.array([0.5, 0.5000015, 0.500002]), np.zeros(4), np.array([1e-6, 5e-7])]
    for t in range(400):
        n = int(rng.integers(1, 300))
        cases.append([rng.random(n) * 1e-5, np.cumsum(rng.random(n) * 3e-7),
                      np.round(rng.random(n) * 1e-5, 7)][t % 3])
    cases.append(np.cumsum(rng.random(100_000) * 1e-6))      # a long chain of records
    assert loop(cases[0]) == 1                                 # argmax would say 2
    for g in cases:
        assert c45._first_record(np.asarray(g, dtype=float)) == loop(g)


def _staircase(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Classes alternating every 200 values of feature 0: J48 peels the steps off one by one,
    so the tree's depth grows with the rows (about n / 200 levels)."""
    rng = np.random.default_rng(0)
    X = rng.random((n, 6))
    X[:, 0] = rng.permutation(n)
    return X, np.where((X[:, 0] // 200) % 2 == 0, "S", "N")


def _fit_peak(n: int) -> tuple[float, int]:
    """Peak bytes numpy allocates during one fit, in units of the feature matrix, and the
    tree's node count."""
    import tracemalloc

    X, y = _staircase(n)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        clf = C45Classifier().fit(X, y)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return peak / X.nbytes, clf.node_count_


def test_fit_memory_does_not_grow_with_depth():
    """A fit holds a fixed number of copies of the data, however deep the tree: each node's
    rows are a segment of one array of row ids, partitioned in place, not an array of its own
    (nor a sorted copy of every column per node, held along the path, as before: that made the
    peak grow with the depth, 3x from 2,000 to 8,000 rows here)."""
    small, small_nodes = _fit_peak(2000)
    big, big_nodes = _fit_peak(8000)
    assert big_nodes > 3 * small_nodes            # four times the rows, four times the depth
    assert big <= 1.2 * small, (small, big)       # measured: 6.7 and 6.0 copies of X
