"""The compiled helpers of the features stage (``features/_walk.c``), or None.

``ext`` is the extension module when setup.py built it (it needs a C compiler and lxml's
headers; an install without them still works) and ``HWNOISE_WALK=python`` does not ask for
the pure-Python code; every caller checks ``native.ext`` at call time and otherwise runs its
Python code, the reference the compiled one equals (tests/test_walk_compiled.py).
"""
from __future__ import annotations

import os

try:
    from hwnoise.features import _walk as ext
except ImportError:  # pragma: no cover - an install without a compiler
    ext = None

if os.environ.get("HWNOISE_WALK", "").strip().lower() == "python":
    ext = None

__all__ = ["ext"]
