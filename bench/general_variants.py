"""Variants of the ``general`` preset, measured across sites on WCXB (issue 12's cross-site figure).

    python bench/general_variants.py cache --data ../shared/datasets --work /tmp/gv   # ~6 min
    python bench/general_variants.py run base pagg ctx --work /tmp/gv               # ~8 min a variant
    python bench/general_variants.py thresholds base --work /tmp/gv                  # seconds
    python bench/general_variants.py oracle base --work /tmp/gv                      # ~1 min
    python bench/general_variants.py subtree base --work /tmp/gv                     # ~20 min
    python bench/general_variants.py autoctx ac ac-page sw --work /tmp/gv --oracle   # ~4-8 min a variant
    python bench/general_variants.py cache --datasets X/nexteval --work /tmp/acne    # ~3 min
    python bench/general_variants.py autoctx ac --work /tmp/acne --fit-rows all --pred /tmp/acne/pred
    python bench/records_loss.py X/nexteval /tmp/acne/pred-ac                        # record F1
    python bench/general_variants.py cache --others 60 --work /tmp/gvx                # WCXB + 420 pages of the others
    python bench/general_variants.py thresholds base wconly --work /tmp/gvx           # with and without them
    python bench/general_variants.py run lex lexown seq lexseq wch wsqrt wpage --work /tmp/gv   # ~20 s a variant
    python bench/general_variants.py paired base lex lexown --work /tmp/gv --union --thresholds 0.2,0.3,0.4
    python bench/general_variants.py modes --work /tmp/gv                            # ~9 min, every mode
    python bench/general_variants.py inner base m+traf_prec m+read_top3 --work /tmp/gv  # ~10 min a variant

``cache`` imports WCXB dev, assembles every gold page's rows with the general preset's columns
plus parent/grandparent context (``hwnoise.features.assembly``, the one assembly), and keeps each
page's text segments, gold and trafilatura's text. ``run`` computes out-of-fold probabilities of
content for each variant with the ``cross-site`` protocol's folds (5, grouped by site, seed 1);
``thresholds`` scores them with global thresholds and with a per-page threshold that maximises
the page's expected F1 (its probabilities taken as calibrated). Text F1 is ``hwnoise.text``'s,
from the content nodes' own text as ``text_from_labels`` joins it.

Variants (gradient boosting as the preset, trained on the nodes that hold text of their own,
the only ones whose label changes the extracted text):

- ``base``: the preset's columns.
- ``ctx``: + the parent/grandparent context columns (``--context``).
- ``records``: + the record-structure group (``rs_*``, ``hwnoise.features.record_struct``).
- ``wconly`` (a cache made with ``--others``): the preset's columns, trained on WCXB's pages
  alone; ``base`` on the same folds trains on the other sources' pages too.
- ``lc3`` / ``lconly``: the preset's columns, the listing and collection pages' nodes weighted
  three times / trained on alone.
- ``pagg``: + page aggregates of the stacked extractors (share of the page's text each keeps,
  the node's share minus it, how many agree).
- ``lr05`` / ``leaf63`` / ``leaf15`` / ``balanced``: the preset's columns, the gradient boosting's
  parameters changed (``HGB_PARAMS``).
- ``lex`` / ``lexown``: + shallow text features of the node's own text (Kohlschütter, Fankhauser
  & Nejdl, WSDM 2010: words, word length, capitals, digits, sentence ends, a price), ``lex`` also
  the words and link density of the previous and next text-holding node in document order.
- ``seq`` / ``lexseq``: + means of the stacked verdicts, CTD and link density over 2 and 5
  text-holding nodes on each side in document order (``lexseq`` with ``lex``'s columns).
- ``wch`` / ``wsqrt`` / ``wpage``: the preset's columns, each training node weighted by its own
  characters / their square root / its share of its page's characters (``WEIGHTS``).

- ``prel`` / ``prank`` / ``prank_t``: + features relative to the page: CTD, density sum,
  characters and parent CTD over the page's maximum / the node's percentile within its page of
  ``RANKED`` (``prank_t``: among the nodes holding text).
- ``lr`` / ``rf`` / ``et`` / ``rfcap``: the preset's columns, another learner (``LEARNERS``:
  logistic regression, a random forest, extra trees, a forest of at most 255 leaves a tree);
  ``gbrf`` / ``gbrfcap``: the mean of the gradient boosting's probability and ``rf``'s /
  ``rfcap``'s (``MEANS``).
- ``clean`` / ``clean1`` / ``wconf``: the preset's columns, the training nodes by how sure their
  label is (``LABEL_CONF``; the share of a node's own words that the gold's LCS marks, 0.5 being
  the labelling rule's cut, ``Bench.aligned_share``): those with a share in (0.2, 0.8) / (0.1,
  0.9) left out, or each weighted by |2 share − 1| + 0.05.
- ``nontraf``: the preset's columns, trained only on the nodes the preset's union leaves to the
  classifier (those trafilatura keeps less than half the words of: ``stack_trafilatura`` < 0.5).

- ``m+NAME[+NAME...]``: + the extra verdicts ``stack_m_NAME`` of other modes of the stacked
  extractors (``MODES``: trafilatura with favor_precision / favor_recall / include_tables=False /
  no_fallback, resiliparse's main content without comments or with form fields, noscript and
  hidden elements, the text of readability's 3 best-scored candidates), each the share of a
  node's words the mode's text keeps (``assembly.stack_share``), added to the cache by ``modes``
  (``modes.parquet``, each mode's seconds a page in ``modes_time.json``; ``traf_default``, the
  preset's own trafilatura, checks that the column equals the cache's ``stack_trafilatura``).

``inner`` scores variants as the preset chooses its threshold: each outer fold's by the inner CV
(3 folds grouped by site over the training folds, ``Bench.inner``), with the union (``--no-union``:
without), against the first variant on the same folds: per fold and paired ± s.e.

``paired`` compares variants page by page against the first (``--union``: as the preset, with
trafilatura's nodes content whatever the probability).

``oracle`` scores each listing/collection page at the threshold that is best *for that page*
(a ceiling for any choice of threshold, not a method); ``subtree`` keeps the content of the page's
main subtree (the element maximising the sum over its text of characters x (p - t)) at a lower
threshold and outside it at a higher one (``main_subtree``).

``autoctx`` is a second stage (stacked sequential learning / auto-context): the preset's columns
plus what the first stage's probabilities say about the node's neighbours
(``hwnoise.features.autocontext``: parent, children, siblings, record-mates, the page), the first
stage's probabilities out of fold *within* the training folds (3 inner folds grouped by site),
both stages' thresholds chosen by the preset's inner-CV rule (``Bench.autoctx`` says which
variants). ``cache --datasets`` caches any imported dataset folder instead of WCXB (NEXT-EVAL:
every page its own site, so the same folds as ``hwnoise evaluate --protocol cross-site``);
``--fit-rows all`` fits on every labelled node as the preset does, and ``--pred`` writes the
predictions ``bench/records_loss.py`` scores at node and record level.
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"


def cache(data: Path, work: Path, datasets: list[Path] | None = None, others: int = 0,
          title_query: bool = False) -> None:
    """Rows of WCXB dev (imported into ``work/wc``), or of the imported ``datasets``; with
    ``others`` > 0, WCXB dev and beside it ``bench/build_general.py``'s seeded samples of
    ``others`` pages of each other shared source (the pages the shipped model is built from).
    ``title_query``: each page walked with the words of its ``<title>`` (less English
    stopwords) as its query and its own terms, for pages that came from no form."""
    from hwnoise.cli import main as cli
    from hwnoise.dataset import Dataset
    from hwnoise.extractors.model import run_extractor
    from hwnoise.features.assembly import assemble_page, walk_dataset_page
    from hwnoise.features.context import signatures
    from hwnoise.training.spec import preset_spec

    wc = work / "wc"
    if not datasets and not wc.exists():
        cli(["import", "wcxb", str(data / "wcxb"), "--into", str(wc)])
    dirs = [Path(d).resolve() for d in datasets] if datasets else sorted(p for p in wc.iterdir() if p.is_dir())
    keep = None  # (dataset, page id) of the sampled other sources' pages
    if others and not datasets:
        extra, keep = _other_sources(data, work / "others", others)
        dirs += extra
    try:
        from hwnoise.features.record_struct import record_struct
    except ImportError:  # a version without the record-structure group
        record_struct = None
    cols = replace(preset_spec("general"), context=True).columns()
    frames, segs, roots = [], {}, {}
    for d in dirs:
        ds = Dataset(d)
        roots[ds.name] = str(d)
        for page in ds.pages():
            if keep is not None and not ds.name.startswith("wcxb-") and (ds.name, page.id) not in keep:
                continue
            gold = page.read_gold()
            if gold is None:
                continue
            walk = walk_title_query(page) if title_query else walk_dataset_page(page)
            rows = assemble_page(page, cols, stacker=run_extractor, walk=walk).rows
            if record_struct is not None:  # the record-structure group, for the ``records`` variant
                rows = rows.join(record_struct(walk).reset_index(drop=True))
            rows["dataset"], rows["page"], rows["site"] = ds.name, page.id, page.site
            rows["sig"] = signatures(rows, page.read_html(), http_charset=page.http_charset)
            frames.append(rows)
            segs[(ds.name, page.id)] = (walk.segments, gold,
                                        run_extractor("trafilatura", page.read_html(), page.http_charset))
        print(f"{d.name}: {len(frames)} pages", file=sys.stderr)
    pd.concat(frames, ignore_index=True).to_parquet(work / "rows.parquet")
    with open(work / "segs.pkl", "wb") as fh:
        pickle.dump({"segs": segs, "cols": cols, "roots": roots}, fh)


def title_terms(html: bytes, http_charset: str | None = None) -> list[str]:
    """The words of a page's ``<title>`` without English stopwords and one-letter words."""
    import justext
    import lxml.html

    from hwnoise.decode import decode_html
    from hwnoise.text import tokenize

    try:
        root = lxml.html.fromstring(decode_html(html, http_charset)[0] if isinstance(html, bytes) else html)
        t = root.find(".//title")
    except Exception:  # noqa: BLE001 - an unparsable page has no title
        t = None
    stop = {w.casefold() for w in justext.get_stoplist("English")}
    words = tokenize("".join(t.itertext())) if t is not None else []
    return [w for w in dict.fromkeys(words) if len(w) > 1 and w not in stop]


