"""A plain folder of pages: ``SRC/html/NAME.html`` (or ``.htm``) with ``SRC/gold/NAME.txt``.

One dataset named after SRC. Gold is ``gold/NAME.txt`` (UTF-8, else cp1252); a page without
one has no gold, and a gold file without a page is reported as an error. An optional
``records/NAME.json`` (a JSON list of records, each a list of XPaths ``/body[1]/div[3]/...``,
``features.record_gold``) gives node gold directly: it is copied and ``features`` labels from it. The site is the
page's canonical domain where it gives one, else SRC's name.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import site_of
from hwnoise.features.importers import ImportFormatError, SourcePage, canonical_url, decode_text


def pages(src: Path) -> Iterator[SourcePage]:
    html_dir, gold_dir = src / "html", src / "gold"
    if not html_dir.is_dir():
        raise ImportFormatError(f"{html_dir}: missing; a plain folder has html/NAME.html and gold/NAME.txt")
    files = sorted(p for p in html_dir.iterdir() if p.is_file() and p.suffix.lower() in (".html", ".htm"))
    stems = {p.stem for p in files}
    if gold_dir.is_dir():
        orphans = sorted(g.name for g in gold_dir.glob("*.txt") if g.stem not in stems)
        if orphans:
            raise ImportFormatError(f"{gold_dir / orphans[0]}: gold file without a page html/{orphans[0][:-4]}.html"
                                    + (f" (and {len(orphans) - 1} more)" if len(orphans) > 1 else ""))
    name = src.resolve().name or "plain"
    for path in files:
        gold = gold_dir / f"{path.stem}.txt"
        records = src / "records" / f"{path.stem}.json"
        url = canonical_url(path.read_bytes())
        yield SourcePage(
            unit=name,
            source=f"html/{path.name}",
            url=url,
            site=site_of(url) or name,
            read_html=path.read_bytes,
            read_gold=(lambda g=gold: decode_text(g.read_bytes()) if g.is_file() else None),
            read_records=(lambda r=records: _records(r)),
            extra={"name": path.stem},
            unit_meta={"notes": "plain folder: html/NAME.html with gold/NAME.txt"},
        )


def _records(path: Path) -> list | None:
    from hwnoise.dataset import DatasetError
    from hwnoise.features.record_gold import read_records

    try:
        return read_records(path)
    except DatasetError as exc:
        raise ImportFormatError(str(exc)) from None
