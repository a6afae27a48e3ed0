"""Adapters for the extractors people use instead (trafilatura, readability-lxml, jusText,
resiliparse), and ``alltext``, every visible word of the page.

The core package does not depend on the external packages: each adapter imports its package
when first used, and :func:`available` lists those installed. Every adapter takes the page's
bytes, decodes them as a browser would (``hwnoise.decode``) and returns plain text; a page the
package chokes on yields "" and is counted in ``failures`` (with the last error kept), so one
bad page never stops an evaluation.
"""
from __future__ import annotations

import importlib.util
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from hwnoise.extractors.base import ExtractorError, PageMethod, WalkMethod, capped_page
from hwnoise.features.columns import CONTENT
from hwnoise.markup import BLOCK_TAGS

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

#: adapter name → the module it needs.
PACKAGES = {
    "trafilatura": "trafilatura",
    "readability": "readability",
    "justext": "justext",
    "resiliparse": "resiliparse",
}



def available() -> list[str]:
    """The external adapters whose package is installed."""
    return [name for name, mod in PACKAGES.items() if importlib.util.find_spec(mod) is not None]


def decode(html: bytes | str, http_charset: str | None = None) -> str:
    """The page as text, decoded as a browser would (BOM, HTTP charset, meta, detection)."""
    if isinstance(html, str):
        return html
    try:
        from hwnoise.decode import decode_html
    except ImportError:  # pragma: no cover - the base module lands with the features stage
        return html.decode("utf-8", errors="replace")
    return decode_html(html, http_charset)[0]


def html_to_text(html: str) -> str:
    """Plain text of an HTML fragment, block elements kept apart by newlines."""
    import lxml.html

    if not html or not html.strip():
        return ""
    try:
        root = lxml.html.fromstring(html)
    except Exception:  # noqa: BLE001 - lxml raises several types on empty or odd fragments
        return ""
    parts: list[str] = []

    def visit(el) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in ("script", "style", "noscript", "template"):
            if el.tail:
                parts.append(el.tail)
            return
        block = tag.lower() in BLOCK_TAGS
        if block:
            parts.append("\n")
        if el.text and tag:
            parts.append(el.text)
        for child in el:
            visit(child)
        if block:
            parts.append("\n")
        if el.tail:
            parts.append(el.tail)

    visit(root)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


class ExternalMethod(PageMethod):
    """One external extractor behind the Method contract; never raises on a bad page."""

    needs_training = False

    def __init__(self, name: str, run: Callable[[str], str | None], package: str) -> None:
        super().__init__()
        self.name = name
        self._run = run
        self.package = package

    def extract_html(self, html: bytes | str, *, http_charset: str | None = None) -> str:
        """The extractor's text of the page as the walk reads it: decoded, then cut by the walk's
        own caps (``base.capped_page``: ``features.limits.cap_text``, 32 MiB of text, the last tag
        before it; runs and attributes), so that a stacked or compared extractor reads what the
        walk's nodes hold, and its memory is bounded by the cap (a 50 MB page was handed to trafilatura whole:
        minutes and gigabytes, where the walk had cut it)."""
        page = capped_page(html, http_charset)
        try:
            text = self._run(page)
        except Exception as exc:  # noqa: BLE001 - an adapter must survive any page
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:300]
            return ""
        return text or ""


def _require(name: str) -> None:
    if importlib.util.find_spec(PACKAGES[name]) is None:
        raise ExtractorError(
            f"method {name!r} needs the package {PACKAGES[name]!r}: "
            "pip install 'hwnoise[extractors]'")


def make_trafilatura(**options: Any) -> ExternalMethod:
    """trafilatura.extract with its defaults (options are passed through)."""
    _require("trafilatura")
    return ExternalMethod("trafilatura", partial(_run_trafilatura, options), "trafilatura")


# The adapters' run functions live at module level so that a method pickles (evaluate's
# process pool sends the methods to its workers).
def _run_trafilatura(options: dict, html: str) -> str | None:
    import trafilatura

    return trafilatura.extract(html, **options)


def _run_readability(options: dict, html: str) -> str:
    from readability import Document

    return html_to_text(Document(html, **options).summary(html_partial=True))


def _run_justext(stoplist, options: dict, html: str) -> str:
    import justext

    paragraphs = justext.justext(html, stoplist, **options)
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def _run_resiliparse(options: dict, html: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    return extract_plain_text(html, **options)


def make_readability(**options: Any) -> ExternalMethod:
    """readability-lxml's Document.summary(), as plain text."""
    _require("readability")
    import logging

    logging.getLogger("readability.readability").setLevel(logging.CRITICAL)  # failures are counted
    return ExternalMethod("readability", partial(_run_readability, options), "readability-lxml")


def make_justext(language: str = "English", **options: Any) -> ExternalMethod:
    """jusText's non-boilerplate paragraphs, one a line."""
    _require("justext")
    import justext

    stoplist = justext.get_stoplist(language)
    return ExternalMethod("justext", partial(_run_justext, stoplist, options), "jusText")


def make_resiliparse(**options: Any) -> ExternalMethod:
    """resiliparse's extract_plain_text with main_content=True."""
    _require("resiliparse")
    opts = {"main_content": True, **options}
    return ExternalMethod("resiliparse", partial(_run_resiliparse, opts), "resiliparse")


class AllText(WalkMethod):
    """Every visible word of the page: all of the walk's nodes labelled content."""

    name = "alltext"
    needs_training = False

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        return np.full(len(walk.rows), CONTENT, dtype=object)

    def extract_html(self, html: bytes | str, *, http_charset: str | None = None) -> str:
        from hwnoise.features.walk import walk_page

        walk = walk_page(html, (), http_charset=http_charset)
        return "\n".join(text for _, text in walk.segments if text)


def make_alltext(**options: Any) -> AllText:
    if options:
        raise TypeError(f"alltext takes no options (got {', '.join(options)})")
    return AllText()
