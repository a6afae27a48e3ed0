"""Choose the region filter on folds: regions dropped by size (``min_rel``), by the model's
confidence (``min_conf``), or small ones kept when confident (``keep_conf``), scored on a cached
cross-site run (``bench/records_predict.py``: labels and content probabilities per page).

Each page is grouped once (``extractors.records.candidate_rows``); every variant of
``drop_regions`` is then scored with the paper's metric (``training.record_metrics``). For each
fold of the run, the variant with the best mean record F1 on the *other* folds' pages is scored
on the fold's own pages (so the figure is held out); also printed: every fold's choice, the
default's and the size-only filter's figures per fold, the same variants on the gold labels (the
ceiling: no probabilities there, every region's confidence 1), and the regions' confidence,
true (a record touches a gold record) vs spurious. Usage::

    python bench/records_confidence.py DATASET PRED_DIR [--csv pages.csv]
"""
from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import (GroupingOptions, _own, candidate_rows, chain_members, drop_regions,
                                        region_conf, row_xpaths)
from hwnoise.features.labels import page_labels
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.training.record_metrics import record_scores

MIN_REL = (0.0, 0.05, 0.1, 0.2, 0.3)
MIN_CONF = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
KEEP_CONF = (1.01, 0.5, 0.6, 0.7, 0.8, 0.9)


def variants() -> list[dict]:
    """The grid (``keep_conf`` only where it can act: with a size filter)."""
    out = []
    for rel, conf, keep in itertools.product(MIN_REL, MIN_CONF, KEEP_CONF):
        if rel == 0 and keep <= 1:
            continue
        if keep <= conf:
            continue  # then every region passing min_conf is kept: the size filter cannot act
        out.append({"min_rel": rel, "min_conf": conf, "keep_conf": keep})
    return out


def name(v: dict) -> str:
    keep = "" if v["keep_conf"] > 1 else f" keep>={v['keep_conf']}"
    return f"rel {v['min_rel']} conf>={v['min_conf']}{keep}"


def regions(walk, records, proba, gold_rows: set[int]) -> list[dict]:
    """Each candidate region's size share, confidence and whether it touches the gold."""
    rows = walk.rows
    parent = rows["parent"].to_numpy(dtype=np.int64)
    chars = rows["chars"].to_numpy(dtype=np.int64)
    last = np.asarray(walk.last, dtype=np.int64)
    own = _own(rows)
    by: dict[int, list[int]] = {}
    for rec in records:
        by.setdefault(int(parent[chain_members(rec[0], parent, chars, last)[0]]), []).extend(rec)
    mark = np.zeros(len(chars) + 1, dtype=np.int64)  # rows inside a gold record's subtree
    for r in gold_rows:
        mark[r] += 1
        mark[int(last[r]) + 1] -= 1
    cov = np.cumsum(mark[:-1]) > 0
    size = {k: int(chars[m].sum()) for k, m in by.items()}
    top = max(size.values()) if size else 1
    out = []
    for k, m in by.items():
        touch = any(cov[h:int(last[h]) + 1].any() for h in m)
        out.append({"rel": size[k] / top, "conf": region_conf(m, proba, own, last), "true": bool(touch)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path)
    ap.add_argument("--csv", type=Path, help="per-page record F1 of every variant")
    a = ap.parse_args()
    fold_of = json.loads((a.pred / "meta.json").read_text(encoding="utf-8"))["pages"]
    grid = variants()
    knobs = [GroupingOptions(**v) for v in grid]
    pages, f1, f1_gold, regs = [], [], [], []
    for page in Dataset(a.dataset).pages():
        records = page.read_records()
        f = a.pred / f"{page.id}.npz"
        if records is None or not f.is_file():
            continue
        z = np.load(f)
        labels, proba = z["labels"].astype(object), z["proba"]
        walk, html = walk_of(page), page.read_html()
        xp = row_xpaths(html, len(walk.rows))
        at = {x: i for i, x in enumerate(xp)}
        gold = [[normalize_xpath(x) for x in r] for r in records]
        gold_labels = np.asarray(page_labels(walk, page.read_gold(), html=html, records=records), dtype=object)
        cand = candidate_rows(walk, labels)
        cand_gold = candidate_rows(walk, gold_labels)
        row, row_gold = [], []
        for o in knobs:
            pred = drop_regions(walk, labels, cand, proba, options=o)
            row.append(record_scores([[xp[r] for r in rec] for rec in pred], gold)["record_f1"])
            pred = drop_regions(walk, gold_labels, cand_gold, None, options=o)
            row_gold.append(record_scores([[xp[r] for r in rec] for rec in pred], gold)["record_f1"])
        pages.append(page.id)
        f1.append(row)
        f1_gold.append(row_gold)
        for r in regions(walk, cand, proba, {at[x] for g in gold for x in g if x in at}):
            regs.append({**r, "page": page.id})
    names = [name(v) for v in grid]
    df = pd.DataFrame(f1, index=pages, columns=names)
    dg = pd.DataFrame(f1_gold, index=pages, columns=names)
    fold = pd.Series([fold_of[p] for p in pages], index=pages)
    default = name({"min_rel": 0.1, "min_conf": 0.0, "keep_conf": 1.01})
    print(f"{len(pages)} pages, {len(grid)} variants")
    held = []
    for k in sorted(fold.unique()):
        train = df[fold != k].mean()
        best = str(train.idxmax())
        test = df[fold == k][best]
        held.append(test)
        print(f"fold {k + 1}: chosen '{best}' (other folds {train.max():.4f}), held out {test.mean():.4f}; "
              f"default '{default}' {df[fold == k][default].mean():.4f}")
    print(f"held-out record F1 over all pages: {pd.concat(held).mean():.4f} "
          f"(default on the same pages {df[default].mean():.4f})")
    top = df.mean().sort_values(ascending=False)
    print("best variants on all pages (not held out):")
    for n in top.index[:8]:
        per = " ".join(f"{df[fold == k][n].mean():.3f}" for k in sorted(fold.unique()))
        print(f"  {n}: {top[n]:.4f} per fold {per}; gold-label ceiling {dg[n].mean():.4f}")
    none = name({"min_rel": 0.0, "min_conf": 0.0, "keep_conf": 1.01})
    print(f"default: {df[default].mean():.4f}, ceiling {dg[default].mean():.4f}; "
          f"no filter: {df[none].mean():.4f}, ceiling {dg[none].mean():.4f}")
    r = pd.DataFrame(regs)
    if len(r):
        for t, g in r.groupby("true"):
            print(f"regions {'true' if t else 'spurious'}: {len(g)}, confidence median {g['conf'].median():.3f} "
                  f"(quartiles {g['conf'].quantile(.25):.3f}-{g['conf'].quantile(.75):.3f}), "
                  f"size share median {g['rel'].median():.3f}")
    if a.csv:
        df.assign(fold=fold).to_csv(a.csv, index_label="page")
        dg.to_csv(a.csv.with_suffix(".gold.csv"), index_label="page")


if __name__ == "__main__":
    main()
