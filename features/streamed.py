"""Content a page streams out of order, which its scripts move into place: React's and Marko's.

A page rendered with streaming sends its HTML in order but leaves gaps where data was not ready
yet. The missing parts come later in the same response, each in a hidden element, followed by a
small inline script that moves it into its gap. Two frameworks do this on many sites:

- **React** 18 or later (Next.js's app router, many shops): a segment ``<div hidden id="S:3">``;
  ``$RS("S:3","P:3")`` puts its content where the placeholder ``<template id="P:3">`` is, and
  removes both; ``$RC("B:0","S:0")`` puts segment ``S:0``'s content where the Suspense boundary
  ``<template id="B:0">`` is, instead of the boundary's fallback (a loading skeleton), and removes
  the segment.
- **Marko** (eBay's pages; ``<await client-reorder>``): a fragment ``<div id="af16"
  style="display:none">`` (``af`` and the runtime's id: ``afbrwweb16`` on eBay's browse pages);
  ``$af(16)`` moves its children where the placeholder ``id="afph16"`` is (a ``<noscript>``, or a
  skeleton), replacing it, and leaves the emptied fragment; ``$af(17, 16)`` waits until
  fragment 16 is placed, then places 17.

A browser with scripts shows that content where it belongs, and a person labelling the page sees
it there. hwnoise runs no scripts, so without this step the content stays hidden and is lost.
``place_streamed`` makes those same moves on the parsed tree, in the order of the calls in the
page's scripts; the walk calls it when its visit skipped such a part (``streamed_id``: the visit
reads every element's ``hidden`` and ``id`` anyway, so other pages pay nothing) and then visits the
page again. Differences from the browser: the parser drops comments, and React marks the end of a
boundary's fallback with a ``<!--/$-->`` comment, so that fallback is left in place after the moved
content (skeletons hold no text); a call whose part or gap is not in the tree is skipped (the
browser's script would stop there with an error). Parts that no call names stay hidden, as they do
in the browser.
"""
from __future__ import annotations

import re

from lxml import etree

__all__ = ["place_streamed", "streamed_id", "xml_text"]

#: React's ``$RC("B:0","S:0")`` and ``$RS("S:1","P:1")``, Marko's ``$afbrwweb(16)`` and ``$af(17,16)``
#: (groups 4-6: the runtime's function name without ``$``, the fragment, the one it waits for).
_CALL = re.compile(r'\$R([CS])\(\s*"([^"\\]{1,64})"\s*,\s*"([^"\\]{1,64})"\s*\)'
                   r'|\$(af[A-Za-z0-9_]{0,100})\(\s*(\d{1,9})\s*(?:,\s*(\d{1,9})\s*)?\)')
#: Marko's fragment ids: ``af``, the runtime's id, the fragment's number.
_MARKO_ID = re.compile(r"af[A-Za-z0-9_]*[0-9]")
#: What libxml2's HTML parser keeps in a text but lxml refuses to be given (XML's other C0 controls,
#: U+FFFE, U+FFFF: "All strings must be XML compatible"): a space for those ``str.isspace`` calls
#: whitespace (the walk collapses them alike), else U+FFFD (as ``walk.parse_html`` reads a NUL).
_NOT_XML = {c: " " if chr(c).isspace() else "\ufffd" for c in [*range(0x20), 0xFFFE, 0xFFFF]
            if chr(c) not in "\t\n\r"}


def xml_text(text: str) -> str:
    """``text`` as lxml takes it for an element's ``text`` or ``tail`` (``_NOT_XML``)."""
    return text.translate(_NOT_XML)


def streamed_id(el_id: str | None, hidden: bool) -> bool:
    """Whether a skipped element with this ``id`` (and the ``hidden`` attribute or not) may be a
    part streamed out of order: React's segment (``hidden``, "S:...") or Marko's fragment
    ("af...<digit>", hidden by its style). ``features/_walk.c`` (``streamed_id``) says the same."""
    if not el_id:
        return False
    return (hidden and el_id.startswith("S:")) or (len(el_id) <= 128 and _MARKO_ID.fullmatch(el_id) is not None)


