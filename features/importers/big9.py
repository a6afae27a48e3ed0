"""big9 (Utomo & Leu): 9 news sites x 4 years; one dataset per site-year.

``pages.tsv`` gives each page's site, year, query and (for about half) its URL. The query
is the keyword at the start of the file name; it is recorded as the search-form submission
that found the page: ``fields=[{name: "q", value: KEYWORD, label: "Search"}]``. Gold is the
gold file, UTF-8 else cp1252 (README: most are cp1252, ``pope.txt`` is UTF-8). A gold file no
row names is reported (``gold_orphans``): in the dataset of the page of its name (``X.htm`` beside
``X.txt``), else for the import as a whole.
"""
from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import is_within
from hwnoise.features.importers import ImportFormatError, SourcePage, decode_text

_COLUMNS = {"folder", "html_file", "gold_file", "site", "year", "query", "url"}


def unit_name(site: str, year: str) -> str:
    """The dataset name of a site-year, e.g. ``big9-yahoonews-2005``."""
    slug = "".join(ch for ch in site.lower() if ch.isalnum())
    return f"big9-{slug}-{year}"


def pages(src: Path) -> Iterator[SourcePage]:
    tsv = src / "pages.tsv"
    if not tsv.is_file():
        raise ImportFormatError(f"{tsv}: missing; a big9 folder has pages.tsv beside big5-05 ... big5-17")
    try:
        with open(tsv, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t")
            missing = _COLUMNS - set(reader.fieldnames or [])
            if missing:
                raise ImportFormatError(f"{tsv}:1: missing columns {', '.join(sorted(missing))}")
            rows = list(reader)
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{tsv}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                "save it as UTF-8") from None
    for line, row in enumerate(rows, 2):
        short = sorted(c for c in _COLUMNS if row.get(c) is None)
        if short:  # a row cut short (a truncated file): DictReader leaves its last columns None
            raise ImportFormatError(f"{tsv}:{line}: no {', '.join(short)} (the row is cut short); "
                                    "give every column, tab-separated")
        if not row["year"].strip().isdigit():
            raise ImportFormatError(f"{tsv}:{line}: year {row['year'][:40]!r} is not a year")
        for key in ("html", "gold"):  # a "../" or an absolute path would read files outside SRC
            name = row[f"{key}_file"]
            if name and not is_within(src / row["folder"] / key / name, src):
                raise ImportFormatError(f"{tsv}:{line}: {row['folder'][:80]}/{key}/{name[:80]} leads out of "
                                        f"{src}; refused")
    rows.sort(key=lambda r: (r["site"], r["year"], r["folder"], r["html_file"]))
    for line, row in enumerate(rows, 2):
        html_path = src / row["folder"] / "html" / row["html_file"]
        gold_path = src / row["folder"] / "gold" / row["gold_file"] if row["gold_file"] else None
        query = row["query"].strip()
        if not query:
            raise ImportFormatError(f"{tsv}: row for {row['html_file']!r} has no query")
        yield SourcePage(
            unit=unit_name(row["site"], row["year"]),
            source=f"{row['folder']}/html/{row['html_file']}",
            url=row["url"].strip(),
            site=row["site"],
            read_html=html_path.read_bytes,
            read_gold=(lambda p=gold_path: decode_text(p.read_bytes()) if p and p.is_file() else None),
            gold_source=f"{row['folder']}/gold/{row['gold_file']}" if gold_path else None,
            fields=[{"name": "q", "value": query, "label": "Search"}],
            extra={"year": int(row["year"]), "query": query,
                   "wayback_ts": row.get("wayback_ts", ""), "site_rule": row.get("site_rule", "")},
            unit_meta={"notes": f"big9 {row['site']} {row['year']}: each page's query is the keyword "
                                "of its file name, recorded as a search-form submission (field q)",
                       "site": row["site"], "year": int(row["year"])},
        )


def gold_files(src: Path) -> list[str]:
    """Every gold file of the source (``FOLDER/gold/*.txt``), relative to ``src``: to find those
    that no pages.tsv row names."""
    return [g.relative_to(src).as_posix() for g in sorted(src.glob("*/gold/*.txt"))]
