"""Dragnet (Moz 2012), sample of the test split: one dataset.

Gold is the text before the comments line. The delimiter is typed many ways upstream; a line
is the delimiter when it starts with ``!@`` and contains ``COMMENTS`` (DESIGN.md), or when it
contains ``%^&`` and ends with ``COMMENTS`` (the README's robust rule). UTF-8 else cp1252.
The site is the domain of the page's ``<link rel=canonical>``/``og:url`` where it has one.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import site_of
from hwnoise.features.importers import (ImportFormatError, SourcePage, canonical_url, decode_text, file_head,
                                       inside)

_DELIM_RE = re.compile(r"^(?:!@.*COMMENTS.*|.*%\^&.*COMMENTS)\s*$", re.M)


def split_gold(raw: bytes) -> tuple[str, str | None]:
    """(main text, comments or None) of a Dragnet gold file."""
    text = decode_text(raw)
    m = _DELIM_RE.search(text)
    if not m:
        return text.strip("\n"), None
    return text[:m.start()].rstrip(), text[m.end():].strip("\n")


def pages(src: Path) -> Iterator[SourcePage]:
    html_dir = src / "HTML"
    if not html_dir.is_dir():
        raise ImportFormatError(f"{html_dir}: missing; a dragnet folder has HTML/ and Corrected/")
    for path in sorted(html_dir.glob("*.html")):
        gold_path = inside(src / "Corrected" / f"{path.name}.corrected.txt", src)
        url = canonical_url(file_head(inside(path, src)))
        yield SourcePage(
            unit="dragnet",
            source=f"HTML/{path.name}",
            url=url,
            site=site_of(url) or f"dragnet-{path.stem}",
            read_html=path.read_bytes,
            read_gold=(lambda g=gold_path: split_gold(g.read_bytes())[0] if g.is_file() else None),
            gold_source=f"Corrected/{gold_path.name}",
            extra={"root": path.stem},
            unit_meta={"notes": "Dragnet (Moz 2012) test-split sample; gold is the text before the "
                                "comments delimiter; site from rel=canonical/og:url where given"},
        )


def gold_files(src: Path) -> list[str]:
    """Every gold file of the source, relative to ``src`` (to find those that name no page)."""
    return [f"Corrected/{g.name}" for g in sorted((src / "Corrected").glob("*.txt"))]
