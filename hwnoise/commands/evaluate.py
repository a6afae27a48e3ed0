"""``hwnoise evaluate``: every method on the same test pages; report.json, report.md, figures."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate", help="compare the learned model, CETD and other extractors on the same pages",
        description=(
            "Split each dataset's pages by the protocol, train the learned model on the training "
            "pages only, and score every method on the same test pages: at node level where it "
            "labels nodes, at text level (LCS over words) where gold text exists, by value recall "
            "on SWDE. With --model, that model is scored on every page instead. Writes "
            "report.json, report.md, pages.csv and PNG figures to --out."
        ),
    )
    p.add_argument("datasets", nargs="+", metavar="DATASET", help="dataset folders")
    p.add_argument("--methods", default="model,cetd",
                   help="comma-separated methods (default model,cetd); e.g. "
                        "model,cetd,trafilatura,readability,justext,resiliparse,alltext")
    p.add_argument("--protocol", default="pages", choices=["pages", "thesis", "cv", "cross-site"],
                   help="how pages are split (default pages: 66%% of each dataset's pages train)")
    p.add_argument("--model", help="score this saved model on every page instead of training")
    p.add_argument("--allow-pickle", action="store_true", help="allow a pickled --model you trust")
    p.add_argument("--classifier", default=None, help="classifier of the learned model (default j48)")
    p.add_argument("--features", default=None,
                   help="features of the learned model: thesis (the five, default), extended, all, "
                        "or comma-separated columns")
    p.add_argument("--stack", default=None, metavar="EXTRACTOR,...",
                   help="add, as features of the learned model, the share of each node's words that "
                        "these extractors keep (stacking; e.g. trafilatura,resiliparse)")
    p.add_argument("--context", action="store_true",
                   help="add each node's parent's and grandparent's link density, CTD, sitelevel, "
                        "sibling share, characters (and stacked shares) as features")
    p.add_argument("--score-only", default=None, metavar="NAME,...",
                   help="score only these datasets' pages; the others only serve as training pages")
    p.add_argument("--folds", "-k", type=int, default=5, help="folds of cv and cross-site (default 5)")
    p.add_argument("--seed", type=int, default=1, help="seed of the split (default 1)")
    p.add_argument("--out", "-o", default="hwnoise-evaluation", help="output folder")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.evaluate import evaluate
    from hwnoise.progress import info
    from hwnoise.report import summary_table

    options: dict[str, dict] = {}
    if args.classifier:
        options.setdefault("model", {})["classifier"] = args.classifier
    if args.features:
        options.setdefault("model", {})["features"] = args.features  # thesis|extended|all|a,b,c
    if args.stack:
        options.setdefault("model", {})["stack"] = args.stack
    if args.context:
        options.setdefault("model", {})["context"] = True
    report = evaluate(args.datasets, methods=args.methods.split(","), protocol=args.protocol,
                      seed=args.seed, out=args.out, model=args.model, k=args.folds,
                      method_options=options, allow_pickle=args.allow_pickle,
                      figures=not args.no_figures,
                      score_only=args.score_only.split(",") if args.score_only else None)
    print(summary_table(report))
    info(f"report.json, report.md, pages.csv and figures in {args.out}")
    return 0
