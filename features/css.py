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

What it does not do, on purpose: linked stylesheets are
ignored (no network), pseudo-classes that depend on the user
(``:hover``) match nothing, specificity is not weighed (a later rule that shows what a rule
of the very same selector hid is: ``hiding_selectors``), and a rule that would hide ``<html>`` or ``<body>`` is
ignored. A selector cssselect cannot handle is skipped, never fatal. Section
4.2.2 of seed 003 blames hidden elements for the gap between its CETD and the
original.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
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
    "hidden on small screens"; ``!important`` weighed as the cascade weighs it).

    Rules inside other at-rules (``@supports``, ``@layer``, nested blocks) are skipped, as are
    ``@font-face`` and ``@import``. The sheet is searched for hiding declarations first, and
    only their rules are read.
    """
    if "/*" in css:
        css = _CSS_COMMENT_RE.sub(" ", css)
    low = css.lower()
    if "none" not in low and "hidden" not in low and "collapse" not in low:
        return []
    if len(low) != len(css):
        css = low  # rare: lower-casing changed the length, so positions must come from one text
    braces: _Braces | None = None
    blocks: tuple = ([], [])  # the top-level @media blocks, read when a hiding rule sits in a block
    media = "@media" in low
    hides: list[tuple[int, str, bool, list[str]]] = []  # (rule's "{", property, !important, selectors)
    seen_open = -1
    depth, upto = 0, 0  # brace depth at position ``upto``, advanced as the matches go on
    for start, end, kind in _declarations(low, _SHEET_HIDES):
        rule = _rule_at(css, start, seen_open)
        if rule is None:
            continue  # outside any block, or a rule already taken
        open_, before = rule
        seen_open = open_
        prelude = css[before + 1:open_].strip()
        if not prelude or prelude.startswith("@"):
            continue
        depth += css.count("{", upto, before + 1) - css.count("}", upto, before + 1)
        upto = before + 1
        if depth == 1 and media and braces is None:
            braces, blocks = _media_context(css, low)
        if depth == 0 or (depth == 1 and _in_shown_media(blocks, open_)):
            hides.append((open_, "vd"[kind == 0], "!" in low[start:end],
                          [x.strip() for x in prelude.split(",") if x.strip()]))
    if not hides:
        return []
    if media and braces is None:
        braces, blocks = _media_context(css, low)
    shows = _shown_again(css, low, blocks, braces, Counter(sel for h in hides for sel in h[3]))
    out: list[str] = []
    for open_, prop, important, selectors in hides:
        for sel in selectors:
            if not _overridden(open_, important, shows.get((sel, prop), ())):
                out.append(sel)
    return out


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


def _media_context(css: str, low: str) -> tuple["_Braces", tuple]:
    """The sheet's brace depths and its top-level ``@media`` blocks (``_media_blocks``)."""
    braces = _Braces(css)
    return braces, _media_blocks(low, braces)


def _overridden(at: int, important: bool, shows) -> bool:
    """Whether a hiding declaration (in the rule whose ``{`` is at ``at``) loses to one of
    ``shows`` (``(position, !important)`` of the same selector's declarations that show what it
    hid): a later one of the same importance, or an important one over a normal one."""
    return any((imp and not important) or (imp == important and pos >= at) for pos, imp in shows)


def _shown_again(css: str, low: str, blocks, braces: "_Braces | None", selectors: Counter) -> dict:
    """``{(selector, "d" | "v"): [(position of the rule's "{", !important), ...]}``: the rules of
    ``selectors`` (the exact selector text, alone or in a list) that apply (top level, or a
    top-level ``@media`` block that holds) and whose last ``display`` is not ``none`` ("d") or
    whose last ``visibility`` is ``visible`` ("v"). One scan for showing declarations; only
    their rules' selectors are read."""
    out: dict = {}
    taken = -1
    for at, _end, _kind in _declarations(low, _SHOWS):
        rule = _rule_at(css, at, taken)
        if rule is None:
            continue  # outside any block, or a rule already read
        open_, before = rule
        taken = open_
        hit = [x for x in (p.strip() for p in css[before + 1:open_].split(",")) if x in selectors]
        if not hit:
            continue
        close = css.find("}", open_)
        body = low[open_ + 1:close if close >= 0 else len(low)]
        for prop, rx, shown in _SHOWING:
            found = rx.findall(body)
            if not found or not shown(found[-1][0]):
                continue
            if braces is None:
                braces = _Braces(css)
            d = braces.before(open_)
            if d == 0 or (d == 1 and _in_shown_media(blocks, open_)):
                for sel in hit:
                    out.setdefault((sel, prop), []).append((open_, bool(found[-1][1])))
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

    def before(self, at: int) -> int:
        return int(self.after[at - 1]) if at > 0 else 0


