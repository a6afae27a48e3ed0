"""The features stage: every page of a dataset -> ``DATASET/features.parquet``.

One row per shown element of every page (``hwnoise.features.walk``), with
``dataset, site, page`` first, the walk's columns, ``sitelevel`` and ``label``
(``hwnoise.features.labels``; None where the page has no gold text).

Pages stream one by one (over ``workers`` processes, results kept in page
order) into part files of a ``features.parquet/`` folder, which pandas,
pyarrow, Dask, Spark and DuckDB read as one table. The folder is built beside
the dataset and moved into place at the end, so a killed run leaves the
previous table as it was.

``sitelevel`` (seed 000's SiteLevel frequency) is the one dataset-level column:
the share of the dataset's pages that hold an element with the same own text
at the same tag path (the xpath without positions, e.g. ``/html/body/div/ul/li``).
A first pass collects the (path, text) keys of every page; the part files get
the column when the pass ends.

A page that fails (unreadable file, anything the walk raises) is reported on
stderr as one line naming the file and the reason, and skipped; the run goes
on. Query terms come from the dataset's domain query (``Dataset.query_terms``),
a page's own terms from its submission's field names and values, tokenised.
"""
from __future__ import annotations

import errno
import functools
import operator
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from hwnoise.dataset import Dataset, kept_without_a_page, left_by_a_dead_run
from hwnoise.decode import sniff_html
from hwnoise.errors import HwnoiseError
from hwnoise.features import native
from hwnoise.features.columns import CONTENT, LABEL
from hwnoise.features.labels import page_label_column, page_labels
from hwnoise.features.measures import Utf8Column
from hwnoise.features.record_gold import read_records
from hwnoise.features.walk import ROW_COLUMNS, TermMatcher, walk_page
from hwnoise.progress import bar, info
from hwnoise.text import tokenize

if TYPE_CHECKING:  # pandas loads only where a DataFrame is made (start-up of hwnoise features)
    import pandas as pd

__all__ = ["build_features", "page_rows", "own_terms", "SCHEMA", "FEATURE_COLUMNS"]

_INT, _FLOAT, _STR = pa.int64(), pa.float64(), pa.string()
_TYPES = {
    "node": _INT, "parent": _INT, "xpath": _STR, "tag": _STR, "chars": _INT, "tags": _INT,
    "link_chars": _INT, "link_tags": _INT, "td": _FLOAT, "ctd": _FLOAT, "density_sum": _FLOAT,
    "query_score": _FLOAT, "matches": _INT, "distance": _INT, "link_density": _FLOAT,
    "own_chars": _INT, "tag_code": _INT, "position": _FLOAT, "chars_before": _FLOAT,
    "own_query_score": _FLOAT, "parent_ctd": _FLOAT, "children": _INT,
    "sibling_same_tag": _FLOAT, "text": _STR,
}
#: Columns of features.parquet, in order.
FEATURE_COLUMNS: list[str] = ["dataset", "site", "page", *ROW_COLUMNS, "sitelevel", LABEL]
#: The fixed Arrow schema of every part file (so parts with and without gold read as one table).
SCHEMA = pa.schema([(c, _STR if c in ("dataset", "site", "page", LABEL) else
                     (_FLOAT if c == "sitelevel" else _TYPES[c])) for c in FEATURE_COLUMNS])


def _rendered_schema() -> tuple[list[str], pa.Schema]:
    """Columns and schema when ``render.parquet`` exists: the plain ones, the row's node in the
    unrendered walk (``walk_node``, to map labels back to it) and the rendered features."""
    from hwnoise.features.rendered import RENDER_FEATURES

    cols = [*FEATURE_COLUMNS, "walk_node", *RENDER_FEATURES]
    extra = [pa.field("walk_node", pa.int64())] + [pa.field(c, _FLOAT) for c in RENDER_FEATURES]
    return cols, pa.schema(list(SCHEMA) + extra)

_PART_ROWS = 250_000
_PART_PAGES = 200


def parquet_options(schema: pa.Schema) -> dict:
    """How a part file is written: dictionary pages for the string columns only (numbers gain
    little from them) and min/max statistics for the keys readers filter on (dataset, site, page,
    node, label), the default's other statistics skip nothing in a part of one row group.
    About a third less CPU in the writer than pyarrow's defaults, for files ~10 % larger."""
    return {"use_dictionary": [f.name for f in schema if f.type == _STR],
            "write_statistics": [c for c in ("dataset", "site", "page", "node", LABEL) if c in schema.names]}


#: ``pq.write_table``'s own defaults, which ``write_parquet`` passes to pyarrow's writer class
_WRITE_DEFAULTS = dict(version="2.6", compression="snappy", writer_engine_version="V2",
                       data_page_version="1.0", use_compliant_nested_type=True, store_schema=True)


def write_parquet(table: pa.Table, path: str | os.PathLike, options: dict) -> None:
    """``pyarrow.parquet.write_table(table, path, **options)``, the same bytes
    (tests/test_features_build.py), by pyarrow's writer class (``pyarrow._parquet``) on a
    local file: importing ``pyarrow.parquet`` imports ``pyarrow.fs`` (with ``ssl`` and the S3
    module) to find the file system, 11 ms of the start-up of every ``hwnoise features``.
    ``write_table`` itself where that class is not there or does not take ``options``."""
    sink = pa.OSFile(str(path), "wb")
    try:
        try:
            from pyarrow._parquet import ParquetWriter

            writer = ParquetWriter(sink, table.schema, **_WRITE_DEFAULTS, **options)
        except (ImportError, TypeError):  # another pyarrow, or an option of write_table's own
            writer = None
        if writer is not None:
            writer.write_table(table)
            writer.close()
    except BaseException:
        sink.close()
        os.unlink(path)  # as write_table: no half-written file left
        raise
    sink.close()
    if writer is None:
        import pyarrow.parquet as pq

        pq.write_table(table, path, **options)


