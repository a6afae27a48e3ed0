"""Content a page streams out of order: React's server rendering moves it into place by script.

A page rendered by React 18 or later with streaming (Next.js's app router, and many shops) sends
its HTML in order but leaves gaps where data was not ready yet. The missing parts come later in
the same response, each in a hidden element (``<div hidden id="S:3">``), followed by a small inline
script that moves it into its gap:

- ``$RS("S:3","P:3")`` puts segment ``S:3``'s content where the placeholder ``<template id="P:3">``
  is, and removes both;
- ``$RC("B:0","S:0")`` puts segment ``S:0``'s content where the Suspense boundary ``<template
  id="B:0">`` is, instead of the boundary's fallback (a loading skeleton), and removes the segment.

A browser with scripts shows that content where it belongs, and a person labelling the page sees
it there. hwnoise runs no scripts, so without this step the content stays hidden (the ``hidden``
attribute) and is lost. ``place_streamed`` makes those same moves on the parsed tree, in the order
of the calls in the page's scripts; the walk calls it when its visit skipped such a segment (the
visit reads every element's ``hidden`` and ``id`` anyway, so other pages pay nothing) and then
visits the page again. One difference: the parser drops comments, and
React marks the end of a boundary's fallback with a ``<!--/$-->`` comment, so the fallback is left
in place after the moved content (skeletons hold no text). Segments that no call names stay hidden,
as they do in the browser.
"""
from __future__ import annotations

import re

from lxml import etree

__all__ = ["place_streamed"]

#: ``$RC("B:0","S:0")`` and ``$RS("S:1","P:1")`` calls in the page's inline scripts.
_CALL = re.compile(r'\$R([CS])\(\s*"([^"\\]{1,64})"\s*,\s*"([^"\\]{1,64})"\s*\)')


def place_streamed(root: etree._Element) -> int:
    """Move each streamed segment into its gap as React's ``$RC`` and ``$RS`` would (module doc);
    returns how many were placed. Calls whose segment or gap is not in the tree are skipped."""
    calls = [m.groups() for el in root.iter("script") if el.text and "$R" in el.text
             for m in _CALL.finditer(el.text)]
    if not calls:
        return 0
    ids: dict[str, etree._Element] = {}
    for el in root.iter():
        key = el.get("id") if isinstance(el.tag, str) else None
        if key is not None:
            ids.setdefault(key, el)
    placed = 0
    for kind, first, second in calls:
        segment, gap = (ids.get(second), ids.get(first)) if kind == "C" else (ids.get(first), ids.get(second))
        if (segment is None or gap is None or segment is gap or gap.getparent() is None
                or segment.getparent() is None or _inside(gap, segment)):
            continue
        _detach(segment)
        _add_text_before(gap, segment.text)
        for child in list(segment):
            gap.addprevious(child)  # moves the child with its tail
        _detach(gap)
        placed += 1
    return placed


def _inside(el: etree._Element, ancestor: etree._Element) -> bool:
    return any(a is ancestor for a in el.iterancestors())


def _add_text_before(el: etree._Element, text: str | None) -> None:
    """Put ``text`` just before ``el``: at the end of its previous sibling's tail, or of its
    parent's text."""
    if not text:
        return
    prev = el.getprevious()
    if prev is not None:
        prev.tail = (prev.tail or "") + text
    else:
        parent = el.getparent()
        parent.text = (parent.text or "") + text


def _detach(el: etree._Element) -> None:
    """Remove ``el`` with its subtree, keeping its tail text where it was."""
    _add_text_before(el, el.tail)
    el.tail = None
    el.getparent().remove(el)
