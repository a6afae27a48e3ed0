"""The learned model as an extraction method.

A model is made by its spec (:class:`hwnoise.training.spec.ModelSpec`); a node's feature vector is
always built by :mod:`hwnoise.features.assembly`, for training, evaluation and extraction alike.
This module only supplies what the features stage may not import, the stacked extractors
(:func:`run_extractor`), and puts the model behind the Method contract (:class:`ModelMethod`) and
behind ``hwnoise extract`` (:func:`extract_html`, :func:`extract_page`).
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hwnoise.extractors.base import (ExtractorError, WalkMethod, as_walked, markdown_from_labels, query_for,
                                      text_from_labels)
from hwnoise.features.assembly import (FeatureCache, assemble, assemble_html, assemble_page,
                                       page_context_names, stack_names, unknown_features,
                                       walk_nodes)
from hwnoise.features.columns import CONTENT, LABEL, NOISE

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk
    from hwnoise.training.model import NoiseModel
    from hwnoise.training.spec import ModelSpec

__all__ = ["ModelMethod", "run_extractor", "check_stack", "extract_html", "extract_page", "extract_records", "records_html", "page_predictions", "label_with_model",
           "label_with_proba", "predict_labels", "load_model", "check_page_model", "training_rows", "make", "text_from_labels", "query_for"]

_TEXT_CACHE: "OrderedDict[tuple[str, str], str]" = OrderedDict()
_TEXT_CACHE_SIZE = 20_000
_METHODS: dict[str, Any] = {}


def check_stack(names: Sequence[str]) -> None:
    """Raise a clear ExtractorError (naming the extra to install) for a stacked extractor that
    is not installed."""
    from hwnoise.extractors import external

    for name in names:
        if name in external.PACKAGES and name not in external.available():
            raise ExtractorError(
                f"the model stacks {name!r}, which needs the package {external.PACKAGES[name]!r}: "
                "pip install 'hwnoise[extractors]'")


def run_extractor(name: str, html: bytes | str, http_charset: str | None = None, *,
                  walk: "PageWalk | None" = None) -> str:
    """What extractor ``name`` keeps of a page (the stacker of :mod:`hwnoise.features.assembly`);
    cached by the page's bytes, so cross-validation folds run each extractor once per page. An
    extractor of walks (``extract_walk``: CETD) reads ``walk``, the page's walk, when given."""
    check_stack([name])
    html, http_charset = as_walked(html, http_charset, walk)
    data = html.encode("utf-8", "surrogatepass") if isinstance(html, str) else html
    key = (name, hashlib.sha1(data + b"\0" + (http_charset or "").encode()).hexdigest())
    hit = _TEXT_CACHE.get(key)
    if hit is not None:
        _TEXT_CACHE.move_to_end(key)
        return hit
    method = _METHODS.get(name)
    if method is None:
        from hwnoise.extractors.registry import get_method

        method = _METHODS[name] = get_method(name)
    if walk is not None and hasattr(method, "extract_walk"):
        text = method.extract_walk(walk) or ""
    else:
        text = method.extract_html(html, http_charset=http_charset) or ""
    _TEXT_CACHE[key] = text
    if len(_TEXT_CACHE) > _TEXT_CACHE_SIZE:
        _TEXT_CACHE.popitem(last=False)
    return text


def training_rows(pages: Sequence["Page"], cache: FeatureCache | None = None,
                  features: Sequence[str] = (), *, progress: bool = False) -> pd.DataFrame:
    """The assembled, labelled rows of ``pages`` (and of no other page)."""
    from hwnoise.progress import progress as bar
    from hwnoise.training.rows import RowCollector
    from hwnoise.training.train import fit_columns

    cache = cache or FeatureCache()
    feats = list(features)
    keep = fit_columns(feats)
    parts = RowCollector()  # no second copy of the rows when they are joined
    for page in (bar(pages, desc="features", unit="page") if progress else pages):
        rows = cache.page_rows(page)
        if rows is None or feats:
            rows = assemble_page(page, feats, stacker=run_extractor, cache=cache).rows
            rows = rows[[c for c in keep if c in rows.columns]]  # what a fit reads, no text/xpath
        parts.add(rows)
    df = parts.frame()
    if df.empty and not len(df.columns):
        return df
    if LABEL in df:
        labelled = df[LABEL].notna()
        if not labelled.all():  # (a copy only when rows go)
            df = df[labelled].reset_index(drop=True)
    return df