def own_terms(fields: Iterable[dict]) -> list[str]:
    """A page's own terms: the words of its submission's field names and values."""
    out: list[str] = []
    for f in fields or ():
        for key in ("name", "value"):
            v = f.get(key)
            if v not in (None, ""):
                out.extend(tokenize(str(v)))
    return list(dict.fromkeys(out))


def page_rows(html: bytes | str, query_terms: Iterable[str] = (), http_charset: str | None = None,
              *, own: Iterable[str] = ()) -> pd.DataFrame:
    """The feature rows of one page (``walk_page(...).rows``), for ``hwnoise features PAGE.html``."""
    return walk_page(html, query_terms, http_charset=http_charset, own_terms=own).rows


# -- one page, in a worker -----------------------------------------------------------------
_QUERY: TermMatcher | None = None

#: Why a page whose bytes are no web page (an image, a PDF, plain text) is skipped.
NOT_HTML = "skipped as no web page, whatever its name says"


def _init_worker(query_terms: list[str]) -> None:
    global _QUERY
    _QUERY = TermMatcher(query_terms)


def _init_pool_worker(query_terms: list[str]) -> None:
    """A worker process of ``workers`` > 1: the query, and rare collections for good."""
    _init_worker(query_terms)
    _GC.rare()


class _GC:
    """Fewer cyclic garbage collections while pages are walked: a walk makes hundreds of
    thousands of short-lived objects and no cycles, so the default threshold (700 new
    objects) runs a collection every few elements for nothing. ``rare`` raises it for good
    (worker processes); as a context manager it is raised for a run and restored after."""

    THRESHOLD = 100_000

    @staticmethod
    def rare() -> None:
        import gc

        gc.set_threshold(_GC.THRESHOLD, *gc.get_threshold()[1:])

    def __enter__(self):
        import gc

        self._old = gc.get_threshold()
        _GC.rare()
        return self

    def __exit__(self, *exc) -> None:
        import gc

        gc.set_threshold(*self._old)


def _page_job(job: tuple) -> tuple[str, object, str | None]:
    """Walk and label one page; returns ``(page id, (walk, labels), error)``, or with a true
    ``columns`` as the job's last item ``(page id, (columns, keys, unique keys, labelled,
    content), error)``: the page's columns as ``page_columns`` makes them, here in the worker."""
    pid, html_path, gold_path, charset, own, stored, *arrow = job  # arrow: [columns?]
    try:
        with open(html_path, "rb") as f:  # str paths, no Path objects: 13 a page were 2 % of the stage
            data = f.read()
    except OSError as exc:
        return pid, None, f"{html_path}: cannot read the page: {exc.strerror or exc}"
    why = sniff_html(data)
    if why:
        return pid, None, f"{html_path}: not HTML ({why}); {NOT_HTML}"
    try:
        to_arrow = bool(arrow and arrow[0])  # xpath and text as Arrow's buffers (no str per row)
        walk = walk_page(data, _QUERY or (), http_charset=charset, own_terms=own, utf8_columns=to_arrow)
        gold = _read_gold(gold_path) if gold_path else None
        records = _records_file(html_path)
        records = read_records(records) if os.path.isfile(records) else None
        keys = walk.site_keys  # made here, in the worker, with the walk's tag paths
        if to_arrow:  # the label column with its counts, "S"/"N" bytes where gold text alone labels
            cols = dict(walk.columns)
            cols[LABEL], labelled, content = page_label_column(walk, gold, html=data, http_charset=charset,
                                                               records=records, stored=stored)
            return pid, (page_columns(cols, SCHEMA), keys, unique_keys(keys), labelled, content), None
        labels = page_labels(walk, gold, html=data, http_charset=charset, records=records, stored=stored)
        walk.segments = []  # not needed any more: keep what crosses processes small
    except MemoryError as exc:  # what ran out, when it says (hwnoise.text.MAX_ALIGN_BYTES)
        return pid, None, f"{html_path}: out of memory while walking the page" + (f" ({exc})" if str(exc) else "")
    except Exception as exc:  # noqa: BLE001 - one bad page never stops the run
        return pid, None, f"{html_path}: {type(exc).__name__}: {exc}"
    return pid, (walk, labels), None


