"""``hwnoise evaluate``: every method on the same test pages; report.json, report.md, figures."""
from __future__ import annotations

import argparse

from hwnoise.commands._model_options import add_model_options, model_options
from hwnoise.commands._types import worker_count


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
    p.add_argument("--model", help="score this saved model (a folder or model.json 'hwnoise train' "
                                   "wrote, or 'general' / 'records', the shipped models) on every page it was "
                                   "not trained on, instead of training one")
    p.add_argument("--allow-pickle", action="store_true", help="allow a pickled --model you trust")
    add_model_options(p)
    p.add_argument("--method-option", action="append", default=[], metavar="NAME.KEY=VALUE",
                   help="an option of a method, repeatable (e.g. webstemmer.t=0.8, isotonic.c=0.1, "
                        "model.threshold=0.4); VALUE is read as JSON when it parses, else as a string")
    p.add_argument("--score-only", default=None, metavar="NAME,...",
                   help="score only these datasets' pages; the others only serve as training pages")
    p.add_argument("--folds", "-k", type=int, default=None, help="folds of cv and cross-site (default 5)")
    p.add_argument("--seed", type=int, default=1, help="seed of the split (default 1)")
    p.add_argument("--out", "-o", default="hwnoise-evaluation",
                   help="output folder (default: ./hwnoise-evaluation)")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    from hwnoise.scheduler import add_argument

    add_argument(p, "the fits (one per fold) and the scoring (page batches)")
    p.add_argument("--workers", type=worker_count, default=None,
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
    opts = model_options(args)
    if not args.model:  # the learned model's spec: the preset (default auto) and fields over it
        opts["preset"] = opts["preset"] or "auto"
        options["model"] = opts
    elif any(v is not None for v in opts.values()):  # refused beside --model (evaluate names them)
        options["model"] = opts
    check_out_dir(args.out, "-o/--out")
    methods = [m for m in args.methods.split(",") if m]
    _refuse_folders_named_as_outputs(args.out, methods)
    unused = sorted(set(given) - set(methods))
    from hwnoise.errors import HwnoiseError

    if unused:
        raise HwnoiseError(f"--method-option names {', '.join(unused)}, not among --methods {args.methods}")
    if args.folds is not None and (args.model or args.protocol not in ("cv", "cross-site")):
        split = "--model, which is scored on every page it was not trained on," if args.model else \
            f"--protocol {args.protocol}"
        raise HwnoiseError(f"-k {args.folds} is the number of folds of cv and cross-site; {split} has none: "
                           "give --protocol cv or cross-site, or drop -k")
    for name, opts in given.items():  # explicit --method-option wins over the shorthands
        options.setdefault(name, {}).update(opts)
    report = evaluate(args.datasets, methods=args.methods.split(","), protocol=args.protocol,
                      seed=args.seed, out=args.out, model=args.model, k=5 if args.folds is None else args.folds,
                      method_options=options, allow_pickle=args.allow_pickle,
                      figures=not args.no_figures,
                      score_only=args.score_only.split(",") if args.score_only else None,
                      scheduler=getattr(args, "scheduler", "local"), workers=getattr(args, "workers", None))
    print(summary_table(report))
    info(f"{', '.join(report.get('outputs', []))} in {args.out}")
    return 0


def _refuse_folders_named_as_outputs(out: str, methods: list[str]) -> None:
    """One line before the work when a file the run writes is a folder in ``out`` (a
    ``report.json/`` made by hand or by another tool): found after every fit and score, the run's
    results were lost."""
    from pathlib import Path

    from hwnoise.errors import HwnoiseError
    from hwnoise.report import figure_names

    names = ["report.json", "report.md", "pages.csv", *figure_names(methods)]
    folders = [n for n in names if (Path(out) / n).is_dir()]
    if folders:
        raise HwnoiseError(f"-o/--out {out}: {', '.join(folders)} {'is a folder' if len(folders) == 1 else 'are folders'} "
                           "there, where the report is written; remove or rename it, or give another --out")
