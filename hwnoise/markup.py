"""The tags of a page's markup, found by a linear scan without parsing it, and what that scan
serves: ``flatten_deep``, which removes the tags that would open deeper than Chromium's depth
limit so that libxml2 (which drops what is deeper than its own) keeps every word.

In the base so that every stage may use it (forms/ reads the form a browser gives each control
from it, features/ flattens deep pages before the walk).
"""
from __future__ import annotations

import re
from bisect import bisect_left

__all__ = ["MAX_DEPTH", "VOID", "BLOCK_TAGS", "Nesting", "flatten_deep", "stopped_too_deep", "tags"]

#: Deepest nesting kept (Chromium's kMaximumHTMLParserDOMTreeDepth).
MAX_DEPTH = 512

# A tag: ``<``, an optional ``/``, a name (an ASCII letter, then anything but whitespace, ``/``
# and ``>``), then attributes (any characters but ``>``, with quoted values that may hold ``>``) up
# to ``>``; the longest name that gives a tag is taken. A comment runs to ``-->`` or the end.
# ``_TagScan`` finds the tags so without a regular expression's backtracking (which took cubic
# time on ``<a<a<a...`` with no ``>``: minutes for a few thousand), in one pass over sorted positions.
_NAME_STOP_RE = re.compile(r"[\s/>]")
_ATTR_STOP_RE = re.compile(r"[>\"']")
# the tag with the longest name, taken possessively (nothing tried twice): where it matches, it
# is the tag; where it does not but a name starts, ``_TagScan`` decides (a shorter name may give one)
_TAG_RE = re.compile(r"<(/?)([A-Za-z][^\s/>]*+)(?:[^>\"']++|\"[^\"]*+\"|'[^']*+')*+>")
_TAG_START_RE = re.compile(r"</?[A-Za-z]")
#: elements that have no content and no end tag (a start tag opens nothing)
VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr "
                 "basefont bgsound frame image isindex".split())
#: Elements a browser lays out on lines of their own by default (HTML's block-level elements, the
#: table's parts, ``<br>`` and ``<hr>``): where the text of a page breaks into lines. Extracted
#: text keeps a line for each (``extractors.base.text_from_labels``), and so do the readers of other
#: extractors' HTML (``extractors.external.html_to_text``) and Webstemmer's layout blocks.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body br caption center dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr legend li main menu nav "
    "noframes ol p pre section summary table tbody td tfoot th thead title tr ul".split())
_RAW = frozenset("script style textarea title xmp iframe noembed noframes plaintext".split())
_CLOSES_P = frozenset("address article aside blockquote center details dialog dir div dl "
                      "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr "
                      "main menu nav ol p pre section table ul li dd dt".split())
_IMPLIED = {  # tag -> (tags it closes when open, tags that bound the search)
    "li": ({"li"}, {"ul", "ol", "menu", "table", "div"}),
    "dt": ({"dt", "dd"}, {"dl", "table", "div"}),
    "dd": ({"dt", "dd"}, {"dl", "table", "div"}),
    "td": ({"td", "th"}, {"tr", "table"}),
    "th": ({"td", "th"}, {"tr", "table"}),
    "tr": ({"tr", "td", "th"}, {"table", "thead", "tbody", "tfoot"}),
    "option": ({"option"}, {"select", "datalist", "optgroup"}),
}


def stopped_too_deep(parser) -> bool:
    """Whether libxml2 stopped reading the page it just parsed at its depth limit (2,048 levels
    with ``huge_tree``), dropping all that follows; ``flatten_deep`` the page and parse again then."""
    last = parser.error_log.last_error  # the depth error is fatal, so it is the last one
    return last is not None and "Excessive depth" in last.message


def flatten_deep(text: str, limit: int = MAX_DEPTH) -> str:
    """Remove every tag that would open deeper than ``limit`` (and its end tag), keeping text.

    A pre-scan of the markup that estimates nesting with HTML's commonest
    implied end tags (p, li, dt/dd, td/th, tr, option); each removed tag becomes
    one space so that words on both sides stay apart.
    """
    nesting = Nesting(limit)
    out: list[str] = []
    last = 0
    for start, stop, name, end, void in tags(text):
        out.append(text[last:start])  # text, comments, raw text: kept as they are
        out.append(text[start:stop] if nesting.keeps(name, end, void) else " ")
        last = stop
    out.append(text[last:])
    return "".join(out)


def tags(text: str):
    """Scan step: each tag of ``text`` in order as ``(start, stop, name, end, void)``, ``name``
    lowercase; comments and the raw text of script, style, ... are passed over (kept as text)."""
    n = len(text)
    scan = None  # the exact scan, from the first tag the quick match misses on
    pos = 0
    while pos < n:
        s = text.find("<", pos)
        if s < 0:
            break
        if text.startswith("<!--", s):  # a comment
            e = text.find("-->", s + 4)
            pos = n if e < 0 else e + 3
            continue
        m = _TAG_RE.match(text, s) if scan is None else None
        if m is not None:
            tag = m.end(), bool(m.group(1)), m.start(2), m.end(2)
        elif scan is None and not _TAG_START_RE.match(text, s):
            tag = s + 1
        else:
            scan = scan or _TagScan(text)
            tag = scan.tag(s)
        if isinstance(tag, int):  # no tag at s: where the next one may start
            pos = tag
            continue
        stop, close, a, j = tag
        name = text[a:j].lower()
        void = not close and (name in VOID or text[j:stop - 1].rstrip().endswith("/"))
        yield s, stop, name, close, void
        pos = stop
        if name in _RAW and not close and not void:  # its text up to its end tag is not markup
            end = re.compile(r"</%s\s*>" % re.escape(name), re.IGNORECASE).search(text, pos)
            pos = end.start() if end else n


