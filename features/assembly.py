"""Feature assembly: the ONE place a node's feature vector is built, for training, evaluation
and extraction alike.

A node's row starts from the page walk (``hwnoise.features.walk``), or from the dataset's stored
``features.parquet`` rows when a dataset is at hand (they add the dataset-level ``sitelevel``),
and then gets, as the model's feature list asks:

- ``stack_NAME``: the share of the node's words that extractor ``NAME`` keeps (stacking). The
  extractors live above this stage, so they run through a *stacker* passed in: a callable
  ``stacker(name, html, http_charset, walk=walk) -> text``
  (``hwnoise.extractors.model.run_extractor``); an extractor that works on the walk (CETD) reads
  the page's walk instead of walking the page again.
- ``ctx_parent_X`` / ``ctx_grand_X``: column X at the parent and the grandparent.
- the page-context columns of :mod:`hwnoise.features.context` (record structure, position,
  per-page z-scores, class/id words).
- the record-structure columns ``rs_*`` of :mod:`hwnoise.features.record_struct` (feature
  group ``records``), from the walk's arrays.

A feature the page cannot give (``sitelevel`` on a bare page) goes in as a missing value, and
:func:`assemble` says which ones did.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hwnoise.errors import HwnoiseError
from hwnoise.features.columns import LABEL

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["STACK_PREFIX", "CONTEXT_PREFIXES", "CONTEXT_BASE", "Stacker", "FeatureCache",
           "Assembled", "assemble", "assemble_page", "assemble_html", "stack_share", "stack_names",
           "context_features", "add_context", "page_context_names", "add_page_context",
           "walk_dataset_page", "labelled_rows", "walk_nodes", "record_struct_names",
           "add_record_struct", "unknown_features", "context_base", "stale_columns", "check_table_columns"]

STACK_PREFIX = "stack_"
#: Context features: a column's value at the parent and at the grandparent of each node.
CONTEXT_PREFIXES = ("ctx_parent_", "ctx_grand_")
CONTEXT_BASE = ("link_density", "ctd", "sitelevel", "sibling_same_tag", "chars")

#: ``stacker(name, html, http_charset, walk=walk) -> text``: runs extractor ``name`` on a page
#: (``walk``: the page's walk, which an extractor of walks may use instead of walking again).
Stacker = Callable[..., str]


def stack_names(features: Sequence[str]) -> list[str]:
    """The extractors a feature list stacks (``stack_NAME`` -> NAME)."""
    return [f[len(STACK_PREFIX):] for f in features if f.startswith(STACK_PREFIX)]


def page_context_names(features: Sequence[str]) -> list[str]:
    """The page-context columns a feature list holds."""
    from hwnoise.features.context import CONTEXT_FEATURES

    return [f for f in features if f in CONTEXT_FEATURES]


def record_struct_names(features: Sequence[str]) -> list[str]:
    """The record-structure columns a feature list holds."""
    from hwnoise.features.record_struct import RECORD_FEATURES

    return [f for f in features if f in RECORD_FEATURES]


def add_record_struct(rows: pd.DataFrame, walk: "PageWalk") -> pd.DataFrame:
    """``rows`` (one page) with the record-structure columns (missing values when the rows do
    not line up with the walk)."""
    from hwnoise.features.record_struct import RECORD_FEATURES, record_struct

    at = walk_nodes(rows, walk)
    if at is None:
        return rows.assign(**{c: np.nan for c in RECORD_FEATURES})
    cols = record_struct(walk)
    return rows.assign(**{c: cols[c].to_numpy()[at] for c in RECORD_FEATURES})


def context_features(base: Sequence[str]) -> list[str]:
    """The parent/grandparent columns of ``base`` columns (see :func:`add_context`)."""
    return [prefix + f for f in base for prefix in CONTEXT_PREFIXES]


def context_base(name: str) -> str:
    """The column a parent/grandparent context feature is computed from (``ctx_parent_X``: ``X``);
    ``name`` itself for any other feature."""
    return next((name[len(p):] for p in CONTEXT_PREFIXES if name.startswith(p)), name)


def unknown_features(features: Sequence[str]) -> list[str]:
    """The ``features`` that no stage of hwnoise computes (neither the walk, the dataset's table,
    ``hwnoise render``, the record structure, the page context, a stacked extractor nor a
    parent/grandparent column of one): a model trained on another tool's ARFF file has only such,
    and on a page every one of them would be a missing value."""
    from hwnoise.features.columns import ALL_FEATURES
    from hwnoise.features.context import CONTEXT_FEATURES
    from hwnoise.features.record_struct import RECORD_FEATURES
    from hwnoise.features.rendered import RENDER_FEATURES
    from hwnoise.features.walk import ROW_COLUMNS

    known = {*ALL_FEATURES, *ROW_COLUMNS, *RENDER_FEATURES, *RECORD_FEATURES, *CONTEXT_FEATURES} - {"text", "xpath"}

    def computed(name: str) -> bool:
        base = context_base(name)
        return base in known or (base.startswith(STACK_PREFIX) and len(base) > len(STACK_PREFIX))

    return [f for f in features if not computed(f)]


def stale_columns(features: Sequence[str], have: Sequence[str]) -> list[str]:
    """The columns a feature table of columns ``have`` lacks and ``features`` read (directly or
    as parent/grandparent context) that hwnoise's features stage always stores (the walk's
    columns and the dataset-level ones; the rendered ones only after ``hwnoise render``): a
    table without one was written by an older hwnoise."""
    from hwnoise.features.columns import DATASET_FEATURES
    from hwnoise.features.walk import ROW_COLUMNS

    stored = (set(ROW_COLUMNS) | set(DATASET_FEATURES)) - set(have)
    return [b for b in dict.fromkeys(map(context_base, features)) if b in stored]


def check_table_columns(ds, features: Sequence[str], have: Sequence[str] | None = None) -> None:
    """A ``DatasetError`` naming ``ds``'s feature table, the columns ``features`` need that it
    lacks (``stale_columns``; ``have``: its columns, read from its schema when not given) and the
    fix, rather than a model that takes them as missing on every row."""
    from hwnoise.dataset import DatasetError

    if have is None:
        if not ds.has_features():
            return
        have = ds.feature_schema().names
    lacking = stale_columns(features, have)
    if lacking:
        raise DatasetError(f"{ds.features_path}: no column {', '.join(lacking)}, which the model needs "
                           f"(a table written by an older hwnoise); run 'hwnoise features {ds.path}' again")


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
        raise HwnoiseError("stacking needs the walk's subtree ends (PageWalk.last)")
    cs_own = np.concatenate([[0], np.cumsum(own)])
    cs_kept = np.concatenate([[0], np.cumsum(kept)])
    idx = np.arange(n)
    sub_own = cs_own[last + 1] - cs_own[idx]
    sub_kept = cs_kept[last + 1] - cs_kept[idx]
    share = np.where(own > 0, kept / np.maximum(own, 1), sub_kept / np.maximum(sub_own, 1))
    return np.where((own > 0) | (sub_own > 0), share, 0.0).astype(float)


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
        base = context_base(f)
        if base not in rows.columns:
            cols[f] = np.nan
            continue
        vals = np.append(pd.to_numeric(rows[base], errors="coerce").to_numpy(dtype=float), np.nan)
        cols[f] = vals[up] if f.startswith("ctx_parent_") else vals[up2]  # index -1: the NaN at the end
    return rows.assign(**cols)


def add_page_context(rows: pd.DataFrame, html: bytes | str | None, *,
                     http_charset: str | None = None, walk: "PageWalk | None" = None) -> pd.DataFrame:
    """``rows`` (one page) with the page-context columns (replacing any); without ``html`` the
    class/id columns are missing values. A ``walk`` of ``html`` that kept its tree gives the
    class and id of the elements without a second walk."""
    from hwnoise.features.context import add_context_features

    return add_context_features(rows.reset_index(drop=True), html, http_charset=http_charset, walk=walk)


def walk_nodes(rows: pd.DataFrame, walk: "PageWalk") -> np.ndarray | None:
    """The walk row of each of ``rows``: all of them in order for the walk's own rows,
    ``walk_node`` for rows ``hwnoise render`` thinned; None when they do not line up."""
    if "walk_node" in rows.columns:
        at = rows["walk_node"].to_numpy(np.int64)
        return at if len(at) == 0 or (at.min() >= 0 and at.max() < len(walk.rows)) else None
    return np.arange(len(rows)) if len(rows) == len(walk.rows) else None


@dataclass
class Assembled:
    """One page's assembled rows (aligned with ``walk`` through :func:`walk_nodes`), its walk,
    and the model features the page could not give (filled with missing values)."""

    rows: pd.DataFrame
    walk: "PageWalk"
    missing: list[str] = field(default_factory=list)


def assemble(rows: pd.DataFrame, walk: "PageWalk", html: bytes | str | None,
             features: Sequence[str], *, stacker: Stacker | None = None,
             http_charset: str | None = None) -> Assembled:
    """``rows`` (the walk's rows or a dataset's stored rows of the page) with every column of
    ``features``: stacked shares, page context, parent/grandparent context; what cannot be
    computed is a missing value, listed in ``.missing``."""
    features = list(features)
    rows = rows.reset_index(drop=True)
    names = stack_names(features)
    if names:
        if stacker is None:
            raise HwnoiseError(f"the model stacks {', '.join(names)}: its features need an extractor "
                               "runner (hwnoise.extractors.model.run_extractor)")
        at = walk_nodes(rows, walk)
        cols = {}
        for name in names:
            if html is None or at is None:
                cols[STACK_PREFIX + name] = np.nan
                continue
            text = stacker(name, html, http_charset, walk=walk)
            cols[STACK_PREFIX + name] = stack_share(walk, text or "")[at]
        rows = rows.assign(**cols)
    if page_context_names(features):
        rows = add_page_context(rows, html, http_charset=http_charset, walk=walk)
    if record_struct_names(features):
        rows = add_record_struct(rows, walk)
    rows = add_context(rows, features)
    missing = [f for f in features if f not in rows.columns]
    if missing:
        rows = rows.assign(**{f: np.nan for f in missing})
    return Assembled(rows, walk, missing)


def assemble_html(html: bytes | str, features: Sequence[str], *, query: Sequence[str] = (),
                  own_terms: Sequence[str] = (), stacker: Stacker | None = None,
                  http_charset: str | None = None) -> Assembled:
    """A bare page's assembled rows: walked with ``query`` (and ``own_terms``)."""
    from hwnoise.features.walk import walk_page

    walk = walk_page(html, list(query), http_charset=http_charset, own_terms=list(own_terms),
                     keep_tree=bool(page_context_names(features)))  # the class/id columns read its elements
    return assemble(walk.rows, walk, html, features, stacker=stacker, http_charset=http_charset)


