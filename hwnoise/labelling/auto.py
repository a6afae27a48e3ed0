"""Automatic node labels for a crawl without gold (``hwnoise label DATASET --auto``).

Every page of the dataset is walked as the features stage walks it; each *source* gives a
verdict per node (+1 content, -1 noise, 0 no opinion):

- ``sitelevel``: seed 000's SiteLevel template detection over the dataset's own pages (what
  repeats at the same tag path on many of the site's pages is template: noise), else content;
- ``query``: the domain query (records carry the submitted values, menus and footers do not):
  +1 where the node's subtree matches a query term, no opinion elsewhere;
- ``cetd``: the layout, CETD's density (seed 003's baseline);
- ``records``: repeated record structures, +1 on a node with at least two siblings of its
  tag whose subtrees hold text (a result list), no opinion elsewhere;
- ``phrases``: templated sentences with slots ("Showing 1-20 of 254 results for ...", an ad's
  "... from $4.99. Free delivery on ... orders over $25"), which SiteLevel misses because the
  whole text differs from page to page: -1 on a node whose own text is mostly (>= 30 % of its
  word trigrams) phrases found on at least half of the dataset's pages, no opinion elsewhere;
- ``trafilatura``, ``readability``, ``justext``, ``resiliparse``: the installed external
  extractors, their text mapped onto the nodes by the same LCS rule as gold text
  (``hwnoise.features.labels.label_page``);
- ``general``: the shipped general model (``load_model("general")``), when present and wanted;
- ``noresult``: the site's answer to a search nothing matches (the probes ``hwnoise collect``
  keeps, ``hwnoise.forms.probe``): the own texts every probe shows (the page's own submitted
  words masked: "No results for _", "Check the spelling of your keywords.") and fewer than half
  of the crawled pages show are the no-result signature; a page that shows at least half of it
  is a page without records, and -1 on every node of it is final (a veto, not a vote). No
  opinion on datasets without probes.

The combined label is a weighted vote: P(content) = sigmoid(bias + sum of weight * verdict), a
logistic model over the verdicts, its weights read from ``hwnoise.data/label_weights.json``
(fitted by ``bench/label_auto.py --write-weights``, which measures them by cross-site folds)
or given by the caller; the confidence is max(P, 1 - P). A source that is missing simply
votes 0, and so does one that says the same thing about nearly every node of the dataset
(``informative``). The weights' bias carries the content share of the sites they were
fitted on (news pages: 0.08); by default the vote is moved to this dataset's own share,
estimated by EM from the votes (``shift_prior``).
``refine`` (one round by default, chosen by cross-site folds: README, "Labelling your own
crawl") adds a per-dataset Dawid-Skene estimate of each source's reliability.
"""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
import pandas as pd

from hwnoise.dataset import LABEL_COLUMNS, Dataset, DatasetError, now_iso
from hwnoise.decode import SNIFF_PREFIX, sniff_html
from hwnoise.errors import HwnoiseError
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.labels import label_page
from hwnoise.progress import bar, info

__all__ = ["AutoOptions", "SOURCES", "auto_label", "combine", "default_weights", "merge_labels",
           "masked_texts", "node_words", "noresult_signature", "noresult_votes", "page_verdicts",
           "probe_texts", "recombine", "shift_prior", "VETOES"]

#: Every source, in the order of the ``v_SOURCE`` columns of labels.parquet.
SOURCES = ("sitelevel", "query", "cetd", "records", "phrases", "trafilatura", "readability",
           "justext", "resiliparse", "general", "noresult")
#: Sources whose -1 is final (the combination's label is noise whatever the others say).
VETOES = ("noresult",)
#: ``noresult``: the share of the signature a page must show, and the share of the dataset's
#: pages a probe's text may be on and still belong to the signature (not to the template).
NORESULT_SHARE, NORESULT_PAGES = 0.5, 0.5
#: ``phrases``: word n-gram length, the share of a node's n-grams that must be the site's
#: repeated phrases, and the share of the dataset's pages a phrase must be found on.
PHRASE_N, PHRASE_SHARE, PHRASE_PAGES = 3, 0.3, 0.5
EXTERNAL = ("trafilatura", "readability", "justext", "resiliparse")


