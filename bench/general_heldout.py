"""The shipped ``general`` model's build, one source held out at a time: how it does on pages of
sites and crawls it never saw, beside trafilatura on the same pages (issue 12's check on
held-back pages of new sites, estimated on the shared data).

    python bench/general_heldout.py [--work /tmp/hwnoise-bench] [--pages-per-dataset 60]
                                    [--sources big9,cleaneval,...] [--csv pages.csv]
                                    [--thresholds 0.2,0.3,...] [--blend 0.6,0.7] [--union]
                                    [--title-query] [--union-gate S,T|none]
                                    [--gate share:0.2,chars:1500 --gate-thresholds 0.6,0.7]
                                    [--classifier gb+rf] [--param KEY=VALUE] [--cut absolute|page]
                                    [--threshold P|inner]
                                    [--score-pages 60]
                                    [--nested]                       # about 10 min on 2 cores
    python bench/general_heldout.py --from-csv pages.csv [--nested]  # the tables of an earlier run

The pages are ``bench/build_general.py``'s (the same seeded sample of each source, imported
and featurised into --work when missing). For each source S, the general preset is fitted on
the other sources' pages exactly as ``build_general.py`` fits the shipped model (threshold by
inner 3-fold CV grouped by site), and S's sampled pages are scored by ``hwnoise evaluate``'s own
page scorer (``score_batch``) with that model and with trafilatura: text F1 (LCS over words),
or value recall on SWDE. Prints a Markdown table: per held-out source, the mean over its pages
of each method, the pages where the model scores at least trafilatura's, and the mean over all
held-out pages. The options add variants scored from the same fitted models (``curve``): the
model at other thresholds, blends with trafilatura's verdict, the union with trafilatura's
nodes, and each page walked with its ``<title>``'s words as its query (README "Models": how the
general preset's union was chosen), and the union gated on article pages (``--gate``; the fitted
spec's own gate with ``--union-gate``; docs/models.md). ``--nested`` adds, for each held-out
source, the method chosen on the other sources (best mean) and its score there.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_general import SOURCES, gather  # noqa: E402
from compare import DEFAULT_DATA  # noqa: E402

from hwnoise.commands._model_options import _param  # noqa: E402
from hwnoise.evaluate import score_batch  # noqa: E402
from hwnoise.extractors.model import training_rows  # noqa: E402
from hwnoise.extractors.registry import get_method  # noqa: E402
from hwnoise.features.assembly import FeatureCache  # noqa: E402
from hwnoise.progress import info  # noqa: E402
from hwnoise.training.model import NoiseModel  # noqa: E402
from hwnoise.training.spec import CUTS, fit_spec, preset_spec, with_overrides  # noqa: E402


def curve(model, pages: list, src: str, thresholds: list[float | None], title_query: bool,
          blends: list[float] = (), union: bool = False, gates: list[tuple[str, float]] = (),
          gate_thresholds: list[float] = ()) -> list[dict]:
    """Each held-out page's score at each threshold (the model's probabilities computed once a
    page): rows of method ``model@T``; with ``title_query`` each page is walked with its
    ``<title>``'s words as its query (as a page found by a web search has its search terms).
    Each ``blends`` weight A adds ``blendA@T``: content where A x the model's probability +
    (1 - A) x trafilatura's verdict on the node (``stack_trafilatura``) is at least T; ``union``
    adds ``union@T``: content where the model's probability reaches T or trafilatura keeps at
    least half of the node's words. Each ``gates`` entry ``(kind, cut)`` with each of
    ``gate_thresholds`` H adds ``gate-KINDCUT-H@inner``: the union at the inner threshold, except
    on a page that looks like an article to trafilatura (kind ``share``: its kept nodes hold at
    least ``cut`` of the page's own characters; ``chars``: at least ``cut`` characters), where the
    model adds its nodes only at H (kinds ``sharenorec``, ``charsnorec``: only its nodes outside
    a record structure, ``ctx_in_record`` 0, need H; ``sharenolistNN``: only on a page where no
    record group holds NN % of the text or more, ``ctx_record_page_share``)."""
    from general_variants import title_terms

    from hwnoise.evaluate import is_value_gold, value_recall
    from hwnoise.extractors.base import text_from_labels, walk_of
    from hwnoise.extractors.model import run_extractor
    from hwnoise.features.assembly import FeatureCache, assemble_page, walk_nodes
    from hwnoise.features.columns import CONTENT, NOISE
    from hwnoise.text import text_scores

    cache = FeatureCache()
    out = []
    for page in pages:
        gold = page.read_gold()
        if gold is None:
            continue
        terms = title_terms(page.read_html(), page.http_charset) if title_query else None
        walk = walk_of(page, terms)
        # with a query of its own the page's stored rows (walked with the dataset's) do not apply
        rows = assemble_page(page, model.features, stacker=run_extractor, cache=None if title_query else cache,
                             walk=walk).rows
        at = walk_nodes(rows, walk)
        p = np.zeros(len(walk.rows))
        v = np.zeros(len(walk.rows))
        if len(rows):
            p[at] = model.content_proba(rows)
            v[at] = rows["stack_trafilatura"].fillna(0).to_numpy(np.float64)
        scores = {("model", 1.0): p, **{("blend" + f"{a:g}", a): a * p + (1 - a) * v for a in blends}}
        if union:  # content where the model reaches T or trafilatura keeps at least half the node's words
            scores[("union", 0.0)] = np.where(v >= 0.5, 1.0, p)
        named = [(name, q, given) for (name, _), q in scores.items() for given in thresholds]
        if gates:  # the union, the model's nodes added at a higher threshold on article-like pages
            kept = float(walk.rows["own_chars"].to_numpy(np.float64)[v >= 0.5].sum())
            in_record = rows["ctx_in_record"].to_numpy(np.float64) if "ctx_in_record" in rows else np.zeros(len(rows))
            rec = np.zeros(len(walk.rows), dtype=bool)
            rec[at] = np.nan_to_num(in_record) > 0
            rec_share = rows["ctx_record_page_share"].to_numpy(np.float64) if "ctx_record_page_share" in rows \
                else np.zeros(len(rows))
            listing = float(np.nan_to_num(rec_share).max()) if len(rec_share) else 0.0
            for kind, cut in gates:
                article = ((len(v) > 0 and bool(NoiseModel._article_pages(walk.rows, v >= 0.5, cut)[0]))
                           if kind.startswith("share") else kept >= cut)  # share: the spec's gate's rule
                if "nolist" in kind:  # not where one record group holds NN % of the page or more
                    article = article and listing < int(kind.split("nolist")[1]) / 100
                gated = ~rec if kind.endswith("norec") else np.ones(len(p), dtype=bool)
                for hi in gate_thresholds:
                    sure = (p >= hi) | ~(article & gated)
                    named.append((f"gate-{kind}{cut:g}-{hi:g}", np.where(v >= 0.5, 1.0, np.where(sure, p, 0.0)),
                                  None))
        for name, q, given in named:  # given None: the fold's own (inner-CV) threshold, named "inner"
            t = model.threshold if given is None else given
            text = text_from_labels(walk, np.where(q >= t, CONTENT, NOISE).astype(object))
            label = f"{name}@{'inner' if given is None else f'{t:g}'}" + ("+title" if title_query else "")
            row = {"dataset": page.dataset.name, "page": page.id, "source": src, "method": label}
            if is_value_gold(page.dataset):
                row["value_recall"] = value_recall(text, gold)
            else:
                row.update({f"text_{k}": x for k, x in text_scores(text, gold).items()})
            out.append(row)
    return out


def held_out_scores(pages: list, source: dict[str, str], spec, seed: int,
                    thresholds: list[float] = (), title_query: bool = False,
                    blends: list[float] = (), union: bool = False, gates: list = (),
                    gate_thresholds: list[float] = (), scored: set | None = None) -> pd.DataFrame:
    """One row per (held-out page, method): each source's pages scored by a model fitted on the
    other sources' pages (and at each of ``thresholds``, see ``curve``); with ``scored`` (a set of
    ``(dataset path, page id)``), only those of a source's pages are scored."""
    rows = training_rows(pages, FeatureCache(), spec.columns(), progress=True)
    row_src = rows["dataset"].map(source).to_numpy()
    out = []
    for src in dict.fromkeys(source.values()):
        test = [p for p in pages if source[p.dataset.name] == src
                and (scored is None or (str(p.dataset.path), p.id) in scored)]
        t0 = time.perf_counter()
        take = (row_src != src).nonzero()[0]
        model = fit_spec(spec, rows, seed=seed, take=take)
        info(f"general_heldout: {src} held out: fitted on {len(take)} rows in "
             f"{time.perf_counter() - t0:.0f} s (threshold {model.threshold})")
        methods = {"model": get_method("model", model=model), "trafilatura": get_method("trafilatura")}
        part = score_batch([(str(p.dataset.path), p.id) for p in test], methods, None)
        for r in part["rows"]:
            out.append({**r, "source": src})
        if thresholds or title_query or blends or union or gates:
            out += curve(model, test, src, list(thresholds) or [None], title_query, blends, union,
                         gates, gate_thresholds)
    return pd.DataFrame(out)


