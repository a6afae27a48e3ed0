"""What a browser would not show: the elements the walk drops (DESIGN.md "The measures").

Dropped without a look at styles: comments and processing instructions (the
parser removes them), ``head`` and everything outside ``<body>``, and the
elements in ``DROP_TAGS`` (script, style, noscript, template, ...). Dropped
after a look at the page itself (``hidden_elements``):

- elements with the ``hidden`` attribute;
- elements whose inline ``style`` says ``display: none`` or ``visibility: hidden``
  (or ``collapse``);
- elements that the page's own ``<style>`` sheets hide that way through
  selectors cssselect understands: tag, class, id, attribute, compound
  (``div.ad.top``), descendant and child (``#side .promo``, ``ul > li.x``).

``DROP_TAGS`` also holds what sits in ``<head>`` when a page misplaces it
(title, meta, link, base) and the fallback content a browser does not render
(iframe, canvas, datalist).

Media queries (top-level ``@media`` blocks, a ``<style>``'s ``media``) are answered for one
screen, a desktop window of 1,366 × 768 (``features.media``): a sheet or block for other
screens (``print``, narrow widths) hides nothing.

A rule that hides loses to a rule that shows (``display`` other than ``none``, ``visibility:
visible``) when the cascade would let the showing one win: ``!important``, then specificity,
then order. A later rule of the very same selector is weighed in the sheet
(``hiding_selectors``), rules of other selectors on the walk's rows (``cascade_rows``: Bootstrap's
``d-none d-lg-block``, Tailwind's ``hidden md:block``).

What it does not do, on purpose: linked stylesheets are
ignored (no network), pseudo-classes that depend on the user
(``:hover``) match nothing, a showing rule is weighed only when ``parse_simple`` reads its
selector (tags, classes, ids, descendant and child combinators) and a hiding rule only when it
reads the hiding one's too (the rare others hide whatever shows them), inline styles do not show
what a sheet hid, and a rule that would hide ``<html>`` or ``<body>`` is
ignored. A selector cssselect cannot handle is skipped, never fatal. Section
4.2.2 of seed 003 blames hidden elements for the gap between its CETD and the
original.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache

import numpy as np
from lxml import etree

from hwnoise.features import native
from hwnoise.features.media import matches as media_matches

__all__ = ["DROP_TAGS", "SCRIPTING_OFF_DROP", "hidden_elements", "hiding_selectors", "hides"]

#: Elements dropped with their subtree whatever their style says.
DROP_TAGS = frozenset({
    "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
    "iframe", "param", "source", "track", "datalist", "canvas",
})

#: What a browser with scripting off drops: ``DROP_TAGS`` but ``<noscript>``, whose content
#: it shows. The walk uses it for pages that show (next to) nothing but hold their text in
#: ``<noscript>`` (``features.walk``, "Pages that need scripts"), as ``hwnoise render`` does by default.
SCRIPTING_OFF_DROP = DROP_TAGS - {"noscript"}

_HIDES_RE = re.compile(
    r"(?:^|[;{\s])(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!\s*important)?\s*(?:;|$)",
    re.IGNORECASE)
_CSS_COMMENT_RE = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_MAX_SELECTORS = 2000
_CHUNK = 100


def hides(declarations: str | None) -> bool:
    """True when a CSS declaration block (an inline ``style``) hides its element."""
    return bool(declarations) and _HIDES_RE.search(declarations) is not None


def hiding_selectors(css: str) -> list[str]:
    """Selectors of the rules of a style sheet whose declarations hide elements: its top-level
    rules and those of its top-level ``@media`` blocks whose query holds for the walk's screen
    (``features.media``), less those that a later rule of the very same selector shows again
    (``.nav{display:none} @media (min-width: 62em){.nav{display:block}}``, how CSS-in-JS writes
    "hidden on small screens"; ``!important`` weighed as the cascade weighs it). A rule of
    another selector that shows the element again is weighed on the page's rows
    (``cascade_rows``).

    Rules inside other at-rules (``@supports``, ``@layer``, nested blocks) are skipped, as are
    ``@font-face`` and ``@import``. The sheet is searched for hiding declarations first, and
    only their rules are read.
    """
    hides, shows = _sheet_display(css)
    if not hides:
        return []
    wanted = {sel for h in hides for sel in h[3]}
    again: dict = {}
    for open_, prop, important, selectors in shows:
        for sel in selectors:
            if sel in wanted:
                again.setdefault((sel, prop), []).append((open_, important))
    out: list[str] = []
    for open_, prop, important, selectors in hides:
        for sel in selectors:
            if not _overridden(open_, important, again.get((sel, prop), ())):
                out.append(sel)
    return out


#: A rule that hides or shows: (position of its "{" in the sheet, "d" (display) or "v"
#: (visibility), !important, its selectors).
Rule = tuple[int, str, bool, list[str]]


@lru_cache(maxsize=64)
def _sheet_display(css: str) -> tuple[list[Rule], list[Rule]]:
    """``(hiding rules, showing rules)`` of a style sheet that apply on the walk's screen (top
    level, or a top-level ``@media`` block whose query holds): rules whose ``display`` is
    ``none`` or ``visibility`` ``hidden``/``collapse``, and rules whose last ``display`` is
    not ``none`` or last ``visibility`` is ``visible``; none of either without a hiding rule.
    Cached: ``hiding_selectors`` and the cascade (``_sheet_cascade``) read the same sheets."""
    if "/*" in css:
        css = _CSS_COMMENT_RE.sub(" ", css)
    low = css.lower()
    if "none" not in low and "hidden" not in low and "collapse" not in low:
        return [], []
    if len(low) != len(css):
        css = low  # rare: lower-casing changed the length, so positions must come from one text
    sheet = _Sheet(css, low)
    hides: list[Rule] = []
    for open_, before, start, end, kind in sheet.rules(_SHEET_HIDES):
        prelude = css[before + 1:open_].strip()
        if prelude and not prelude.startswith("@"):
            hides.append((open_, "vd"[kind == 0], "!" in low[start:end],
                          [x.strip() for x in prelude.split(",") if x.strip()]))
    if not hides:
        return [], []
    return hides, _showing_rules(sheet)


class _Sheet:
    """One style sheet (its text without comments, and lower-cased) and its top-level ``@media``
    blocks, read only when a rule sits in one (``_media_blocks``)."""

    def __init__(self, css: str, low: str):
        self.css, self.low = css, low
        self.media = "@media" in low
        self._blocks: tuple | None = None

    @property
    def blocks(self) -> tuple:
        if self._blocks is None:
            self._blocks = _media_blocks(self.low, _Braces(self.css))
        return self._blocks

    def rules(self, patterns) -> Iterator[tuple[int, int, int, int, int]]:
        """``(its "{", the end of what comes before its prelude, and the declaration's start, end
        and pattern)`` of each rule that holds a declaration ``patterns`` match (``_declarations``;
        the first such one), once, in order, where the rule applies on the walk's screen: at the
        top level, or in a top-level ``@media`` block whose query holds. The brace depth is
        counted as the rules go on."""
        css = self.css
        taken = -1
        depth, upto = 0, 0  # brace depth at position ``upto``
        for start, end, kind in _declarations(self.low, patterns):
            rule = _rule_at(css, start, taken)
            if rule is None:
                continue  # outside any block, or a rule already taken
            open_, before = rule
            taken = open_
            depth += css.count("{", upto, before + 1) - css.count("}", upto, before + 1)
            upto = before + 1
            if depth == 0 or (depth == 1 and self.media and _in_shown_media(self.blocks, open_)):
                yield open_, before, start, end, kind


def _declarations(low: str, patterns) -> list[tuple[int, int, int]]:
    """``(start, end, which pattern)`` of the matches of ``patterns`` in the lower-cased sheet
    that begin a declaration (at the start, or after ``;``, ``{`` or a space), in order."""
    return sorted((m.start(), m.end(), k) for k, rx in enumerate(patterns) for m in rx.finditer(low)
                  if m.start() == 0 or low[m.start() - 1] in _DECL_BEFORE)


def _rule_at(css: str, at: int, taken: int) -> tuple[int, int] | None:
    """``(its "{", the end of what comes before its prelude)`` of the rule whose block holds the
    declaration at ``at``; None outside any block or for the rule whose ``{`` is ``taken``."""
    open_ = css.rfind("{", 0, at + 1)
    if open_ < 0 or open_ == taken or css.rfind("}", open_, at) >= 0:
        return None
    return open_, max(css.rfind("}", 0, open_), css.rfind(";", 0, open_), css.rfind("{", 0, open_))


def _overridden(at: int, important: bool, shows) -> bool:
    """Whether a hiding declaration (in the rule whose ``{`` is at ``at``) loses to one of
    ``shows`` (``(position, !important)`` of the same selector's declarations that show what it
    hid): a later one of the same importance, or an important one over a normal one."""
    return any((imp and not important) or (imp == important and pos >= at) for pos, imp in shows)


def _showing_rules(sheet: _Sheet) -> list[Rule]:
    """The rules that apply (``_Sheet.rules``) and whose last ``display`` is not ``none`` ("d")
    or whose last ``visibility`` is ``visible`` ("v"). One scan for showing declarations; only
    their rules are read."""
    css, low = sheet.css, sheet.low
    out: list[Rule] = []
    for open_, before, *_ in sheet.rules(_SHOWS):
        hit = [x for x in (p.strip() for p in css[before + 1:open_].split(",")) if x and not x.startswith("@")]
        if not hit:
            continue
        close = css.find("}", open_)
        body = low[open_ + 1:close if close >= 0 else len(low)]
        for prop, name, rx, shown in _SHOWING:
            if name not in body:
                continue
            found = rx.findall(body)
            if found and shown(found[-1][0]):
                out.append((open_, prop, bool(found[-1][1]), hit))
    return out


#: Declarations that may show what another rule hid (read further by ``_SHOWING``): literal-led
#: patterns, run on the lower-cased sheet (fast scans), as ``_SHEET_HIDES``.
_SHOWS = (re.compile(r"display\s*:\s*(?!none\b)[a-z-]"), re.compile(r"visibility\s*:\s*visible"))


class _Braces:
    """A sheet's brace depths, computed once (numpy over its code points): the depth after each
    character, and the braces that close top-level blocks."""

    def __init__(self, css: str):
        cp = (np.frombuffer(css.encode("ascii"), dtype=np.uint8) if css.isascii()
              else np.frombuffer(css.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))
        closes = cp == 125
        self.after = np.cumsum((cp == 123).view(np.int8) - closes.view(np.int8), dtype=np.int32)  # depth after each character
        self.ends = np.flatnonzero(closes & (self.after == 0))  # the braces that close top-level blocks
        self.size = len(cp)


_DISPLAY_RE = re.compile(r"(?:^|[;\s])display\s*:\s*([a-z-]+)\s*(!\s*important)?")
_VISIBILITY_RE = re.compile(r"(?:^|[;\s])visibility\s*:\s*([a-z-]+)\s*(!\s*important)?")
#: Declarations that show what the same property hid: display other than none, visibility visible.
_SHOWING = (("d", "display", _DISPLAY_RE, lambda v: v != "none"),
            ("v", "visibility", _VISIBILITY_RE, lambda v: v == "visible"))


def _media_blocks(low: str, braces: _Braces) -> tuple[list[int], list[tuple[int, bool]]]:
    """The sheet's top-level ``@media`` blocks: their opening braces' positions (ascending) and,
    for each, ``(closing brace's position, whether its query holds: media.matches)``."""
    found = [(m.start(), m.end() - 1, m.group(1)) for m in _MEDIA_RE.finditer(low)]
    if not found:
        return [], []
    at = np.fromiter((f[0] for f in found), np.int64, len(found))
    top = np.flatnonzero(np.where(at > 0, braces.after[np.maximum(at - 1, 0)], 0) == 0)
    opens = [found[k][1] for k in top]
    ends = braces.ends
    k = np.searchsorted(ends, opens)
    closes = np.where(k < len(ends), ends[np.minimum(k, len(ends) - 1)] if len(ends) else 0, braces.size)
    return opens, [(int(c), media_matches(found[t][2])) for c, t in zip(closes, top)]


_MEDIA_RE = re.compile(r"@media(?![\w-])([^{};]*)\{")


def _in_shown_media(blocks: tuple[list[int], list[tuple[int, bool]]], at: int) -> bool:
    """Whether position ``at`` lies in a top-level ``@media`` block whose query holds."""
    opens, info = blocks
    k = bisect_right(opens, at) - 1
    return k >= 0 and at < info[k][0] and info[k][1]


_SHEET_HIDES = (  # literal-led patterns, run on the lower-cased sheet (fast scans)
    re.compile(r"display\s*:\s*none\s*(?:!\s*important)?\s*(?=[;}]|$)"),
    re.compile(r"visibility\s*:\s*(?:hidden|collapse)\s*(?:!\s*important)?\s*(?=[;}]|$)"),
)
_DECL_BEFORE = frozenset(";{ \t\r\n\f")
_NAME_RE = re.compile(r"([.#])((?:[\w-]|\\.)+)")


def _could_match(selector: str, classes: set, ids: set) -> bool:
    """False when the selector needs a class or id that no element of the page has."""
    for kind, name in _NAME_RE.findall(selector):
        if (kind == "." and name not in classes) or (kind == "#" and name not in ids):
            return False
    return True


@lru_cache(maxsize=4096)
def _xpath_of(selector: str) -> str | None:
    """The XPath of one CSS selector, or None when cssselect cannot take it or it is too broad."""
    from cssselect import HTMLTranslator
    from cssselect.parser import SelectorError

    if selector.strip() in ("*", "html", "body", ":root") or "::" in selector or ":" in selector.replace("\\:", ""):
        return None  # universal, whole-page, pseudo-element or user-state selectors
    try:
        return HTMLTranslator().css_to_xpath(selector, prefix="descendant-or-self::")
    except (SelectorError, Exception):  # noqa: BLE001 - skip what cssselect cannot handle
        return None


_CLASS_RE = re.compile(r"""class\s*=\s*["']?([^"'>]*)""")
_ID_RE = re.compile(r"""id\s*=\s*["']?([^"'>\s]*)""")
_PREFILTER = 8


def _names_in(root: etree._Element, source) -> tuple[set, set]:
    """Class tokens and ids used on the page (from the source text when given: faster; a
    callable gives the text, decoded only when asked for)."""
    classes: set = set()
    ids: set = set()
    if callable(source):
        source = source()
    if source is not None:
        for value in _CLASS_RE.findall(source):
            classes.update(value.split())
        ids.update(_ID_RE.findall(source))
        return classes, ids
    classes = {c for v in root.xpath("//@class") for c in v.split()}
    ids = {str(v).strip() for v in root.xpath("//@id")}
    return classes, ids


#: A class or id name: word characters, or one escaped character other than a hex digit or a
#: line break (Tailwind's ``.md\:block``, ``.w-1\/2``); hex escapes are left to cssselect.
_NAME = r"(?:[A-Za-z0-9_-]|\\[^0-9A-Fa-f\r\n\f])+"
_COMPOUND_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*|\*)?((?:[.#]" + _NAME + r")*)$")
_PART_RE = re.compile(r"[.#]" + _NAME)
_ESCAPE_RE = re.compile(r"\\(.)")
_MAX_COMPLEX = 30

#: A parsed simple selector: compounds left to right, each (tag or None, classes, id or None),
#: and the combinators between them (" " descendant, ">" child).
Simple = tuple[tuple[tuple[str | None, frozenset, str | None], ...], tuple[str, ...]]


def parse_simple(selector: str) -> Simple | None:
    """Parse a selector made of tag, class and id compounds joined by descendant or child
    combinators (``div.ad``, ``#side .promo``, ``ul.menu > li.x``); None for anything else."""
    text = selector.replace(">", " > ").split()
    if not text or text[0] == ">" or text[-1] == ">":
        return None
    compounds: list = []
    combinators: list[str] = []
    expect_compound = True
    for tok in text:
        if tok == ">":
            if expect_compound:
                return None
            combinators.append(">")
            expect_compound = True
            continue
        if not expect_compound:
            combinators.append(" ")
        m = _COMPOUND_RE.match(tok)
        if m is None or not tok:
            return None
        tag = m.group(1)
        tag = None if tag in (None, "*") else tag.lower()
        parts = _PART_RE.findall(m.group(2))
        if "\\" in tok:
            parts = [_ESCAPE_RE.sub(r"\1", x) for x in parts]
        classes = frozenset(x[1:] for x in parts if x[0] == ".")
        ids = [x[1:] for x in parts if x[0] == "#"]
        if len(set(ids)) > 1:
            return None  # #a#b matches nothing
        if tag is None and not classes and not ids:
            return None  # the universal selector alone: never hide the whole page
        compounds.append((tag, classes, ids[0] if ids else None))
        expect_compound = False
    if len(compounds) == 1 and compounds[0][0] in ("html", "body") and not compounds[0][1] and not compounds[0][2]:
        return None
    return tuple(compounds), tuple(combinators)


class PageStyle:
    """What a page's own markup hides, found before the walk.

    ``elements``: elements to skip with their subtree (``hidden`` attribute,
    inline style, and the rare selectors only cssselect can read).
    ``simple``: parsed simple selectors of hiding rules, matched on the walk's
    rows by ``hidden_rows`` (tag, class and id lookups instead of one XPath
    scan of the whole tree per selector). ``sheets``: the style sheets' text, for the
    cascade across selectors (``cascade_rows``).
    """

    __slots__ = ("elements", "simple", "sheets")

    def __init__(self, elements: set, simple: list, sheets: tuple = ()):
        self.elements = elements
        self.simple = simple
        self.sheets = sheets


class TooDeep(Exception):
    """``page_style`` was given a ``deeper`` test that the tree passes, before any XPath ran."""


def page_style(root: etree._Element, source=None, deeper=None) -> PageStyle:
    """Read the page's style sheets (``<style>`` outside ``<noscript>``) for hiding rules.
    ``source``: the page's text, a callable that returns it, or None (then the tree is read).

    Simple selectors are returned parsed, for ``match_rows``; the few others
    (attribute selectors, ``:not``, ...) are run through cssselect here. The
    ``hidden`` attribute and inline styles are checked by the walk itself.
    ``deeper``: a test of the tree, asked before those XPaths run (their cost grows with the
    tree's depth, a descendant selector's as its cube); ``TooDeep`` is raised when it holds.
    """
    hidden: set = set()
    sheets = tuple(_style_sheets(root))
    if not sheets:
        return PageStyle(_keep_page(root, hidden), [])
    simple, complex_ = _by_sheets(_sheet_rules, sheets)
    if complex_:
        if len(complex_) > _PREFILTER:
            classes, ids = _names_in(root, source)
            complex_ = [s for s in complex_ if _could_match(s, classes, ids)]
        if complex_ and deeper is not None and deeper(root):
            raise TooDeep
        _run_xpaths(root, [_xpath_of(s) for s in complex_[:_MAX_COMPLEX]], hidden)
    return PageStyle(_keep_page(root, hidden), list(simple), sheets)


#: Style sheets up to this many characters (a page's together) have their rules cached.
_CACHED_SHEETS = 1 << 18


def _by_sheets(read, sheets: tuple[str, ...]):
    """``read(sheets)`` for a function of a page's style sheets cached with ``lru_cache``: from its
    cache when the sheets are small enough to keep (``_CACHED_SHEETS``), else computed anew."""
    return read(sheets) if sum(map(len, sheets)) <= _CACHED_SHEETS else read.__wrapped__(sheets)


@lru_cache(maxsize=64)
def _sheet_rules(sheets: tuple[str, ...]) -> tuple[tuple, tuple[str, ...]]:
    """The hiding rules' selectors of a page's style sheets: ``(parsed simple selectors,
    the others cssselect can translate)``, the first ``_MAX_SELECTORS`` distinct ones in
    order. A function of the sheets' text alone, cached: the result pages of one site share
    their sheets (the bench corpus's big9 holds ten pages a site)."""
    selectors: list[str] = []
    for css in sheets:
        selectors.extend(hiding_selectors(css))
    simple: list = []
    complex_: list[str] = []
    for sel in list(dict.fromkeys(selectors))[:_MAX_SELECTORS]:
        parsed = parse_simple(sel)
        if parsed is not None:
            simple.append(parsed)
        elif _xpath_of(sel):
            complex_.append(sel)
    return tuple(simple), tuple(complex_)


def _style_sheets(root: etree._Element) -> list[str]:
    """The text of each ``<style>`` element (root's subtree, document order) outside any
    ``<noscript>`` whose ``media`` holds for the walk's screen (``features.media``),
    empty ones left out. The sheets come from the compiled pass (``features/_walk.c``
    ``style_sheets``: one pass over libxml2's nodes) when it is there, else from
    ``_style_sheets_python``, its reference."""
    got = native.ext.style_sheets(root) if native.ext is not None else None
    if got is None:
        got = _style_sheets_python(root)
    return [css for css, media in got if media is None or media_matches(media)]


def _style_sheets_python(root: etree._Element) -> list[tuple[str, str | None]]:
    """``(text, media attribute or None)`` of each ``<style>`` element outside ``<noscript>``,
    empty ones left out, over lxml's ``iter``: the fallback and the reference."""
    out: list[tuple[str, str | None]] = []
    for el in root.iter("style"):
        css = el.text
        if css and not any(a.tag == "noscript" for a in el.iterancestors()):
            out.append((css, el.get("media")))
    return out


def _run_xpaths(root: etree._Element, xpaths: list[str], hidden: set) -> None:
    xpaths = list(dict.fromkeys(xpaths))
    for k in range(0, len(xpaths), _CHUNK):
        chunk = xpaths[k:k + _CHUNK]
        try:
            hidden.update(e for e in root.xpath(" | ".join(chunk)) if isinstance(e.tag, str))
        except etree.XPathError:
            for xp in chunk:  # one bad expression: take the others one by one
                try:
                    hidden.update(e for e in root.xpath(xp) if isinstance(e.tag, str))
                except etree.XPathError:
                    continue


def match_rows(simple: list, tags: list[str], parents, classes: list, ids: list,
               factor: tuple | None = None) -> list[int]:
    """Rows (of a walk, body = row 0) that a list of parsed simple selectors matches.

    ``classes[i]`` and ``ids[i]`` are row i's ``class`` and ``id`` attributes (or
    None). Body (row 0) is never returned. ``parents`` is a list or an int64 array;
    with an array and ``factor`` (``measures.tag_factor(tags)``, which the compiled
    visit gives) the compiled matcher runs (``features/_walk.c`` ``match_rows``; this
    code is its reference and fallback).
    """
    if isinstance(parents, np.ndarray):
        if native.ext is not None and factor is not None:
            got = native.ext.match_rows(list(simple), np.ascontiguousarray(parents, dtype=np.int64),
                                        np.ascontiguousarray(factor[0], dtype=np.int64), list(factor[1]),
                                        list(classes), list(ids))
            if got is not None:
                return got
        parents = parents.tolist()
    n = len(tags)
    if not simple or n <= 1:
        return []
    need_cls = {c for comps, _ in simple for _, cl, _ in comps for c in cl}
    need_ids = {i for comps, _ in simple for _, _, i in comps if i}
    by_class: dict[str, list[int]] = {}
    if need_cls:
        disjoint = need_cls.isdisjoint
        for r, value in enumerate(classes):
            if value:
                toks = value.split()
                if not disjoint(toks):
                    for c in need_cls.intersection(toks):
                        by_class.setdefault(c, []).append(r)
    by_id: dict[str, list[int]] = {}
    for r, value in enumerate(ids):
        if value and value in need_ids:
            by_id.setdefault(value, []).append(r)
    page = _Rows(tags, parents, classes, ids)
    hit: set[int] = set()
    for sel in simple:
        tag, cl, id_ = sel[0][-1]
        if id_ is not None:
            cand = by_id.get(id_, [])
        elif cl:
            cand = by_class.get(min(cl, key=lambda c: len(by_class.get(c, ()))), [])
        else:
            cand = [r for r in range(n) if tags[r] == tag]
        hit.update(r for r in cand if page.matches(sel, r))
    return sorted(hit)


class _Rows:
    """A walk's rows (tags, parents as a list, class and id attributes) against which parsed
    simple selectors are matched one row at a time: ``match_rows``'s reference code and the
    cascade (``cascade_rows``)."""

    _EMPTY: frozenset = frozenset()

    def __init__(self, tags: list[str], parents: list[int], classes: list, ids: list):
        self.tags, self.parents, self.classes, self.ids = tags, parents, classes, ids
        self._class_sets: dict[int, frozenset] = {}

    def class_set(self, r: int) -> frozenset:
        got = self._class_sets.get(r)
        if got is None:
            got = self._class_sets[r] = frozenset((self.classes[r] or "").split())
        return got

    def compound_ok(self, r: int, comp) -> bool:
        tag, cl, id_ = comp
        return ((tag is None or self.tags[r] == tag) and (not cl or cl <= self.class_set(r))
                and (id_ is None or self.ids[r] == id_))

    def left_ok(self, r: int, comps, combs, k: int) -> bool:
        """Row r matched comps[k]; do its ancestors match comps[:k] through combs?"""
        if k == 0:
            return True
        parents = self.parents
        p = parents[r]
        is_html = k == 1 and comps[0] == ("html", self._EMPTY, None)  # <html> is above row 0
        if combs[k - 1] == ">":
            if p < 0:
                return is_html
            return self.compound_ok(p, comps[k - 1]) and self.left_ok(p, comps, combs, k - 1)
        while p >= 0:
            if self.compound_ok(p, comps[k - 1]) and self.left_ok(p, comps, combs, k - 1):
                return True
            p = parents[p]
        return is_html

    def matches(self, sel: Simple, r: int) -> bool:
        """Whether row ``r`` (never body, row 0) matches the selector."""
        comps, combs = sel
        k = len(comps) - 1
        return bool(r) and self.compound_ok(r, comps[k]) and self.left_ok(r, comps, combs, k)

    def keys(self, r: int):
        """The index keys (``_key``) under which a selector whose last compound row r may match
        is filed: its id, each of its classes, its tag."""
        out = [("", self.tags[r])]
        out.extend(("." + c) for c in self.class_set(r))
        if self.ids[r]:
            out.append("#" + self.ids[r])
        return out


def specificity(sel: Simple) -> tuple[int, int, int]:
    """A parsed simple selector's specificity: (ids, classes, tags), as the cascade counts it."""
    comps = sel[0]
    return (sum(c[2] is not None for c in comps), sum(len(c[1]) for c in comps),
            sum(c[0] is not None for c in comps))


def _key(sel: Simple):
    """Where ``_sheet_cascade`` files a selector: by its last compound's id, else one of its
    classes, else its tag (``_Rows.keys`` lists a row's)."""
    tag, cl, id_ = sel[0][-1]
    if id_ is not None:
        return "#" + id_
    if cl:
        return "." + min(cl)
    return ("", tag)


_parsed = lru_cache(maxsize=16384)(parse_simple)
#: At most this many showing selectors a page are weighed (the first ones, in order).
_MAX_SHOWING = 20000


@lru_cache(maxsize=64)
def _sheet_cascade(sheets: tuple[str, ...]) -> tuple[dict, dict]:
    """The display and visibility rules of a page's sheets whose selectors ``parse_simple``
    reads, for ``cascade_rows``: the hiding ones and the showing ones (at most ``_MAX_SHOWING``
    distinct selectors), each as ``{index key: [(selector, "d" | "v", (!important,
    specificity, sheet, position))]}`` (``_key``; the last tuple is what the cascade compares:
    importance, then specificity, then order)."""
    hide: dict = {}
    show: dict = {}
    distinct: dict = {}
    for k, css in enumerate(sheets):
        hides, shows = _sheet_display(css)
        for rules, out in ((hides, hide), (shows, show)):
            for open_, prop, important, selectors in rules:
                for text in selectors:
                    sel = _parsed(text)
                    if sel is None:
                        continue
                    if out is show:
                        if len(distinct) >= _MAX_SHOWING and sel not in distinct:
                            continue
                        distinct[sel] = None
                    out.setdefault(_key(sel), []).append((sel, prop, (important, specificity(sel), k, open_)))
    return hide, show


def hidden_rows(style: PageStyle, tags: list[str], parents, classes: list, ids: list,
                factor: tuple | None = None) -> list[int]:
    """The rows (of a walk, body = row 0) that the page's style sheets hide: those a hiding rule
    matches (``match_rows``), less those the cascade shows again (``cascade_rows``)."""
    if not style.simple:
        return []
    rows = match_rows(style.simple, tags, parents, classes, ids, factor=factor)
    return cascade_rows(style.sheets, rows, tags, parents, classes, ids) if rows else rows


def cascade_rows(sheets: tuple[str, ...], rows: list[int], tags: list[str], parents, classes: list,
                 ids: list) -> list[int]:
    """``rows`` (matched by hiding rules) less those where a showing rule wins the cascade:
    for the property a rule hides by (``display`` or ``visibility``), the rule that matches
    the row with the greatest (!important, specificity, order) decides, as a browser's cascade
    does (Bootstrap's ``.d-none{display:none!important}`` and, later,
    ``@media (min-width:992px){.d-lg-flex{display:flex!important}}`` on one element: shown).
    Only selectors that ``parse_simple`` reads are weighed; inline styles are not."""
    if not rows or not sheets:
        return rows
    hide, show = _by_sheets(_sheet_cascade, sheets)
    if not show:
        return rows
    page = _Rows(tags, parents, classes, ids)
    maybe = [r for r in rows if not show.keys().isdisjoint(page.keys(r))]
    if not maybe:
        return rows
    if isinstance(parents, np.ndarray):
        page.parents = parents.tolist()
    shown = {r for r in maybe if not _still_hidden(page, r, hide, show)}
    return [r for r in rows if r not in shown] if shown else rows


def _still_hidden(page: _Rows, r: int, hide: dict, show: dict) -> bool:
    """Whether row r stays hidden: for some property, the greatest key of the hiding rules
    that match it beats every showing rule's that matches it."""
    keys = page.keys(r)
    best: dict = {}
    for index, kind in ((hide, 0), (show, 1)):
        for key in keys:
            for sel, prop, weight in index.get(key, ()):
                if (kind, prop) in best and best[kind, prop] >= weight:
                    continue
                if page.matches(sel, r):
                    best[kind, prop] = weight
    hid = [(prop, weight) for (kind, prop), weight in best.items() if kind == 0]
    return not hid or any((1, prop) not in best or best[1, prop] < weight for prop, weight in hid)


def hidden_elements(root: etree._Element, source: str | None = None) -> set:
    """The elements of a parsed page that a browser would not show because of ``hidden`` or CSS.

    ``DROP_TAGS`` are not included. The set holds lxml elements (each hidden
    element, not its descendants). The walk itself uses ``page_style``,
    ``hides`` and ``match_rows``, which give the same verdicts in its one pass.
    """
    style = page_style(root, source)
    hidden = set(style.elements)
    body = root.find("body")
    els = [e for e in (body if body is not None else root).iter() if isinstance(e.tag, str)]
    hidden.update(e for e in els if e.get("hidden") is not None or hides(e.get("style")))
    if style.simple:
        index = {e: k for k, e in enumerate(els)}
        parents = [index.get(e.getparent(), -1) for e in els]
        rows = hidden_rows(style, [e.tag for e in els], parents, [e.get("class") for e in els],
                           [e.get("id") for e in els])
        hidden.update(els[r] for r in rows)
    return _keep_page(root, hidden)


def _keep_page(root: etree._Element, hidden: set) -> set:
    """Never hide the page itself (a rule or attribute on html/body is ignored)."""
    if hidden:
        hidden.discard(root)
        body = root.find("body")
        if body is not None:
            hidden.discard(body)
    return hidden