class ModelMethod(WalkMethod):
    """hwnoise's learned model behind the Method contract, made by a :class:`ModelSpec`.

    Options: ``preset`` (thesis, site, general, records, auto), and any spec field to override it
    (``classifier``, ``features``, ``stack``, ``context``, ``page_context``, ``threshold``,
    ``cut``, ``params``); other keyword options are classifier parameters.
    """

    name = "model"
    needs_training = True

    def __init__(self, model: "NoiseModel | None" = None, *, spec: "ModelSpec | None" = None,
                 preset: str | None = None, name: str | None = None, **options: Any) -> None:
        from hwnoise.training.spec import ModelSpec, preset_spec, with_overrides

        super().__init__()
        self.model = model
        known = set(ModelSpec.__dataclass_fields__) - {"preset"}
        overrides = {k: options.pop(k) for k in list(options) if k in known}
        options.pop("inner_folds", None)
        if options:  # anything else is a classifier parameter
            overrides["params"] = {**overrides.get("params", {}), **options}
        self._auto = False
        self._overrides: dict[str, Any] = {}
        if model is not None:
            spec = getattr(model, "spec", None) or spec
        if spec is None:
            base = preset_spec(preset) if preset else ModelSpec()
            if base.preset == "auto":  # resolved by the training pages (one site or many)
                self._auto, self._overrides, spec = True, overrides, base
            else:
                spec = with_overrides(base, overrides, where="model option")
        self.spec = spec
        if not self._auto:
            check_stack(self.spec.stack)
        self.cache = FeatureCache()
        self._warned = False
        if name:
            self.name = name
        if model is not None:
            self.needs_training = False

    # -- what tests and callers read --------------------------------------------
    @property
    def features(self) -> list[str]:
        if self.model is not None:
            return list(self.model.features)
        return [] if self._auto else self.spec.columns()

    @property
    def threshold(self) -> float | None:
        return getattr(self.model, "threshold", None) if self.model is not None else None

    def _fresh(self) -> "NoiseModel":
        """An unfitted model of this spec."""
        from hwnoise.training.model import NoiseModel

        return NoiseModel(self.spec.classifier, self.spec.columns(), params=self.spec.params or None)

    # -- training ------------------------------------------------------------------
    def _resolve(self, n_sites: int, records: bool = False) -> None:
        if self._auto:
            from hwnoise.training.spec import resolve_preset

            self.spec = resolve_preset(self.spec, n_sites, self._overrides, records=records)
            check_stack(self.spec.stack)

    def fit(self, pages: Sequence["Page"]) -> "ModelMethod":
        """Train a fresh model on the assembled, labelled rows of ``pages`` only."""
        self._resolve(len({p.site for p in pages}),
                      any(d.has_records() for d in {p.dataset.path: p.dataset for p in pages}.values()))
        df = training_rows(pages, self.cache, self.spec.columns())
        if df.empty:
            raise ExtractorError("model: the training pages have no labelled rows (no gold text?)")
        self.fit_rows(df, assembled=True, consume=True)  # the rows are ours: given up to the fit
        if self.spec.regions:  # the region scorer, on the inner CV's labels of these pages
            from hwnoise.extractors.region_fit import model_region_scorer

            scorer = model_region_scorer(self.model, df, pages)
            self.model.regions = scorer.to_dict() if scorer is not None else None
        self.model.inner_oof = None
        return self

    def fit_rows(self, df: pd.DataFrame, *, assembled: bool = False, consume: bool = False) -> "ModelMethod":
        """Train on labelled feature rows. Rows that were not assembled from pages (the thesis
        protocol's node split) get the columns computable from rows alone; stacked columns
        need the pages. ``consume``: the fit deletes the feature columns from ``df`` as it
        fills its matrix (the caller no longer needs them), so they are not held twice."""
        from hwnoise.features.assembly import add_context, add_page_context
        from hwnoise.training.spec import fit_spec

        if self._auto:
            self._resolve(df["site"].nunique() if "site" in df else 1)
        feats = self.spec.columns()
        if not assembled:
            missing_stack = [f for f in stack_names(feats) if "stack_" + f not in df.columns]
            if missing_stack:
                raise ExtractorError(f"model: the rows lack the stacked column(s) {', '.join(missing_stack)}; "
                                     "stacking needs the pages (use --protocol pages, cv or cross-site)")
            keys = [c for c in ("dataset", "page") if c in df.columns]
            groups = [g for _, g in df.groupby(keys, sort=False)] if keys else [df]
            need_page = any(f not in df.columns for f in page_context_names(feats))
            parts = []
            for g in groups:
                g = g.reset_index(drop=True)
                if need_page:  # no HTML here: the class/id columns go in as missing values
                    g = add_page_context(g, None)
                parts.append(add_context(g, feats))
            df = pd.concat(parts, ignore_index=True)
        self.model = fit_spec(self.spec, df, consume=consume)
        return self

    # -- prediction ------------------------------------------------------------------
    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        return self.node_predictions(page, walk, proba=False)[0]

    def node_predictions(self, page: "Page", walk: "PageWalk", *, proba: bool = True,
                         records: bool = False) -> tuple:
        """``(labels, content probability)`` of every walker row (``predict_labels``); the
        probabilities only when ``proba`` and the classifier gives them, else None; with
        ``records`` also the page's records (rows), grouped once."""
        if self.model is None:
            raise ExtractorError("model: not fitted; train it first or pass --model")
        got = assemble_page(page, self.model.features, stacker=run_extractor, cache=self.cache, walk=walk)
        if got.missing and not self._warned:
            from hwnoise.progress import info

            info(f"model: {page.dataset.path}: no {', '.join(got.missing)} for page {page.id} "
                 "(taken as missing; run 'hwnoise features' on the dataset for dataset-level columns)")
            self._warned = True
        return predict_labels(self.model, got.rows, walk, proba=proba, records=records)


