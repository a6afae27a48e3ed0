"""A plain folder of pages: ``SRC/html/NAME.html`` (``.htm``, ``.xhtml``, each also ``.gz``;
``hwnoise.pagefiles``) with ``SRC/gold/NAME.txt``.

One dataset named after SRC. Gold is ``gold/NAME.txt`` (UTF-16 or UTF-32 by its byte-order
mark, else UTF-8, else cp1252: ``decode_text``); a page without one has no gold, and a gold file
without a page is reported as an error. An optional
``records/NAME.json`` (a JSON list of records, each a list of XPaths ``/body[1]/div[3]/...``,
``features.record_gold``) gives node gold directly: it is copied and ``features`` labels from it;
without ``gold/NAME.txt`` the records' text is the gold text, as for NEXT-EVAL, and XPaths that
name no shown element are counted in the submission and reported. The site is the
page's canonical domain where it gives one, else SRC's name. A page, gold, records or query file
that is a symlink leading out of SRC is not read (a folder someone hands over must not copy
``~/.ssh`` into a dataset): it is skipped with a message. An optional ``query/NAME.txt``
holds the search terms that found ``html/NAME.html``: they become the page's ``q`` field, so
that the domain query (``query.json``) and the page's own terms hold them (QueryScore, matches).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import is_within, site_of
from hwnoise.pagefiles import PageFileError, page_files, page_name, read_page_file, read_page_head
from hwnoise.progress import info
from hwnoise.text import tokenize
from hwnoise.features.importers import (CANONICAL_PREFIX, ImportFormatError, SourcePage, canonical_url, decode_text,
                                       read_records)


def pages(src: Path) -> Iterator[SourcePage]:
    html_dir, gold_dir = src / "html", src / "gold"
    if src.is_file():
        raise ImportFormatError(f"{src}: a file; a plain folder has html/NAME.html and gold/NAME.txt"
                                + (f" (for a WARC: 'hwnoise import warc {src}')" if src.name.endswith((".warc", ".warc.gz"))
                                   else ""))
    if not html_dir.is_dir():
        raise ImportFormatError(f"{html_dir}: missing; a plain folder has html/NAME.html and gold/NAME.txt"
                                + _what_it_is(src))
    files = page_files(html_dir)
    _say_subfolders(html_dir)
    outside = [p for p in files if not is_within(p, src)]
    if outside:
        info(f"hwnoise: import plain: skipped {len(outside)} page(s) that are symlinks out of {src} "
             f"(e.g. {outside[0]} -> {outside[0].resolve()}); copy them in to import them")
        files = [p for p in files if p not in outside]
    _check_names(src, files)
    _say_empty_queries(src)
    name = src.resolve().name or "plain"
    for path in files:
        stem = page_name(path)
        gold = gold_dir / f"{stem}.txt"
        records = src / "records" / f"{stem}.json"
        query_file = src / "query" / f"{stem}.txt"
        query = " ".join(decode_text(query_file.read_bytes()).split()) if _inside(query_file, src) else None
        try:
            url = canonical_url(read_page_head(path, CANONICAL_PREFIX))
        except PageFileError:  # said by read_html, when its turn comes: the pages before it are written
            url = ""
        yield SourcePage(
            unit=name,
            source=f"html/{path.name}",
            url=url,
            site=site_of(url) or name,
            read_html=(lambda p=path: read_page_file(p)),
            read_gold=(lambda g=gold: decode_text(g.read_bytes()) if _inside(g, src) else None),
            read_records=(lambda r=records: read_records(r) if _inside(r, src) else None),
            extra={"name": stem},
            query=query or None,
            unit_meta={"notes": "plain folder: html/NAME.html with gold/NAME.txt (and query/NAME.txt)"},
        )


def _what_it_is(src: Path) -> str:
    """What a SRC folder without ``html/`` holds, where it looks like something else: WARC files
    (``import warc`` reads them), or pages lying in SRC itself (they go in ``SRC/html/``)."""
    warcs = sorted(p.name for p in src.iterdir() if p.name.endswith((".warc", ".warc.gz")))
    if warcs:
        return f"; {src} holds WARC files ({warcs[0]}...): 'hwnoise import warc {src}' reads them"
    pages = page_files(src)
    if pages:
        return f"; {src} holds {len(pages)} page file(s) itself ({pages[0].name}...): move them into {src / 'html'}"
    return ""


def _say_subfolders(html_dir: Path) -> None:
    """Say which folders under ``html/`` hold page files, left out: plain reads ``html/NAME.html``
    only (a crawl saved as ``html/HOST/PATH/index.html`` has many pages of one name, which one
    ``gold/NAME.txt`` could not tell apart). They were left out without a word."""
    found: dict[Path, int] = {}
    for p in page_files(html_dir, recursive=True):
        if p.parent != html_dir:
            top = html_dir / p.relative_to(html_dir).parts[0]
            found[top] = found.get(top, 0) + 1
    if found:
        shown = ", ".join(f"{d.name}/ ({n})" for d, n in sorted(found.items())[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        info(f"hwnoise: import plain: {sum(found.values())} page file(s) in folders under {html_dir} not "
             f"read: {shown}{more}; plain reads html/NAME.html only: move them into {html_dir} (one name "
             "each) to import them")


def _check_names(src: Path, files: list[Path]) -> None:
    """Refuse two pages of one name (``a.html`` and ``a.htm``: one gold, query and records file
    would be both pages'), and a gold, query or records file that names no page (a typo that
    would leave its page without what it gives)."""
    stems: dict[str, Path] = {}
    for p in files:
        first = stems.setdefault(page_name(p), p)
        if first is not p:
            raise ImportFormatError(f"{p}: the same page name {page_name(p)!r} as {first.name}, so one gold, "
                                    "query and records file would be both pages'; rename one of them")
    for folder, ext, what in (("gold", ".txt", "gold file"), ("query", ".txt", "query file"),
                              ("records", ".json", "records file")):
        if (src / folder).is_dir():
            orphans = sorted(f.name for f in (src / folder).glob(f"*{ext}") if f.stem not in stems)
            if orphans:
                raise ImportFormatError(
                    f"{src / folder / orphans[0]}: {what} without a page html/{orphans[0][:-len(ext)]}.html"
                    + (f" (and {len(orphans) - 1} more)" if len(orphans) > 1 else ""))


def _say_empty_queries(src: Path) -> None:
    """Say which ``query/NAME.txt`` files hold no word (an empty placeholder, a save that failed):
    their pages were imported without a query of their own, without a word."""
    folder = src / "query"
    if not folder.is_dir():
        return
    empty = sorted(f.name for f in folder.glob("*.txt")
                   if f.is_file() and is_within(f, src) and not tokenize(decode_text(f.read_bytes())))
    if empty:
        shown = ", ".join(f"query/{n}" for n in empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
        info(f"hwnoise: import plain: {len(empty)} query file(s) hold no word: {shown}; their pages have no "
             "query of their own (write the search terms there, or give --query for them)")


def _inside(path: Path, src: Path) -> bool:
    """Whether ``path`` is a file to read: present, and not a symlink out of ``src`` (said once)."""
    if not path.is_file():
        return False
    if is_within(path, src):
        return True
    info(f"hwnoise: import plain: {path} is a symlink out of {src} ({path.resolve()}); not read")
    return False
