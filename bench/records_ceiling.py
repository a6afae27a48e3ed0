"""The record grouping's ceiling: records grouped from the *gold* node labels, scored against the
gold records (``training.record_metrics``: ``record_*`` the paper's way, records expanded to their
text XPaths; ``element_record_*`` over the records' own XPaths), on every page of a dataset with
records; MDR beside it.

What it shows: how much of the record metric the grouping itself loses (gold records nested in
other gold records, records the page hides, records made of several parts), apart from any
labelling error; the records the page hides alike to the grouped ones join them, as in
``hwnoise evaluate`` (``records.with_hidden``); and (``gold_each_record_once``) what the gold
scores against itself when every record is named once: some pages' gold lists a record twice, as
an element and as its only child, which the paper's metric expands to the same text, so an answer
that names it once loses there.
Usage::

    python bench/records_ceiling.py DATASET
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.mdr import MDR
from hwnoise.extractors.records import records_from_labels, walk_xpaths, with_hidden
from hwnoise.features.labels import page_labels
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.training.record_metrics import expand_records, mean_record_scores, page_record_scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    a = ap.parse_args()
    grouped, mdr, once = [], [], []
    twice = 0
    for page in Dataset(a.dataset).pages():
        records = page.read_records()
        if records is None:
            continue
        walk, html = walk_of(page, keep_tree=True), page.read_html()
        labels = page_labels(walk, page.read_gold(), html=html, records=records)
        xp, keys = walk_xpaths(walk, text_keys=True)
        gold = [[normalize_xpath(x) for x in r] for r in records]
        recs = with_hidden(records_from_labels(walk, labels, xp), walk.root, walk.elements, xp)  # as evaluate
        grouped.append(page_record_scores([r.xpaths for r in recs], gold, keys))
        mdr.append(page_record_scores(MDR().records(page, walk), gold, keys))
        firsts = {}
        for g, e in zip(gold, expand_records(gold, keys)):
            firsts.setdefault(e, g)
        twice += len(firsts) < len(gold)
        once.append(page_record_scores(list(firsts.values()), gold, keys))
    print(json.dumps({"grouped_from_gold_labels": mean_record_scores(grouped),
                      "mdr": mean_record_scores(mdr),
                      "gold_each_record_once": {**mean_record_scores(once), "pages_with_a_record_twice": twice}},
                     indent=1))


if __name__ == "__main__":
    main()