def _read_gold(path: str) -> str | None:
    """The gold text at ``path`` (UTF-8, errors replaced, newlines as ``Path.read_text``
    gives them), None where ``Path.exists`` would say there is none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return None
        raise


def _records_file(html_path: str) -> str:
    """``record_gold.records_path_for(html_path)`` as a str, without Path objects."""
    folder, name = os.path.split(html_path)
    return os.path.join(os.path.dirname(folder), "records", os.path.splitext(name)[0] + ".json")


def _features_batch(jobs: list[tuple], query_terms: list[str]) -> list[tuple]:
    """``_page_job`` over a batch of pages (one task on a scheduler)."""
    _init_worker(query_terms)
    with _GC():
        return [_page_job(job) for job in jobs]


def _ordered(jobs: list[tuple], workers: int, query_terms: list[str], scheduler=None,
             spill: Path | None = None) -> Iterator[tuple]:
    """Results of ``_page_job`` in job order, at most a few pages in flight per worker; on a
    ``hwnoise.scheduler.Scheduler`` (other than sync) in batches of pages, a window at a time.
    With ``spill`` (a folder), the local pool's workers write the pages' columns to Arrow IPC
    files there and send back ``_Spilled`` references in their place (``_spill_pages``)."""
    if scheduler is not None and not scheduler.inline:
        from hwnoise.scheduler import batches

        size = max(1, min(_SCHED_BATCH, -(-len(jobs) // (2 * scheduler.workers))))
        groups = batches(jobs, size)
        for window in batches(groups, 4 * scheduler.workers):
            for result in scheduler.map(_features_batch, window, list(query_terms), small=len(jobs) < 60):
                yield from result
        return
    if workers <= 1:
        _init_worker(query_terms)
        for job in jobs:
            yield _page_job(job)
        return
    from hwnoise.scheduler import pool_imap

    _warm_for_workers()
    chunks = [(jobs[k:k + _POOL_BATCH], None if spill is None else str(spill / f"task-{k:08d}.arrow"))
              for k in range(0, len(jobs), _POOL_BATCH)]
    for results in pool_imap(_page_jobs, chunks, workers=workers, window=4 * workers, alone=_pages_alone,
                             lost=_page_lost, initializer=_init_pool_worker, initargs=(list(query_terms),)):
        yield from results


def _pages_alone(chunk: tuple) -> list[tuple]:
    """A task of ``_page_jobs`` whose worker died, as one task a page, their columns pickled
    back (the dead worker's spill file, perhaps half written, is removed)."""
    jobs, spill = chunk
    if spill is not None and os.path.exists(spill):
        os.unlink(spill)
    return [([job], None) for job in jobs]


def _page_lost(piece: tuple, why: str) -> list[tuple]:
    """The result of a page whose walk kills its process on its own: a failed page."""
    job = piece[0][0]
    return [(job[0], None, f"{job[1]}: the process walking it {why} (the page alone, after a "
                           "worker of the pool died)")]


#: Pages per task of the local process pool: a task's pages go to one spill file (one record
#: batch), which the main process opens and reads. 16: the hand-over of the bench corpus's
#: 1,141 walked pages (``_spill_pages`` of every task, then ``_Batcher._part_batch`` of the
#: parts), in one process, best of 5, took 0.35 s with tasks of 8 pages, 0.28 s with 16 and
#: 0.26 s with 32; fewer tasks also mean fewer pickled calls and results.
_POOL_BATCH = 16


def _warm_for_workers() -> None:
    """Before the local pool forks its workers: load here what each worker would otherwise
    load and warm up on its own on its first page that needs it, so that the workers share
    one copy through fork instead of paying for it once each: cssselect's translator (7 ms)
    and charset-normalizer's detector (10 ms to import, 37 ms for its first guess, which
    imports some 47 codec modules), measured in a process that had imported this module.
    Only the modules and caches of pure functions are touched: no page's result changes.
    Under another start method than fork (``hwnoise.scheduler.start_method``) the workers start
    afresh: nothing is done."""
    from hwnoise.scheduler import start_method

    if start_method() != "fork":
        return
    try:  # a warm-up only: whatever fails here fails (or not) in the workers as before
        from hwnoise.decode import _detect
        from hwnoise.features.css import _xpath_of

        _xpath_of.__wrapped__("div.a > p")  # the translator loaded, the cache of selectors untouched
        _detect(_WARM_SAMPLE)
    except Exception:  # noqa: BLE001
        pass


#: Latin text in windows-1252 with enough non-ASCII bytes for charset-normalizer to run.
_WARM_SAMPLE = ("Une journée d'été à la plage, où l'on déjeune près des rochers. " * 8).encode("cp1252")


def _page_jobs(jobs: list[tuple], spill: str | None = None) -> list[tuple]:
    """``_page_job`` over a few pages (one task of the local pool); with ``spill`` (a file),
    the pages' columns go there (``_spill_pages``)."""
    results = [_page_job(job) for job in jobs]
    return results if spill is None else _spill_pages(results, spill)


#: The columns ``_Batcher`` makes itself (not in a page's columns).
_BATCHER_COLUMNS = ("dataset", "site", "page", "sitelevel")


class _Spilled:
    """Where a worker of the local pool left a page's columns (``_spill_pages``): rows
    ``offset`` to ``offset + rows`` of the one record batch of the Arrow IPC file ``path``,
    which holds ``pages`` pages (the columns of ``SCHEMA`` but the batcher's, and the rows'
    site keys as ``_key``)."""

    __slots__ = ("path", "offset", "rows", "pages")

    def __init__(self, path: str, offset: int, rows: int, pages: int):
        self.path, self.offset, self.rows, self.pages = path, offset, rows, pages


def _spill_pages(results: list[tuple], path: str) -> list[tuple]:
    """The results of ``_page_job`` with the columns of the walked pages written to one Arrow
    IPC file at ``path``, as one record batch (the pages' rows one after the other), each
    page's columns replaced by a ``_Spilled``: the columns reach the main process through the
    page cache (a memory map), not pickled through a pipe (167 MB for the bench corpus). One
    batch for the task's pages, not one a page: a batch a page cost the workers 25 Arrow
    arrays a page (0.4 s of CPU over the bench corpus) and the main process as many pieces to
    join into its parts. A page whose columns are not exactly ``SCHEMA``'s keeps them in its
    result."""
    schema, plan = _spill_layout()
    names = {c for c, _ in plan}
    kept: list[int] = []
    for k, (_pid, res, err) in enumerate(results):
        if err is not None or res is None or not isinstance(res[0], dict) or set(res[0]) != names:
            continue
        cols, n = res[0], len(res[1])
        if any(len(cols[c]) != n or isinstance(cols[c], pa.Array) and cols[c].type != typ for c, typ in plan):
            continue
        kept.append(k)
    if not kept:
        return results
    arrays = [_joined([results[k][1][0][c] for k in kept], typ) for c, typ in plan]
    arrays.append(_num_array(np.concatenate([results[k][1][1] for k in kept]), pa.uint64()))
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    with pa.BufferedOutputStream(pa.OSFile(path, "wb"), _SPILL_BUFFER) as sink, \
            pa.ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
    out, offset = list(results), 0
    for k in kept:
        pid, (_cols, keys, *rest), _err = results[k]
        out[k] = (pid, (_Spilled(path, offset, len(keys), len(kept)), None, *rest), None)
        offset += len(keys)
    return out


@functools.cache
def _spill_layout() -> tuple[pa.Schema, tuple[tuple[str, pa.DataType], ...]]:
    """The spill files' schema and ``(name, type)`` of its columns but ``_key`` (made once)."""
    fields = [f for f in SCHEMA if f.name not in _BATCHER_COLUMNS]
    return pa.schema(fields + [pa.field("_key", pa.uint64())]), tuple((f.name, f.type) for f in fields)


def _joined(pieces: list, typ: pa.DataType) -> pa.Array:
    """One Arrow array of ``typ`` of the pages' pieces of a column, one after the other
    (numpy arrays of ``typ``'s dtype, or Arrow arrays)."""
    if all(isinstance(x, np.ndarray) for x in pieces):
        return _num_array(np.concatenate(pieces) if len(pieces) > 1 else pieces[0], typ)
    arrays = [x if isinstance(x, pa.Array) else _num_array(x, typ) for x in pieces]
    return arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)