def on_walk_rows(labels, p, rows: pd.DataFrame, walk: "PageWalk") -> tuple:
    """The labels (and probabilities, or None) of a page's assembled ``rows`` spread over every
    walker row: the rows a render hides are noise, at probability 0."""
    at = walk_nodes(rows, walk)
    if at is not None and len(at) != len(walk.rows):
        full = np.full(len(walk.rows), NOISE, dtype=object)
        full[at] = labels
        labels = full
        if p is not None:
            p_full = np.zeros(len(walk.rows))
            p_full[at] = p
            p = p_full
    return labels, p


def predict_labels(model: "NoiseModel", rows: pd.DataFrame, walk: "PageWalk", *,
                   proba: bool = False, records: bool = False) -> tuple:
    """The model's "S"/"N" label of every walker row from the page's assembled ``rows`` and,
    with ``proba``, its content probability (``NoiseModel.predict_with_proba``: one pass of the
    classifier; None when it gives none). Rows of a rendered dataset cover only what the
    browser shows: what it hides is noise, at probability 0. With ``records`` a third value:
    the page's records as lists of rows (``extractors.records.record_rows``, with the model's
    region scorer if it has one), grouped once, here. A spec with ``content_from`` "records"
    makes the content the rows of those records (``extractors.records.records_content``)."""
    from_records = getattr(getattr(model, "spec", None), "content_from", "nodes") == "records"
    group = records or from_records
    labels, p = on_walk_rows(*model.predict_with_proba(rows, proba=(proba or group) and len(rows) > 0),
                             rows, walk)
    recs: list[list[int]] = []
    if group and len(labels):
        from hwnoise.extractors.records import record_rows, records_content
        from hwnoise.extractors.regions import scorer_of

        recs = record_rows(walk, labels, p, scorer=scorer_of(model))
        if from_records:  # the spec's content_from: the content is the records' rows
            labels = records_content(walk, labels, recs)
    out = (labels, p if proba else None)
    return (*out, recs) if records else out


