"""The optional compiled helpers, and the one switch that turns them all off.

setup.py builds three C extensions when a compiler is there (an install without one still
works, with a warning): ``hwnoise._tokens`` (the tokeniser and word ids of ``hwnoise.text``;
no lxml), ``hwnoise.features._walk`` (the walk's visit and the features stage's loops;
lxml's headers) and ``hwnoise.training._trees`` (a saved boosted ensemble's descent).
``HWNOISE_WALK=python`` asks for the pure-Python code everywhere. Every caller looks its module
up here at call time and otherwise runs its Python code, the reference the compiled one equals
(tests/test_text_words.py, tests/test_walk_compiled.py, tests/test_spec.py).
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType

#: ``HWNOISE_WALK=python``: no compiled helper runs.
PYTHON_ONLY: bool = os.environ.get("HWNOISE_WALK", "").strip().lower() == "python"


def load(name: str) -> ModuleType | None:
    """The compiled module ``name``, or None when it was not built or Python is asked for."""
    if PYTHON_ONLY:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - an install without a compiler
        return None


#: ``hwnoise._tokens`` (``hwnoise/_tokens.c``) or None.
tokens: ModuleType | None = load("hwnoise._tokens")
#: ``hwnoise.training._trees`` (``training/_trees.c``) or None.
trees: ModuleType | None = load("hwnoise.training._trees")

__all__ = ["PYTHON_ONLY", "load", "tokens", "trees"]
