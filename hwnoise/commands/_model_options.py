"""The model options ``hwnoise train`` and ``hwnoise evaluate`` share, from one parser helper.

``--preset`` picks a :class:`hwnoise.training.spec.ModelSpec` preset (auto: site for one site's
pages; for several, records when the gold has data records, else general); the other options
override single fields of it.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from hwnoise.training.spec import CONTENT_FROM, CUTS, PRESETS, REGION_MODES

#: ``auto`` and the spec's presets (``hwnoise.training.spec.PRESETS``)
PRESET_CHOICES = ("auto", *PRESETS)


def _param(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"--param wants KEY=VALUE, not {text!r}")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


def add_model_options(p: argparse.ArgumentParser) -> None:
    """Add --preset --classifier --param --features --stack --context --page-context --threshold
    --cut --content-from --union --union-gate --regions."""
    g = p.add_argument_group("model options (a preset, then single fields over it)")
    g.add_argument("--preset", choices=PRESET_CHOICES, default=None,
                   help="auto (default: 'site' when the training pages come from one site; from "
                        "several, 'records' when their gold has data records, else 'general'), "
                        "thesis (seed 003: the five features, J48), "
                        "site (extended features + trafilatura's verdict + parent context, J48), "
                        "general (page features + four stacked extractors + page context, gradient "
                        "boosting, threshold by inner CV, content added to trafilatura's), records "
                        "(general + the record-structure features, content from the records, no union)")
    g.add_argument("--classifier", default=None,
                   help="j48 (Weka J48's C4.5), j48-unpruned, cart, rf, gb, gb+rf (the mean of gb and a small "
                        "random forest), logreg, or a dotted "
                        "scikit-learn class such as sklearn.ensemble.ExtraTreesClassifier")
    g.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=VALUE",
                   help="a classifier parameter, e.g. --param confidence=0.1 (repeatable)")
    g.add_argument("--features", default=None,
                   help="thesis (the five), extended, page (extended without the dataset-level "
                        "sitelevel), all, rendered, or comma-separated columns")
    g.add_argument("--stack", default=None, metavar="EXTRACTOR,...",
                   help="add, as features, the share of each node's words that these extractors "
                        "keep (trafilatura, resiliparse, readability, justext, cetd); 'none' for none")
    g.add_argument("--context", action="store_const", const=True, default=None,
                   help="add each node's parent's and grandparent's link density, CTD, sitelevel, "
                        "sibling share, characters (and stacked shares)")
    g.add_argument("--page-context", action="store_const", const=True, default=None,
                   help="add record-structure, position, per-page z-score and class/id features")
    g.add_argument("--threshold", default=None, metavar="P|inner",
                   help="probability of content at which a node is content: a number in [0, 1], "
                        "or 'inner' (chosen by an inner CV on the training pages)")
    g.add_argument("--cut", choices=CUTS, default=None,
                   help="what --threshold is compared with: the probability of content (absolute, "
                        "the presets' default) or that probability over the highest of the node's "
                        "page (page: 0.25 keeps the nodes at least a quarter as likely as the page's "
                        "likeliest; with 'inner' the inner CV chooses that ratio)")
    g.add_argument("--content-from", choices=CONTENT_FROM, default=None,
                   help="a page's content: the nodes the classifier labels content (nodes), or the "
                        "nodes of the data records grouped from those labels, the labels kept on a "
                        "page without records (records; the records preset's default)")
    g.add_argument("--union", default=None, metavar="EXTRACTOR|none",
                   help="a stacked extractor whose nodes are content whatever the classifier says "
                        "(those it keeps at least half the words of): the model adds to its text "
                        "(the general preset's default: trafilatura); 'none' for the classifier alone")
    g.add_argument("--union-gate", default=None, metavar="SHARE,THRESHOLD|none",
                   help="on a page whose union extractor's nodes hold at least SHARE of its text (an "
                        "article to that extractor), the classifier adds only nodes it gives at least "
                        "THRESHOLD, e.g. 0.2,0.7 for crawls of articles (no preset has one: it costs "
                        "result pages); 'none' for no gate")
    g.add_argument("--regions", default=None, choices=(*REGION_MODES, "none"),
                   help="fit a region scorer of groups of alike siblings on the training pages whose "
                        "gold has records, and join its regions with the records grouped from the "
                        "labels: rest (its regions first; the records preset's default), add (only "
                        "where the labels found none), alone (its regions only); 'none' for no scorer")


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The model options given on the command line (the preset, and only the fields given)."""
    out: dict[str, Any] = {"preset": args.preset}
    if args.classifier:
        out["classifier"] = args.classifier
    if args.param:
        out["params"] = dict(args.param)
    if args.features:
        out["features"] = args.features
    if args.stack is not None:
        out["stack"] = [] if args.stack.strip().lower() in ("", "none") else \
            [s.strip() for s in args.stack.split(",") if s.strip()]
    if args.context is not None:
        out["context"] = True
    if args.page_context is not None:
        out["page_context"] = True
    if args.threshold is not None:
        from hwnoise.training.spec import check_threshold

        out["threshold"] = check_threshold(args.threshold, "--threshold")
    if getattr(args, "cut", None) is not None:
        out["cut"] = args.cut
    if args.content_from is not None:
        out["content_from"] = args.content_from
    if args.union is not None:
        out["union"] = None if args.union.strip().lower() in ("", "none") else args.union.strip()
    if args.union_gate is not None:
        gate = args.union_gate.strip().lower()
        out["union_gate"] = None if gate in ("", "none") else args.union_gate
    if args.regions is not None:
        out["regions"] = None if args.regions == "none" else args.regions
    return out
