"""A saved noise model: the classifier and everything ``extract`` needs to compute its rows.

``NoiseModel`` carries the domain query (terms with kinds), the feature list, the fitted
classifier, the training data's hash, the hwnoise version, the protocol and its scores.

``save(dir)`` writes two files:

- ``model.json``, the safe format: metadata, and the tree itself as JSON when the classifier
  has a JSON form (``to_dict``/``from_dict``, as ``C45Classifier``). It never needs unpickling.
  For a classifier without a JSON form it holds the metadata only and says so (``contents``).
- ``model.joblib``, the whole object (joblib, i.e. pickle), with its sha256 and an HMAC-SHA256
  under this installation's key recorded in ``model.json``.

``NoiseModel.load(path)`` loads the JSON tree when there is one. Unpickling runs code from the
file, so a joblib file loads only when ``model.json`` beside it carries the HMAC this hwnoise
installation wrote for exactly those bytes, or when the caller passes ``allow_pickle=True``
(``--allow-pickle``). The key is ``$HWNOISE_KEY_FILE`` or ``~/.config/hwnoise/model-signing.key``
(created on first save, readable only by its owner).
"""
from __future__ import annotations

import hashlib
import hmac
import importlib
import inspect
import io
import json
import os
import secrets
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hwnoise import __version__
from hwnoise.dataset import atomic_write_bytes, names, now_iso, write_json
from hwnoise.errors import HwnoiseError
from hwnoise.jsontext import parse_json
from hwnoise.features import columns as C

MODEL_JSON = "model.json"
MODEL_JOBLIB = "model.joblib"
FORMAT = "hwnoise-model"
FORMAT_VERSION = 1
#: a node is in the union's extractor's text when that extractor keeps at least this share of its words
UNION_SHARE = 0.5
#: Where infinite feature values are clipped for classifiers that reject infinity.
_BIG = 1e30


class ModelError(HwnoiseError):
    """A model file that cannot be loaded (missing, malformed, or an unsigned pickle)."""


def resolve_features(spec: str | list[str] | tuple[str, ...] | None,
                     columns: list[str] | None = None) -> list[str]:
    """The feature list for ``spec``: None/"thesis" (the five), "extended" (the five and the
    extended set of features.columns), "all", "page" (extended without the dataset-level
    ``sitelevel``: what a bare page gives), "rendered" (extended plus the features of
    ``hwnoise render``), or "a,b,c" / a list. With ``columns``, ``tag``
    becomes the walker's numeric ``tag_code`` when the table has it. Sets join with "+"
    (``page+records``; ``records``: the ``rs_*`` columns of ``features.record_struct``)."""
    if isinstance(spec, str) and "+" in spec:
        feats = [f for part in spec.split("+") if part.strip() for f in resolve_features(part, columns)]
        return list(dict.fromkeys(feats))
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("", "thesis")):
        feats = list(C.THESIS_FEATURES)
    elif isinstance(spec, str) and spec.strip().lower() in ("extended", "all"):
        extended = getattr(C, "ALL_FEATURES", None)
        if extended is None:
            raise HwnoiseError("this hwnoise has no extended feature set (features.columns."
                               "ALL_FEATURES); use --features thesis or a,b,c")
        feats = list(extended)
    elif isinstance(spec, str) and spec.strip().lower() == "page":
        # what a bare page gives: the extended set without the dataset-level sitelevel
        feats = [f for f in C.ALL_FEATURES if f not in C.DATASET_FEATURES]
    elif isinstance(spec, str) and spec.strip().lower() == "records":
        from hwnoise.features.record_struct import RECORD_FEATURES

        feats = list(RECORD_FEATURES)
    elif isinstance(spec, str) and spec.strip().lower() == "rendered":
        from hwnoise.features.rendered import RENDER_FEATURES

        feats = list(C.ALL_FEATURES) + list(RENDER_FEATURES)
    elif isinstance(spec, str):
        feats = [f.strip() for f in spec.split(",") if f.strip()]
    else:
        feats = [str(f) for f in spec]
    if not feats:
        raise HwnoiseError("no features given")
    if columns is not None and "tag" in feats and "tag_code" in columns:
        feats = ["tag_code" if f == "tag" else f for f in feats]
    seen: dict[str, None] = {}
    for f in feats:
        seen.setdefault(f, None)
    return list(seen)


#: Columns of a feature table that are never features: its keys and the class.
NOT_FEATURES = ("dataset", "site", "page", "node", "parent", C.LABEL)


