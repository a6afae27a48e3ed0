"""Fit the region scorer (``extractors.regions.RegionScorer``) and put it in a model file: the
shipped ``records`` model carries the one built on NEXT-EVAL's 100 pages.

    python bench/build_regions.py DATASET PRED_DIR [--model data/models/records.json] [--cache FILE]
        [--mode rest|add|alone] [--metric paper|element]

PRED_DIR is a cached cross-site run of the model's preset on DATASET with the model's own labels
(``bench/records_predict.py DATASET PRED_DIR --preset records --content-from nodes``): every
page's labels and probabilities from a model that did not see it, as a new page's are. The
candidates and their targets are ``bench/records_ranker.py``'s; the threshold (and in mode
``rest`` the veto) is the one with the best record F1 + node content F1 over the run's folds
(each page scored by a scorer fitted without its fold; its records the labels' grouping
joined with the kept candidates by ``--mode``, ``extractors.regions.combine_regions``; record
F1 by ``--metric``, the paper's by default), and
the scorer written is fitted on every page. The file keeps its model; its ``regions`` key is replaced.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from records_ranker import load_items  # noqa: E402

from hwnoise.dataset import atomic_write_text  # noqa: E402
from hwnoise.extractors.region_fit import METRICS, fit_scorer  # noqa: E402
from hwnoise.extractors.regions import REGION_MODES  # noqa: E402
from hwnoise.progress import info  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("pred", type=Path)
    ap.add_argument("--model", type=Path, default=HERE.parent / "data" / "models" / "records.json")
    ap.add_argument("--cache", type=Path, default=None, help="pickle of the pages' candidates (made if absent)")
    ap.add_argument("--mode", choices=REGION_MODES, default="rest",
                    help="how the scorer's regions meet the labels' records (default rest: see README 'Records')")
    ap.add_argument("--metric", choices=METRICS, default="paper")
    a = ap.parse_args(argv)
    meta = json.loads((a.pred / "meta.json").read_text(encoding="utf-8"))
    items = load_items(a.dataset, a.pred, a.cache)
    if not items:
        raise SystemExit(f"{a.dataset}: no page with gold records and a cached prediction in {a.pred}")
    digest = hashlib.sha256()
    for it in sorted(items, key=lambda it: it.page):
        digest.update(it.page.encode() + b"\0" + json.dumps(it.gold).encode())
    fold_of = meta["pages"]
    scorer = fit_scorer(items, a.mode, fold_of=fold_of, metric=a.metric, info={
        "gold_hash": "sha256:" + digest.hexdigest(), "pred_run": meta.get("options"),
        "note": "threshold_choice: without and with the scorer, every page scored out of fold at the "
                "threshold chosen on these same figures (not held out; bench/records_ranker.py gives "
                "the held-out ones)",
        "command": "python bench/build_regions.py " + " ".join(sys.argv[1:] if argv is None else argv)})
    if scorer is None:
        raise SystemExit("build_regions: nothing to fit (no page with both kinds of candidates)")
    doc = json.loads(a.model.read_text(encoding="utf-8"))
    doc["regions"] = scorer.to_dict()
    if isinstance(doc.get("spec"), dict):
        doc["spec"]["regions"] = a.mode  # the spec says what the file carries
    atomic_write_text(a.model, json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    rec, con = (scorer.info["threshold_choice"][k] for k in ("record_f1", "content_f1"))
    info(f"build_regions: mode {a.mode}, threshold {scorer.threshold:.2f}, veto {scorer.veto:.2f}; "
         f"out of fold, record F1 {rec[0]:.3f} -> {rec[1]:.3f}, content F1 {con[0]:.3f} -> {con[1]:.3f}; "
         f"wrote {a.model} "
         f"({a.model.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
