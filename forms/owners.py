"""The form a browser gives each control of a page, which libxml2's tree does not tell.

A browser's parser keeps a *form element pointer* (HTML standard, tree construction): set at a
``<form>`` start tag, cleared at ``</form>`` only. While it is set, a ``<form>`` start tag is
ignored and every control the parser creates belongs to that form, wherever the control lands
(after the ``</div>`` or ``</td>`` that ended the form's element, in the next table cell, after a
``<form>`` put directly in a ``<table>``). Once it is cleared, a control belongs to the nearest
form around it in the browser's tree; ``</form>`` takes only the form itself off the open
elements, so elements opened inside it (a ``<div>``) stay open, and in the form. libxml2 instead
ends a form at an enclosing element's end tag or at a nested ``<form>``, and keeps one open past a
``</form>`` that does not close it cleanly.

``mark_owners`` scans the page's tags (``hwnoise.markup.tags``) with ``Nesting``'s estimate of the
open elements and marks each ``<form>`` and control start tag with ``OWNER``; a ``<form>`` start
tag the browser ignores is removed. The marks, read back from the lxml tree: ``f<i>`` the page's
i-th form, ``c<i>`` a control of form i, ``c`` a control of no form, ``x`` a form or control no
browser submits (inside ``<template>``, or an SVG/MathML element of that name), ``n`` one inside
``<noscript>``: with scripting on, as in the browser a user fills a form in, its content is text
up to ``</noscript>`` (libxml2 parses it, as a browser with scripting off does).
"""
from __future__ import annotations

import sys

from hwnoise.markup import VOID, Nesting, tags

__all__ = ["OWNER", "CONTROLS", "mark_owners"]

#: the attribute that carries a mark (put first in the tag: a browser and libxml2 keep the first
#: of two attributes of one name, so the page cannot give its own)
OWNER = "data-hwnoise-owner"
#: the controls a form submits
CONTROLS = frozenset({"input", "select", "textarea", "button"})
# where ``</form>`` stops looking for the form: HTML's scope boundaries (and <select>, as Chromium)
_SCOPE = frozenset("applet caption html table td th marquee object template select".split())
# what ``</form>`` closes before it takes the form off (HTML's "generate implied end tags")
_IMPLIED_END = frozenset("dd dt li optgroup option p rb rp rt rtc".split())
# where a <form> start tag inserts the form and closes it at once (HTML's "in table" rule)
_TABLE_PARTS = frozenset("table tbody thead tfoot tr".split())
_FOREIGN = frozenset({"svg", "math"})


class _FormParser(Nesting):
    """The open elements, each as ``(name, the form it lies in or None)``, and the form pointer."""

    __slots__ = ("pointer", "forms", "template", "foreign", "noscript")

    def __init__(self) -> None:
        super().__init__(sys.maxsize)
        self.pointer: int | None = None
        self.forms = 0
        self.template = 0  # <template> elements open (their content is no part of the page)
        self.foreign = 0   # <svg> and <math> elements open (a <form> there is no HTML form)
        self.noscript = False  # inside <noscript>: text with scripting on, no tags until </noscript>

    def mark(self, name: str, end: bool, void: bool) -> str | None:
        """Tag step: the mark of a form or control start tag ("" removes the tag), else None."""
        if self.noscript:
            self.noscript = not (end and name == "noscript")
            if not self.noscript:
                self._end(name)
            return "n" if not end and (name in CONTROLS or name == "form") else None
        if name in ("html", "head", "body"):
            return None
        self.noscript = name == "noscript" and not end and not self.foreign
        inert = self.template or self.foreign
        if end:
            if name == "form" and not inert:
                self._end_form()
            else:
                self._end(name)
            return None
        if name == "form" and not inert:
            if self.pointer is not None:
                return ""  # a form inside a form: the browser ignores the tag
            self._implied_ends(name)
            self.pointer = self.forms
            self.forms += 1
            if not (self.stack and self.stack[-1][0] in _TABLE_PARTS):
                self.stack.append((name, self.pointer))
            return f"f{self.pointer}"
        mark = None
        if name in CONTROLS or name == "form":
            owner = self.pointer if self.pointer is not None else self.stack[-1][1] if self.stack else None
            mark = "x" if inert else "c" if owner is None else f"c{owner}"
        self._implied_ends(name)
        # a self-closing tag opens nothing in SVG and MathML only
        self._start(name, void if (self.foreign or name in _FOREIGN) else name in VOID)
        return mark

    def _end_form(self) -> None:
        """``</form>``: the pointer cleared, and the form (only) closed if it is in scope."""
        node, self.pointer = self.pointer, None
        stack = self.stack
        for k in range(len(stack) - 1, -1, -1):
            if stack[k] == ("form", node):
                while stack[-1][0] in _IMPLIED_END:
                    self._close_from(len(stack) - 1)
                del stack[k]
                return
            if stack[k][0] in _SCOPE:
                return

    def _start(self, name: str, void: bool) -> bool:
        """Start-tag step: open ``name`` in the form its parent lies in."""
        if not void:
            self.stack.append((name, self.stack[-1][1] if self.stack else None))
            self.template += name == "template"
            self.foreign += name in _FOREIGN
        return True

    def _close_from(self, k: int) -> None:
        """Close step: the open elements from the ``k``-th on."""
        for name, _ in self.stack[k:]:
            self.template -= name == "template"
            self.foreign -= name in _FOREIGN
        del self.stack[k:]


def mark_owners(html: str) -> str:
    """``html`` with each ``<form>`` and control start tag marked ``OWNER="mark"`` (module doc),
    and the ``<form>`` start tags a browser ignores removed."""
    parser = _FormParser()
    out: list[str] = []
    last = 0
    for start, stop, name, end, void in tags(html):
        mark = parser.mark(name, end, void)
        if mark is None:
            continue
        at = start + 1 + len(name)
        out.append(html[last:start])
        out.append(f'{html[start:at]} {OWNER}="{mark}"{html[at:stop]}' if mark else "")
        last = stop
    out.append(html[last:])
    return "".join(out)
