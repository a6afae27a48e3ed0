"""``hwnoise train``: fit a noise model, score it with a protocol, write model, ARFF and reports.

The model is fitted on every labelled row given (the tree printed is the one trained on all the
data, as J48 prints it); the scores come from the protocol's own splits, each split fitting a
fresh model on its training rows, or from ``test`` (an ARFF file or dataset folder scored by the
model trained on everything, as Weka's ``-t``/``-T``). Scores are reported per dataset.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hwnoise import __version__
from hwnoise.dataset import Dataset, DatasetError, atomic_write_text, check_distinct, now_iso, write_json
from hwnoise.errors import ArgumentError, HwnoiseError, check_keywords, check_kinds, kind_of
from hwnoise.features.columns import CLASSES, LABEL
from hwnoise.outputs import check_out_dir
from hwnoise.progress import info
from hwnoise.scheduler import Scheduler, check_spec
from hwnoise.outputs import markdown_text, printable
from hwnoise.training.arff import PAGE_ATTRIBUTE, feature_columns, read_arff, write_arff
from hwnoise.training.metrics import node_scores, scores_from_confusion
from hwnoise.training.model import NoiseModel, check_features, resolve_features, usable_features
from hwnoise.training.protocols import PROTOCOLS, ProtocolError, splits
from hwnoise.training.spec import AS_PRESET, check_probabilities

#: The keys of a report record that node-level training fills, in report order.
RECORD_KEYS = ("dataset", "protocol", "method", "classifier", "pages", "nodes", "precision", "recall",
               "f1", "content_f1", "RR", "RC", "CC", "CR")


def _is_arff(path: Path) -> bool:
    return path.suffix.lower() == ".arff" and not path.is_dir()


def _needs_table(ds: Dataset) -> bool:
    """Whether ``ds``'s feature table must be (re)built: it has none, or its labels changed since."""
    return not ds.has_features() or ds.labels_newer()


def _ready(path: Path, scheduler: Scheduler | None = None) -> Dataset:
    """The dataset at ``path``, its feature table built first (with ``scheduler``, else in this
    process) when it has none or labels changed."""
    ds = Dataset(path)
    if _needs_table(ds):
        try:
            from hwnoise.features.build import build_features
        except ImportError:
            raise DatasetError(f"{path}: no features.parquet yet; run 'hwnoise features {path}'") from None
        info(f"{ds.name}: " + ("labels.parquet changed since the feature table; recomputing it"
                               if ds.has_features() else "no feature table yet; computing it")
             + " (hwnoise features)")
        build_features(ds, scheduler=scheduler)
    return ds


def _tables_scheduler(given: list, options: "TrainOptions") -> tuple[Scheduler | None, bool]:
    """The scheduler that builds the inputs' missing feature tables, and whether train owns it
    (then the fits run on it too, and train closes it): the options' own Scheduler, or one started
    from its name or address (a Dask cluster, a local pool) when some table must be built. Without
    it a table was walked here on one core, and a cluster named with ``--scheduler`` was reached
    only after that walk."""
    unbuilt = [p for p in _table_inputs(given, options) if _needs_table(Dataset(p))]
    if not unbuilt or options.scheduler in (None, "sync"):
        return None, False
    if isinstance(options.scheduler, Scheduler):
        return options.scheduler, False
    return Scheduler(options.scheduler, options.workers, sees=list(map(str, given))), True


def _table_inputs(given: list, options: "TrainOptions") -> list[Path]:
    """The dataset folders train reads feature tables of: the inputs and ``--test``'s."""
    paths = [*given, *([] if options.test is None else [options.test])]
    return [Path(p) for p in paths if Path(p).is_dir() and not _is_arff(Path(p))]


def _schema_names(ds: Dataset) -> list[str] | None:
    """The feature table's column names (its Parquet schema; None for a corrupt table, which
    ``read_features`` then names in one line)."""
    try:
        return list(ds.feature_schema().names)
    except DatasetError:
        return None


def _dataset_table(path: Path, features=None, text: bool = True,
                   columns: Sequence[str] | None = None) -> tuple[pd.DataFrame, list[dict], list[str]]:
    """A dataset's feature table, its query and its column names: every column (but
    ``TEXT_COLUMNS`` when not ``text``), or with ``features`` (a ``--features`` spec) only those
    features and the keys, or with ``columns`` only those the table has (projection: what is
    not asked stays on disk)."""
    ds = _ready(path)
    have = _schema_names(ds)
    read = None
    if columns is not None:
        read = list(columns)
    elif features is not None and have is not None:
        feats = resolve_features(features, have)
        if set(feats) <= set(have):  # else read all, so that the error names what there is
            read = [*feats, *KEY_COLUMNS]
    elif not text and have is not None:
        read = [c for c in have if c not in TEXT_COLUMNS]
    df = ds.read_features(read)
    if "dataset" not in df.columns:
        df["dataset"] = ds.name
    if "site" not in df.columns:
        df["site"] = ds.name
    return df, ds.query(), list(have or df.columns)


#: The free-text columns, which no model uses: training reads the table without them.
TEXT_COLUMNS = ("text", "xpath")

#: Columns read beside the features when a table is read for given features.
KEY_COLUMNS = ["dataset", "site", "page", "node", "parent", "tag", LABEL]
#: Other columns training reads (the inner threshold weighs nodes by their own characters).
TRAIN_COLUMNS = ["own_chars"]


