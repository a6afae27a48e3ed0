"""``hwnoise evaluate``: every method on the same test pages, node level and text level.

Per dataset (or over the pooled datasets for ``cross-site``) the pages are split by the
protocol (``hwnoise.training.protocols.splits`` on a one-row-per-page table); methods that
learn are fitted on the training pages only, and every method is scored on the same test
pages: at node level (``node_scores``) where it labels the walker's nodes and gold labels
exist, at text level (``hwnoise.text``) where gold text exists, and by ``value_recall`` on
SWDE-like datasets whose gold is a few attribute values. With ``model=M`` the given model is
scored on every page instead (no split, protocol ``given``).

Writes ``report.json`` (one record per dataset, protocol and method), ``report.md``,
``pages.csv`` (per page and method) and the PNG figures to ``out``.
"""
from __future__ import annotations

import copy
import csv
import hashlib
import json
import numbers
import os
import shutil
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hwnoise import __version__
from hwnoise.dataset import Dataset, Page, atomic_write_text, check_distinct, now_iso, write_json
from hwnoise.errors import ArgumentError, HwnoiseError, PageError, check_keywords, check_kinds, kind_of, path_list
from hwnoise.features.columns import needs_dataset_features
from hwnoise.progress import info
from hwnoise.scheduler import Scheduler, batches, for_workers
from hwnoise.text import collapse_space, mean_text_scores, text_scores, tokenize
from hwnoise.training.metrics import CONFUSION

DEFAULT_METHODS = ("model", "cetd")
PROTOCOLS = ("pages", "thesis", "cv", "cross-site")
VALUE_FORMATS = ("swde",)


class EvaluateError(HwnoiseError):
    """An evaluation that cannot run as asked (no datasets, unknown protocol, no test pages)."""


def value_recall(extracted: str, gold: str) -> float | None:
    """Share of the gold values (one a line) found whole, as a run of words, in ``extracted``."""
    values = [v for v in (collapse_space(line) for line in gold.splitlines()) if v]
    values = [tokenize(v) for v in values]
    values = [v for v in values if v]
    if not values:
        return None
    hay = " " + " ".join(tokenize(extracted)) + " "
    found = sum(1 for v in values if " " + " ".join(v) + " " in hay)
    return found / len(values)


def is_value_gold(ds: Dataset) -> bool:
    """True for datasets whose gold is attribute values, not a text body (SWDE)."""
    fmt = str(ds.meta.get("format") or ds.meta.get("gold") or "").lower()
    return fmt in VALUE_FORMATS


class _Tally:
    """What one method scored on one dataset: node labels, per-page text scores, failures."""

    def __init__(self) -> None:
        self.nodes = dict.fromkeys(CONFUSION, 0)  # summed over the pages' own counts
        self.text: list[dict] = []
        self.values: list[float] = []
        self.words: list[int] = []
        self.records: list[dict] = []   # per-page record scores (gold with records only)
        self.pages = 0
        self.failures = 0
        self.errors: list[str] = []
        self.seconds = 0.0

    def record(self, dataset: str, protocol: str, method: str) -> dict:
        from hwnoise.training.metrics import scores_from_confusion

        rec: dict[str, Any] = {"dataset": dataset, "protocol": protocol, "method": method,
                               "pages": self.pages}
        if sum(self.nodes.values()):
            rec.update(scores_from_confusion(**self.nodes))
        if self.text:
            rec.update(mean_text_scores(self.text))
        if self.records:
            from hwnoise.training.record_metrics import mean_record_scores

            rec.update(mean_record_scores(self.records))
        if self.values:
            rec["value_recall"] = float(np.mean(self.values))
        if self.words:
            rec["words"] = float(np.mean(self.words))
        if self.failures:
            rec["failures"] = self.failures
            rec["last_error"] = self.errors[-1] if self.errors else ""
        rec["seconds"] = round(self.seconds, 2)
        return rec


def _open(dirs: Sequence[str | Path]) -> list[Dataset]:
    if not dirs:
        raise EvaluateError("give at least one dataset folder to evaluate")
    datasets = [Dataset(d) for d in dirs]
    check_distinct(datasets)
    return datasets


def _page_table(pages: list[Page]) -> pd.DataFrame:
    return pd.DataFrame({"dataset": [p.dataset.name for p in pages],
                         "site": [p.site for p in pages],
                         "page": [p.id for p in pages]})


def _make_methods(names: Sequence[str], model: Any, options: dict[str, dict]) -> dict[str, Any]:
    from hwnoise.extractors.registry import get_method

    out = {}
    for name in names:
        opts = dict(options.get(name, {}))
        if name == "model" and model is not None:
            opts["model"] = model
        try:
            out[name] = get_method(name, **opts)
        except TypeError as exc:  # an option the method does not take
            raise EvaluateError(f"method {name}: bad option(s) {sorted(opts)}: {exc}") from None
    return out


