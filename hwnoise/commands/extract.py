"""``hwnoise extract``: the content text of one page, by a trained model."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract", help="print the content text of a page, by a trained model",
        description=(
            "Walk PAGE.html, label each node noise or content with the model that 'hwnoise train' "
            "saved, and print the own text of the content nodes in document order. The model's "
            "domain query is used unless --query is given."
        ),
    )
    p.add_argument("page", metavar="PAGE.html", help="the page (its bytes as received); '-' reads stdin")
    p.add_argument("--model", "-m", required=True, help="the model file or the folder 'hwnoise train --out' wrote")
    p.add_argument("--query", help="the query that led to this page (replaces the model's domain query)")
    p.add_argument("--charset", help="the charset the server declared (as the HTTP header would)")
    p.add_argument("--allow-pickle", action="store_true",
                   help="allow loading a pickled model (only for model files you trust)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hwnoise.errors import HwnoiseError
    from hwnoise.extractors.model import extract_with_model, load_model

    if args.page == "-":
        data = sys.stdin.buffer.read()
    else:
        path = Path(args.page)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise HwnoiseError(f"{path}: cannot read the page: {exc.strerror}") from None
    from hwnoise.decode import looks_like_html

    if not looks_like_html(data):
        raise HwnoiseError(f"{args.page if args.page != '-' else 'stdin'}: not HTML (its bytes are "
                           "not a web page's, whatever its name); give the page's HTML")
    model = load_model(args.model, allow_pickle=args.allow_pickle)
    text = extract_with_model(model, data, http_charset=args.charset, query=args.query)
    sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))
    return 0
