"""Evaluation protocols: how a feature table is split into training and test rows.

- ``thesis``: seed 003's pooled random split of the nodes, ``train_share`` to training, seeded:
  exactly Weka's percentage split (same rows for the same seed). Nodes of one page fall on both
  sides, so it flatters.
- ``pages``: a seeded split by page, ``train_share`` of the pages to training. The default.
- ``cv``: k folds grouped by page (every row is tested once).
- ``cross-site``: k folds grouped by site over the pooled pages of every dataset given: a site's
  pages never sit on both sides.
- ``weka-cv``: Weka's stratified k-fold cross-validation of the rows (``J48 -t``'s default, k = 10),
  fold for fold as Weka 3.6 assigns them (:func:`weka_cv_folds`). Nodes of a page fall on both sides.

Every function returns positional indices (numpy int arrays) into the table.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hwnoise.errors import HwnoiseError

PROTOCOLS = ("thesis", "pages", "cv", "cross-site", "weka-cv")


class ProtocolError(HwnoiseError):
    """A protocol that cannot be applied to a table (unknown name, no pages, too few groups)."""


_MULT, _MASK = 0x5DEECE66D, (1 << 48) - 1


class JavaRandom:
    """``java.util.Random``: the 48-bit LCG and ``nextInt(bound)`` as Java computes them."""

    def __init__(self, seed: int = 1):
        self.state = (int(seed) ^ _MULT) & _MASK

    def next_int(self, bound: int) -> int:
        if bound & -bound == bound:  # a power of two
            self.state = (self.state * _MULT + 0xB) & _MASK
            return (bound * (self.state >> 17)) >> 31
        while True:
            self.state = (self.state * _MULT + 0xB) & _MASK
            bits = self.state >> 17
            k = bits % bound
            if bits - k + bound - 1 < 1 << 31:  # Java's int overflow test
                return k

    def shuffle(self, rows: np.ndarray) -> np.ndarray:
        """``Instances.randomize(random)`` on ``rows``: Fisher-Yates from the last row down."""
        order = list(rows.tolist() if isinstance(rows, np.ndarray) else rows)
        for j in range(len(order) - 1, 0, -1):
            k = self.next_int(j + 1)
            order[j], order[k] = order[k], order[j]
        return np.asarray(order, dtype=np.int64)


def weka_randomize(n: int, seed: int = 1) -> np.ndarray:
    """The row order Weka's ``Instances.randomize(new Random(seed))`` gives n rows.

    Java's ``java.util.Random`` (a 48-bit LCG) drives a Fisher-Yates shuffle from the last row
    down, as Weka 3.6 does for its percentage split (``-split-percentage``, the Explorer's
    "Percentage split"). With it, ``thesis`` splits a table exactly as Weka split the
    dissertation's ARFF files: the same train and test rows for the same seed.
    """
    return JavaRandom(seed).shuffle(np.arange(n))


def weka_cv_folds(y: np.ndarray, k: int = 10, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) rows of Weka 3.6's stratified k-fold cross-validation (``J48 -t F``).

    ``y`` holds class indices, negative for a missing class. As ``Evaluation.crossValidateModel``:
    ``randomize(new Random(seed))``, then ``stratify(k)`` (rows grouped by class in order of
    first appearance, the missing classes as one more group, then dealt every k-th row), then
    ``testCV``/``trainCV`` fold i: a contiguous block of ``n // k`` rows, one more for the first
    ``n % k`` folds. ``trainCV(k, i, random)`` shuffles each training set with the same
    generator, so the training rows come in that order (J48's sums of fractional weights, hence
    exact ties between classes, depend on it). Rows of missing class go into the folds (J48
    ignores them when training, the evaluation counts them as "Ignored Class Unknown Instances")."""
    y = np.asarray(y)
    n = len(y)
    if k < 2:
        raise ProtocolError(f"cross-validation needs at least 2 folds, not {k}")
    if n < k:
        raise ProtocolError(f"{k}-fold cross-validation needs at least {k} rows; the table has {n}")
    rng = JavaRandom(seed)
    order = rng.shuffle(np.arange(n))
    order = _stratify(order, np.where(y < 0, -1, y))
    # stratStep: rows start, start + k, start + 2k, ... for start = 0, 1, ...
    order = np.concatenate([order[s::k] for s in range(k)])
    out = []
    for i in range(k):
        size = n // k + (1 if i < n % k else 0)
        first_row = i * (n // k) + min(i, n % k)
        test = order[first_row:first_row + size]
        train = rng.shuffle(np.concatenate([order[:first_row], order[first_row + size:]]))
        out.append((train, test))
    return out


def _stratify(order: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Instances.stratify's class grouping, swap for swap (it is not a stable sort)."""
    rows = order.tolist()
    cls = y[order].tolist()
    n = len(rows)
    index = 1
    while index < n:
        c = cls[index - 1]
        for j in range(index, n):
            if cls[j] == c:
                rows[index], rows[j] = rows[j], rows[index]
                cls[index], cls[j] = cls[j], cls[index]
                index += 1
        index += 1
    return np.asarray(rows, dtype=np.int64)


def _groups(df: pd.DataFrame, column: str, protocol: str) -> np.ndarray:
    if column not in df.columns:
        if column == "page":
            raise ProtocolError(
                f"--protocol {protocol} splits by page, but the table has no 'page' column (an ARFF "
                "file without the page attribute?): only --protocol thesis and --test apply; "
                "export with 'hwnoise export-arff --page' to keep the pages")
        raise ProtocolError(f"--protocol {protocol} splits by {column}, but the table has no "
                            f"{column!r} column; give dataset folders (their feature tables carry it)")
    col = df[column]
    if col.isna().any():
        raise ProtocolError(f"--protocol {protocol}: {int(col.isna().sum())} rows have no {column}")
    keys = col.astype(str)
    if column == "page" and "dataset" in df.columns:  # page IDs are unique within a dataset only
        keys = df["dataset"].astype(str) + "\x1f" + keys
    return keys.to_numpy()


def _shuffled_groups(groups: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct groups in first-appearance order, permuted by ``seed``; and each row's group code."""
    codes, uniques = pd.factorize(groups, sort=False)
    order = np.random.RandomState(seed).permutation(len(uniques))
    return order, codes


def _holdout_groups(groups: np.ndarray, seed: int, train_share: float, protocol: str):
    order, codes = _shuffled_groups(groups, seed)
    n = len(order)
    if n < 2:
        raise ProtocolError(f"--protocol {protocol} needs at least 2 pages; the table has {n}")
    n_train = min(max(int(round(n * train_share)), 1), n - 1)
    train_groups = np.zeros(n, dtype=bool)
    train_groups[order[:n_train]] = True
    in_train = train_groups[codes]
    return np.flatnonzero(in_train), np.flatnonzero(~in_train)


def _kfold_groups(groups: np.ndarray, seed: int, k: int, protocol: str, what: str):
    order, codes = _shuffled_groups(groups, seed)
    n = len(order)
    if n < 2:
        raise ProtocolError(f"--protocol {protocol} needs at least 2 {what}s; the table has {n}")
    k = min(k, n)
    if k < 2:
        raise ProtocolError(f"--protocol {protocol} needs k >= 2 folds")
    fold_of_group = np.empty(n, dtype=np.int64)
    fold_of_group[order] = np.arange(n) % k  # shuffled groups dealt round-robin: sizes differ by <= 1
    fold = fold_of_group[codes]
    return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(k)]


def splits(df: pd.DataFrame, protocol: str, *, seed: int = 1, k: int = 5,
           train_share: float = 0.66) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train_index, test_index) pairs of ``protocol`` on ``df`` (positional indices)."""
    if not 0 < train_share < 1:
        raise ProtocolError(f"train_share must lie between 0 and 1, not {train_share}")
    n = len(df)
    if protocol == "thesis":
        if n < 2:
            raise ProtocolError(f"--protocol thesis needs at least 2 rows; the table has {n}")
        perm = weka_randomize(n, seed)
        n_train = min(max(int(math.floor(n * (train_share * 100) / 100 + 0.5)), 1), n - 1)
        return [(np.sort(perm[:n_train]), np.sort(perm[n_train:]))]
    if protocol == "pages":
        return [_holdout_groups(_groups(df, "page", protocol), seed, train_share, protocol)]
    if protocol == "cv":
        return _kfold_groups(_groups(df, "page", protocol), seed, k, protocol, "page")
    if protocol == "cross-site":
        return _kfold_groups(_groups(df, "site", protocol), seed, k, protocol, "site")
    if protocol == "weka-cv":
        if "label" not in df.columns:
            raise ProtocolError("--protocol weka-cv stratifies by class, but the table has no 'label' column")
        codes, _ = pd.factorize(df["label"], sort=False)
        return weka_cv_folds(codes, k, seed)
    raise ProtocolError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
