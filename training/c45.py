"""C4.5 release 8 as Weka 3.6's J48 grows, prunes and applies it, as a scikit-learn classifier.

Why: the dissertation trains J48; hwnoise gives a Python user the same tree without Java.
Every rule below was read from Weka 3.6.14 (classes ``J48``, ``j48.C45ModelSelection``,
``C45Split``, ``InfoGainSplitCrit``, ``GainRatioSplitCrit``, ``Distribution``, ``Stats``,
``C45PruneableClassifierTree``, ``ClassifierTree``) and is checked against real Weka in
``tests/test_weka_j48.py``:

* a node stays a leaf when its weight is below ``2 * min_num_obj`` or one class holds it all;
* per numeric attribute, the known values are sorted and a cut is a candidate between two
  neighbours more than 1e-5 apart whose both sides weigh at least
  ``minSplit = clamp(0.1 * known weight / n_classes, min_num_obj, 25)``; no search when the
  number (a count, not a weight) of known values is below ``2 * minSplit``;
* info gain on the known values, scaled by their share of the node's weight; the best cut is
  the first that beats the running best by more than 1e-6; the MDL correction subtracts
  ``log2(number of candidate cuts) / node weight``; a gain that is then <= 0 means no split;
* gain ratio with the split information counting the unknowns as one more branch;
* among the attributes with a split, only those whose gain is at least the average gain
  minus 1e-3 compete, the first highest gain ratio (beating by 1e-6) wins;
* the cut is the midpoint of its neighbours, then moved to the largest value in the whole
  training set that is <= it ("setSplitPoint"); ``x - threshold < 1e-6`` goes left;
* an unknown value goes down every branch with the weight share of that branch;
* after growing, ``collapse`` (a subtree that does not beat its root's training errors by
  more than 1e-3 becomes a leaf), then unless ``unpruned``, C4.5's pessimistic pruning with
  ``Stats.addErrs`` at ``confidence`` (a float, as in Java) and subtree raising of the largest
  branch (ties go to the last branch) with a 0.1 margin, redistributing the node's data.

The fitted tree lives in parallel arrays (``children_left_``, ``children_right_``,
``feature_``, ``threshold_``, ``value_`` = class weights per node, ``empty_``), which the J48
printer (:mod:`hwnoise.training.j48_text`) and the JSON form (:meth:`C45Classifier.to_dict`)
read. Split search is numpy over sorted columns (cumulative class weights), not a loop over rows.
"""
from __future__ import annotations

import math
import sys
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from scipy.special import ndtri
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from hwnoise.errors import HwnoiseError
from hwnoise.jsontext import whole_numbers

SMALL = 1e-6          # weka.core.Utils.SMALL: every gr/sm/eq comparison of J48 uses it
_LN2 = math.log(2.0)
FORMAT = "hwnoise-c45/1"


class C45Error(HwnoiseError):
    """A C4.5 model that cannot be built or read (bad parameters, bad JSON tree)."""


# ---------------------------------------------------------------- J48 arithmetic helpers

def _log_func(a: np.ndarray | float) -> np.ndarray | float:
    """EntropyBasedSplitCrit.logFunc: n * log2(n), 0 below 1e-6."""
    a = np.asarray(a, dtype=np.float64)
    # log(1) = 0 zeroes the values below 1e-6 (weights are never negative)
    return a * np.log(np.where(a < 1e-6, 1.0, a)) / _LN2


def _max_class(counts: np.ndarray) -> int:
    """Distribution.maxClass: the first class beating the running maximum by more than 1e-6."""
    best, idx = 0.0, 0
    for i, c in enumerate(counts):
        if c - best > SMALL:
            best, idx = c, i
    return idx


def _num_incorrect(counts: np.ndarray) -> float:
    return float(counts.sum() - counts[_max_class(counts)])