@dataclass
class _PageGold:
    """What a test page is scored against, with the one walk every method shares."""

    walk: Any
    text: str
    labels: np.ndarray | None        # the gold's node labels (None: a page without rows)
    records: list[list[str]] | None  # the gold records' XPaths (None: no gold records)
    xpaths: list[str] | None
    keys: list[str] | None


def _page_gold(page: Page) -> _PageGold | None:
    """Walk a test page once and read its gold (text, node labels, records); None when it has
    no gold or cannot be read (said on stderr)."""
    from hwnoise.extractors.base import walk_of
    from hwnoise.features.labels import page_labels

    gold = page.read_gold()
    if gold is None:
        return None  # nothing to score it against
    try:
        walk = walk_of(page, keep_tree=True)  # methods that read the HTML need no second parse
    except Exception as exc:  # noqa: BLE001 - one unreadable page never stops the evaluation
        info(f"hwnoise: evaluate: skipped {page.html_path}: {type(exc).__name__}: {exc}")
        return None
    labels = None
    if len(walk.rows):
        labels = np.asarray(page_labels(walk, gold, html=page.read_html(), records=page.read_records(),
                                        http_charset=page.http_charset), dtype=object)
    return _PageGold(walk, gold, labels, *_gold_records(page, walk))


@dataclass
class _Output:
    """What one method gave on one page."""

    text: str = ""
    labels: np.ndarray | None = None
    proba: np.ndarray | None = None
    records: list | None = None     # the records the model grouped while labelling


def _run_method(method: Any, page: Page, gold: _PageGold, tally: _Tally) -> _Output:
    """One method on one page, timed; a failure is counted in ``tally`` and gives no text."""
    from hwnoise.extractors.base import labels_nodes, text_from_labels

    t0 = time.perf_counter()
    out = _Output()
    try:
        if labels_nodes(method):
            if gold.records is not None and callable(getattr(method, "node_predictions", None)):
                # the probabilities, and the records the model grouped while labelling
                labels, out.proba, out.records = method.node_predictions(page, gold.walk, records=True)
            else:
                labels = method.node_labels(page, gold.walk)
            out.labels = np.asarray(labels, dtype=object)
            out.text = text_from_labels(gold.walk, out.labels)
        else:
            before = getattr(method, "failures", 0)
            out.text = method.extract(page, gold.walk)
            if getattr(method, "failures", 0) > before:
                tally.failures += 1
                tally.errors.append(f"{page.id}: {getattr(method, 'last_error', '')}")
    except Exception as exc:  # noqa: BLE001 - one method failing on one page is counted
        if isinstance(exc, HwnoiseError) and not isinstance(exc, PageError):
            raise  # a tool missing, an option refused: the run stops
        tally.failures += 1
        tally.errors.append(f"{page.id}: {type(exc).__name__}: {exc}"[:300])
        out = _Output()
    tally.seconds += time.perf_counter() - t0
    tally.pages += 1
    return out


def _score_output(method: Any, page: Page, gold: _PageGold, out: _Output, tally: _Tally,
                  value_gold: bool, test_nodes: np.ndarray | None) -> dict[str, Any]:
    """Score one method's output on one page at node, record and text level: the page's figures
    for pages.csv, each also added to ``tally``."""
    row: dict[str, Any] = {}
    if out.labels is not None and gold.labels is not None and len(out.labels) == len(gold.labels):
        sel = slice(None) if test_nodes is None else test_nodes
        nodes = _page_nodes(gold.labels[sel], out.labels[sel])
        for k in tally.nodes:
            tally.nodes[k] += nodes[k]
        row.update(nodes)
    if gold.records is not None:
        rs = _record_scores(method, page, gold.walk, out.labels, gold.xpaths, gold.records, gold.keys,
                            out.proba, out.records)
        if rs is not None:
            tally.records.append(rs)
            row.update(rs)
    if value_gold:
        vr = value_recall(out.text, gold.text)
        if vr is not None:
            tally.values.append(vr)
            row["value_recall"] = vr
        tally.words.append(len(tokenize(out.text)))
    else:
        s = text_scores(out.text, gold.text)
        tally.text.append(s)
        row.update({f"text_{k}": v for k, v in s.items()})
    return row


def _score_page(page: Page, methods: dict[str, Any], tallies: dict[str, _Tally],
                value_gold: bool, test_nodes: np.ndarray | None, rows_out: list[dict]) -> bool:
    """Score every method on one test page; False when it has no gold or cannot be read."""
    gold = _page_gold(page)
    if gold is None:
        return False
    for name, method in methods.items():
        out = _run_method(method, page, gold, tallies[name])
        scores = _score_output(method, page, gold, out, tallies[name], value_gold, test_nodes)
        rows_out.append({"dataset": page.dataset.name, "page": page.id, "site": page.site,
                         "method": name, **scores})
    return True


