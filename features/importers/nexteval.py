"""NEXT-EVAL web data records (``SRC/html/N.html`` with ``SRC/groundTruth/N.json``).

One dataset, every page its own site (``nexteval-N``): the benchmark's pages come from
different sites, so cross-site folds are folds grouped by page. The gold is the page's data
records, each a list of browser-form XPaths; they are copied to ``records/ID.json`` so that
``hwnoise features`` labels nodes from them directly (``features.record_gold``: the element a
record XPath names and its subtree are content, all else noise). The gold text is the records'
text in document order, one record a block. XPaths that name no element the walker shows are
counted per page (in the submission: ``xpaths``, ``unresolved``, ``hidden``) and reported on
stderr, never guessed.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hwnoise.features.importers import ImportFormatError, SourcePage, inside, read_records

NOTES = ("NEXT-EVAL (arXiv 2505.17125) listing pages; gold records as XPaths in records/ID.json "
         "(node gold: each record element and its subtree is content); gold text = the records' "
         "text in document order, one record a block; every page is its own site")


def _page_key(path: Path):
    return (0, int(path.stem)) if path.stem.isdigit() else (1, path.stem)


def pages(src: Path) -> Iterator[SourcePage]:
    html_dir, truth_dir = src / "html", src / "groundTruth"
    if not html_dir.is_dir() or not truth_dir.is_dir():
        raise ImportFormatError(f"{src}: expected html/N.html and groundTruth/N.json (NEXT-EVAL layout)")
    files = sorted((p for p in html_dir.glob("*.html") if p.is_file()), key=_page_key)
    if not files:
        raise ImportFormatError(f"{html_dir}: no N.html pages")
    for path in files:
        inside(path, src)
        truth = inside(truth_dir / f"{path.stem}.json", src)
        if not truth.is_file():
            raise ImportFormatError(f"{truth}: missing; every html/N.html needs groundTruth/N.json")
        yield SourcePage(
            unit="nexteval",
            source=f"html/{path.name}",
            url="",
            site=f"nexteval-{path.stem}",
            read_html=path.read_bytes,
            read_gold=lambda: None,  # the writer makes it from the records
            read_records=(lambda t=truth: read_records(t)),
            gold_source=f"groundTruth/{truth.name}",
            extra={"name": path.stem},
            unit_meta={"notes": NOTES},
        )


def gold_files(src: Path) -> list[str]:
    """Every ground-truth file of the source, relative to ``src`` (to find those that name no page)."""
    return [f"groundTruth/{g.name}" for g in sorted((src / "groundTruth").glob("*.json"))]
