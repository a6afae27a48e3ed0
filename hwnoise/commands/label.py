"""``hwnoise label``: node labels for a crawl without gold (automatic, or by a person in a browser)."""
from __future__ import annotations

import argparse
import errno

from hwnoise.commands._types import number, port
from hwnoise.errors import HwnoiseError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "label", help="label a dataset's nodes without gold: --auto from the site's own evidence, "
                      "--serve a labelling page in the browser",
        description=(
            "Write DATASET/labels.parquet, one row per page and node (label S/N, source, "
            "confidence, set_by auto|person, time). --auto combines the site's own evidence "
            "(SiteLevel template repetition, the domain query, CETD density, repeated records, the "
            "site's templated phrases, the "
            "installed extractors, the shipped general model) and keeps every label a person set. "
            "--serve shows the pages on 127.0.0.1 with the labels drawn over them; a click toggles "
            "a node. 'hwnoise features' and 'hwnoise train' use these labels where a page has no "
            "gold (gold > person > auto)."
        ),
    )
    p.add_argument("dataset", metavar="DATASET", help="a dataset folder")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--auto", action="store_true", help="label every node automatically")
    mode.add_argument("--serve", action="store_true", help="serve the labelling page")
    p.add_argument("--no-general", action="store_true",
                   help="--auto: leave the shipped general model out")
    p.add_argument("--extractors", default=None, metavar="A,B",
                   help="--auto: external extractors to ask (default: every installed one; '' none)")
    p.add_argument("--weights", default=None, metavar="FILE.json",
                   help="--auto: combination weights {bias, weights: {source: w}} (default: shipped)")
    p.add_argument("--refine", type=number(int, 0, "give 0 or more rounds"), default=None, metavar="N",
                   help="--auto: N Dawid-Skene rounds estimating each source's reliability on this "
                        "dataset (default 1, chosen by cross-site folds on big9 and the demo; 0: the "
                        "fitted vote alone)")
    p.add_argument("--fixed-prior", action="store_true",
                   help="--auto: keep the weights' share of content nodes (default: estimate this "
                        "dataset's own share from the votes by EM and move the vote to it)")
    p.add_argument("--port", type=port, default=0, help="--serve: port (default: a free one)")
    p.add_argument("--no-open", action="store_true", help="--serve: do not open a browser")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.dataset import Dataset, DatasetError
    from hwnoise.jsontext import read_json_file

    _check_modes(args)
    ds = Dataset(args.dataset)
    if args.auto:
        from hwnoise.labelling.auto import AutoOptions, auto_label, check_external, check_weights

        weights = None
        if args.weights:
            weights = read_json_file(args.weights, DatasetError)
            check_weights(weights, args.weights)
        ext = None if args.extractors is None else check_external(
            [x.strip() for x in args.extractors.split(",") if x.strip()])
        auto_label(ds, AutoOptions(general=not args.no_general, external=ext, weights=weights,
                                   refine=AutoOptions.refine if args.refine is None else args.refine,
                                   adapt_prior=not args.fixed_prior))
        return 0
    from hwnoise.labelling.serve import serve

    try:
        serve(ds, port=args.port, open_browser=not args.no_open)
    except OSError as exc:  # the port: taken, or not ours to bind
        if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise
        why = "is in use (another program, or another 'hwnoise label --serve')" \
            if exc.errno == errno.EADDRINUSE else "cannot be opened by this user"
        raise HwnoiseError(f"--port {args.port} {why}; give another port, or no --port for a free one") from None
    return 0


def _check_modes(args: argparse.Namespace) -> None:
    """An option of the other mode (--refine with --serve, --port with --auto) was dropped without
    a word: the labels were made, or the page served, as if it had not been given."""
    auto_only = [name for name, given in (("--no-general", args.no_general), ("--extractors", args.extractors is not None),
                                          ("--weights", args.weights is not None),
                                          ("--refine", args.refine is not None), ("--fixed-prior", args.fixed_prior))
                 if given]
    serve_only = [name for name, given in (("--port", args.port != 0), ("--no-open", args.no_open)) if given]
    if args.serve and auto_only:
        raise HwnoiseError(f"{', '.join(auto_only)}: {'goes' if len(auto_only) == 1 else 'go'} with --auto "
                           "(how the automatic labels are made), not with --serve")
    if args.auto and serve_only:
        raise HwnoiseError(f"{', '.join(serve_only)}: {'goes' if len(serve_only) == 1 else 'go'} with --serve "
                           "(the labelling page), not with --auto")