def table(df: pd.DataFrame) -> str:
    """Markdown: per source, each method's mean (text F1, or value recall on SWDE)."""
    score = df["text_f1"] if "text_f1" in df else pd.Series(float("nan"), index=df.index)
    if "value_recall" in df:
        score = score.fillna(df["value_recall"])
    df = df.assign(score=score)
    wide = df.pivot_table(index=["source", "dataset", "page"], columns="method", values="score")
    methods = [m for m in wide.columns if m != "trafilatura"]
    lines = ["| held-out source | pages | trafilatura | " + " | ".join(methods) + " |",
             "|---|---:|---:|" + "---:|" * len(methods)]

    def cells(g) -> str:
        return " | ".join(f"{g[m].mean():.3f} ({int((g[m] >= g['trafilatura']).sum())})" for m in methods)

    for src, g in wide.groupby(level="source", sort=False):
        lines.append(f"| {src} | {len(g)} | {g['trafilatura'].mean():.3f} | {cells(g)} |")
    lines.append(f"| all | {len(wide)} | {wide['trafilatura'].mean():.3f} | {cells(wide)} |")
    lines.append("\n(in brackets: the pages where the method scores at least trafilatura's)")
    return "\n".join(lines)


def _scored(df: pd.DataFrame) -> pd.DataFrame:
    """(source, page) x method: text F1, or value recall on SWDE."""
    score = df["text_f1"] if "text_f1" in df else pd.Series(float("nan"), index=df.index)
    if "value_recall" in df:
        score = score.fillna(df["value_recall"])
    return df.assign(score=score).pivot_table(index=["source", "dataset", "page"], columns="method",
                                              values="score")


