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

import json
from collections.abc import Iterator
from pathlib import Path

from hwnoise.features.importers import ImportFormatError, SourcePage
from hwnoise.progress import info

NOTES = ("NEXT-EVAL (arXiv 2505.17125) listing pages; gold records as XPaths in records/ID.json "
         "(node gold: each record element and its subtree is content); gold text = the records' "
         "text in document order, one record a block; every page is its own site")


def _page_key(path: Path):
    return (0, int(path.stem)) if path.stem.isdigit() else (1, path.stem)


class _Gold:
    """One page's gold, read and resolved once (for the gold text and the counts)."""

    def __init__(self, html: Path, truth: Path, extra: dict, totals: dict):
        self.html, self.truth, self.extra, self.totals = html, truth, extra, totals
        self.records: list[list[str]] | None = None

    def read_records(self) -> list[list[str]]:
        if self.records is None:
            from hwnoise.dataset import DatasetError, check_records

            try:
                obj = json.loads(self.truth.read_text(encoding="utf-8-sig"))
                self.records = check_records(obj, str(self.truth))
            except json.JSONDecodeError as exc:
                raise ImportFormatError(f"{self.truth}:{exc.lineno}: not valid JSON: {exc.msg}") from None
            except DatasetError as exc:
                raise ImportFormatError(str(exc)) from None
        return self.records

    def read_gold(self) -> str:
        from hwnoise.features.record_gold import record_text, resolve_records
        from hwnoise.features.walk import walk_page

        data = self.html.read_bytes()
        records = self.read_records()
        walk = walk_page(data)
        gold = resolve_records(data, records, n_rows=len(walk.rows))
        self.extra.update(records=gold.records, xpaths=gold.xpaths, unresolved=gold.unresolved,
                          hidden=gold.hidden)
        for k in ("records", "xpaths", "unresolved", "hidden"):
            self.totals[k] += self.extra[k]
        self.totals["pages"] += 1
        if gold.unresolved:
            info(f"nexteval: {self.truth.name}: {gold.unresolved} of {gold.xpaths} record XPaths "
                 f"name no shown element of html/{self.html.name} ({gold.hidden} hidden by the "
                 f"page's style); those records are left out of the node gold")
        return record_text(walk, gold)


def pages(src: Path) -> Iterator[SourcePage]:
    html_dir, truth_dir = src / "html", src / "groundTruth"
    if not html_dir.is_dir() or not truth_dir.is_dir():
        raise ImportFormatError(f"{src}: expected html/N.html and groundTruth/N.json (NEXT-EVAL layout)")
    files = sorted((p for p in html_dir.glob("*.html") if p.is_file()), key=_page_key)
    if not files:
        raise ImportFormatError(f"{html_dir}: no N.html pages")
    totals = {"pages": 0, "records": 0, "xpaths": 0, "unresolved": 0, "hidden": 0}
    for path in files:
        truth = truth_dir / f"{path.stem}.json"
        if not truth.is_file():
            raise ImportFormatError(f"{truth}: missing; every html/N.html needs groundTruth/N.json")
        extra = {"name": path.stem}
        gold = _Gold(path, truth, extra, totals)
        yield SourcePage(
            unit="nexteval",
            source=f"html/{path.name}",
            url="",
            site=f"nexteval-{path.stem}",
            read_html=path.read_bytes,
            read_gold=gold.read_gold,
            read_records=gold.read_records,
            extra=extra,
            unit_meta={"notes": NOTES},
        )
    if totals["xpaths"]:
        info(f"nexteval: {totals['pages']} pages, {totals['records']} records, "
             f"{totals['unresolved']} of {totals['xpaths']} XPaths unresolved "
             f"({totals['unresolved'] / totals['xpaths']:.1%}; {totals['hidden']} name hidden elements)")