class FeatureCache:
    """Each dataset's ``features.parquet`` handed out a page at a time (a pandas DataFrame made
    for that page only), read a part at a time: the first use of a dataset reads only its
    ``page`` column to learn which part (file and row group) holds each page; a page's part is
    then read whole, as Arrow, and kept while it is among the ``parts`` most recently used.
    Memory follows a few parts (the features stage writes 200 pages a part), not the dataset;
    the page indexes of at most ``datasets`` datasets are kept. A table whose pages straddle
    parts is read whole, as one part."""

    def __init__(self, datasets: int = 2, parts: int = 2) -> None:
        self.datasets = max(1, int(datasets))
        self.parts = max(1, int(parts))
        self._by_dataset: dict[Path, dict | None] = {}    # page id -> part key, per dataset
        self._units: dict[tuple, tuple] = {}             # part key -> (table, page spans)

    def _index(self, ds) -> dict | None:
        key = ds.path
        if key in self._by_dataset:
            self._by_dataset[key] = self._by_dataset.pop(key)  # most recently used last
            return self._by_dataset[key]
        index = _part_index(ds) if ds.has_features() else None
        self._by_dataset[key] = index
        while len(self._by_dataset) > self.datasets:
            gone = next(iter(self._by_dataset))
            self._by_dataset.pop(gone)
            for k in [k for k in self._units if k[0] == gone]:
                self._units.pop(k)
        return index

    def _unit(self, ds, unit: tuple) -> tuple:
        key = (ds.path, *unit)
        if key in self._units:
            self._units[key] = self._units.pop(key)
            return self._units[key]
        entry = _page_index(_read_unit(ds, unit))
        self._units[key] = entry
        if len(self._units) > self.parts:
            while len(self._units) > self.parts:
                self._units.pop(next(iter(self._units)))
            import pyarrow as pa

            pa.default_memory_pool().release_unused()  # the allocator keeps freed parts otherwise
        return entry

    def page_rows(self, page: "Page") -> pd.DataFrame | None:
        index = self._index(page.dataset)
        if index is None or page.id not in index:
            return None
        table, span = self._unit(page.dataset, index[page.id])
        at = span.get(page.id)
        if at is None:
            return None
        # a copy of the page's rows: a slice would hand pandas views of the part's buffers
        # (string columns stay Arrow-backed), keeping the whole part alive with the frame
        rows = table.take(np.arange(at[0], at[1])).to_pandas()
        if at[2]:  # the page's rows are not in node order in the table
            rows = rows.sort_values("node", kind="stable")
        return rows.reset_index(drop=True)