#: Bytes a worker's spill file is written in: without a buffer, every buffer of every column
#: of a page was a write of its own (50,000 writes over the bench corpus with two workers).
_SPILL_BUFFER = 1 << 20


# -- the dataset ---------------------------------------------------------------------------
_NUMPY = {_INT: np.int64, _FLOAT: np.float64, pa.int32(): np.int32, pa.uint64(): np.uint64}


def _str_array(values) -> pa.Array:
    """An Arrow string array of ``values`` (str or None = null), its buffers made here:
    ``pa.array`` would import pandas (a second of start-up) to check what it was given."""
    vals = values.tolist() if isinstance(values, np.ndarray) else list(values)
    n = len(vals)
    if native.ext is not None:  # the same buffers, compiled (features/_walk.c)
        made = native.ext.str_column(vals)
        if made is not None:
            valid, nulls, offsets, data = made
            return pa.Array.from_buffers(_STR, n, [None if valid is None else pa.py_buffer(valid),
                                                   pa.py_buffer(offsets), pa.py_buffer(data)],
                                         null_count=nulls)
    validity, nulls = None, 0
    try:  # no None (the usual case): no scan for it
        joined = "".join(vals)
    except TypeError:
        valid = np.fromiter(map(operator.is_not, vals, repeat(None)), dtype=bool, count=n)
        nulls = n - int(valid.sum())
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
        vals = [v if v is not None else "" for v in vals]
        joined = "".join(vals)
    data = joined.encode("utf-8")
    if len(data) >= 2**31 - 1:  # past 32-bit offsets: let Arrow chunk it
        return pa.array(np.array(values, dtype=object), _STR)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, vals), dtype=np.int64, count=n), out=offsets[1:])
    if len(data) != len(joined):  # not ASCII: character offsets -> byte offsets
        offsets = _utf8_offsets(joined, offsets)
    return pa.Array.from_buffers(_STR, n, [validity, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=nulls)


def _repeated_str(values: list[str], counts: np.ndarray) -> pa.Array:
    """An Arrow string array of ``values[k]`` repeated ``counts[k]`` times, made on its buffers
    (a dictionary array cast to strings would import ``pyarrow.compute``, 25 ms of start-up)."""
    enc = [v.encode("utf-8") for v in values]
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
    if n and int((lens * counts).sum()) >= 2**31 - 1:  # past 32-bit offsets: let Arrow chunk it
        return pa.array(np.repeat(np.array(values, dtype=object), counts), _STR)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.repeat(lens, counts), out=offsets[1:])
    data = b"".join(e * int(k) for e, k in zip(enc, counts.tolist()))
    return pa.Array.from_buffers(_STR, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _utf8_offsets(text: str, offsets: np.ndarray) -> np.ndarray:
    """Character offsets into ``text`` -> byte offsets into its UTF-8 encoding, in numpy:
    each code point takes 1-4 bytes by its value (over UTF-32, no per-string encoding)."""
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    width = (1 + (cp >= 0x80).view(np.uint8) + (cp >= 0x800).view(np.uint8)
             + (cp >= 0x10000).view(np.uint8))
    ends = np.zeros(len(cp) + 1, dtype=np.int32)
    np.cumsum(width, dtype=np.int32, out=ends[1:])
    return ends[offsets]


def _uint64_view(column) -> np.ndarray:
    """A uint64 column (no nulls) as numpy, on its buffer (``to_numpy`` would import pandas)."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return np.frombuffer(arr.buffers()[1], dtype=np.uint64)[arr.offset:arr.offset + len(arr)]


def _numbers(x) -> np.ndarray:
    """A page's number column as numpy: as it is, or on the buffer of an Arrow array of a
    number type without nulls (a worker's spilled batch), else by ``to_numpy``."""
    if not isinstance(x, pa.Array):
        return np.asarray(x)
    dtype = _NUMPY.get(x.type)
    if dtype is not None and x.null_count == 0:
        return np.frombuffer(x.buffers()[1], dtype=dtype)[x.offset:x.offset + len(x)]
    return np.asarray(x.to_numpy(zero_copy_only=False))


def _num_array(values: np.ndarray, typ: pa.DataType) -> pa.Array:
    """An Arrow array of a numpy array of ``typ``'s dtype, on its buffer (no pandas import)."""
    values = np.ascontiguousarray(values, dtype=_NUMPY.get(typ) or typ.to_pandas_dtype())
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])