@dataclass
class AutoOptions:
    """What ``auto_label`` uses: ``general`` model on/off, the external extractors (None = every
    installed one), the combination's ``weights`` (None = the shipped ones), a progress bar,
    ``refine`` Dawid-Skene rounds, ``adapt_prior`` (move the vote to this dataset's content
    share, ``shift_prior``)."""

    general: bool = True
    external: Sequence[str] | None = None
    weights: dict | None = None
    progress: bool = True
    refine: int = 1
    adapt_prior: bool = True
    sources: Sequence[str] = field(default_factory=lambda: SOURCES)


def default_weights() -> dict:
    """The shipped combination weights ``{"bias": b, "weights": {source: w}}``; equal votes
    when the file is absent."""
    try:
        text = (resources.files("hwnoise.data") / "label_weights.json").read_text(encoding="utf-8")
        return json.loads(text)
    except (FileNotFoundError, OSError, ModuleNotFoundError):
        return {"bias": 0.0, "weights": {s: 1.0 for s in SOURCES}}


def check_weights(obj, where: str) -> dict:
    """``obj`` (read from ``where``) as combination weights, or a ``HwnoiseError`` naming what is
    wrong: an object with an optional number ``bias``, an optional ``weights`` object of a number
    per source (among ``SOURCES``), an optional ``prior`` between 0 and 1 (the shape
    ``default_weights`` has; its ``fitted_on`` and other notes are left alone)."""
    example = '{"bias": -1.5, "weights": {"sitelevel": 1.2, "cetd": 0.8}, "prior": 0.3}'

    def bad(what: str) -> HwnoiseError:
        return HwnoiseError(f"{where}: {what}; give combination weights like {example}")

    def is_number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    if not isinstance(obj, dict):
        raise bad(f"not a JSON object but {type(obj).__name__}")
    if "bias" in obj and not is_number(obj["bias"]):
        raise bad(f"'bias' must be a number, not {obj['bias']!r}")
    w = obj.get("weights", {})
    if not isinstance(w, dict):
        raise bad("'weights' must be an object of a number per source")
    for src, v in w.items():
        if src not in SOURCES:
            raise bad(f"'weights' names {src!r}, no source (the sources: {', '.join(SOURCES)})")
        if not is_number(v):
            raise bad(f"the weight of {src!r} must be a number, not {v!r}")
    prior = obj.get("prior")
    if prior is not None and not (is_number(prior) and 0 < prior < 1):
        raise bad(f"'prior' must be a share between 0 and 1, not {prior!r}")
    return obj


def check_external(names: Sequence[str]) -> list[str]:
    """``names`` as external extractors to ask, or a ``HwnoiseError`` for one that is none
    (among ``EXTERNAL``) or is not installed (naming the package): asked for by name, a missing
    one must not be left out without a word."""
    from hwnoise.extractors.external import PACKAGES, available

    have = available()
    for name in names:
        if name not in EXTERNAL:
            raise HwnoiseError(f"--extractors: {name!r} is no extractor to ask; choose among "
                               f"{', '.join(EXTERNAL)} ('' for none)")
        if name not in have:
            raise HwnoiseError(f"--extractors: {name!r} needs the package {PACKAGES[name]!r}: "
                               "pip install 'hwnoise[extractors]', or leave it out")
    return list(names)


