"""Regenerate the ARFF fixtures of this folder and the trees real Weka J48 prints for them.

Run from the repo root: ``python data/arff/make_fixtures.py`` (needs java and Weka 3.6.14's
jar for the ``*.j48.txt`` files). The data are seeded, so reruns give the same files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FIVE = ["ctd", "density_sum", "query_score", "matches", "distance"]
#: file suffix -> J48 options
OPTIONS = {"": ("-C", "0.25", "-M", "2"), ".S": ("-C", "0.25", "-M", "2", "-S"),
           ".U": ("-U", "-M", "2"), ".M10": ("-C", "0.25", "-M", "10")}


def write(path: Path, X: np.ndarray, y, names, classes=("S", "N"), relation="fixture") -> None:
    lines = [f"@relation {relation}", ""]
    lines += [f"@attribute {n} numeric" for n in names]
    lines += ["@attribute result {" + ",".join(classes) + "}", "", "@data"]
    for row, label in zip(X, y):
        lines.append(",".join("?" if np.isnan(v) else repr(float(v)) for v in row) + "," + label)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def weather():
    rows = [(0, 85, 85, 0, "no"), (0, 80, 90, 1, "no"), (1, 83, 86, 0, "yes"), (2, 70, 96, 0, "yes"),
            (2, 68, 80, 0, "yes"), (2, 65, 70, 1, "no"), (1, 64, 65, 1, "yes"), (0, 72, 95, 0, "no"),
            (0, 69, 70, 0, "yes"), (2, 75, 80, 0, "yes"), (0, 75, 70, 1, "yes"), (1, 72, 90, 1, "yes"),
            (1, 81, 75, 0, "yes"), (2, 71, 91, 1, "no")]
    X = np.array([r[:4] for r in rows], dtype=float)
    return X, [r[4] for r in rows], ["outlook", "temperature", "humidity", "windy"], ("yes", "no")


def noisy5(n=400, seed=3):
    """Node-like rows: skewed densities, small integer matches and depths, 15 % label noise."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.gamma(1.5, 20, n).round(4), rng.gamma(1.2, 50, n).round(4),
                         rng.exponential(0.5, n).round(2), rng.poisson(0.4, n), rng.integers(0, 25, n)])
    s = 0.04 * X[:, 0] + 0.01 * X[:, 1] + X[:, 2] + 0.6 * X[:, 3] - 0.1 * X[:, 4] + rng.normal(size=n)
    y = np.where(s > 1.0, "N", "S")
    flip = rng.random(n) < 0.15
    y[flip] = np.where(y[flip] == "N", "S", "N")
    return X, y, FIVE, ("S", "N")


def ties(n=260, seed=5):
    """Many duplicates, values closer than 1e-5 (not a cut for J48), -0.0 and 0.0, some '?'."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, n).astype(float)
    a[a == 0] = np.where(rng.random((a == 0).sum()) < 0.5, -0.0, 0.0)
    b = rng.integers(0, 5, n) + np.where(rng.random(n) < 0.3, 4e-6, 0.0)
    c = np.round(rng.normal(size=n), 1)
    X = np.column_stack([a, b, c])
    y = np.where(a + 0.8 * b + c + rng.normal(size=n) > 2, "N", "S")
    X[rng.random((n, 3)) < 0.06] = np.nan
    return X, y, ["a", "b", "c"], ("S", "N")


def missing(n=300, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * [10, 100, 1, 3, 5]
    X[:, 3] = np.round(X[:, 3])
    y = np.where(X[:, 0] + X[:, 1] / 10 + rng.normal(size=n) * 8 > 0, "N", "S")
    X[:, 0][rng.random(n) < 0.15] = np.nan
    X[:, 2][rng.random(n) < 0.25] = np.nan
    return X, y, FIVE, ("S", "N")


def pruning(n=120, seed=180):
    """A set on which pruning, and subtree raising in particular, change the tree."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 3)) * 10, 1)
    s = X[:, 0] + 0.7 * X[:, 1] * (X[:, 2] > 0) + rng.normal(size=n) * 6
    return X, np.where(s > 0, "N", "S"), ["x", "y", "z"], ("S", "N")


FIXTURES = {"weather": (weather, ("",)), "noisy5": (noisy5, ("", ".M10", ".U")),
            "ties": (ties, ("", ".S")), "missing": (missing, ("", ".S", ".U")),
            "pruning": (pruning, ("", ".S", ".U"))}


def main() -> None:
    from hwnoise.training.weka import run_j48
    for name, (make, suffixes) in FIXTURES.items():
        X, y, names, classes = make()
        path = HERE / f"{name}.arff"
        write(path, X, y, names, classes, relation=name)
        for suffix in suffixes:
            result = run_j48(path, options=OPTIONS[suffix])
            (HERE / f"{name}{suffix}.j48.txt").write_text(result.tree_text, encoding="utf-8")
            print(f"{name}{suffix}: {result.n_leaves} leaves, size {result.size}")


if __name__ == "__main__":
    main()