def _page_nodes(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, Any]:
    """The page's own node counts (RR, RC, CC, CR) and content F1, for pages.csv; the tally sums
    the counts into the report's pooled node figures; per page they can be paired between two
    runs (``bench/paired.py --metric content_f1``)."""
    from hwnoise.training.metrics import confusion, scores_from_confusion

    counts = confusion(y_true, y_pred)
    return {**counts, "content_f1": scores_from_confusion(**counts)["content_f1"]}


def _gold_records(page: Page, walk) -> tuple[list[list[str]] | None, list[str] | None, list[str] | None]:
    """The page's gold records as XPath lists (all of them, resolved or not), every walker
    row's XPath in the same form and the page's text-map keys (the record metric's), from the
    ``walk`` made with ``keep_tree``; (None, None, None) when the page has no gold records."""
    records = page.read_records()
    if records is None:
        return None, None, None
    from hwnoise.extractors.records import walk_xpaths
    from hwnoise.features.record_gold import normalize_xpath

    xpaths, keys = walk_xpaths(walk, text_keys=True)  # from the walk's own tree: no second parse
    return [[normalize_xpath(x) for x in rec] for rec in records], xpaths, keys


def _record_scores(method: Any, page: Page, walk, labels, xpaths: list[str], gold: list[list[str]],
                   keys: list[str], proba: np.ndarray | None = None, records: list | None = None) -> dict | None:
    """Record-level scores of one method on one page: its own records where it gives them
    (``records(page, walk)``), else the records it grouped while labelling (``records``, rows)
    or, without them, records grouped from its node labels (and its content probabilities,
    ``proba``, where it gives them), with the records the page hides alike to them
    (``records.with_hidden``); None when neither. ``record_*`` are the paper's (records
    expanded to the text-map ``keys`` below them), ``element_record_*`` over the records' own
    XPaths."""
    from hwnoise.extractors.records import records_from_labels, with_hidden
    from hwnoise.training.record_metrics import page_record_scores

    if callable(getattr(method, "records", None)):
        pred = method.records(page, walk)
    elif labels is not None and len(labels) == len(xpaths):
        recs = records_from_labels(walk, labels, xpaths, proba, records=records)
        pred = [r.xpaths for r in with_hidden(recs, walk.root, walk.elements, xpaths)]  # as extract --records
    else:
        return None
    return page_record_scores(pred, gold, keys)


# -- plan -> fit per fold -> score per page batch -> aggregate -----------------------------------
# Each step is a function; fit_fold and score_batch run on any scheduler (hwnoise.scheduler) and
# take and return small things: page references (dataset folder, page ID), fitted methods, and
# per-batch tallies. Results are merged in fold and batch order, so every scheduler gives the
# same report as a serial run.

#: test pages per scoring task (a few large tasks; the result does not depend on it)
BATCH_PAGES = 64
#: fewer test pages than this are scored in this process under the default --scheduler local
SMALL_PAGES = 60


@dataclass
class Fold:
    """One fit and the pages it scores: page references ``(dataset folder, page ID)``."""

    unit: str
    index: int
    total: int
    train: list[tuple[str, str]]
    test: list[tuple[str, str]]
    thesis: bool = False       # seed 003's node split: masks computed from the unit's pages
    unit_pages: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class EvalSettings:
    """What every fold fits and scores."""

    methods: tuple[str, ...]
    model: Any = None
    options: dict = field(default_factory=dict)
    seed: int = 1
    train_share: float = 0.66


def _ref(page: Page) -> tuple[str, str]:
    return (str(page.dataset.path), page.id)


def load_pages(refs: Sequence[tuple[str, str]]) -> list[Page]:
    """The pages of ``refs``, in order (each dataset folder opened once)."""
    by_ds: dict[str, dict[str, Page]] = {}
    out = []
    for path, pid in refs:
        if path not in by_ds:
            by_ds[path] = {p.id: p for p in Dataset(path).pages()}
        out.append(by_ds[path][pid])
    return out


