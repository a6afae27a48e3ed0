"""Progress bars on stderr, the same way in every stage (quiet when stderr is not a terminal
unless HWNOISE_PROGRESS=1, silent with HWNOISE_PROGRESS=0)."""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def _enabled() -> bool:
    flag = os.environ.get("HWNOISE_PROGRESS")
    if flag is not None:
        return flag not in ("0", "", "false", "no")
    return sys.stderr.isatty()


def progress(iterable: Iterable[T], desc: str = "", total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar on stderr (or pass it through when progress is off)."""
    return iter(tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr,
                     disable=not _enabled(), dynamic_ncols=True, leave=False))


def bar(total: int | None = None, desc: str = "", unit: str = "it") -> tqdm:
    """A manual tqdm bar on stderr (call ``update``/``close``)."""
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not _enabled(),
                dynamic_ncols=True, leave=False)


def info(msg: str) -> None:
    """A progress or summary line for people: stderr, never stdout (stdout carries data)."""
    print(msg, file=sys.stderr, flush=True)