def walk_title_query(page):
    """Walk a page with its title's words as the domain query and its own terms."""
    from hwnoise.features.walk import walk_page

    html = page.read_html()
    terms = title_terms(html, page.http_charset)
    return walk_page(html, terms, http_charset=page.http_charset, own_terms=terms)


def _other_sources(data: Path, work: Path, n: int) -> tuple[list[Path], set]:
    """The other shared sources' dataset folders (imported into ``work`` as build_general does)
    and the (dataset, page id) of its seeded sample of ``n`` pages of each."""
    sys.path.insert(0, str(HERE))
    from build_general import SOURCES, sample
    from compare import ensure

    dirs, keep = [], set()
    for src in SOURCES:
        if src == "wcxb":
            continue
        got = ensure(src, data, work, None if src == "big9" else 150)
        keep |= {(p.dataset.name, p.id) for p in sample(got, n, 1)}
        dirs += got
    return dirs, keep


def _readability_top(k: int, html: str) -> str:
    """The text of readability-lxml's ``k`` best-scored candidates (``score_paragraphs``, after
    its ruthless removal of unlikely candidates), the outermost of them in document order: a
    wider view than ``summary``'s one best candidate and its siblings."""
    import lxml.html
    from readability import Document

    from hwnoise.extractors.external import html_to_text

    doc = Document(html)
    doc._html(True)
    for el in doc.tags(doc.html, "script", "style", "noscript"):
        el.drop_tree()
    doc.remove_unlikely_candidates()
    doc.transform_misused_divs_into_paragraphs()
    cands = doc.score_paragraphs()
    top = {c["elem"] for c in sorted(cands.values(), key=lambda c: -c["content_score"])[:k]}
    order = {el: i for i, el in enumerate(doc.html.iter())}
    outer = sorted((e for e in top if not any(a in top for a in e.iterancestors())),
                   key=lambda e: order.get(e, 0))
    return "\n".join(html_to_text(lxml.html.tostring(e, encoding="unicode")) for e in outer)


def _mode_runner(mode: str):
    """``MODES[mode]`` as a function of the decoded page (the adapters of ``extractors.external``)."""
    from functools import partial

    from hwnoise.extractors import external as ext

    how, opts = MODES[mode]
    if how == "trafilatura":
        return partial(ext._run_trafilatura, opts)
    if how == "resiliparse":
        return partial(ext._run_resiliparse, {"main_content": True, **opts})
    if how == "readability-top":
        return partial(_readability_top, opts["k"])
    raise KeyError(mode)


#: Other modes of the stacked extractors, each an extra verdict ``stack_m_NAME`` (``modes``):
#: (adapter, options); the preset's own modes are trafilatura's defaults, resiliparse's
#: main_content=True and readability's summary.
MODES = {
    "traf_default": ("trafilatura", {}),  # the preset's own mode: a check that stack_m_ matches stack_
    "traf_prec": ("trafilatura", {"favor_precision": True}),
    "traf_rec": ("trafilatura", {"favor_recall": True}),
    "traf_notab": ("trafilatura", {"include_tables": False}),
    "traf_nofb": ("trafilatura", {"no_fallback": True}),
    "res_nocomm": ("resiliparse", {"comments": False}),
    "res_wide": ("resiliparse", {"form_fields": True, "noscript": True, "hidden_elements": True}),
    "read_top3": ("readability-top", {"k": 3}),
}


def modes(work: Path, names: list[str]) -> None:
    """Add ``stack_m_NAME`` for each mode of ``names`` to the cache (``modes.parquet``, row for row
    with ``rows.parquet``): ``assembly.stack_share`` of the page's walk and the mode's text, the
    page read as the stacked extractors read it (``as_walked``, ``external.decode``). Each mode's
    seconds per page go to ``modes_time.json``."""
    import json

    from hwnoise.dataset import Dataset
    from hwnoise.extractors.base import as_walked
    from hwnoise.extractors.external import decode
    from hwnoise.features.assembly import stack_share, walk_dataset_page

    b = Bench(work)
    path, tpath = work / "modes.parquet", work / "modes_time.json"
    have = pd.read_parquet(path) if path.exists() else pd.DataFrame(index=range(len(b.rows)))
    times = json.loads(tpath.read_text()) if tpath.exists() else {}
    todo = [m for m in names if "stack_m_" + m not in have.columns]
    if not todo:
        return
    run = {m: _mode_runner(m) for m in todo}
    out = {m: np.full(len(b.rows), np.nan) for m in todo}
    secs = {m: [] for m in todo}
    node = b.rows["node"].to_numpy()
    for dname, root in b.roots.items():
        for page in Dataset(Path(root)).pages():
            idx = b.pages_rows.get(f"{dname}/{page.id}")
            if idx is None:
                continue
            walk = walk_dataset_page(page)
            html, cs = as_walked(page.read_html(), page.http_charset, walk)
            doc = decode(html, cs)
            for m in todo:
                t0 = time.perf_counter()
                try:
                    text = run[m](doc) or ""
                except Exception:  # noqa: BLE001 - as the adapters: a page a mode chokes on keeps nothing
                    text = ""
                secs[m].append(time.perf_counter() - t0)
                out[m][idx] = stack_share(walk, text)[node[idx]]
        print(f"{dname}: modes done", file=sys.stderr, flush=True)
    for m in todo:
        have["stack_m_" + m] = out[m]
        s = np.array(secs[m])
        times[m] = {"pages": len(s), "mean_s": float(s.mean()), "median_s": float(np.median(s)),
                    "p95_s": float(np.quantile(s, 0.95)), "total_s": float(s.sum())}
    have.to_parquet(path)
    tpath.write_text(json.dumps(times, indent=1))


