"""The learned model as an extraction method: a site's model labels a page's nodes, and the
content text is the own text of the nodes labelled content (``text_from_labels``).

``fit`` trains a :class:`hwnoise.training.model.NoiseModel` on the feature rows of the
training pages only (from ``features.parquet`` when the dataset has one, else from a fresh
walk and gold labels); ``node_labels`` predicts on the rows of the page being scored.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hwnoise.extractors.base import ExtractorError, WalkMethod, query_for, text_from_labels
from hwnoise.features.columns import LABEL, NOISE

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk
    from hwnoise.training.model import NoiseModel


class FeatureCache:
    """Each dataset's ``features.parquet``, read once and split by page."""

    def __init__(self) -> None:
        self._by_dataset: dict[Path, dict[str, pd.DataFrame] | None] = {}

    def page_rows(self, page: "Page") -> pd.DataFrame | None:
        key = page.dataset.path
        if key not in self._by_dataset:
            ds = page.dataset
            if ds.has_features():
                df = ds.read_features()
                self._by_dataset[key] = {str(pid): g.sort_values("node").reset_index(drop=True)
                                         for pid, g in df.groupby("page", sort=False)}
            else:
                self._by_dataset[key] = None
        table = self._by_dataset[key]
        if table is None:
            return None
        return table.get(page.id)


def rows_from_walk(page: "Page", walk: "PageWalk") -> pd.DataFrame:
    """A page's feature rows with gold labels, made from its walk (when no parquet holds them)."""
    from hwnoise.features.labels import label_page

    rows = walk.rows.copy()
    gold = page.read_gold()
    rows[LABEL] = label_page(walk, gold) if gold is not None else None
    rows.insert(0, "page", page.id)
    rows.insert(0, "site", page.site)
    rows.insert(0, "dataset", page.dataset.name)
    return rows


def training_rows(pages: Sequence["Page"], cache: FeatureCache | None = None) -> pd.DataFrame:
    """The labelled feature rows of ``pages`` (and of no other page)."""
    from hwnoise.extractors.base import walk_of

    cache = cache or FeatureCache()
    parts = []
    for page in pages:
        rows = cache.page_rows(page)
        if rows is None:
            rows = rows_from_walk(page, walk_of(page))
        parts.append(rows)
    if not parts:
        return pd.DataFrame()
    df = pd.concat(parts, ignore_index=True)
    if LABEL in df:
        df = df[df[LABEL].notna()].reset_index(drop=True)
    return df


def _new_model(classifier: str, features: str | Sequence[str] | None, **options: Any) -> "NoiseModel":
    """A fresh NoiseModel; ``features`` is a list or a spec ("thesis", "extended", "a,b,c")."""
    from hwnoise.training.model import NoiseModel

    kw: dict[str, Any] = {"classifier": classifier, **options}
    if features is not None:
        kw["features"] = features if isinstance(features, str) else list(features)
    return NoiseModel(**kw)


STACK_PREFIX = "stack_"
_STACK_CACHE: dict[tuple[str, str], np.ndarray] = {}


def stack_share(walk: "PageWalk", text: str) -> np.ndarray:
    """Per row, the share of its words that ``text`` keeps (LCS-aligned, as labels are made):
    of its own words where it has some, else of the words in its subtree (0 without words)."""
    from hwnoise.features.labels import aligned_words

    n = len(walk.rows)
    if n == 0:
        return np.zeros(0)
    own, kept = aligned_words(walk, text)
    last = np.asarray(getattr(walk, "last", []), dtype=np.int64)
    if len(last) != n:  # pragma: no cover - every walk carries ``last``
        raise ExtractorError("stacking needs the walk's subtree ends (PageWalk.last)")
    cs_own = np.concatenate([[0], np.cumsum(own)])
    cs_kept = np.concatenate([[0], np.cumsum(kept)])
    idx = np.arange(n)
    sub_own = cs_own[last + 1] - cs_own[idx]
    sub_kept = cs_kept[last + 1] - cs_kept[idx]
    share = np.where(own > 0, kept / np.maximum(own, 1), sub_kept / np.maximum(sub_own, 1))
    return np.where((own > 0) | (sub_own > 0), share, 0.0).astype(float)