def plan(datasets: Sequence[Dataset], protocol: str, given_model: bool, *, seed: int = 1, k: int = 5,
         train_share: float = 0.66, score_only: Sequence[str] | None = None,
         trained_on: dict | None = None) -> tuple[list[Fold], list[str]]:
    """The folds of the evaluation: one unit per dataset, or every dataset pooled for
    cross-site; each unit split by the protocol. Returns the folds and notes. A given model is
    never scored on the pages it was trained on (``trained_on``: page IDs per dataset)."""
    from hwnoise.training.protocols import splits

    units = [list(datasets)] if (protocol == "cross-site" and not given_model) else [[d] for d in datasets]
    folds: list[Fold] = []
    notes: list[str] = []
    keep = set(score_only) if score_only is not None else None
    for unit in units:
        pages = [p for ds in unit for p in ds.pages()]
        label = "+".join(ds.name for ds in unit)
        if not pages:
            notes.append(f"{label}: no pages")
            continue
        if given_model:
            seen = (trained_on or {})
            unseen = [p for p in pages if p.id not in set(seen.get(p.dataset.name, ()))]
            if len(unseen) < len(pages):
                notes.append(f"{label}: {len(pages) - len(unseen)} page(s) the model was trained on, "
                             "not scored")
            parts = [([], unseen, False)]
        elif protocol == "thesis":
            parts = [([], pages, True)]
        else:
            table = _page_table(pages)
            parts = [([pages[i] for i in tr], [pages[i] for i in te], False)
                     for tr, te in splits(table, protocol, seed=seed, k=k, train_share=train_share)]
        for fi, (train_pages, test_pages, thesis) in enumerate(parts):
            if keep is not None:
                test_pages = [p for p in test_pages if p.dataset.name in keep]
                if not test_pages:
                    continue
            folds.append(Fold(label, fi, len(parts), [_ref(p) for p in train_pages],
                              [_ref(p) for p in test_pages], thesis,
                              [_ref(p) for p in pages] if thesis else []))
    return folds, notes


def _portable(methods: dict[str, Any]) -> dict[str, Any]:
    """Fitted methods without the feature tables they cached (workers read their own)."""
    from hwnoise.extractors.model import FeatureCache

    out = {}
    for name, method in methods.items():
        if isinstance(getattr(method, "cache", None), FeatureCache):
            method = copy.copy(method)
            method.cache = FeatureCache()
        out[name] = method
    return out


def fit_fold(fold: Fold, settings: EvalSettings) -> tuple[dict[str, Any], dict | None, list[str]]:
    """Build every method and fit those that learn on the fold's training pages (for the
    thesis protocol, on its training nodes). Returns the methods, the thesis test nodes per
    page (or None) and lines for people."""
    from hwnoise.training.protocols import splits

    built = _make_methods(settings.methods, settings.model, settings.options)
    masks = None
    if fold.thesis:
        masks = _thesis_folds(load_pages(fold.unit_pages), settings.seed, settings.train_share, splits)[0][2]
    train_pages = load_pages(fold.train)
    lines = []
    for name, method in built.items():
        if getattr(method, "needs_training", False):
            t0 = time.perf_counter()
            if masks is not None and hasattr(method, "fit_rows"):
                method.fit_rows(masks["train_rows"])
            else:
                method.fit(train_pages)
            lines.append(f"{fold.unit}: {name} fitted on {len(train_pages)} pages "
                         f"(fold {fold.index + 1}/{fold.total}, {time.perf_counter() - t0:.1f} s)")
    test_nodes = dict(masks["test_nodes"]) if masks is not None else None
    return built, test_nodes, lines


def _close(methods: dict[str, Any]) -> None:
    """End what a method holds for its pages (the browser of the rendered ones) with the batch:
    it would outlive the run otherwise, Chromium until exit and Playwright's driver in the process."""
    for method in methods.values():
        close = getattr(method, "close", None)
        if close is not None:
            close()


def score_batch(refs: Sequence[tuple[str, str]], methods: dict[str, Any],
                test_nodes: dict | None) -> dict:
    """Score every method on a batch of test pages; a JSON-able partial result
    ``{tallies: {dataset: {method: ...}}, rows: [...], skipped: {dataset: n}}``."""
    tallies: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    rows: list[dict] = []
    skipped: dict[str, int] = defaultdict(int)
    try:
        for page in load_pages(refs):
            per = {name: tallies[(page.dataset.name, name)] for name in methods}
            mask = None if test_nodes is None else test_nodes.get(page.id)  # None: every node, as before
            if not _score_page(page, methods, per, is_value_gold(page.dataset), mask, rows):
                skipped[page.dataset.name] += 1
    finally:
        _close(methods)
    out: dict[str, Any] = {"tallies": {}, "rows": rows, "skipped": dict(skipped)}
    for (ds, name), t in tallies.items():
        out["tallies"].setdefault(ds, {})[name] = {
            "nodes": t.nodes,
            "text": t.text, "values": t.values, "words": t.words, "records": t.records, "pages": t.pages,
            "failures": t.failures, "errors": t.errors, "seconds": t.seconds}
    return out


def aggregate(parts: Sequence[dict]) -> tuple[dict[tuple[str, str], _Tally], list[dict], dict[str, int]]:
    """Merge the batch results, in order, into one tally per (dataset, method)."""
    tallies: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    rows: list[dict] = []
    skipped: dict[str, int] = defaultdict(int)
    for part in parts:
        for ds, by_method in part["tallies"].items():
            for name, t in by_method.items():
                tally = tallies[(ds, name)]
                for k, v in t["nodes"].items():
                    tally.nodes[k] += v
                tally.text += t["text"]
                tally.values += t["values"]
                tally.words += t["words"]
                tally.records += t["records"]
                tally.pages += t["pages"]
                tally.failures += t["failures"]
                tally.errors += t["errors"]
                tally.seconds += t["seconds"]
        rows += part["rows"]
        for ds, n in part["skipped"].items():
            skipped[ds] += n
    return tallies, rows, skipped


