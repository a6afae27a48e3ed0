"""The base of every error hwnoise reports to a user as one line (no traceback)."""
from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
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


def check_kinds(who: str, values: Mapping[str, Any], kinds: Mapping[str, tuple[tuple[type, ...], str]]) -> None:
    """An ``ArgumentError`` naming the first of ``values`` (options by name) not of its ``kinds``
    (``{name: (types, what to give)}``; a bool is no number unless ``bool`` is among the types),
    so that a notebook's ``seed="1"`` or ``k="3"`` is named before any work, not a numpy casting
    or comparison TypeError from deep inside."""
    for name, (types, what) in kinds.items():
        if name not in values:
            continue
        value = values[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            shown = "" if value is None else f" ({value!r:.40})"
            raise ArgumentError(f"{who}: {name} is {kind_of(value)}{shown}; give {what}")


def check_keywords(who: str, given: Iterable[str], allowed: Iterable[str]) -> None:
    """A ``TypeError`` for the first of ``given`` not ``allowed``, as Python words it, with the
    allowed name it is likely a slip for and the allowed names (a notebook has no ``--help``)."""
    allowed = list(allowed)
    for name in given:
        if name not in allowed:
            close = difflib.get_close_matches(str(name), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"{who}() got an unexpected keyword argument {name!r}{hint} "
                            f"(it takes {', '.join(allowed)})")


def path_list(value: Any, who: str, what: str) -> list:
    """``value``, one path (a str or ``os.PathLike``) or an iterable of them (a glob's generator
    too), as a list of paths; an ``ArgumentError`` saying ``who``'s argument is no such thing
    (``what``: what to give). A str was iterated letter by letter ("/: not a dataset folder"),
    bytes or a table byte by byte or column by column, None or a number were a TypeError from
    inside."""
    if isinstance(value, (str, os.PathLike)):
        return [value]
    table = hasattr(value, "columns")
    if table or isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        hint = "; a feature table is read from a dataset folder or an ARFF file (write_arff)" if table else ""
        raise ArgumentError(f"{who} is {kind_of(value)}; give {what}{hint}")
    paths = list(value)
    bad = [p for p in paths if not isinstance(p, (str, os.PathLike))]
    if bad:
        raise ArgumentError(f"{who} is a list holding {kind_of(bad[0])}; give {what}")
    return paths