def model_query(model: "NoiseModel") -> list[str]:
    """The query terms a saved model carries (its domain query)."""
    return list(model.query_terms())


def label_with_model(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                     query: str | Sequence[str] | None = None) -> tuple["PageWalk", np.ndarray]:
    """``(walk, labels)``: a bare page's walk and the model's "S"/"N" label of every row."""
    walk, labels, _, _, _ = _label(model, html, http_charset=http_charset, query=query)
    return walk, labels


def label_with_proba(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                     query: str | Sequence[str] | None = None
                     ) -> tuple["PageWalk", np.ndarray, np.ndarray | None]:
    """``(walk, labels, proba)``: ``label_with_model`` and the model's content probability of
    every row (None when its classifier gives none)."""
    walk, labels, proba, _, _ = _label(model, html, http_charset=http_charset, query=query, proba=True)
    return walk, labels, proba


def _label(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
           query: str | Sequence[str] | None = None, proba: bool = False, records: bool = False
           ) -> tuple["PageWalk", np.ndarray, np.ndarray | None, list[str], list]:
    """``(walk, labels, proba, missing, records)``: also the content probabilities (with
    ``proba``), the model features the page could not give, and (with ``records``) the page's
    records as rows (``predict_labels``; else an empty list).

    The page is walked with the model's domain query unless ``query`` is given (a string is
    split into words by the one tokeniser); the given query is also the page's own terms.
    """
    from hwnoise.text import tokenize

    if query is None:
        terms, own = model_query(model), []
    else:
        terms = tokenize(query) if isinstance(query, str) else list(query)
        own = list(terms)
    got = assemble_html(html, model.features, query=terms, own_terms=own, stacker=run_extractor,
                        http_charset=http_charset)
    if len(got.rows) == 0:
        return got.walk, np.zeros(0, dtype=object), None, got.missing, []
    labels, p, *recs = predict_labels(model, got.rows, got.walk, proba=proba, records=records)
    return got.walk, labels, p, got.missing, (recs[0] if recs else [])


def content_text(walk: "PageWalk", labels: np.ndarray, markdown: bool = False) -> str:
    """The content text of labelled rows: lines (``text_from_labels``), or with ``markdown``
    Markdown (``markdown_from_labels``); "" for a page of no rows."""
    return (markdown_from_labels if markdown else text_from_labels)(walk, labels)


def extract_html(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                 query: str | Sequence[str] | None = None, markdown: bool = False) -> tuple[str, list[str]]:
    """Content text of a bare page (``content_text``) and the model features it could not give."""
    walk, labels, _, missing, _ = _label(model, html, http_charset=http_charset, query=query)
    return content_text(walk, labels, markdown), missing


def extract_with_model(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                       query: str | Sequence[str] | None = None, markdown: bool = False) -> str:
    """Content text of one bare page with a trained model (``content_text``)."""
    return extract_html(model, html, http_charset=http_charset, query=query, markdown=markdown)[0]


def records_html(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                 query: str | Sequence[str] | None = None, page: str = "page",
                 hidden: bool = True) -> tuple[list[dict], list[str]]:
    """The data records of a bare page (``extract_records``) and the model features it could not
    give, as ``extract_html`` gives them beside the text."""
    from hwnoise.extractors.records import records_json

    walk, labels, proba, missing, recs = _label(model, html, http_charset=http_charset, query=query,
                                                proba=True, records=True)
    return records_json(page, html, walk, labels, proba, http_charset=http_charset, records=recs,
                        hidden=hidden), missing


def extract_records(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                    query: str | Sequence[str] | None = None, page: str = "page",
                    hidden: bool = True) -> list[dict]:
    """The data records of one bare page with a trained model, as the JSON objects ``extract
    --records`` writes (``page`` names the page in them; ``hidden``: with the records the page
    hides, ``records.with_hidden``)."""
    return records_html(model, html, http_charset=http_charset, query=query, page=page, hidden=hidden)[0]


