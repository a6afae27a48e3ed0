"""What the hidden records add: each page's records scored with and without the records the
page hides (``extractors.records.with_hidden``), on a cached cross-site run.

    python bench/records_predict.py DATASET PRED --preset records      # the records each fold's model grouped
    python bench/records_hidden.py DATASET PRED --out DIR
    python bench/paired.py DIR/shown DIR/hidden --metric record_f1 element_record_f1

PRED holds ``PAGE.records.json`` (the rows of the records ``hwnoise evaluate`` scores, grouped
by a model that did not see the page) and ``PAGE.npz`` (its labels). For every page with gold
records, the records are scored as ``hwnoise evaluate`` scores them (the paper's metric and the
element metric) twice: as grouped (``DIR/shown/pages.csv``) and with the hidden records alike
to them (``DIR/hidden/pages.csv``); ``bench/paired.py`` compares the two page by page. Printed:
both means and every page that moved, with the hidden records it gained.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.records import records_from_labels, walk_xpaths, with_hidden
from hwnoise.features.record_gold import normalize_xpath
from hwnoise.training.record_metrics import page_record_scores


def page_rows(page, pred: Path) -> tuple[dict, dict, int] | None:
    """One page's scores without and with the hidden records, and how many it gained."""
    rec_file = pred / f"{page.id}.records.json"
    gold = page.read_records()
    if gold is None or not rec_file.is_file():
        return None
    walk = walk_of(page, keep_tree=True)
    xpaths, keys = walk_xpaths(walk, text_keys=True)
    labels = np.load(pred / f"{page.id}.npz", allow_pickle=False)["labels"].astype(object)
    rows = json.loads(rec_file.read_text(encoding="utf-8"))
    shown = records_from_labels(walk, labels, xpaths, records=rows)
    both = with_hidden(shown, walk.root, walk.elements, xpaths)
    gold = [[normalize_xpath(x) for x in rec] for rec in gold]
    return (page_record_scores([r.xpaths for r in shown], gold, keys),
            page_record_scores([r.xpaths for r in both], gold, keys), len(both) - len(shown))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path)
    ap.add_argument("--out", "-o", type=Path, required=True)
    a = ap.parse_args(argv)
    ds = Dataset(a.dataset)
    before, after = [], []
    for page in ds.pages():
        got = page_rows(page, a.pred)
        if got is None:
            continue
        key = {"dataset": ds.name, "method": "model", "page": page.id}
        before.append({**key, **got[0]})
        after.append({**key, **got[1]})
        if got[2]:
            print(f"{page.id}: record F1 {got[0]['record_f1']:.3f} -> {got[1]['record_f1']:.3f} "
                  f"(+{got[2]} hidden records)")
    if not before:
        raise SystemExit(f"records_hidden: no page of {a.dataset} has gold records and {a.pred}/PAGE.records.json")
    for name, rows in (("shown", before), ("hidden", after)):
        (a.out / name).mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(rows)
        frame.to_csv(a.out / name / "pages.csv", index=False)
        print(f"{name}: record F1 {frame['record_f1'].mean():.4f}, element record F1 "
              f"{frame['element_record_f1'].mean():.4f} over {len(frame)} pages -> {a.out / name / 'pages.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