def page_columns(columns: dict, schema: pa.Schema) -> dict:
    """One page's columns of ``schema`` as ``_Batcher`` takes them: numbers as numpy arrays,
    strings as Arrow arrays (made where the page was walked: they cross processes as buffers
    and join a part by ``concat_arrays``). ``dataset``, ``site``, ``page`` and ``sitelevel``
    are the batcher's."""
    out = {}
    for c, is_str, dtype in _column_plan(schema):
        if c not in columns:
            continue
        v = columns[c]
        if is_str:
            if isinstance(v, Utf8Column):  # made by the compiled walk: its buffers as they are
                v = pa.Array.from_buffers(_STR, len(v), [None, pa.py_buffer(v.offsets), pa.py_buffer(v.data)])
            out[c] = v if isinstance(v, pa.Array) else _str_array(v)
        else:
            out[c] = np.asarray(v).astype(dtype, copy=False)
    return out


_PLANS: dict[int, tuple[pa.Schema, list[tuple[str, bool, object]]]] = {}


def _column_plan(schema: pa.Schema) -> list[tuple[str, bool, object]]:
    """``(name, is a string, numpy dtype)`` of the fields of ``schema`` a page gives, made once
    per schema: iterating a schema makes new Field objects, and comparing types costs, for
    each of 25 columns of every page."""
    made = _PLANS.get(id(schema))
    if made is None or made[0] is not schema:
        plan = [(f.name, f.type == _STR, None if f.type == _STR else
                 (_NUMPY.get(f.type) or f.type.to_pandas_dtype()))
                for f in schema if f.name not in _BATCHER_COLUMNS]
        made = _PLANS[id(schema)] = (schema, plan)
    return made[1]