_DISPLAY_RE = re.compile(r"(?:^|[;\s])display\s*:\s*([a-z-]+)\s*(!\s*important)?")
_VISIBILITY_RE = re.compile(r"(?:^|[;\s])visibility\s*:\s*([a-z-]+)\s*(!\s*important)?")
#: Declarations that show what the same property hid: display other than none, visibility visible.
_SHOWING = (("d", _DISPLAY_RE, lambda v: v != "none"), ("v", _VISIBILITY_RE, lambda v: v == "visible"))


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


_COMPOUND_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*|\*)?((?:[.#][A-Za-z0-9_-]+)*)$")
_PART_RE = re.compile(r"[.#][A-Za-z0-9_-]+")
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
        classes = frozenset(x[1:] for x in _PART_RE.findall(m.group(2)) if x[0] == ".")
        ids = [x[1:] for x in _PART_RE.findall(m.group(2)) if x[0] == "#"]
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
    rows by ``match_rows`` (tag, class and id lookups instead of one XPath
    scan of the whole tree per selector).
    """

    __slots__ = ("elements", "simple")

    def __init__(self, elements: set, simple: list):
        self.elements = elements
        self.simple = simple


def page_style(root: etree._Element, source=None) -> PageStyle:
    """Read the page's style sheets (``<style>`` outside ``<noscript>``) for hiding rules.
    ``source``: the page's text, a callable that returns it, or None (then the tree is read).

    Simple selectors are returned parsed, for ``match_rows``; the few others
    (attribute selectors, ``:not``, ...) are run through cssselect here. The
    ``hidden`` attribute and inline styles are checked by the walk itself.
    """
    hidden: set = set()
    sheets = tuple(_style_sheets(root))
    if not sheets:
        return PageStyle(_keep_page(root, hidden), [])
    if sum(map(len, sheets)) <= _CACHED_SHEETS:
        simple, complex_ = _sheet_rules(sheets)
    else:
        simple, complex_ = _sheet_rules.__wrapped__(sheets)
    if complex_:
        if len(complex_) > _PREFILTER:
            classes, ids = _names_in(root, source)
            complex_ = [s for s in complex_ if _could_match(s, classes, ids)]
        _run_xpaths(root, [_xpath_of(s) for s in complex_[:_MAX_COMPLEX]], hidden)
    return PageStyle(_keep_page(root, hidden), list(simple))


#: Style sheets up to this many characters (a page's together) have their rules cached.
_CACHED_SHEETS = 1 << 18


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
    cls_sets: dict[int, frozenset] = {}
    by_class: dict[str, list[int]] = {}
    if need_cls:
        disjoint = need_cls.isdisjoint
        for r, value in enumerate(classes):
            if value:
                toks = value.split()
                if not disjoint(toks):
                    for c in need_cls.intersection(toks):
                        by_class.setdefault(c, []).append(r)

    def class_set(r: int) -> frozenset:
        got = cls_sets.get(r)
        if got is None:
            got = cls_sets[r] = frozenset((classes[r] or "").split())
        return got
    by_id: dict[str, list[int]] = {}
    for r, value in enumerate(ids):
        if value and value in need_ids:
            by_id.setdefault(value, []).append(r)
    empty: frozenset = frozenset()

    def compound_ok(r: int, comp) -> bool:
        tag, cl, id_ = comp
        return ((tag is None or tags[r] == tag) and (not cl or cl <= class_set(r))
                and (id_ is None or ids[r] == id_))

    def left_ok(r: int, comps, combs, k: int) -> bool:
        """Row r matched comps[k]; do its ancestors match comps[:k] through combs?"""
        if k == 0:
            return True
        p = parents[r]
        is_html = k == 1 and comps[0] == ("html", empty, None)  # <html> is above row 0
        if combs[k - 1] == ">":
            if p < 0:
                return is_html
            return compound_ok(p, comps[k - 1]) and left_ok(p, comps, combs, k - 1)
        while p >= 0:
            if compound_ok(p, comps[k - 1]) and left_ok(p, comps, combs, k - 1):
                return True
            p = parents[p]
        return is_html

    hit: set[int] = set()
    for comps, combs in simple:
        tag, cl, id_ = comps[-1]
        if id_ is not None:
            cand = by_id.get(id_, [])
        elif cl:
            cand = by_class.get(min(cl, key=lambda c: len(by_class.get(c, ()))), [])
        else:
            cand = [r for r in range(n) if tags[r] == tag]
        k = len(comps) - 1
        hit.update(r for r in cand if r and compound_ok(r, comps[k]) and left_ok(r, comps, combs, k))
    return sorted(hit)


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
        rows = match_rows(style.simple, [e.tag for e in els], parents,
                          [e.get("class") for e in els], [e.get("id") for e in els])
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
