"""Weka 3.6's ``Evaluation`` for any class set: the cross-validation summary J48 prints.

Why: ``hwnoise train FILE.arff`` prints what ``J48 -t FILE.arff`` prints, so a Weka user can
check the figures line by line. Read from Weka 3.6.14 (``Evaluation.updateStatsForClassifier``,
``updateNumericScores``, ``setPriors``, ``kappa``, ``toSummaryString``, ``toMatrixString``):

* the predicted class is the first with the highest probability (strict ``>``, from 0);
* rows of missing class are counted apart ("Ignored Class Unknown Instances");
* the priors of the relative errors are the training fold's class counts plus one each;
* numbers are written by ``Utils.doubleToString(value, width, decimals)``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hwnoise.training.j48_text import double_to_string


def double_to_string_width(value: float, width: int, after: int) -> str:
    """``Utils.doubleToString(value, width, afterDecimalPoint)``: decimal-aligned in ``width``."""
    temp = double_to_string(value, after)
    if after >= width or "E" in temp:
        return temp
    result = [" "] * width
    if after > 0:
        dot = temp.find(".")
        if dot == -1:
            dot = len(temp)
        else:
            result[width - after - 1] = "."
    else:
        dot = len(temp)
    offset = width - after - dot
    if after > 0:
        offset -= 1
    if offset < 0:
        return temp
    for i in range(dot):
        result[offset + i] = temp[i]
    for i in range(dot + 1, len(temp)):
        result[offset + i] = temp[i]
    return "".join(result)


def _short_id(num: int, width: int) -> str:
    """Evaluation.num2ShortID: a, b, ..., z, aa, ... right-aligned in ``width``."""
    chars = "abcdefghijklmnopqrstuvwxyz"
    out = [" "] * width
    i = width - 1
    while i >= 0:
        out[i] = chars[num % 26]
        num = num // 26 - 1
        if num < 0:
            break
        i -= 1
    return "".join(out)


class WekaEvaluation:
    """Accumulates test predictions fold after fold as Weka's Evaluation does."""

    def __init__(self, classes: Sequence[str]):
        self.classes = [str(c) for c in classes]
        k = len(self.classes)
        self.matrix = np.zeros((k, k))
        self.with_class = self.missing_class = self.unclassified = 0.0
        self.correct = self.incorrect = 0.0
        self.sum_abs = self.sum_sqr = self.sum_prior_abs = self.sum_prior_sqr = 0.0
        self.priors = np.ones(k)

    def set_priors(self, y_train: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Evaluation.setPriors: one plus the weight of each class among the training rows."""
        y_train = np.asarray(y_train)
        w = np.ones(len(y_train)) if weights is None else np.asarray(weights, float)
        known = y_train >= 0
        self.priors = 1.0 + np.bincount(y_train[known], weights=w[known], minlength=len(self.classes))

    def add(self, proba: np.ndarray, y_test: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Score the class distributions ``proba`` (rows x classes) of rows of class ``y_test``
        (index, negative when missing)."""
        proba = np.asarray(proba, dtype=np.float64)
        y_test = np.asarray(y_test)
        w = np.ones(len(y_test)) if weights is None else np.asarray(weights, float)
        k = len(self.classes)
        prior = self.priors / self.priors.sum()
        for dist, actual, weight in zip(proba, y_test.tolist(), w.tolist()):
            if actual < 0:
                self.missing_class += weight
                continue
            pred, best = -1, 0.0
            for i in range(k):
                if dist[i] > best:
                    pred, best = i, dist[i]
            self.with_class += weight
            if pred < 0:
                self.unclassified += weight
                continue
            truth = np.zeros(k)
            truth[actual] = 1.0
            diff = dist - truth
            self.sum_abs += weight * float(np.abs(diff).sum()) / k
            self.sum_sqr += weight * float((diff * diff).sum()) / k
            pdiff = prior - truth
            self.sum_prior_abs += weight * float(np.abs(pdiff).sum()) / k
            self.sum_prior_sqr += weight * float((pdiff * pdiff).sum()) / k
            self.matrix[actual, pred] += weight
            if pred == actual:
                self.correct += weight
            else:
                self.incorrect += weight

    # -- figures
    def kappa(self) -> float:
        rows, cols, total = self.matrix.sum(axis=1), self.matrix.sum(axis=0), self.matrix.sum()
        if total == 0:
            return 1.0
        chance = float((rows * cols).sum()) / (total * total)
        correct = float(np.trace(self.matrix)) / total
        return (correct - chance) / (1 - chance) if chance < 1 else 1.0

    def summary_text(self) -> str:
        """Evaluation.toSummaryString's lines (the classification ones)."""
        n = self.with_class
        scored = n - self.unclassified  # Weka's errors are over the classified rows (0/0: NaN)
        mae = self.sum_abs / scored if scored else math.nan
        rmse = math.sqrt(self.sum_sqr / scored) if scored else math.nan
        prior_mae = self.sum_prior_abs / n if n else math.nan
        prior_rmse = math.sqrt(self.sum_prior_sqr / n) if n else math.nan
        pct = (lambda x: 100 * x / n) if n else (lambda x: math.nan)

        def num(v: float) -> str:
            return double_to_string_width(v, 12, 4)

        lines = [] if not n else [  # Weka prints the rates only when some weight had a class
            "Correctly Classified Instances     " + num(self.correct) + "     " + num(pct(self.correct)) + " %",
            "Incorrectly Classified Instances   " + num(self.incorrect) + "     " + num(pct(self.incorrect)) + " %",
            "Kappa statistic                    " + num(self.kappa()),
            "Mean absolute error                " + num(mae),
            "Root mean squared error            " + num(rmse),
            "Relative absolute error            " + num(100 * mae / prior_mae if prior_mae else math.nan) + " %",
            "Root relative squared error        " + num(100 * rmse / prior_rmse if prior_rmse else math.nan) + " %",
        ]
        if n and self.unclassified > 0:
            lines.append("UnClassified Instances             " + num(self.unclassified) + "     "
                         + num(pct(self.unclassified)) + " %")
        lines.append("Total Number of Instances          " + num(n))
        if self.missing_class > 0:
            lines.append("Ignored Class Unknown Instances            " + num(self.missing_class))
        return "\n".join(lines) + "\n"

    def matrix_text(self) -> str:
        """Evaluation.toMatrixString: the confusion matrix, rows the actual classes."""
        k = len(self.classes)
        maxval, fractional = 0.0, False
        for v in self.matrix.ravel():
            cur = v * -10 if v < 0 else v
            maxval = max(maxval, cur)
            fract = cur - round(cur)
            if not fractional and fract > 0 and math.log10(fract) >= -2:
                fractional = True
        digits = int(math.log10(maxval) + (3 if fractional else 0)) if maxval > 0 else -(2 ** 31)
        width = 1 + max(digits, int(math.log(k) / math.log(26)) if k > 0 else 0)
        out = ["=== Confusion Matrix ===", ""]
        head = ""
        for i in range(k):
            head += " " + (_short_id(i, width - 3) + "   " if fractional else _short_id(i, width))
        out.append(head + "   <-- classified as")
        for i in range(k):
            row = "".join(" " + double_to_string_width(float(v), width, 2 if fractional else 0)
                          for v in self.matrix[i])
            out.append(row + " | " + _short_id(i, width) + " = " + self.classes[i])
        return "\n".join(out) + "\n"

    def cv_text(self) -> str:
        """The "=== Stratified cross-validation ===" section of J48's output."""
        return ("=== Stratified cross-validation ===\n\n" + self.summary_text() + "\n\n"
                + self.matrix_text())