def place_streamed(root: etree._Element) -> int:
    """Move each streamed part into its gap as React's ``$RC`` / ``$RS`` and Marko's ``$af``
    would (module doc), in the order of the calls; returns how many were placed. Calls whose
    part or gap is not in the tree are skipped."""
    calls = [m.groups() for el in root.iter("script") if el.text and ("$R" in el.text or "$af" in el.text)
             for m in _CALL.finditer(el.text)]
    if not calls:
        return 0
    ids: dict[str, etree._Element] = {}
    for el in root.iter():
        key = el.get("id") if isinstance(el.tag, str) else None
        if key is not None:
            ids.setdefault(key, el)  # the first, as getElementById finds it
    placed = 0
    marko: dict[str, tuple[set, dict]] = {}  # runtime -> (fragments placed, fragments waiting on one)
    for kind, first, second, runtime, number, after in calls:
        if runtime is not None:
            placed += _marko(ids, runtime, str(int(number)), after, *marko.setdefault(runtime, (set(), {})))
        else:
            segment, gap = (ids.get(second), ids.get(first)) if kind == "C" else (ids.get(first), ids.get(second))
            placed += _react(segment, gap)
    return placed


def _react(segment: etree._Element | None, gap: etree._Element | None) -> int:
    """``$RS`` / ``$RC``: the segment's content in the gap's place; the segment and the gap go."""
    if (segment is None or gap is None or segment is gap or gap.getparent() is None
            or segment.getparent() is None or _inside(gap, segment)):
        return 0
    _detach(segment)
    _move_children_before(segment, gap)
    _detach(gap)
    return 1


def _marko(ids: dict, runtime: str, number: str, after: str | None, done: set, waiting: dict) -> int:
    """``$af(number, after)``: wait for fragment ``after`` if it is not placed yet (0 does not
    count, as in JavaScript); else place the fragment, then those waiting for it, depth first."""
    if after is not None and int(after) and str(int(after)) not in done:
        waiting.setdefault(str(int(after)), []).append(number)
        return 0
    placed, todo = 0, [number]
    while todo:
        n = todo.pop()
        fragment = ids.get(runtime + n)
        if fragment is None or fragment.getparent() is None:
            continue  # the browser's script stops with an error here
        gap = ids.get(runtime + "ph" + n)
        if gap is not None and (gap.getparent() is None or _inside(gap, fragment) or gap is fragment):
            continue
        if gap is not None:
            _move_children_before(fragment, gap)
            _detach(gap)
            placed += 1
        else:  # no placeholder: the children leave the page (into a fragment nobody attaches)
            fragment.text = None
            for child in list(fragment):
                fragment.remove(child)
        done.add(n)
        todo.extend(reversed(waiting.pop(n, [])))
    return placed


def _move_children_before(parent: etree._Element, el: etree._Element) -> None:
    """Move ``parent``'s text and children (with their tails) just before ``el``."""
    _add_text_before(el, parent.text)
    parent.text = None
    for child in list(parent):
        el.addprevious(child)  # moves the child with its tail


def _inside(el: etree._Element, ancestor: etree._Element) -> bool:
    return any(a is ancestor for a in el.iterancestors())


def _add_text_before(el: etree._Element, text: str | None) -> None:
    """Put ``text`` just before ``el``: at the end of its previous sibling's tail, or of its
    parent's text."""
    if not text:
        return
    prev = el.getprevious()  # the texts joined are the parser's: xml_text, for what lxml refuses
    if prev is not None:
        prev.tail = xml_text((prev.tail or "") + text)
    else:
        parent = el.getparent()
        parent.text = xml_text((parent.text or "") + text)


def _detach(el: etree._Element) -> None:
    """Remove ``el`` with its subtree, keeping its tail text where it was."""
    _add_text_before(el, el.tail)
    el.tail = None
    el.getparent().remove(el)