def _evaluate_fit(fold: Fold, settings: EvalSettings, portable: bool):
    built, test_nodes, lines = fit_fold(fold, settings)
    return (_portable(built) if portable else built), test_nodes, lines


def _evaluate_score(task: tuple, fitted: list) -> dict:
    fold_i, refs = task
    methods, test_nodes, _ = fitted[fold_i]
    return score_batch(refs, methods, test_nodes)


def _parts_dir(out: str | Path | None, folds: list[Fold], settings: EvalSettings, size: int) -> Path | None:
    """Where the batch results of this very plan are kept until the report is written, so that
    a killed run resumes from them (None without --out or with a model object given)."""
    if out is None or (settings.model is not None and not isinstance(settings.model, (str, Path))):
        return None
    key = json.dumps([__version__, [asdict(f) for f in folds], list(settings.methods), settings.options,
                      settings.seed, settings.train_share, str(settings.model), size], sort_keys=True, default=str)
    return Path(out) / ".parts" / hashlib.sha1(key.encode()).hexdigest()[:16]


def run_folds(folds: list[Fold], settings: EvalSettings, sched: Scheduler, *, out: str | Path | None = None,
              batch_pages: int | None = None) -> tuple[dict, list[dict], dict]:
    """Fit every fold, then score its test pages in batches, on ``sched``; merge in order."""
    size = batch_pages or BATCH_PAGES
    tasks = [(fi, refs) for fi, fold in enumerate(folds) for refs in batches(fold.test, size)]
    parts_dir = _parts_dir(out, folds, settings, size)
    results: list[dict | None] = [None] * len(tasks)
    if parts_dir is not None and parts_dir.is_dir():
        for i in range(len(tasks)):
            path = parts_dir / f"{i:05d}.json"
            if path.is_file():
                try:
                    results[i] = json.loads(path.read_text(encoding="utf-8"))
                except ValueError:
                    results[i] = None
        done = sum(r is not None for r in results)
        if done:
            info(f"evaluate: resuming; {done} of {len(tasks)} page batches already scored in {parts_dir}")
    todo = [i for i, r in enumerate(results) if r is None]
    need = sorted({tasks[i][0] for i in todo})
    small = sum(len(f.test) for f in folds) < SMALL_PAGES
    local = sched.inline or (small and sched.auto)
    fitted_list = sched.map(_evaluate_fit, [folds[fi] for fi in need], settings, not local,
                            desc="evaluate: fit", unit="fold", small=small)
    fitted: list[Any] = [None] * len(folds)
    for fi, res in zip(need, fitted_list):
        fitted[fi] = res
        for line in res[2]:
            info(line)
    handle = sched.share(fitted) if todo else None

    def keep(j: int, result: dict) -> None:
        i = todo[j]
        results[i] = result
        if parts_dir is not None:
            atomic_write_text(parts_dir / f"{i:05d}.json", json.dumps(result))

    if todo:
        sched.map(_evaluate_score, [tasks[i] for i in todo], handle, desc="evaluate: score", unit="batch",
                  on_result=keep, small=small)
    tallies, rows, skipped = aggregate([r for r in results if r is not None])
    if parts_dir is not None:
        shutil.rmtree(parts_dir, ignore_errors=True)
        try:
            parts_dir.parent.rmdir()
        except OSError:
            pass
    return tallies, rows, skipped


