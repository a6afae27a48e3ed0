"""Training rows gathered page by page into one table without a second copy of it.

``pd.concat`` of the per-page frames holds every page's frame and the result at once (twice
the rows). :class:`RowCollector` keeps each page's columns as arrays of its own (the page's
frame is then let go), joins them every ``CHUNK_PAGES`` pages (small arrays freed stay in the
heap, large ones go back to the system) and at the end a column at a time, freeing each
column's pieces as it goes, into a frame that is not consolidated (no copy). The frame equals
``pd.concat(frames, ignore_index=True)`` (same columns, dtypes and values); pages whose columns
or dtypes differ from the first page's fall back to that very concat.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["RowCollector", "CHUNK_PAGES"]

#: pages whose small per-page arrays are joined into one array per column
CHUNK_PAGES = 128


def _join(pieces: list):
    if isinstance(pieces[0], np.ndarray):
        return np.concatenate(pieces)
    return type(pieces[0])._concat_same_type(pieces)


class RowCollector:
    """``add(frame)`` per page, then ``frame()`` once."""

    def __init__(self) -> None:
        self._sig: tuple | None = None
        self._cols: dict[str, list] = {}     # per column: joined chunks, then recent pieces
        self._recent = 0                      # pages not joined yet
        self._lens: list[int] = []            # rows per page (to give the pages back)
        self._frames: list[pd.DataFrame] | None = None   # the fallback: plain frames

    def add(self, frame: pd.DataFrame) -> None:
        sig = (tuple(frame.columns), tuple(str(t) for t in frame.dtypes))
        if self._frames is None and self._sig is None:
            if not frame.columns.is_unique:
                self._frames = []
            else:
                self._sig = sig
                self._cols = {c: [] for c in frame.columns}
        if self._frames is None and sig != self._sig:
            self._frames = self._pages()
        if self._frames is not None:
            self._frames.append(frame)
            return
        for c in frame.columns:  # a copy of each column: the page's blocks can go
            col = frame[c]
            self._cols[c].append(col.to_numpy(copy=True) if isinstance(col.dtype, np.dtype)
                                 else col.array.copy())
        self._lens.append(len(frame))
        self._recent += 1
        if self._recent >= CHUNK_PAGES:
            for c, pieces in self._cols.items():
                self._cols[c] = pieces[:-self._recent] + [_join(pieces[-self._recent:])]
            self._recent = 0

    def _pages(self) -> list[pd.DataFrame]:
        """The pages collected so far as frames (for the fallback)."""
        if self._sig is None or not self._lens:
            return []
        cols = {c: _join(p) for c, p in self._cols.items()}
        bounds = np.concatenate(([0], np.cumsum(self._lens))).tolist()
        out = [pd.DataFrame({c: a[bounds[i]:bounds[i + 1]] for c, a in cols.items()})
               for i in range(len(self._lens))]
        self._cols, self._lens = {}, []
        return out

    def frame(self) -> pd.DataFrame:
        """Every page's rows, in the order added."""
        if self._frames is not None:
            frames, self._frames = self._frames, []
            return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        if self._sig is None:
            return pd.DataFrame()
        data = {}
        for c in list(self._cols):
            data[c] = _join(self._cols.pop(c))
        return pd.DataFrame(data, copy=False)