def stack_columns(walk: "PageWalk", html: bytes | str, names: Sequence[str], *,
                  http_charset: str | None = None, key: str | None = None) -> dict[str, np.ndarray]:
    """``stack_NAME`` columns: what each external extractor ``NAME`` keeps of every node
    (stacking, as the best ensemble of Bevendorff et al. 2023 does)."""
    from hwnoise.extractors.registry import get_method

    out = {}
    for name in names:
        ck = (key, name) if key else None
        if ck and ck in _STACK_CACHE and len(_STACK_CACHE[ck]) == len(walk.rows):
            out[STACK_PREFIX + name] = _STACK_CACHE[ck]
            continue
        method = get_method(name)
        text = method.extract_html(html, http_charset=http_charset)
        col = stack_share(walk, text)
        if ck:
            _STACK_CACHE[ck] = col
        out[STACK_PREFIX + name] = col
    return out


def _stack_names(features: Sequence[str]) -> list[str]:
    return [f[len(STACK_PREFIX):] for f in features if f.startswith(STACK_PREFIX)]


#: Context features: a column's value at the parent and at the grandparent of each node.
CONTEXT_PREFIXES = ("ctx_parent_", "ctx_grand_")
CONTEXT_BASE = ("link_density", "ctd", "sitelevel", "sibling_same_tag", "chars")


def context_features(base: Sequence[str]) -> list[str]:
    """The context columns for ``base`` columns (see :func:`add_context`)."""
    return [prefix + f for f in base for prefix in CONTEXT_PREFIXES]


def add_context(rows: pd.DataFrame, features: Sequence[str]) -> pd.DataFrame:
    """Add the ``ctx_parent_X`` / ``ctx_grand_X`` columns that ``features`` asks for, from one
    page's rows (``parent`` indexes rows; body is its own parent)."""
    wanted = [f for f in features if f.startswith(CONTEXT_PREFIXES) and f not in rows.columns]
    if not wanted or len(rows) == 0:
        return rows
    n = len(rows)
    parent = rows["parent"].to_numpy(dtype=np.int64)
    if "node" in rows.columns:  # parent holds node ids: map them to positions (a subset may lack some)
        node = rows["node"].to_numpy(dtype=np.int64)
        pos = np.full(int(max(node.max(), parent.max(), 0)) + 1, -1, dtype=np.int64)
        pos[node] = np.arange(n)
        parent = np.where(parent >= 0, pos[np.maximum(parent, 0)], -2)
    else:
        parent = np.where(parent >= 0, parent, -2)
    # -2: body (its own parent); -1: a parent not among the rows (value unknown)
    up = np.where(parent == -2, np.arange(n), parent)
    up2 = np.where(up >= 0, up[np.maximum(up, 0)], -1)
    cols = {}
    for f in wanted:
        prefix = next(p for p in CONTEXT_PREFIXES if f.startswith(p))
        base = f[len(prefix):]
        if base not in rows.columns:
            cols[f] = np.nan
            continue
        vals = np.append(pd.to_numeric(rows[base], errors="coerce").to_numpy(dtype=float), np.nan)
        cols[f] = vals[up] if prefix == "ctx_parent_" else vals[up2]  # index -1: the NaN at the end
    return rows.assign(**cols)


_PAGE_CONTEXT_CACHE: dict[str, pd.DataFrame] = {}


def _page_context_names(features: Sequence[str]) -> list[str]:
    from hwnoise.features.context import CONTEXT_FEATURES

    return [f for f in features if f in CONTEXT_FEATURES]


def page_context_columns(rows: pd.DataFrame, html: bytes | str | None, *, http_charset: str | None = None,
                         key: str | None = None) -> pd.DataFrame:
    """``rows`` with :data:`hwnoise.features.context.CONTEXT_FEATURES` (record structure,
    position, per-page z-scores, class/id tokens), cached per page ``key``."""
    from hwnoise.features.context import CONTEXT_FEATURES, context_columns

    cached = _PAGE_CONTEXT_CACHE.get(key) if key else None
    if cached is None or len(cached) != len(rows):
        cached = context_columns(rows.reset_index(drop=True), html, http_charset=http_charset)
        if key:
            _PAGE_CONTEXT_CACHE[key] = cached
    rows = rows.drop(columns=[c for c in CONTEXT_FEATURES if c in rows.columns])
    return rows.assign(**{c: cached[c].to_numpy() for c in CONTEXT_FEATURES})


