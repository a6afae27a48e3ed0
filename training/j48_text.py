"""The tree text Weka 3.6.14's J48 prints, written from a fitted C45Classifier and read back.

Why: users compare hwnoise's tree with Weka's by eye and tests compare them line by line, so
the printer follows Weka to the character: ``|   `` per level, ``attr <= thr`` with
``Utils.doubleToString(thr, 6)``, leaves ``: CLASS (weight/errors)`` with
``Utils.roundDouble(x, 2)`` printed as Java prints a double, then the two count lines.
The printer reads only the fitted arrays (``children_left_``, ``feature_``, ``threshold_``,
``value_``).
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Sequence

import numpy as np

from hwnoise.errors import HwnoiseError
from hwnoise.training.c45 import _max_class

SMALL = 1e-6
_LONG_MAX = 2 ** 63 - 1


class J48TextError(HwnoiseError):
    """Text that is not a J48 tree (names the line)."""


# ---------------------------------------------------------------- Java number formatting

def java_double(value: float) -> str:
    """``Double.toString(value)`` as Java writes it ("5.0", "0.25", "1.0E7", "1.0E-4")."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    tup = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, tup.digits))
    exp = tup.exponent + len(digits) - 1          # value = d.ddd * 10**exp
    a = abs(value)
    if 1e-3 <= a < 1e7:
        if exp >= 0:
            whole = digits[:exp + 1].ljust(exp + 1, "0")
            frac = digits[exp + 1:] or "0"
        else:
            whole = "0"
            frac = "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{frac}"
    mant = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mant}E{exp}"


def round_double(value: float, after: int = 2) -> float:
    """``Utils.roundDouble``: Math.round(value * 10^after) / 10^after."""
    mask = 10.0 ** after
    scaled = value * mask
    if math.isnan(scaled):
        return 0.0
    if math.isinf(scaled):
        rounded = _LONG_MAX if scaled > 0 else -_LONG_MAX - 1
    else:                                  # Math.round saturates at the long range
        rounded = max(-_LONG_MAX - 1, min(_LONG_MAX, math.floor(scaled + 0.5)))
    return float(rounded) / mask


def double_to_string(value: float, after: int = 6) -> str:
    """``Utils.doubleToString(value, afterDecimalPoint)`` of Weka 3.6 (thresholds)."""
    temp = value * math.pow(10.0, after)
    if not abs(temp) < _LONG_MAX:
        return java_double(value)
    precision = int(temp + 0.5) if temp > 0 else -int(abs(temp) + 0.5)
    buf = list(str(precision) if precision != 0 else "0")
    if after == 0:
        return "".join(buf)
    dot = len(buf) - after
    while (precision < 0 and dot < 1) or dot < 0:
        if precision < 0:
            buf.insert(1, "0")
        else:
            buf.insert(0, "0")
        dot += 1
    buf.insert(dot, ".")
    if precision < 0 and buf[1] == ".":
        buf.insert(1, "0")
    elif buf[0] == ".":
        buf.insert(0, "0")
    pos = len(buf) - 1
    while pos > dot and buf[pos] == "0":
        buf[pos] = " "
        pos -= 1
    if buf[pos] == ".":
        buf[pos] = " "
    return "".join(buf).strip()


# ---------------------------------------------------------------- printing

def _label(counts: np.ndarray, total: float, dist_counts: np.ndarray, class_names: Sequence[str]) -> str:
    """dumpLabel(index) of a distribution for its bag ``index``: class (weight[/errors]).

    ``counts`` and ``total`` are the bag's class weights and weight, ``dist_counts`` the
    distribution's class weights (Distribution.maxClass(index) falls back on them when the bag
    is empty); errors are ``perBag - perClassPerBag[maxClass(index)]`` as Java subtracts."""
    cls = _max_class(counts) if total - 0 > SMALL else _max_class(dist_counts)
    wrong = total - float(counts[cls])
    text = f"{class_names[cls]} ({java_double(round_double(total))}"
    if wrong - 0 > SMALL:
        text += f"/{java_double(round_double(wrong))}"
    return text + ")"


def tree_lines(clf, feature_names: Sequence[str] | None = None,
               class_names: Sequence[str] | None = None) -> str:
    """The tree part of J48's text (from the first rule to the last leaf), without headers."""
    cl = clf.children_left_
    names = _feature_names(clf, feature_names)
    classes = [str(c) for c in (clf.classes_ if class_names is None else class_names)]
    if len(classes) != clf.value_.shape[1]:
        raise ValueError(f"{len(classes)} class names for {clf.value_.shape[1]} classes")
    if cl[0] < 0:
        _, bag_value, bag_total = clf._totals()
        return ": " + _label(bag_value[0], bag_total[0], clf.value_[0], classes)
    return "\n".join(_subtree(clf, 0, 0, names, classes))