def informative(verdicts: pd.DataFrame) -> list[str]:
    """The ``v_SOURCE`` columns that carry information on this dataset: a source that votes
    on most nodes (> 50 %) and the same way on at least 99 % of its votes (an article
    extractor that finds nothing on a result list) says nothing about any node here."""
    out = []
    for c in (c for c in verdicts.columns if c.startswith("v_")):
        v = np.nan_to_num(verdicts[c].to_numpy(dtype=float), nan=0.0)
        voted = v != 0
        if voted.mean() > 0.5 and max((v > 0).sum(), (v < 0).sum()) >= 0.99 * voted.sum():
            continue
        out.append(c)
    return out


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def shift_prior(z: np.ndarray, prior: float, iters: int = 200) -> np.ndarray:
    """The log-odds ``z`` of a model fitted where a share ``prior`` of the nodes was content,
    moved to this dataset's own share of content, estimated by EM from ``z`` alone (Saerens,
    Latinne & Decaestecker 2002): the share is the mean posterior, the posterior's log-odds
    shift by logit(share) - logit(prior), until the share settles. A result list (content
    share 0.42 on the demo) thereby stops being labelled with the news pages' 0.08."""
    if not len(z):
        return z
    base = _logit(prior)
    share = prior
    for _ in range(iters):
        new = float(np.mean(1.0 / (1.0 + np.exp(-(z + _logit(share) - base)))))
        if abs(new - share) < 1e-7:
            share = new
            break
        share = new
    return z + _logit(share) - base


