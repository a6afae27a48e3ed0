"""Mozilla Readability's test pages: one dataset.

Gold is the text of ``expected.html`` (Readability.js's own output, not a human's), with block
elements kept apart on lines of their own. Every file is UTF-8 whatever its ``<meta>`` says
(``qq`` declares gb2312), so submissions record ``charset: utf-8``. The pages have no URL
(upstream uses http://fakehost/test/page.html for all); the site is the page's canonical
domain where it gives one, else its test name without a trailing ``-N`` (nytimes-1 -> nytimes).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import lxml.html
from lxml import etree

from hwnoise.dataset import site_of
from hwnoise.features.importers import ImportFormatError, SourcePage, canonical_url, file_head, inside
from hwnoise.text import collapse_space

#: Elements that start a new line of text.
BLOCKS = frozenset(
    "address article aside blockquote body br dd details dialog div dl dt fieldset figcaption "
    "figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre section summary "
    "table tbody td tfoot th thead tr ul caption".split())
_SPACE_RE = re.compile(r"\s+")
_SKIP = frozenset({"script", "style", "noscript", "template", "head", "title"})


def block_text(html: bytes) -> str:
    """The text an HTML fragment shows, one line per block element (iterative, no recursion)."""
    if not html.strip():
        return ""
    parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True)
    try:
        root = lxml.html.fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return ""
    parts: list[str] = []  # "\n" marks a block edge; text pieces have no newline of their own
    skip = 0
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag.lower() if isinstance(el.tag, str) else None
        if event == "start":
            if tag is None:
                continue
            if skip or tag in _SKIP:
                skip += 1
                continue
            if tag in BLOCKS:
                parts.append("\n")
            if el.text:
                parts.append(_SPACE_RE.sub(" ", el.text))
        else:
            if tag is None:
                if not skip and el.tail:
                    parts.append(_SPACE_RE.sub(" ", el.tail))
                continue
            if skip:
                skip -= 1
                if not skip and el.tail:
                    parts.append(_SPACE_RE.sub(" ", el.tail))
                continue
            if tag in BLOCKS:
                parts.append("\n")
            if el.tail and el is not root:
                parts.append(_SPACE_RE.sub(" ", el.tail))
    lines = (collapse_space(line) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def site_from_name(name: str) -> str:
    return re.sub(r"-\d+$", "", name)


def _base(src: Path) -> tuple[Path, str]:
    """The folder of the test pages, and it relative to ``src`` as the start of a source path."""
    base = next((c for c in (src / "test" / "test-pages", src / "test-pages", src) if c.is_dir()
                 and any(c.glob("*/source.html"))), None)
    if base is None:
        raise ImportFormatError(f"{src}: no test/test-pages/<name>/source.html (Readability layout)")
    prefix = base.relative_to(src).as_posix()
    return base, "" if prefix == "." else prefix + "/"


def gold_files(src: Path) -> list[str]:
    """Every expected.html of the source, relative to ``src`` (to find those that name no page)."""
    base, prefix = _base(src)
    return [f"{prefix}{e.parent.name}/expected.html" for e in sorted(base.glob("*/expected.html"))]


def pages(src: Path) -> Iterator[SourcePage]:
    base, prefix = _base(src)
    for folder in sorted(p.parent for p in base.glob("*/source.html")):
        source = inside(folder / "source.html", src)
        expected = inside(folder / "expected.html", src)
        url = canonical_url(file_head(source))
        yield SourcePage(
            unit="readability",
            source=f"{prefix}{folder.name}/source.html",
            url=url,
            site=site_of(url) or site_from_name(folder.name),
            read_html=source.read_bytes,
            read_gold=(lambda e=expected: block_text(e.read_bytes()) if e.is_file() else None),
            gold_source=f"{prefix}{folder.name}/expected.html",
            extra={"name": folder.name, "charset": "utf-8"},
            unit_meta={"notes": "Mozilla Readability test pages; gold is the text of expected.html "
                                "(Readability.js's output, not a human's), blocks kept apart"},
        )