class _Batcher:
    """Pages' columns (``page_columns``) gathered into one Arrow record batch per part (typed
    columns, no per-page DataFrame), spilled to an Arrow IPC file until ``sitelevel`` is
    known; the part's site keys travel with it as an extra column. A part whose pages the
    local pool's workers have already written to files (``_Spilled``) is not spilled again:
    ``finish`` builds it from their files."""

    def __init__(self, folder: Path, columns: list[str], schema: pa.Schema, dataset: str):
        self.folder, self.columns, self.schema, self.dataset = folder, columns, schema, dataset
        # (page id, site, columns: a dict of page_columns or a _Spilled, site keys or None, rows)
        self.pages: list[tuple[str, str, dict | _Spilled, np.ndarray | None, int]] = []
        self.rows = 0
        self.spills: list[Path | list] = []  # a spilled part's file, or its pages (all _Spilled)
        self.workers_files: dict[str, list] = {}  # _Spilled.path -> [memory map, its batch, pages left]

    def add(self, pid: str, site: str, columns: dict | _Spilled, keys: np.ndarray | None,
            ready: bool = False) -> None:
        """A page's columns: a dict (``page_columns`` takes it, unless ``ready``: made by
        ``page_columns`` for this schema already, where the page was walked) and its site keys,
        or where a worker spilled both (``_Spilled``, ``keys`` None)."""
        if isinstance(columns, _Spilled):
            self.pages.append((pid, site, columns, None, columns.rows))
            self.rows += columns.rows
        else:
            self.pages.append((pid, site, columns if ready else page_columns(columns, self.schema), keys,
                               len(keys)))
            self.rows += len(keys)
        if self.rows >= _PART_ROWS or len(self.pages) >= _PART_PAGES:
            self.flush()

    def _take(self, path: str, start: int, stop: int, pages: int, of: int) -> pa.RecordBatch:
        """Rows ``start`` to ``stop`` of the record batch of the worker's file ``path`` (memory-
        mapped), for ``pages`` of its ``of`` pages; the file is deleted once all its pages were
        taken (the batches' arrays keep the mapping while they live)."""
        entry = self.workers_files.get(path)
        if entry is None:
            source = pa.memory_map(path)
            entry = self.workers_files[path] = [source, pa.ipc.open_file(source).get_batch(0), of]
        entry[2] -= pages
        if entry[2] <= 0:
            del self.workers_files[path]
            os.unlink(path)
        return entry[1].slice(start, stop - start)

    def _segments(self, pages: list[tuple]) -> list[tuple]:
        """A part's pages as ``(columns, rows, site keys)`` pieces: a run of pages that follow
        each other in a worker's file as one slice of its batch (keys None: they are its
        ``_key``), a page walked here as its columns (a dict of ``page_columns``) and keys."""
        out: list[tuple] = []
        run: list | None = None  # [path, start, stop, pages, pages in the file]
        for p in pages:
            ref = p[2]
            if isinstance(ref, _Spilled) and run is not None and run[0] == ref.path and run[2] == ref.offset:
                run[2] += ref.rows
                run[3] += 1
                continue
            if run is not None:
                out.append((self._take(*run), run[2] - run[1], None))
                run = None
            if isinstance(ref, _Spilled):
                run = [ref.path, ref.offset, ref.offset + ref.rows, 1, ref.pages]
            else:
                out.append((ref, p[4], p[3]))
        if run is not None:
            out.append((self._take(*run), run[2] - run[1], None))
        return out

    def close_workers_files(self) -> None:
        """Delete the workers' files whose batches were not all taken (none, unless a run failed)."""
        for path in self.workers_files:
            os.unlink(path)
        self.workers_files.clear()

    def _part_batch(self, pages: list[tuple]) -> pa.RecordBatch:
        """One part's record batch (``_key`` last) of its pages' columns."""
        segs = self._segments(pages)
        sizes = np.fromiter((p[4] for p in pages), dtype=np.int64, count=len(pages))
        n = int(sizes.sum())
        arrays = []
        for col in self.schema:
            c = col.name
            if c == "dataset":
                arr = _repeated_str([self.dataset], np.array([n]))
            elif c in ("site", "page"):
                arr = _repeated_str([p[0] if c == "page" else p[1] for p in pages], sizes)
            elif c == "sitelevel":
                arr = pa.nulls(n, _FLOAT)
            else:
                parts = [d.column(c) if k is None else d.get(c) for d, _n, k in segs]
                if any(x is None for x in parts):  # a page without the column: missing values
                    parts = [x if x is not None else pa.nulls(int(rows), col.type)
                             for x, (_d, rows, _k) in zip(parts, segs)]
                if col.type == _STR:
                    arr = pa.concat_arrays(parts) if parts else _str_array([])
                else:
                    arr = _num_array(np.concatenate([_numbers(x) for x in parts]) if parts else np.zeros(0),
                                     col.type)
            arrays.append(arr.cast(col.type) if arr.type != col.type else arr)
        keys = (np.concatenate([_uint64_view(d.column("_key")) if k is None else k
                                for d, _n, k in segs]) if segs else np.zeros(0, np.uint64))
        return pa.RecordBatch.from_arrays(arrays + [_num_array(keys, pa.uint64())],
                                          names=[f.name for f in self.schema] + ["_key"])

    def flush(self, force: bool = False) -> None:
        if not self.pages and not (force and not self.spills):
            return
        pages, self.pages, self.rows = self.pages, [], 0
        if pages and all(p[3] is None for p in pages):  # already in the workers' files
            self.spills.append(pages)
            return
        batch = self._part_batch(pages)
        path = self.folder / f"part-{len(self.spills):05d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, batch.schema) as writer:
            writer.write_batch(batch)
        self.spills.append(path)

    def finish(self, page_keys: list[np.ndarray], n_pages: int) -> None:
        """Each spilled part -> ``part-NNNNN.parquet`` with ``sitelevel``: the share of the
        dataset's pages holding the row's (tag path, own text). The last part, built here, is
        written from memory (first, so that no other part is held with it), not spilled and
        read back: a 100-page dataset's only part made that round trip for nothing."""
        pages, self.pages, self.rows = self.pages, [], 0
        if pages and all(p[3] is None for p in pages):  # already in the workers' files
            self.spills.append(pages)
        elif pages or not self.spills:  # the last part (or an empty table's): not spilled
            self.spills.append(self._part_batch(pages))
        del pages
        if page_keys:
            uniq, counts = np.unique(np.concatenate(page_keys), return_counts=True)
        else:
            uniq, counts = np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        keyed = _key_table(uniq, counts)
        at = self.schema.get_field_index("sitelevel")
        parts = list(enumerate(self.spills))
        if parts and isinstance(parts[-1][1], pa.RecordBatch):  # held in memory: written first,
            parts.insert(0, parts.pop())                        # so that it is not held with another
        self.spills = []
        while parts:
            number, part = parts.pop(0)
            path = self.folder / f"part-{number:05d}.arrow"
            if isinstance(part, pa.RecordBatch):
                table = pa.Table.from_batches([part])
            elif isinstance(part, list):  # its pages in the workers' files
                table = pa.Table.from_batches([self._part_batch(part)])
            else:
                source = pa.memory_map(str(path))
                table = pa.ipc.open_file(source).read_all()
            k = _uint64_view(table.column("_key"))
            table = table.drop_columns(["_key"])
            if table.num_rows:
                share = _key_counts(uniq, counts, k, keyed) / max(n_pages, 1)
                table = table.set_column(at, "sitelevel", _num_array(share, _FLOAT))
            write_parquet(table, path.with_suffix(".parquet"), parquet_options(self.schema))
            del table
            if isinstance(part, Path):
                source.close()
                path.unlink()
            del part
        self.close_workers_files()


