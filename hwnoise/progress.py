"""Progress bars on stderr, the same way in every stage (quiet when stderr is not a terminal
unless HWNOISE_PROGRESS=1, silent with HWNOISE_PROGRESS=0).

tqdm is imported only when a bar is shown (``tqdm.auto`` takes 25 ms, a tenth of
``hwnoise features``' start-up); a bar that is off is ``_Off``, which does nothing."""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from tqdm.auto import tqdm

T = TypeVar("T")


def _enabled() -> bool:
    flag = os.environ.get("HWNOISE_PROGRESS")
    if flag is not None:
        return flag not in ("0", "", "false", "no")
    return sys.stderr.isatty()


def progress(iterable: Iterable[T], desc: str = "", total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar on stderr (or pass it through when progress is off)."""
    if not _enabled():
        return iter(iterable)
    from tqdm.auto import tqdm

    return iter(tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr,
                     dynamic_ncols=True, leave=False))


class _Off:
    """A bar that is off: what tqdm(disable=True) does for the calls the stages make."""

    def __init__(self, total: int | None = None):
        self.total, self.n = total, 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, *args, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Off:
        return self

    def __exit__(self, *exc) -> None:
        pass


def bar(total: int | None = None, desc: str = "", unit: str = "it") -> tqdm | _Off:
    """A manual tqdm bar on stderr (call ``update``/``close``/``set_postfix``), or ``_Off``."""
    if not _enabled():
        return _Off(total)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr,
                dynamic_ncols=True, leave=False)


def info(msg: str) -> None:
    """A progress or summary line for people: stderr, never stdout (stdout carries data)."""
    print(msg, file=sys.stderr, flush=True)