def _part_index(ds) -> dict:
    """``{page id: part}``, a part being ``(file, row group)``; every page ``("*", -1)`` (the
    whole table) when a page's rows lie in more than one part."""
    import pyarrow.parquet as pq

    where: dict = {}
    for f in ds.feature_parts():
        try:
            pf = pq.ParquetFile(f)
            groups = [pf.read_row_group(g, columns=["page"]).column("page") for g in range(pf.num_row_groups)]
        except (OSError, ValueError) as exc:
            raise ds.unreadable_features(f, exc) from None
        for g, pages in enumerate(groups):
            for pid in pages.cast("string").unique().to_pylist():
                pid = str(pid)
                if where.setdefault(pid, (str(f), g)) != (str(f), g):
                    return {p: ("*", -1) for p in where}
    return where


def _read_unit(ds, unit: tuple):
    """One part of a dataset's table as Arrow, in the schema the whole table is read with."""
    import pyarrow.parquet as pq

    if unit[0] == "*":
        return ds.read_features(arrow=True)
    schema = ds.feature_schema()
    try:
        table = pq.ParquetFile(unit[0]).read_row_group(unit[1])
    except (OSError, ValueError) as exc:
        raise ds.unreadable_features(Path(unit[0]), exc) from None
    if not table.schema.equals(schema, check_metadata=False):
        table = table.select([n for n in schema.names if n in table.column_names]).cast(
            _schema_of(schema, table))
    return table