HGB_PARAMS = {  # variants of the gradient boosting's parameters (the preset's: scikit-learn's defaults)
    "lr05": dict(learning_rate=0.05, max_iter=300),
    "leaf63": dict(max_leaf_nodes=63, max_iter=200, learning_rate=0.05, l2_regularization=1.0),
    "leaf15": dict(max_leaf_nodes=15, min_samples_leaf=200, max_iter=200),
    "balanced": dict(class_weight="balanced"),
}


#: Bagged variants: (how, models): each model on a bootstrap of the training sites ("boot"), on
#: a share of them drawn without replacement (a float), or on all with its own random state ("seeds").
BAGS = {"bag5": ("boot", 5), "half5": (0.5, 5), "half15": (0.5, 15), "seed5": ("seeds", 5)}


def _learner(variant: str):
    """A fresh estimator of ``LEARNERS[variant]``, made by hwnoise's ``make_classifier`` (random
    state 1; missing values go in as -1 where it takes none)."""
    from hwnoise.training.classifiers import make_classifier

    forest = dict(n_estimators=200, min_samples_leaf=20, max_features="sqrt", n_jobs=2)
    name, params = {"lr": ("logreg", {"max_iter": 500}),
                    "rf": ("rf", forest),
                    "et": ("sklearn.ensemble.ExtraTreesClassifier", forest),
                    "rfcap": ("rf", {**forest, "n_estimators": 100, "max_leaf_nodes": 255})}[variant]
    return make_classifier(name, seed=1, **params)


#: Variants fitted by another learner than the gradient boosting (``_learner``), on the preset's columns.
LEARNERS = ("lr", "rf", "et", "rfcap")
#: Variants that are the mean of two variants' out-of-fold probabilities.
MEANS = {"gbrf": ("base", "rf"), "gbrfcap": ("base", "rfcap")}
#: The columns ``prank`` ranks within each page.
RANKED = ["ctd", "density_sum", "link_density", "chars", "own_chars", "chars_before", "parent_ctd",
          "children", "sibling_same_tag"]


def _page_share(rows: pd.DataFrame, w: np.ndarray) -> np.ndarray:
    """``w`` scaled so that each page's rows sum to the page's share of one (pages equal)."""
    tot = pd.Series(w).groupby(rows["key"].to_numpy()).transform("sum").to_numpy()
    return w / np.maximum(tot, 1e-9) * (len(w) / rows["key"].nunique())


#: Training weights by the node's own characters (``wch``: as they are; ``wsqrt``: their square
#: root; ``wpage``: as they are, each page's summing to the same)
WEIGHTS = {
    "wch": lambda r: r["own_chars"].to_numpy(float),
    "wsqrt": lambda r: np.sqrt(r["own_chars"].to_numpy(float)),
    "wpage": lambda r: _page_share(r, r["own_chars"].to_numpy(float)),
}


#: How sure a node's label is, from the share of its own words the gold's LCS marks (0.5 is
#: the labelling rule's cut): ``clean`` drops training nodes whose share is in (0.2, 0.8);
#: ``clean1`` in (0.1, 0.9); ``wconf`` weighs each node by |2 share - 1| (+0.05)
LABEL_CONF = {"clean": 0.2, "clean1": 0.1, "wconf": None}


#: Variants on the preset's columns that change how the model is fitted (``Bench.oof``).
PRESET_COLUMNS = {"lc3", "lconly", "wconly", "nontraf", *LABEL_CONF, *HGB_PARAMS, *WEIGHTS, *BAGS,
                  *LEARNERS, *MEANS}