@dataclass(frozen=True)
class EvalOptions:
    """How ``evaluate`` runs: one object through its steps (``evaluate``'s keywords).

    ``model`` (a NoiseModel or a saved model's path) scores that model on every page of every
    dataset instead of training one per split (protocol ``given``; ``allow_pickle`` lets a path
    load a pickle). With ``build`` a dataset without ``features.parquet`` gets one first
    (``hwnoise features``), so that the learned model sees the dataset-level features too.
    ``score_only`` names the datasets whose test pages are scored; the others then only lend
    their pages to training (e.g. WCXB listing pages scored by a cross-site model trained on
    every other page type). ``scheduler`` (``hwnoise.scheduler``: local, threads, sync,
    tcp://..., or a ``Scheduler``; ``workers`` its size) runs the fits and the page batches; the
    report is the same on every one. With ``out``, batches scored are kept under
    ``out/.parts/`` until the report is written, so a killed run resumes from them; ``figures``:
    its PNG figures too. The learned ``model`` method is the thesis spec (five features, J48)
    unless ``method_options["model"]`` says otherwise (``{"preset": "auto"}`` is what ``hwnoise
    evaluate`` passes): the bench scripts' figures rely on that default."""

    methods: Sequence[str] = DEFAULT_METHODS
    protocol: str = "pages"
    seed: int = 1
    out: str | Path | None = None
    model: Any = None
    k: int = 5
    train_share: float = 0.66
    method_options: dict[str, dict] | None = None
    allow_pickle: bool = False
    figures: bool = True
    build: bool = True
    score_only: Sequence[str] | None = None
    scheduler: "str | Scheduler | None" = "sync"
    workers: int | None = None

    def __post_init__(self) -> None:
        """Each option of its kind, as an ``ArgumentError`` naming it (``seed="1"`` was a numpy
        casting TypeError, ``k="3"`` a comparison one, after the datasets were opened); methods
        and ``score_only`` given as one str are its comma-separated names, as ``--methods`` (a
        str was iterated letter by letter: "unknown method 'c'")."""
        for name in ("methods", "score_only"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, tuple(m.strip() for m in value.split(",") if m.strip()))
        check_kinds("evaluate", {f.name: getattr(self, f.name) for f in dataclass_fields(self)}, _EVAL_KINDS)
        for name in ("methods", "score_only"):
            names = getattr(self, name) or ()
            bad = [m for m in names if not isinstance(m, str)]
            if bad:
                raise ArgumentError(f"evaluate: {name} holds {kind_of(bad[0])}; give names (str)")

    def with_keywords(self, keywords: dict) -> "EvalOptions":
        """These options with ``keywords`` changed; a name that is no option is a TypeError
        naming it and the options (``errors.check_keywords``)."""
        check_keywords("evaluate", keywords, [f.name for f in dataclass_fields(self)])
        return replace(self, **keywords)


_PATH = (str, os.PathLike)
_BOOL = ((bool, np.bool_), "True or False")
#: EvalOptions' fields checked at construction: the kinds each takes and what to give instead.
_EVAL_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "methods": ((list, tuple), "method names (a list of str, or one str of comma-separated names)"),
    "protocol": ((str,), f"one of {', '.join(PROTOCOLS)}"),
    "seed": ((numbers.Integral,), "a whole number"),
    "out": ((*_PATH, type(None)), "a folder (a str or pathlib.Path)"),
    "k": ((numbers.Integral,), "a whole number of folds"),
    "train_share": ((numbers.Real,), "a number between 0 and 1"),
    "method_options": ((dict, type(None)), "a dict of each method's options ({'webstemmer': {'t': 0.5}})"),
    "allow_pickle": _BOOL, "figures": _BOOL, "build": _BOOL,
    "score_only": ((list, tuple, set, frozenset, type(None)), "dataset names (a list of str)"),
    "scheduler": ((str, Scheduler, type(None)), "local, threads, sync, a Dask scheduler's address "
                  "(tcp://HOST:PORT) or a hwnoise.scheduler.Scheduler"),
    "workers": ((numbers.Integral, type(None)), "a whole number of workers"),
}


def evaluate(dataset_dirs: Sequence[str | Path], options: EvalOptions | None = None, **keywords: Any) -> dict:
    """Score the methods of ``options`` (``EvalOptions``, or its fields as ``keywords``) on the
    test pages of each dataset; return (and, with ``out``, write) the report."""
    opts = (options or EvalOptions()).with_keywords(keywords)
    datasets = _open(for_workers(opts.scheduler, _dataset_dirs(dataset_dirs)))
    methods, model = _check_args(datasets, opts)
    _check_some_gold(datasets)
    options_of = dict(opts.method_options or {})
    _check_features(options_of.get("model", {}).get("features") if "model" in methods and model is None else None)
    if "model" in methods:
        _check_tables(datasets, _make_methods(["model"], model, options_of)["model"].features)
    proto_name = "given" if model is not None else opts.protocol
    sched_own = not isinstance(opts.scheduler, Scheduler)
    sched = Scheduler(opts.scheduler or "local", opts.workers, sees=[ds.path for ds in datasets]) \
        if sched_own else opts.scheduler
    try:
        if opts.build and "model" in methods:
            _build_missing_tables(datasets, model, sched)
        folds, notes = plan(datasets, opts.protocol, model is not None, seed=opts.seed, k=opts.k,
                            train_share=opts.train_share, trained_on=getattr(model, "trained_on", None),
                            score_only=opts.score_only)
        settings = EvalSettings(methods=tuple(methods), model=model, options=options_of, seed=opts.seed,
                                train_share=opts.train_share)
        tallies, page_rows, skipped = run_folds(folds, settings, sched, out=opts.out)
    finally:
        if sched_own:
            sched.close()

    report = _report(datasets, methods, tallies, skipped, notes, proto_name, opts.seed, options_of, model)
    if opts.out is not None:
        write_outputs(report, opts.out, page_rows, figures=opts.figures)
    return report


def _dataset_dirs(dirs: Any) -> list:
    """``dirs`` as a list of paths (``errors.path_list``): one folder as a str was iterated
    letter by letter ("/: not a dataset folder")."""
    return path_list(dirs, "evaluate: dataset_dirs", "dataset folders (a str or pathlib.Path, or a list of them)")