def unique_keys(keys: np.ndarray) -> np.ndarray:
    """``np.unique(keys)`` (the sorted distinct values) by a sort: ``np.unique`` without
    counts asks ``np.ma.is_masked`` first, which imports ``numpy.ma`` (6.5 ms, paid on the
    first page of every process: 2 % of a 100-page run with two workers)."""
    keys = np.sort(keys)
    keep = np.empty(len(keys), dtype=np.bool_)
    keep[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def _key_table(uniq: np.ndarray, counts: np.ndarray) -> bytes | None:
    """The compiled hash table of the distinct site keys and their pages' counts
    (``features/_walk.c`` ``key_table``), or None (no compiled helpers, or no keys)."""
    if native.ext is None or not len(uniq):
        return None
    return native.ext.key_table(np.ascontiguousarray(uniq, dtype=np.uint64),
                                np.ascontiguousarray(counts, dtype=np.int64))


def _key_counts(uniq: np.ndarray, counts: np.ndarray, keys: np.ndarray, table: bytes | None) -> np.ndarray:
    """``counts[np.searchsorted(uniq, keys)]``: how many pages hold each row's key (every key
    is one of ``uniq``, sorted), looked up in ``table`` (``_key_table``) when there is one:
    hash look-ups instead of a binary search per row (0.05 s on the bench corpus). The
    numpy line is the reference and the fallback (tests/test_walk_compiled.py)."""
    if table is not None:
        got = native.ext.key_counts(table, np.ascontiguousarray(keys, dtype=np.uint64))
        if got is not None:
            return np.frombuffer(got, dtype=np.int64)
    return counts[np.searchsorted(uniq, keys)]


def _frame_columns(rows: pd.DataFrame, columns: list[str]) -> dict:
    """A DataFrame's columns as the arrays ``_Batcher`` takes (strings as lists)."""
    import pandas as pd

    out = {}
    for c in columns:
        if c in ("dataset", "site", "page", "sitelevel"):
            continue
        v = rows[c] if c in rows else pd.Series(np.full(len(rows), None, dtype=object))
        out[c] = v.tolist() if v.dtype == object else v.to_numpy()
    return out


#: most pages per task when a scheduler runs the walk
_SCHED_BATCH = 64


def build_features(dataset: Dataset | str | os.PathLike, *, workers: int = 1,
                   progress: bool = True, scheduler=None) -> Path:
    """Write ``DATASET/features.parquet`` (a folder of part files) and return its path.

    Prints one line per failed page and a summary (pages, rows, share of
    content nodes among labelled rows, failures) on stderr. When ``hwnoise render`` has
    written ``DATASET/render.parquet``, what the browser hides is dropped (measures
    recomputed, ``walk_node`` keeps each row's node in the plain walk) and the rendered
    features are added; a page without render rows keeps its plain rows. ``scheduler`` (a
    ``hwnoise.scheduler.Scheduler``) walks the pages in batches instead of ``workers``
    processes; the table is the same.
    """
    ds = dataset if isinstance(dataset, Dataset) else Dataset(dataset)
    columns, schema, render_by_page = _render_plan(ds)
    query_terms = ds.query_terms()  # a query.json that cannot be read fails here, before any output
    jobs, site_of, skipped = _page_plan(ds, arrow=render_by_page is None)
    out, tally = ds.features_path, _Tally()
    for error in skipped:
        tally.failures.append(error)
        print(f"hwnoise: features: skipped {error}", file=sys.stderr, flush=True)
    tmp = _work_folder(ds)
    pbar = bar(total=len(jobs), desc=f"features {ds.name}", unit="page") if progress else None
    try:
        with _GC():  # fewer collections while pages are walked here (workers=1)
            batcher = _Batcher(tmp, columns, schema, ds.name)
            page_keys = _walk_pages(batcher, jobs, site_of, render_by_page, tally, pbar,
                                    query_terms=query_terms, workers=max(1, int(workers)), scheduler=scheduler)
            _check_walked(ds, tally, out)
            batcher.finish(page_keys, tally.pages)
        (tmp / _OWNER).unlink()  # the table's folder holds its parts only
        _move_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if pbar is not None:
            pbar.close()
    info(_summary(ds, tally, render_by_page is not None, out))
    return out


def _check_walked(ds: Dataset, tally: _Tally, out: Path) -> None:
    """A dataset none of whose pages could be walked is an error, its table left as it was: an
    empty table in its place told a script nothing (exit status 0) and lost a good one."""
    if tally.pages == 0 and tally.failures:
        was = "left as it was" if out.exists() else "not written"
        raise HwnoiseError(f"features {ds.name}: none of its {len(tally.failures)} page(s) could be walked "
                           f"(the first: {tally.failures[0]}); {out} {was}")


def _page_plan(ds: Dataset, arrow: bool) -> tuple[list[tuple], dict[str, str], list[str]]:
    """Step (plan): a ``_page_job`` job per page (with its stored labels, from hwnoise label),
    each page's site, and why the files an older collect kept from answers without a whole
    page are skipped; ``arrow``: the pages come back as columns ready for Arrow."""
    pages, skipped = [], []
    for p in ds.pages():
        if kept_without_a_page(p.fetch):
            skipped.append(f"{p.html_path}: journaled from an HTTP {p.fetch['status']} answer, which holds no whole "
                           "page (an older hwnoise collect kept it; run it again to fetch the page again)")
        else:
            pages.append(p)
    stored = (dict(tuple(ds.read_labels().groupby("page", sort=False)))  # hwnoise label's
              if ds.labels_path.exists() else {})
    jobs = [(p.id, str(p.html_path), str(p.gold_path), p.http_charset, own_terms(p.fields),
             stored.get(p.id), arrow) for p in pages]
    return jobs, {p.id: p.site for p in pages}, skipped


def _walk_pages(batcher: _Batcher, jobs: list[tuple], site_of: dict[str, str], render_by_page: dict | None,
                tally: _Tally, pbar, *, query_terms: list[str], workers: int, scheduler) -> list[np.ndarray]:
    """Step (walk): the pages' results (``_ordered``) into ``batcher`` and counted in ``tally``, a
    failed page reported and skipped; returns each page's distinct site keys, for ``sitelevel``."""
    arrow, columns = render_by_page is None, batcher.columns
    page_keys: list[np.ndarray] = []
    # _ordered only in the for statement: an error here closes it (and its pool) at once, before
    # the caller removes the work folder its workers write into
    for pid, result, error in _ordered(jobs, workers, query_terms, scheduler,
                                       spill=batcher.folder if arrow else None):
        if pbar is not None:
            pbar.update(1)
        if error is not None:
            tally.failures.append(error)
            print(f"hwnoise: features: skipped {error}", file=sys.stderr, flush=True)
            continue
        if arrow:
            cols, keys, ukeys, n_lab, n_content = result
            n = cols.rows if keys is None else len(keys)
        else:
            cols, keys, labels = _walked_columns(*result, render_by_page, pid, columns, tally)
            ukeys, n = unique_keys(keys), len(keys)
            n_lab = int(sum(1 for v in labels if v is not None))
            n_content = int(np.count_nonzero(labels == CONTENT))
        page_keys.append(ukeys)
        batcher.add(pid, site_of.get(pid, ""), cols, keys, ready=arrow)  # arrow: page_columns(..., SCHEMA)
        tally.pages += 1
        tally.rows += n
        tally.labelled += n_lab
        tally.content += n_content
    return page_keys


def _render_plan(ds: Dataset) -> tuple[list[str], pa.Schema, dict | None]:
    """The table's columns and schema, and ``hwnoise render``'s rows by page when
    ``render.parquet`` exists (None when it does not: the plain table)."""
    if not (ds.path / "render.parquet").exists():
        return FEATURE_COLUMNS, SCHEMA, None
    from hwnoise.features.render import read_render

    columns, schema = _rendered_schema()
    render = read_render(ds)
    return columns, schema, {} if render is None else dict(tuple(render.groupby("page", sort=False)))


@dataclass
class _Tally:
    """What the stage counts for its summary."""

    pages: int = 0
    rows: int = 0
    labelled: int = 0
    content: int = 0
    hidden: int = 0      # rows the browser hides, dropped (with render.parquet)
    failures: list[str] = field(default_factory=list)


def _walked_columns(walk, labels, render_by_page: dict | None, pid: str, columns: list[str],
                    tally: _Tally) -> tuple[dict, np.ndarray, np.ndarray]:
    """A page walked here (not made into Arrow columns by its walk): its columns, site keys and
    labels; with ``render_by_page``, less what the browser hides (``apply_render``)."""
    if render_by_page is None:
        cols = dict(walk.columns)
        cols[LABEL] = labels.tolist()
        return cols, walk.site_keys, labels
    from hwnoise.features.rendered import apply_render

    rows = walk.rows
    rows[LABEL] = labels
    n_before = len(rows)
    rows = apply_render(rows, render_by_page.get(pid), drop=True, walk_node=True)
    tally.hidden += n_before - len(rows)
    keys = walk.site_keys[rows["walk_node"].to_numpy()] if len(rows) else np.zeros(0, np.uint64)
    return _frame_columns(rows, columns), keys, rows[LABEL].to_numpy(object)


def _summary(ds: Dataset, tally: _Tally, rendered: bool, out: Path) -> str:
    """The stage's one line: pages, rows, content share, failures, pages missing, rows hidden."""
    share = tally.content / tally.labelled if tally.labelled else float("nan")
    unfetched = len(ds.unfetched())
    not_html = sum(f.endswith(NOT_HTML) for f in tally.failures)
    labels = (f"content share {share:.3f} of {tally.labelled} labelled rows" if tally.labelled else
              "no labelled rows (no gold; 'hwnoise label DATASET --auto' labels a crawl without it)")
    return (f"features {ds.name}: {tally.pages} pages, {tally.rows} rows, {labels}, {len(tally.failures)} failed"
            + (f" ({not_html} not HTML)" if not_html else "")
            + (f", {unfetched} submission(s) without a page file (not fetched, or the fetch failed: "
               f"see {ds.journal_path.name}; 'hwnoise collect --retry-failed' fetches them)" if unfetched else "")
            + (f", {tally.hidden} rows the browser hides dropped (render.parquet)" if rendered else "")
            + f" -> {out}")


#: The file in a run's work folder that names its process (``host pid``).
_OWNER = "owner"


def _work_folder(ds: Dataset) -> Path:
    """A new work folder for the table's parts, inside the dataset (the finished table is renamed
    from it), that names the process that owns it; the folders of runs that were killed before
    they could remove theirs are removed first."""
    _clear_leftovers(ds)
    tmp = Path(tempfile.mkdtemp(dir=ds.path, prefix=".features.parquet.", suffix=".tmp"))
    (tmp / _OWNER).write_text(f"{socket.gethostname()} {os.getpid()}\n")
    return tmp


def _clear_leftovers(ds: Dataset) -> None:
    """Remove the work folders of ``hwnoise features`` runs killed outright (SIGKILL, out of
    memory, power loss: no ``finally`` ran), which can hold the spilled parts of a whole dataset.
    A folder is left alone while its owner, a process of this machine, still runs, and when
    another machine owns it."""
    for folder in ds.path.glob(".features.parquet.*.tmp"):
        try:
            host, pid = (folder / _OWNER).read_text().split()
            owner = (host, int(pid))
        except (OSError, ValueError):  # made before runs named their owner, or just now
            owner = (None, None)
        if not left_by_a_dead_run(*owner, folder):
            continue
        size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
        shutil.rmtree(folder, ignore_errors=True)
        info(f"hwnoise: features: removed {folder.name}, the work folder of a run that was killed "
             f"({size / 1e6:.1f} MB)")


def _move_into_place(tmp: Path, out: Path) -> None:
    """Replace ``out`` (file or folder) by the finished folder ``tmp``."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old")
        if old.exists():
            shutil.rmtree(old) if old.is_dir() else old.unlink()
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)