def fit_columns(features) -> list[str]:
    """The columns a fit on ``features`` reads: keys, label, ``TRAIN_COLUMNS`` and the features
    (assembled rows keep only these: no text, no xpath)."""
    return list(dict.fromkeys([*KEY_COLUMNS, *TRAIN_COLUMNS, *features]))


def table_columns(features) -> list[str]:
    """The stored columns a fit on ``features`` reads from a feature table: ``fit_columns`` and
    the columns its context features are computed from (``ctx_parent_X`` reads ``X``)."""
    from hwnoise.features.assembly import CONTEXT_PREFIXES, context_base

    bases = [context_base(f) for f in features if f.startswith(CONTEXT_PREFIXES)]
    return list(dict.fromkeys([*fit_columns(features), *bases]))


def load_inputs(inputs: str | os.PathLike | Sequence[str | os.PathLike], *,
                features=None, text: bool = True,
                columns: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """The pooled table of ``inputs`` (dataset folders, or one ARFF file) and a description
    ``{kind: "arff"|"datasets", names: [...], query: [{term, kind}], sources: [...],
    columns: [...], records: bool}`` (``columns``: every column the tables have, read or not;
    ``records``: a dataset's gold has data records).
    With ``features`` (a ``--features`` spec) a dataset's table is read with only those
    features and the key columns; with ``columns``, only those of them it has; without
    ``text`` a dataset's table is read without ``TEXT_COLUMNS``."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    paths = [Path(p) for p in inputs]
    if not paths:
        raise HwnoiseError("no input given: name dataset folders or one ARFF file")
    arffs = [p for p in paths if _is_arff(p)]
    if arffs:
        if len(paths) > 1:
            raise HwnoiseError("give either one ARFF file or dataset folders, not both or several ARFF files")
        df = read_arff(paths[0])
        df["dataset"] = paths[0].stem
        return df, {"kind": "arff", "names": [paths[0].stem], "query": [], "sources": [str(paths[0])],
                    "columns": list(df.columns)}
    missing = next((p for p in paths if not p.exists()), None)
    if missing is not None:
        raise DatasetError(f"{missing}: no such dataset folder or ARFF file")
    check_distinct(Dataset(p) for p in paths)
    frames, query, names, have = [], [], [], {}
    seen_terms: set[tuple[str, str]] = set()
    for p in paths:
        df, q, cols = _dataset_table(p, features, text, columns)
        have.update(dict.fromkeys([*cols, "dataset", "site"]))
        frames.append(df)
        names.extend(df["dataset"].astype(str).unique().tolist())
        for t in q:
            key = (str(t.get("term")), str(t.get("kind", "")))
            if key not in seen_terms:
                seen_terms.add(key)
                query.append({"term": key[0], "kind": key[1]})
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return df, {"kind": "datasets", "names": list(dict.fromkeys(names)), "query": query,
                "sources": [str(p) for p in paths], "columns": list(have),
                "records": any(Dataset(p).has_records() for p in paths)}


def _with_schema(df: pd.DataFrame, desc: dict) -> pd.DataFrame:
    """No rows, the columns of ``df`` and those of the tables ``desc`` names (their stored
    types), for an error that lists every usable feature column, read or not."""
    probe = df.iloc[:0]
    for src in desc["sources"]:
        ds = Dataset(src)
        names = [c for c in (_schema_names(ds) or []) if c not in probe.columns and c not in TEXT_COLUMNS]
        if names:
            empty = ds.feature_schema().empty_table().select(names).to_pandas()
            probe = pd.concat([probe, empty], axis=1)
    return probe


#: What to do about a crawl without gold (``hwnoise label``, issue 13's labels).
_NO_GOLD = (" (gold/ID.txt or records/ID.json), or labels: 'hwnoise label DATASET --auto' labels a crawl "
            "without gold, and train then uses them")


def _labelled(df: pd.DataFrame, what: str, to: str = "to train on") -> pd.DataFrame:
    """The labelled rows of ``df`` (``what`` names it in errors; ``to``: what the labels are for)."""
    if LABEL not in df.columns:
        raise HwnoiseError(f"{what}: no 'label' column; pages need gold text {to}{_NO_GOLD}")
    mask = df[LABEL].isin(CLASSES)
    other = sorted(set(df[LABEL].dropna().astype(str)) - set(CLASSES))
    if other:  # a Weka user's class set: J48 -t's path takes it, the node protocols do not
        raise HwnoiseError(f"{what}: classes {other[:5]} are not hwnoise's S/N; give the ARFF file with "
                           "no --protocol (or --protocol weka-cv): J48 and Weka's cross-validation "
                           "take any class set")
    if not mask.any():
        raise HwnoiseError(f"{what}: no labelled rows (S/N); pages need gold text {to}{_NO_GOLD}")
    if mask.all() and isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1:
        return df  # every row labelled: no copy
    if not mask.all():
        info(f"{what}: {int((~mask).sum())} rows without a label (pages without gold) left out")
    return df[mask].reset_index(drop=True)


def _records(df: pd.DataFrame, pred: np.ndarray, protocol: str, classifier: str) -> list[dict]:
    scored = np.array([p is not None for p in pred], dtype=bool)
    out = []
    names = df["dataset"].astype(str).to_numpy() if "dataset" in df.columns else np.full(len(df), "data")
    for name in dict.fromkeys(names.tolist()):
        m = scored & (names == name)
        if not m.any():
            continue
        s = node_scores(df[LABEL].to_numpy()[m], pred[m])
        rec = {"dataset": name, "protocol": protocol, "method": "model", "classifier": classifier}
        if PAGE_ATTRIBUTE in df.columns:
            rec["pages"] = int(df[PAGE_ATTRIBUTE][m].nunique())
        rec.update({k: s[k] for k in ("nodes", "precision", "recall", "f1", "content_f1", "RR", "RC", "CC", "CR")})
        out.append(rec)
    return out


def _page_groups(df: pd.DataFrame) -> np.ndarray | None:
    if PAGE_ATTRIBUTE not in df.columns:
        return None
    keys = df[PAGE_ATTRIBUTE].astype(str)
    if "dataset" in df.columns:
        keys = df["dataset"].astype(str) + "\x1f" + keys
    return keys.to_numpy()


def _assembled(df: pd.DataFrame, desc: dict, features: list[str], stacker, show: bool) -> pd.DataFrame:
    """``df`` with every column ``features`` asks for, built per page by the one feature assembly
    (stacked extractors and page context need the pages' HTML)."""
    from hwnoise.features.assembly import (FeatureCache, add_context, assemble_page,
                                           page_context_names, stack_names)
    from hwnoise.progress import progress
    from hwnoise.training.rows import RowCollector

    if not (stack_names(features) or page_context_names(features)):
        if not any(f not in df.columns for f in features):
            return df
        keys = [c for c in ("dataset", "page") if c in df.columns]
        return pd.concat([add_context(g.reset_index(drop=True), features)
                          for _, g in df.groupby(keys, sort=False)], ignore_index=True)
    if desc["kind"] != "datasets":
        raise HwnoiseError("stacked extractors and page context need dataset folders (the pages' "
                           "HTML), not an ARFF file")
    cache = FeatureCache()
    pages = [p for src in desc["sources"] for p in Dataset(src).pages()]
    keep = fit_columns(features)
    parts = RowCollector()  # no second copy of the rows when they are joined
    for page in (progress(pages, desc="features", unit="page") if show else pages):
        try:
            rows = assemble_page(page, features, stacker=stacker, cache=cache).rows
            parts.add(rows[[c for c in keep if c in rows.columns]])  # what training reads
        except HwnoiseError:
            raise
        except Exception as exc:  # noqa: BLE001 - one unreadable page is reported and skipped
            info(f"hwnoise: train: skipped {page.html_path}: {type(exc).__name__}: {exc}")
    df = parts.frame()
    if df.empty and not len(df.columns):
        raise HwnoiseError(f"{', '.join(desc['sources'])}: no page's HTML could be read, and this "
                           "model's stacked extractors / page context need it; give the dataset "
                           "with its pages, or choose --preset thesis (or --stack none)")
    return df


#: The model options (what model: a preset or a whole ``spec``, then single fields over it), in the
#: order the spec reads them; ``hwnoise.commands._model_options.model_options`` builds their dict
#: from the CLI.
MODEL_OPTIONS = ("spec", "preset", "classifier", "features", "stack", "context", "page_context",
                 "threshold", "cut", "params", "content_from", "union", "union_gate", "regions")
#: The model options whose None says "none": not given, they are AS_PRESET.
_AS_PRESET_OPTIONS = ("union", "union_gate", "regions")


def model_spec(options: dict | None, *, n_sites: int, arff: bool = False, records: bool = False):
    """The spec of the model to train: ``options`` (preset and the model options the user gave:
    classifier, features, stack, context, page_context, threshold, cut, params, content_from, union,
    union_gate, regions) over the preset
    (``auto``: by ``n_sites`` and whether the gold has ``records``)."""
    from hwnoise.training.spec import ModelSpec, preset_spec, resolve_preset

    # None is "not given", but for ``union``, ``union_gate`` and ``regions`` (where it says "none":
    # not given is AS_PRESET)
    opts = {k: v for k, v in (options or {}).items()
            if v is not AS_PRESET and (v is not None or k in _AS_PRESET_OPTIONS)}
    given = opts.pop("spec", None)
    preset = opts.pop("preset", None)
    if given is not None:  # a whole spec stands for the preset (its own "auto" resolved as one)
        return resolve_preset(given, n_sites, opts, records=records)
    if arff and preset is None:  # a user's ARFF: J48 unless told otherwise, its own attributes
        return ModelSpec.from_dict({"classifier": "j48", **opts}, where="option")
    return resolve_preset(preset_spec(preset), n_sites, opts, records=records)


#: fewer labelled rows than this are fitted in this process under the default --scheduler local
SMALL_ROWS = 20_000


@dataclass
class _FitJob:
    """What a fit task needs: the input paths (read by the task) or, in this process, the data."""

    inputs: list[str]
    classifier: str
    features: list[str]
    query: list
    seed: int
    params: dict | None
    protocol: str
    k: int
    train_share: float
    data: pd.DataFrame | None = None
    spec: dict | None = None        # the ModelSpec (threshold by inner CV and all)
    keep_model: bool = False        # fold tasks return their model too (the saved one)


def _train_fit(fold: int, job: _FitJob):
    """Fold -1: the model fitted on all the labelled rows; fold i: ``(test index, predictions)``
    of the protocol's split i."""
    data = job.data
    if data is None:
        import contextlib
        import io

        with contextlib.redirect_stderr(io.StringIO()):  # the client said it already
            df, desc = load_inputs(job.inputs, columns=table_columns(job.features))
            data = _labelled(df, ", ".join(desc["sources"]))

    def fit(take: np.ndarray | None) -> NoiseModel:
        """A model fitted on ``data``'s rows at positions ``take`` (all when None): no copy."""
        groups = lambda: _page_groups(data)  # noqa: E731 - only a classifier taking groups asks
        if job.spec is not None:
            from hwnoise.training.spec import ModelSpec, fit_spec

            return fit_spec(ModelSpec.from_dict(job.spec), data, query=job.query, seed=job.seed,
                            groups=groups, take=take)
        return NoiseModel(job.classifier, job.features, query=job.query, seed=job.seed,
                          params=job.params).fit(data, groups=groups, rows=take)

    if fold < 0:
        return fit(None)
    train_idx, test_idx = splits(data, job.protocol, seed=job.seed, k=job.k, train_share=job.train_share)[fold]
    m = fit(train_idx)
    pred = m.predict(data, test_idx)
    return (test_idx, pred, m) if job.keep_model else (test_idx, pred)


_PATH = (str, os.PathLike)
#: TrainOptions' fields checked at construction: the kinds each takes and what to give instead.
_OPTION_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "protocol": ((str, type(None)), f"one of {', '.join(PROTOCOLS)}"),
    "test": ((*_PATH, type(None)), "an ARFF file or dataset folder (a str or pathlib.Path)"),
    "seed": ((numbers.Integral,), "a whole number"),
    "k": ((numbers.Integral, type(None)), "a whole number of folds"),
    "train_share": ((numbers.Real,), "a number between 0 and 1"),
    "out": ((*_PATH, type(None)), "a folder (a str or pathlib.Path)"),
    "all_pages": ((bool, np.bool_), "True or False"),
    "verbose": ((bool, np.bool_), "True or False"),
    "progress": ((bool, np.bool_), "True or False"),
    "workers": ((numbers.Integral, type(None)), "a whole number of workers"),
    "scheduler": ((str, Scheduler, type(None)), "local, threads, sync, a Dask scheduler's address "
                  "(tcp://HOST:PORT) or a hwnoise.scheduler.Scheduler"),
}


@dataclass(frozen=True, kw_only=True)
class TrainOptions:
    """How a training run goes (not what model: that is the model options' dict)."""

    #: Scoring: the protocol (None: pages, or weka-cv on a Weka user's ARFF) or a ``test`` ARFF
    #: file or dataset folder; the seed of splits and classifiers; the folds of cv and cross-site
    #: (None: 5) and of weka-cv (None: 10); the share of pages the pages protocol trains on.
    protocol: str | None = None
    test: str | os.PathLike | None = None
    seed: int = 1
    k: int | None = None
    train_share: float = 0.66
    #: Output: the folder written (None: nothing), the saved model fitted on every page,
    #: format_result's text on stderr, progress bars.
    out: str | os.PathLike | None = None
    all_pages: bool = False
    verbose: bool = False
    progress: bool = False
    #: Running the fits: ``hwnoise.scheduler``'s name, address or Scheduler (None: here, one fit
    #: after the other) and its workers.
    scheduler: Any = None
    workers: int | None = None
    #: Stages wired in: the stacked extractors' runner (``hwnoise.extractors.model.run_extractor``)
    #: and the region scorer's fitter (``hwnoise.extractors.region_fit.model_region_scorer``).
    stacker: Callable | None = None
    region_fitter: Callable | None = None

    def __post_init__(self) -> None:
        """Each option of its kind, as an ``ArgumentError`` naming it: seed='1' was a numpy
        casting TypeError after the rows were read, k='3' a comparison TypeError, and
        all_pages='no' (a true string) fitted the saved model on every page, silently."""
        check_kinds("train", {name: getattr(self, name) for name in _OPTION_KINDS}, _OPTION_KINDS)
        if isinstance(self.scheduler, str):  # a name it does not know: before the rows are read
            check_spec(self.scheduler)

    @classmethod
    def split(cls, kwargs: dict[str, Any]) -> tuple[dict[str, Any], TrainOptions]:
        """``train``'s keyword arguments as the model options' dict and the run's options (a
        TypeError names the first that is neither)."""
        run = [f.name for f in fields(cls)]
        check_keywords("train", kwargs, [*MODEL_OPTIONS, *run])
        return ({k: v for k, v in kwargs.items() if k in MODEL_OPTIONS},
                cls(**{k: v for k, v in kwargs.items() if k in run}))


def _model_options(model: dict | None) -> dict[str, Any]:
    """Plan: every model option in ``MODEL_OPTIONS``' order, those not given None (or AS_PRESET),
    ``spec`` checked (``_given_spec``)."""
    model = model or {}
    check_keywords("train", model, MODEL_OPTIONS)
    options = {k: model.get(k, AS_PRESET if k in _AS_PRESET_OPTIONS else None) for k in MODEL_OPTIONS}
    options["spec"] = _given_spec(options["spec"], options["preset"])
    return options


def _given_spec(spec: Any, preset: Any) -> Any:
    """``spec`` (a ModelSpec, or a dict of its fields as model.json's "spec" holds) as a ModelSpec
    checked field by field (a SpecError naming the field), or None; an ArgumentError for anything
    else, or beside a ``preset`` (the spec holds its own)."""
    from hwnoise.training.spec import ModelSpec

    if spec is None:
        return None
    if preset is not None:
        raise ArgumentError(f"train: spec and preset {preset!r:.40} both given; give one (a spec names its "
                            "own preset, or none)")
    if isinstance(spec, ModelSpec):
        spec = spec.to_dict()
    elif not isinstance(spec, dict):
        raise ArgumentError(f"train: spec is {kind_of(spec)}; give a hwnoise.ModelSpec (or a dict of its "
                            "fields, as model.json's \"spec\")")
    return ModelSpec.from_dict(spec, where="train: spec")


def _custom(model: dict) -> bool:
    """Whether a model option beyond classifier, features and params is given (then J48 -t's
    path, ``_weka_run``, is not taken)."""
    return (model["spec"] is not None or model["preset"] not in (None, "auto") or bool(model["stack"])
            or bool(model["context"]) or bool(model["page_context"]) or model["threshold"] is not None
            or model["content_from"] is not None or any(model[k] is not AS_PRESET for k in _AS_PRESET_OPTIONS))


def train(inputs, model: dict | None = None, options: TrainOptions | None = None) -> dict:
    """Fit a model of the spec the ``model`` options give (``MODEL_OPTIONS``: ``preset``,
    default "auto": site for one site's pages, general for several, records for several whose
    gold has data records; then single fields over it), score it (protocol splits or
    ``options.test``), and write into ``options.out`` (when given) model.joblib, model.json,
    train.arff, report.json and report.md. ``options.verbose`` prints format_result's text on
    stderr. ``TrainOptions.split`` makes both from keyword arguments (``hwnoise.api.train``).

    Which rows the saved model is fitted on: with the pages protocol, the split's training
    pages (the model whose scores are printed; ``hwnoise evaluate --model`` then scores only
    the pages it never saw), or every page with ``all_pages``; with the other protocols or
    ``test``, every labelled row. ``stacker`` runs stacked extractors; ``region_fitter`` fits
    the region scorer of a spec with ``regions`` (without it such a model has none). Returns
    the report (``{hwnoise, created, results}``) with, besides, ``tree``, ``classifier``,
    ``features``, ``spec``, ``model`` and ``out``. ``scheduler`` runs the fits as tasks; each
    task reads the inputs itself (unless the spec's columns need the pages, then the assembled
    rows travel).

    ``protocol`` None: ``pages``, or for one ARFF file without a ``page`` attribute (a Weka
    user's file) ``weka-cv``, J48's own default evaluation (see :mod:`.arff_train`)."""
    model = _model_options(model)
    options = TrainOptions() if options is None else options
    _check_test_alone(options)
    if options.out is not None:  # before the fits: a folder that cannot be written loses none of them
        check_out_dir(options.out, "out")
    weka = None if _custom(model) else _weka_run(inputs, model, options)
    if weka is not None:
        return weka
    _check_folds(options)
    options = replace(options, protocol=options.protocol or "pages", k=5 if options.k is None else options.k)
    from hwnoise.scheduler import for_workers

    given = for_workers(options.scheduler, [inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)
    sched, own = _tables_scheduler(given, options)
    try:
        for p in _table_inputs(given, options) if sched is not None else ():
            _ready(p, sched)
        return _train_rows(given, model, replace(options, scheduler=sched) if own else options)
    finally:
        if own:
            sched.close()


def _train_rows(given: list, model: dict, options: TrainOptions) -> dict:
    """``train`` once the inputs' tables are built: plan, fit, score and write."""
    spec, feats, data, desc = _plan_rows(given, model, options)
    _check_protocol(options, desc, data, ", ".join(desc["sources"]))
    fitted, fitted_on, scored = _fit(given, spec, feats, data, desc, options)
    tree = fitted.tree_text()
    user_arff = desc["kind"] == "arff" and model["features"] is None
    records, fitted.protocol = _score(fitted, spec.classifier, feats, data, scored, user_arff, options)
    fitted.scores = records
    fitted.trained_on = _trained_on(fitted_on)
    report = {"hwnoise": __version__, "created": now_iso(), "results": records}
    if options.verbose:  # the tree, confusion matrices and weighted scores, for people (stderr)
        info(format_result({**report, "tree": tree}))
    out = None if options.out is None else Path(options.out)
    if out is not None:
        _write_model(out, fitted, data, desc, report)
    return {**report, "tree": tree, "classifier": spec.classifier, "features": list(fitted.features),
            "spec": spec, "model": fitted, "out": str(out) if out is not None else None,
            "fitted_pages": _page_count(fitted_on)}


def _fit(given: list, spec, feats: list[str], data: pd.DataFrame, desc: dict,
         options: TrainOptions) -> tuple[NoiseModel, pd.DataFrame, list]:
    """Fit: the protocol's folds and the model to save (with its region scorer); returns it,
    the rows it was fitted on and the fits to score (``_saved_model``)."""
    folds = splits(data, options.protocol, seed=options.seed, k=options.k,
                   train_share=options.train_share) if options.test is None else []
    save_split = options.test is None and options.protocol == "pages" and not options.all_pages
    job = _FitJob(list(map(str, given)), spec.classifier, feats, desc["query"], options.seed, spec.params or None,
                  options.protocol, options.k, options.train_share, spec=spec.to_dict(), keep_model=save_split)
    fitted = _fit_models(job, data, len(folds), options,
                         assembled=bool(spec.stack or spec.context or spec.page_context))
    saved, fitted_on, scored = _saved_model(fitted, data, folds, save_split)
    if spec.regions and options.region_fitter is not None and desc["kind"] != "arff":
        pages = [p for d in given for p in Dataset(d).pages()]
        scorer = options.region_fitter(saved, data, pages, progress=options.progress)
        saved.regions = scorer.to_dict() if scorer is not None else None
    saved.inner_oof = None  # what the region scorer was fitted on: not kept
    return saved, fitted_on, scored


def _saved_model(fitted: list, data: pd.DataFrame, folds: list, save_split: bool) -> tuple[Any, pd.DataFrame, list]:
    """The model to save, the rows it was fitted on (their keys) and the fits to score: with
    ``save_split``, the model of the split's training pages, the one scored; else the model of
    every row, and the protocol's fits scored beside it."""
    if save_split:
        keys = [c for c in ("dataset", PAGE_ATTRIBUTE) if c in data.columns]
        return fitted[0][2], data[keys].iloc[folds[0][0]], fitted
    return fitted[0], data, fitted[1:]


def _plan_rows(given: list, model: dict, options: TrainOptions) -> tuple[Any, list[str], pd.DataFrame, dict]:
    """Plan: the spec the ``model`` options give over the inputs, its feature columns, and the labelled
    rows its fit reads, with the inputs' description. A dataset's table is read twice, each time
    only what is needed: its names and sites to choose the spec, then the columns the spec's fit
    reads (none when its rows are rebuilt page by page). An ARFF file is read whole."""
    df, desc = load_inputs(given) if any(_is_arff(Path(p)) for p in given) \
        else load_inputs(given, columns=["dataset", "site"])
    what = ", ".join(desc["sources"])
    arff = desc["kind"] == "arff"
    n_sites = int(df["site"].nunique()) if "site" in df.columns else 1
    spec = model_spec(model, n_sites=n_sites, arff=arff, records=bool(desc.get("records")))
    check_probabilities(spec)  # before the rows its fit reads
    if model.get("features") is None and model.get("spec") is None and arff:
        feats = feature_columns(df)  # a user's ARFF: every attribute but page and the class
        spec.features = list(feats)
    else:
        feats = resolve_features(spec.features, desc["columns"])
        if feats != resolve_features(spec.features):
            spec.features = list(feats)
        feats = spec.columns()
        from hwnoise.features.assembly import (check_table_columns, page_context_names, stack_names,
                                               unknown_features)

        absent = [f for f in unknown_features(feats) if f not in (desc["columns"] or ())]
        if not arff and absent:  # rebuilt page by page, it would be missing everywhere
            check_features(absent, _with_schema(df.iloc[:0, :0], desc), what)
        for ds in ([] if arff else map(Dataset, desc["sources"])):
            check_table_columns(ds, feats, _schema_names(ds))
        if options.test is not None and not _is_arff(Path(options.test)) and Path(options.test).is_dir():
            check_table_columns(Dataset(options.test), feats)  # before the fit, not after it
            _labelled(load_inputs([options.test], columns=[LABEL])[0], f"--test {options.test}",
                      "to score the model on")
        if stack_names(feats) or page_context_names(feats):
            df = df.iloc[:0]  # rebuilt page by page from the pages and their stored rows
        elif not arff:
            del df
            df, _ = load_inputs(given, columns=table_columns(feats))
        df = _assembled(df, desc, feats, options.stacker, options.progress)
    if not arff and not set(feats) <= set(usable_features(df)):  # name every usable column stored
        check_features(feats, _with_schema(df, desc), what)
    check_features(feats, df, what)
    _warn_empty(feats, df, what)
    return spec, feats, _labelled(df, what), desc


def _warn_empty(feats: list[str], df: pd.DataFrame, what: str) -> None:
    """Say which features hold no value on any training row: the model cannot use them (the
    rendered ones without ``hwnoise render``, an extractor stacked that failed on every page)."""
    empty = [f for f in feats if f in df.columns and df[f].isna().all()] if len(df) else []
    if not empty:
        return
    from hwnoise.features.rendered import RENDER_FEATURES

    hint = ("; the rendered ones come from 'hwnoise render DATASET', then 'hwnoise features DATASET'"
            if set(empty) & set(RENDER_FEATURES) else "")
    info(f"hwnoise: train: warning: {what}: no training row has a value of {', '.join(empty)}, so the "
         f"model cannot use them{hint}")


def _check_test_alone(options: TrainOptions) -> None:
    """A ``ProtocolError`` for a protocol or folds beside ``test``: the scores come from the test
    file, and ``--test T --protocol cv -k 3`` printed them without a word that cv was not run."""
    if options.test is None:
        return
    _check_test_place(Path(options.test))
    given = [f"--protocol {options.protocol}" if options.protocol is not None else "",
             f"-k {options.k}" if options.k is not None else ""]
    given = [g for g in given if g]
    if given:
        raise ProtocolError(f"{' and '.join(given)} split the input for scoring, and --test {options.test} "
                            "scores the model fitted on all of it instead: give one or the other")


def _check_test_place(test: Path) -> None:
    """A ``DatasetError`` naming ``--test`` for a place that is no ARFF file nor dataset folder,
    before any fit: it was the message for a training input ('X: not a dataset folder... Make one
    with hwnoise collect...'), that did not say which argument nor how test pages get features."""
    if _is_arff(test):
        return
    arff = " (TEST.arff, e.g. from 'hwnoise export-arff')"
    if not test.exists():
        raise DatasetError(f"--test {test}: no such dataset folder or ARFF file; give the dataset "
                           f"folder of the test pages or an ARFF file{arff}")
    if not (test / "dataset.json").is_file():
        raise DatasetError(
            f"--test {test}: not a dataset folder (no dataset.json) nor an ARFF file. Give the dataset "
            f"folder of labelled test pages, with its features ('hwnoise features DIR', which train "
            f"runs when they are missing; pages saved in SRC/html/NAME.html become one with "
            f"'hwnoise import plain SRC --into DIR'), or an ARFF file{arff}")


def _check_folds(options: TrainOptions) -> None:
    """A ``ProtocolError`` for folds given to a protocol that has none (pages, thesis): ``-k 3``
    was dropped without a word and the pages split scored."""
    protocol = options.protocol or "pages"
    if options.k is not None and protocol in ("pages", "thesis"):
        raise ProtocolError(f"-k {options.k} is the number of folds of cv and cross-site; --protocol "
                            f"{protocol} has none: give --protocol cv or cross-site, or drop -k")


def _check_protocol(options: TrainOptions, desc: dict, data: pd.DataFrame, what: str) -> None:
    """A protocol that exists and that the rows can be split by."""
    protocol, test = options.protocol, options.test
    if test is None and protocol not in PROTOCOLS:
        raise ProtocolError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    if test is None and protocol != "thesis" and desc["kind"] == "arff" and PAGE_ATTRIBUTE not in data.columns:
        raise ProtocolError(
            f"{what} has no 'page' attribute, so --protocol {protocol} cannot split by page: only "
            "--protocol thesis and --test TEST.arff apply (export with 'hwnoise export-arff --page')")


def _fit_models(job: _FitJob, data: pd.DataFrame, n_folds: int, options: TrainOptions, *,
                assembled: bool) -> list:
    """Fit, as tasks of the scheduler: the model fitted on all the rows (not when the pages
    split's model is the one saved, ``job.keep_model``), then each fold's ``(test index,
    predictions[, model])``."""
    scheduler = options.scheduler
    sched = scheduler if scheduler is not None and not isinstance(scheduler, str) else None
    own = sched is None and scheduler not in (None, "sync")
    if own:
        from hwnoise.scheduler import Scheduler

        sched = Scheduler(scheduler, options.workers, sees=job.inputs)
    try:
        if sched is None or sched.inline or (sched.auto and len(data) < SMALL_ROWS) or assembled:
            job.data = data  # this process's rows (assembled ones cannot be reloaded by a task)
        tasks = [*([] if job.keep_model else [-1]), *range(n_folds)]
        if sched is None:
            return [_train_fit(t, job) for t in tasks]
        shipped = sched.share(job) if sched.distributed and job.data is not None else job
        return sched.map(_train_fit, tasks, shipped, desc="train: fit", unit="fit", small=len(data) < SMALL_ROWS)
    finally:
        if own and sched is not None:
            sched.close()


def _score(model: NoiseModel, classifier: str, feats: list[str], data: pd.DataFrame, folds: list,
           user_arff: bool, options: TrainOptions) -> tuple[list[dict], str]:
    """Score: the report's records and the protocol they come from, the model on ``options.test``
    (an ARFF file or a dataset folder) or the folds' predictions on ``data``."""
    if options.test is not None:
        test_path = Path(options.test)
        test_df, test_desc = load_inputs([test_path]) if _is_arff(test_path) \
            else load_inputs([test_path], columns=table_columns(feats))  # what the model reads
        if not user_arff:
            test_df = _assembled(test_df, test_desc, feats, options.stacker, options.progress)
        test_data = _labelled(test_df, f"--test {test_path}", "to score the model on")
        missing = [f for f in model.features if f not in test_data.columns]
        if missing:  # a Weka user's test file with other attributes, or a dataset of other columns
            raise HwnoiseError(f"{test_path}: no {', '.join(map(repr, missing))} among its columns; the "
                               f"test rows need the features the model is trained on "
                               f"({', '.join(map(repr, model.features))})")
        pred = model.predict(test_data)
        return _records(test_data, pred.astype(object), "test", classifier), "test"
    pred = np.full(len(data), None, dtype=object)
    for test_idx, fold_pred, *_ in folds:
        pred[test_idx] = fold_pred
    return _records(data, pred, options.protocol, classifier), options.protocol


def _write_model(out: Path, model: NoiseModel, data: pd.DataFrame, desc: dict, report: dict) -> None:
    """Write: model.joblib and model.json, the training rows as ARFF, report.json and report.md."""
    model.save(out)
    arff_feats = [f for f in model.features if f in data.columns]
    write_arff(data, out / "train.arff", features=arff_feats, page=PAGE_ATTRIBUTE in data.columns,
               relation="-".join(desc["names"])[:200] or "hwnoise")
    write_json(out / "report.json", report)
    atomic_write_text(out / "report.md", report_markdown(report))


def _trained_on(rows: pd.DataFrame) -> dict[str, list[str]] | None:
    """The pages a model was fitted on, per dataset (``evaluate --model`` never scores them)."""
    if PAGE_ATTRIBUTE not in rows.columns or "dataset" not in rows.columns:
        return None
    return {str(name): sorted(map(str, g[PAGE_ATTRIBUTE].unique()))
            for name, g in rows.groupby("dataset", sort=False)}


def _page_count(rows: pd.DataFrame) -> int | None:
    if PAGE_ATTRIBUTE not in rows.columns:
        return None
    keys = [c for c in ("dataset", PAGE_ATTRIBUTE) if c in rows.columns]
    return int(rows[keys].drop_duplicates().shape[0])



def _weka_run(inputs, model: dict, options: TrainOptions) -> dict | None:
    """J48 -t on one ARFF file (tree + Weka's stratified CV), when that is what is asked:
    ``--protocol weka-cv``, or no protocol on a file without hwnoise's ``page`` attribute."""
    from hwnoise.training.arff_train import J48_NAMES, noise_model, run_arff
    from hwnoise.training.arff import load_arff

    protocol, classifier = options.protocol, model["classifier"] or "j48"
    paths = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    if len(paths) != 1 or not _is_arff(Path(paths[0])) or protocol not in (None, "weka-cv"):
        return None
    if options.test is not None or model["features"] is not None or classifier.lower() not in J48_NAMES:
        if protocol == "weka-cv":
            raise ProtocolError("--protocol weka-cv runs J48 (--classifier j48 or j48-unpruned) on "
                                "all the attributes of one ARFF file, without --test or --features")
        return None
    table = load_arff(paths[0])
    if protocol is None and PAGE_ATTRIBUTE in table.strings:
        return None                          # hwnoise's own export: split by page
    run = run_arff(table, classifier=classifier, params=model["params"],
                   folds=10 if options.k is None else options.k, seed=options.seed)
    report = {"hwnoise": __version__, "created": now_iso(), "results": [run.record()]}
    fitted = noise_model(run, classifier)
    out = None if options.out is None else Path(options.out)
    _weka_output(run.text(), fitted, report, out, options.verbose)
    from hwnoise.training.spec import ModelSpec

    spec = ModelSpec(preset=None, features=list(table.names), classifier=classifier, params=dict(run.params))
    return {**report, "tree": run.tree, "weka_text": run.text(tree=False), "classifier": classifier,
            "features": list(table.names), "spec": spec, "model": fitted,
            "written": "model (model.json, model.joblib), report.json and j48.txt",
            "out": str(out) if out is not None else None}


def _weka_output(text: str, model: NoiseModel, report: dict, out: Path | None, verbose: bool) -> None:
    """Write J48 -t's run: its text on stderr when ``verbose``; into ``out`` (when given) the
    model, report.json and j48.txt."""
    if verbose:
        info(text)
    if out is not None:
        model.save(out)
        write_json(out / "report.json", report)
        atomic_write_text(out / "j48.txt", text + "\n")


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def _pooled(records: list[dict]) -> dict:
    counts = {k: sum(int(r[k]) for r in records) for k in ("RR", "RC", "CC", "CR")}
    s = scores_from_confusion(**counts)
    rec = {"dataset": "all", "protocol": records[0]["protocol"], "method": records[0].get("method", ""),
           "classifier": records[0].get("classifier"), "nodes": s["nodes"],
           **{k: s[k] for k in ("precision", "recall", "f1", "content_f1")}, **counts}
    if all("pages" in r for r in records):
        rec["pages"] = sum(r["pages"] for r in records)
    return rec


def report_markdown(report: dict, title: str = "Node-level scores") -> str:
    """The combined table across datasets: Table 4.4's weighted P/R/F1 (plus content F1) and
    Table 4.5's confusion matrix side by side; an 'all' row pools the counts."""
    rows = list(report.get("results") or [])
    made = f"hwnoise {report['hwnoise']}, {report.get('created', '')}. " if report.get("hwnoise") else ""
    lines = [f"# {title}", "",
             f"{made}Precision, recall and "
             "F1 weighted by class support as Weka reports them; content F1 is the F1 of class N. "
             "RR noise as noise, RC noise as content, CC content as content, CR content as noise.", "",
             "| dataset | protocol | method | pages | nodes | precision | recall | F1 | content F1 "
             "| RR | RC | CC | CR |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    if len(rows) > 1 and len({r.get("method") for r in rows}) == 1:
        rows = rows + [_pooled(rows)]
    for r in rows:
        method = r.get("method", "")
        if r.get("classifier"):
            method = f"{method} ({r['classifier']})"
        lines.append(
            f"| {markdown_text(r['dataset'])} | {markdown_text(r.get('protocol', ''))} | {markdown_text(method)} "
            f"| {r.get('pages', '')} | {r.get('nodes', '')} "
            f"| {_pct(r.get('precision'))} | {_pct(r.get('recall'))} | {_pct(r.get('f1'))} "
            f"| {_pct(r.get('content_f1'))} | {r.get('RR', '')} | {r.get('RC', '')} | {r.get('CC', '')} "
            f"| {r.get('CR', '')} |")
    return "\n".join(lines) + "\n"


def confusion_text(rec: dict) -> str:
    """A record's confusion matrix in Weka's layout (rows: actual class)."""
    w = max(len(str(rec[k])) for k in ("RR", "RC", "CC", "CR")) + 1
    w = max(w, 5)
    return ("=== Confusion Matrix ===\n\n"
            f"{'a':>{w}}{'b':>{w}}   <-- classified as\n"
            f"{rec['RR']:>{w}}{rec['RC']:>{w}} |   a = S (noise)\n"
            f"{rec['CR']:>{w}}{rec['CC']:>{w}} |   b = N (content)\n")


def format_result(result: dict, *, tree: bool = True) -> str:
    """What ``hwnoise train`` prints: the tree trained on all the data, then per dataset the
    confusion matrix and the weighted precision, recall and F1, then the combined table."""
    parts = []
    if tree and result.get("tree"):
        parts.append(result["tree"].rstrip() + "\n")
    if result.get("weka_text"):              # an ARFF file: J48 -t's own layout
        return "\n".join(parts + [result["weka_text"]])
    records = list(result.get("results") or [])
    for rec in records:
        pages = f"{rec['pages']} pages, " if "pages" in rec else ""
        parts.append(
            f"=== {printable(rec['dataset'])}: {rec.get('method', 'model')} ({rec.get('classifier', '')}), "
            f"protocol {rec['protocol']}, {pages}{rec['nodes']} test nodes ===\n\n"
            + confusion_text(rec) + "\n"
            f"Weighted Avg.  precision {rec['precision']:.3f}  recall {rec['recall']:.3f}  "
            f"F1 {rec['f1']:.3f}   content F1 {rec['content_f1']:.3f}\n")
    if len(records) > 1:
        parts.append(report_markdown({"results": records}, title="All datasets"))
    return "\n".join(parts)