class ModelMethod(WalkMethod):
    """hwnoise's learned model (C4.5 by default) behind the Method contract."""

    name = "model"
    needs_training = True

    def __init__(self, model: "NoiseModel | None" = None, *, classifier: str = "j48",
                 features: str | Sequence[str] | None = None, name: str | None = None,
                 stack: str | Sequence[str] = (), context: bool = False, page_context: bool = False,
                 threshold: float | str | None = None, inner_folds: int = 3, **options: Any) -> None:
        super().__init__()
        self.model = model
        self.classifier = classifier
        self.features = features if (features is None or isinstance(features, str)) else list(features)
        self.stack = [s for s in (stack.split(",") if isinstance(stack, str) else stack) if s]
        if self.stack or context or page_context:
            from hwnoise.features.context import CONTEXT_FEATURES
            from hwnoise.training.model import resolve_features

            feats = resolve_features(self.features) + [STACK_PREFIX + s for s in self.stack]
            if context:
                feats += context_features([STACK_PREFIX + s for s in self.stack] + list(CONTEXT_BASE))
            if page_context:
                feats += [f for f in CONTEXT_FEATURES if f not in feats]
            self.features = feats
        #: probability of content (N) above which a node is content (None: the classifier's own
        #: call; "inner": chosen on the training pages by an inner cross-validation grouped by site)
        self.inner = isinstance(threshold, str) and threshold.strip().lower() == "inner"
        self.threshold = None if (threshold is None or self.inner) else float(threshold)
        self.inner_folds = int(inner_folds)
        self.options = options
        self.cache = FeatureCache()
        self._warned = False
        if name:
            self.name = name
        if model is not None:
            self.needs_training = False

    def _with_stack(self, page: "Page", rows: pd.DataFrame, walk: "PageWalk | None" = None) -> pd.DataFrame:
        """``rows`` with the stacked and context columns the model's features ask for."""
        features = (getattr(self.model, "features", None) if self.model is not None else None) \
            or (self.features if isinstance(self.features, list) else [])
        names = _stack_names(features)
        if names:
            from hwnoise.extractors.base import walk_of

            walk = walk if walk is not None else walk_of(page)
            at = _walk_nodes(rows, walk)
            if at is None:
                rows = rows.assign(**{STACK_PREFIX + n: np.nan for n in names})
            else:
                cols = stack_columns(walk, page.read_html(), names, http_charset=page.http_charset,
                                     key=str(page.html_path))
                rows = rows.assign(**{k: np.asarray(v)[at] for k, v in cols.items()})
        if _page_context_names(features):
            rows = page_context_columns(rows, page.read_html(), http_charset=page.http_charset,
                                        key=str(page.html_path))
        return add_context(rows, features)

    def fit(self, pages: Sequence["Page"]) -> "ModelMethod":
        """Train a fresh model on the labelled rows of ``pages`` (the training pages only)."""
        if isinstance(self.features, list) and any(
                f.startswith((STACK_PREFIX,) + CONTEXT_PREFIXES) or f.startswith("ctx_")
                for f in self.features):
            parts = []
            for page in pages:
                one = training_rows([page], self.cache)
                if len(one):
                    parts.append(self._with_stack(page, one))
            df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        else:
            df = training_rows(pages, self.cache)
        if df.empty:
            raise ExtractorError("model: the training pages have no labelled rows (no gold text?)")
        return self.fit_rows(df)

    def fit_rows(self, df: pd.DataFrame) -> "ModelMethod":
        """Train a fresh model on labelled feature rows (the thesis protocol's node split)."""
        feats = self.features if isinstance(self.features, list) else []
        missing_stack = [f for f in feats if f.startswith(STACK_PREFIX) and f not in df.columns]
        if missing_stack:
            raise ExtractorError(f"model: the rows lack the stacked column(s) {', '.join(missing_stack)}; "
                                 "stacking needs the pages (use --protocol pages, cv or cross-site)")
        if any(f.startswith(CONTEXT_PREFIXES) and f not in df.columns for f in feats):
            keys = [c for c in ("dataset", "page") if c in df.columns]
            df = (pd.concat([add_context(g.reset_index(drop=True), feats)
                             for _, g in df.groupby(keys, sort=False)], ignore_index=True)
                  if keys else add_context(df, feats))
        missing_ctx = [f for f in _page_context_names(feats) if f not in df.columns]
        if missing_ctx:  # no HTML here: the class/id columns go in as missing values
            from hwnoise.features.context import add_context_features

            keys = [c for c in ("dataset", "page") if c in df.columns]
            df = (pd.concat([add_context_features(g.reset_index(drop=True))
                             for _, g in df.groupby(keys, sort=False)], ignore_index=True)
                  if keys else add_context_features(df))
        if self.inner:
            self.threshold = inner_threshold(df, self._fresh, folds=self.inner_folds)
        self.model = self._fresh()
        self.model.fit(df)
        if self.threshold is not None:
            self.model.threshold = self.threshold  # saved with the model, used by extract
        return self

    def _fresh(self) -> "NoiseModel":
        """An unfitted model with this method's classifier, features and options."""
        return _new_model(self.classifier, self.features, **self.options)

    def rows_for(self, page: "Page", walk: "PageWalk") -> pd.DataFrame:
        """The rows the model predicts on: the dataset's stored rows for this page when they
        match the walk (they carry dataset-level features), else the walk's own rows."""
        stored = self.cache.page_rows(page)
        if stored is not None and _walk_nodes(stored, walk) is not None:
            return self._with_stack(page, stored, walk)
        rows = self._with_stack(page, walk.rows, walk)
        missing = [f for f in getattr(self.model, "features", []) if f not in rows.columns]
        if missing:
            # a page the stored table lacks (or a table older than the walk): the dataset-level
            # columns are unknown here and go in as missing values
            if not self._warned:
                from hwnoise.progress import info

                info(f"model: {page.dataset.path}: features.parquet does not match the page "
                     f"{page.id}; {', '.join(missing)} taken as missing (rerun 'hwnoise features')")
                self._warned = True
            rows = rows.assign(**{f: np.nan for f in missing})
        return rows

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        if self.model is None:
            raise ExtractorError("model: not fitted; train it first or pass --model")
        rows = self.rows_for(page, walk)
        if self.threshold is None:
            labels = np.asarray(self.model.predict(rows), dtype=object)
        else:
            labels = labels_at_threshold(self.model, rows, self.threshold)
        at = _walk_nodes(rows, walk)
        if at is None or len(at) == len(walk.rows):
            return labels
        # rows of a rendered dataset: what the browser hides has no row and is noise
        full = np.full(len(walk.rows), NOISE, dtype=object)
        full[at] = labels
        return full


