"""How well the record-structure features alone find the records of a dataset with gold records.

For every page: the share of its gold record roots (content nodes under a noise parent) that
``features.record_struct`` marks as records (``rs_is_record``), and the node labels of a rule
that uses nothing else: content = inside a record of the page's largest record group
(``rs_in_record`` and ``rs_main_rel`` = 1). Prints node F1 (micro over all nodes, and the mean
of the pages') and the time the features took. Usage::

    python bench/records_struct.py DATASET
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.features.assembly import labelled_rows, walk_dataset_page
from hwnoise.features.columns import CONTENT
from hwnoise.features.record_struct import record_struct


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / max(2 * tp + fp + fn, 1)


def run(path: str) -> dict:
    tp = fp = fn = roots = found = 0
    pages, seconds, rows_n = [], 0.0, 0
    for page in Dataset(path).pages():
        walk = walk_dataset_page(page)
        rows = labelled_rows(page, walk)
        t = time.perf_counter()
        rs = record_struct(walk)
        seconds += time.perf_counter() - t
        rows_n += len(rows)
        gold = (rows["label"] == CONTENT).to_numpy()
        parent = rows["parent"].to_numpy()
        root = gold & np.r_[[True], ~gold[np.maximum(parent[1:], 0)]]
        roots += int(root.sum())
        found += int((root & (rs["rs_is_record"] == 1).to_numpy()).sum())
        rule = ((rs["rs_in_record"] == 1) & (rs["rs_main_rel"] >= 0.999)).to_numpy()
        a, b, c = int((rule & gold).sum()), int((rule & ~gold).sum()), int((~rule & gold).sum())
        tp, fp, fn = tp + a, fp + b, fn + c
        pages.append(_f1(a, b, c))
    return {"pages": len(pages), "gold_roots": roots, "roots_marked_records": found / max(roots, 1),
            "rule_node_f1_micro": _f1(tp, fp, fn), "rule_node_f1_page_mean": float(np.mean(pages)),
            "feature_seconds": seconds, "rows": rows_n}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset")
    for k, v in run(ap.parse_args().dataset).items():
        print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")
