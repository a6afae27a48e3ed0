"""Time C45Classifier.fit on 40,000-style noisy numeric data, with or without '?' values:

    python bench/bench_j48_missing.py [ROWS] [none|nan]

With '?' values (5 % of the cells) the fit keeps Java's row order (Weka's quicksort on columns
with ties) so that fractional weights add up as in J48; without them the presorted numpy path
runs. Prints seconds and the tree size."""
from __future__ import annotations

import sys
import time

import numpy as np

from hwnoise.training.c45 import C45Classifier


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 10_000
    missing = (argv[1] if len(argv) > 1 else "nan") == "nan"
    rng = np.random.default_rng(42)
    X = np.column_stack([rng.gamma(1.5, 20, n), rng.gamma(1.2, 50, n).round(3),
                         np.round(rng.exponential(0.5, n), 2), rng.poisson(0.3, n),
                         rng.integers(1, 30, n)]).astype(float)
    score = 0.04 * X[:, 0] + 0.01 * X[:, 1] + X[:, 2] - 0.08 * X[:, 4] + rng.normal(size=n)
    y = np.where(score > 0.8, "N", "S")
    if missing:
        X[rng.random(X.shape) < 0.05] = np.nan
    t = time.perf_counter()
    clf = C45Classifier().fit(X, y)
    print(f"{n} rows, {'5 % ?' if missing else 'no ?'}: {time.perf_counter() - t:.2f} s, {clf.node_count_} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