def page_predictions(model: "NoiseModel", page: "Page", cache: FeatureCache | None = None,
                     query: str | Sequence[str] | None = None, *, proba: bool = False,
                     records: bool = False) -> tuple:
    """``(walk, labels, proba)`` of a dataset's page: walked as the features stage walks it,
    with its stored rows (dataset-level columns) when the dataset has them; ``query`` replaces
    the dataset's query; the probabilities only with ``proba``; with ``records`` a fourth
    value, the page's records as rows (``predict_labels``)."""
    from hwnoise.features.walk import walk_page
    from hwnoise.text import tokenize

    if query is not None:
        terms = tokenize(query) if isinstance(query, str) else list(query)
        walk = walk_page(page.read_html(), terms, http_charset=page.http_charset, own_terms=terms)
        got = assemble(walk.rows, walk, page.read_html(), model.features, stacker=run_extractor,
                       http_charset=page.http_charset)
    else:
        got = assemble_page(page, model.features, stacker=run_extractor, cache=cache)
    if len(got.rows) == 0:
        return (got.walk, np.zeros(0, dtype=object), None) + (([],) if records else ())
    return (got.walk, *predict_labels(model, got.rows, got.walk, proba=proba, records=records))


def extract_page(model: "NoiseModel", page: "Page", cache: FeatureCache | None = None,
                 query: str | Sequence[str] | None = None, markdown: bool = False) -> str:
    """Content text of a dataset's page (``page_predictions``, ``content_text``)."""
    walk, labels, _ = page_predictions(model, page, cache, query)
    return content_text(walk, labels, markdown)


def load_model(path: str | Path = "general", *, allow_pickle: bool = False) -> "NoiseModel":
    """A saved model: the file or folder ``hwnoise train --out`` wrote, or ``"general"`` (the
    model the package ships)."""
    from hwnoise.training.model import NoiseModel

    model = NoiseModel.load(path, allow_pickle=allow_pickle)
    check_stack(stack_names(model.features))
    check_page_model(model, str(path))
    _check_regions(model, str(path))
    return model


def _check_regions(model: "NoiseModel", where: str) -> None:
    """The region scorer a model carries (model.json's ``regions``) rebuilt now, so that a damaged
    one is one line naming the file when the model is loaded, not a line naming no file when
    ``--records`` first needs it (and text extraction ignoring it without a word)."""
    from hwnoise.errors import HwnoiseError
    from hwnoise.extractors.regions import scorer_of
    from hwnoise.training.model import ModelError

    try:
        scorer_of(model)
    except HwnoiseError as exc:
        raise ModelError(f"{where}: key 'regions': {exc}") from None


def check_page_model(model: "NoiseModel", where: str = "the model") -> None:
    """A ``ModelError`` for a model that cannot label a page's nodes: one whose classes are not
    the node labels (S noise, N content) or none of whose features hwnoise computes (a model of
    another tool's ARFF file, which ``hwnoise train`` fits and scores, but which would label
    every node of a page from missing values alone)."""
    from hwnoise.training.model import ModelError

    fitted = getattr(model.estimator, "classes_", None)
    classes = [] if fitted is None else [str(c) for c in fitted]
    foreign = [c for c in classes if c not in (NOISE, CONTENT)]
    unknown = unknown_features(model.features)
    why = []
    if foreign:
        why.append(f"its classes are {', '.join(map(repr, classes))}, not the node labels 'S' (noise) "
                   "and 'N' (content)")
    if unknown and len(unknown) == len(model.features):
        why.append(f"its features ({', '.join(map(repr, unknown))}) are none hwnoise computes from a page")
    if why:
        raise ModelError(f"{where}: this model cannot label the nodes of a page: {'; and '.join(why)}. "
                         "It was trained on another tool's ARFF file? Score such a model on that "
                         "kind of file (hwnoise train FILE.arff --test OTHER.arff); train a page "
                         "model on a dataset folder (hwnoise train DATASET)")


def make(model: "NoiseModel | str | Path | None" = None, **options: Any) -> ModelMethod:
    """Factory for the registry: ``model`` may be a NoiseModel or a saved model's path."""
    if isinstance(model, (str, Path)):
        model = load_model(model, allow_pickle=bool(options.pop("allow_pickle", False)))
    return ModelMethod(model, **options)
