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
    css = _CSS_COMMENT_RE.sub(" ", css)
    out: list[str] = []
    i, n = 0, len(css)
    while i < n:
        open_ = css.find("{", i)
        if open_ < 0:
            break
        prelude = css[i:open_]
        # an at-rule without a block (@import ...;) may precede the prelude
        semi = prelude.rfind(";")
        if semi >= 0:
            prelude = prelude[semi + 1:]
        # find the matching close brace
        depth, j = 1, open_ + 1
        while j < n and depth:
            c = css[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            j += 1
        body = css[open_ + 1:j - 1]
        prelude = prelude.strip()
        if prelude and not prelude.startswith("@") and hides(body):
            out.extend(s.strip() for s in prelude.split(",") if s.strip())
        i = j
    return out


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


def hidden_elements(root: etree._Element) -> set:
    """The elements of a parsed page that a browser would not show because of ``hidden`` or CSS.

    ``DROP_TAGS`` are not included (the walk drops them by tag). The set holds
    lxml elements; the walk skips each with its subtree.
    """
    hidden: set = set()
    for el in root.xpath("//*[@hidden or @style]"):
        if el.get("hidden") is not None or hides(el.get("style")):
            hidden.add(el)
    sheets = root.xpath("//style[not(ancestor::noscript)]/text()")
    if not sheets:
        return _keep_page(root, hidden)
    selectors: list[str] = []
    for css in sheets:
        selectors.extend(hiding_selectors(str(css)))
        if len(selectors) >= _MAX_SELECTORS:
            break
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
