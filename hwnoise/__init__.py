"""hwnoise: tell the noise from the records in hidden-web result pages.

This package holds the base every stage may import (``hwnoise.text``,
``hwnoise.dataset``) and, above the stages, the CLI, ``evaluate`` and the demo
site. It imports no stage itself, so no import cycle can form.

The stage folders (forms/, features/, training/, extractors/, data/) become hwnoise.<stage>
through pyproject.toml's package-dir mapping, so a checkout is used through an install:
``pip install -e .`` for development (the editable install maps them to the checkout).
"""
from __future__ import annotations

__version__ = "0.1.0"

#: The Python API (``hwnoise.api``), imported on first use so that ``import hwnoise`` stays free
#: of stage imports.
_API = ("train", "load_model", "extract", "extract_records", "ModelSpec")
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from hwnoise import api

        return getattr(api, name)
    raise AttributeError(f"module 'hwnoise' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with the API's, which load on first use (for ``dir()`` and completion)."""
    return sorted({*(n for n in globals() if n != "annotations"), *_API})
