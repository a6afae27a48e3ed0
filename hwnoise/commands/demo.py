"""``hwnoise demo``: the whole job on the built-in demo site."""
from __future__ import annotations

import argparse

from hwnoise.commands._types import number, port


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="run the whole job on the built-in demo hidden-web site",
        description=(
            "Start the demo hidden-web site on 127.0.0.1, submit its search form ~100 times over "
            "HTTP, build the domain query and the node features, export ARFF, train the C4.5 tree "
            "(J48) with the page-grouped and the thesis protocols, and print the tree, the confusion "
            "matrix and the weighted precision, recall and F1. Everything is written to --out."
        ),
    )
    p.add_argument("--out", "-o", default="hwnoise-demo", help="output folder (default: ./hwnoise-demo)")
    p.add_argument("--submissions", type=number(int, 2, "must be 2 or more (the pages protocol splits the pages)"),
                   default=100, help="form submissions to make (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the site's data and the splits (default 0)")
    p.add_argument("--classifier", default="j48", help="classifier name (default j48; see 'hwnoise train --help')")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument("--serve", action="store_true",
                   help="only serve the demo site on 127.0.0.1 until Ctrl-C, its form page's URL on stdout, "
                        "to try 'hwnoise collect --form URL' on it from another shell (the site of --seed)")
    p.add_argument("--port", type=port, default=0,
                   help="with --serve: the port (default: a free one)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.serve:
        from hwnoise.demo_site import serve

        serve(args.seed, port=args.port)
        return 0
    if args.port:
        from hwnoise.errors import ArgumentError

        raise ArgumentError("--port goes with --serve (the demo itself serves its site on a free port)")
    from hwnoise.demo import run_demo, summary_lines
    from hwnoise.outputs import check_out_dir
    from hwnoise.progress import info

    check_out_dir(args.out, "-o/--out")

    report = run_demo(args.out, submissions=args.submissions, seed=args.seed,
                      classifier=args.classifier, progress=not args.quiet)
    from hwnoise.report import summary_table

    info("")
    info("== hwnoise demo: node level (S = noise, N = content), model ==")
    for line in summary_lines(report):
        print(line)
    info("== text level on the same test pages (LCS over words), every method ==")
    print(summary_table({"results": [r for r in report["results"] if "text_f1" in r]}))
    for note in report.get("notes", []):
        info(f"note: {note}")
    info(f"done in {report['seconds']} s; pages, features, ARFF, model and report.json in {args.out}")
    return 0
