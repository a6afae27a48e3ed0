"""A saved gradient-boosted model's descent: compiled (``training/_trees.c``) against its numpy
reference (``TreeEnsemble._descend``), side by side in one run, on the shipped models.

Rows are drawn from the models' own split thresholds (each column a threshold of that feature,
nudged by 0 or ±1e-12, a tenth of the values missing), so every row goes down real paths. For
each model and row count: the median time of each over ``--repeat`` alternated runs, their
ratio, and whether the two give the same doubles. Usage::

    python bench/bench_trees.py [--rows 1,500,5000] [--repeat 7]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from hwnoise import native
from hwnoise.extractors.model import load_model
from hwnoise.extractors.regions import scorer_of


def _ensembles() -> dict:
    out = {"general (node model)": load_model("general").estimator}
    records = load_model("records")
    out["records (node model)"] = records.estimator
    scorer = scorer_of(records)
    if scorer is not None:
        out["records (region scorer)"] = scorer.ensemble
    return out


def _rows(ens, n: int, rng: np.random.Generator) -> np.ndarray:
    feats = np.concatenate([t["feature"][~t["leaf"]] for t in ens.trees])
    thr = np.concatenate([t["threshold"][~t["leaf"]] for t in ens.trees])
    X = rng.random((n, ens.n_features_in_))
    for j in range(ens.n_features_in_):
        v = thr[feats == j]
        if len(v):
            X[:, j] = rng.choice(v, n) + rng.choice([-1e-12, 0.0, 1e-12], n)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1,500,5000")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    if native.trees is None:
        raise SystemExit("the compiled descent is not built (hwnoise.training._trees); nothing to compare")
    rng = np.random.default_rng(0)
    report = []
    for name, ens in _ensembles().items():
        for n in (int(x) for x in a.rows.split(",")):
            X = _rows(ens, n, rng)
            same = bool(np.array_equal(ens.decision_function(X), ens._descend(X, ens.baseline)))
            comp, ref = [], []
            for _ in range(a.repeat):  # alternated, so a slow spell of the machine falls on both
                t = time.perf_counter()
                ens.decision_function(X)
                comp.append(time.perf_counter() - t)
                t = time.perf_counter()
                ens._descend(X, ens.baseline)
                ref.append(time.perf_counter() - t)
            c, r = statistics.median(comp), statistics.median(ref)
            report.append({"model": name, "trees": len(ens.trees), "rows": n, "same_doubles": same,
                           "compiled_ms": round(c * 1e3, 3), "numpy_ms": round(r * 1e3, 3),
                           "numpy_over_compiled": round(r / c, 1)})
            print(json.dumps(report[-1]), flush=True)


if __name__ == "__main__":
    main()
