"""Choose a grouping option on folds: for each fold, the variant with the best mean record F1 on
the other folds' pages, scored on its own pages (nested, so the figure is held-out).

Each variant is a per-page CSV of ``bench/records_loss.py --csv`` (same cached run); the folds
are the run's own (``PRED_DIR/meta.json`` of ``bench/records_predict.py``). Usage::

    python bench/records_choose.py PRED_DIR NAME=pages.csv NAME=pages.csv ...
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pred", type=Path)
    ap.add_argument("variants", nargs="+", metavar="NAME=CSV")
    a = ap.parse_args()
    fold_of = json.loads((a.pred / "meta.json").read_text(encoding="utf-8"))["pages"]
    names = [v.split("=", 1)[0] for v in a.variants]
    df = pd.DataFrame({n: pd.read_csv(v.split("=", 1)[1], dtype={"page": str}).set_index("page")["record_f1"]
                       for n, v in zip(names, a.variants)})
    df["fold"] = [fold_of[p] for p in df.index]
    held = []
    for k in sorted(df["fold"].unique()):
        train = df[df["fold"] != k][names].mean()
        best = str(train.idxmax())
        test = df[df["fold"] == k][best]
        held.append(test)
        print(f"fold {k + 1}: chosen {best} (other folds {train.max():.4f}), held out {test.mean():.4f}")
    print(f"held-out record F1 over all pages: {pd.concat(held).mean():.4f}")
    print("every variant on all pages: " + ", ".join(f"{n} {df[n].mean():.4f}" for n in names))


if __name__ == "__main__":
    main()
