"""Caps applied to a page's markup before it is parsed: bounds on what makes parsing or the walk
blow up, as browsers cope with such pages rather than stall.

- ``MAX_ATTRIBUTES`` attributes per element: libxml2 checks each new attribute against the
  element's others, so 100,000 attributes on one element take minutes (quadratic). The first
  ``MAX_ATTRIBUTES`` are kept, the rest of that run dropped; quoted values holding ``<`` and
  ``>`` count as any other, and the search is one linear scan (no position tried twice).
- ``MAX_TEXT_RUN`` characters between two ``<``: one text node of tens of megabytes costs the
  walk tens of times its size (its words, their offsets). The run is cut to its first
  ``MAX_TEXT_RUN`` characters (still far longer than any other node of a result page); a tag
  cut in a quoted attribute value gets the value's closing quote.

- ``MAX_PAGE_CHARS`` characters per page (32 MiB; ``collect --max-bytes`` keeps 10 MiB by
  default, the largest page of the shared datasets is 2.1 MB): the walk costs some 25 times a
  page's size, so a bigger page is cut at the last tag before the cap.

``cap_markup`` returns its input untouched (the same objects) when nothing is over a cap, so
ordinary pages pay one scan.
"""
from __future__ import annotations

import re

from hwnoise.features import native

__all__ = ["MAX_ATTRIBUTES", "MAX_TEXT_RUN", "MAX_PAGE_CHARS", "cap_markup", "cap_text", "utf8_within_caps"]

MAX_ATTRIBUTES = 1000
MAX_TEXT_RUN = 1 << 20
MAX_PAGE_CHARS = 32 << 20

# one attribute, taken atomically: whitespace, a name, an optional value (quoted or bare)
_ATTR = r"""(?>\s+[^\s=/>"'<]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)"""
_ATTR_RE = re.compile(_ATTR)


def _patterns(n: int) -> tuple[re.Pattern, re.Pattern]:
    """(skip, run). ``skip``, matched at a position, consumes text, end tags and tags of at most
    ``n`` attributes (possessively: nothing is tried twice), so it stops only at the start of a
    tag with more than ``n`` attributes, or at the end; ``run`` matches that tag's attributes.
    Quoted values may hold ``<`` and ``>``; one scan of the page, linear in its length."""
    short = r"<[A-Za-z][^\s/>]*+(?:%s){0,%d}+(?!%s)" % (_ATTR, n, _ATTR)
    skip = re.compile(r"(?:[^<]++|<(?![A-Za-z])|%s)*+" % short)
    return skip, re.compile(r"<[A-Za-z][^\s/>]*+((?:%s)*+)" % _ATTR)


_PATTERNS = {MAX_ATTRIBUTES: _patterns(MAX_ATTRIBUTES)}


def _cap_attributes(text: str, limit: int) -> str:
    """Drop attributes past the ``limit``-th of an element."""
    if native.ext is not None and not native.ext.over_attributes(text, limit):
        return text  # the scan below, compiled (features/_walk.c): no tag over the limit
    skip, runs = _PATTERNS.get(limit) or _PATTERNS.setdefault(limit, _patterns(limit))
    out, last, pos = [], 0, 0
    while True:
        pos = skip.match(text, pos).end()
        if pos >= len(text):
            break
        m = runs.match(text, pos)
        keep = m.start(1)
        for i, a in enumerate(_ATTR_RE.finditer(text, m.start(1), m.end(1))):
            if i == limit:
                break
            keep = a.end()
        out.append(text[last:keep])
        last = pos = m.end(1)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


_LONG_RUNS: dict[int, tuple[re.Pattern, re.Pattern]] = {}


_VALUE_OPENS = re.compile(r"""=\s*(["'])""")


def _open_quote(body: str, cut: int) -> str:
    """The quote that a tag ``body`` cut at ``cut`` leaves open while the whole body closes it
    ('' when none): the cut must close it too, or the value would run on over the page's next
    tags. A value that holds the tag's ``>`` (open at the body's end) is left to run on."""
    pos = 0
    while (m := _VALUE_OPENS.search(body, pos, cut)) is not None:
        pos = body.find(m.group(1), m.end()) + 1
        if not pos:
            return ""  # open to the body's end: the value goes on past this '>', as before the cut
        if pos > cut:
            return m.group(1)
    return ""


def _cut(text: str, pattern: re.Pattern, limit: int, close=None) -> str:
    """``text`` with each ``pattern`` match's group 1 cut to its first ``limit`` characters,
    followed by ``close(group 1, limit)`` when ``close`` is given."""
    out, last = [], 0
    for m in pattern.finditer(text):
        out += [text[last:m.start(1) + limit] + (close(m.group(1), limit) if close else "")]
        last = m.end(1)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _cap_runs(text: str, limit: int) -> str:
    """Cut every text run (``>`` to ``<``) and every tag body (``<`` to ``>``) longer than
    ``limit`` characters to its first ``limit``: a giant text node or attribute value."""
    if len(text) <= limit:
        return text
    pats = _LONG_RUNS.get(limit) or _LONG_RUNS.setdefault(limit, (
        re.compile(r">([^<]{%d}[^<]*)" % (limit + 1)), re.compile(r"<([^>]{%d}[^>]*)" % (limit + 1))))
    marked = ">" + text  # the ">" stands for the start: a run may open the page
    capped = _cut(_cut(marked, pats[0], limit), pats[1], limit, _open_quote)  # a cut value keeps its quote
    return text if capped is marked else capped[1:]


def _cap_length(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("<", 0, limit)
    return text[:cut if cut > 0 else limit]


def cap_text(text: str, *, max_attributes: int | None = None, max_text_run: int | None = None,
             max_chars: int | None = None) -> str:
    """``text`` within the caps (the module's, unless given): its length, every element's
    attributes, every run between tags."""
    text = _cap_length(text, MAX_PAGE_CHARS if max_chars is None else max_chars)
    text = _cap_attributes(text, MAX_ATTRIBUTES if max_attributes is None else max_attributes)
    return _cap_runs(text, MAX_TEXT_RUN if max_text_run is None else max_text_run)


def cap_markup(text: str, utf8: bytes | None = None) -> tuple[str, bytes | None]:
    """``(text, utf8)`` for ``features.walk.parse_html``: unchanged when within the caps, else
    the capped text and ``None`` (the page's own bytes no longer match it)."""
    capped = cap_text(text)
    return (text, utf8) if capped is text else (capped, None)


def utf8_within_caps(data: bytes) -> bool:
    """True when ``cap_text`` leaves ``data.decode("utf-8")`` as it is, found without decoding
    (``data`` valid UTF-8): no more characters than ``MAX_TEXT_RUN`` (so than ``MAX_PAGE_CHARS``,
    and no run over its cap), no tag over ``MAX_ATTRIBUTES`` (the compiled scan reads the
    bytes as their text). False when not sure: a longer page, or no compiled scan."""
    if native.ext is None or len(data) > MAX_TEXT_RUN:
        return False
    return not native.ext.over_attributes(data, MAX_ATTRIBUTES)
