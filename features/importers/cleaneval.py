"""CleanEval 2007 (English dev set + a sample of the final set): one dataset.

Each input is the crawled page wrapped in ``<text id="URL" ... encoding="...">``; the bytes
are kept as they are. Gold is the gold file without its leading ``URL:`` line and without the
``<p>``, ``<h>``, ``<l>`` block markers (matched case-insensitively; every other ``<...>``,
``</p>`` and ``<br>`` included, is left as page text, as DESIGN.md says); each marker starts
a block, and blocks are kept apart on lines of their own. UTF-8 (BOM dropped) else cp1252.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import site_of
from hwnoise.features.importers import ImportFormatError, SourcePage, decode_text, file_head, inside
from hwnoise.text import collapse_space

_SETS = (  # folder, input folder, gold name pattern
    ("cleaneval-dev", "input", "{n}-cleaned.txt"),
    ("cleaneval-final", "finalrun-input", "{n}.txt"),
)
_MARKER_RE = re.compile(r"<\s*[phl]\s*>", re.I)
_HEADER_RE = re.compile(rb"""<text\b([^>]*)>""", re.I)
_ATTR_RE = re.compile(rb"""([\w-]+)\s*=\s*"([^"]*)\"""")


def gold_text(raw: bytes) -> str:
    """CleanEval gold as plain text: URL line and block markers removed, one block a line."""
    text = decode_text(raw)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            if line.lstrip().startswith("URL:"):
                del lines[i]
            break
    blocks = (collapse_space(b) for b in _MARKER_RE.split("\n".join(lines)))
    return "\n".join(b for b in blocks if b)


def header(data: bytes) -> dict[str, str]:
    """The attributes of the CleanEval ``<text ...>`` wrapper (id = URL, title, encoding)."""
    m = _HEADER_RE.search(data[:4096])
    if not m:
        return {}
    return {k.decode().lower(): v.decode("utf-8", errors="replace") for k, v in _ATTR_RE.findall(m.group(1))}


def pages(src: Path) -> Iterator[SourcePage]:
    found = False
    for folder, inputs, gold_pattern in _SETS:
        in_dir = src / folder / inputs
        if not in_dir.is_dir():
            continue
        found = True
        files = sorted(in_dir.glob("*.html"), key=lambda p: (int(p.stem) if p.stem.isdigit() else 10**9, p.stem))
        for path in files:
            gold_path = inside(src / folder / "GoldStandard" / gold_pattern.format(n=path.stem), src)
            inside(path, src)
            head = header(file_head(path, 4096))
            url = head.get("id", "").strip()
            yield SourcePage(
                unit="cleaneval",
                source=f"{folder}/{inputs}/{path.name}",
                url=url if url.startswith(("http://", "https://")) else "",
                site=site_of(url) or f"cleaneval-{path.stem}",
                read_html=path.read_bytes,
                read_gold=(lambda g=gold_path: gold_text(g.read_bytes()) if g.is_file() else None),
                gold_source=f"{folder}/GoldStandard/{gold_path.name}",
                extra={"set": folder.split("-")[1], "number": path.stem,
                       "crawler_encoding": head.get("encoding", "")},
                unit_meta={"notes": "CleanEval 2007 English: dev set and a sample of the final set; "
                                    "gold without URL line and <p>/<h>/<l> markers; pages keep the "
                                    "<text id=URL> wrapper"},
            )
    if not found:
        raise ImportFormatError(f"{src}: no cleaneval-dev/input or cleaneval-final/finalrun-input folder")


def gold_files(src: Path) -> list[str]:
    """Every gold file of the source, relative to ``src`` (to find those that name no page)."""
    return [f"{folder}/GoldStandard/{g.name}" for folder, _inputs, _pattern in _SETS
            for g in sorted((src / folder / "GoldStandard").glob("*.txt"))]
