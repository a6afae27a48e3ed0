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

What it does not do, on purpose: ``@media`` blocks and linked stylesheets are
ignored (no network, no viewport), pseudo-classes that depend on the user
(``:hover``) match nothing, specificity and later ``display: block`` overrides
are not weighed, and a rule that would hide ``<html>`` or ``<body>`` is
ignored. A selector cssselect cannot handle is skipped, never fatal. Section
4.2.2 of seed 003 blames hidden elements for the gap between its CETD and the
original.
"""
from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

__all__ = ["DROP_TAGS", "hidden_elements", "hiding_selectors", "hides"]

#: Elements dropped with their subtree whatever their style says.
DROP_TAGS = frozenset({
    "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
    "iframe", "param", "source", "track", "datalist", "canvas",
})

_HIDES_RE = re.compile(
    r"(?:^|[;{\s])(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!\s*important)?\s*(?:;|$)",
    re.IGNORECASE)
_CSS_COMMENT_RE = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_MAX_SELECTORS = 2000
_CHUNK = 100


def hides(declarations: str | None) -> bool:
    """True when a CSS declaration block (an inline ``style``) hides its element."""
    return bool(declarations) and _HIDES_RE.search(declarations.replace("\n", " ")) is not None


def hiding_selectors(css: str) -> list[str]:
    """Selectors of the top-level rules of a style sheet whose declarations hide elements.

    At-rules (``@media``, ``@supports``, ``@font-face``, ``@import``) are skipped
    with their blocks.
    """
    low = css.lower()
    if "none" not in low and "hidden" not in low and "collapse" not in low:
        return []
    css = _CSS_COMMENT_RE.sub(" ", css)
    out: list[str] = []
    depth, start, open_ = 0, 0, 0
    for m in _BRACE_RE.finditer(css):
        if m.group() == "{":
            if depth == 0:
                open_ = m.start()
            depth += 1
            continue
        if depth == 0:  # a stray close brace
            start = m.end()
            continue
        depth -= 1
        if depth:
            continue
        prelude = css[start:open_]
        semi = prelude.rfind(";")  # an at-rule without a block (@import ...;) before it
        if semi >= 0:
            prelude = prelude[semi + 1:]
        prelude = prelude.strip()
        if prelude and not prelude.startswith("@") and hides(css[open_ + 1:m.start()]):
            out.extend(s.strip() for s in prelude.split(",") if s.strip())
        start = m.end()
    return out


_BRACE_RE = re.compile(r"[{}]")
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


_SCAN_XPATH = etree.XPath("//style[not(ancestor::noscript)]/text() | //*[@hidden or @style]")
_CLASS_RE = re.compile(r"""class\s*=\s*["']?([^"'>]*)""")
_ID_RE = re.compile(r"""id\s*=\s*["']?([^"'>\s]*)""")
_PREFILTER = 8


def _names_in(root: etree._Element, source: str | None) -> tuple[set, set]:
    """Class tokens and ids used on the page (from the source text when given: faster)."""
    classes: set = set()
    ids: set = set()
    if source is not None:
        for value in _CLASS_RE.findall(source):
            classes.update(value.split())
        ids.update(_ID_RE.findall(source))
        return classes, ids
    classes = {c for v in root.xpath("//@class") for c in v.split()}
    ids = {str(v).strip() for v in root.xpath("//@id")}
    return classes, ids


def hidden_elements(root: etree._Element, source: str | None = None) -> set:
    """The elements of a parsed page that a browser would not show because of ``hidden`` or CSS.

    ``DROP_TAGS`` are not included (the walk drops them by tag). The set holds
    lxml elements; the walk skips each with its subtree. ``source`` (the page's
    decoded HTML) lets the selector pre-filter read class and id names from the
    text instead of the tree.
    """
    hidden: set = set()
    selectors: list[str] = []
    for item in _SCAN_XPATH(root):
        if isinstance(item, str):
            selectors.extend(hiding_selectors(str(item)))
        elif item.get("hidden") is not None or hides(item.get("style")):
            hidden.add(item)
    if not selectors:
        return _keep_page(root, hidden)
    selectors = list(dict.fromkeys(selectors))
    if len(selectors) > _PREFILTER:
        classes, ids = _names_in(root, source)
        selectors = [s for s in selectors if _could_match(s, classes, ids)]
    xpaths = [x for x in dict.fromkeys(_xpath_of(s) for s in selectors[:_MAX_SELECTORS]) if x]
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
    return _keep_page(root, hidden)


def _keep_page(root: etree._Element, hidden: set) -> set:
    """Never hide the page itself (a rule or attribute on html/body is ignored)."""
    if hidden:
        hidden.discard(root)
        body = root.find("body")
        if body is not None:
            hidden.discard(body)
    return hidden
