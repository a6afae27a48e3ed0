"""How far choosing data regions could go: record F1 if each page's records were one of its
groups of alike siblings, picked by an oracle that knows the gold.

    python bench/records_regions.py DATASET      # a dataset with gold records (NEXT-EVAL's)

The candidates are the record groups of ``features.record_struct.record_groups`` (at least 3
same-tag siblings whose subtree tag strings lie within a median normalised edit distance of
0.5: the ``rs_is_record`` rule). Each member is one record, named by its own XPath (the outer
level, as ``extractors.records`` names a record on a single-child chain) or by the innermost
element of its single-child chain that holds all its text (the inner level). Per page, the
oracle takes the best single group at either level, and a greedy set of groups (adding the group
that raises the page's record F1 most, while one does). Record F1 is the paper's metric
(``training.record_metrics``), averaged over pages; any method that chooses among these
candidates scores at most the oracle's figure.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import row_xpaths
from hwnoise.extractors.regions import innermost
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.features.record_struct import record_groups
from hwnoise.training.record_metrics import record_scores


def page_oracle(page) -> dict[str, float]:
    walk, html = walk_of(page), page.read_html()
    rows = walk.rows
    parent, chars = rows["parent"].to_numpy(), rows["chars"].to_numpy()
    xp = row_xpaths(html, len(rows))
    gold = [[normalize_xpath(x) for x in r] for r in page.read_records()]
    gid, is_rec = record_groups(parent, rows["tag"].tolist(), np.asarray(walk.last))
    inner = innermost(parent, chars)
    cands = []
    for g in np.unique(gid[is_rec]):
        members = np.flatnonzero(is_rec & (gid == g))
        cands.append([[xp[i]] for i in members])
        cands.append([[xp[inner[i]]] for i in members])

    def f1(recs: list) -> float:
        return record_scores(recs, gold)["record_f1"] if recs else 0.0

    outer = max((f1(c) for c in cands[0::2]), default=0.0)
    either = max((f1(c) for c in cands), default=0.0)
    chosen: list = []
    best = 0.0
    while True:
        scored = [(f1(chosen + c), k) for k, c in enumerate(cands) if c[0] not in chosen]
        if not scored or max(scored)[0] <= best:
            break
        best, k = max(scored)
        chosen += cands[k]
    return {"outer": outer, "either": either, "greedy": best, "candidates": len(cands) // 2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    a = ap.parse_args(argv)
    res = [page_oracle(p) for p in Dataset(a.dataset).pages() if p.records_path.exists()]
    if not res:
        raise SystemExit(f"{a.dataset}: no page has gold records (records/ID.json)")
    print(f"{a.dataset}: {len(res)} pages, candidate groups per page: median "
          f"{np.median([r['candidates'] for r in res]):.0f}")
    for key, what in (("outer", "best single group, outer level"),
                      ("either", "best single group, either level"),
                      ("greedy", "greedy set of groups, either level")):
        v = np.array([r[key] for r in res])
        print(f"  {what}: record F1 {v.mean():.3f} ({int((v >= 0.9).sum())} pages at 0.9 or more)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
