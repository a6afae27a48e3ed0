"""``hwnoise train``: fit a noise model (J48's C4.5 by default) and score it with a protocol."""
from __future__ import annotations

import argparse
import json


def _param(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"--param wants KEY=VALUE, not {text!r}")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="train a noise model on dataset folders or an ARFF file and score it",
        description=(
            "Fit a classifier on every labelled node of the datasets given (or of one ARFF file) "
            "and print its tree, as J48 prints the tree trained on all the data. The scores come "
            "from the protocol's own splits: thesis (pooled random 66%% node split, as seed 003), "
            "pages (66%% of the pages train, the default), cv (k folds grouped by page), cross-site "
            "(k folds grouped by site); or from --test TEST.arff, as Weka's -t/-T. Per dataset it "
            "prints the confusion matrix (RR, RC, CC, CR) and the weighted precision, recall and F1. "
            "With --out it writes model.json + model.joblib, train.arff, report.json and report.md."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="DATASET|FILE.arff",
                   help="dataset folders (their features.parquet is computed when missing) or one ARFF file")
    p.add_argument("--protocol", default=None, choices=["thesis", "pages", "cv", "cross-site", "weka-cv"],
                   help="how to split for scoring (default pages; on an ARFF file without a page "
                        "attribute, weka-cv: J48 -t's stratified 10-fold cross-validation, printed "
                        "as Weka prints it)")
    p.add_argument("--classifier", default="j48",
                   help="j48 (default, Weka J48's C4.5), j48-unpruned, cart, rf, gb, logreg, or a "
                        "dotted scikit-learn class such as sklearn.ensemble.ExtraTreesClassifier")
    p.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=VALUE",
                   help="a classifier parameter, e.g. --param confidence=0.1 (repeatable)")
    p.add_argument("--features", default=None,
                   help="thesis (the five, default for datasets), extended, or a,b,c; an ARFF file "
                        "uses all its attributes but page and the class by default")
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
    p.add_argument("--workers", type=int, default=None,
                   help="processes or threads with --scheduler local|threads (default: this machine's cores)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.outputs import check_out_dir
    from hwnoise.progress import info
    from hwnoise.training.train import format_result, train

    if args.out:
        check_out_dir(args.out, "-o/--out")

    result = train(args.inputs, protocol=args.protocol, classifier=args.classifier,
                   features=args.features, test=args.test, seed=args.seed, out=args.out,
                   k=args.folds, params=dict(args.param) or None,
                   scheduler=getattr(args, "scheduler", "local"), workers=getattr(args, "workers", None))
    print(format_result(result, tree=not args.no_tree), end="")
    if args.out:
        info(f"model (model.json, model.joblib), train.arff, report.json and report.md in {args.out}")
    return 0
