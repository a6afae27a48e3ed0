"""JSON that a person wrote or another tool saved (submissions, value sets, weights, gold records,
ground truth, models), read in one place with errors that name the file and the line."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


def parse_json(text: str | bytes, where: str, error: type[Exception], *, at_line: bool = False) -> Any:
    """``json.loads(text)``; whatever is wrong with it raises ``error`` naming ``where`` (and the
    line within ``text``, unless ``at_line``: ``where`` names the line already): not valid JSON,
    nested too deeply, a number too long to read, bytes in none of the encodings JSON allows
    (UTF-8, a BOM allowed, UTF-16, UTF-32)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        at = where if at_line else f"{where}:{exc.lineno}"
        raise error(f"{at}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not JSON text in UTF-8, UTF-16 or UTF-32 ({exc.reason} at byte "
                    f"{exc.start}); save it as UTF-8") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise error(f"{where}: not valid JSON ({exc})") from None


def read_json_file(path: str | os.PathLike, error: type[Exception]) -> Any:
    """The JSON file at ``path`` (``parse_json``); a file that cannot be read raises ``error`` too."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return parse_json(data, str(path), error)


def whole_numbers(values: Any, what: str) -> "np.ndarray":
    """A JSON list of whole numbers (node indices) as an int64 array; a ``ValueError`` naming
    ``what`` for anything else: a string, a fraction (numpy would cut 1.5 to 1 without a word),
    NaN, 1e400, a number past int64 (an ``OverflowError`` in numpy)."""
    import numpy as np

    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{what} must hold whole numbers") from None
    if not np.isfinite(arr).all() or (arr != np.trunc(arr)).any() or (np.abs(arr) >= 2.0 ** 62).any():
        raise ValueError(f"{what} must hold whole numbers")
    return arr.astype(np.int64)
