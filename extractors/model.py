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
from hwnoise.features.columns import LABEL

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Dataset, Page
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


class ModelMethod(WalkMethod):
    """hwnoise's learned model (C4.5 by default) behind the Method contract."""

    name = "model"
    needs_training = True

    def __init__(self, model: "NoiseModel | None" = None, *, classifier: str = "j48",
                 features: str | Sequence[str] | None = None, name: str | None = None,
                 **options: Any) -> None:
        super().__init__()
        self.model = model
        self.classifier = classifier
        self.features = features if (features is None or isinstance(features, str)) else list(features)
        self.options = options
        self.cache = FeatureCache()
        self._warned = False
        if name:
            self.name = name
        if model is not None:
            self.needs_training = False

    def fit(self, pages: Sequence["Page"]) -> "ModelMethod":
        """Train a fresh model on the labelled rows of ``pages`` (the training pages only)."""
        df = training_rows(pages, self.cache)
        if df.empty:
            raise ExtractorError("model: the training pages have no labelled rows (no gold text?)")
        return self.fit_rows(df)

    def fit_rows(self, df: pd.DataFrame) -> "ModelMethod":
        """Train a fresh model on labelled feature rows (the thesis protocol's node split)."""
        self.model = _new_model(self.classifier, self.features, **self.options)
        self.model.fit(df)
        return self

    def rows_for(self, page: "Page", walk: "PageWalk") -> pd.DataFrame:
        """The rows the model predicts on: the dataset's stored rows for this page when they
        match the walk (they carry dataset-level features), else the walk's own rows."""
        stored = self.cache.page_rows(page)
        if stored is not None and len(stored) == len(walk.rows):
            return stored
        rows = walk.rows
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
        return np.asarray(self.model.predict(self.rows_for(page, walk)), dtype=object)


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
        return ""
    labels = np.asarray(model.predict(walk.rows), dtype=object)
    return text_from_labels(walk, labels)


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
