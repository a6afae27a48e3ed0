"""What every extraction method offers ``hwnoise evaluate``, and the one way labels become text.

A method is anything with ``name``, ``needs_training``, ``fit(pages)`` and ``extract(page)``;
methods that label the walker's nodes also offer ``node_labels(page, walk)`` so that the
report can score them at node level. The content text of labelled nodes is always made by
:func:`text_from_labels`, so a node labelled content in the gold yields exactly its own text
(label and extraction agree by construction).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from hwnoise.errors import HwnoiseError
from hwnoise.extractors.layout import content_lines, markdown, plain_text

if TYPE_CHECKING:  # pragma: no cover - names for type hints only
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk


class ExtractorError(HwnoiseError):
    """A method cannot be used (unknown name, missing optional package, unfitted model)."""


@runtime_checkable
class Method(Protocol):
    """The contract of docs/ARCHITECTURE.md: what ``hwnoise evaluate`` can run."""

    name: str
    needs_training: bool

    def fit(self, pages: Sequence["Page"]) -> "Method": ...

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str: ...


def option_flag(value: Any) -> bool:
    """A method's yes/no option as given (``--method-option nce.title=no``: "0", "false", "no",
    "off" and "" are False, any other text True) or as a Python value."""
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return bool(value)


def labels_nodes(method: Any) -> bool:
    """True when ``method`` labels walker nodes (and can be scored at node level)."""
    return callable(getattr(method, "node_labels", None))


def text_from_labels(walk: "PageWalk", labels: Sequence[str] | np.ndarray) -> str:
    """The own text of the content nodes, in document order, from ``walk.segments``.

    Each text node of the page is attributed to the element that directly holds it; a
    segment is kept when that element is labelled content. Kept segments are joined as a
    browser's ``innerText`` lays them out (``hwnoise.extractors.layout``): by a space within one
    block (a link or a ``<b>`` inside a paragraph), by a blank line around a paragraph, a newline
    around another block or at a ``<br>``, a tab between a row's cells. Either way no two words of
    different text nodes run together, so the words, and every text score, are the same as with
    one text node a line.
    """
    return plain_text(content_lines(walk, labels))


def markdown_from_labels(walk: "PageWalk", labels: Sequence[str] | np.ndarray) -> str:
    """``text_from_labels`` as Markdown: its lines with their blocks' headings, list items,
    quotes and tables (``hwnoise.extractors.layout.markdown``); the same words."""
    return markdown(content_lines(walk, labels))


def query_for(page: "Page") -> tuple[list[str], list[str]]:
    """The dataset's domain query terms and the page's own submission terms, as the features
    stage walks the page (``hwnoise.features.build``)."""
    try:
        terms = list(page.dataset.query_terms())
    except Exception:  # noqa: BLE001 - a page without a readable query is walked without one
        terms = []
    from hwnoise.features.build import own_terms

    return terms, own_terms(page.fields)


def as_walked(html: bytes | str, http_charset: str | None,
              walk: "PageWalk | None") -> tuple[bytes | str, str | None]:
    """``(html, http_charset)`` as ``walk`` read the page: a page nested too deep, flattened once by
    the walk (``PageWalk.flattened``), is read flattened by the methods too (resiliparse's time
    grows with the square of the depth: 300,000 unclosed ``<div>``s never ended); any other as it is."""
    if walk is not None and getattr(walk, "flattened", None) is not None:
        return walk.flattened, None
    return html, http_charset


def capped_page(html: bytes | str, http_charset: str | None = None) -> str:
    """The page as the walk reads it, for a method that reads the page's markup itself: decoded as
    a browser would (``hwnoise.decode``), then cut by the walk's own caps (``features.limits.cap_text``:
    32 MiB of text, cut at the last tag before it; long runs and attributes), the one place that
    hands methods a page, so that what a method reads is what the walk's nodes hold and its cost is
    bounded by the cap. The external extractors read their page through it, and NCE its title
    (read from the whole page, a title past the cap, in no node of the walk, was in its text)."""
    from hwnoise.decode import decode_html
    from hwnoise.features.limits import cap_text

    return cap_text(decode_html(html, http_charset)[0])


def walk_of(page: "Page", query_terms: Sequence[str] | None = None, *,
            keep_tree: bool = False) -> "PageWalk":
    """Walk ``page`` as the features stage does (dataset query, the page's own values); with
    ``keep_tree`` the walk keeps its lxml tree for methods that read the page's HTML."""
    from hwnoise.features.walk import walk_page

    terms, own = query_for(page)
    if query_terms is not None:
        terms = list(query_terms)
    return walk_page(page.read_html(), terms, http_charset=page.http_charset, own_terms=own,
                     keep_tree=keep_tree)


class PageMethod:
    """Base of methods that need no training and read one page at a time."""

    name = "page"
    needs_training = False

    def __init__(self) -> None:
        self.failures = 0
        self.last_error: str | None = None

    def fit(self, pages: Sequence["Page"]) -> "PageMethod":
        """Nothing to learn: page-level methods ignore the training pages."""
        return self

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str:
        """The method's text of ``page``; given the page's ``walk``, of the page as walked (``as_walked``)."""
        html, charset = as_walked(page.read_html(), page.http_charset, walk)
        return self.extract_html(html, http_charset=charset)

    def extract_html(self, html: bytes | str, *, http_charset: str | None = None) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class WalkMethod(PageMethod):
    """Base of methods that label the walker's nodes; their text is ``text_from_labels``."""

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        raise NotImplementedError

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str:
        walk = walk if walk is not None else walk_of(page)
        return text_from_labels(walk, self.node_labels(page, walk))


class RendersPages:
    """A method that reads what the browser shows: ``rendered(page)`` is the page's rows of
    render.parquet, or, with ``render_missing``, the page rendered here in one browser kept for
    the method's pages (``scripts`` and ``timeout`` as ``hwnoise render`` takes them), which
    ``close`` ends (evaluate closes it with each batch of pages)."""

    render_missing: bool = True
    scripts: bool = False
    timeout: float = 15.0
    _browser = None

    def rendered(self, page: "Page"):
        from hwnoise.features.render import Browser, page_render

        if self._browser is None and self.render_missing:
            self._browser = Browser(scripts=self.scripts, timeout=self.timeout)
        return page_render(page, browser=self._browser, render_missing=self.render_missing)

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None