class _TagScan:
    """The tags of a page's markup (see ``_NAME_STOP_RE``), found from the sorted positions of the
    characters that end a name or stop the attributes' scan: each position is looked up by
    bisection, and where a scan of the attributes from a quote or ``>`` ends is kept, so the pass
    is linear whatever the markup."""

    def __init__(self, text: str):
        self.text = text
        self.stops = [m.start() for m in _NAME_STOP_RE.finditer(text)]
        self.special = [m.start() for m in _ATTR_STOP_RE.finditer(text)]
        self.quotes = {q: [i for i in self.special if text[i] == q] for q in "\"'"}
        self.ends: dict[int, int] = {}  # a quote's or '>''s position -> the '>' its scan ends at (-1: none)

    @staticmethod
    def _after(positions: list[int], p: int) -> int:
        """The first of ``positions`` at ``p`` or after it (-1: none)."""
        k = bisect_left(positions, p)
        return positions[k] if k < len(positions) else -1

    def end_from(self, p: int) -> int:
        """Where attributes scanned from ``p`` end: the closing ``>``'s position, or -1 (a quote
        never closed, or no ``>``)."""
        seen = []
        while True:
            q = self._after(self.special, p)
            if q < 0 or q in self.ends:
                r = -1 if q < 0 else self.ends[q]
                break
            seen.append(q)
            if self.text[q] == ">":
                r = q
                break
            close = self._after(self.quotes[self.text[q]], q + 1)
            if close < 0:
                r = -1
                break
            p = close + 1
        for q in seen:
            self.ends[q] = r
        return r

    def tag(self, s: int) -> tuple[int, bool, int, int] | int:
        """The tag at ``s`` (a ``<``) as ``(stop, close, name start, name end)``; else where the
        next tag may start (past the name when it gives none: the tags that start inside it
        would end the same way, but a comment, or an end tag where it ends)."""
        text = self.text
        close = text.startswith("</", s)
        a = s + 2 if close else s + 1
        if a >= len(text) or not ("a" <= text[a] <= "z" or "A" <= text[a] <= "Z"):
            return s + 1
        j = self._after(self.stops, a + 1)
        j = len(text) if j < 0 else j
        e = self.end_from(j)
        if e >= 0:
            return e + 1, close, a, j
        k = bisect_left(self.special, j) - 1
        while k >= 0 and self.special[k] > a:  # a shorter name, up to a quote inside it
            q = self.special[k]
            e = self.end_from(q)
            if e >= 0:
                return e + 1, close, a, q
            k -= 1
        c = text.find("<!--", s + 1, j)
        return c if c >= 0 else j - 1 if text.startswith("</", j - 1) and j - 1 > s else j


class Nesting:
    """``flatten_deep``'s estimate of the open elements: (name, kept) of each, and how many are kept."""

    __slots__ = ("stack", "kept", "limit")

    def __init__(self, limit: int):
        self.stack: list[tuple[str, bool]] = []
        self.kept = 0
        self.limit = limit

    def keeps(self, name: str, end: bool, void: bool) -> bool:
        """Tag step: whether the tag stays (its element is kept, or an end tag matches nothing)."""
        if end:
            return self._end(name)
        self._implied_ends(name)
        return self._start(name, void)

    def _end(self, name: str) -> bool:
        """End-tag step: close the innermost open ``name`` and all inside it; stray end tags stay."""
        stack = self.stack
        for k in range(len(stack) - 1, -1, -1):
            if stack[k][0] == name:
                keep = stack[k][1]
                self._close_from(k)
                return keep
        return True  # a stray end tag: the parser ignores it

    def _implied_ends(self, name: str) -> None:
        """Start-tag step: close what the opening ``name`` ends by HTML's implied end tags."""
        stack = self.stack
        if name in _CLOSES_P and stack and stack[-1][0] == "p":
            self._close_from(len(stack) - 1)
        rule = _IMPLIED.get(name)
        if rule:
            closes, bounds = rule
            for k in range(len(stack) - 1, max(-1, len(stack) - 8), -1):
                t = stack[k][0]
                if t in closes:
                    self._close_from(k)
                    break
                if t in bounds:
                    break

    def _start(self, name: str, void: bool) -> bool:
        """Start-tag step: open ``name`` (a void tag opens nothing), kept while fewer than ``limit`` are."""
        if self.kept >= self.limit and not void:
            self.stack.append((name, False))
            return False
        if not void:
            self.stack.append((name, True))
            self.kept += 1
        return True

    def _close_from(self, k: int) -> None:
        """Close step: the open elements from the ``k``-th on."""
        for _, was_kept in self.stack[k:]:
            self.kept -= was_kept
        del self.stack[k:]
