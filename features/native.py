"""The compiled helpers of the features stage (``features/_walk.c``), or None.

``ext`` is the extension module when setup.py built it (it needs a C compiler and lxml's
headers) and ``HWNOISE_WALK=python`` does not ask for the pure-Python code
(``hwnoise.native``, the one switch); every caller checks ``native.ext`` at call time and
otherwise runs its Python code, the reference the compiled one equals
(tests/test_walk_compiled.py).
"""
from __future__ import annotations

from hwnoise.native import load

ext = load("hwnoise.features._walk")

__all__ = ["ext"]
