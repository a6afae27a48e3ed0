"""hwnoise: tell the noise from the records in hidden-web result pages.

This package holds the base every stage may import (``hwnoise.text``,
``hwnoise.dataset``) and, above the stages, the CLI, ``evaluate`` and the demo
site. It imports no stage itself, so no import cycle can form.
"""
from __future__ import annotations

from pathlib import Path as _Path

__version__ = "0.1.0"

# In a source checkout the stage folders (forms/, features/, training/,
# extractors/) sit beside this folder and are mapped to hwnoise.<stage> only by
# the install. When Python imports this folder straight from the checkout (for
# instance `python -m pytest` run from the repo root after a non-editable
# install), make the stages importable from the checkout as well, so the
# source tree and its stages never mix with another install.
_here = _Path(__file__).resolve().parent
_root = _here.parent
if (_root / "pyproject.toml").is_file() and (_root / "features" / "__init__.py").is_file():
    if not (_here / "features").exists():
        __path__.append(str(_root))  # type: ignore[name-defined]  # noqa: F821

#: The Python API (``hwnoise.api``), imported on first use so that ``import hwnoise`` stays free
#: of stage imports.
_API = ("train", "load_model", "extract", "ModelSpec")


def __getattr__(name: str):
    if name in _API:
        from hwnoise import api

        return getattr(api, name)
    raise AttributeError(f"module 'hwnoise' has no attribute {name!r}")