def usable_features(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` that can be features: numeric, boolean or categorical (an ARFF
    nominal attribute), never the keys (dataset, site, page, node, parent) nor the class; a
    free-text column (text, xpath, a string tag) is none."""
    return [c for c in df.columns if c not in NOT_FEATURES and (
        pd.api.types.is_numeric_dtype(df[c].dtype) or pd.api.types.is_bool_dtype(df[c].dtype)
        or isinstance(df[c].dtype, pd.CategoricalDtype))]


def check_features(feats: list[str], df: pd.DataFrame, what: str) -> None:
    """Raise one line naming each of ``feats`` that is not a usable feature column of ``df``
    (``what`` names the input), and listing the usable ones."""
    usable = usable_features(df)
    bad = [f for f in feats if f not in usable]
    if bad:
        kinds = ["no such column" if f not in df.columns else "not numeric" for f in bad]
        named = ", ".join(f"{f} ({k})" for f, k in zip(bad, kinds))
        raise HwnoiseError(f"{what}: --features {named}; the numeric feature columns are: "
                           f"{', '.join(usable) or 'none'}")


def threads():
    """A limit on the OpenMP/BLAS threads of classifier fits and predictions (``HWNOISE_THREADS``,
    default 1): gradient boosting's OpenMP threads spin against each other on a busy machine and
    make small fits hundreds of times slower; one thread per process is the safe default
    (``--workers`` gives more processes)."""
    from threadpoolctl import threadpool_limits

    try:
        n = max(1, int(os.environ.get("HWNOISE_THREADS", "1")))
    except ValueError:
        n = 1
    return threadpool_limits(limits=n)


def _one_class(classifier: str, label: str) -> str:
    """Why a classifier that needs both classes could not fit rows all labelled ``label``."""
    name = {C.NOISE: "S (noise)", C.CONTENT: "N (content)"}.get(label, repr(label))
    return (f"classifier {classifier}: every training row is {name}, and it needs rows of both classes; "
            "give pages whose gold has content and noise, or choose j48, cart, rf or gb, which fit one class")


def _allows_nan(est) -> bool:
    if getattr(est, "allows_nan", False):  # hwnoise's own JSON estimators
        return True
    try:
        from sklearn.utils import get_tags

        return bool(get_tags(est).input_tags.allow_nan)
    except Exception:  # noqa: BLE001 - older scikit-learn or a non-sklearn estimator
        return False


def _json_safe(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else repr(o)))


def _key_path() -> Path:
    env = os.environ.get("HWNOISE_KEY_FILE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "hwnoise" / "model-signing.key"


def _signing_key(create: bool) -> bytes | None:
    path = _key_path()
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    if not create:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        return path.read_bytes()
    except FileExistsError:
        return path.read_bytes()
    except OSError:
        return None


def _sign(data: bytes, key: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()



def _page_codes(df: pd.DataFrame, rows: np.ndarray | None = None) -> np.ndarray:
    """A page number for every row of ``df`` (of its rows ``rows`` when given): a page is its
    ``dataset`` and ``page``, all the rows one page without those columns."""
    keys = [c for c in ("dataset", "page") if c in df]
    n = len(df) if rows is None else len(rows)
    if not keys:
        return np.zeros(n, dtype=np.int64)
    sub = df[keys] if rows is None else df[keys].iloc[rows]
    return sub.groupby(keys, sort=False, observed=True, dropna=False).ngroup().to_numpy()


def _own_chars(df: pd.DataFrame, rows: np.ndarray | None = None) -> np.ndarray:
    """``df``'s ``own_chars`` as floats (of its rows ``rows`` when given), missing values 0."""
    col = df["own_chars"] if rows is None else df["own_chars"].iloc[rows]
    return np.nan_to_num(pd.to_numeric(col, errors="coerce").to_numpy(np.float64), nan=0.0)


def _shipped_hint(name: str) -> str:
    """For a bare name that is no file ("genral"): the shipped models' names, the one it is
    likely a slip for first; a path gets none (it names a file, not a shipped model)."""
    if os.sep in name or (os.altsep and os.altsep in name) or Path(name).suffix:
        return ""
    import difflib

    close = difflib.get_close_matches(name.lower(), list(SHIPPED), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"; {hint}the shipped models are {', '.join(map(repr, SHIPPED))} (else give a saved model's folder)"


class NoiseModel:
    """A noise/content classifier over a feature table, with what is needed to reuse it."""

    def __init__(self, classifier: Any = "j48", features: str | list[str] | None = None, *,
                 query: list[dict] | None = None, seed: int = 1, params: dict | None = None,
                 union: str | None = None, union_gate: list[float] | None = None, cut: str = "absolute"):
        from hwnoise.training.classifiers import make_classifier

        if isinstance(classifier, str):
            self.classifier_name = classifier
            self.estimator = make_classifier(classifier, seed=seed, **(params or {}))
        else:
            self.classifier_name = type(classifier).__name__
            self.estimator = classifier
        self.features = resolve_features(features)
        self.query = [dict(t) for t in (query or [])]
        self.seed = seed
        self.protocol: str | None = None
        #: probability of content at or above which a row is content (None: the classifier's
        #: own decision, 0.5 for two classes); set when a threshold was chosen by inner CV
        self.threshold: float | None = None
        self.scores: list[dict] = []
        self.train_hash: str | None = None
        self.train_rows = 0
        self.categories: dict[str, list[str]] = {}
        self.version = __version__
        self.created: str | None = None
        from hwnoise.training.spec import ModelSpec

        #: the pages the model was fitted on, per dataset (``evaluate --model`` skips them)
        self.trained_on: dict[str, list[str]] | None = None
        #: what the model is made of (preset, features, stack, context, classifier, threshold)
        self.spec = ModelSpec(features=list(self.features), classifier=self.classifier_name,
                              params=dict(params or {}),
                              **({"stack": [union], "union": union} if union else {}),
                              **({"union_gate": list(union_gate)} if union and union_gate else {}),
                              **({"cut": cut} if cut != "absolute" else {}))

    def __repr__(self) -> str:
        """The model at a glance (a notebook showed ``<NoiseModel object at 0x...>``): preset,
        classifier, number of features, threshold, and the rows and datasets it was fitted on."""
        spec = getattr(self, "spec", None)
        preset = f"preset={spec.preset!r}, " if getattr(spec, "preset", None) else ""
        threshold = "" if getattr(self, "threshold", None) is None else f", threshold={self.threshold:.3g}"
        rows = getattr(self, "train_rows", 0)
        on = getattr(self, "trained_on", None)
        fitted = f"fitted on {rows} rows" if rows else "not fitted"
        if rows and on:
            fitted += f" of {', '.join(map(str, on))}" if len(on) <= 3 else f" of {len(on)} datasets"
        return (f"NoiseModel({preset}classifier={self.classifier_name!r}, features={len(self.features)}"
                f"{threshold}; {fitted})")

    # -- data -----------------------------------------------------------------
    def query_terms(self, kinds=None) -> list[str]:
        """The domain query's terms, optionally only those of the given kinds (one as a str)."""
        wanted = set(names(kinds)) if kinds else None
        return [t["term"] for t in self.query if wanted is None or t.get("kind") in wanted]

    def _is_c45(self) -> bool:
        return type(self.estimator).__module__.startswith("hwnoise.training.c45")

    def matrix(self, df: pd.DataFrame, rows: np.ndarray | None = None, *,
               consume: bool = False) -> np.ndarray:
        """The float64 feature matrix of ``df`` (of its rows at positions ``rows`` when given:
        no copy of the frame, one column at a time), nominal features as category codes,
        filled column by column in place: column-major for C4.5 (which reads it by feature,
        so it needs no transposed copy), row-major for the other classifiers. With ``consume``
        each feature column is deleted from ``df`` once copied (the caller's frame gives up
        its features, so they are never held twice)."""
        missing = [f for f in self.features if f not in df.columns]
        if missing:
            raise HwnoiseError(f"the feature table lacks the model's feature(s) {', '.join(missing)} "
                               f"(model features: {', '.join(self.features)})")
        c45 = self._is_c45()
        n = len(df) if rows is None else len(rows)
        X = np.empty((n, len(self.features)), dtype=np.float64, order="F" if c45 else "C")
        for j, f in enumerate(self.features):
            col = df[f] if rows is None else df[f].iloc[rows]
            if f in self.categories or not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
                cats = self.categories.get(f)
                if cats is None:
                    raise HwnoiseError(f"feature {f!r} is not numeric and the model knows no categories for it")
                vals = col.astype(object).map(lambda v: None if pd.isna(v) else str(v))
                vals = vals.where(vals.isin(cats), None)  # unseen categories: missing
                codes = pd.Categorical(vals, categories=cats).codes.astype(np.float64)
                codes[codes < 0] = np.nan
                X[:, j] = codes
            else:
                X[:, j] = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
            del col
            if consume:
                del df[f]
        if c45:  # it takes NaN as missing (as Weka) but not infinity
            big = np.finfo(np.float64).max
            np.clip(X, -big, big, out=X)
        else:
            np.clip(X, -_BIG, _BIG, out=X)
            if not _allows_nan(self.estimator):
                np.nan_to_num(X, copy=False, nan=0.0)
        return X

    def _learn_categories(self, df: pd.DataFrame, rows: np.ndarray | None = None) -> None:
        """The categories of the nominal features, from ``df`` (its rows ``rows`` when given)."""
        self.categories = {}
        for f in self.features:
            if f not in df.columns:
                continue
            col = df[f]
            if isinstance(col.dtype, pd.CategoricalDtype):
                self.categories[f] = [str(v) for v in col.cat.categories]
            elif not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
                col = col if rows is None else col.iloc[rows]
                self.categories[f] = sorted({str(v) for v in col.dropna().unique()})

    # -- fit / predict ----------------------------------------------------------
    def fit(self, df: pd.DataFrame, groups=None, *, rows: np.ndarray | None = None,
            consume: bool = False) -> "NoiseModel":
        """Fit on the labelled rows of ``df`` (``label`` S/N; unlabelled rows are skipped), or
        of its rows at positions ``rows`` (a fold's training rows without a copy of them).
        ``groups`` (aligned with ``df``, or a function giving them, called only when the
        classifier takes groups) group the rows for a classifier's own inner CV. With
        ``consume`` (and no ``rows``) the feature columns are deleted from ``df`` as the matrix
        is filled: the caller's frame gives up its features so the fit never holds them twice."""
        if C.LABEL not in df.columns:
            raise HwnoiseError("the feature table has no 'label' column: nothing to train on")
        labels = df[C.LABEL] if rows is None else df[C.LABEL].iloc[rows]
        mask = labels.isin(C.CLASSES).to_numpy()
        if not mask.any():
            raise HwnoiseError("the feature table has no labelled rows (S/N): pages need gold text")
        if rows is None and mask.all():
            pick = None
        else:
            pick = np.flatnonzero(mask) if rows is None else np.asarray(rows)[mask]
            consume = False  # the frame keeps rows the fit does not take: it is not given up
        y = (labels if mask.all() else labels[mask]).astype(str).to_numpy()
        del labels
        self._learn_categories(df, pick)
        X = self.matrix(df, pick, consume=consume)
        if not self._is_c45():
            empty = np.isnan(X).all(axis=0)
            if empty.any():  # scikit-learn 1.9's binning fails on a column missing everywhere;
                X[:, empty] = 0.0  # a constant column is never split on, so predictions ignore it
        kwargs: dict[str, Any] = {}
        fit_params = inspect.signature(self.estimator.fit).parameters
        if "class_order" in fit_params:  # as the ARFF header declares them: J48 breaks ties toward S
            kwargs["class_order"] = list(C.CLASSES)
        if groups is not None and "groups" in fit_params:
            g = np.asarray(groups() if callable(groups) else groups)
            kwargs["groups"] = g if pick is None else g[pick]
        with threads():
            try:
                self.estimator.fit(X, y, **kwargs)
            except ValueError:
                if len(set(y)) > 1:
                    raise
                raise HwnoiseError(_one_class(self.classifier_name, str(y[0]))) from None
        digest = hashlib.sha256()
        digest.update(json.dumps(self.features).encode())
        step = max(1, (1 << 20) // max(1, X.shape[1]))   # row blocks: no row-major copy of X
        for a in range(0, X.shape[0], step):
            digest.update(np.ascontiguousarray(X[a:a + step]).data)
        digest.update("\n".join(y).encode())
        self.train_hash = "sha256:" + digest.hexdigest()
        self.train_rows = int(len(y))
        return self

    def predict(self, df: pd.DataFrame, rows: np.ndarray | None = None) -> np.ndarray:
        """"S"/"N" for every row of ``df`` (for its rows at positions ``rows`` when given)."""
        return self.predict_with_proba(df, rows, proba=False)[0]

    def content_proba(self, df: pd.DataFrame, rows: np.ndarray | None = None) -> np.ndarray | None:
        """The probability that each row of ``df`` (each of its rows ``rows`` when given) is
        content: the classifier's (with the spec's ``cut`` "page", over its page's highest:
        ``_page_relative``, the value the threshold cuts), or 1 where the spec's ``union``
        extractor keeps at least half of the node's words; None when the classifier gives no probabilities (the labels are
        ``predict``'s, with the threshold when one was chosen)."""
        col = self._content_column()
        if col is None:
            return None
        if (len(df) if rows is None else len(rows)) == 0:
            return np.zeros(0)
        with threads():
            p = np.asarray(self.estimator.predict_proba(self.matrix(df, rows))[:, col], dtype=np.float64)
        return self._with_union(self._page_relative(p, df, rows), df, rows)

    def predict_with_proba(self, df: pd.DataFrame, rows: np.ndarray | None = None, *,
                           proba: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """``(predict, content_proba)`` from one matrix and one pass of the classifier: the
        labels thresholded on the probability when a threshold was chosen, the classifier's own
        labels otherwise (and the union's nodes content); the probability (with ``proba``) None
        when the classifier gives none."""
        col = self._content_column()
        if (len(df) if rows is None else len(rows)) == 0:
            return np.array([], dtype=object), (np.zeros(0) if proba and col is not None else None)
        threshold = getattr(self, "threshold", None)
        X = self.matrix(df, rows)
        p = None
        with threads():
            if col is not None and (proba or threshold is not None):
                p = np.asarray(self.estimator.predict_proba(X)[:, col], dtype=np.float64)
            if threshold is None or p is None:
                labels = np.asarray(self.estimator.predict(X)).astype(str).astype(object)
        if p is not None:
            p = self._with_union(self._page_relative(p, df, rows), df, rows)
        if threshold is not None and p is not None:
            labels = np.where(p >= threshold, C.CONTENT, C.NOISE).astype(object)
        else:
            kept = self._union_kept(df, rows)
            if kept is not None:
                labels[kept] = C.CONTENT
        return labels, (p if proba else None)

    def _page_relative(self, p: np.ndarray, df: pd.DataFrame, rows: np.ndarray | None) -> np.ndarray:
        """With the spec's ``cut`` "page", the classifier's probabilities ``p`` of ``df``'s rows
        (``rows``) over the highest on their page among those rows that hold text of their own
        (``own_chars`` > 0; among all its rows when none does or without ``own_chars``), capped
        at 1, and 0 on a page where every probability is 0; ``p`` itself with the "absolute" cut.
        A page is its ``dataset`` and ``page`` (all the rows one page without those columns),
        as for the union gate, so that rows of many pages are cut page by page."""
        if getattr(getattr(self, "spec", None), "cut", "absolute") != "page" or not len(p):
            return p
        codes = _page_codes(df, rows)
        n = int(codes.max()) + 1
        top_all = np.zeros(n)
        np.maximum.at(top_all, codes, p)
        if "own_chars" in df:
            text = _own_chars(df, rows) > 0
            top = np.zeros(n)
            np.maximum.at(top, codes[text], p[text])
            top = np.where(top > 0, top, top_all)
        else:
            top = top_all
        t = top[codes]
        return np.where(t > 0, np.minimum(p / np.where(t > 0, t, 1.0), 1.0), 0.0)

    def _with_union(self, p: np.ndarray, df: pd.DataFrame, rows: np.ndarray | None) -> np.ndarray:
        """The classifier's probabilities ``p`` of ``df``'s rows (``rows``) with the spec's union:
        1 where its extractor keeps the node; with a ``union_gate`` (share, threshold), 0 where
        the classifier alone would add a node under ``threshold`` to a page that looks like an
        article to that extractor (its nodes hold at least ``share`` of the page's own
        characters), so that on such pages the classifier adds only what it is sure of."""
        kept_all = self._union_kept(df, None)
        if kept_all is None:
            return p
        kept = kept_all if rows is None else kept_all[rows]
        out = np.where(kept, 1.0, p)
        gate = getattr(getattr(self, "spec", None), "union_gate", None)
        if gate:
            share, sure = float(gate[0]), float(gate[1])
            article = self._article_pages(df, kept_all, share)
            if rows is not None:
                article = article[rows]
            out = np.where(~kept & article & (p < sure), 0.0, out)
        return out

    @staticmethod
    def _article_pages(df: pd.DataFrame, kept: np.ndarray, share: float) -> np.ndarray:
        """For every row of ``df``: whether its page's ``kept`` rows hold at least ``share`` of the
        page's own characters (``own_chars``; a page is its ``dataset`` and ``page``, all of
        ``df`` one page without those columns)."""
        if "own_chars" not in df:
            raise ModelError("the model's union gate needs the feature own_chars, which the rows lack")
        own, codes = _own_chars(df), _page_codes(df)
        total = np.bincount(codes, weights=own)
        in_kept = np.bincount(codes, weights=np.where(kept, own, 0.0), minlength=len(total))
        return (in_kept / np.maximum(total, 1.0) >= share)[codes]

    def _union_kept(self, df: pd.DataFrame, rows: np.ndarray | None) -> np.ndarray | None:
        """The rows the spec's ``union`` extractor keeps (at least half of their words), or None
        without a union."""
        name = getattr(getattr(self, "spec", None), "union", None)
        if not name:
            return None
        from hwnoise.features.assembly import STACK_PREFIX

        column = STACK_PREFIX + name
        if column not in df:
            raise ModelError(f"the model's union with {name} needs the feature {column}, which the rows lack")
        v = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=np.float64)
        if rows is not None:
            v = v[rows]
        return np.nan_to_num(v, nan=0.0) >= UNION_SHARE

    def _content_column(self) -> int | None:
        """The column of the content class in ``predict_proba``; None without probabilities."""
        classes = [str(c) for c in getattr(self.estimator, "classes_", ())]
        if not hasattr(self.estimator, "predict_proba") or C.CONTENT not in classes:
            return None
        return classes.index(C.CONTENT)

    def tree_text(self) -> str:
        """The fitted tree in J48's text format (or scikit-learn's for other trees)."""
        est = self.estimator
        if hasattr(est, "export_text"):
            try:
                return est.export_text(self.features)
            except ImportError:  # its printer module is missing
                return f"{self.classifier_name}: {type(est).__name__} (its J48 printer is not available)"
        try:
            from hwnoise.training.j48_text import export_j48

            return export_j48(est, self.features)
        except (ImportError, TypeError, AttributeError, ValueError):
            pass
        from sklearn.tree import DecisionTreeClassifier, export_text

        inner = getattr(est, "tree_model_", est)
        if isinstance(inner, DecisionTreeClassifier):
            head = f"{self.classifier_name} tree (ccp_alpha={getattr(est, 'ccp_alpha_', inner.ccp_alpha):.3g})\n"
            return head + export_text(inner, feature_names=list(self.features), decimals=6)
        return f"{self.classifier_name}: {type(est).__name__} has no tree to print"

    # -- files ------------------------------------------------------------------
    def metadata(self) -> dict:
        """What model.json says besides the tree."""
        est = self.estimator
        try:
            params = _json_safe(est.get_params(deep=False))
        except Exception:  # noqa: BLE001
            params = {}
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "hwnoise": self.version,
            "created": self.created or now_iso(),
            "classifier": {"name": self.classifier_name,
                           "class": f"{type(est).__module__}.{type(est).__qualname__}", "params": params},
            "features": list(self.features), "categories": self.categories,
            "query": _json_safe(self.query), "seed": self.seed,
            "train_hash": self.train_hash, "train_rows": self.train_rows,
            "protocol": self.protocol, "scores": _json_safe(self.scores),
            "threshold": getattr(self, "threshold", None),
            "classes": [str(c) for c in getattr(est, "classes_", C.CLASSES)],
            "spec": self.spec.to_dict() if getattr(self, "spec", None) is not None else None,
            "trained_on": getattr(self, "trained_on", None),
            **({"regions": self.regions} if getattr(self, "regions", None) is not None else {}),
        }

    def json_document(self, require_tree: bool = True) -> dict:
        """model.json's content: the metadata and the fitted classifier as JSON ("tree") when
        it has a JSON form (C4.5's tree, gb's, rf's or gb+rf's trees as arrays)."""
        self.created = self.created or now_iso()
        meta = self.metadata()
        tree = None
        to_dict = getattr(self.estimator, "to_dict", None)
        if callable(to_dict) and hasattr(type(self.estimator), "from_dict"):
            tree = _json_safe(to_dict())
        else:
            json_form = _json_form(self.estimator)
            if json_form is not None:  # gb, rf, gb+rf: fitted trees as arrays (training/ensemble.py)
                tree = json_form.to_dict()
                meta["classifier"]["class"] = f"{type(json_form).__module__}.{type(json_form).__qualname__}"
        if tree is None and require_tree:
            raise ModelError(f"{type(self.estimator).__name__} has no JSON form (use j48, gb, rf or gb+rf)")
        meta["contents"] = "tree" if tree is not None else "metadata-only"
        if tree is None:
            meta["note"] = (f"{type(self.estimator).__name__} has no JSON form: this file holds the "
                            f"metadata only; the classifier is in {MODEL_JOBLIB} (a pickle)")
        meta["tree"] = tree
        return meta

    def save(self, directory: str | os.PathLike) -> Path:
        """Write model.joblib and model.json into ``directory``; return the directory."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.created = self.created or now_iso()
        import joblib  # here, not at import: extracting with a JSON model never needs it

        buf = io.BytesIO()
        joblib.dump(self, buf)
        blob = buf.getvalue()
        atomic_write_bytes(directory / MODEL_JOBLIB, blob)
        meta = self.json_document(require_tree=False)
        key = _signing_key(create=True)
        meta["joblib"] = {"file": MODEL_JOBLIB, "sha256": hashlib.sha256(blob).hexdigest(),
                          "hmac_sha256": _sign(blob, key) if key else None}
        write_json(directory / MODEL_JSON, meta)
        return directory

    @classmethod
    def load(cls, path: str | os.PathLike, allow_pickle: bool = False) -> "NoiseModel":
        """Load a model from ``path``: the folder ``train --out`` wrote, its model.json, or a
        joblib file. See the module docstring for when a pickle is loaded."""
        if str(path) in SHIPPED and not Path(path).exists():
            path = shipped_model_path(str(path))
        path = Path(path)
        if not path.exists():
            raise ModelError(f"{path}: no such model file or folder{_shipped_hint(str(path))}")
        if path.is_dir():
            json_path, joblib_path = path / MODEL_JSON, path / MODEL_JOBLIB
            if not json_path.exists() and not joblib_path.exists():
                raise ModelError(f"{path}: no {MODEL_JSON} or {MODEL_JOBLIB} in this folder")
            prefer_json = True
        elif path.suffix.lower() == ".json":
            json_path, joblib_path, prefer_json = path, None, True
        else:
            json_path, joblib_path, prefer_json = path.parent / MODEL_JSON, path, False
        meta = _read_meta(json_path) if json_path.exists() else None
        if meta is not None and joblib_path is None:
            joblib_path = json_path.parent / str((meta.get("joblib") or {}).get("file") or MODEL_JOBLIB)
        if prefer_json and meta is not None and meta.get("tree") is not None:
            return cls._from_meta(meta, json_path)
        if joblib_path is None or not joblib_path.exists():
            raise ModelError(f"{json_path}: holds the metadata only and {joblib_path} is missing")
        with open(joblib_path, "rb") as fh:  # its first bytes, before the whole file is read
            head = fh.read(8)
        if not head.startswith(_JOBLIB_STARTS):  # a page, a text: no reason to offer --allow-pickle
            raise ModelError(f"{joblib_path}: not an hwnoise model file (neither the model.json nor the "
                             "model.joblib 'hwnoise train --out' writes)")
        blob = joblib_path.read_bytes()
        signed = False
        if meta is not None and Path(str((meta.get("joblib") or {}).get("file", ""))).name == joblib_path.name:
            expected = (meta.get("joblib") or {}).get("hmac_sha256")
            key = _signing_key(create=False)
            signed = bool(expected and key and hmac.compare_digest(expected, _sign(blob, key)))
        if not signed and not allow_pickle:
            raise ModelError(
                f"{joblib_path}: not signed by this hwnoise installation (no matching HMAC in "
                f"{MODEL_JSON} beside it). Loading a pickle runs code from it; if you trust its "
                "source, pass --allow-pickle (allow_pickle=True)")
        import joblib

        try:
            model = joblib.load(io.BytesIO(blob))
        except Exception as exc:  # noqa: BLE001 - unpickling other bytes raises anything
            raise ModelError(f"{joblib_path}: not an hwnoise model file (not a whole joblib pickle: "
                             f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}); give the model.json or "
                             "model.joblib 'hwnoise train --out' wrote") from None
        if not isinstance(model, NoiseModel):
            raise ModelError(f"{joblib_path}: holds a {type(model).__name__}, not an hwnoise model")
        return _checked_pickle(model, joblib_path)

    @classmethod
    def _from_meta(cls, meta: dict, json_path: Path) -> "NoiseModel":
        class_path = str(meta["classifier"]["class"])
        module_name, _, cls_name = class_path.rpartition(".")
        if not module_name.startswith("hwnoise.training."):
            raise ModelError(f"{json_path}: a JSON tree of class {class_path}, which hwnoise does not build")
        try:
            est_cls = getattr(importlib.import_module(module_name), cls_name)
            estimator = est_cls.from_dict(meta["tree"])
        except (ImportError, AttributeError, KeyError, TypeError, ValueError, OverflowError, HwnoiseError) as exc:
            raise ModelError(f"{json_path}: cannot rebuild the {cls_name} tree ({exc})") from None
        width = getattr(estimator, "n_features_in_", None)
        if width is not None and width != len(meta["features"]):
            raise _bad(json_path, "features", f"lists {len(meta['features'])} features and the "
                       f"{cls_name} tree splits on {width}")
        model = cls.__new__(cls)
        model.classifier_name = meta["classifier"].get("name", cls_name)
        model.estimator = estimator
        model.features = list(meta["features"])
        model.query = list(meta.get("query") or [])
        model.seed = meta.get("seed", 1)
        model.protocol = meta.get("protocol")
        model.threshold = meta.get("threshold")
        model.scores = list(meta.get("scores") or [])
        model.train_hash = meta.get("train_hash")
        model.train_rows = int(meta.get("train_rows") or 0)
        model.categories = dict(meta.get("categories") or {})
        model.version = meta.get("hwnoise", "")
        model.created = meta.get("created")
        model.spec = _spec_of(meta, json_path)
        model.trained_on = meta.get("trained_on")
        for key in ("data_hash", "command", "cross_site", "regions"):  # what the shipped model records
            if key in meta:
                setattr(model, key, meta[key])
        return model


def _read_meta(json_path: Path) -> dict:
    try:
        size = json_path.stat().st_size
    except OSError as exc:
        raise ModelError(f"{json_path}: cannot read ({exc.strerror})") from None
    if size > MAX_JSON_BYTES:  # before reading: the text of a huge file would fill the memory
        raise ModelError(f"{json_path}: {size} bytes, more than a model file holds "
                         f"({MAX_JSON_BYTES}); not an hwnoise model")
    try:
        text = json_path.read_text(encoding="utf-8-sig")  # a BOM, as Windows' Notepad saves UTF-8
    except UnicodeDecodeError:
        raise ModelError(f"{json_path}: not a model file (not UTF-8 text)") from None
    except OSError as exc:
        raise ModelError(f"{json_path}: cannot read ({exc.strerror})") from None
    depth = _max_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ModelError(f"{json_path}: JSON nested {depth} deep (a model file nests at most "
                         f"{MAX_JSON_DEPTH}); not an hwnoise model")
    meta = parse_json(text, str(json_path), ModelError)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelError(f"{json_path}: not an hwnoise model file (no \"format\": \"{FORMAT}\")")
    check_meta(meta, json_path)
    return meta


#: How a joblib file starts: a pickle (protocol 2 or later), or one of joblib's compressors
#: (zlib, gzip, bz2, xz, lzma, lz4).
_JOBLIB_STARTS = (b"\x80", b"x", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"]\x00\x00", b"\x04\x22\x4d\x18")
MAX_JSON_BYTES = 200_000_000
MAX_JSON_DEPTH = 64


def _max_depth(text: str) -> int:
    """How deep ``[``/``{`` nest in JSON text (outside strings), without parsing it."""
    import re

    depth = best = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > MAX_JSON_DEPTH:
                    return best
        elif tok in "]}":
            depth -= 1
    return best


def _bad(json_path: Path, key: str, what: str) -> ModelError:
    return ModelError(f"{json_path}: key {key!r}: {what}; the file is damaged or not from hwnoise "
                      "(retrain with 'hwnoise train --out')")


def check_meta(meta: dict, json_path: Path) -> None:
    """Every key ``load`` reads, checked: a wrong one is one ModelError naming file and key."""
    import math

    from hwnoise.training.spec import SpecError

    fv = meta.get("format_version")
    if isinstance(fv, int) and not isinstance(fv, bool) and fv > FORMAT_VERSION:
        # not damaged: a newer hwnoise wrote it, and retraining is not the only way out
        by = meta.get("hwnoise")
        by = f" (by hwnoise {by})" if isinstance(by, str) and by.isprintable() and len(by) < 40 and by != __version__ else ""
        raise ModelError(f"{json_path}: key 'format_version': {fv}, a model format newer than this "
                         f"hwnoise {__version__} reads (up to {FORMAT_VERSION}); the file was written by a "
                         f"newer hwnoise{by}: upgrade hwnoise to use it, or retrain with this one "
                         "('hwnoise train --out')")
    if not isinstance(fv, int) or isinstance(fv, bool) or not 1 <= fv <= FORMAT_VERSION:
        versions = "1" if FORMAT_VERSION == 1 else f"an integer from 1 to {FORMAT_VERSION}"
        raise _bad(json_path, "format_version", f"must be {versions} (this hwnoise's), not {fv!r}")
    feats = meta.get("features")
    if (not isinstance(feats, list) or not feats or len(feats) > 5000
            or not all(isinstance(f, str) and f for f in feats) or len(set(feats)) != len(feats)):
        raise _bad(json_path, "features", f"must be a non-empty list of distinct feature names, not {str(feats)[:60]}")
    clf = meta.get("classifier")
    if not isinstance(clf, dict) or not isinstance(clf.get("class"), str) \
            or not isinstance(clf.get("name", ""), str) or not isinstance(clf.get("params", {}), dict):
        raise _bad(json_path, "classifier", "must be an object with a 'class' string and 'params' object")
    not_features = [f for f in feats if f in NOT_FEATURES]
    if not_features:
        raise _bad(json_path, "features", f"{not_features[0]!r} is a key or the class of a feature table, "
                   "not a feature")
    _check_categories(meta, feats, json_path)
    query = meta.get("query") or []
    if not isinstance(query, list) or not all(isinstance(t, dict) and isinstance(t.get("term"), str)
                                              and isinstance(t.get("kind", ""), str) for t in query):
        raise _bad(json_path, "query", "must be a list of {\"term\": ..., \"kind\": ...} objects")
    for key in ("hwnoise", "created", "protocol", "train_hash"):
        if meta.get(key) is not None and not isinstance(meta.get(key), str):
            raise _bad(json_path, key, f"must be a string or null, not {meta.get(key)!r}")
    thr = meta.get("threshold")
    if thr is not None:
        if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not math.isfinite(thr) or not 0 <= thr <= 1:
            raise _bad(json_path, "threshold", f"must be null or a number in [0, 1], not {thr!r}")
    for key in ("seed", "train_rows"):
        v = meta.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise _bad(json_path, key, f"must be a non-negative integer, not {v!r}")
    scores = meta.get("scores")
    if scores is not None and not (isinstance(scores, list) and all(isinstance(r, dict) for r in scores)):
        raise _bad(json_path, "scores", "must be a list of objects")
    on = meta.get("trained_on")
    if on is not None and not (isinstance(on, dict) and all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in on.items())):
        raise _bad(json_path, "trained_on", "must map dataset names to lists of page ids")
    if meta.get("regions") is not None and not isinstance(meta.get("regions"), dict):
        raise _bad(json_path, "regions", f"must be an object or null, not {type(meta.get('regions')).__name__}")
    if meta.get("tree") is not None and not isinstance(meta.get("tree"), dict):
        raise _bad(json_path, "tree", f"must be an object or null, not {type(meta.get('tree')).__name__}")
    if meta.get("spec") is not None:
        try:
            from hwnoise.training.spec import ModelSpec

            ModelSpec.from_dict(meta["spec"], where="spec")
        except SpecError as exc:
            raise ModelError(f"{json_path}: {exc}") from None


def _check_categories(meta: dict, feats: list[str], json_path: Path) -> None:
    """``categories``: distinct strings for each of the model's nominal features; none for a
    feature hwnoise computes as a number (its values would all be read as unseen categories,
    i.e. missing, and every node labelled from that)."""
    from hwnoise.features.assembly import unknown_features

    cats = meta.get("categories")
    cats = {} if cats is None else cats
    if not isinstance(cats, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in cats.items()):
        raise _bad(json_path, "categories", "must map feature names to lists of strings")
    numbers = set(feats) - set(unknown_features(feats)) - set(C.KEYS)
    for f, values in cats.items():
        if f not in feats:
            raise _bad(json_path, "categories", f"names {f!r}, which is none of the model's features")
        if f in numbers:
            raise _bad(json_path, "categories", f"given for {f!r}, a feature hwnoise computes as a number")
        if len(set(values)) != len(values):
            raise _bad(json_path, "categories", f"lists a category of {f!r} twice")


def _checked_pickle(model: NoiseModel, path: Path) -> NoiseModel:
    """An unpickled model checked as a model.json is (its spec read back through
    ``ModelSpec.from_dict``, its feature list against the tree's width), so that a pickle from
    another hwnoise fails here, naming the file, not mid-extraction."""
    from hwnoise.training.spec import ModelSpec, SpecError

    spec = getattr(model, "spec", None)
    if spec is not None:
        if not isinstance(spec, ModelSpec):
            raise ModelError(f"{path}: spec: must be a model spec, not a {type(spec).__name__}; retrain with "
                             "'hwnoise train --out'")
        try:
            model.spec = ModelSpec.from_dict(spec.to_dict(), where=f"{path}: spec")
        except (SpecError, TypeError, ValueError) as exc:
            raise ModelError(f"{exc}; retrain with 'hwnoise train --out'") from None
    width = getattr(getattr(model, "estimator", None), "n_features_in_", None)
    features = getattr(model, "features", None)
    if width is not None and (not isinstance(features, list) or len(features) != width):
        count = len(features) if isinstance(features, list) else "no list of"
        raise ModelError(f"{path}: lists {count} features and the {type(model.estimator).__name__} tree "
                         f"splits on {width}; the file is damaged or not from this hwnoise (retrain with "
                         "'hwnoise train --out')")
    return model


def _spec_of(meta: dict, json_path: Path):
    from hwnoise.training.spec import ModelSpec

    if meta.get("spec") is not None:
        return ModelSpec.from_dict(meta["spec"], where=f"{json_path}: spec")
    return ModelSpec(features=list(meta["features"]), classifier=str(meta["classifier"].get("name", "j48")))


def _json_form(est):
    """A JSON-serialisable stand-in for ``est`` (gb's, rf's or gb+rf's trees as arrays), or None."""
    from hwnoise.training.ensemble import json_form

    return json_form(est)


#: Models shipped in the package data (``data/models/NAME.json``).
SHIPPED = ("general", "records")


def shipped_model_path(name: str) -> Path:
    """The path of a model the wheel carries (``general``, ``records``)."""
    from importlib.resources import files

    path = Path(str(files("hwnoise.data") / "models" / f"{name}.json"))
    if not path.exists():
        raise ModelError(f"the shipped model {name!r} is missing from this installation ({path}); "
                         f"rebuild it with 'python bench/build_general.py --preset {name}' or reinstall hwnoise")
    return path
