"""The base of every error hwnoise reports to a user as one line (no traceback)."""
from __future__ import annotations

from typing import Any


class HwnoiseError(Exception):
    """An error with a message that names the problem (file, line, URL) and what to do."""


class PageError(HwnoiseError):
    """One page could not be handled (the message says why): a run over many pages counts it and
    goes on, where another ``HwnoiseError`` (a tool missing, a bad option) stops the run."""


class ArgumentError(HwnoiseError, TypeError):
    """An argument of the Python API of a kind it cannot use, named with what to pass instead
    (a ``TypeError`` too, as Python's own for a wrong type)."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, singular for one: '1 attempt', '4 attempts', '0 bytes'."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def kind_of(value: Any) -> str:
    """What ``value`` is, for an ``ArgumentError``: 'None', 'bytes', 'an int', 'a DataFrame'."""
    name = type(value).__name__
    if value is None or isinstance(value, bytes):
        return str(value) if value is None else "bytes"
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