def add_errs(n: float, e: float, cf: float) -> float:
    """Stats.addErrs: extra errors of C4.5's pessimistic estimate at confidence ``cf``.

    ``cf`` is a Java float in J48, so it is rounded to float32 here too."""
    cf32 = np.float32(cf)
    cf_d = float(cf32)
    if cf_d > 0.5:
        return 0.0
    if e < 1:
        base = n * (1.0 - math.pow(cf_d, 1.0 / n))
        if e == 0:
            return base
        return base + e * (add_errs(n, 1.0, cf) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    z = float(ndtri(float(np.float32(1.0) - cf32)))
    f = (e + 0.5) / n
    r = (f + (z * z) / (2 * n) + z * math.sqrt((f / n) - (f * f / n) + (z * z / (4 * n * n)))) \
        / (1 + (z * z) / n)
    return (r * n) - e


def _estimated_errors(counts: np.ndarray, cf: float) -> float:
    """getEstimatedErrorsForDistribution: training errors + addErrs; 0 for an empty node."""
    total = float(counts.sum())
    if abs(total) < SMALL:
        return 0.0
    wrong = _num_incorrect(counts)
    return wrong + add_errs(total, wrong, cf)


def _first_record(g: np.ndarray) -> int:
    """Index J48's loop ``if (gr(g[i], best)) best = g[i]`` (best starting at 0) ends on, or -1.

    Exact and vectorised: the running best never lags the running maximum by more than 1e-6,
    so only strict prefix maxima can become the best; along them (increasing) the next best is
    found by binary search, and a long chain is followed by pointer doubling."""
    if g.size == 0:
        return -1
    if float(g.max()) - 0 <= SMALL:
        return -1
    prev_max = np.maximum.accumulate(g)
    pm = np.flatnonzero(np.concatenate(([True], g[1:] > prev_max[:-1])))
    v = g[pm]                                        # strictly increasing
    n = v.size
    k = int(np.flatnonzero(v - 0 > SMALL)[0])

    def following(i: int) -> int:
        """First j > i with v[j] - v[i] > 1e-6 (binary search, then the exact test)."""
        j = int(np.searchsorted(v, v[i] + SMALL, side="right"))
        while j < n and not v[j] - v[i] > SMALL:
            j += 1
        while j - 1 > i and v[j - 1] - v[i] > SMALL:
            j -= 1
        return j

    for _ in range(64):
        j = following(k)
        if j >= n:
            return int(pm[k])
        k = j
    # a long chain: follow nxt to its end by pointer doubling
    idx = np.arange(n)
    nxt = np.searchsorted(v, v + SMALL, side="right")
    for _ in range(4):                               # the exact test at rounding boundaries
        low = (nxt < n) & ~(v[np.minimum(nxt, n - 1)] - v > SMALL)
        high = (nxt - 1 > idx) & (v[np.maximum(nxt - 1, 0)] - v > SMALL)
        if not (low.any() or high.any()):
            break
        nxt = nxt + low - high
    step = np.where(nxt < n, nxt, idx)
    for _ in range(int(np.ceil(np.log2(n))) + 1):
        step = step[step]
    return int(pm[step[k]])


# ---------------------------------------------------------------- Java's sums

def _seq(values: np.ndarray, init: float = 0.0) -> float:
    """``s = init; for v: s = s + v`` as Java adds, left to right (numpy's sum is pairwise, which
    rounds fractional weights differently and flips exact ties between classes)."""
    if values.size == 0:
        return float(init)
    if init == 0.0:
        if bool(np.all(values == np.floor(values))):   # integers: every order sums exactly
            return float(values.sum())
        return float(np.cumsum(values)[-1])
    return float(np.cumsum(np.concatenate(([init], values)))[-1])


def _seq_classes(ys: np.ndarray, ws: np.ndarray, k: int, init: np.ndarray | None = None) -> np.ndarray:
    """Per class, the Java left-to-right sum of the weights of that class (from ``init``)."""
    if init is None and bool(np.all(ws == np.floor(ws))):   # integers: every order sums exactly
        return np.bincount(ys, weights=ws, minlength=k).astype(np.float64)
    out = np.zeros(k) if init is None else np.array(init, dtype=np.float64)
    for c in range(k):
        out[c] = _seq(ws[ys == c], out[c])
    return out


class _Dist:
    """weka.classifiers.trees.j48.Distribution: class weights per bag (``pcb``), per bag, per
    class and in total, each accumulated instance by instance as Java does."""
    __slots__ = ("pcb", "per_bag", "per_class", "total")

    def __init__(self, pcb: np.ndarray, per_bag: np.ndarray, per_class: np.ndarray, total: float):
        self.pcb, self.per_bag, self.per_class, self.total = pcb, per_bag, per_class, float(total)

    @classmethod
    def of(cls, ys: np.ndarray, ws: np.ndarray, k: int) -> "_Dist":
        """``new Distribution(data)``: one bag."""
        per_class = _seq_classes(ys, ws, k)
        total = _seq(ws)
        return cls(per_class[None, :].copy(), np.array([total]), per_class, total)

    @classmethod
    def bags(cls, bs: np.ndarray, ys: np.ndarray, ws: np.ndarray, nb: int, k: int) -> "_Dist":
        """``add(bag, instance)`` for each row in order (rows of known value only)."""
        pcb = np.zeros((nb, k))
        per_bag = np.zeros(nb)
        for b in range(nb):
            sel = bs == b
            per_bag[b] = _seq(ws[sel])
            pcb[b] = _seq_classes(ys[sel], ws[sel], k)
        return cls(pcb, per_bag, _seq_classes(ys, ws, k), _seq(ws))

    def copy(self) -> "_Dist":
        return _Dist(self.pcb.copy(), self.per_bag.copy(), self.per_class.copy(), self.total)

    def add_unknown(self, ys: np.ndarray, ws: np.ndarray) -> None:
        """addInstWithUnknown: rows of missing value spread over the bags by the bag shares."""
        if ws.size == 0:
            return
        nb = self.per_bag.size
        probs = np.full(nb, 1.0 / nb) if abs(self.total) < SMALL else self.per_bag / self.total
        self.per_class = _seq_classes(ys, ws, self.per_class.size, self.per_class)
        self.total = _seq(ws, self.total)
        for j in range(nb):
            nw = probs[j] * ws
            self.pcb[j] = _seq_classes(ys, nw, self.per_class.size, self.pcb[j])
            self.per_bag[j] = _seq(nw, self.per_bag[j])

    def max_class(self) -> int:
        return _max_class(self.per_class)

    def num_incorrect(self) -> float:
        return self.total - float(self.per_class[self.max_class()])

    def max_bag(self) -> int:
        """Distribution.maxBag: ties go to the last bag."""
        best, idx = 0.0, -1
        for b, v in enumerate(self.per_bag.tolist()):
            if best - v < SMALL or v >= best:
                best, idx = v, b
        return idx


def _ent_sum(logs: Sequence) -> np.ndarray | float:
    """``r = 0; r = r + logFunc(x)`` over the terms, in order."""
    r = 0.0
    for t in logs:
        r = r + t
    return r


def _new_ent(lpcb: Sequence, lbags: Sequence):
    """InfoGainSplitCrit.newEnt from the logFunc values per bag (classes) and of each bag,
    in Java's order: ``r += logFunc(perClassPerBag[i][j])`` then ``r -= logFunc(perBag[i])``."""
    r = 0.0
    for row, lb in zip(lpcb, lbags):
        for t in row:
            r = r + t
        r = r - lb
    return -r


def _gain(old_ent, new_ent, sum_w: float, total):
    """InfoGainSplitCrit.splitCritValue: the gain on the known values, scaled by their share."""
    unknown_rate = (sum_w - total) / sum_w
    num = (1 - unknown_rate) * (old_ent - new_ent)
    return np.where(np.abs(num) < SMALL, 0.0, num) / total


def _ratio(info_gain: float, per_bag: np.ndarray, total: float, sum_w: float) -> float:
    """GainRatioSplitCrit.splitCritValue: splitEnt counts the unknowns as one more bag."""
    ent = 0.0
    if total - 0 > SMALL:
        for b in per_bag.tolist():
            ent = ent - float(_log_func(b))
        ent = ent - float(_log_func(sum_w - total))
        ent = ent + float(_log_func(sum_w))
    if abs(ent) < SMALL:
        return 0.0
    return info_gain / (ent / sum_w)


def _log2(n: float) -> float:
    """Utils.log2: Math.log(n) / Math.log(2)."""
    return math.log(n) / _LN2


def java_quicksort(values: np.ndarray) -> np.ndarray:
    """The permutation ``Utils.sortWithNoMissingValues`` (Weka 3.6's median-of-three quicksort,
    not stable) gives ``values``; ``Instances.sort`` puts missing values (NaN) last as
    Double.MAX_VALUE. Ties come out in Java's order, which decides the order of later sums."""
    arr = np.where(np.isnan(values), sys.float_info.max, values)
    n = arr.size
    if n < 2 or np.unique(arr).size == n:          # no ties: the sorted order is unique
        return np.argsort(arr, kind="stable").astype(np.intp)
    a = arr.tolist()
    idx = list(range(n))
    stack = [(0, n - 1)]
    pop, push = stack.pop, stack.append
    while stack:
        left, right = pop()
        diff = right - left
        if diff == 0:
            continue
        if diff <= 2:                                # conditionalSwap on 2 or 3 elements
            pairs = ((left, right),) if diff == 1 else ((left, left + 1), (left, right), (left + 1, right))
            for i, j in pairs:
                if a[idx[i]] > a[idx[j]]:
                    idx[i], idx[j] = idx[j], idx[i]
            continue
        mid = (left + right) // 2                    # sortLeftRightAndCenter
        for i, j in ((left, mid), (left, right), (mid, right)):
            if a[idx[i]] > a[idx[j]]:
                idx[i], idx[j] = idx[j], idx[i]
        idx[mid], idx[right - 1] = idx[right - 1], idx[mid]
        pivot = a[idx[right - 1]]
        i, j = left + 1, right - 2                   # partition
        while True:
            while a[idx[i]] < pivot:
                i += 1
            while a[idx[j]] > pivot:
                j -= 1
            if i >= j:
                break
            idx[i], idx[j] = idx[j], idx[i]
            i += 1
            j -= 1
        idx[i], idx[right - 1] = idx[right - 1], idx[i]
        push((i + 1, right))
        push((left, i - 1))
    return np.asarray(idx, dtype=np.intp)


# ---------------------------------------------------------------- split search

#: Split kinds: C45Split on a numeric attribute (``<=``/``>``), on a nominal one (one branch
#: per value, ``= v``), and BinC45Split's nominal test (``= v``/``!= v``, threshold = code of v).
NUMERIC, NOMINAL, NOMINAL_BINARY = 0, 1, 2


class _Split:
    __slots__ = ("feature", "info_gain", "gain_ratio", "threshold", "dist", "kind", "pending")

    def __init__(self, feature, info_gain, gain_ratio, threshold, dist, kind=NUMERIC, pending=None):
        self.feature, self.info_gain, self.gain_ratio = feature, info_gain, gain_ratio
        self.threshold, self.dist, self.kind = threshold, dist, kind
        self.pending = pending          # (cut position, ys, ws, classes): dist built if chosen

    def distribution(self) -> _Dist:
        if self.dist is None:
            i, ys, ws, k = self.pending
            bs = np.zeros(ys.size, dtype=np.intp)
            bs[i:] = 1
            self.dist = _Dist.bags(bs, ys, ws, 2, k)
            self.dist.total = 0.0 + float(self.dist.per_bag[0]) + float(self.dist.per_bag[1])
        return self.dist


def _dist_gains(dist: _Dist, sum_w: float) -> tuple[float, float]:
    """InfoGainSplitCrit (two-argument form) and GainRatioSplitCrit of a distribution."""
    old_ent = float(_log_func(dist.total)) - _ent_sum(_log_func(dist.per_class).tolist())
    new_ent = _new_ent([_log_func(r).tolist() for r in dist.pcb], _log_func(dist.per_bag).tolist())
    gain = float(_gain(old_ent, new_ent, sum_w, dist.total))
    return gain, _ratio(gain, dist.per_bag, dist.total, sum_w)


def _nominal_split(codes: np.ndarray, ys: np.ndarray, ws: np.ndarray, n_values: int, n_classes: int,
                   sum_w: float, min_obj: int, feature: int, binary: bool) -> _Split | None:
    """C45Split (or with ``binary``, BinC45Split).handleEnumeratedAttribute on the known values.

    A multiway split exists when two values weigh at least ``min_obj`` each, even with no gain
    (it then counts in the average gain, as in J48). The binary form tries ``= v`` against the
    rest for each value in order and keeps the first, or one whose gain ratio beats it by 1e-6."""
    dist = _Dist.bags(codes, ys, ws, n_values, n_classes)
    big = (min_obj - dist.per_bag < SMALL)             # Utils.grOrEq(perBag, minNoObj)
    if not binary:
        if np.count_nonzero(big) < 2:
            return None
        gain, ratio = _dist_gains(dist, sum_w)
        return _Split(feature, gain, ratio, np.nan, dist, NOMINAL)
    valid, gain, ratio, point, best_dist = False, 0.0, 0.0, np.nan, dist
    for i in range(n_values):
        if not big[i]:
            continue
        # new Distribution(dist, i): bag i against the rest, by subtraction from the totals
        two = _Dist(np.vstack([dist.pcb[i], dist.per_class - dist.pcb[i]]),
                    np.array([dist.per_bag[i], dist.total - dist.per_bag[i]]),
                    dist.per_class.copy(), dist.total)
        if np.count_nonzero(min_obj - two.per_bag < SMALL) < 2:
            continue
        valid = True                                 # m_numSubsets = 2, whatever the gain
        g, r = _dist_gains(two, sum_w)
        if i == 0 or r - ratio > SMALL:
            gain, ratio, point, best_dist = g, r, float(i), two
    if not valid:
        return None
    return _Split(feature, gain, ratio, point, best_dist, NOMINAL_BINARY)


def _numeric_split(x: np.ndarray, yi: np.ndarray, w: np.ndarray, n_classes: int,
                   sum_w: float, min_obj: int, mdl: bool, feature: int) -> _Split | None:
    """C45Split.handleNumericAttribute on one column of a node (x may hold NaN), the rows
    sorted as Java's ``Instances.sort`` leaves them."""
    order = java_quicksort(x)
    order = order[~np.isnan(x[order])]
    return _sorted_split(x[order], yi[order], w[order], n_classes, sum_w, min_obj, mdl, feature)


class _Cuts(NamedTuple):
    """The candidate cuts of a sorted column: where each falls and the weight on each side."""
    pos: np.ndarray          # the position of the first value right of each cut
    left_w: np.ndarray       # bag 0's weight (an integer count on the unit-weight path)
    right_w: np.ndarray      # bag 1's weight
    n_cand: int              # how many (the MDL correction counts them)


class _ClassCounts(NamedTuple):
    """Per class, the weight of the known values in all and on each side of every cut, and
    logFunc for those numbers (a table lookup when they are integer counts)."""
    total: list              # per class, in all
    left: list               # per class, an array over the cuts
    right: list
    known: float | int       # the known weight, as ``log`` takes it (a count on the unit path)
    log: Callable


def _min_split(known_w: float, n_classes: int, min_obj: int) -> float:
    """C45Split's minSplit: 10% of the known weight per class, clamped to [min_obj, 25]."""
    min_split = 0.1 * known_w / n_classes
    if min_split - min_obj < SMALL:
        return float(min_obj)
    if min_split - 25 > SMALL:
        return 25.0
    return min_split


def _both_sides_big(left_w: np.ndarray, right_w: np.ndarray, min_split: float) -> np.ndarray:
    """The cuts whose two bags both weigh at least ``min_split`` (Utils.grOrEq)."""
    return (((min_split - left_w < SMALL) | (left_w >= min_split))
            & ((min_split - right_w < SMALL) | (right_w >= min_split)))


def _candidates(xs: np.ndarray, ws: np.ndarray, known_w: float, min_split: float,
                unit: bool) -> _Cuts | None:
    """The cuts J48 may take: between neighbours more than 1e-5 apart, both sides big enough."""
    pos = np.flatnonzero(xs[:-1] + 1e-5 < xs[1:]) + 1     # candidate cut before position pos
    if pos.size == 0:
        return None
    if unit:                                    # unit weights: integer counts, exact sums
        lw = pos
        rw = xs.size - pos
    else:                                       # shiftRange: bag 0 grows, bag 1 shrinks
        lw = np.cumsum(ws)[pos - 1]
        rw = np.cumsum(np.concatenate(([known_w], -ws)))[pos]
    ok = _both_sides_big(lw, rw, min_split)
    n_cand = int(np.count_nonzero(ok))
    if n_cand == 0:
        return None
    return _Cuts(pos[ok], lw[ok], rw[ok], n_cand)


def _unit_counts(ys: np.ndarray, k: int, pos: np.ndarray, table: np.ndarray) -> _ClassCounts:
    """Class counts around each cut when every weight is 1: integers, entropies looked up."""
    cum = [np.cumsum(ys == c) for c in range(k)]
    total = [int(c[-1]) for c in cum]
    left = [c[pos - 1] for c in cum]
    right = [t - lc for t, lc in zip(total, left)]
    return _ClassCounts(total, left, right, ys.size, lambda v: table[v])


def _weighted_counts(ys: np.ndarray, ws: np.ndarray, k: int, pos: np.ndarray,
                     known_w: float) -> _ClassCounts:
    """Class weights around each cut summed as Java does: bag 0 by a running sum, bag 1 by
    taking each row from the class's total in turn (shiftRange)."""
    wc = [np.where(ys == c, ws, 0.0) for c in range(k)]
    total = [_seq(v) for v in wc]
    left = [np.cumsum(v)[pos - 1] for v in wc]
    right = [np.cumsum(np.concatenate(([t], -v)))[pos] for t, v in zip(total, wc)]
    return _ClassCounts(total, left, right, known_w, _log_func)


def _cut_gains(counts: _ClassCounts, cuts: _Cuts, sum_w: float, known_w: float) -> np.ndarray:
    """InfoGainSplitCrit of every candidate cut, scaled by the known values' share."""
    log = counts.log
    old_ent = float(log(counts.known)) - _ent_sum([float(log(t)) for t in counts.total])
    new_ent = _new_ent([[log(v) for v in counts.left], [log(v) for v in counts.right]],
                       [log(cuts.left_w), log(cuts.right_w)])
    return _gain(old_ent, new_ent, sum_w, known_w)


def _best_cut(gain: np.ndarray, n_cand: int, sum_w: float, mdl: bool) -> tuple[int, float]:
    """The first cut beating the running best by 1e-6 (-1: none) and its gain, MDL-corrected."""
    best = _first_record(gain)
    info_gain = float(gain[best]) if best >= 0 else 0.0
    if mdl:
        info_gain -= _log2(n_cand) / sum_w
    return best, info_gain


def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """C45Split's cut between neighbours ``lo`` < ``hi``: ``(lo + hi) / 2``, ``lo`` when that rounds
    to ``hi`` (and when ``hi`` is infinite, as in Java). Where the sum of two finite values
    overflows (both near 1.8e308) Java's midpoint is infinite, setSplitPoint moves it to the
    largest value, every row goes left and J48 recurses until its stack overflows; here it is
    ``lo / 2 + hi / 2``, the same midpoint without the overflow."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        point = (hi + lo) / 2
        point = np.where(np.isinf(point) & np.isfinite(lo) & np.isfinite(hi), lo / 2 + hi / 2, point)
    return np.where(point == hi, lo, point)


def _midpoint(xs: np.ndarray, i: int) -> float:
    """The split point before position i (``_midpoints``)."""
    return float(_midpoints(xs[i - 1], xs[i]))


def _cut_ratio(info_gain: float, ws: np.ndarray, i: int, sum_w: float) -> tuple[float, np.ndarray]:
    """The gain ratio of the cut before position i, and its bags rebuilt by addRange (each
    summed afresh)."""
    per_bag = np.array([_seq(ws[:i]), _seq(ws[i:])])
    return _ratio(info_gain, per_bag, 0.0 + float(per_bag[0]) + float(per_bag[1]), sum_w), per_bag


def _unit_dist(counts: _ClassCounts, best: int, per_bag: np.ndarray) -> _Dist:
    """The chosen cut's distribution from integer counts (exact): no copy of the data kept."""
    lc = np.array([float(v[best]) for v in counts.left])
    total = np.asarray(counts.total, dtype=np.float64)
    return _Dist(np.vstack([lc, total - lc]), per_bag, total,
                 0.0 + float(per_bag[0]) + float(per_bag[1]))


def _sorted_split(xs: np.ndarray, ys: np.ndarray, ws: np.ndarray, n_classes: int,
                  sum_w: float, min_obj: int, mdl: bool, feature: int,
                  table: np.ndarray | None = None) -> _Split | None:
    """C45Split.handleNumericAttribute on the known values of a column in sorted order (the
    order Java's sort left them in: it decides how fractional weights add up).

    ``table[n] = logFunc(n)`` may be given when every weight is 1: counts are then integers
    and the entropies are looked up instead of computed (same values, fewer passes)."""
    n_known = xs.size
    if n_known < 2:
        return None
    unit = table is not None
    known_w = float(n_known) if unit else _seq(ws)
    min_split = _min_split(known_w, n_classes, min_obj)
    if 2 * min_split - n_known > SMALL:        # Utils.sm(firstMiss, 2 * minSplit): a count
        return None
    cuts = _candidates(xs, ws, known_w, min_split, unit)
    if cuts is None:
        return None
    counts = (_unit_counts(ys, n_classes, cuts.pos, table) if unit
              else _weighted_counts(ys, ws, n_classes, cuts.pos, known_w))
    best, info_gain = _best_cut(_cut_gains(counts, cuts, sum_w, known_w), cuts.n_cand, sum_w, mdl)
    if info_gain - 0 < SMALL:                  # smOrEq(infoGain, 0)
        return None
    i = int(cuts.pos[best])
    ratio, per_bag = _cut_ratio(info_gain, ws, i, sum_w)
    if unit:
        return _Split(feature, info_gain, ratio, _midpoint(xs, i), _unit_dist(counts, best, per_bag))
    # the rest of the distribution is built only for the split chosen
    return _Split(feature, info_gain, ratio, _midpoint(xs, i), None, pending=(i, ys, ws, n_classes))


def _batch_numeric_splits(V: np.ndarray, yi: np.ndarray, n_classes: int, table: np.ndarray,
                          min_obj: int, mdl: bool, features: np.ndarray) -> list[_Split]:
    """:func:`_sorted_split` for many numeric features at once (rows of ``V``, no missing value,
    every weight 1), the same arithmetic in the same order: for wide tables (100k+ attributes,
    few rows) where a Python call per feature and node would dominate."""
    d, m = V.shape
    if m < 2 or d == 0:
        return []
    k = n_classes
    min_split = _min_split(m, k, min_obj)
    if 2 * min_split - m > SMALL:
        return []
    order = np.argsort(V, axis=1, kind="stable")
    xs = np.take_along_axis(V, order, axis=1)
    ys = yi[order]
    pos = np.arange(1, m)                                  # a cut before position p
    lw, rw = pos, m - pos
    ok_p = _both_sides_big(lw, rw, min_split)
    valid = (xs[:, :-1] + 1e-5 < xs[:, 1:]) & ok_p[None, :]
    n_cand = valid.sum(axis=1)
    cum = np.stack([np.cumsum(ys == c, axis=1) for c in range(k)])   # (k, d, m)
    total = cum[:, 0, -1].astype(np.int64)
    left = cum[:, :, :-1]
    right = total[:, None, None] - left
    old_ent = float(table[m]) - _ent_sum([float(table[t]) for t in total])
    new_ent = _new_ent([[table[left[c]] for c in range(k)], [table[right[c]] for c in range(k)]],
                       [table[lw][None, :], table[rw][None, :]])
    gain = _gain(old_ent, new_ent, float(m), float(m))
    best = np.zeros(d)
    idx = np.full(d, -1)
    for p in range(m - 1):                                 # J48's running best, 1e-6 margin
        g = np.where(valid[:, p], gain[:, p], -np.inf)
        better = g - best > SMALL
        best = np.where(better, g, best)
        idx = np.where(better, p, idx)
    info = np.where(idx >= 0, best, 0.0)
    has = n_cand > 0
    if mdl:
        info = info - np.log(np.maximum(n_cand, 1)) / _LN2 / m
    keep = np.flatnonzero(has & ~(info - 0 < SMALL) & (idx >= 0))
    if keep.size == 0:
        return []
    cut = idx[keep] + 1                                    # position of the first right value
    lo, hi = xs[keep, cut - 1], xs[keep, cut]
    point = _midpoints(lo, hi)
    out = []
    for n_, f in enumerate(keep.tolist()):
        lc = left[:, f, cut[n_] - 1].astype(np.float64)
        rc = total - lc
        dist = _Dist(np.vstack([lc, rc]), np.array([lc.sum(), rc.sum()]), total.astype(np.float64), float(m))
        out.append(_Split(int(features[f]), float(info[f]), _ratio(float(info[f]), dist.per_bag, float(m), float(m)),
                          float(point[n_]), dist))
    return out


# ---------------------------------------------------------------- the growing tree

#: elements per temporary block when sorting or partitioning the order matrix
_BLOCK = 1 << 21


def _index_dtype(n: int):
    """int32 row ids when they fit (half the memory of intp), else intp."""
    return np.int32 if n < np.iinfo(np.int32).max else np.intp


def _split_segment(buf: np.ndarray, lo: int, hi: int, br: np.ndarray,
                   n_branches: int) -> list[tuple[int, int]]:
    """Reorder ``buf[lo:hi]`` (row ids; ``br`` their branches, aligned) so that each branch's
    rows are together, in branch order, each keeping its order; the branches' segments."""
    seg = buf[lo:hi]
    key = br.astype(np.int8) if n_branches <= 127 else br    # small keys: numpy's radix sort
    seg[...] = seg[np.argsort(key, kind="stable")]
    bounds = (lo + np.concatenate(([0], np.cumsum(np.bincount(br, minlength=n_branches))))).tolist()
    return list(zip(bounds[:-1], bounds[1:]))


class _Node:
    """A ClassifierTree node: its split (or none), its distribution (``new Distribution(data)``
    for a grown leaf, the split's for an inner node or a pruned one) and its training data
    (``m_train``: rows and weights in Java's order; ``w`` None when the order does not matter,
    the weights then being the training weights of ``rows``, and ``rows`` a view of the builder's ``ids``)."""
    __slots__ = ("feature", "threshold", "sons", "dist", "empty", "kind", "rows", "w", "seg")

    def __init__(self, dist: _Dist, rows: np.ndarray, w: np.ndarray):
        self.feature = -1
        self.threshold = np.nan
        self.kind = NUMERIC
        self.sons: list[_Node] | None = None
        self.dist = dist
        self.empty = False
        self.rows, self.w = rows, w
        self.seg: tuple[int, int] | None = None     # unordered mode: rows = _Builder.ids[lo:hi]

    @property
    def is_leaf(self) -> bool:
        return self.sons is None

    @property
    def counts(self) -> np.ndarray:
        return self.dist.per_class

    def make_leaf(self) -> None:
        """new NoSplit(localModel().distribution()): the split's distribution, its bags merged."""
        self.sons, self.feature, self.threshold, self.kind = None, -1, np.nan, NUMERIC
        d = self.dist
        self.dist = _Dist(d.per_class[None, :].copy(), np.array([d.total]), d.per_class.copy(), d.total)


def _goes_left(x: np.ndarray, thr: float) -> np.ndarray:
    """C45Split.whichSubset: Utils.smOrEq(value, splitPoint) (a difference past 1.8e308 is
    infinite, as in Java)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (x - thr < SMALL) | (x <= thr)


def _branch(kind: int, x: np.ndarray, thr: float) -> np.ndarray:
    """whichSubset of a split for each value of x: the branch index, -1 for a missing value."""
    miss = np.isnan(x)
    if kind == NUMERIC:
        b = np.where(_goes_left(x, thr), 0, 1)
    elif kind == NOMINAL:
        b = np.where(miss, -1, np.nan_to_num(x, nan=-1.0)).astype(np.intp)
    else:
        b = np.where(x == thr, 0, 1)
    b[miss] = -1
    return b


def _estimated(dist: _Dist, cf: float) -> float:
    """getEstimatedErrorsForDistribution: training errors + addErrs; 0 for an empty node."""
    if abs(dist.total) < SMALL:
        return 0.0
    wrong = dist.num_incorrect()
    return wrong + add_errs(dist.total, wrong, cf)


class _Builder:
    """Grows, collapses and prunes one tree on (X, y, w); J48's recursive classes as functions.

    Without missing values every weight stays an integer, every sum is exact and the order of
    the rows does not matter: columns are sorted once (numpy). With missing values (or weights
    that are not integers) the fractional weights are summed in Java's order, so each node
    keeps its rows in the order J48 has them: each numeric attribute's ``Instances.sort``
    (Weka's unstable quicksort, :func:`java_quicksort`) reorders the node's data in turn."""

    def __init__(self, X, yi, w, n_classes, params, n_values=None, X_all=None):
        self.yi, self.w, self.k = yi, w, n_classes
        # one contiguous row per feature (fast gathers); no copy when X is column-major
        self.XT = np.ascontiguousarray(X.T)
        self.min_obj = int(params["min_num_obj"])
        self.cf = float(params["confidence"])
        self.mdl = bool(params["use_mdl_correction"])
        self.raising = bool(params["subtree_raising"])
        self.binary = bool(params.get("binary_splits", False))
        d = X.shape[1]
        self.n_values = np.zeros(d, dtype=np.intp) if n_values is None else np.asarray(n_values, np.intp)
        # J48's m_allData: every training row, those with a missing class too
        X_all = X if X_all is None else X_all
        n_all = X_all.shape[0]
        # C45ModelSelection: a nominal attribute with >= 0.3 * |allData| values is left out of
        # the average gain, unless every attribute is such (multiVal)
        nominal = self.n_values > 0
        many = nominal & ~(self.n_values - 0.3 * n_all < -SMALL)
        multi_val = bool(d) and bool(np.all(many))
        self.in_average = ~many | multi_val
        # every weight 1: counts stay integers (an unknown value would make fractions)
        self.table = None
        if np.all(w == 1.0):
            n = np.arange(X.shape[0] + 1, dtype=np.float64)
            self.table = _log_func(n)
        # Java's row order matters once weights can be fractions
        self.ordered = bool(np.isnan(X).any()) or not bool(np.all(w == np.floor(w)))
        self.X_all = X_all
        self._sorted_cols: dict[int, np.ndarray] = {}
        # unordered mode: one matrix of row ids, a row per numeric feature, each node's rows a
        # segment of it sorted by that feature (partitioned in place, stably, at each split)
        self.order: np.ndarray | None = None
        self.order_row = np.full(d, -1, dtype=np.intp)
        self.branch_of: np.ndarray | None = None
        # unordered mode: every row id once, each node's rows a segment (no array per node)
        self.ids: np.ndarray | None = None
        self.scratch: np.ndarray | None = None       # the same, for subtree raising's trial

    def sorted_col(self, j: int) -> np.ndarray:
        """The distinct values of feature j among all rows, each as first met in the data
        (-0.0 vs 0.0, as setSplitPoint), computed when a split on j is first chosen."""
        if j not in self._sorted_cols:
            col = self.X_all[:, j]
            col = col[~np.isnan(col)]
            _, first = np.unique(col, return_index=True)
            self._sorted_cols[j] = col[first]
        return self._sorted_cols[j]

    def dist_of(self, rows, w) -> _Dist:
        return _Dist.of(self.yi[rows], w, self.k)

    # -- C45ModelSelection.selectModel
    def select(self, rows, w, dist: _Dist, seg):
        """The best split of a node's data, and the data in the order the sorts left it.

        ``seg`` (when the order does not matter): the node's segment ``(lo, hi)`` of
        ``self.order``, whose row for feature j holds the node's rows ascending by j."""
        if self._cannot_split(dist):
            return None, rows, w
        splits, rows, w = self._candidate_splits(rows, w, dist.total, seg)
        best = self._best_split(splits)
        if best is None:
            return None, rows, w
        miss = np.isnan(self.XT[best.feature, rows])
        best.distribution().add_unknown(self.yi[rows[miss]], w[miss])
        if best.kind == NUMERIC:
            best.threshold = self._split_point(best.feature, best.threshold)
        return best, rows, w

    def _cannot_split(self, dist: _Dist) -> bool:
        """The leaf test: the node weighs below ``2 * min_obj``, or one class holds it all."""
        total = dist.total
        top = dist.per_class[dist.max_class()]
        return 2 * self.min_obj - total > SMALL or abs(total - top) < SMALL

    def _candidate_splits(self, rows, w, total: float, seg):
        """Every attribute's split, and the node's data in the order the sorts left it."""
        table = self.table if self.table is not None and np.all(w == 1.0) else None
        splits, batch = self._batch_splits(rows, table)
        for j in range(self.XT.shape[0]):
            if j in batch:
                continue
            rows, w, ids, ws = self._known_rows(j, rows, w, seg)
            s = self._attribute_split(j, ids, ws, total, table)
            if s is not None:
                splits.append(s)
        return splits, rows, w

    def _batch_splits(self, rows, table) -> tuple[list[_Split], set[int]]:
        """The numeric splits at once (small node, wide unit-weight table), and the features covered."""
        if self.ordered or table is None or self.XT.shape[0] < 32 or len(rows) > 256:
            return [], set()
        full = np.flatnonzero(self.n_values == 0)       # no missing value in this mode
        if full.size < 32:
            return [], set()
        splits = _batch_numeric_splits(self.XT[full[:, None], rows], self.yi[rows], self.k,
                                       table, self.min_obj, self.mdl, full)
        return splits, set(full.tolist())

    def _known_rows(self, j: int, rows, w, seg):
        """The data (ordered mode: sorted by a numeric j) and its rows of known j with their weights."""
        if self.ordered:
            if self.n_values[j] == 0:                # Instances.sort: the data stays sorted
                perm = java_quicksort(self.XT[j, rows])
                rows, w = rows[perm], w[perm]
            pos = np.flatnonzero(~np.isnan(self.XT[j, rows]))
            return rows, w, rows[pos], w[pos]
        # every value known, w is self.w[rows]
        ids = rows if self.order_row[j] < 0 else self.order[self.order_row[j], seg[0]:seg[1]]
        return rows, w, ids, self.w[ids]

    def _attribute_split(self, j: int, ids, ws, total: float, table) -> _Split | None:
        """Attribute j's split (C45Split.buildClassifier) on its known values, or None."""
        yi = self.yi[ids]
        if self.n_values[j] > 0:
            return _nominal_split(self.XT[j, ids].astype(np.intp), yi, ws,
                                  int(self.n_values[j]), self.k, total, self.min_obj, j, self.binary)
        return _sorted_split(self.XT[j, ids], yi, ws, self.k, total, self.min_obj, self.mdl, j, table)

    def _average_gain(self, splits: list[_Split]) -> float | None:
        """The mean info gain of the splits that count in it, summed in order (None: none counts)."""
        gain_sum, valid = 0.0, 0
        for s in splits:
            if self.in_average[s.feature]:
                gain_sum += s.info_gain
                valid += 1
        if not valid:
            return None
        return gain_sum / valid

    def _best_split(self, splits: list[_Split]) -> _Split | None:
        """The first highest gain ratio (by 1e-6) among splits gaining >= average - 1e-3, or None."""
        splits.sort(key=lambda sp: sp.feature)             # J48 visits the attributes in order
        avg = self._average_gain(splits)
        if avg is None:
            return None
        best, best_ratio = None, 0.0
        for s in splits:
            if s.info_gain >= avg - 1e-3 and s.gain_ratio - best_ratio > SMALL:
                best, best_ratio = s, s.gain_ratio
        if best is None or abs(best_ratio) < SMALL:
            return None
        return best

    def _split_point(self, j: int, cut: float) -> float:
        """setSplitPoint: the largest training value of feature j that is <= the cut."""
        uniq = self.sorted_col(j)
        pos = np.searchsorted(uniq, cut + SMALL, side="left") - 1
        if pos >= 0:
            return float(uniq[pos])
        return -sys.float_info.max

    def n_branches(self, node: _Node) -> int:
        return int(self.n_values[node.feature]) if node.kind == NOMINAL else 2

    # -- ClassifierSplitModel.split with the weights of unknown values
    def route(self, node: _Node, rows, w, dist: _Dist | None = None):
        """The data of each son, in order: (rows, weights) pairs; a row of unknown value goes
        down every branch whose share ``perBag / total`` is above 1e-6, weighted by it."""
        dist = node.dist if dist is None else dist
        br = _branch(node.kind, self.XT[node.feature, rows], node.threshold)
        miss = br < 0
        has_miss = bool(miss.any())
        out = []
        for b in range(dist.per_bag.size):
            mask = br == b
            share = dist.per_bag[b] / dist.total
            if has_miss and share - 0 > SMALL:
                sel = mask | miss
                out.append((rows[sel], np.where(miss[sel], share * w[sel], w[sel])))
            else:
                out.append((rows[mask], w[mask]))
        return out

    def reset_dist(self, node: _Node, rows, w) -> _Dist:
        """resetDistribution: the split's distribution on this data (unknowns spread after)."""
        br = _branch(node.kind, self.XT[node.feature, rows], node.threshold)
        miss = br < 0
        yi = self.yi[rows]
        dist = _Dist.bags(br[~miss], yi[~miss], w[~miss], self.n_branches(node), self.k)
        dist.add_unknown(yi[miss], w[miss])
        return dist

    # -- ClassifierTree.buildTree
    def root_segment(self) -> tuple[int, int] | None:
        """Unordered mode: sort every numeric column once into ``self.order`` (row ids, int32
        when they fit) and return the root's segment; None when Java's row order matters."""
        if self.ordered:
            return None
        n = self.XT.shape[1]
        numeric = np.flatnonzero(self.n_values == 0)
        self.order_row[numeric] = np.arange(numeric.size)
        self.order = np.empty((numeric.size, n), dtype=_index_dtype(n))
        step = max(1, _BLOCK // max(n, 1))              # a few features at a time: small temporaries
        for a in range(0, numeric.size, step):
            cols = numeric[a:a + step]
            self.order[a:a + cols.size] = np.argsort(self.XT[cols], axis=1, kind="stable")
        nb = int(max(2, self.n_values.max(initial=0)))
        self.branch_of = np.zeros(n, dtype=np.int8 if nb <= 127 else np.int16 if nb <= 32767 else np.intp)
        self.ids = np.arange(n, dtype=_index_dtype(n))
        self.scratch = np.empty_like(self.ids)
        return (0, n)

    def partition(self, seg: tuple[int, int], rows: np.ndarray, br: np.ndarray,
                  n_branches: int) -> list[tuple[int, int]]:
        """Split a node's segment of ``self.order`` into its sons' segments: per feature, the
        rows of branch 0, then of branch 1, ... each in the order they had (a stable sort by
        branch), so that every son's rows stay sorted by every feature."""
        lo, hi = seg
        self.branch_of[rows] = br
        m = hi - lo
        if m:
            step = max(1, _BLOCK // m)
            for a in range(0, self.order.shape[0], step):
                block = self.order[a:a + step, lo:hi]
                perm = np.argsort(self.branch_of[block], axis=1, kind="stable")
                block[...] = np.take_along_axis(block, perm, axis=1)
        return _split_segment(self.ids, lo, hi, self.branch_of[self.ids[lo:hi]], n_branches)

    def build(self, rows, w, seg) -> _Node:
        if seg is not None:                          # unordered mode: a segment, w is w[rows]
            rows = self.ids[seg[0]:seg[1]]
            w = self.w[rows]
        dist = self.dist_of(rows, w)
        split, rows, w = self.select(rows, w, dist, seg)
        node = _Node(dist, rows, w if self.ordered else None)
        node.seg = seg
        if split is None:
            node.empty = abs(dist.total) < SMALL
            return node
        node.feature, node.threshold, node.kind = split.feature, split.threshold, split.kind
        node.dist = split.dist
        del split                                    # its sorted copies of the node's data
        if self.ordered:
            sons = [(r, ww, None) for r, ww in self.route(node, rows, w)]
        else:                                        # no unknown values in this mode
            br = _branch(node.kind, self.XT[node.feature, rows], node.threshold)
            sons = [(None, None, sg) for sg in self.partition(seg, rows, br, self.n_branches(node))]
            del br
        del w
        sons.reverse()
        node.sons = []
        while sons:                                  # each son's data freed once it is built
            r, ww, sg = sons.pop()
            node.sons.append(self.build(r, ww, sg))
            del r, ww
        return node

    # -- C45PruneableClassifierTree.collapse
    def training_errors(self, node: _Node) -> float:
        if node.is_leaf:
            return node.dist.num_incorrect()
        return sum(self.training_errors(s) for s in node.sons)

    def collapse(self, node: _Node) -> None:
        if node.is_leaf:
            return
        if self.training_errors(node) >= node.dist.num_incorrect() - 1e-3:
            node.make_leaf()
        else:
            for s in node.sons:
                self.collapse(s)

    # -- C45PruneableClassifierTree.prune and its helpers
    def estimated_errors(self, node: _Node) -> float:
        if node.is_leaf:
            return _estimated(node.dist, self.cf)
        return sum(self.estimated_errors(s) for s in node.sons)

    def errors_for_branch(self, node: _Node, rows, w) -> float:
        if node.is_leaf:
            return _estimated(self.dist_of(rows, w), self.cf)
        parts = self.route(node, rows, w, self.reset_dist(node, rows, w))
        return sum(self.errors_for_branch(s, r, ww) for s, (r, ww) in zip(node.sons, parts))

    def errors_in_segment(self, node: _Node, lo: int, hi: int) -> float:
        """:meth:`errors_for_branch` (unordered mode) of the rows in ``scratch[lo:hi]``, routed
        by partitioning that segment in place."""
        rows = self.scratch[lo:hi]
        if node.is_leaf:
            return _estimated(self.dist_of(rows, self.w[rows]), self.cf)
        br = _branch(node.kind, self.XT[node.feature, rows], node.threshold)
        segs = _split_segment(self.scratch, lo, hi, br, self.n_branches(node))
        del rows, br
        return sum(self.errors_in_segment(s, a, b) for s, (a, b) in zip(node.sons, segs))

    def redistribute(self, node: _Node, lo: int, hi: int) -> None:
        """:meth:`new_distribution` (unordered mode) of the rows in ``ids[lo:hi]``, partitioned
        in place among the sons."""
        rows = self.ids[lo:hi]
        node.rows, node.w, node.seg = rows, None, (lo, hi)
        w = self.w[rows]
        if node.is_leaf:
            self.leaf_distribution(node, rows, w)
            return
        node.dist = self.reset_dist(node, rows, w)
        br = _branch(node.kind, self.XT[node.feature, rows], node.threshold)
        segs = _split_segment(self.ids, lo, hi, br, self.n_branches(node))
        del w, br
        for s, (a, b) in zip(node.sons, segs):
            self.redistribute(s, a, b)

    def leaf_distribution(self, node: _Node, rows, w) -> None:
        """A leaf's class distribution from its new rows (a leaf with weight is not empty)."""
        node.dist = self.dist_of(rows, w)
        if abs(node.dist.total) >= SMALL:     # !Utils.eq(data.sumOfWeights(), 0)
            node.empty = False

    def new_distribution(self, node: _Node, rows, w) -> None:
        node.rows, node.w = rows, w
        if node.is_leaf:
            self.leaf_distribution(node, rows, w)
            return
        node.dist = self.reset_dist(node, rows, w)
        for s, (r, ww) in zip(node.sons, self.route(node, rows, w)):
            self.new_distribution(s, r, ww)

    def prune(self, node: _Node) -> None:
        while True:
            if node.is_leaf:
                return
            for s in node.sons:
                self.prune(s)
            largest = node.dist.max_bag()
            if self.raising and node.seg is not None:
                lo, hi = node.seg
                self.scratch[lo:hi] = self.ids[lo:hi]
                err_branch = self.errors_in_segment(node.sons[largest], lo, hi)
            elif self.raising:
                err_branch = self.errors_for_branch(node.sons[largest], node.rows, node.w)
            else:
                err_branch = sys.float_info.max
            err_leaf = _estimated(node.dist, self.cf)
            err_tree = self.estimated_errors(node)
            if (err_leaf - (err_tree + 0.1) < SMALL) and (err_leaf - (err_branch + 0.1) < SMALL):
                node.make_leaf()
                return
            if err_branch - (err_tree + 0.1) < SMALL:
                big = node.sons[largest]
                node.sons, node.feature, node.threshold = big.sons, big.feature, big.threshold
                node.kind = big.kind         # m_isEmpty is not copied (as J48)
                if node.seg is not None:
                    self.redistribute(node, *node.seg)
                else:
                    self.new_distribution(node, node.rows, node.w)
                continue                     # prune() again on the raised node
            return


# ---------------------------------------------------------------- the estimator

def _nominal_columns(X: np.ndarray, nominal: dict[int, Sequence[str]] | None
                     ) -> tuple[np.ndarray, list[list[str] | None]]:
    """The declared nominal features' value counts (0: numeric) and names; the codes checked."""
    n_values = np.zeros(X.shape[1], dtype=np.intp)
    categories: list[list[str] | None] = [None] * X.shape[1]
    for j, values in (nominal or {}).items():
        j = int(j)
        if not 0 <= j < X.shape[1]:
            raise ValueError(f"nominal feature index {j} out of range (X has {X.shape[1]} columns)")
        values = [str(v) for v in values]
        col = X[:, j]
        known = col[~np.isnan(col)]
        if known.size and (np.any(known != np.floor(known)) or known.min() < 0
                           or known.max() >= len(values)):
            raise ValueError(f"nominal feature {j} must hold codes 0..{len(values) - 1} or NaN")
        n_values[j], categories[j] = len(values), values
    return n_values, categories


def _with_unlabelled(X: np.ndarray, X_unlabelled) -> np.ndarray:
    """J48's m_allData: the training rows and those whose class is missing."""
    if X_unlabelled is None:
        return X
    Xu = np.asarray(X_unlabelled, dtype=np.float64).reshape(-1, X.shape[1])
    return np.vstack([X, Xu]) if Xu.size else X


class C45Classifier(ClassifierMixin, BaseEstimator):
    """Weka J48's C4.5 (release 8) decision tree on numeric features; NaN = missing value, +-inf a
    value (as J48 reads Infinity or 1e400).

    Parameters follow J48's options: ``confidence`` (-C), ``min_num_obj`` (-M), ``unpruned``
    (-U), ``subtree_raising`` (off = -S), ``collapse_tree`` (Weka 3.6 always collapses),
    ``use_mdl_correction`` (3.6 always uses it), ``binary_splits`` (-B; numeric splits are
    binary anyway, so it changes nothing here). ``fit(..., class_order=[...])`` gives the
    class values in the order an ARFF header declares them (J48 breaks ties toward the
    first); by default the sorted labels, as scikit-learn does.
    """

    def __init__(self, confidence: float = 0.25, min_num_obj: int = 2, unpruned: bool = False,
                 subtree_raising: bool = True, collapse_tree: bool = True,
                 use_mdl_correction: bool = True, binary_splits: bool = False):
        self.confidence = confidence
        self.min_num_obj = min_num_obj
        self.unpruned = unpruned
        self.subtree_raising = subtree_raising
        self.collapse_tree = collapse_tree
        self.use_mdl_correction = use_mdl_correction
        self.binary_splits = binary_splits

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _check_params(self) -> None:
        if not (isinstance(self.confidence, (int, float)) and 0 < float(self.confidence) <= 0.5) \
                and not self.unpruned:
            raise ValueError(f"confidence must be in (0, 0.5] (J48's -C), got {self.confidence!r}")
        if isinstance(self.min_num_obj, bool) or not isinstance(self.min_num_obj, (int, np.integer)) \
                or self.min_num_obj < 0:
            raise ValueError(f"min_num_obj must be a non-negative integer (J48's -M), got {self.min_num_obj!r}")

    def fit(self, X, y, sample_weight=None, class_order: Sequence | None = None,
            nominal: dict[int, Sequence[str]] | None = None,
            X_unlabelled=None, empty_ok: bool = False) -> "C45Classifier":
        """Grow (and unless ``unpruned``, prune) the tree on X (n_samples, n_features), y.

        ``nominal`` maps a feature index to its declared values: that column holds value codes
        (0..len-1, NaN missing) and is split one branch per value as J48 does (``= v``/``!= v``
        with ``binary_splits``). ``X_unlabelled`` are rows whose class is missing: J48 drops
        them before growing but still places numeric split points among their values and counts
        them in its many-valued-attribute test, so they are given here to do the same. Rows of
        weight 0 are kept among the split points, as J48 keeps them; with ``empty_ok``, weights
        that are all 0 (a fold of Weka's cross-validation whose rows weigh nothing) give J48's
        tree of one leaf of no class rather than scikit-learn's ValueError."""
        X, y, w = self._fit_inputs(X, y, sample_weight, empty_ok)
        n_values, categories = _nominal_columns(X, nominal)
        X_all = _with_unlabelled(X, X_unlabelled)
        yi = self._class_codes(y, class_order)
        root = self._grow(X, yi, w, n_values, X_all)
        self.categories_ = categories
        self._store(root, len(self.classes_))
        return self

    def _fit_inputs(self, X, y, sample_weight,
                    empty_ok: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check the parameters, the data (validate_data records the features) and the weights."""
        self._check_params()
        with np.errstate(over="ignore", invalid="ignore"):  # NaN is missing, +-inf a value, as in J48
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False)
        check_classification_targets(y)
        if empty_ok and sample_weight is not None and not np.any(sample_weight):
            w = np.zeros(len(X))  # J48's fold of no weight: scikit-learn refuses it
        else:
            w = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if np.any(w < 0):
            raise ValueError("sample weights must not be negative")
        return X, y, w

    def _class_codes(self, y: np.ndarray, class_order: Sequence | None) -> np.ndarray:
        """Set ``classes_`` (the sorted labels, or ``class_order``) and return each label's index."""
        if class_order is None:
            self.classes_ = np.unique(y)
        else:
            self.classes_ = np.asarray(list(class_order))
            if y.dtype == object:
                self.classes_ = self.classes_.astype(object)
            unknown = set(np.unique(y).tolist()) - set(self.classes_.tolist())
            if unknown or len(set(self.classes_.tolist())) != len(self.classes_):
                raise ValueError(f"labels {sorted(map(str, unknown))} are not in class_order "
                                 f"{list(class_order)} (or it repeats a class)")
        order = np.argsort(self.classes_, kind="stable")
        return order[np.searchsorted(self.classes_[order], y)].astype(np.intp)

    def _grow(self, X: np.ndarray, yi: np.ndarray, w: np.ndarray, n_values: np.ndarray,
              X_all: np.ndarray) -> _Node:
        """buildClassifier: grow the tree, collapse it and, unless ``unpruned``, prune it."""
        builder = _Builder(X, yi, w, len(self.classes_), self.get_params(), n_values, X_all)
        rows = np.arange(X.shape[0], dtype=_index_dtype(X.shape[0]))
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 10000))
        try:
            root = builder.build(rows, w, builder.root_segment())
            builder.order = None                     # the sorted columns serve growing only
            if self.collapse_tree:
                builder.collapse(root)
            if not self.unpruned:
                builder.prune(root)
        finally:
            sys.setrecursionlimit(old)
        return root

    # -- parallel arrays, preorder as in sklearn's tree
    def _store(self, root: _Node, k: int) -> None:
        nodes: list[_Node] = []
        kids: list[list[int]] = []
        stack = [(root, -1, 0)]
        while stack:
            node, parent, branch = stack.pop()
            i = len(nodes)
            nodes.append(node)
            kids.append([])
            if parent >= 0:
                kids[parent][branch] = i
            if not node.is_leaf:
                kids[i] = [-1] * len(node.sons)
                for b in range(len(node.sons) - 1, -1, -1):
                    stack.append((node.sons[b], i, b))
        width = max(2, max(len(c) for c in kids))
        children = np.full((len(nodes), width), -1, dtype=np.intp)
        for i, c in enumerate(kids):
            children[i, :len(c)] = c
        self._set_children(children)
        self.feature_ = np.array([n.feature for n in nodes], dtype=np.intp)
        self.threshold_ = np.array([n.threshold for n in nodes], dtype=np.float64)
        self.kind_ = np.array([n.kind for n in nodes], dtype=np.intp)
        self.value_ = np.array([n.dist.per_class for n in nodes], dtype=np.float64).reshape(len(nodes), k)
        self.total_ = np.array([n.dist.total for n in nodes], dtype=np.float64)
        self.empty_ = np.array([n.empty for n in nodes], dtype=bool)
        # the bag of the parent's split each node is (the root: its own first bag), as the
        # parent's distribution holds it: J48 prints a leaf's counts from there
        bag_value = np.empty((len(nodes), k))
        bag_total = np.empty(len(nodes))
        bag_value[0], bag_total[0] = root.dist.pcb[0], root.dist.per_bag[0]
        for i, c in enumerate(kids):
            for b, child in enumerate(c):
                bag_value[child] = nodes[i].dist.pcb[b]
                bag_total[child] = nodes[i].dist.per_bag[b]
        self.bag_value_, self.bag_total_ = bag_value, bag_total

    def _set_children(self, children: np.ndarray) -> None:
        """``children_[i, b]``: the son of node i on branch b (-1: none); the first two as
        ``children_left_``/``children_right_`` as in scikit-learn's trees."""
        self.children_ = children
        self.children_left_ = children[:, 0].copy()
        self.children_right_ = children[:, 1].copy()

    @property
    def node_count_(self) -> int:
        check_is_fitted(self, "value_")
        return int(self.value_.shape[0])

    @property
    def n_leaves_(self) -> int:
        check_is_fitted(self, "value_")
        return int((self.children_left_ < 0).sum())

    def _totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(total_, bag_value_, bag_total_); a tree saved without them: from ``value_``."""
        if getattr(self, "total_", None) is not None:
            return self.total_, self.bag_value_, self.bag_total_
        tot = self.value_.sum(axis=1)
        return tot, self.value_, tot

    def _leaf_prob(self, node: int) -> np.ndarray:
        """Distribution.prob(class): perClass / total, 0 when the total is 0."""
        v = self.value_[node]
        t = self._totals()[0][node]
        return v / t if abs(t) >= SMALL else np.zeros_like(v)

    def _bag_prob(self, parent: int, child: int) -> np.ndarray:
        """Distribution.prob(class, bag) of the parent; its overall prob when the bag is empty."""
        _, bag_value, bag_total = self._totals()
        if bag_total[child] - 0 > SMALL:
            return bag_value[child] / bag_total[child]
        return self._leaf_prob(parent)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities as J48's distributionForInstance gives them (no Laplace)."""
        check_is_fitted(self, "value_")
        with np.errstate(over="ignore", invalid="ignore"):
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False, reset=False)
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 10000))
        try:
            return self._probs(0, X, np.arange(X.shape[0]), np.ones(X.shape[0]))
        finally:
            sys.setrecursionlimit(old)

    def _probs(self, node: int, X: np.ndarray, rows: np.ndarray, wts: np.ndarray) -> np.ndarray:
        """ClassifierTree.getProbs for ``rows`` reaching ``node`` with weights ``wts``; the
        branches of a missing value are summed in branch order from 0, as Java does (the
        order decides exact ties between classes)."""
        k = self.value_.shape[1]
        out = np.zeros((rows.size, k))
        if rows.size == 0:
            return out
        children = self.children_
        if children[node, 0] < 0:
            return wts[:, None] * self._leaf_prob(node)
        kind = getattr(self, "kind_", None)
        br = _branch(int(kind[node]) if kind is not None else NUMERIC,
                     X[rows, self.feature_[node]], self.threshold_[node])
        miss = br < 0
        tot, _, bag_total = self._totals()
        sons = [c for c in children[node] if c >= 0]
        for b, child in enumerate(sons):
            mask = br == b
            if not mask.any():
                continue
            if self.empty_[child]:
                out[mask] = wts[mask, None] * self._bag_prob(node, child)
            else:
                out[mask] = self._probs(child, X, rows[mask], wts[mask])
        if miss.any():
            acc = np.zeros((int(miss.sum()), k))
            for child in sons:
                if not self.empty_[child]:
                    share = bag_total[child] / tot[node]        # weights(instance)[i]
                    acc = acc + self._probs(child, X, rows[miss], share * wts[miss])
            out[miss] = acc
        return out

    def predict(self, X) -> np.ndarray:
        """The class J48 predicts: the first class whose probability beats the others by 1e-6."""
        proba = self.predict_proba(X)
        best = np.full(proba.shape[0], -1.0)
        idx = np.zeros(proba.shape[0], dtype=np.intp)
        for j in range(proba.shape[1]):
            better = proba[:, j] - best > SMALL
            idx[better] = j
            best[better] = proba[better, j]
        return self.classes_[idx]

    # -- text and JSON
    def export_text(self, feature_names: Sequence[str] | None = None,
                    class_names: Sequence[str] | None = None) -> str:
        """The tree as Weka 3.6's J48 prints it (see :func:`hwnoise.training.j48_text.export_j48`)."""
        from hwnoise.training.j48_text import export_j48
        return export_j48(self, feature_names, class_names)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form of the fitted tree and its parameters (the safe model format)."""
        check_is_fitted(self, "value_")
        thr = [None if not np.isfinite(t) else float(t) for t in self.threshold_]
        return {
            "format": FORMAT,
            "params": {k: (v.item() if isinstance(v, np.generic) else v) for k, v in self.get_params().items()},
            "classes": [c.item() if isinstance(c, np.generic) else c for c in self.classes_.tolist()],
            "n_features_in": int(self.n_features_in_),
            "feature_names_in": [str(f) for f in getattr(self, "feature_names_in_", [])] or None,
            "children_left": self.children_left_.tolist(),
            "children_right": self.children_right_.tolist(),
            "feature": self.feature_.tolist(),
            "threshold": thr,
            "value": self.value_.tolist(),
            "empty": self.empty_.tolist(),
            # the distributions' totals and the parent's bags, as J48 summed them
            "total": self._totals()[0].tolist(),
            "bag_value": self._totals()[1].tolist(),
            "bag_total": self._totals()[2].tolist(),
            # multiway (nominal) splits: every branch, each node's split kind, the values
            "children": self.children_.tolist(),
            "kind": getattr(self, "kind_", np.zeros(len(self.feature_), dtype=np.intp)).tolist(),
            "categories": getattr(self, "categories_", None),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "C45Classifier":
        """Rebuild a fitted classifier from :meth:`to_dict`'s output, checking its shape."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise C45Error(f"not a {FORMAT} tree (format {data.get('format') if isinstance(data, dict) else None!r})")
        try:
            clf = cls(**data["params"])
            clf._load_arrays(data)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise C45Error(f"malformed {FORMAT} tree: {exc}") from None
        clf._check_lengths()
        clf._check_links()
        clf._check_nominal_branches()
        clf._check_numbers()
        return clf

    def _load_arrays(self, data: dict[str, Any]) -> None:
        """The fitted attributes from a saved tree's lists (KeyError, TypeError, ValueError if bad)."""
        self.classes_ = np.asarray(data["classes"])
        self.n_features_in_ = int(whole_numbers(data["n_features_in"], "n_features_in"))
        if data.get("feature_names_in"):
            self.feature_names_in_ = np.asarray(data["feature_names_in"], dtype=object)
        self._set_children(_read_children(data))
        self.feature_ = whole_numbers(data["feature"], "feature").astype(np.intp)
        self.kind_ = whole_numbers(data.get("kind") or [NUMERIC] * len(self.feature_), "kind").astype(np.intp)
        cats = data.get("categories")
        self.categories_ = [None if c is None else [str(v) for v in c] for c in cats] \
            if cats is not None else [None] * self.n_features_in_
        self.threshold_ = np.asarray([np.nan if t is None else t for t in data["threshold"]],
                                     dtype=np.float64)
        self.value_ = np.asarray(data["value"], dtype=np.float64).reshape(len(data["feature"]), -1)
        self.empty_ = np.asarray(data["empty"], dtype=bool)
        if data.get("total") is not None:
            self._load_totals(data)

    def _load_totals(self, data: dict[str, Any]) -> None:
        """The saved distributions' totals and their parents' bags, one per node."""
        self.total_ = np.asarray(data["total"], dtype=np.float64)
        self.bag_value_ = np.asarray(data["bag_value"], dtype=np.float64).reshape(self.value_.shape)
        self.bag_total_ = np.asarray(data["bag_total"], dtype=np.float64)
        if self.total_.shape != (self.value_.shape[0],) or self.bag_total_.shape != self.total_.shape:
            raise ValueError("total and bag_total must hold one number per node")

    def _check_lengths(self) -> None:
        """Check a loaded tree's arrays: one entry per node, a value per class, categories per feature."""
        n = self.value_.shape[0]
        arrays = (self.children_left_, self.children_right_, self.feature_, self.threshold_, self.empty_,
                  self.kind_)
        if any(a.shape != (n,) for a in arrays) or self.value_.shape[1] != len(self.classes_) \
                or len(self.categories_) != self.n_features_in_:
            raise C45Error(f"malformed {FORMAT} tree: arrays of different lengths")

    def _check_links(self) -> None:
        """Check a loaded tree's sons (in range, each once), features and split kinds."""
        n = self.value_.shape[0]
        inner = self.children_left_ >= 0
        kids = self.children_[inner]
        ok_shape = bool(np.all(np.sort(kids, axis=1)[:, ::-1][:, :1] >= 0)) if kids.size else True
        kids = kids[kids >= 0]
        if (kids <= 0).any() or (kids >= n).any() or len(set(kids.tolist())) != kids.size \
                or not ok_shape or ((self.children_right_ >= 0) != inner).any() \
                or (self.children_[~inner] >= 0).any() \
                or (self.feature_[inner] < 0).any() or (self.feature_[inner] >= self.n_features_in_).any() \
                or not np.isin(self.kind_, (NUMERIC, NOMINAL, NOMINAL_BINARY)).all():
            raise C45Error(f"malformed {FORMAT} tree: children or features out of range")

    def _check_numbers(self) -> None:
        """Check a loaded tree's numbers: a finite cut at every numeric split (a NaN sends every
        row one way), finite class counts that are not negative."""
        numeric = (self.children_left_ >= 0) & (self.kind_ == NUMERIC)
        if not np.isfinite(self.threshold_[numeric]).all():
            raise C45Error(f"malformed {FORMAT} tree: a numeric split at a threshold that is not a finite number")
        counts = [self.value_] + [getattr(self, a) for a in ("total_", "bag_value_", "bag_total_") if hasattr(self, a)]
        if not all(np.isfinite(c).all() and (c >= 0).all() for c in counts):
            raise C45Error(f"malformed {FORMAT} tree: class counts must be finite numbers, not negative")

    def _check_nominal_branches(self) -> None:
        """Check a loaded tree's nominal splits have a branch per value (binary ones: two)."""
        inner = self.children_left_ >= 0
        n_kids = (self.children_[inner] >= 0).sum(axis=1)
        for i in np.flatnonzero(inner & (self.kind_ != NUMERIC)):
            cats = self.categories_[self.feature_[i]]
            want = len(cats) if cats is not None and self.kind_[i] == NOMINAL else 2
            if cats is None or n_kids[list(np.flatnonzero(inner)).index(i)] != want:
                raise C45Error(f"malformed {FORMAT} tree: node {i} splits a nominal feature "
                               "with the wrong number of branches")


def _read_children(data: dict[str, Any]) -> np.ndarray:
    """A saved tree's children table (old binary trees: children_left/right), checked against those."""
    if data.get("children") is not None:
        children = whole_numbers(data["children"], "children").astype(np.intp)
    else:                    # a binary tree written before multiway splits
        children = np.column_stack([whole_numbers(data["children_left"], "children_left").astype(np.intp),
                                    whole_numbers(data["children_right"], "children_right").astype(np.intp)])
    if children.ndim != 2 or children.shape[1] < 2:
        raise ValueError("children must be a table with at least two columns")
    for key, col in (("children_left", 0), ("children_right", 1)):
        if key in data and data[key] != children[:, col].tolist():
            raise ValueError(f"{key} disagrees with children")
    return children
