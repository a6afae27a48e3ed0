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
    p.add_argument("--page-context", action="store_true",
                   help="add record-structure, position, per-page z-score and class/id features "
                        "(hwnoise.features.context.CONTEXT_FEATURES) to the learned model")
    p.add_argument("--method-option", action="append", default=[], metavar="NAME.KEY=VALUE",
                   help="an option of a method, repeatable (e.g. webstemmer.t=0.8, isotonic.c=0.1, "
                        "model.threshold=0.4); VALUE is read as JSON when it parses, else as a string")
    p.add_argument("--score-only", default=None, metavar="NAME,...",
                   help="score only these datasets' pages; the others only serve as training pages")
    p.add_argument("--folds", "-k", type=int, default=5, help="folds of cv and cross-site (default 5)")
    p.add_argument("--seed", type=int, default=1, help="seed of the split (default 1)")
    p.add_argument("--out", "-o", default="hwnoise-evaluation", help="output folder")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    from hwnoise.scheduler import add_argument

    add_argument(p, "the fits (one per fold) and the scoring (page batches)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes or threads with --scheduler local|threads (default: this machine's cores)")
    p.set_defaults(func=run)


def parse_method_options(items: list[str] | None) -> dict[str, dict]:
    """``["NAME.KEY=VALUE", ...]`` as ``{NAME: {KEY: value}}``; a VALUE that parses as JSON
    (numbers, true/false/null, lists, quoted strings) is taken as such, else as the string."""
    import json

    from hwnoise.errors import HwnoiseError

    out: dict[str, dict] = {}
    for item in items or []:
        lhs, eq, raw = item.partition("=")
        name, dot, key = lhs.strip().partition(".")
        if not eq or not dot or not name or not key:
            raise HwnoiseError(f"--method-option {item!r}: expected NAME.KEY=VALUE (e.g. webstemmer.t=0.8)")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        out.setdefault(name, {})[key.strip()] = value
    return out


def run(args: argparse.Namespace) -> int:
    from hwnoise.evaluate import evaluate
    from hwnoise.outputs import check_out_dir
    from hwnoise.progress import info
    from hwnoise.report import summary_table

    options: dict[str, dict] = {}
    given = parse_method_options(getattr(args, "method_option", None))
    if args.classifier:
        options.setdefault("model", {})["classifier"] = args.classifier
    if args.features:
        options.setdefault("model", {})["features"] = args.features  # thesis|extended|all|a,b,c
    if args.stack:
        options.setdefault("model", {})["stack"] = args.stack
    if args.context:
        options.setdefault("model", {})["context"] = True
    if getattr(args, "page_context", False):
        options.setdefault("model", {})["page_context"] = True
    check_out_dir(args.out, "-o/--out")
    methods = [m for m in args.methods.split(",") if m]
    unused = sorted(set(given) - set(methods))
    if unused:
        from hwnoise.errors import HwnoiseError

        raise HwnoiseError(f"--method-option names {', '.join(unused)}, not among --methods {args.methods}")
    for name, opts in given.items():  # explicit --method-option wins over the shorthands
        options.setdefault(name, {}).update(opts)
    report = evaluate(args.datasets, methods=args.methods.split(","), protocol=args.protocol,
                      seed=args.seed, out=args.out, model=args.model, k=args.folds,
                      method_options=options, allow_pickle=args.allow_pickle,
                      figures=not args.no_figures,
                      score_only=args.score_only.split(",") if args.score_only else None,
                      scheduler=getattr(args, "scheduler", "local"), workers=getattr(args, "workers", None))
    print(summary_table(report))
    info(f"{', '.join(report.get('outputs', []))} in {args.out}")
    return 0