def _schema_of(schema, table):
    """``schema`` restricted to the columns ``table`` has (the types the whole read gives)."""
    import pyarrow as pa

    return pa.schema([schema.field(n) for n in schema.names if n in table.column_names])


def _page_index(table) -> tuple:
    """``(table, {page id: (start, stop, needs sorting)})``; the table sorted by page when a
    page's rows are not contiguous (the features stage writes them contiguous, in node order)."""
    import pyarrow as pa

    if table.num_rows == 0:
        return table, {}
    pages = table.column("page").cast("string").combine_chunks().dictionary_encode()
    codes = pages.indices.to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if len(starts) != len(pages.dictionary):  # a page in several runs: sort by page, keep order
        order = np.argsort(codes, kind="stable")
        table = table.take(pa.array(order))
        codes = codes[order]
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    stops = np.append(starts[1:], len(codes))
    node = table.column("node").to_numpy() if "node" in table.column_names else None
    names = pages.dictionary.to_pylist()
    span = {}
    for a, b in zip(starts.tolist(), stops.tolist()):
        unsorted = node is not None and bool((np.diff(node[a:b]) < 0).any())
        span[str(names[codes[a]])] = (a, b, unsorted)
    return table.combine_chunks(), span


def walk_dataset_page(page: "Page", *, keep_tree: bool = False) -> "PageWalk":
    """Walk a dataset's page as the features stage does (domain query, the page's own terms);
    ``keep_tree`` as ``walk_page``'s."""
    from hwnoise.features.build import own_terms
    from hwnoise.features.walk import walk_page

    try:
        terms = list(page.dataset.query_terms())
    except Exception:  # noqa: BLE001 - a page without a readable query is walked without one
        terms = []
    return walk_page(page.read_html(), terms, http_charset=page.http_charset,
                     own_terms=own_terms(page.fields), keep_tree=keep_tree)


def labelled_rows(page: "Page", walk: "PageWalk") -> pd.DataFrame:
    """A page's walk rows with its labels (``features.labels.page_labels``: gold records > gold
    text > stored labels; None where nothing applies) and its dataset/site/page keys."""
    from hwnoise.features.labels import page_labels

    rows = walk.rows.copy()
    stored = None
    try:
        table = page.dataset.read_labels()
        if table is not None and len(table):
            stored = table[table["page"].astype(str) == str(page.id)]
    except (AttributeError, HwnoiseError):
        stored = None
    records = page.read_records() if hasattr(page, "read_records") else None
    rows[LABEL] = page_labels(walk, page.read_gold(), html=page.read_html() if records is not None else None,
                              records=records, http_charset=page.http_charset, stored=stored)
    rows.insert(0, "page", page.id)
    rows.insert(0, "site", page.site)
    rows.insert(0, "dataset", page.dataset.name)
    return rows


def assemble_page(page: "Page", features: Sequence[str], *, stacker: Stacker | None = None,
                  cache: FeatureCache | None = None, walk: "PageWalk | None" = None) -> Assembled:
    """A dataset page's assembled rows: its stored rows (they carry ``sitelevel`` and labels)
    when they match the walk, else the walk's rows with gold labels."""
    if walk is None:  # the class/id columns read the kept tree's elements: no second walk
        walk = walk_dataset_page(page, keep_tree=bool(page_context_names(features)))
    stored = cache.page_rows(page) if cache is not None else None
    if stored is not None:
        check_table_columns(page.dataset, features, stored.columns)
    if stored is None or walk_nodes(stored, walk) is None:
        stored = labelled_rows(page, walk)
    html = page.read_html() if (stack_names(features) or page_context_names(features)) else None
    return assemble(stored, walk, html, features, stacker=stacker, http_charset=page.http_charset)