def _subtree(clf, node: int, depth: int, names, classes) -> list[str]:
    from hwnoise.training.c45 import NOMINAL, NOMINAL_BINARY

    children = clf.children_
    kind = int(getattr(clf, "kind_", [0] * len(clf.feature_))[node])
    feature = clf.feature_[node]
    name = names[feature]
    if kind == NOMINAL:
        cats = clf.categories_[feature]
        tests = [f"{name} = {cats[b]}" for b in range(len(cats))]
    elif kind == NOMINAL_BINARY:
        value = clf.categories_[feature][int(clf.threshold_[node])]
        tests = [f"{name} = {value}", f"{name} != {value}"]
    else:
        if getattr(clf, "binary_splits", False):      # BinC45Split prints the raw Java double
            thr = java_double(float(clf.threshold_[node]))
        else:
            thr = double_to_string(float(clf.threshold_[node]), 6)
        tests = [f"{name} <= {thr}", f"{name} > {thr}"]
    out: list[str] = []
    for test, child in zip(tests, children[node]):
        line = "|   " * depth + test
        if children[child, 0] < 0:
            _, bag_value, bag_total = clf._totals()
            out.append(line + ": " + _label(bag_value[child], bag_total[child], clf.value_[node], classes))
        else:
            out.append(line)
            out.extend(_subtree(clf, child, depth + 1, names, classes))
    return out


def _feature_names(clf, feature_names) -> list[str]:
    if feature_names is not None:
        names = [str(n) for n in feature_names]
    elif hasattr(clf, "feature_names_in_"):
        names = [str(n) for n in clf.feature_names_in_]
    else:
        names = [f"x{i}" for i in range(clf.n_features_in_)]
    if len(names) != clf.n_features_in_:
        raise ValueError(f"{len(names)} feature names for {clf.n_features_in_} features")
    return names


def export_j48(clf, feature_names: Sequence[str] | None = None,
               class_names: Sequence[str] | None = None) -> str:
    """J48's model text for ``-t`` ("J48 pruned tree" ... "Size of the tree : \\tN\\n").

    ``class_names`` name ``clf.classes_`` in order (default: the labels themselves)."""
    from sklearn.utils.validation import check_is_fitted
    check_is_fitted(clf, "value_")
    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        body = tree_lines(clf, feature_names, class_names)
        if clf.children_left_[0] >= 0:
            body = "\n" + body
    finally:
        sys.setrecursionlimit(old)
    head = "J48 unpruned tree" if getattr(clf, "unpruned", False) else "J48 pruned tree"
    n_leaves = int((clf.children_left_ < 0).sum())
    return (f"{head}\n------------------\n{body}\n\nNumber of Leaves  : \t{n_leaves}\n"
            f"\nSize of the tree : \t{clf.children_left_.size}\n")


# ---------------------------------------------------------------- parsing

_RULE = re.compile(r"^((?:\|   )*)(.+?) (<=|>|!=|=) (.+?)(?:: (.+?) \(([^/()]+)(?:/([^()]+))?\))?$")
_ROOT_LEAF = re.compile(r"^: (.+?) \(([^/()]+)(?:/([^()]+))?\)$")


def extract_tree_text(output: str) -> str:
    """The model part of Weka's output: from "J48 (un)pruned tree" to the "Size of the tree" line."""
    m = re.search(r"J48 (?:un)?pruned tree\n-+\n.*?\nSize of the tree : \t\d+\n", output, re.S)
    if not m:
        raise J48TextError("no J48 tree in this text (expected 'J48 pruned tree' ... "
                           "'Size of the tree :')")
    return m.group(0)


def parse_j48(text: str) -> dict[str, Any]:
    """Read J48's tree text into nested dicts.

    A split is ``{"attribute", "threshold" (float), "threshold_text", "children": [<=, >]}``,
    a leaf ``{"class", "weight", "errors"}``; the result also carries ``n_leaves`` and
    ``size`` as printed, under the root's keys ``"tree"``, ``"n_leaves"``, ``"size"``."""
    body, n_leaves, size = _body_lines(text)
    m = _ROOT_LEAF.match(body[0][1])
    if m:
        tree = _leaf(m.group(1), m.group(2), m.group(3))
    else:
        parser = _TreeParser(body)
        tree = parser.split(0)
        parser.expect_end()
    return {"tree": tree, "n_leaves": n_leaves, "size": size}


def _body_lines(text: str) -> tuple[list[tuple[int, str]], int | None, int | None]:
    """The tree's lines with their line numbers, and the two counts, without the headers."""
    try:
        text = extract_tree_text(text)
    except J48TextError:
        pass
    n_leaves = size = None
    body: list[tuple[int, str]] = []
    for no, line in enumerate(text.splitlines(), 1):
        if line.startswith("J48 ") or set(line) == {"-"} or not line.strip():
            continue
        m = re.match(r"^Number of Leaves  :\s*(\d+)$", line)
        if m:
            n_leaves = int(m.group(1))
            continue
        m = re.match(r"^Size of the tree :\s*(\d+)$", line)
        if m:
            size = int(m.group(1))
            continue
        body.append((no, line))
    if not body:
        raise J48TextError("line 1: no tree lines in the text")
    return body, n_leaves, size