class Bench:
    """The cached rows, the folds, and the scoring."""

    def __init__(self, work: Path) -> None:
        from hwnoise.training.protocols import splits

        self.work = work
        self.rows = pd.read_parquet(work / "rows.parquet")
        with open(work / "segs.pkl", "rb") as fh:
            meta = pickle.load(fh)
        self.segs, self.cols = meta["segs"], meta["cols"]
        self.roots = meta.get("roots") or {d.name: str(d) for d in (work / "wc").iterdir() if d.is_dir()}
        r = self.rows
        r["key"] = r["dataset"] + "/" + r["page"].astype(str)
        self.table = r[["key", "dataset", "page", "site"]].drop_duplicates("key").reset_index(drop=True)
        self.folds = list(splits(self.table, "cross-site", seed=1, k=5))
        #: the fit's rows: "text" (nodes holding text of their own) or "all" labelled nodes
        self.fit_rows = "text"
        self.kind = self.table.set_index("key")["dataset"].str.replace("wcxb-", "")
        self.text = r["own_chars"].to_numpy() > 0
        self.groups = {k: np.flatnonzero(g) for k, g in
                       ((k, ((r["key"] == k).to_numpy() & self.text)) for k in self.table["key"])}

    def features(self, variant: str) -> list[str]:
        base = [c for c in self.cols if not c.startswith(("ctx_parent_", "ctx_grand_"))]
        if variant == "base":
            return base
        if variant.startswith("m+"):  # + extra verdicts of other modes (``modes``)
            return base + self._modes(variant.split("+")[1:])
        if variant == "ctx":
            return base + [c for c in self.cols if c.startswith(("ctx_parent_", "ctx_grand_"))
                           and self.rows[c].notna().any()]
        if variant == "pagg":
            return base + self._page_aggregates(base)
        if variant.startswith("ac"):  # the second stage's own columns are added in autoctx()
            return base
        if variant in PRESET_COLUMNS:  # the preset's columns, fitted otherwise (see oof)
            return base
        if variant in ("prel", "prank", "prank_t"):  # + features relative to the page
            return base + self._relative(variant)
        if variant in ("seq", "lexseq"):  # + windows in document order over the text-holding nodes
            return base + (self._lexical() if variant == "lexseq" else []) + self._sequence(base)
        if variant in ("lex", "lexown"):  # shallow text features of the own text (and the neighbours')
            cols = self._lexical()
            return base + (cols if variant == "lex" else [c for c in cols if not c.startswith("lx_nb_")])
        if variant == "records":  # the record-structure group (features/record_struct.py), if cached
            rs = [c for c in self.rows.columns if c.startswith("rs_")]
            if not rs:
                raise SystemExit("the cache has no rs_* columns: rebuild it with 'cache' on a version "
                                 "that has features/record_struct.py")
            return base + rs
        raise SystemExit(f"unknown variant {variant!r}: base, ctx, pagg, records, lex, lexown, seq, lexseq, "
                         f"prel, prank, prank_t, {', '.join(sorted(PRESET_COLUMNS))}")

    def _relative(self, variant: str) -> list[str]:
        """Columns relative to the node's page: ``prel`` CTD, density sum, characters and parent
        CTD over the page's maximum; ``prank`` the percentile within the page of each ``RANKED``
        column (``prank_t``: among the nodes holding text, the others missing)."""
        r, key = self.rows, self.rows["key"]
        if variant == "prel":
            out = []
            for c in ("ctd", "density_sum", "chars", "parent_ctd"):
                top = r[c].groupby(key).transform("max").to_numpy(float)
                r[f"rel_{c}"] = r[c].to_numpy(float) / np.where(top > 0, top, 1)
                out.append(f"rel_{c}")
            return out
        src = r if variant == "prank" else r.where(pd.Series(self.text, index=r.index))
        out = []
        for c in RANKED:
            r[f"pr_{c}"] = src[c].groupby(key).rank(pct=True).to_numpy()
            out.append(f"pr_{c}")
        return out

    def _page_aggregates(self, base: list[str]) -> list[str]:
        r, stk = self.rows, [c for c in base if c.startswith("stack_")]
        w, k = r["own_chars"].to_numpy(float), r["key"].to_numpy()
        tot = pd.Series(w).groupby(k).transform("sum").to_numpy()
        new = []
        for c in stk:
            v = r[c].to_numpy(float)
            r["pg_" + c] = pd.Series(np.nan_to_num(v) * w).groupby(k).transform("sum").to_numpy() / np.maximum(tot, 1)
            r["rel_" + c] = v - r["pg_" + c]
            new += ["pg_" + c, "rel_" + c]
        r["agree"] = np.nansum(r[stk].to_numpy(float) > 0.5, axis=1)
        r["agree_mean"] = np.nanmean(r[stk].to_numpy(float), axis=1)
        r["pg_chars_log"] = np.log1p(tot)
        return new + ["agree", "agree_mean", "pg_chars_log"]

    # -- auto-context: a second stage over the first's out-of-fold probabilities ----------------
    def signature_column(self) -> np.ndarray:
        """Each row's signature (tag + class words), from the cache or else from the pages' HTML
        (cached in ``sig.parquet``)."""
        if "sig" in self.rows.columns:
            return self.rows["sig"].to_numpy()
        path = self.work / "sig.parquet"
        if not path.exists():
            from hwnoise.dataset import Dataset
            from hwnoise.features.context import signatures

            sig = np.empty(len(self.rows), dtype=object)
            for name, root in self.roots.items():
                ds = Dataset(Path(root))
                for page in ds.pages():
                    idx = self.pages_rows.get(f"{name}/{page.id}")
                    if idx is not None:
                        sig[idx] = signatures(self.rows.iloc[idx], page.read_html(),
                                              http_charset=page.http_charset)
            pd.DataFrame({"sig": sig.astype(str)}).to_parquet(path)
        return pd.read_parquet(path)["sig"].to_numpy()

    @property
    def pages_rows(self) -> dict[str, np.ndarray]:
        """Each page's row positions (every row, in document order)."""
        if not hasattr(self, "_pages_rows"):
            k = self.rows["key"].to_numpy()
            order = np.argsort(k, kind="stable")
            keys, starts = np.unique(k[order], return_index=True)
            self._pages_rows = dict(zip(keys, np.split(order, starts[1:])))
        return self._pages_rows

    def _groups(self) -> dict:
        """Each page's :class:`SignatureGroups`."""
        if not hasattr(self, "_sg"):
            from hwnoise.features.context import signature_groups

            sig = self.signature_column()
            cols = self.rows[["node", "parent", "chars", "tag"]]
            self._sg = {k: signature_groups(cols.iloc[idx], sig=sig[idx]) for k, idx in self.pages_rows.items()}
        return self._sg

    def autocontext(self, p: np.ndarray, keys) -> pd.DataFrame:
        """The auto-context columns of the pages ``keys`` from first-stage probabilities ``p``
        (rows of other pages NaN)."""
        from hwnoise.features.autocontext import AUTOCONTEXT_FEATURES, autocontext_columns

        out = np.full((len(self.rows), len(AUTOCONTEXT_FEATURES)), np.nan)
        cols, sg = self.rows[["tag", "own_chars"]], self._groups()
        for k in keys:
            idx = self.pages_rows[k]
            out[idx] = autocontext_columns(cols.iloc[idx], p[idx], sg[k]).to_numpy()
        return pd.DataFrame(out, columns=AUTOCONTEXT_FEATURES)

    def _walked_column(self, path: Path, column: str, per_node) -> np.ndarray:
        """A column computed from each page's walk (``per_node(page, walk)``: a value per node
        of the walk, or None to leave the page's rows missing), cached in ``path``."""
        if not path.exists():
            from hwnoise.dataset import Dataset
            from hwnoise.features.assembly import walk_dataset_page

            out = np.full(len(self.rows), np.nan)
            node = self.rows["node"].to_numpy()
            for dname, root in self.roots.items():
                for page in Dataset(Path(root)).pages():
                    idx = self.pages_rows.get(f"{dname}/{page.id}")
                    if idx is not None:
                        values = per_node(page, walk_dataset_page(page))
                        if values is not None:
                            out[idx] = values[node[idx]]
            pd.DataFrame({column: out}).to_parquet(path)
        return pd.read_parquet(path)[column].to_numpy()

    def _modes(self, names: list[str]) -> list[str]:
        """The ``stack_m_NAME`` columns of ``modes.parquet`` (made by the ``modes`` command)."""
        path = self.work / "modes.parquet"
        z = pd.read_parquet(path) if path.exists() else pd.DataFrame()
        cols = ["stack_m_" + n for n in names]
        lack = [c for c in cols if c not in z.columns]
        if lack:
            raise SystemExit(f"the cache lacks {', '.join(lack)}: run 'modes {' '.join(names)} --work {self.work}'")
        for c in cols:
            self.rows[c] = z[c].to_numpy()
        return cols

    def _stacked(self, name: str) -> list[str]:
        """The stacked verdict ``stack_NAME`` of an extractor the cache lacks, as the assembly
        computes it (``assembly.stack_share`` of the page's walk and the extractor's text);
        cached in ``stack_NAME.parquet``."""
        from hwnoise.extractors.model import run_extractor
        from hwnoise.features.assembly import stack_share

        col = "stack_" + name
        self.rows[col] = self._walked_column(
            self.work / f"{col}.parquet", col,
            lambda page, walk: stack_share(walk, run_extractor(name, page.read_html(), page.http_charset)))
        return [col]

    def aligned_share(self) -> np.ndarray:
        """Each row's share of its own words that the gold text's LCS marks (``features.labels``:
        the alignment the labels come from; NaN without own words or gold). Cached in
        ``share.parquet``."""
        from hwnoise.features.labels import _word_counts, word_alignment

        def share(page, walk):
            gold = page.read_gold()
            if gold is None:
                return None
            own, marked = _word_counts(*word_alignment(walk, gold), len(walk))
            return np.where(own > 0, marked / np.maximum(own, 1), np.nan)

        return self._walked_column(self.work / "share.parquet", "share", share)

    def _stopwords(self) -> list[str]:
        """jusText's measure per node of its own text: ``sw_density`` (stopwords / words, with
        jusText's stoplist of the page's language: the list that covers most of the page's
        words), ``sw_words`` (log 1 + words), ``sw_rel`` (density minus the page's, weighted
        by words). Cached in ``sw.parquet``."""
        cols = ["sw_density", "sw_words", "sw_rel"]
        path = self.work / "sw.parquet"
        if not path.exists():
            from collections import Counter

            import justext

            from hwnoise.text import tokenize

            langs = sorted(justext.get_stoplists())
            lists = {lang: frozenset(justext.get_stoplist(lang)) for lang in langs}
            text = self.rows["text"].fillna("").to_numpy()
            dens, words, rel = (np.full(len(text), np.nan) for _ in range(3))
            for k, idx in self.pages_rows.items():
                toks = [tokenize(t) if t else [] for t in text[idx]]
                allw = Counter(w for t in toks for w in t)
                if not allw:
                    continue
                sl = max(lists.values(), key=lambda s: sum(c for w, c in allw.items() if w in s))
                n = np.array([len(t) for t in toks], dtype=float)
                sw = np.array([sum(w in sl for w in t) for t in toks], dtype=float)
                d = np.where(n > 0, sw / np.maximum(n, 1), np.nan)
                dens[idx], words[idx] = d, np.log1p(n)
                rel[idx] = d - sw.sum() / n.sum()
            pd.DataFrame({"sw_density": dens, "sw_words": words, "sw_rel": rel}).to_parquet(path)
        z = pd.read_parquet(path)
        for c in cols:
            self.rows[c] = z[c].to_numpy()
        return cols

    def _lexical(self) -> list[str]:
        """Shallow text features of each node's own text (Kohlschütter et al., WSDM 2010, the
        features behind boilerpipe): words, mean word length, share of capitalised words, share
        of digits, sentence ends per word, a currency sign or price, and the words and link
        density of the previous and next text-holding node in document order. Cached in
        ``lex.parquet``."""
        path = self.work / "lex.parquet"
        if not path.exists():
            text = self.rows["text"].fillna("")
            words = text.str.count(r"\w+").to_numpy(float)
            wchars = text.str.count(r"\w").to_numpy(float)
            caps = text.str.count(r"(?<!\w)[A-Z]").to_numpy(float)
            digits = text.str.count(r"\d").to_numpy(float)
            stops = text.str.count(r"[.!?](?:\s|$)").to_numpy(float)
            money = text.str.contains(r"[$€£¥]|\d[.,]\d\d(?!\d)", regex=True).to_numpy(float)
            nchar = np.maximum(text.str.len().to_numpy(float), 1)
            has = words > 0
            out = pd.DataFrame({
                "lx_words": np.log1p(words),
                "lx_word_len": np.where(has, wchars / np.maximum(words, 1), np.nan),
                "lx_caps": np.where(has, caps / np.maximum(words, 1), np.nan),
                "lx_digits": np.where(has, digits / nchar, np.nan),
                "lx_stops": np.where(has, stops / np.maximum(words, 1), np.nan),
                "lx_money": money,
            })
            nb = {c: np.full(len(text), np.nan) for c in ("lx_nb_prev_words", "lx_nb_next_words",
                                                           "lx_nb_prev_ld", "lx_nb_next_ld")}
            ld = self.rows["link_density"].to_numpy(float)
            lw = np.log1p(words)
            for _, idx in self.pages_rows.items():
                t = idx[has[idx]]  # text-holding rows in document order
                if len(t) < 2:
                    continue
                nb["lx_nb_prev_words"][t[1:]] = lw[t[:-1]]
                nb["lx_nb_next_words"][t[:-1]] = lw[t[1:]]
                nb["lx_nb_prev_ld"][t[1:]] = ld[t[:-1]]
                nb["lx_nb_next_ld"][t[:-1]] = ld[t[1:]]
            for c, v in nb.items():
                out[c] = v
            out.to_parquet(path)
        z = pd.read_parquet(path)
        for c in z.columns:
            self.rows[c] = z[c].to_numpy()
        return list(z.columns)

    def _sequence(self, base: list[str]) -> list[str]:
        """Means of the stacked verdicts, CTD and link density over windows of 2 and 5 text-holding
        nodes on each side in document order (content runs in document order), and the node's
        place among the page's text-holding nodes (0..1)."""
        srcs = [c for c in base if c.startswith("stack_")] + ["ctd", "link_density"]
        r = self.rows
        has = r["own_chars"].to_numpy() > 0
        vals = {c: r[c].to_numpy(float) for c in srcs}
        out = {f"sq_{c}_{k}": np.full(len(r), np.nan) for c in srcs for k in (2, 5)}
        out["sq_place"] = np.full(len(r), np.nan)
        for _, idx in self.pages_rows.items():
            t = idx[has[idx]]
            n = len(t)
            if not n:
                continue
            out["sq_place"][t] = np.arange(n) / max(n - 1, 1)
            for c in srcs:
                v = np.nan_to_num(vals[c][t])
                cs = np.concatenate(([0.0], np.cumsum(v)))
                i = np.arange(n)
                for k in (2, 5):
                    lo, hi = np.maximum(i - k, 0), np.minimum(i + k + 1, n)
                    out[f"sq_{c}_{k}"][t] = (cs[hi] - cs[lo]) / (hi - lo)
        for c, v in out.items():
            r[c] = v
        return list(out)

    def _fit_mask(self) -> np.ndarray:
        lab = self.rows["label"].isin(["S", "N"]).to_numpy()
        return lab & self.text if self.fit_rows == "text" else lab

    def _inner_threshold(self, p: np.ndarray, rows: np.ndarray) -> float:
        """The preset's rule (``training.threshold``): the threshold of THRESHOLDS with the best
        page character F1 on out-of-fold ``p`` of the training rows, ties toward 0.5."""
        from hwnoise.training.threshold import THRESHOLDS, page_char_f1

        sc = page_char_f1(self.rows.iloc[rows][["label", "own_chars", "dataset", "page"]], p[rows], THRESHOLDS)
        best = np.flatnonzero(sc >= sc.max() - 1e-12)
        return float(THRESHOLDS[best[np.argmin(np.abs(THRESHOLDS[best] - 0.5))]])

    def autoctx(self, variant: str = "ac") -> dict:
        """Out-of-fold probabilities of the first stage (the preset) and of the second stage
        (the preset's columns + the auto-context columns of the first stage's probabilities),
        with each fold's inner-CV threshold for both. The second stage trains on first-stage
        probabilities that are out of fold within the training folds (3 inner folds grouped by
        site, as the preset's threshold CV); a test page's come from the first stage fitted on
        all the training folds. ``ac``: every auto-context column; ``ac-page``: the page
        columns alone (rank, mean, share); ``ac-tree``: without the record columns."""
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.model_selection import GroupKFold

        from hwnoise.features.autocontext import AUTOCONTEXT_FEATURES

        path = self.work / f"ac_{variant}_{self.fit_rows}.npz"
        if path.exists():
            z = np.load(path)
            return {k: z[k] for k in z.files}
        groups = {"ac": AUTOCONTEXT_FEATURES,
                  "ac-page": ["ac_p", "ac_rank", "ac_page_mean", "ac_page_hi", "ac_rel", "ac_max_rel"],
                  "ac-tree": [c for c in AUTOCONTEXT_FEATURES
                              if not c.startswith(("ac_rec", "ac_mates", "ac_field"))],
                  "ac-rec": ["ac_p", "ac_rec", "ac_mates_mean", "ac_mates_min", "ac_mates_max",
                             "ac_mates_n", "ac_field"],
                  "sw": [], "sj": [], "wc": [], "wp": []}
        parts = variant.split("+")
        if not all(v in groups for v in parts):
            raise SystemExit(f"unknown autoctx variant {variant!r}: parts among {', '.join(groups)} joined by +")
        pick = list(dict.fromkeys(c for v in parts for c in groups[v]))
        base, r = self.features("base"), self.rows
        X0 = r[base].to_numpy(float)
        extra = np.hstack([r[self._stopwords()].to_numpy(float) if "sw" in parts else np.zeros((len(r), 0)),
                           r[self._stacked("justext")].to_numpy(float) if "sj" in parts else np.zeros((len(r), 0))])
        y = (r["label"] == "N").to_numpy(int)
        fit, key, site = self._fit_mask(), r["key"].to_numpy(), r["site"].astype(str).to_numpy()

        own = r["own_chars"].to_numpy(float)
        per_page = pd.Series(np.ones(len(r))).groupby(key).transform("sum").to_numpy()
        weight = (np.sqrt(np.maximum(own, 1)) if "wc" in parts else 1.0 / per_page if "wp" in parts else None)

        def gb(X, rows, w=None):
            return HistGradientBoostingClassifier(random_state=1).fit(
                X[rows], y[rows], sample_weight=None if w is None else w[rows] / w[rows].mean())

        p1o, p2o = np.full(len(r), np.nan), np.full(len(r), np.nan)
        thr1, thr2 = {}, {}
        for f, (tr, te) in enumerate(self.folds):
            t0 = time.perf_counter()
            trk, tek = set(self.table["key"].iloc[tr]), set(self.table["key"].iloc[te])
            trm, tem = np.isin(key, list(trk)), np.isin(key, list(tek))
            trf = np.flatnonzero(trm & fit)
            inner = list(GroupKFold(n_splits=3).split(trf, groups=site[trf]))
            p1 = np.full(len(r), np.nan)
            for a, b in inner:  # first stage, out of fold within the training folds
                m = gb(X0, trf[a])
                bk = np.isin(key, np.unique(key[trf[b]]))
                p1[bk] = m.predict_proba(X0[bk])[:, 1]
            t1 = self._inner_threshold(p1, trf)
            m = gb(X0, trf)
            p1[tem] = m.predict_proba(X0[tem])[:, 1]
            p1o[tem] = p1[tem]
            ac = self.autocontext(p1, trk | tek)[pick].to_numpy() if pick else np.zeros((len(r), 0))
            X = np.hstack([X0, extra, ac])
            p2 = np.full(len(r), np.nan)
            for a, b in inner:  # second stage's own inner CV for its threshold
                p2[trf[b]] = gb(X, trf[a], weight).predict_proba(X[trf[b]])[:, 1]
            t2 = self._inner_threshold(p2, trf)
            p2o[tem] = gb(X, trf, weight).predict_proba(X[tem])[:, 1]
            for k in tek:
                thr1[k], thr2[k] = t1, t2
            print(f"{variant} fold {f + 1}: thresholds {t1:.2f} / {t2:.2f}, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr, flush=True)
        keys = sorted(thr1)
        out = {"p1": p1o, "p2": p2o, "keys": np.array(keys), "thr1": np.array([thr1[k] for k in keys]),
               "thr2": np.array([thr2[k] for k in keys])}
        np.savez(path, **out)
        return out

    def inner(self, variant: str, union: bool = True) -> dict:
        """Out-of-fold probabilities of ``variant`` (gradient boosting as the preset) and each outer
        fold's threshold by the preset's inner-CV rule (3 inner folds grouped by site over the
        training folds, ``_inner_threshold``); with ``union`` a node trafilatura keeps
        (``stack_trafilatura`` >= 0.5) is content whatever the probability, in the inner CV too,
        as the ``general`` preset's union. Cached in ``inner_VARIANT[_nounion].npz``."""
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.model_selection import GroupKFold

        path = self.work / f"inner_{variant}{'' if union else '_nounion'}.npz"
        if path.exists():
            z = np.load(path)
            return {k: z[k] for k in z.files}
        feats, r = self.features(variant), self.rows
        X, y = r[feats].to_numpy(float), (r["label"] == "N").to_numpy(int)
        keep = (r["stack_trafilatura"].to_numpy(float) >= 0.5) if union else np.zeros(len(r), bool)
        fit, key, site = self._fit_mask(), r["key"].to_numpy(), r["site"].astype(str).to_numpy()

        def gb(rows):
            return HistGradientBoostingClassifier(random_state=1).fit(X[rows], y[rows])

        po, raw, thr, t_all = np.full(len(r), np.nan), np.full(len(r), np.nan), {}, []
        for f, (tr, te) in enumerate(self.folds):
            tek = set(self.table["key"].iloc[te])
            trf = np.flatnonzero(np.isin(key, list(self.table["key"].iloc[tr])) & fit)
            tem = np.isin(key, list(tek)) & self.text
            p1 = np.full(len(r), np.nan)
            for a, b in GroupKFold(n_splits=3).split(trf, groups=site[trf]):
                p1[trf[b]] = gb(trf[a]).predict_proba(X[trf[b]])[:, 1]
            p1 = np.where(keep, 1.0, p1)
            t = self._inner_threshold(p1, trf)
            raw[tem] = gb(trf).predict_proba(X[tem])[:, 1]  # the fit ``oof`` makes: same rows, order, seed
            po[tem] = np.where(keep[tem], 1.0, raw[tem])
            thr.update({k: t for k in tek})
            t_all.append(t)
            print(f"{variant} fold {f + 1}: inner threshold {t:.2f}", file=sys.stderr, flush=True)
        keys = sorted(thr)
        out = {"p": po, "keys": np.array(keys), "thr": np.array([thr[k] for k in keys]), "folds": np.array(t_all)}
        np.savez(path, **out)
        if not (self.work / f"oof_{variant}.npy").exists():
            np.save(self.work / f"oof_{variant}.npy", raw)
        return out

    def oof(self, variant: str) -> np.ndarray:
        from sklearn.ensemble import HistGradientBoostingClassifier

        path = self.work / f"oof_{variant}.npy"
        if path.exists():
            return np.load(path)
        if variant in MEANS:
            p = np.mean([self.oof(v) for v in MEANS[variant]], axis=0)
            np.save(path, p)
            return p
        feats, r = self.features(variant), self.rows
        p = np.full(len(r), np.nan)
        for tr, te in self.folds:
            trm = r["key"].isin(set(self.table["key"].iloc[tr])).to_numpy() & self.text
            tem = r["key"].isin(set(self.table["key"].iloc[te])).to_numpy() & self.text
            trr = r[trm & r["label"].isin(["S", "N"]).to_numpy()]
            lc = trr["dataset"].isin(["wcxb-listing", "wcxb-collection"]).to_numpy()
            weight = None
            if variant == "lconly":  # train on the listing and collection pages alone
                trr, lc = trr[lc], lc[lc]
            elif variant == "wconly":  # a cache with other datasets too: train on WCXB's pages alone
                wc = trr["dataset"].str.startswith("wcxb-").to_numpy()
                trr, lc = trr[wc], lc[wc]
            elif variant == "nontraf":  # only the nodes the union leaves to the classifier
                outside = ~(trr["stack_trafilatura"].to_numpy(float) >= 0.5)
                trr, lc = trr[outside], lc[outside]
            elif variant == "lc3":  # their nodes count three times
                weight = np.where(lc, 3.0, 1.0)
            elif variant in WEIGHTS:  # each node by its own characters, as the text F1 counts them
                weight = WEIGHTS[variant](trr)
            elif variant in LABEL_CONF:  # labels by how sure the gold's alignment is of them
                share = self.aligned_share()[trr.index.to_numpy()]
                if LABEL_CONF[variant] is None:
                    weight = np.abs(2 * np.nan_to_num(share, nan=1.0) - 1) + 0.05
                else:
                    lo = LABEL_CONF[variant]
                    sure = ~((share > lo) & (share < 1 - lo))
                    trr, lc = trr[sure], lc[sure]
            X, y, Xte = trr[feats].to_numpy(float), (trr["label"] == "N").to_numpy(int), r.loc[tem, feats].to_numpy(float)
            if variant in BAGS:  # the mean of several models, each fitted on a sample of the training sites
                p[tem] = self._bagged(variant, trr, X, y, Xte)
                continue
            if variant in LEARNERS:
                est = _learner(variant).fit(np.nan_to_num(X, nan=-1.0), y)
                p[tem] = est.predict_proba(np.nan_to_num(Xte, nan=-1.0))[:, 1]
                continue
            est = HistGradientBoostingClassifier(random_state=1, **HGB_PARAMS.get(variant, {})).fit(
                X, y, sample_weight=weight)
            p[tem] = est.predict_proba(Xte)[:, 1]
        np.save(path, p)
        return p

    def _bagged(self, variant: str, trr: pd.DataFrame, X: np.ndarray, y: np.ndarray, Xte: np.ndarray) -> np.ndarray:
        """``BAGS[variant]``: the mean probability of ``n`` gradient boostings, each fitted on the
        rows of a sample of the fold's training sites (drawn with replacement, a site's rows as
        many times as it is drawn: ``boot``; or without, the share ``frac``), or with only its
        random state changed (``seeds``)."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        how, n = BAGS[variant]
        sites = trr["key"].map(self.table.set_index("key")["site"]).to_numpy()
        names = np.unique(sites)
        out = np.zeros(len(Xte))
        for b in range(n):
            rng = np.random.default_rng(100 + b)
            if how == "seeds":
                w = None
            elif how == "boot":
                drawn = pd.Series(rng.choice(names, len(names), replace=True)).value_counts()
                w = pd.Series(sites).map(drawn).fillna(0).to_numpy(float)
            else:
                kept = set(rng.choice(names, int(round(how * len(names))), replace=False))
                w = np.fromiter((s in kept for s in sites), float, len(sites))
            rows = np.ones(len(y), bool) if w is None else w > 0
            est = HistGradientBoostingClassifier(random_state=b + 1).fit(
                X[rows], y[rows], sample_weight=None if w is None else w[rows])
            out += est.predict_proba(Xte)[:, 1]
        return out / n

    def score(self, p: np.ndarray, thr: float = 0.5, page_thr=None, keys=None, labeller=None) -> pd.DataFrame:
        """Text F1 per page of the nodes whose probability reaches the threshold, their text
        joined as the model method joins it (``text_from_labels`` over the walk's segments).
        ``labeller(key, p_of_page_rows)`` may decide each page's content instead."""
        from hwnoise.extractors.base import text_from_labels
        from hwnoise.features.columns import CONTENT, NOISE
        from hwnoise.text import text_scores

        node, w, out = self.rows["node"].to_numpy(), self.rows["own_chars"].to_numpy(float), []
        for key, idx in self.groups.items():
            if keys is not None and key not in keys:
                continue
            if labeller is not None:  # every row of the page
                labels = np.where(labeller(key, p), CONTENT, NOISE).astype(object)
            else:
                labels = np.full(int(node[idx].max()) + 1 if len(idx) else 1, NOISE, dtype=object)
                t = (page_thr(w[idx], p[idx]) if page_thr is not None
                     else thr[key] if isinstance(thr, dict) else thr)
                labels[node[idx]] = np.where(p[idx] >= t, CONTENT, NOISE)
            sg, gold, _ = self.segs[tuple(key.split("/", 1))]
            s = text_scores(text_from_labels(SimpleNamespace(segments=sg), labels), gold)
            out.append({"key": key, "kind": self.kind[key], "f1": s["f1"], "p": s["precision"], "r": s["recall"]})
        return pd.DataFrame(out)

    @property
    def has_lc(self) -> bool:
        return bool(self.kind.isin(["listing", "collection"]).any())

    def per_fold(self, res: pd.DataFrame) -> np.ndarray:
        """Mean text F1 per outer fold (listing + collection pages when there are any)."""
        fold = {self.table["key"].iloc[i]: f for f, (_, te) in enumerate(self.folds) for i in te}
        res = res[res["kind"].isin(["listing", "collection"])] if self.has_lc else res
        return res.groupby(res["key"].map(fold))["f1"].mean().to_numpy()

    def oracle(self, p: np.ndarray, grid=(0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)) -> pd.DataFrame:
        """Each listing/collection page scored at the threshold of ``grid`` best for that page."""
        lc = {k for k in self.groups if self.kind[k] in ("listing", "collection")}
        per = [self.score(p, t, keys=lc).set_index("key")["f1"] for t in grid]
        best = pd.concat(per, axis=1).max(axis=1)
        return pd.DataFrame({"key": best.index, "kind": [self.kind[k] for k in best.index], "f1": best.to_numpy(),
                             "p": np.nan, "r": np.nan})

    def main_subtree(self, t: float, t_in: float, t_out: float):
        """A labeller: content inside the page's main subtree at ``t_in``, outside at ``t_out``."""
        r = self.rows
        node, parent, w, key_of = (r["node"].to_numpy(), r["parent"].to_numpy(), r["own_chars"].to_numpy(float),
                                   r["key"].to_numpy())
        pages = {k: np.flatnonzero(key_of == k) for k in self.groups}

        def label(key: str, p: np.ndarray) -> np.ndarray:
            idx = pages[key]
            n = int(node[idx].max()) + 1
            par, pp, ww = np.full(n, -1), np.zeros(n), np.zeros(n)
            par[node[idx]], pp[node[idx]], ww[node[idx]] = parent[idx], np.nan_to_num(p[idx]), w[idx]
            gain = np.where(ww > 0, ww * (pp - t), 0.0)
            for i in range(n - 1, 0, -1):  # subtree sums: rows are in document order
                if par[i] >= 0:
                    gain[par[i]] += gain[i]
            inside = np.zeros(n, bool)
            inside[int(np.argmax(gain))] = True
            for i in range(int(np.argmax(gain)) + 1, n):
                inside[i] = par[i] >= 0 and inside[par[i]]
            return np.where(inside, pp >= t_in, pp >= t_out)
        return label

    def trafilatura(self) -> pd.DataFrame:
        from hwnoise.text import text_scores

        out = []
        for key in self.table["key"]:
            _, gold, traf = self.segs[tuple(key.split("/", 1))]
            s = text_scores(traf or "", gold)
            out.append({"key": key, "kind": self.kind[key], "f1": s["f1"], "p": s["precision"], "r": s["recall"]})
        return pd.DataFrame(out)


def expected_f1_threshold(beta: float = 1.0):
    """A page's threshold: the cut of its nodes, by probability, that maximises the expected
    F-beta of characters when the probabilities are taken as calibrated."""
    def thr(w: np.ndarray, p: np.ndarray) -> float:
        if len(p) == 0:
            return 0.5
        o = np.argsort(-p, kind="stable")
        tp, pred, gold = np.cumsum(w[o] * p[o]), np.cumsum(w[o]), (w * p).sum()
        k = int(np.argmax((1 + beta ** 2) * tp / (pred + beta ** 2 * gold + 1e-9)))
        return float(max(min(p[o][k], 0.99), 0.05))
    return thr


def line(name: str, res: pd.DataFrame) -> str:
    lc = res[res["kind"].isin(["listing", "collection"])]
    return (f"| {name} | {lc.f1.mean():.3f} | {lc[lc.kind == 'listing'].f1.mean():.3f} | "
            f"{lc[lc.kind == 'collection'].f1.mean():.3f} | {res.f1.mean():.3f} | {lc.p.mean():.3f} | {lc.r.mean():.3f} |")


def paired(b: Bench, variants: list[str], thresholds: list[float], union: bool) -> None:
    """Each variant against the first, page by page at each threshold: the mean text F1 over the
    listing + collection pages (all pages without any), the paired difference ± its standard
    error, the pages up / down by more than 0.005, and the difference in each outer fold. With
    ``union`` a node trafilatura keeps (``stack_trafilatura`` >= 0.5) is content whatever the
    probability, as the ``general`` preset's union makes it."""
    keep = b.rows["stack_trafilatura"].to_numpy(float) >= 0.5 if union else None

    def scored(v: str, t: float) -> pd.DataFrame:
        p = b.oof(v)
        if keep is not None:
            p = np.where(keep, 1.0, p)
        return b.score(p, t)

    print("| threshold | variant | pages | first | variant | difference ± s.e. | up / down | per fold |")
    print("|---:|---|---:|---:|---:|---|---|---|")
    for t in thresholds:
        first = scored(variants[0], t)
        for v in variants[1:]:
            other = scored(v, t)
            m = first.merge(other, on=["key", "kind"], suffixes=("_a", "_b"))
            sel = m[m["kind"].isin(["listing", "collection"])] if b.has_lc else m
            d = sel["f1_b"] - sel["f1_a"]
            folds = np.round(b.per_fold(other) - b.per_fold(first), 3)
            print(f"| {t:g} | {v} | {len(d)} | {sel.f1_a.mean():.3f} | {sel.f1_b.mean():.3f} | "
                  f"{d.mean():+.4f} ± {d.std() / np.sqrt(len(d)):.4f} | {int((d > 0.005).sum())} / "
                  f"{int((d < -0.005).sum())} | {' '.join(f'{x:+.3f}' for x in folds)} |")


def run_inner(b: Bench, variants: list[str], union: bool) -> None:
    """Each variant at its folds' inner-CV thresholds (``Bench.inner``), against the first on
    the same folds: the table's line, the inner thresholds, the change per outer fold (listing +
    collection), and the paired difference ± s.e. over the listing + collection pages and over
    all pages."""
    res = {}
    for v in variants:
        t0 = time.perf_counter()
        z = b.inner(v, union)
        res[v] = (b.score(z["p"], dict(zip(z["keys"], z["thr"]))), z["folds"])
        print(f"{v}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print("| variant | listing + collection | listing | collection | all pages | P (L+C) | R (L+C) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for v in variants:
        print(line(f"{v} (inner thresholds {' '.join(f'{t:.2f}' for t in res[v][1])})", res[v][0]))
    first = res[variants[0]][0]
    print()
    print("| variant | L+C difference ± s.e. | up / down | per fold (L+C) | folds up | all pages difference ± s.e. |")
    print("|---|---|---|---|---:|---|")
    for v in variants[1:]:
        m = first.merge(res[v][0], on=["key", "kind"], suffixes=("_a", "_b"))
        d_all = m["f1_b"] - m["f1_a"]
        d = d_all[m["kind"].isin(["listing", "collection"])]
        folds = b.per_fold(res[v][0]) - b.per_fold(first)
        print(f"| {v} | {d.mean():+.4f} ± {d.std() / np.sqrt(len(d)):.4f} | {int((d > 0.005).sum())} / "
              f"{int((d < -0.005).sum())} | {' '.join(f'{x:+.3f}' for x in folds)} | {int((folds > 0).sum())} | "
              f"{d_all.mean():+.4f} ± {d_all.std() / np.sqrt(len(d_all)):.4f} |")


def run_autoctx(b: Bench, variants: list[str], pred: Path | None, oracle: bool = False) -> int:
    """The first stage and each auto-context variant, at their inner-CV thresholds and at fixed ones."""
    print("| variant | listing + collection | listing | collection | all pages | P (L+C) | R (L+C) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    if b.has_lc:
        print(line("trafilatura", b.trafilatura()))
    for v in variants:
        t0 = time.perf_counter()
        z = b.autoctx(v)
        print(f"{v}: both stages in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        thr1, thr2 = dict(zip(z["keys"], z["thr1"])), dict(zip(z["keys"], z["thr2"]))
        s1, s2 = b.score(z["p1"], thr1), b.score(z["p2"], thr2)
        print(line(f"first stage (the preset), inner threshold {sorted(set(z['thr1'].tolist()))}", s1))
        print(line(f"{v}, inner threshold {sorted(set(z['thr2'].tolist()))}", s2))
        print(f"{v} minus the first stage, per fold ({'listing + collection' if b.has_lc else 'all pages'}): "
              + " ".join(f"{d:+.3f}" for d in b.per_fold(s2) - b.per_fold(s1)), file=sys.stderr)
        for t in (0.2, 0.3, 0.5):
            print(line(f"{v}, threshold {t}", b.score(z["p2"], t)))
        if b.has_lc:
            false_positives(b, v)
        if oracle and b.has_lc:
            print(line("first stage, each page at its best threshold (a ceiling)", b.oracle(z["p1"])))
            print(line(f"{v}, each page at its best threshold (a ceiling)", b.oracle(z["p2"])))
        if pred is not None:
            for name, p, thr in (("base", z["p1"], thr1), (v, z["p2"], thr2)):
                write_pred(b, Path(f"{pred}-{name}"), p, thr)
    return 0


def false_positives(b: Bench, variant: str = "ac") -> None:
    """Where the first stage keeps what the gold leaves out on listing + collection pages: the
    characters of those nodes inside a record (``ctx_in_record``) and kept by trafilatura
    (``stack_trafilatura`` > 0.5), each as a share of all of them."""
    z = b.autoctx(variant)
    thr = b.rows["key"].map(dict(zip(z["keys"], z["thr1"]))).to_numpy(float)
    r = b.rows
    m = (b.text & r["dataset"].isin(["wcxb-listing", "wcxb-collection"]).to_numpy()
         & (r["label"] == "S").to_numpy() & (np.nan_to_num(z["p1"]) >= thr))
    w = r["own_chars"].to_numpy(float) * m
    print(f"first stage's false positives on listing + collection pages: {w.sum():.0f} characters; "
          f"inside a record {w[r['ctx_in_record'].to_numpy() == 1].sum() / w.sum():.3f}, "
          f"kept by trafilatura {w[np.nan_to_num(r['stack_trafilatura'].to_numpy(float)) > 0.5].sum() / w.sum():.3f}")


def write_pred(b: Bench, out: Path, p: np.ndarray, thr: dict) -> None:
    """``OUT/PAGE.npz`` with labels and probabilities per walker row, as ``records_predict.py``."""
    import json

    out.mkdir(parents=True, exist_ok=True)
    node = b.rows["node"].to_numpy()
    for k, idx in b.pages_rows.items():
        n = int(node[idx].max()) + 1
        proba = np.full(n, np.nan)
        proba[node[idx]] = p[idx]
        labels = np.where(np.nan_to_num(proba) >= thr[k], "N", "S")
        np.savez_compressed(out / f"{k.split('/', 1)[1]}.npz", labels=labels, proba=proba)
    fold = {b.table["key"].iloc[i]: f for f, (_, te) in enumerate(b.folds) for i in te}
    (out / "meta.json").write_text(json.dumps({"pages": {k.split("/", 1)[1]: fold[k] for k in b.pages_rows}}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["cache", "modes", "run", "inner", "thresholds", "oracle", "subtree", "autoctx", "paired"])
    ap.add_argument("variants", nargs="*", default=["base"])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/hwnoise-general-variants"))
    ap.add_argument("--datasets", type=Path, nargs="+", help="cache: imported dataset folders "
                    "instead of WCXB dev (e.g. NEXT-EVAL's)")
    ap.add_argument("--others", type=int, default=0, metavar="N",
                    help="cache: also N pages of each other shared source (build_general.py's sample), "
                         "as training pages beside WCXB's (the wconly variant leaves them out)")
    ap.add_argument("--title-query", action="store_true",
                    help="cache: walk each page with its <title>'s words as its query (no form)")
    ap.add_argument("--fit-rows", choices=["text", "all"], default="text",
                    help="autoctx: fit on the nodes holding text (WCXB's bench) or on every labelled node "
                         "(as the preset does; NEXT-EVAL's node and record levels need it)")
    ap.add_argument("--pred", type=Path, help="autoctx: write each page's labels and probabilities of "
                    "both stages as bench/records_predict.py does, to PRED-base and PRED-VARIANT")
    ap.add_argument("--oracle", action="store_true", help="autoctx: also each page at its best threshold")
    ap.add_argument("--thresholds", type=lambda s: [float(x) for x in s.split(",")], default=[0.2],
                    help="paired: the thresholds to compare at (comma-separated; default 0.2)")
    ap.add_argument("--union", action="store_true",
                    help="paired: trafilatura's nodes are content whatever the probability (the preset's union)")
    ap.add_argument("--no-union", action="store_true",
                    help="inner: without the preset's union with trafilatura's nodes")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.what == "cache":
        cache(args.data, args.work, args.datasets, args.others, args.title_query)
        return 0
    if args.what == "modes":
        modes(args.work, args.variants if args.variants != ["base"] else list(MODES))
        return 0
    b = Bench(args.work)
    b.fit_rows = args.fit_rows
    if args.what == "inner":
        run_inner(b, args.variants, not args.no_union)
        return 0
    if args.what == "autoctx":
        return run_autoctx(b, args.variants if args.variants != ["base"] else ["ac"], args.pred, args.oracle)
    if args.what == "paired":
        if len(args.variants) < 2:
            raise SystemExit("paired: give the variant to compare against first, then the others")
        paired(b, args.variants, args.thresholds, args.union)
        return 0
    print("| variant | listing + collection | listing | collection | all pages | P (L+C) | R (L+C) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(line("trafilatura", b.trafilatura()))
    for v in args.variants:
        t0 = time.perf_counter()
        p = b.oof(v)
        print(f"{v}: out-of-fold probabilities in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if args.what == "run":
            print(line(f"{v}, threshold 0.2", b.score(p, 0.2)))
        elif args.what == "oracle":
            print(line(f"{v}, each page at its best threshold (a ceiling)", b.oracle(p)))
        elif args.what == "subtree":
            for t, t_in, t_out in [(0.2, 0.1, 0.5), (0.2, 0.15, 0.5), (0.2, 0.2, 0.5), (0.2, 0.1, 1.01),
                                   (0.3, 0.15, 0.3), (0.4, 0.2, 0.3), (0.5, 0.2, 0.3)]:
                print(line(f"{v}, main subtree t={t} inside {t_in} outside {t_out}",
                           b.score(p, labeller=b.main_subtree(t, t_in, t_out))))
        else:
            for t in (0.2, 0.3, 0.5):
                print(line(f"{v}, threshold {t}", b.score(p, t)))
            for beta in (1.0, 1.5, 2.0):
                print(line(f"{v}, page expected-F{beta:g}", b.score(p, page_thr=expected_f1_threshold(beta))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