def combine(verdicts: pd.DataFrame, weights: dict, refine_iters: int = 0,
            adapt_prior: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Labels ("S"/"N") and confidences from the ``v_SOURCE`` columns of a whole dataset's
    ``verdicts`` (the informative ones). With ``adapt_prior`` and a ``prior`` in ``weights``
    (the content share of the nodes they were fitted on) the vote is moved to this dataset's
    own content share (``shift_prior``); with ``refine_iters`` the vote's log-odds are added
    to those of ``refine`` (Dawid-Skene on this dataset)."""
    z = np.full(len(verdicts), float(weights.get("bias", 0.0)))
    cols = informative(verdicts)
    for src, w in (weights.get("weights") or {}).items():
        col = f"v_{src}"
        if col in cols:
            z += float(w) * np.nan_to_num(verdicts[col].to_numpy(dtype=float), nan=0.0)
    if adapt_prior and weights.get("prior") is not None:
        z = shift_prior(z, float(weights["prior"]))
    if refine_iters:
        p = refine(verdicts[cols], 1.0 / (1.0 + np.exp(-z)), refine_iters)
        p = np.clip(p, 1e-9, 1 - 1e-9)
        z = z + np.log(p / (1 - p))
    p = 1.0 / (1.0 + np.exp(-z))
    for src in VETOES:
        if f"v_{src}" in verdicts.columns:
            p[np.nan_to_num(verdicts[f"v_{src}"].to_numpy(dtype=float), nan=0.0) < 0] = 0.0
    return np.where(p >= 0.5, CONTENT, NOISE).astype(object), np.maximum(p, 1.0 - p)


def refine(verdicts: pd.DataFrame, p: np.ndarray, iters: int = 10) -> np.ndarray:
    """Dawid & Skene's EM over one dataset's nodes, started from the weighted vote ``p``:
    each source's sensitivity and specificity on *this* site are estimated from the current
    P(content) (abstentions, 0, ignored), then P(content) is recomputed from them. A source
    that says "noise" everywhere on a site (an article extractor on a result list) thereby
    loses its weight there, without any gold."""
    cols = [c for c in verdicts.columns if c.startswith("v_")]
    V = np.nan_to_num(verdicts[cols].to_numpy(dtype=float), nan=0.0)
    eps = 1e-3
    for _ in range(iters):
        prior = float(np.clip(p.mean(), eps, 1 - eps))
        z = np.full(len(p), math.log(prior / (1 - prior)))
        for j in range(V.shape[1]):
            pos, neg = V[:, j] > 0, V[:, j] < 0
            sens = (p[pos].sum() + 1) / (p[pos | neg].sum() + 2)
            spec = ((1 - p)[neg].sum() + 1) / ((1 - p)[pos | neg].sum() + 2)
            sens, spec = min(max(sens, eps), 1 - eps), min(max(spec, eps), 1 - eps)
            z[pos] += math.log(sens / (1 - spec))
            z[neg] += math.log((1 - sens) / spec)
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return p


def _vote(labels: np.ndarray) -> np.ndarray:
    labels = np.asarray(labels, dtype=object)
    return np.where(labels == CONTENT, 1.0, np.where(labels == NOISE, -1.0, 0.0))


def _records_vote(rows: pd.DataFrame) -> np.ndarray:
    """+1 on nodes with >= 2 same-tag siblings whose subtrees hold text (a repeated record)."""
    parent = rows["parent"].to_numpy()
    chars = rows["chars"].to_numpy()
    key = pd.Series(list(zip(parent, rows["tag"])))
    with_text = pd.Series(chars > 0)
    same = with_text.groupby(key).transform("sum").to_numpy()
    return np.where((parent >= 0) & (chars > 0) & (same >= 3), 1.0, 0.0)


def node_words(walk) -> dict[int, list[str]]:
    """Each row's own words (``hwnoise.text.tokenize``), for the rows with own text."""
    from hwnoise.text import tokenize

    words: dict[int, list[str]] = {}
    for node, text in walk.segments:
        words.setdefault(node, []).extend(tokenize(text))
    return words


def page_phrases(walk, words: dict[int, list[str]] | None = None) -> dict[int, list[int]]:
    """Per row with at least two word trigrams of own text, the hashes of those trigrams
    (``words``: ``node_words(walk)`` when the caller has it)."""
    out = {}
    for node, w in (node_words(walk) if words is None else words).items():
        if len(w) > PHRASE_N:
            out[node] = [hash(g) for g in zip(*(w[i:] for i in range(PHRASE_N)))]
    return out


def phrases_vote(grams: list[dict[int, list[int]]], sizes: list[int]) -> list[np.ndarray]:
    """The ``phrases`` verdicts of every page (``grams`` from ``page_phrases``, ``sizes`` its
    row count): -1 where >= PHRASE_SHARE of a row's trigrams occur on >= PHRASE_PAGES of the
    pages (and on at least two), 0 elsewhere."""
    doc_freq: dict[int, int] = {}
    for page in grams:
        for h in {h for hs in page.values() for h in hs}:
            doc_freq[h] = doc_freq.get(h, 0) + 1
    need = max(2.0, PHRASE_PAGES * len(grams))
    out = []
    for page, n in zip(grams, sizes):
        v = np.zeros(n)
        for node, hs in page.items():
            if 0 <= node < n and np.mean([doc_freq[h] >= need for h in hs]) >= PHRASE_SHARE:
                v[node] = -1.0
        out.append(v)
    return out


def masked_texts(words: dict[int, list[str]], own: Sequence[str]) -> set[str]:
    """The page's own texts (``node_words``) with its own submitted words masked ("No results
    for _ in _")."""
    mine = set(own)
    return {" ".join("_" if w in mine else w for w in ws) for ws in words.values() if ws}


def noresult_signature(probes: list[set[str]], pages: list[set[str]]) -> set[str]:
    """The texts every probe shows (``masked_texts``) and fewer than ``NORESULT_PAGES`` of the
    crawled ``pages`` show (those are the site's template, on result pages too)."""
    if not probes or not pages:
        return set()
    common = set.intersection(*probes)
    freq: dict[str, int] = {}
    for keys in pages:
        for k in keys & common:
            freq[k] = freq.get(k, 0) + 1
    return {k for k in common if freq.get(k, 0) < NORESULT_PAGES * len(pages)}


def noresult_votes(signature: set[str], pages: list[set[str]], sizes: list[int]) -> list[np.ndarray]:
    """-1 on every node of a page that shows at least ``NORESULT_SHARE`` of the signature (and
    at least two of its texts), 0 elsewhere."""
    need = max(2.0, NORESULT_SHARE * len(signature))
    return [np.full(n, -1.0 if signature and len(keys & signature) >= need else 0.0)
            for keys, n in zip(pages, sizes)]


def probe_texts(ds: Dataset) -> list[set[str]]:
    """``masked_texts`` of each probe of ``ds`` (``probes/``), walked as pages are."""
    from hwnoise.features.build import own_terms
    from hwnoise.features.walk import walk_page

    out = []
    for rec, body in ds.probes():
        own = own_terms(rec.get("fields") or [])
        try:
            walk = walk_page(body, (), http_charset=rec.get("http_charset"), own_terms=own)
        except Exception as exc:  # noqa: BLE001 - a probe that cannot be walked is left out
            info(f"label: probe {ds.probe_path(rec['submission'])} left out: {type(exc).__name__}: {exc}")
            continue
        out.append(masked_texts(node_words(walk), own))
    return out


def page_verdicts(page, walk, *, externals: dict | None = None, general=None) -> pd.DataFrame:
    """One column ``v_SOURCE`` per source that reads one page alone, for the rows of ``walk``
    (the dataset-level ones, sitelevel, phrases and noresult, are added by ``auto_label`` once
    every page is read)."""
    from hwnoise.extractors.cetd import cetd_labels

    rows = walk.rows
    out = pd.DataFrame(index=range(len(rows)))
    out["v_query"] = np.where(rows["query_score"].to_numpy() > 0, 1.0, 0.0)
    out["v_cetd"] = _vote(cetd_labels(walk))
    out["v_records"] = _records_vote(rows)
    html = None
    for name, method in (externals or {}).items():
        if html is None:
            html = page.read_html()
        try:
            text = method.extract_html(html, http_charset=page.http_charset) or ""
        except Exception:  # noqa: BLE001 - one extractor failing on a page is no opinion
            out[f"v_{name}"] = 0.0
            continue
        out[f"v_{name}"] = _vote(label_page(walk, text))
    if general is not None:
        out["v_general"] = _vote(general.node_labels(page, walk))
    return out


def _general_method(wanted: bool):
    if not wanted:
        return None
    try:
        from hwnoise.extractors.model import ModelMethod, load_model

        return ModelMethod(load_model("general"))
    except Exception as exc:  # noqa: BLE001 - the general model may not be shipped yet
        info(f"label: the general model is not available ({type(exc).__name__}: {exc}); "
             "labelling without it (--no-general silences this)")
        return None


def _externals(names: Sequence[str] | None) -> dict:
    from hwnoise.extractors.external import available
    from hwnoise.extractors.registry import get_method

    have = available()
    names = have if names is None else [n for n in names if n in have]
    return {n: get_method(n) for n in names if n in EXTERNAL}


@dataclass
class _Evidence:
    """What the walk over the pages collects: each page's frame (its rows and the verdicts of
    the sources that read one page alone) and the evidence of the dataset-level votes."""

    frames: list[pd.DataFrame] = field(default_factory=list)
    records: list = field(default_factory=list)  # SiteLevel's light record of each page
    grams: list[dict[int, list[int]]] = field(default_factory=list)  # ``page_phrases``
    texts: list[set[str]] = field(default_factory=list)  # ``masked_texts``, with probes only

    def add(self, page, walk, record, frame: pd.DataFrame, sources: set[str],
            probes: list[set[str]]) -> None:
        """Keep one page's frame, SiteLevel record, phrases and own texts."""
        from hwnoise.features.build import own_terms

        if record is not None:
            self.records.append(record)
        self.frames.append(frame)
        words = node_words(walk) if "phrases" in sources or probes else None
        if "phrases" in sources:
            self.grams.append(page_phrases(walk, words))
        if probes:
            self.texts.append(masked_texts(words, own_terms(page.fields)))


def _page_sources(opts: AutoOptions, sources: set[str]) -> tuple[dict, object]:
    """The external extractors and the general model the one-page sources ask."""
    externals = _externals(opts.external) if sources & set(EXTERNAL) else {}
    externals = {k: v for k, v in externals.items() if k in sources}
    return externals, _general_method(opts.general and "general" in sources)


def _page_frame(page, walk, verdicts: pd.DataFrame, now: str) -> pd.DataFrame:
    """One page's rows of the table (not combined yet) with its one-page ``verdicts``."""
    df = pd.DataFrame({"page": page.id, "node": walk.rows["node"].to_numpy(dtype=np.int64),
                       "xpath": walk.rows["xpath"].to_numpy(), "label": None,
                       "source": "auto", "confidence": np.nan, "set_by": "auto",
                       "time": now, "checked": False})
    return pd.concat([df, verdicts], axis=1)


def _walk_pages(ds: Dataset, pages: list, sources: set[str], externals: dict, general,
                probes: list[set[str]], progress: bool) -> _Evidence:
    """Walk every page once, collecting its frame and evidence; a bad page is skipped."""
    from hwnoise.extractors.base import walk_of
    from hwnoise.extractors.sitelevel import SiteLevel

    use_sitelevel = "sitelevel" in sources
    ev, now = _Evidence(), now_iso()
    pbar = bar(total=len(pages), desc=f"label {ds.name}", unit="page") if progress else None
    try:
        for page in pages:  # one walk a page; SiteLevel keeps only its light record of it
            if pbar is not None:
                pbar.update(1)
            try:
                with open(page.html_path, "rb") as fh:  # as the features stage skips it, not labelled
                    why = sniff_html(fh.read(SNIFF_PREFIX))
                if why is not None:
                    print(f"hwnoise: label: skipped {page.html_path}: not HTML ({why})", file=sys.stderr)
                    continue
                walk = walk_of(page, keep_tree=use_sitelevel)
                record = SiteLevel().record(page, walk) if use_sitelevel else None
                walk.root = walk.elements = None  # the tree is not needed past the record
                v = page_verdicts(page, walk, externals=externals, general=general)
            except DatasetError:  # the dataset's own files (a corrupt features.parquet): the run's error
                raise
            except Exception as exc:  # noqa: BLE001 - one bad page never stops the run
                print(f"hwnoise: label: skipped {page.html_path}: {type(exc).__name__}: {exc}",
                      file=sys.stderr)
                continue
            ev.add(page, walk, record, _page_frame(page, walk, v, now), sources, probes)
    finally:
        if pbar is not None:
            pbar.close()
    return ev


def _add_sitelevel(frames: list[pd.DataFrame], records: list) -> None:
    """The ``sitelevel`` vote of every frame: the site's templates from all pages' records."""
    from hwnoise.extractors.sitelevel import SiteLevel

    if not records:
        return
    flags = SiteLevel().fit_records(records).training_labels()
    for f, flag in zip(frames, flags):
        f.insert(_first_vote(f), "v_sitelevel", np.where(flag, -1.0, 1.0))


def _add_phrases(frames: list[pd.DataFrame], grams: list[dict[int, list[int]]]) -> None:
    """The ``phrases`` vote of every frame: the site's phrases repeated across all pages."""
    if not grams:
        return
    for f, vote in zip(frames, phrases_vote(grams, [len(f) for f in frames])):
        f["v_phrases"] = vote


def _add_noresult(ds: Dataset, frames: list[pd.DataFrame], probes: list[set[str]],
                  texts: list[set[str]]) -> None:
    """The ``noresult`` vote of every frame: the probe texts that few pages show; one line."""
    if not texts:
        return
    signature = noresult_signature(probes, texts)
    votes = noresult_votes(signature, texts, [len(f) for f in frames])
    for f, vote in zip(frames, votes):
        f["v_noresult"] = vote
    info(f"label {ds.name}: {len(probes)} probe(s), a no-result signature of {len(signature)} "
         f"text(s); {sum(int(v[:1].sum() < 0) for v in votes)} page(s) without records")


def _combined(ds: Dataset, frames: list[pd.DataFrame], weights: dict,
              opts: AutoOptions) -> pd.DataFrame:
    """The frames (at least one) as one table with the combined labels."""
    new = pd.concat(frames, ignore_index=True)
    # the combination sees the whole dataset (which sources inform on this site)
    new["label"], new["confidence"] = combine(new, weights, opts.refine, opts.adapt_prior)
    return new


def _summary(ds: Dataset, n_pages: int, new: pd.DataFrame, table: pd.DataFrame) -> None:
    """One line: pages, nodes, content share, the sources that voted, a person's labels kept."""
    used = [c[2:] for c in new.columns if c.startswith("v_")]
    share = float((new["label"] == CONTENT).mean()) if len(new) else math.nan
    info(f"label {ds.name}: {n_pages} pages, {len(new)} nodes, content share {share:.3f}; "
         f"sources: {', '.join(used)}; {int((table['set_by'] == 'person').sum())} labels "
         f"set by a person kept -> {ds.labels_path}")


def auto_label(dataset: Dataset | str, options: AutoOptions | None = None) -> pd.DataFrame:
    """Label every node of every page of ``dataset``; returns the new table (``LABEL_COLUMNS``
    + ``v_SOURCE``), rows set by a person kept from the stored table, and writes it."""
    opts = options or AutoOptions()
    ds = dataset if isinstance(dataset, Dataset) else Dataset(dataset)
    pages = list(ds.pages())
    ds.read_labels()  # a stored table it cannot merge with is said now, not after every page is walked
    weights = opts.weights or default_weights()
    sources = set(opts.sources)
    externals, general = _page_sources(opts, sources)
    probes = probe_texts(ds) if "noresult" in sources else []
    ev = _walk_pages(ds, pages, sources, externals, general, probes, opts.progress)
    # the dataset-level votes: each is known only once every page is read
    _add_sitelevel(ev.frames, ev.records)
    _add_phrases(ev.frames, ev.grams)
    _add_noresult(ds, ev.frames, probes, ev.texts)
    if not ev.frames:  # nothing new: the stored table stays as it is (merged with itself, its
        # person rows were doubled at every such rerun)
        why = (f"none of its {len(pages)} page(s) could be labelled (each is named above)" if pages
               else "it has no pages yet ('hwnoise collect' or 'hwnoise import' them)")
        raise HwnoiseError(f"{ds.path}: nothing to label: {why}; {ds.labels_path.name} is left as it was")
    new = _combined(ds, ev.frames, weights, opts)
    table = merge_labels(ds.read_labels(), new)
    ds.write_labels(table)
    _summary(ds, len(ev.frames), new, table)
    return table


def _first_vote(frame: pd.DataFrame) -> int:
    """Where the ``v_SOURCE`` columns of a page's frame begin (``SOURCES`` order)."""
    return next((i for i, c in enumerate(frame.columns) if c.startswith("v_")), len(frame.columns))


def merge_labels(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """``new`` auto rows, plus every row of ``old`` a person set (which then wins by
    precedence); a page's ``checked`` mark is kept."""
    person = old[old["set_by"] == "person"] if len(old) else old
    if len(old):
        checked = set(old.loc[old["checked"].astype(bool), "page"])
        if checked:
            new = new.copy()
            new.loc[new["page"].isin(checked), "checked"] = True
    out = pd.concat([new, person], ignore_index=True) if len(person) else new
    for c, t in LABEL_COLUMNS.items():
        if c in out.columns and t != "object":
            out[c] = out[c].astype(t)
    return out


def recombine(table: pd.DataFrame, weights: dict, refine_iters: int = 0,
              adapt_prior: bool = True) -> pd.DataFrame:
    """The auto rows of ``table`` relabelled with other ``weights`` (sources unchanged)."""
    table = table.copy()
    auto = (table["set_by"] == "auto").to_numpy()
    lab, conf = combine(table.loc[auto], weights, refine_iters, adapt_prior)
    table.loc[auto, "label"] = lab
    table.loc[auto, "confidence"] = conf
    return table