class _TreeParser:
    """Recursive descent over the rule lines; ``pos`` is the next line of ``body`` to read.
    ``split`` raises its errors and its checks only return the complaint, so that a deep tree
    costs one stack frame a level (a chain of about 1,000 splits parses)."""

    def __init__(self, body: list[tuple[int, str]]):
        self.body = body
        self.pos = 0

    def split(self, depth: int) -> dict[str, Any]:
        """The split whose rule lines are at ``depth``, each branch a leaf or a deeper split."""
        body = self.body
        children: list[dict[str, Any]] = []
        tests: list[str] = []
        attr = thr_text = None
        while self.pos < len(body):
            no, line = body[self.pos]
            mm = _RULE.match(line)
            level = len(mm.group(1)) // 4 if mm else -1
            if children and (level < depth or (level == depth and len(children) == 2
                                               and tests[0] == "<=")):
                break
            if not mm or level != depth:
                raise J48TextError(f"line {no}: expected a rule at depth {depth}: {line!r}")
            _, name, op, value, cls, weight, errors = mm.groups()
            if tests:              # a later branch: same attribute, and a binary split's value
                problem = (_other_attribute(name, attr)
                           or _other_value(name, op, value, tests[0], attr, thr_text))
                if problem:
                    raise J48TextError(f"line {no}: {problem}")
            attr, thr_text = name, (value if thr_text is None else thr_text)
            tests.append(op)
            self.pos += 1
            children.append(_leaf(cls, weight, errors) if cls is not None else self.split(depth + 1))
            if tests[-1] in (">", "!="):
                break
        if len(children) < 2:
            last = body[min(self.pos, len(body) - 1)][0]
            raise J48TextError(f"line {last}: the tree ends inside a split")
        out = {"attribute": attr, "threshold_text": thr_text, "children": children, "tests": tests}
        if tests[0] == "<=":
            out["threshold"] = float(thr_text)
        return out

    def expect_end(self) -> None:
        """The root split must end on the last tree line."""
        if self.pos != len(self.body):
            raise J48TextError(f"line {self.body[self.pos][0]}: unexpected text after the tree")


def _other_attribute(name: str, attr: str) -> str | None:
    """A later branch's complaint when it tests another attribute than the split's."""
    if name != attr:
        return f"this branch tests {name}, not {attr}"
    return None


def _other_value(name: str, op: str, value: str, first_op: str, attr: str,
                 thr_text: str) -> str | None:
    """The complaint when the second branch of ``<=``/``>`` or ``=``/``!=`` names another value
    than the first branch."""
    if first_op == "<=" or first_op == "!=" or (first_op == "=" and op == "!="):
        if value != thr_text:
            return f"the second branch tests {name} {value}, not {attr} {thr_text}"
    return None


def _leaf(cls: str, weight: str, errors: str | None) -> dict[str, Any]:
    return {"class": cls, "weight": float(weight), "errors": float(errors) if errors else 0.0}


def tree_shape(parsed: dict[str, Any]) -> tuple[int, int]:
    """(leaves, nodes) counted from a parsed tree."""
    def walk(n):
        if "children" not in n:
            return 1, 1
        parts = [walk(c) for c in n["children"]]
        return sum(p[0] for p in parts), sum(p[1] for p in parts) + 1
    return walk(parsed["tree"])


def diff_trees(a: dict[str, Any], b: dict[str, Any], tol: float = 0.011) -> list[str]:
    """Where two parsed trees differ (attribute, threshold text, leaf class/weight/errors)."""
    out: list[str] = []

    def walk(x, y, path):
        if ("children" in x) != ("children" in y):
            out.append(f"{path or 'root'}: {'split' if 'children' in x else 'leaf'} vs "
                       f"{'split' if 'children' in y else 'leaf'}")
            return
        if "children" in x:
            if x["attribute"] != y["attribute"] or x["threshold_text"] != y["threshold_text"] \
                    or len(x["children"]) != len(y["children"]):
                out.append(f"{path or 'root'}: {x['attribute']} {x['threshold_text']} vs "
                           f"{y['attribute']} {y['threshold_text']}")
                return
            for i, op in enumerate(x.get("tests", ("<=", ">"))):
                walk(x["children"][i], y["children"][i], f"{path}/{x['attribute']}{op}{x['threshold_text']}#{i}")
        elif x["class"] != y["class"] or abs(x["weight"] - y["weight"]) > tol \
                or abs(x["errors"] - y["errors"]) > tol:
            out.append(f"{path}: {x['class']} ({x['weight']}/{x['errors']}) vs "
                       f"{y['class']} ({y['weight']}/{y['errors']})")

    walk(a["tree"], b["tree"], "")
    return out
