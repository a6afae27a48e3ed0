"""The walker's rows as lxml elements: one walk that keeps its tree, for the stages that need the
elements themselves (class and id words, XPaths in the browser's form, HTML lengths, the page
tagged for Chromium), in one place.

``shown_elements(html)`` walks a page with ``keep_tree=True`` (the walker's own parser and hiding
rules, so element i is row i of ``walk_page(html).rows``), or takes a walk that already kept its
tree; ``aligned`` says whether the elements match rows the caller holds (their count and tags).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.features.walk import PageWalk

__all__ = ["ElementView", "element_view", "shown_elements", "html_lengths", "html_len_or_proxy"]


@dataclass
class ElementView:
    """lxml's view of a page: the shown elements in row order, the tree, the walk they came
    from; the rows' parents, the HTML lengths and the title made on first use (the class/id
    columns need only the elements)."""

    elements: list
    root: Any
    aligned: bool
    walk: "PageWalk"

    @cached_property
    def parents(self) -> list[int]:
        """Each row's parent row (-1 for the first)."""
        return self.walk.column("parent").tolist()

    @cached_property
    def html_len(self) -> np.ndarray:
        sizes = html_lengths(self.root)
        return np.fromiter((sizes.get(e, 0) for e in self.elements), dtype=np.float64, count=len(self.elements))

    @cached_property
    def title(self) -> str:
        t = self.root.find(".//title")
        return " ".join(("".join(t.itertext()) if t is not None else "").split())


def _start_tag_len(el) -> int:
    n = len(el.tag) + 2
    for k, v in el.attrib.items():
        n += len(k) + len(v) + 4
    return n


def html_lengths(root) -> dict:
    """Serialised HTML length of every element under ``root`` (tags, attributes, text, tails of
    children; comments and hidden elements included), bottom-up in one pass."""
    order = list(root.iter())
    size: dict = {}
    for el in reversed(order):
        tag = el.tag
        if not isinstance(tag, str):  # comment or processing instruction
            size[el] = len(el.text or "") + 7
            continue
        n = _start_tag_len(el) + len(el.text or "") + len(tag) + 3
        for ch in el:
            n += size.get(ch, 0) + len(ch.tail or "")
        size[el] = n
    return size


def element_view(walk: "PageWalk") -> ElementView:
    """lxml's view of a walk made with ``keep_tree=True``: its elements (the rows), tree and
    parents; no second parse."""
    return ElementView(walk.elements, walk.root, True, walk)


def shown_elements(html: bytes | str, http_charset: str | None = None, n_rows: int | None = None,
                   tags: Sequence[str] | None = None, walk: "PageWalk | None" = None) -> ElementView:
    """The shown elements of a page in the walker's row order: from ``walk`` when it kept its
    tree, else from a walk of ``html`` that keeps it. ``aligned`` says whether they match the
    rows (``n_rows`` and ``tags``); when not, callers fall back to the rows alone or refuse."""
    if walk is None or walk.elements is None:
        from hwnoise.features.walk import walk_page

        walk = walk_page(html, (), http_charset=http_charset, keep_tree=True)
    view = element_view(walk)
    out = view.elements
    view.aligned = (n_rows is None or n_rows == len(out)) and (
        tags is None or all(a == e.tag for a, e in zip(tags, out)))
    return view


def html_len_or_proxy(walk: "PageWalk", view: ElementView | None) -> np.ndarray:
    """Each row's HTML length (``view.html_len``), or, when lxml's elements do not line up with
    the rows, a proxy: its characters plus a tag's worth (10) per element of its subtree."""
    if view is not None and view.aligned:
        return view.html_len
    r = walk.rows
    return r["chars"].to_numpy(dtype=float) + 10.0 * (r["tags"].to_numpy(dtype=float) + 1)