def nested(df: pd.DataFrame) -> str:
    """Markdown: for each held-out source, the method (other than trafilatura) chosen on the
    other sources, by two criteria: the best mean of their means, and the best worst margin over
    trafilatura among them; and each choice's mean on the held-out source: a choice never made on
    the pages it is scored on."""
    wide = _scored(df)
    per = wide.groupby(level="source", sort=False).mean()
    methods = [m for m in per.columns if m != "trafilatura"]
    margin = per[methods].sub(per["trafilatura"], axis=0)
    lines = ["| held-out source | best mean of the others | its score | best worst margin of the others "
             "| its score | trafilatura |", "|---|---|---:|---|---:|---:|"]
    got: dict[str, list[float]] = {"mean": [], "worst": []}
    for src in per.index:
        by_mean = per.drop(index=src)[methods].mean().idxmax()
        by_worst = margin.drop(index=src).min().idxmax()
        got["mean"].append(per.loc[src, by_mean])
        got["worst"].append(per.loc[src, by_worst])
        lines.append(f"| {src} | {by_mean} | {per.loc[src, by_mean]:.3f} | {by_worst} | "
                     f"{per.loc[src, by_worst]:.3f} | {per.loc[src, 'trafilatura']:.3f} |")
    lines.append(f"| mean of the sources | | {np.mean(got['mean']):.3f} | | {np.mean(got['worst']):.3f} | "
                 f"{per['trafilatura'].mean():.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/hwnoise-bench", type=Path)
    ap.add_argument("--data", default=DEFAULT_DATA, type=Path)
    ap.add_argument("--sources", default=",".join(SOURCES))
    ap.add_argument("--pages-per-dataset", type=int, default=60)
    ap.add_argument("--score-pages", type=int, default=None, metavar="N",
                    help="score only the first N pages of each source's sample (the sample of "
                         "--pages-per-dataset N: more training pages, the same pages scored)")
    ap.add_argument("--import-limit", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--thresholds", default="",
                    help="comma-separated thresholds: also score the model at each (model@T)")
    ap.add_argument("--title-query", action="store_true",
                    help="model@T: walk each held-out page with its title's words as its query")
    ap.add_argument("--blend", default="",
                    help="comma-separated weights A: also score A x the model's probability + (1 - A) x "
                         "trafilatura's verdict, at each threshold (blendA@T)")
    ap.add_argument("--union", action="store_true",
                    help="also score the union of trafilatura's nodes and the model's at each threshold (union@T)")
    ap.add_argument("--gate", default="",
                    help="comma-separated KIND:CUT (share:0.3, chars:2000): also score the union whose model "
                         "nodes need --gate-thresholds on pages where trafilatura keeps that much (gate-...)")
    ap.add_argument("--gate-thresholds", default="0.5,0.6,0.7,0.8,0.9,1.01")
    ap.add_argument("--union-gate", default=None, metavar="SHARE,THRESHOLD|none",
                    help="the fitted spec's union gate (default: the general preset's)")
    ap.add_argument("--nested", action="store_true",
                    help="also choose a method on the other sources and score it on each held-out one")
    ap.add_argument("--classifier", default=None,
                    help="the classifier in place of the preset's, e.g. gb+rf (docs/models.md)")
    ap.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=VALUE",
                    help="a classifier parameter over the preset's, e.g. early_stopping=false (repeatable)")
    ap.add_argument("--cut", default=None, choices=CUTS,
                    help="the spec's cut (what the inner-CV threshold is compared with; the preset's: absolute)")
    ap.add_argument("--threshold", default=None, metavar="P|inner",
                    help="the spec's threshold (the preset's: inner); a number fits no inner CV")
    ap.add_argument("--from-csv", type=Path, help="read the scores from a --csv of an earlier run (no fitting)")
    ap.add_argument("--csv", type=Path, help="write every (page, method) score here")
    args = ap.parse_args(argv)
    if args.from_csv:
        df = pd.read_csv(args.from_csv)
        print(table(df))
        if args.nested:
            print(nested(df))
        return 0
    pages, source, scored = [], {}, None if args.score_pages is None else set()
    for src in args.sources.split(","):
        got, _ = gather([src], args.data, args.work, args.pages_per_dataset,
                        import_limit=args.import_limit, seed=args.seed)
        source.update({p.dataset.name: src for p in got})
        pages += got
        if scored is not None:  # a seeded sample's first N pages are the sample of N (build_general.sample)
            few, _ = gather([src], args.data, args.work, args.score_pages,
                            import_limit=args.import_limit, seed=args.seed)
            scored.update((str(p.dataset.path), p.id) for p in few)
    info(f"general_heldout: {len(pages)} pages of {len(set(source.values()))} sources")
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    blends = [float(a) for a in args.blend.split(",") if a.strip()]
    gates = [(g.split(":")[0], float(g.split(":")[1])) for g in args.gate.split(",") if g.strip()]
    gate_thresholds = [float(h) for h in args.gate_thresholds.split(",") if h.strip()]
    spec = preset_spec("general")
    if args.union_gate is not None:
        spec = with_overrides(spec, {"union_gate": None if args.union_gate == "none" else args.union_gate})
    if args.classifier:
        spec = with_overrides(spec, {"classifier": args.classifier})
    if args.param:
        spec = with_overrides(spec, {"params": {**(spec.params or {}), **dict(args.param)}})
    if args.cut:
        spec = with_overrides(spec, {"cut": args.cut})
    if args.threshold is not None:
        spec = with_overrides(spec, {"threshold": args.threshold})
    df = held_out_scores(pages, source, spec, args.seed, thresholds, args.title_query, blends,
                         args.union, gates, gate_thresholds, scored)
    if args.csv:
        df.to_csv(args.csv, index=False)
    print(table(df))
    if args.nested:
        print(nested(df))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
