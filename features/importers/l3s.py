"""L3S-GN1 (Kohlschütter et al. 2010), sample: one dataset.

The page is ``original/UUID.html``; the gold is read from ``annotated/UUID.html``, the same
page re-serialised by the annotation tool with label spans (``x-nc-sel0`` ... ``sel5``). Each
text node takes the label of its innermost labelled span (so nested spans count their text
once, and a ``sel0`` span inside a ``sel2`` span is not content). Gold is the text under
``x-nc-sel1`` (headline) and ``x-nc-sel2`` (full text), one block per innermost span, blocks
kept apart on lines of their own. URLs come from ``url-mapping.txt``. Files are UTF-8 or ASCII
whatever their ``<meta>`` says, so the submission records ``charset: utf-8``; an annotated page
saved again as UTF-16 (an editor's "Unicode") is read by ``decode_text``.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import lxml.html
import numpy as np
from lxml import etree

from hwnoise.dataset import site_of
from hwnoise.features.importers import ImportFormatError, SourcePage, decode_text, inside
from hwnoise.text import collapse_space, tokenize

#: The labels whose text is gold: 1 headline, 2 full text.
CONTENT_LABELS = (1, 2)
_SEL_RE = re.compile(r"^x-nc-sel(\d)$")
_SKIP = {"head", "script", "style", "noscript", "template", "title"}
_FOLDER = "L3S-GN1-20100130203947-00001"


def _label_of(el) -> int | None:
    for cls in (el.get("class") or "").split():
        m = _SEL_RE.match(cls)
        if m:
            return int(m.group(1))
    return None


def labelled_chunks(annotated: bytes) -> list[tuple[int, int, str]]:
    """``(span, label, text)`` for every text node shown in an annotated page, in document order.

    ``label`` is the number of the innermost ``x-nc-selN`` span around the text (-1 outside
    every span), ``span`` an ordinal of that span (-1 outside). One iterative pass (no
    recursion limit); script, style and the head are left out. The page is decoded as a text
    file (``decode_text``): UTF-8 as the tool wrote it, or UTF-16 where a copy was saved so.
    """
    parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True, remove_comments=False)
    try:
        root = lxml.html.document_fromstring(decode_text(annotated).encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError):
        return []
    stack: list[tuple[int, int]] = [(-1, -1)]
    chunks: list[tuple[int, int, str]] = []
    skip = 0
    spans = 0
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag
        if not isinstance(tag, str):  # comment or processing instruction: only its tail shows
            if event == "end" and not skip and el.tail:
                chunks.append((stack[-1][1], stack[-1][0], el.tail))
            continue
        if event == "start":
            if skip or tag.lower() in _SKIP:
                skip += 1
                continue
            label = _label_of(el)
            if label is None:
                stack.append(stack[-1])
            else:
                spans += 1
                stack.append((label, spans))
            if el.text:
                chunks.append((stack[-1][1], stack[-1][0], el.text))
        else:
            if skip:
                skip -= 1
                if not skip and el.tail:
                    chunks.append((stack[-1][1], stack[-1][0], el.tail))
                continue
            stack.pop()
            if el.tail:
                chunks.append((stack[-1][1], stack[-1][0], el.tail))
    return chunks


def gold_blocks(annotated: bytes, labels: tuple[int, ...] = CONTENT_LABELS) -> list[str]:
    """The text of the innermost spans with one of ``labels``, one block per span."""
    blocks: list[str] = []
    last = None
    for span, label, text in labelled_chunks(annotated):
        if label not in labels:
            last = None
            continue
        if span == last:
            blocks[-1] += " " + text
        else:
            blocks.append(text)
            last = span
    return [b for b in (collapse_space(b) for b in blocks) if b]


def gold_text(annotated: bytes) -> str:
    """L3S-GN1 gold: headline and full-text blocks, one a line."""
    return "\n".join(gold_blocks(annotated))


def read_gold(annotated: Path) -> str | None:
    """The gold text of ``annotated/UUID.html`` (None when absent). Every annotated page the
    tool wrote ends with ``</html>``: one that does not is cut short (a copy broken off, or
    empty), and would give silently less gold or none; it is refused naming the file."""
    if not annotated.is_file():
        return None
    data = annotated.read_bytes()
    if not decode_text(data).rstrip().lower().endswith("</html>"):
        raise ImportFormatError(f"{annotated}: does not end with </html> as every annotated page does; "
                                "the copy is cut short? Restore it")
    return gold_text(data)


def labelled_words(annotated: bytes) -> tuple[list[str], np.ndarray]:
    """The annotated page's words (the one tokeniser) and, per word, whether it is content
    (inside an ``x-nc-sel1``/``x-nc-sel2`` span)."""
    words: list[str] = []
    flags: list[bool] = []
    for _span, label, text in labelled_chunks(annotated):
        toks = tokenize(text)
        words.extend(toks)
        flags.extend([label in CONTENT_LABELS] * len(toks))
    return words, np.array(flags, dtype=bool)


def url_mapping(folder: Path) -> dict[str, str] | None:
    """UUID -> URL from ``url-mapping.txt`` (None when the file is absent).

    A page's ID is made from its URL, so a URL cut short or missing would import the page under
    another ID (and a rerun once mended would add it again): a last line without its line end
    and a UUID given twice are refused naming the line.
    """
    path = folder / "url-mapping.txt"
    if not path.is_file():
        return None
    lines = decode_text(path.read_bytes()).split("\n")
    if lines[-1].strip():
        raise ImportFormatError(f"{path}:{len(lines)}: the last line has no line end: the file is cut "
                                "short? Restore it (or end the line, if it is whole)")
    out: dict[str, str] = {}
    first: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        key, sep, url = line.partition("\t")
        if not sep:
            raise ImportFormatError(f"{path}:{n}: expected '<urn:uuid:UUID>\\tURL'")
        uuid = key.strip().removeprefix("<urn:uuid:").removesuffix(">")
        if uuid in first:
            raise ImportFormatError(f"{path}:{n}: {uuid} again (first on line {first[uuid]}); one URL a page")
        first[uuid] = n
        out[uuid] = url.strip()
    return out


def find_folder(src: Path) -> Path:
    """The folder holding ``original/`` and ``annotated/`` (SRC itself or its L3S-GN1 child)."""
    for cand in (src, src / _FOLDER, *sorted(src.glob("L3S-GN1-*"))):
        if (cand / "original").is_dir() and (cand / "annotated").is_dir():
            return cand
    raise ImportFormatError(f"{src}: no original/ and annotated/ folders (L3S-GN1 layout)")


def _prefix(folder: Path, src: Path) -> str:
    """``folder`` relative to ``src`` as the start of a source path ("" for SRC itself)."""
    prefix = folder.relative_to(src).as_posix()
    return "" if prefix == "." else prefix + "/"


def gold_files(src: Path) -> list[str]:
    """Every annotated page of the source, relative to ``src`` (to find those that name no page)."""
    folder = find_folder(src)
    return [f"{_prefix(folder, src)}annotated/{a.name}" for a in sorted((folder / "annotated").glob("*.html"))]


def pages(src: Path) -> Iterator[SourcePage]:
    folder = find_folder(src)
    prefix = _prefix(folder, src)
    inside(folder / "url-mapping.txt", src)
    urls = url_mapping(folder)
    for path in sorted((folder / "original").glob("*.html")):
        uuid = path.stem
        inside(path, src)
        annotated = inside(folder / "annotated" / path.name, src)
        if urls is not None and not urls.get(uuid):
            raise ImportFormatError(f"{folder / 'url-mapping.txt'}: no URL for {uuid} ({prefix}original/{path.name}); "
                                    "the file lists every page: restore it")
        url = (urls or {}).get(uuid, "")
        yield SourcePage(
            unit="l3s",
            source=f"{prefix}original/{path.name}",
            url=url,
            site=site_of(url) or f"l3s-{uuid}",
            read_html=path.read_bytes,
            read_gold=(lambda a=annotated: read_gold(a)),
            gold_source=f"{prefix}annotated/{path.name}",
            extra={"uuid": uuid, "annotated": f"{prefix}annotated/{path.name}", "charset": "utf-8"},
            unit_meta={"notes": "L3S-GN1 sample; gold is the text of x-nc-sel1 (headline) and "
                                "x-nc-sel2 (full text) spans of annotated/, innermost label winning"},
        )
