"""How good are ``hwnoise label --auto`` labels without gold? (issue 13)

For each dataset folder given (big9's 36 site-years, the demo site), bounded to --max-pages
pages each:

1. copy it without ``gold/`` and run ``auto_label`` (``--no-general``: the general model was
   trained on these pages) -> every source's verdict per node;
2. the gold-derived node labels of the same pages (``label_page``) give each source's node
   accuracy and the combination's;
3. the combination's weights are fitted by cross-site folds: for each site (big9's nine sites,
   the demo), a logistic model over the verdicts of the *other* sites' nodes;
4. with the fold's weights, the labels are rewritten, then ``hwnoise train D --out M`` (the
   default preset) and ``hwnoise evaluate D_WITH_GOLD --model M --methods model,trafilatura``:
   text F1 of the per-site model against the gold that was removed, beside trafilatura.

``--write-weights`` also fits the weights on every site and writes ``data/label_weights.json``
(what ``hwnoise label --auto`` ships). Output: a table on stdout, JSON with --out.

    nice -n 10 python bench/label_auto.py /tmp/b9/big9-* /tmp/demo/dataset --out /tmp/label-bench.json
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.features.labels import label_page
from hwnoise.labelling.auto import SOURCES, VETOES, AutoOptions, auto_label, recombine

HWNOISE = str(Path(sys.executable).with_name("hwnoise"))


def site_group(ds: Dataset) -> str:
    """big9-bbc-2009 -> bbc; anything else is its own group."""
    parts = ds.name.split("-")
    return parts[1] if parts[0] == "big9" and len(parts) >= 3 else ds.name


def nogold_copy(src: Path, work: Path, max_pages: int) -> Path:
    dst = work / src.name
    if (dst / "labels.parquet").exists():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    ds = Dataset(src)
    keep = [p.id for p in ds.pages()][:max_pages]
    (dst / "pages").mkdir(parents=True)
    (dst / "gold").mkdir()
    for name in ("dataset.json", "submissions.jsonl", "journal.jsonl", "query.json"):
        if (src / name).exists():
            shutil.copy2(src / name, dst / name)
    for pid in keep:
        shutil.copy2(src / "pages" / f"{pid}.html", dst / "pages" / f"{pid}.html")
    if (src / "probes.jsonl").exists():  # what the site shows for a search nothing matches
        shutil.copy2(src / "probes.jsonl", dst / "probes.jsonl")
        shutil.copytree(src / "probes", dst / "probes")
    return dst


def gold_labels(src: Path, page_ids: list[str]) -> pd.DataFrame:
    ds = Dataset(src)
    frames = []
    for page in ds.pages():
        if page.id not in page_ids:
            continue
        walk = walk_of(page)
        frames.append(pd.DataFrame({"page": page.id, "node": walk.rows["node"].to_numpy(),
                                    "gold": label_page(walk, page.read_gold())}))
    return pd.concat(frames, ignore_index=True)


def fit_weights(X: np.ndarray, y: np.ndarray, cols: list[str]) -> dict:
    lr = LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
    return {"bias": float(lr.intercept_[0]), "prior": float(np.mean(y)),
            "weights": {c[2:]: float(w) for c, w in zip(cols, lr.coef_[0])}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/label-bench-work"))
    ap.add_argument("--max-pages", type=int, default=100,
                    help="pages of each dataset at most (big9 site-years have 10, the demo 100)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--score-only", default=None, metavar="NAME,...",
                    help="train and score only these datasets (all still lend their nodes to the folds)")
    ap.add_argument("--preset", default=None,
                    help="hwnoise train --preset (default: train's own default)")
    ap.add_argument("--refine", type=int, default=1,
                    help="Dawid-Skene rounds (label --auto --refine; default 1, as the tool's)")
    ap.add_argument("--fixed-prior", action="store_true", help="as label --auto --fixed-prior")
    ap.add_argument("--min-confidence", type=float, default=0.0,
                    help="leave auto labels below this confidence out of training (an experiment; "
                         "hwnoise train has no such option)")
    ap.add_argument("--write-weights", type=Path, default=None, metavar="data/label_weights.json")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    tables, groups = {}, {}
    for src in args.datasets:
        dst = nogold_copy(src, args.work, args.max_pages)
        if not (dst / "labels.parquet").exists():
            auto_label(Dataset(dst), AutoOptions(general=False, progress=False))
        lab = Dataset(dst).read_labels()
        lab = lab[lab["set_by"] == "auto"]
        g = gold_labels(src, sorted(set(lab["page"])))
        tables[src] = lab.merge(g, on=["page", "node"], how="inner")
        groups[src] = site_group(Dataset(src))
    cols = [f"v_{s}" for s in SOURCES  # a veto is a rule, not a vote with a weight
            if s not in VETOES and any(f"v_{s}" in t.columns for t in tables.values())]
    for t in tables.values():
        for c in cols:
            if c not in t.columns:
                t[c] = 0.0
    # per-source node accuracy (a verdict of 0 counts as the source's default: noise)
    allrows = pd.concat(tables.values(), ignore_index=True)
    y_all = (allrows["gold"] == "N").to_numpy()
    acc = {c[2:]: float(((allrows[c].to_numpy() > 0) == y_all).mean()) for c in cols}
    fold_w, results = {}, []
    for grp in sorted(set(groups.values())):
        train = pd.concat([t for s, t in tables.items() if groups[s] != grp], ignore_index=True)
        fold_w[grp] = fit_weights(train[cols].to_numpy(float), train["gold"] == "N", cols)
    comb_ok = 0
    only = set(args.score_only.split(",")) if args.score_only else None
    for src, t in tables.items():
        if only and src.name not in only:
            continue
        w = fold_w[groups[src]]
        dst = args.work / src.name
        ds = Dataset(dst)
        table = recombine(ds.read_labels(), w, args.refine, not args.fixed_prior)
        if args.min_confidence:  # unlabelled rows are left out of training
            low = (table["set_by"] == "auto") & (table["confidence"] < args.min_confidence)
            table.loc[low, "label"] = None
        ds.write_labels(table)
        merged = table.merge(t[["page", "node", "gold"]], on=["page", "node"])
        ok = int((merged["label"] == merged["gold"]).sum())
        comb_ok += ok
        model_dir = args.work / f"{src.name}.model"
        ev_dir = args.work / f"{src.name}.eval"
        preset = ["--preset", args.preset] if args.preset else []
        shutil.rmtree(model_dir, ignore_errors=True)
        subprocess.run([HWNOISE, "train", str(dst), *preset, "--out", str(model_dir), "--no-tree"],
                       check=True, capture_output=True)
        # D_WITH_GOLD: D as training left it (labels, feature table with its dataset-level
        # sitelevel column) with the removed gold put back; scoring reads the gold only
        gold_dir = args.work / f"{src.name}.gold"
        shutil.rmtree(gold_dir, ignore_errors=True)
        shutil.copytree(dst, gold_dir)
        for pid in set(t["page"]):
            shutil.copy2(src / "gold" / f"{pid}.txt", gold_dir / "gold" / f"{pid}.txt")
        shutil.rmtree(ev_dir, ignore_errors=True)
        subprocess.run([HWNOISE, "evaluate", str(gold_dir), "--model", str(model_dir / "model.json"),
                        "--methods", "model,trafilatura", "--out", str(ev_dir), "--no-figures"],
                       check=True, capture_output=True)
        rep = json.loads((ev_dir / "report.json").read_text())
        f1 = {r["method"]: r.get("text_f1") for r in rep["results"]}
        results.append({"dataset": src.name, "site": groups[src], "pages": int(t["page"].nunique()),
                        "label_accuracy": ok / max(len(merged), 1),
                        "model_text_f1": f1.get("model"), "trafilatura_text_f1": f1.get("trafilatura")})
        r = results[-1]
        print(f"{r['dataset']:28s} pages {r['pages']:3d}  labels acc {r['label_accuracy']:.3f}  "
              f"model {r['model_text_f1']:.3f}  trafilatura {r['trafilatura_text_f1']:.3f}", flush=True)
    df = pd.DataFrame(results)
    summary = {"datasets": len(df), "mean_model_text_f1": float(df["model_text_f1"].mean()),
               "mean_trafilatura_text_f1": float(df["trafilatura_text_f1"].mean()),
               "combined_label_accuracy": comb_ok / max(sum(len(t) for s, t in tables.items()
                                                            if not only or s.name in only), 1),
               "source_accuracy": acc, "nodes": int(len(allrows)),
               "seconds": round(time.time() - t0, 1)}
    big9 = df[df["dataset"].str.startswith("big9-")]
    if len(big9):
        summary["big9_mean_model_text_f1"] = float(big9["model_text_f1"].mean())
        summary["big9_mean_trafilatura_text_f1"] = float(big9["trafilatura_text_f1"].mean())
    print(json.dumps(summary, indent=2))
    if args.write_weights:
        w = fit_weights(allrows[cols].to_numpy(float), y_all, cols)
        w["fitted_on"] = sorted(set(groups.values()))
        args.write_weights.write_text(json.dumps(w, indent=2) + "\n")
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "results": results,
                                        "fold_weights": fold_w}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