def _check_args(datasets: list[Dataset], opts: EvalOptions) -> tuple[list[str], Any]:
    """The methods asked (each once, in order) and the model (loaded when given as a path);
    an evaluation that cannot run as asked is an ``EvaluateError`` before any work."""
    methods = list(dict.fromkeys(m.strip() for m in opts.methods if m.strip()))
    if not methods:
        raise EvaluateError("no methods to evaluate; e.g. --methods model,cetd,trafilatura")
    if opts.protocol not in PROTOCOLS:
        raise EvaluateError(f"unknown protocol {opts.protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    model = opts.model
    if isinstance(model, (str, Path)):
        from hwnoise.extractors.model import load_model

        model = load_model(model, allow_pickle=opts.allow_pickle)  # refuses a model that labels no page
    elif model is not None:
        from hwnoise.extractors.model import check_page_model

        check_page_model(model)
    for name, options in (opts.method_options or {}).items():
        _check_finite(options, f"method option {name}")
    if model is not None:
        _warn_unknown(model.features)
        _refuse_model_options(opts.method_options, model, opts.model)
    if opts.score_only is not None:
        unknown = set(opts.score_only) - {ds.name for ds in datasets}
        if unknown:
            raise EvaluateError(f"--score-only names no dataset given: {', '.join(sorted(unknown))}")
    return methods, model


def _check_finite(value: Any, where: str) -> None:
    """An ``EvaluateError`` for a NaN or infinite number in a method's options (``webstemmer.t=NaN``
    ran with every comparison false and wrote its figures, and report.json then held ``NaN``,
    which no strict JSON reader takes)."""
    if isinstance(value, dict):
        for key, v in value.items():
            _check_finite(v, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_finite(v, where)
    elif isinstance(value, float) and not np.isfinite(value):
        raise EvaluateError(f"{where} is {value}: give a finite number")


def _refuse_model_options(method_options: dict | None, model: Any, given: Any) -> None:
    """An ``EvaluateError`` for model options beside a given model: it is scored as it was trained
    (its spec), and a preset, threshold or classifier asked for beside it was ignored without a
    word, the report showing the given model's figures as if they were those options'."""
    asked = {k: v for k, v in ((method_options or {}).get("model") or {}).items() if v is not None}
    if asked:
        spec = getattr(model, "spec", None)
        trained = f" (preset {spec.preset})" if getattr(spec, "preset", None) else ""
        named = given if isinstance(given, (str, Path)) else "the given model"
        raise EvaluateError(f"model options {', '.join(f'{k} {v}' for k, v in asked.items())} do not apply to "
                            f"--model {named}, which is scored as it was trained{trained}; drop them, or "
                            "drop --model to train a model of those options on each split")


def _check_features(features: Any) -> None:
    """An ``EvaluateError`` for ``--features`` names that hwnoise computes from no page or table
    (the model would read them as missing on every page)."""
    if features is None:
        return
    from hwnoise.features.assembly import unknown_features
    from hwnoise.features.columns import ALL_FEATURES
    from hwnoise.training.model import resolve_features

    unknown = unknown_features(resolve_features(features))
    if unknown:
        raise EvaluateError(f"--features {', '.join(unknown)}: no feature hwnoise computes; give a set "
                            f"(thesis, extended, page, records, rendered) or names such as "
                            f"{', '.join(ALL_FEATURES)}")


def _check_tables(datasets: list[Dataset], features: Sequence[str]) -> None:
    """Each dataset's feature table has the stored columns the model reads (a given model's
    features, or a trained spec's; an "auto" one is known only from the training pages, whose
    assembly checks them then): one line naming the table that lacks one, before any work."""
    from hwnoise.features.assembly import check_table_columns

    for ds in datasets:
        check_table_columns(ds, features)


def _warn_unknown(features: Sequence[str]) -> None:
    """Name the model's features that hwnoise computes from no page: missing on every page."""
    from hwnoise.features.assembly import unknown_features

    unknown = unknown_features(features)
    if unknown:
        info(f"evaluate: the model's feature(s) {', '.join(map(repr, unknown))} are none hwnoise "
             "computes from a page (a model trained on another tool's ARFF file?): taken as missing "
             "on every page")


def _build_missing_tables(datasets: list[Dataset], model: Any, sched: Scheduler) -> None:
    """``hwnoise features`` for the datasets without a table, when the learned model reads the
    dataset-level features it stores (a given model's sitelevel needs it too)."""
    if model is not None and not needs_dataset_features(getattr(model, "features", None) or []):
        return
    from hwnoise.features.build import build_features

    for ds in datasets:
        if not ds.has_features():
            info(f"{ds.name}: no features.parquet yet; building it")
            build_features(ds, progress=False, scheduler=sched)


def _report(datasets: list, methods: list[str], tallies: dict, skipped: dict, notes: list[str],
            proto_name: str, seed: int, options: dict, model: Any) -> dict:
    """Aggregate: the report of the folds' tallies, one record per dataset and method, with what
    the methods were asked for and the notes; nothing scored is an error (nothing is written)."""
    results = []
    for ds in datasets:
        for name in methods:
            if (ds.name, name) in tallies:
                results.append(tallies[(ds.name, name)].record(ds.name, proto_name, name))
    report = {"hwnoise": __version__, "created": now_iso(), "protocol": proto_name, "seed": seed,
              "methods": methods, "datasets": [str(ds.path) for ds in datasets], "results": results}
    if options:  # what the methods were asked for (the learned model's preset and fields over it)
        report["method_options"] = json.loads(json.dumps(options, default=str))
    if model is not None and getattr(model, "spec", None) is not None:
        report["model_spec"] = model.spec.to_dict()
    notes = notes + [f"{name}: {n} test page(s) without gold text or unreadable, not scored"
                     for name, n in skipped.items()]
    if notes:
        report["notes"] = notes
    if not any(k in r for r in results for k in ("f1", "text_f1", "value_recall")):
        raise _nothing_to_score(datasets, f" ({'; '.join(notes)})" if notes else "")
    return report


def _nothing_to_score(datasets: list[Dataset], why: str = "") -> EvaluateError:
    """The one line for an evaluation that scored (or would score) no page."""
    names = ", ".join(ds.name for ds in datasets)
    return EvaluateError(f"nothing to score: no test page of {names} has gold (gold/ID.txt) or "
                         f"could be read{why}; give datasets with gold text and pages the model "
                         "was not trained on, or label pages without gold with 'hwnoise extract'; "
                         "nothing was written")


def _check_some_gold(datasets: list[Dataset]) -> None:
    """``_nothing_to_score`` before any work when no page of the datasets has gold text: a crawl
    of one's own was fitted first, and the fit's 'the training pages have no labelled rows'
    named no dataset (or, with labels.parquet, every fold was fitted to score nothing)."""
    if not any(page.gold_path.exists() for ds in datasets for page in ds.pages()):
        raise _nothing_to_score(datasets)


def _thesis_folds(pages: list[Page], seed: int, train_share: float, splits) -> list:
    """Seed 003's pooled node split: train on 66 % of the nodes, score nodes on the rest.

    Text is scored on every page (nodes of one page fall on both sides, so this flatters,
    as the thesis protocol does at node level).
    """
    from hwnoise.extractors.model import training_rows

    rows = training_rows(pages)
    if rows.empty:
        raise EvaluateError("--protocol thesis needs labelled rows (gold text) in the dataset")
    train_idx, test_idx = splits(rows, "thesis", seed=seed, train_share=train_share)[0]
    test = rows.iloc[test_idx]
    test_nodes = {str(pid): np.sort(g["node"].to_numpy(dtype=np.int64))
                  for pid, g in test.groupby("page", sort=False)}
    empty = np.array([], dtype=np.int64)
    masks = {"train_rows": rows.iloc[train_idx].reset_index(drop=True),
             "test_nodes": defaultdict(lambda: empty, test_nodes)}
    return [([], pages, masks)]


def write_outputs(report: dict, out: str | Path, page_rows: list[dict] | None = None, *,
                  figures: bool = True) -> list[Path]:
    """report.json, report.md, pages.csv and the PNG figures under ``out``."""
    from hwnoise.report import write_figures, write_markdown

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    earlier = _earlier_outputs(out)
    written: list[Path] = []
    if page_rows:
        fields = sorted({k for r in page_rows for k in r},
                        key=lambda k: (k not in ("dataset", "page", "site", "method"), k))
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=fields)
        w.writeheader()
        w.writerows(page_rows)
        atomic_write_text(out / "pages.csv", buf.getvalue())
        written.append(out / "pages.csv")
    figs = write_figures(report, out) if figures else []
    written.extend(figs)
    written.append(write_markdown(report, out / "report.md", figures=[p.name for p in figs]))
    written.append(out / "report.json")  # last: it lists what was written
    report["outputs"] = [p.name for p in written]
    write_json(out / "report.json", report)
    for name in earlier - set(report["outputs"]):  # an earlier run's, this one wrote none in its place
        (out / name).unlink(missing_ok=True)
    return written


def _earlier_outputs(out: Path) -> set[str]:
    """The files an earlier run into ``out`` listed as its own (its report.json's ``outputs``):
    a rerun with fewer methods (or with --no-figures) replaces those it writes again and removes
    the rest of them (a confusion-cetd.png of a method no longer run); a file hwnoise did not list
    there is never touched."""
    try:
        names = json.loads((out / "report.json").read_text(encoding="utf-8")).get("outputs") or []
    except (OSError, ValueError, AttributeError):
        return set()
    return {n for n in names if isinstance(n, str) and n == Path(n).name and n not in ("", ".", "..")
            and (n.endswith(".png") or n in ("pages.csv", "report.md"))}
