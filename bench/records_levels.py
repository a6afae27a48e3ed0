"""Which element of a single-child chain does the gold name as the record? A rule check.

A gold record's *chain* is the element the gold names with its ancestors and descendants that
hold exactly its text (``li > div > a`` where the ``div`` holds all of the ``li``'s text and the
``a`` all of the ``div``'s). On such a chain the record's text is the same whichever element is
called the record, but the record metric gives 0 to a record one level off. For every gold
record of one XPath whose chain has more than one element, each rule below picks one element of
the chain from the page's structure alone, and the script counts how often it is the gold's:

- ``outer`` / ``inner``: the chain's top / bottom;
- ``rep_outer`` / ``rep_inner``: the outermost / innermost element of the chain that is a member
  of a group of alike siblings (``features.record_struct``: >= 3 same-tag siblings whose
  subtree tag strings are alike), else the chain's top;
- ``tag_outer``: the outermost element of the chain with >= 2 same-tag siblings, else the top;
- ``article``: ``rep_outer``, or an ``<article>`` at or below it on the chain (the default of
  ``extractors.records.level``).

Printed per fold of the cross-site split (``hwnoise.evaluate.plan``, seed 1) and overall,
counted per record and per page (a page counts for the rule that gets most of its chain
records right). Usage::

    python bench/records_levels.py DATASET
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.evaluate import plan
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import chain_members, row_xpaths
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.features.record_struct import record_groups

RULES = ("outer", "inner", "rep_outer", "rep_inner", "tag_outer", "article")


def pick(chain: list[int], is_rec: np.ndarray, sametag: np.ndarray, tags: list[str]) -> dict[str, int]:
    """Each rule's choice on one chain (rows, outermost first)."""
    reps = [c for c in chain if is_rec[c]]
    tagged = [c for c in chain if sametag[c] >= 2]
    top = reps[0] if reps else chain[0]
    articles = [c for c in chain if c >= top and tags[c] == "article"]
    return {"outer": chain[0], "inner": chain[-1],
            "rep_outer": top, "rep_inner": reps[-1] if reps else chain[0],
            "tag_outer": tagged[0] if tagged else chain[0], "article": articles[0] if articles else top}


def page_counts(page) -> tuple[Counter, int]:
    """Per rule, the page's chain records it gets right, and the number of chain records."""
    records = page.read_records()
    walk, html = walk_of(page), page.read_html()
    xp = row_xpaths(html, len(walk.rows))
    at = {x: i for i, x in enumerate(xp)}
    parent = walk.rows["parent"].to_numpy(dtype=np.int64)
    chars = walk.rows["chars"].to_numpy()
    tags = walk.rows["tag"].tolist()
    last = np.asarray(walk.last, dtype=np.int64)
    gid, is_rec = record_groups(parent, tags, last)
    sametag = np.bincount(gid)[gid] - 1
    right: Counter = Counter()
    n = 0
    for rec in records:
        if len(rec) != 1 or normalize_xpath(rec[0]) not in at:
            continue
        g = at[normalize_xpath(rec[0])]
        chain = chain_members(g, parent, chars, last)
        if len(chain) < 2:
            continue
        n += 1
        for rule, c in pick(chain, is_rec, sametag, tags).items():
            right[rule] += int(c == g)
    return right, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    a = ap.parse_args()
    ds = Dataset(a.dataset)
    folds, _ = plan([ds], "cross-site", False, seed=1, k=5)
    fold_of = {pid: f.index for f in folds for _, pid in f.test}
    per_fold: dict[int, Counter] = {}
    for page in ds.pages():
        if page.read_records() is None:
            continue
        right, n = page_counts(page)
        c = per_fold.setdefault(fold_of.get(page.id, -1), Counter())
        c["records"] += n
        for r in RULES:
            c[r] += right[r]
        if n:
            c["pages"] += 1
            best = max(right[r] for r in RULES)
            for r in RULES:
                c["pages_" + r] += int(right[r] * 2 > n)  # the rule gets most of the page's chains
            c["pages_any"] += int(best * 2 > n)
    total: Counter = sum(per_fold.values(), Counter())
    out = {f"fold{k + 1}": dict(v) for k, v in sorted(per_fold.items())}
    out["all"] = dict(total)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
