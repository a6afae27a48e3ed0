"""``hwnoise train``: fit a noise model (a preset's spec) and score it with a protocol."""
from __future__ import annotations

import argparse

from hwnoise.commands._model_options import add_model_options, model_options
from hwnoise.commands._types import worker_count


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="train a noise model on dataset folders or an ARFF file and score it",
        description=(
            "Fit a model (by default the 'auto' preset: 'site' for one site's pages, 'general' for "
            "several, 'records' for several whose gold has data records; --preset thesis is seed 003's five features and J48) on the labelled nodes "
            "of the datasets given (or of one ARFF file) and print its tree. The scores come from "
            "the protocol's own splits: thesis (pooled random 66% node split, as seed 003), pages "
            "(66% of the pages train, the default), cv (k folds grouped by page), cross-site (k "
            "folds grouped by site); or from --test TEST.arff, as Weka's -t/-T. With the pages "
            "protocol the saved model is the one fitted on the training pages (so that 'hwnoise "
            "evaluate --model' scores it on the pages it never saw); --all-pages fits it on every "
            "page. With --out it writes model.json + model.joblib, train.arff, report.json and "
            "report.md."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="DATASET|FILE.arff",
                   help="dataset folders (their features.parquet is computed when missing) or one ARFF file")
    p.add_argument("--protocol", default=None, choices=["thesis", "pages", "cv", "cross-site", "weka-cv"],
                   help="how to split for scoring (default pages; on an ARFF file without a page "
                        "attribute, weka-cv: J48 -t's stratified 10-fold cross-validation, printed "
                        "as Weka prints it)")
    add_model_options(p)
    p.add_argument("--all-pages", action="store_true",
                   help="fit the saved model on every page (the scores still come from the protocol)")
    p.add_argument("--test", default=None, metavar="TEST.arff",
                   help="score the model trained on all of the input on this ARFF file (or dataset folder)")
    p.add_argument("--seed", type=int, default=1, help="seed of the splits and classifiers (default 1)")
    p.add_argument("-k", "--folds", type=int, default=None,
                   help="folds of cv and cross-site (default 5) and of weka-cv (default 10)")
    p.add_argument("--out", "-o", default=None, metavar="DIR",
                   help="write the model, ARFF and reports here (nothing is written without it)")
    p.add_argument("--no-tree", action="store_true", help="do not print the tree")
    from hwnoise.scheduler import add_argument

    add_argument(p, "the fits (all the data, and one per protocol split)")
    p.add_argument("--workers", type=worker_count, default=None,
                   help="processes or threads with --scheduler local|threads (default: this machine's cores)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.extractors.model import run_extractor
    from hwnoise.extractors.region_fit import model_region_scorer
    from hwnoise.outputs import check_out_dir
    from hwnoise.progress import info
    from hwnoise.training.train import TrainOptions, format_result, train

    if args.out:
        check_out_dir(args.out, "-o/--out")
    options = TrainOptions(protocol=args.protocol, test=args.test, seed=args.seed, out=args.out, k=args.folds,
                           all_pages=args.all_pages, progress=True, scheduler=getattr(args, "scheduler", "local"),
                           workers=getattr(args, "workers", None), stacker=run_extractor,
                           region_fitter=model_region_scorer)
    result = train(args.inputs, model_options(args), options)
    print(format_result(result, tree=not args.no_tree), end="")
    spec = result.get("spec")
    fitted = result.get("fitted_pages")
    if spec is not None:
        info(f"model: preset {spec.preset or 'custom'}, {spec.classifier}, {len(result['features'])} "
             "features" + (f", fitted on {fitted} pages" if fitted is not None else ""))
    if args.out:
        written = result.get("written") or "model (model.json, model.joblib), train.arff, report.json and report.md"
        info(f"{written} in {args.out}")
    return 0
