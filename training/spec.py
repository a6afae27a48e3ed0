"""A model's spec: what it is made of, in one object saved inside ``model.json``.

``ModelSpec`` names the preset, the features (a named set or a list), the stacked extractors,
the context switches, the classifier and its parameters, and the threshold (None: the
classifier's own call; a float in [0, 1]; "inner": chosen by an inner CV on the training rows),
where a page's content comes from (``content_from``: "nodes", the nodes the classifier
labels content; "records", the nodes inside the records grouped from those labels,
``extractors.records.records_content``), and ``union``: a stacked extractor whose nodes are
content whatever the classifier says (a node it keeps at least half the words of), so that the
model adds to that extractor's text (``NoiseModel.content_proba``), with ``union_gate``
``[share, threshold]`` adding only the nodes the classifier gives ``threshold`` or more on a
page where that extractor keeps at least ``share`` of the text, and ``regions``: whether
the model carries a region scorer and how its regions meet the records grouped from the labels
(``extractors.regions.combine_regions``; fitted on the inner CV's out-of-fold labels of the
training pages whose gold has records, ``extractors.region_fit``), and ``cut``: what the
threshold is compared with, "absolute" (the classifier's probability of content) or "page" (that
probability over the highest the classifier gives a node of the same page that holds text of its
own, so that a threshold of 0.25 keeps the nodes at least a quarter as likely as the page's likeliest;
``NoiseModel.content_proba``; with "inner", the inner CV chooses that ratio).
:meth:`ModelSpec.columns` is the model's full feature list, which
:mod:`hwnoise.features.assembly` builds from a page.

Presets (``--preset``):

- ``thesis``: seed 003 exactly, the five features and J48.
- ``site``: a model for one site's pages: extended features + trafilatura's verdict + parent /
  grandparent context, J48 (big9 per site-year: 0.980 text F1).
- ``general``: a model for sites it has never seen: the features a bare page gives (extended
  without ``sitelevel``), four stacked extractors, page context, gradient boosting, a threshold
  chosen by an inner CV grouped by site, its content the union of trafilatura's nodes and the
  classifier's (``union="trafilatura"``: on each shared source held out in turn it beats
  trafilatura where the classifier alone does not, ``bench/general_heldout.py``). Not gated
  (``union_gate``): a gate lifts article pages and costs result pages (README "Models").
- ``records``: ``general`` with the record-structure group (``page+records``: the ``rs_*``
  columns of ``features.record_struct``), its content the nodes of the records grouped from
  the labels (``content_from="records"``), a region scorer (``regions="rest"``) and no union,
  for many sites whose gold is data records.
- ``auto`` (the default): ``site`` when the training pages come from one site; else ``records``
  when their gold includes data records (``records/ID.json``), ``general`` when it does not.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from hwnoise.errors import HwnoiseError

__all__ = ["ModelSpec", "PRESETS", "SpecError", "auto_preset", "preset_spec", "resolve_preset", "fit_spec", "check_probabilities",
           "with_overrides", "STACKABLE", "AS_PRESET", "REGION_MODES"]

#: an option left to the preset (``train``'s default where None means "none", as for ``union``)
AS_PRESET: Any = type("AsPreset", (), {"__repr__": lambda self: "AS_PRESET"})()

#: Extractors a model may stack (their names in ``hwnoise.extractors.registry``).
STACKABLE = ("trafilatura", "resiliparse", "readability", "justext", "cetd")
#: Where a page's content comes from: the labelled nodes, or the records grouped from them.
CONTENT_FROM = ("nodes", "records")
#: What the threshold cuts: the probability itself, or the probability relative to its page's highest.
CUTS = ("absolute", "page")
#: How a region scorer's regions meet the labels' records (``extractors.regions.combine_regions``).
REGION_MODES = ("rest", "add", "alone")
#: Folds of the inner CV of a spec with ``regions`` (3 otherwise): the region scorer learns from
#: its out-of-fold labels, which should be as near as they can be to those of the model fitted on
#: every training page that a new page gets; with 5 folds (models on 4/5 of the pages, not 2/3)
#: record F1 +0.011 and +0.024 on NEXT-EVAL's cross-site folds of seeds 1 and 2 (README "Records").
REGION_INNER_FOLDS = 5
_NAME = re.compile(r"^[A-Za-z0-9_.,:+-]{1,200}$")
#: A feature is a column: hwnoise's own names fit ``_NAME``, an ARFF file's attributes may be any
#: name Weka reads (quoted, with spaces or brackets); no control characters.
_FEATURE_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")
_MAX_FEATURES = 5000


class SpecError(HwnoiseError):
    """A model spec (options or a model.json "spec") that cannot be used."""


@dataclass
class ModelSpec:
    """What a model is made of (``load_model(...).spec``; ``train(spec=...)`` fits one like it):
    ``preset``; ``features`` (a set's name or a list of columns); ``stack``, the extractors whose
    verdicts are features; ``context`` / ``page_context``, parent and page features;
    ``classifier`` and its ``params``; ``threshold`` (None, a number in [0, 1] or "inner") and
    ``cut`` ("absolute" or "page"); ``content_from`` ("nodes" or "records"); ``union`` and
    ``union_gate``; ``regions``. ``to_dict`` / ``from_dict`` (checked) are model.json's form;
    the module docstring says more."""

    preset: str | None = None
    features: str | list[str] = "thesis"
    stack: list[str] = field(default_factory=list)
    context: bool = False
    page_context: bool = False
    classifier: str = "j48"
    params: dict[str, Any] = field(default_factory=dict)
    threshold: float | str | None = None
    content_from: str = "nodes"
    union: str | None = None
    union_gate: list[float] | None = None
    regions: str | None = None
    cut: str = "absolute"

    def columns(self) -> list[str]:
        """The model's full feature list: base features, stacked shares, parent/grandparent
        context, page context (in that order, without repeats)."""
        from hwnoise.features.assembly import CONTEXT_BASE, STACK_PREFIX, context_features
        from hwnoise.features.context import CONTEXT_FEATURES
        from hwnoise.training.model import resolve_features

        feats = resolve_features(self.features) + [STACK_PREFIX + s for s in self.stack]
        if self.context:
            feats += context_features([STACK_PREFIX + s for s in self.stack] + list(CONTEXT_BASE))
        if self.page_context:
            feats += list(CONTEXT_FEATURES)
        return list(dict.fromkeys(feats))

    @property
    def inner(self) -> bool:
        return isinstance(self.threshold, str) and self.threshold == "inner"

    def to_dict(self) -> dict:
        """The spec as JSON; ``cut`` only when it is not the default "absolute", so that a
        model.json of the absolute cut reads as it did before the field existed."""
        d = asdict(self)
        if d.get("cut") == "absolute":
            del d["cut"]
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "spec") -> "ModelSpec":
        """A spec from JSON, every key checked: a bad one is a SpecError naming ``where.key``."""
        if not isinstance(d, dict):
            raise SpecError(f"{where}: must be an object, not {type(d).__name__}")
        unknown = set(d) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        kw: dict[str, Any] = {}
        if d.get("preset") is not None:
            if not isinstance(d["preset"], str) or d["preset"] not in (*PRESETS, "auto"):
                raise SpecError(f"{where}.preset: must be one of {', '.join(PRESETS)}, not {d['preset']!r}")
            kw["preset"] = d["preset"]
        if "features" in d:
            kw["features"] = check_features(d["features"], f"{where}.features")
        if "stack" in d:
            kw["stack"] = check_stack(d["stack"], f"{where}.stack")
        for key in ("context", "page_context"):
            if key in d:
                if not isinstance(d[key], bool):
                    raise SpecError(f"{where}.{key}: must be true or false, not {d[key]!r}")
                kw[key] = d[key]
        if "classifier" in d:
            if not isinstance(d["classifier"], str) or not _NAME.match(d["classifier"]):
                raise SpecError(f"{where}.classifier: must be a classifier name, not {d['classifier']!r}")
            kw["classifier"] = d["classifier"]
        if "params" in d:
            kw["params"] = check_params(d["params"], f"{where}.params")
        if "threshold" in d:
            kw["threshold"] = check_threshold(d["threshold"], f"{where}.threshold")
        if "content_from" in d:
            if d["content_from"] not in CONTENT_FROM:
                raise SpecError(f"{where}.content_from: must be one of {', '.join(CONTENT_FROM)}, "
                                f"not {d['content_from']!r}")
            kw["content_from"] = d["content_from"]
        if d.get("union") is not None:
            stack = kw.get("stack", [])
            if not isinstance(d["union"], str) or d["union"] not in stack:
                raise SpecError(f"{where}.union: must be one of the stacked extractors "
                                f"({', '.join(stack) or 'none stacked'}), not {d['union']!r}")
            kw["union"] = d["union"]
        if d.get("union_gate") is not None:
            kw["union_gate"] = check_union_gate(d["union_gate"], kw.get("union"), f"{where}.union_gate")
        if d.get("regions") is not None:
            if d["regions"] not in REGION_MODES:
                raise SpecError(f"{where}.regions: must be one of {', '.join(REGION_MODES)} or null, "
                                f"not {d['regions']!r}")
            kw["regions"] = d["regions"]
        if "cut" in d:
            kw["cut"] = check_cut(d["cut"], f"{where}.cut")
        if kw.get("cut") == "page" and kw.get("threshold") is None:
            raise SpecError(f"{where}.cut: 'page' cuts at a threshold relative to the page's highest "
                            "probability, and the spec has none (give a threshold: a number or 'inner')")
        return cls(**kw)


def check_cut(value: Any, where: str) -> str:
    """"absolute" or "page" (what the threshold is compared with; see the module docstring)."""
    if not isinstance(value, str) or value.strip().lower() not in CUTS:
        raise SpecError(f"{where}: must be one of {', '.join(CUTS)}, not {value!r}")
    return value.strip().lower()


def check_features(value: Any, where: str) -> str | list[str]:
    if isinstance(value, str):
        if not value.strip() or len(value) > 100_000:
            raise SpecError(f"{where}: must name a feature set or list features")
        return value
    if (not isinstance(value, list) or not value or len(value) > _MAX_FEATURES
            or not all(isinstance(f, str) and _FEATURE_NAME.match(f) for f in value)):
        raise SpecError(f"{where}: must be a feature set name or a non-empty list of feature "
                        f"names, not {str(value)[:80]!r}")
    return list(value)


def check_union_gate(value: Any, union: str | None, where: str) -> list[float]:
    """``[share, threshold]``, two numbers in [0, 1] (a string "SHARE,THRESHOLD" is read as
    them); only with a union."""
    if isinstance(value, str):
        value = [s.strip() for s in value.split(",")]
        try:
            value = [float(s) for s in value]
        except ValueError:
            raise SpecError(f"{where}: must be SHARE,THRESHOLD (two numbers in [0, 1]), not {value!r}") from None
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                       and 0.0 <= x <= 1.0 for x in value)):
        raise SpecError(f"{where}: must be [share, threshold], two numbers in [0, 1], not {str(value)[:80]!r}")
    if not union:
        raise SpecError(f"{where}: gates a union, and the spec has none (give a union too)")
    return [float(x) for x in value]


def check_stack(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = [s.strip() for s in value.split(",") if s.strip()]
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise SpecError(f"{where}: must be a list of extractor names, not {str(value)[:80]!r}")
    bad = [s for s in value if s not in STACKABLE]
    if bad:
        raise SpecError(f"{where}: cannot stack {', '.join(bad)}; choose among {', '.join(STACKABLE)}")
    return list(dict.fromkeys(value))


def _scalar_json(v: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if v is None or isinstance(v, (bool, str)):
        return True
    if isinstance(v, (int, float)):
        return math.isfinite(v)
    if isinstance(v, list):
        return len(v) <= 1000 and all(_scalar_json(x, depth + 1) for x in v)
    return False


def check_params(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise SpecError(f"{where}: must be an object of classifier parameters, not {type(value).__name__}")
    for k, v in value.items():
        if not isinstance(k, str) or not k.isidentifier() or not _scalar_json(v):
            raise SpecError(f"{where}.{k}: must be a finite number, string, boolean, null or a short list")
    return dict(value)


def check_threshold(value: Any, where: str) -> float | str | None:
    """None, "inner", or a finite number in [0, 1] (a numeric string is read as a number)."""
    if value is None:
        return None
    if isinstance(value, str):
        s = value.strip().lower()
        if s == "inner":
            return "inner"
        if s in ("", "none", "default"):
            return None
        try:
            value = float(s)
        except ValueError:
            raise SpecError(f"{where}: must be a number in [0, 1], 'inner' or none, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise SpecError(f"{where}: must be a number in [0, 1], 'inner' or none, not {value!r}")
    return float(value)


#: The features a bare page gives: the extended set without the dataset-level ``sitelevel``.
PAGE_FEATURES = "page"

PRESETS: dict[str, ModelSpec] = {
    "thesis": ModelSpec(preset="thesis", features="thesis", classifier="j48"),
    "site": ModelSpec(preset="site", features="extended", stack=["trafilatura"], context=True,
                      classifier="j48"),
    "general": ModelSpec(preset="general", features=PAGE_FEATURES,
                         stack=["trafilatura", "resiliparse", "readability", "cetd"],
                         page_context=True, classifier="gb", threshold="inner", union="trafilatura"),
    "records": ModelSpec(preset="records", features=f"{PAGE_FEATURES}+records",
                         stack=["trafilatura", "resiliparse", "readability", "cetd"],
                         page_context=True, classifier="gb", threshold="inner", content_from="records",
                         regions="rest"),
}


def preset_spec(name: str | None) -> ModelSpec:
    """A copy of preset ``name`` (None/"auto" give "auto", resolved later by the data)."""
    if name in (None, "", "auto"):
        return ModelSpec(preset="auto")
    if name not in PRESETS:
        raise SpecError(f"unknown preset {name!r}; choose one of auto, {', '.join(PRESETS)}")
    base = PRESETS[name]
    return replace(base, stack=list(base.stack), params=dict(base.params))


def auto_preset(n_sites: int, records: bool = False) -> str:
    """What "auto" stands for: ``site`` for one site's pages; for several, ``records`` when the
    training gold includes data records, else ``general``."""
    return "site" if n_sites <= 1 else "records" if records else "general"


def resolve_preset(spec: ModelSpec, n_sites: int, overrides: dict | None = None, *,
                   records: bool = False) -> ModelSpec:
    """``spec`` with "auto" resolved (``auto_preset``: by the number of sites and whether the
    gold has records); then the explicit ``overrides`` (options the user gave) applied and
    checked."""
    if spec.preset == "auto":
        spec = replace(preset_spec(auto_preset(n_sites, records)))
    return with_overrides(spec, overrides) if overrides else spec


def with_overrides(spec: ModelSpec, overrides: dict, where: str = "option") -> ModelSpec:
    """``spec`` with the fields ``overrides`` gives, checked. The preset's ``union`` goes with its
    stack: a stack without the union's extractor drops the union unless ``overrides`` names one."""
    merged = {**spec.to_dict(), **overrides}
    if "union" not in overrides and merged.get("union") is not None \
            and merged["union"] not in check_stack(merged.get("stack") or [], f"{where}.stack"):
        merged["union"] = None
    if merged.get("union") is None and "union_gate" not in overrides:
        merged["union_gate"] = None  # the gate goes with its union
    return ModelSpec.from_dict(merged, where=where)


def check_probabilities(spec: ModelSpec, where: str = "option") -> None:
    """A ``SpecError`` when the spec's threshold or region scorer needs the classifier's
    probabilities and it gives none (no ``predict_proba``, as RidgeClassifier): the threshold
    was ignored without a word (the classifier's own labels scored as if cut at it), an inner
    CV chose one from a page F1 of 0."""
    if spec.threshold is None and not spec.regions:
        return
    from hwnoise.training.classifiers import make_classifier

    if hasattr(make_classifier(spec.classifier, **(spec.params or {})), "predict_proba"):
        return
    needs = f"threshold {spec.threshold}" if spec.threshold is not None else f"regions {spec.regions}"
    raise SpecError(f"{where}.classifier: {spec.classifier} gives no probabilities (no predict_proba), and "
                    f"the spec's {needs} needs them; drop it, or choose a classifier that gives them "
                    "(j48, cart, rf, gb, gb+rf, logreg)")


def fit_spec(spec: ModelSpec, rows, *, query: list[dict] | None = None, seed: int = 1,
             groups=None, take=None, consume: bool = False):
    """A NoiseModel of ``spec`` fitted on assembled, labelled ``rows`` (on its rows at positions
    ``take`` when given, without a copy), the threshold chosen by inner CV on these rows when
    the spec says "inner". ``consume``: the fit may delete the feature columns from ``rows``
    once in its matrix (see ``NoiseModel.fit``). A spec with ``regions`` keeps the inner CV's
    out-of-fold probabilities on the model (``inner_oof``, not saved), which the region
    scorer is fitted on (``extractors.region_fit``), from ``REGION_INNER_FOLDS`` folds."""
    from hwnoise.training.model import NoiseModel
    from hwnoise.training.threshold import inner_cv

    check_probabilities(spec, "spec")
    feats = spec.columns()

    def new() -> NoiseModel:
        return NoiseModel(spec.classifier, feats, query=query, seed=seed, params=spec.params or None,
                          union=spec.union, union_gate=spec.union_gate, cut=spec.cut)

    folds = {"folds": REGION_INNER_FOLDS} if spec.regions else {}  # else inner_cv's own
    cv = inner_cv(rows, new, rows=take, **folds) if spec.inner or spec.regions else None
    threshold = cv.threshold if spec.inner else spec.threshold
    model = new().fit(rows, groups=groups, rows=take, consume=consume)
    model.threshold = None if threshold is None else float(threshold)
    model.spec = spec
    if spec.regions:
        model.inner_oof = cv
    return model