def _walk_nodes(rows: pd.DataFrame, walk: "PageWalk") -> np.ndarray | None:
    """The walk row of each of ``rows``: all of them in order for the walk's own rows,
    ``walk_node`` for rows ``hwnoise render`` thinned; None when they do not line up."""
    if "walk_node" in rows.columns:
        at = rows["walk_node"].to_numpy(np.int64)
        return at if len(at) == 0 or (at.min() >= 0 and at.max() < len(walk.rows)) else None
    return np.arange(len(rows)) if len(rows) == len(walk.rows) else None


THRESHOLDS = np.round(np.arange(0.05, 0.81, 0.05), 2)


def page_char_f1(df: pd.DataFrame, p_content: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Per threshold, the mean over pages of the F1 of content characters (each node weighted by
    its own characters): a stand-in for text F1 that needs no walk."""
    w = pd.to_numeric(df["own_chars"], errors="coerce").fillna(0).to_numpy(dtype=float) \
        if "own_chars" in df else np.ones(len(df))
    gold = (df[LABEL].astype(str).to_numpy() == "N")
    keys = [c for c in ("dataset", "page") if c in df]
    page = (df.groupby(keys, sort=False).ngroup().to_numpy(dtype=np.int64) if keys
            else np.zeros(len(df), dtype=np.int64))
    npages = int(page.max()) + 1 if len(page) else 0
    g = np.bincount(page, weights=w * gold, minlength=npages)
    out = []
    for t in thresholds:
        pred = p_content >= t
        tp = np.bincount(page, weights=w * (pred & gold), minlength=npages)
        pp = np.bincount(page, weights=w * pred, minlength=npages)
        f1 = np.where(g + pp > 0, 2 * tp / np.maximum(g + pp, 1e-9), 0.0)
        out.append(f1[g > 0].mean() if (g > 0).any() else 0.0)
    return np.asarray(out)


def inner_threshold(df: pd.DataFrame, new_model, *, folds: int = 3,
                    thresholds: Sequence[float] = THRESHOLDS) -> float:
    """The threshold on the probability of content that scores best (:func:`page_char_f1`) on
    out-of-fold predictions of an inner cross-validation over ``df`` grouped by site (by page
    when there is one site): only the training rows are ever looked at."""
    from sklearn.model_selection import GroupKFold

    from hwnoise.features.columns import CONTENT

    df = df[df[LABEL].isin(["S", "N"])].reset_index(drop=True)
    key = "site" if "site" in df and df["site"].nunique() >= folds else "page"
    groups = df[key].astype(str).to_numpy() if key in df else np.arange(len(df))
    k = min(folds, len(np.unique(groups)))
    if k < 2:
        return 0.5
    p = np.zeros(len(df))
    for tr, te in GroupKFold(n_splits=k).split(df, groups=groups):
        m = new_model()
        m.fit(df.iloc[tr])
        est = m.estimator
        classes = [str(c) for c in est.classes_]
        p[te] = est.predict_proba(m.matrix(df.iloc[te]))[:, classes.index(CONTENT)] \
            if CONTENT in classes else 0.0
    scores = page_char_f1(df, p, thresholds)
    best = np.flatnonzero(scores >= scores.max() - 1e-12)
    chosen = float(np.asarray(thresholds)[best[np.argmin(np.abs(np.asarray(thresholds)[best] - 0.5))]])
    from hwnoise.progress import info

    info(f"model: inner threshold {chosen:.2f} (page char F1 {scores.max():.3f}; "
         f"0.50 gives {page_char_f1(df, p, [0.5])[0]:.3f})")
    return chosen


def labels_at_threshold(model: "NoiseModel", rows: pd.DataFrame, threshold: float) -> np.ndarray:
    """"N" where the model's probability of content is at least ``threshold``, else "S"."""
    from hwnoise.features.columns import CONTENT, NOISE

    if len(rows) == 0:
        return np.array([], dtype=object)
    est = model.estimator
    if not hasattr(est, "predict_proba"):
        raise ExtractorError(f"model: {type(est).__name__} gives no probabilities; drop threshold")
    proba = est.predict_proba(model.matrix(rows))
    classes = [str(c) for c in est.classes_]
    p_content = proba[:, classes.index(CONTENT)] if CONTENT in classes else np.zeros(len(rows))
    return np.where(p_content >= threshold, CONTENT, NOISE).astype(object)


def model_query(model: "NoiseModel") -> list[str]:
    """The query terms a saved model carries (its domain query)."""
    q = getattr(model, "query_terms", None)
    if callable(q):
        return list(q())
    return [t["term"] if isinstance(t, dict) else str(t) for t in (getattr(model, "query", None) or [])]


def extract_with_model(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                       query: str | Sequence[str] | None = None) -> str:
    """Content text of one page with a trained model (``hwnoise extract``).

    The page is walked with the model's domain query unless ``query`` is given (a string is
    split into words by the one tokeniser).
    """
    walk, labels = label_with_model(model, html, http_charset=http_charset, query=query)
    return text_from_labels(walk, labels) if len(walk.rows) else ""


def label_with_model(model: "NoiseModel", html: bytes | str, *, http_charset: str | None = None,
                     query: str | Sequence[str] | None = None) -> tuple:
    """``(walk, labels)``: the page's walk and the model's "S"/"N" label of every row."""
    from hwnoise.features.walk import walk_page
    from hwnoise.text import tokenize

    if query is None:
        terms = model_query(model)
        own: list[str] = []
    else:
        terms = tokenize(query) if isinstance(query, str) else list(query)
        own = list(terms)
    walk = walk_page(html, terms, http_charset=http_charset, own_terms=own)
    if len(walk.rows) == 0:
        return walk, np.zeros(0, dtype=object)
    rows = walk.rows
    names = _stack_names(getattr(model, "features", []))
    if names:  # a stacked model: run the extractors it was trained with
        rows = rows.assign(**stack_columns(walk, html, names, http_charset=http_charset))
    if _page_context_names(getattr(model, "features", [])):
        rows = page_context_columns(rows, html, http_charset=http_charset)
    rows = add_context(rows, getattr(model, "features", []))
    return walk, np.asarray(model.predict(rows), dtype=object)


def load_model(path: str | Path, *, allow_pickle: bool = False) -> "NoiseModel":
    """A saved model (the file or the folder ``hwnoise train --out`` wrote)."""
    from hwnoise.training.model import NoiseModel

    return NoiseModel.load(path, allow_pickle=allow_pickle)


def make(model: "NoiseModel | str | Path | None" = None, **options: Any) -> ModelMethod:
    """Factory for the registry: ``model`` may be a NoiseModel or a saved model's path."""
    if isinstance(model, (str, Path)):
        model = load_model(model, allow_pickle=bool(options.pop("allow_pickle", False)))
    return ModelMethod(model, **options)


__all__ = ["ModelMethod", "extract_with_model", "text_from_labels", "training_rows", "make",
           "load_model", "query_for"]
