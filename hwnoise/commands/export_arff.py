"""``hwnoise export-arff``: a dataset's feature table as an ARFF file for Weka."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export-arff", help="write a dataset's node features as ARFF for Weka",
        description=(
            "Write the feature table of DATASET (computed first when missing) as an ARFF file Weka "
            "3.6 reads: the features (ctd, density_sum, query_score, matches, distance by default) "
            "and the class result {S,N} (S = noise, N = content; '?' for pages without gold). "
            "--page adds a first string attribute naming each row's page, which hwnoise's "
            "page-grouped protocols need and Weka users drop with its Remove filter."
        ),
    )
    p.add_argument("dataset", metavar="DATASET", help="a dataset folder")
    p.add_argument("-o", "--out", default=None, metavar="FILE", help="the ARFF file (default: stdout)")
    p.add_argument("--page", action="store_true", help="add the string attribute 'page' first")
    p.add_argument("--features", default=None, help="thesis (default), extended, or a,b,c")
    p.add_argument("--relation", default=None, help="the @relation name (default: the dataset's name)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.dataset import Dataset
    from hwnoise.features.assembly import check_table_columns, unknown_features
    from hwnoise.features.columns import LABEL
    from hwnoise.outputs import check_out_file
    from hwnoise.progress import info
    from hwnoise.training.arff import write_arff
    from hwnoise.training.model import check_features, resolve_features
    from hwnoise.training.train import load_inputs

    if args.out:
        check_out_file(args.out, "-o/--out")
    df, desc = load_inputs([args.dataset], features=args.features or "thesis")
    feats = resolve_features(args.features, list(df.columns))
    check_features(unknown_features(feats), df, ", ".join(desc["sources"]))  # an --features name first
    check_table_columns(Dataset(args.dataset), feats, list(df.columns))
    check_features(feats, df, ", ".join(desc["sources"]))
    relation = args.relation or "-".join(desc["names"]) or "hwnoise"
    write_arff(df, args.out, features=feats, page=args.page, relation=relation)
    if args.out:
        info(f"{len(df)} rows, {len(feats)} features -> {args.out}")
    if len(df) and not df[LABEL].isin(["S", "N"]).any():  # Weka has nothing to train on: said, not left to find
        info(f"hwnoise: export-arff: warning: none of the {len(df)} rows has a class (the dataset has no gold "
             f"and no labels): each is '?'; 'hwnoise label {args.dataset} --auto' labels a crawl without gold")
    return 0
