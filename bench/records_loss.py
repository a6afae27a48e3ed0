"""Where record F1 is lost: every gold record of a dataset sorted by what became of it, from a
cached run's node labels (``bench/records_predict.py``) and, beside them, from the gold labels.

For each page the records are grouped from the labels and the content probabilities
(``extractors.records``, as ``hwnoise evaluate`` groups them) and scored as
``hwnoise evaluate`` scores them (``training.record_metrics``, the paper's metric). Each gold
record the one-to-one matching leaves at Jaccard 0 gets one cause, the first that holds:

- ``hidden``: none of its XPaths names a shown element (the page hides it);
- ``level``: a predicted record is its ancestor or descendant *with the same text* (a
  single-child chain, ``li > div``: the right record one level off);
- ``merged``: a predicted record contains it and other gold records (a region as one record);
- ``split``: two or more predicted records lie inside it (a record cut into parts);
- ``nested``: one predicted record inside it or around it, neither of the above;
- ``taken``: a predicted record overlaps it but was matched to another gold record;
- ``missed``: no predicted record overlaps it (its region labelled noise, or not grouped).

Predicted records that touch no gold record are ``spurious``. Also printed: node content F1 of the labels (``training.metrics.node_scores`` over all nodes),
and the grouping's time per page (``records_from_labels`` alone). Pages that score record F1 0
are put under the cause most of their gold records have (or ``spurious`` when the page has
no gold records). A second figure, clearly not the paper's, scores both sides after
*chain collapse* (every XPath replaced by the outermost element of its single-child chain:
the ancestors holding exactly its text), which shows what the level convention alone costs.

Usage::

    python bench/records_loss.py DATASET PRED_DIR [--csv pages.csv] [--gold] [--option KEY=JSON ...]

(``--option``: a knob of the grouping, ``extractors.records.GroupingOptions``, e.g. ``min_rel=0`` or
``level_rule='"labels"'``.)
"""
from __future__ import annotations

import argparse
import csv
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import GroupingOptions, records_from_labels, row_xpaths
from hwnoise.features.labels import page_labels
from hwnoise.features.record_gold import normalize_xpath, text_xpaths
from hwnoise.training.metrics import node_scores
from hwnoise.training.record_metrics import mean_record_scores, record_scores

CAUSES = ("hidden", "level", "merged", "split", "nested", "taken", "missed")


