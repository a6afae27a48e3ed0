"""Method names → lazy factories, so a method's module is imported only when asked for.

``hwnoise evaluate --methods model,cetd,trafilatura`` looks each name up here.
"""
from __future__ import annotations

import importlib
from typing import Any

from hwnoise.extractors.base import ExtractorError, Method

#: name → "module:factory"; the factory takes keyword options and returns a Method.
METHODS: dict[str, str] = {
    "model": "hwnoise.extractors.model:make",
    "cetd": "hwnoise.extractors.cetd:make",
    "cetd-render": "hwnoise.extractors.cetd:make_rendered",
    "alltext": "hwnoise.extractors.external:make_alltext",
    "trafilatura": "hwnoise.extractors.external:make_trafilatura",
    "readability": "hwnoise.extractors.external:make_readability",
    "justext": "hwnoise.extractors.external:make_justext",
    "resiliparse": "hwnoise.extractors.external:make_resiliparse",
    "sitelevel": "hwnoise.extractors.sitelevel:make",
    "isotonic": "hwnoise.extractors.isotonic:make",
    "webstemmer": "hwnoise.extractors.webstemmer:make",
    "nce": "hwnoise.extractors.nce:make",
    "mss": "hwnoise.extractors.mss:make",
    "wang": "hwnoise.extractors.wang:make",
    "mdr": "hwnoise.extractors.mdr:make",
}


def _factory(name: str):
    try:
        target = METHODS[name]
    except KeyError:
        raise ExtractorError(
            f"unknown method {name!r}; choose from: {', '.join(METHODS)}") from None
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ExtractorError(
                f"method {name!r} is registered but its module {module_name} is not there yet "
                "(not implemented in this version)") from None
        raise
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ExtractorError(f"method {name!r}: {module_name} has no factory {attr!r}") from None


def get_method(name: str, **options: Any) -> Method:
    """A fresh instance of the method ``name`` (see :data:`METHODS`), built with ``options``."""
    return _factory(name)(**options)


def available_methods() -> list[str]:
    """Names whose module imports and whose optional packages are installed."""
    from hwnoise.extractors import external

    out = []
    for name, target in METHODS.items():
        module_name = target.partition(":")[0]
        if module_name.endswith(".external"):
            if name == "alltext" or name in external.available():
                out.append(name)
            continue
        try:
            _factory(name)
        except ExtractorError:
            continue
        out.append(name)
    return out