def chain_top(chars: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each row's outermost ancestor-or-self whose text is exactly the row's (body excluded)."""
    top = np.arange(len(chars))
    for i in range(1, len(chars)):  # document order: a parent's top is known before its child's
        p = parent[i]
        if p > 0 and chars[p] == chars[i]:
            top[i] = top[p]
    return top


def collapse(records: list[list[str]], at: dict[str, int], top: np.ndarray, xpaths: list[str]) -> list[list[str]]:
    """Records with every resolvable XPath replaced by its chain top's."""
    return [sorted({xpaths[top[at[x]]] if x in at else x for x in r}) for r in records]


def causes(pred: list[list[str]], gold: list[list[str]], at: dict[str, int], last: np.ndarray,
           chars: np.ndarray) -> tuple[Counter, int]:
    """Cause of each unmatched gold record (see the module doc) and the spurious predictions."""
    from scipy.optimize import linear_sum_assignment

    def rows(rec):
        return [at[x] for x in rec if x in at]

    prow = [rows(p) for p in pred]
    grow = [rows(g) for g in gold]
    sim = np.zeros((len(pred), len(gold)))
    for i, p in enumerate(pred):
        for j, g in enumerate(gold):
            inter = len(set(p) & set(g))
            if inter:
                sim[i, j] = inter / len(set(p) | set(g))
    matched = set()
    if len(pred) and len(gold):
        r, c = linear_sum_assignment(sim, maximize=True)
        matched = {j for i, j in zip(r, c) if sim[i, j] > 0}

    def inside(a: int, b: int) -> bool:  # row a in b's subtree
        return b <= a <= last[b]

    def touch(pr: list[int], gr: list[int]) -> bool:
        return any(inside(a, b) or inside(b, a) for a in pr for b in gr)

    out: Counter = Counter()
    for j, gr in enumerate(grow):
        if j in matched:
            out["matched"] += 1
            continue
        if not gr:
            out["hidden"] += 1
            continue
        near = [i for i, pr in enumerate(prow) if pr and touch(pr, gr)]
        if any(len(prow[i]) == 1 and len(gr) == 1 and prow[i][0] != gr[0]
               and (inside(prow[i][0], gr[0]) or inside(gr[0], prow[i][0]))
               and chars[prow[i][0]] == chars[gr[0]] for i in near):
            out["level"] += 1
        elif any(any(inside(b, a) and b != a for a in prow[i] for b in gr)
                 and sum(1 for g2 in grow if g2 and any(inside(b, a) for a in prow[i] for b in g2)) >= 2
                 for i in near):
            out["merged"] += 1
        elif sum(1 for i in near if all(any(inside(a, b) for b in gr) for a in prow[i])) >= 2:
            out["split"] += 1
        elif any(sim[i, j] > 0 for i in range(len(pred))):
            out["taken"] += 1
        elif near:
            out["nested"] += 1
        else:
            out["missed"] += 1
    gall = [b for gr in grow for b in gr]
    spurious = sum(1 for pr in prow if pr and not touch(pr, gall))
    return out, spurious


def run(dataset: Path, pred_dir: Path | None, use_gold: bool = False,
        options: GroupingOptions | None = None) -> tuple[dict, list[dict]]:
    rows_out, scores, collapsed, ms, paper = [], [], [], [], []
    y_true, y_pred = [], []
    total: Counter = Counter()
    zero: Counter = Counter()
    for page in Dataset(dataset).pages():
        records = page.read_records()
        if records is None:
            continue
        walk, html = walk_of(page, keep_tree=True), page.read_html()
        keys = text_xpaths(walk.root)
        gold_labels = np.asarray(page_labels(walk, page.read_gold(), html=html, records=records), dtype=object)
        proba = None  # the gold labels have no probabilities: every region counts as sure
        if use_gold:
            labels = gold_labels
        else:
            f = pred_dir / f"{page.id}.npz"
            if not f.is_file():
                continue
            z = np.load(f)
            labels = z["labels"].astype(object)
            if "proba" in z and not np.isnan(z["proba"]).all():
                proba = z["proba"]
        y_true.append(gold_labels)
        y_pred.append(labels)
        xp = row_xpaths(html, len(walk.rows))
        at = {x: i for i, x in enumerate(xp)}
        gold = [[normalize_xpath(x) for x in r] for r in records]
        t0 = time.perf_counter()
        pred = [r.xpaths for r in records_from_labels(walk, labels, xp, proba, options=options)]
        ms.append(1000 * (time.perf_counter() - t0))
        s = record_scores(pred, gold)
        paper.append(record_scores(pred, gold, keys))
        chars = walk.rows["chars"].to_numpy()
        parent = walk.rows["parent"].to_numpy()
        top = chain_top(chars, parent)
        sc = record_scores(collapse(pred, at, top, xp), collapse(gold, at, top, xp))
        c, spurious = causes(pred, gold, at, np.asarray(walk.last), chars)
        scores.append(s)
        collapsed.append(sc)
        total.update(c)
        total["spurious"] += spurious
        row = {"page": page.id, "record_f1": round(s["record_f1"], 4), "collapsed_f1": round(sc["record_f1"], 4),
               "paper_f1": round(paper[-1]["record_f1"], 4),
               "records": s["records"], "gold_records": s["gold_records"], "matched": s["matched"],
               "spurious": spurious, **{k: c.get(k, 0) for k in CAUSES}}
        if s["record_f1"] == 0:
            lost = {k: c.get(k, 0) for k in CAUSES}
            cause = max(lost, key=lost.get) if any(lost.values()) else "spurious"
            zero[cause] += 1
            row["zero_cause"] = cause
        rows_out.append(row)
    folds: dict[int, list[float]] = {}
    fold_nodes: dict[int, tuple[list, list]] = {}  # each fold's gold and predicted node labels
    meta = pred_dir / "meta.json" if pred_dir is not None else None
    if meta is not None and meta.is_file():
        fold_of = json.loads(meta.read_text(encoding="utf-8"))["pages"]
        for row, s, t, p in zip(rows_out, scores, y_true, y_pred):
            f = fold_of.get(row["page"], -1)
            folds.setdefault(f, []).append(s["record_f1"])
            fold_nodes.setdefault(f, ([], []))[0].append(t)
            fold_nodes[f][1].append(p)
    node = node_scores(np.concatenate(y_true), np.concatenate(y_pred)) if y_true else {}
    summary = {"record": mean_record_scores(scores),
               "paper_record": mean_record_scores(paper),
               "content_f1": node.get("content_f1"), "node_f1": node.get("f1"),
               "grouping_ms": {"median": float(np.median(ms)), "mean": float(np.mean(ms)),
                               "max": float(np.max(ms))} if ms else {},
               "record_f1_per_fold": [round(float(np.mean(v)), 4) for _, v in sorted(folds.items())],
               "content_f1_per_fold": [round(node_scores(np.concatenate(t), np.concatenate(p))["content_f1"], 4)
                                       for _, (t, p) in sorted(fold_nodes.items())],
               "chain_collapsed_record_f1": mean_record_scores(collapsed).get("record_f1"),
               "gold_records_by_fate": dict(total),
               "zero_pages": sum(zero.values()), "zero_pages_by_cause": dict(zero)}
    return summary, rows_out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path, nargs="?")
    ap.add_argument("--gold", action="store_true", help="group the gold labels instead (the ceiling)")
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a grouping knob (extractors.records.GroupingOptions; JSON value), e.g. snap=false")
    a = ap.parse_args()
    try:
        options = GroupingOptions.from_dict({k: json.loads(v) for k, v in (o.split("=", 1) for o in a.option)})
    except ValueError as e:
        ap.error(str(e))
    if a.pred is None and not a.gold:
        ap.error("give PRED_DIR or --gold")
    summary, rows = run(a.dataset, a.pred, a.gold, options)
    print(json.dumps(summary, indent=1))
    if a.csv:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with a.csv.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
