"""Importers of public datasets into hwnoise dataset folders (``hwnoise import FORMAT SRC``).

Each format has its own module with one function, ``pages(src) -> Iterator[SourcePage]``,
which reads the upstream layout as it is (see each dataset's README.md) and yields its pages
in a fixed order. ``import_dataset`` writes them: one dataset folder per natural unit (big9
one per site-year, swde one per site, wcxb one per page type, the others one), page bytes
copied as they are, gold text as DESIGN.md's table "What each importer takes as gold text"
says, one submission per page with its ``site``, and the domain query.

A page's ID is ``hwnoise.dataset.page_id`` of its submission (method, URL, fields). The URL is
the page's own URL where the source gives one, else a locator of the source file
(``source:FORMAT/RELPATH``), so re-importing writes the same IDs and duplicates nothing. When
two pages of one dataset share a URL (big9 and readability each have one such pair), the later one's
URL gets the source file as a fragment.
"""
from __future__ import annotations

import importlib
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from hwnoise.dataset import Dataset, is_within, now_iso, page_id, site_of
from hwnoise.decode import decode_text, sniff_html
from hwnoise.errors import HwnoiseError
from hwnoise.pagefiles import PageFileError
from hwnoise.progress import info
from hwnoise.text import tokenize

__all__ = ["FORMATS", "import_dataset", "ImportFormatError", "SourcePage", "decode_text",
           "source_url", "canonical_url", "file_head", "simple_query", "inside", "with_query"]

#: The formats ``hwnoise import`` reads, one module each.
FORMATS = ["big9", "cleaneval", "dragnet", "l3s", "readability", "wcxb", "swde", "plain", "nexteval"]


class ImportFormatError(HwnoiseError):
    """The source folder is missing, or one of its files does not have the expected format."""


@dataclass
class SourcePage:
    """One page as an importer module yields it.

    ``unit`` names the dataset folder it goes to; ``unit_meta`` (the same for every page of a
    unit) goes into that folder's ``dataset.json``; ``read_html`` and ``read_gold`` are called
    once, when the page is written, so that no more than one page is held in memory.
    """

    unit: str
    source: str                      # the source file, relative to SRC
    url: str
    site: str
    read_html: Callable[[], bytes]
    read_gold: Callable[[], str | None]
    fields: list[dict] = field(default_factory=list)
    method: str = "GET"
    extra: dict = field(default_factory=dict)       # more keys for the submission
    unit_meta: dict = field(default_factory=dict)   # notes and more keys for dataset.json
    read_records: Callable[[], list | None] | None = None  # gold records: lists of XPaths
    query: str | None = None         # the search terms that found the page (a "q" field)
    gold_source: str | None = None   # its gold file, relative to SRC, where the source gives one a page


# -- helpers shared by the format modules ---------------------------------------------------

def read_records(path: Path) -> list | None:
    """A source's gold records file (``records/NAME.json``, NEXT-EVAL's ``groundTruth/N.json``):
    ``hwnoise.dataset.read_records_file``, its errors as ImportFormatError; None when absent."""
    from hwnoise.dataset import DatasetError, read_records_file

    try:
        return read_records_file(path)
    except DatasetError as exc:
        raise ImportFormatError(str(exc)) from None


def inside(path: Path, src: Path) -> Path:
    """``path``, when it lies inside ``src`` with symlinks followed; else an ImportFormatError
    naming it: a page or gold file that is a symlink out of SRC (or under a symlinked folder)
    must not copy a file from elsewhere into a dataset. Called while the pages are listed, so
    that nothing is written before the refusal."""
    if not is_within(path, src):
        raise ImportFormatError(f"{path}: a symlink out of {src}; refused (copy the file into {src} "
                                "to import it)")
    return path


def source_url(fmt: str, relpath: str) -> str:
    """The stand-in URL of a page whose source gives none: a locator of its file, its name's
    bytes percent-encoded (a name that is not UTF-8, ``caf\xe9.html``, as ``caf%E9.html``)."""
    return f"source:{fmt}/{quote(relpath.encode('utf-8', 'surrogateescape'))}"


_TAG_RE = re.compile(rb"<(link|meta)\b([^>]*)>", re.I)
_ATTR_RE = re.compile(rb"""([\w:-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""")
#: How much of a page's start ``canonical_url`` looks at.
CANONICAL_PREFIX = 300_000


def file_head(path: Path, size: int = CANONICAL_PREFIX) -> bytes:
    """The first ``size`` bytes of a source file: what listing a page reads of it (its URL),
    so that a big corpus is not read whole twice (each page is read whole when written)."""
    with open(path, "rb") as fh:
        return fh.read(size)


def canonical_url(data: bytes, limit: int = CANONICAL_PREFIX) -> str:
    """The page's ``<link rel=canonical>`` or ``og:url`` (absolute http(s) only), or ""."""
    found = {}
    for m in _TAG_RE.finditer(data[:limit]):
        attrs = {k.lower(): v.strip(b"'\"") for k, v in _ATTR_RE.findall(m.group(2))}
        if m.group(1).lower() == b"link" and b"canonical" in attrs.get(b"rel", b"").lower():
            found.setdefault("canonical", attrs.get(b"href", b""))
        elif m.group(1).lower() == b"meta" and attrs.get(b"property", b"").lower() == b"og:url":
            found.setdefault("og", attrs.get(b"content", b""))
    for key in ("canonical", "og"):
        url = found.get(key, b"").decode("utf-8", errors="replace").strip()
        if url.lower().startswith(("http://", "https://")) and site_of(url):
            return url
    return ""


def simple_query(submissions: list[dict]) -> list[dict]:
    """The domain query from the submissions' fields: ``[{term, kind, submissions}]``.

    Field names give terms of kind ``name``, values of kind ``value``; words come from the one
    tokeniser; each (term, kind) appears once, listing the submissions that used it. Used when
    ``hwnoise.forms.query.write_domain_query`` is not available.
    """
    order: list[tuple[str, str]] = []
    subs: dict[tuple[str, str], list[str]] = {}
    for sub in submissions:
        for f in sub.get("fields") or []:
            for kind, text in (("name", f.get("name", "")), ("value", f.get("value", ""))):
                for term in tokenize(str(text or "")):
                    key = (term, kind)
                    if key not in subs:
                        subs[key] = []
                        order.append(key)
                    if sub["id"] not in subs[key]:
                        subs[key].append(sub["id"])
    return [{"term": t, "kind": k, "submissions": subs[(t, k)]} for t, k in order]


def _write_query(ds: Dataset) -> str:
    """Write the dataset's domain query; return which writer did it."""
    try:
        from hwnoise.forms.query import write_domain_query
    except ImportError:
        ds.write_query(simple_query(ds.submissions()))
        return "importers.simple_query"
    write_domain_query(ds)
    return "forms.query.write_domain_query"


# -- the writer --------------------------------------------------------------------------------

def _module(fmt: str):
    if fmt not in FORMATS:
        raise ImportFormatError(f"unknown import format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return importlib.import_module(f"{__name__}.{fmt}")


class _Unit:
    """A dataset folder being written, with the IDs and URLs this run gave out. The folder is
    created (or reopened) at the first page written: a unit whose every page is skipped leaves
    none, rather than a dataset without pages that the next stages refuse."""

    def __init__(self, name: str, path: Path, open_ds: Callable[[], Dataset]):
        self.name, self.path = name, path
        self._open_ds = open_ds
        self._ds: Dataset | None = None
        self.ids: set[str] = set()
        self.written = 0
        self.records = dict.fromkeys(RECORD_COUNTS, 0)  # over the pages with gold records
        self.record_pages = 0
        self.problems: dict[str, list[str]] = {kind: [] for kind in PROBLEMS}  # source files, per kind
        self.requeried: list[dict] = []  # pages imported before, with the query this run gives them

    @property
    def ds(self) -> Dataset:
        if self._ds is None:
            self._ds = self._open_ds()
        return self._ds

    @property
    def opened(self) -> bool:
        return self._ds is not None


#: What the submission of a page with gold records holds about them (``features.record_gold``).
RECORD_COUNTS = ("records", "xpaths", "unresolved", "hidden")

#: What an import leaves out or imports short of the source, by kind: each is said on stderr and
#: written into ``dataset.json`` (its count in ``counts``, its files in ``import_problems``), so
#: that a damaged copy of a dataset is never imported short without a word.
PROBLEMS = {
    "gold_missing": "page(s) imported without gold: their gold file is missing",
    "gold_orphans": "gold file(s) naming no page, not imported",
    "not_html": "page(s) skipped as not HTML",  # the features stage's rule: decode.sniff_html
    "unreadable": "page file(s) skipped as unreadable",  # pagefiles.PageFileError: gzip cut short...
}


def _unit_dir(into: Path, unit: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "", unit.replace(" ", "-")).lower()
    return into / (slug or "dataset")


def import_dataset(fmt: str, src: str | Path, into: str | Path, *, limit: int | None = None,
                   progress: bool = True, query: str | None = None) -> list[Path]:
    """Import the dataset at ``src`` (format ``fmt``) into dataset folders under ``into``.

    Returns the dataset folders written, in the order first written. ``limit`` stops after
    that many pages (in the source's order), for quick runs. Re-importing rewrites the same
    page IDs and adds no submission twice. ``query`` (search terms) is the query of every page
    imported that has none of its own: a field ``q`` in its submission, so that the domain
    query (``query.json``) and each page's own terms hold it; page IDs do not depend on it.
    """
    mod = _module(fmt)
    src = Path(src)
    if not src.exists():
        raise ImportFormatError(f"{src}: no such file or folder (the {fmt} dataset to import)")
    into = Path(into)
    if limit is not None and limit < 1:
        raise ImportFormatError(f"--limit must be at least 1, not {limit}")
    listed = _listed_pages(mod, src, limit=limit, query=query)
    orphans = _orphans(mod, src, listed) if limit is None else {}
    pages: Iterable[SourcePage] = listed
    if progress:
        from hwnoise.progress import progress as _progress

        pages = _progress(listed, desc=f"import {fmt}", total=len(listed), unit="page")
    units = _write_pages(fmt, src, into, pages, query)
    for name, unit in units.items():
        unit.problems["gold_orphans"] = orphans.pop(name, [])
    unplaced = sorted(g for files in orphans.values() for g in files)
    if unplaced:  # no page, nor a dataset folder, to go with: said for the import
        _say_problem(fmt, "gold_orphans", unplaced)
    return [path for path in map(_finish_unit, units.values()) if path is not None]


def _listed_pages(mod, src: Path, *, limit: int | None, query: str | None) -> list[SourcePage]:
    """The pages to import, listed first (lazy readers only) to give the progress bar its total;
    a ``query`` without a word is refused."""
    listed: Iterator[SourcePage] = mod.pages(src)
    if limit is not None:
        listed = islice(listed, limit)
    pages = list(listed)
    check_query(query)
    return pages


def check_query(query: str | None) -> None:
    """Refuse a ``--query`` without a word (it would give no term)."""
    if query is not None and not tokenize(query):
        raise ImportFormatError(f"--query {query!r} holds no word; give the search terms, e.g. --query \"oak chair\"")


def _orphans(mod, src: Path, pages: list[SourcePage]) -> dict[str | None, list[str]]:
    """The gold files of the source (``mod.gold_files``, for the formats whose gold is one file a
    page) that no page listed reads (a page lost from a damaged copy, or a misnamed file), by the
    unit they go with: the one unit of a one-dataset source, else the unit of the page of the same
    name beside them (big9: ``F/gold/X.txt`` and ``F/html/X.htm``), else None."""
    gold_files = getattr(mod, "gold_files", None)
    if gold_files is None:
        return {}
    read = {sp.gold_source for sp in pages}
    units = {sp.unit for sp in pages}
    namesakes = {_namesake(sp.source): sp.unit for sp in pages}
    found: dict[str | None, list[str]] = {}
    for gold in sorted(g for g in gold_files(src) if g not in read):
        unit = next(iter(units)) if len(units) == 1 else namesakes.get(_namesake(gold))
        found.setdefault(unit, []).append(gold)
    return found


def _namesake(relpath: str) -> tuple[str, str]:
    """What pairs a page file with its gold file where a source names them alike: the folder
    above their own (``html/``, ``gold/``) and the file's stem."""
    path = PurePosixPath(relpath)
    return str(path.parent.parent), path.stem


def _say_problem(name: str, kind: str, files: list[str]) -> None:
    """One line on stderr for what an import left out or short (``PROBLEMS``), naming the files."""
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    info(f"hwnoise: import {name}: {len(files)} {PROBLEMS[kind]}: {shown}")


def _write_pages(fmt: str, src: Path, into: Path, pages: Iterable[SourcePage],
                 query: str | None) -> dict[str, _Unit]:
    """Each page written into its unit's dataset folder (opened at its first page written), with
    ``query`` as its query when it has none of its own; the units in the order first written."""
    units: dict[str, _Unit] = {}
    for sp in pages:
        if query is not None and sp.query is None:
            sp.query = query
        unit = units.get(sp.unit)
        if unit is None:
            unit = units[sp.unit] = _open_unit(fmt, src, into, sp)
        _write_page(fmt, unit, sp)
    return units


def _open_unit(fmt: str, src: Path, into: Path, sp: SourcePage) -> _Unit:
    """The unit of ``sp``, its dataset folder created (or reopened) with the unit's metadata when
    its first page is written."""
    meta = dict(sp.unit_meta)
    notes = meta.pop("notes", "")
    path = _unit_dir(into, sp.unit)

    def open_ds() -> Dataset:
        _check_same_unit(path, sp.unit, fmt)
        ds = Dataset.create(path, name=sp.unit, source=str(src.resolve()), notes=notes, format=fmt, **meta)
        mark_unfinished(ds, shlex.join(["hwnoise", "import", fmt, str(src), "--into", str(into)]))
        return ds

    return _Unit(sp.unit, path, open_ds)


#: The key of ``dataset.json`` that says an import into the folder has not finished (yet).
UNFINISHED = "import_unfinished"


def mark_unfinished(ds: Dataset, rerun: str) -> None:
    """Mark ``ds`` as being imported until ``finish_unfinished``: an import stopped midway (Ctrl-C,
    kill, a full disk) leaves a folder of the pages so far that the next stages took for the whole
    dataset; ``hwnoise features`` warns of it, naming ``rerun``, the command that imports the rest."""
    ds.update_meta(**{UNFINISHED: {"started": now_iso(), "rerun": rerun}})


def finish_unfinished(ds: Dataset) -> None:
    """Clear ``mark_unfinished``'s mark (``dataset.json`` written by the caller's update_meta)."""
    ds.meta.pop(UNFINISHED, None)


def _check_same_unit(path: Path, unit: str, fmt: str) -> None:
    """Refuse to reopen a dataset folder that an import of another dataset wrote: two names that
    make one folder name (``Shop A`` and ``shop-a``, ``café`` and ``caf``) would share it, the
    second's pages written over the first's of the same IDs and its dataset.json renamed."""
    if not (path / "dataset.json").is_file():
        return
    meta = Dataset(path).meta
    had, had_fmt = meta.get("name"), meta.get("format")
    if (had is not None and had != unit) or (had_fmt is not None and had_fmt != fmt):
        raise ImportFormatError(
            f"{path}: holds the dataset {had!r} ({had_fmt or 'unknown'} import from "
            f"{meta.get('source') or 'an unknown source'}), not {unit!r} ({fmt}); both names make this "
            "folder's name: import into another --into folder, or rename the source folder")


def _finish_unit(unit: _Unit) -> Path | None:
    """One unit finished: its gold records' totals said, its domain query written, its counts
    put in ``dataset.json``; returns its folder (None when no page of it was written: what
    was skipped is said, and no folder is left holding only that report)."""
    if not unit.opened:
        for kind, files in unit.problems.items():
            if files:
                _say_problem(unit.name, kind, files)
        before = f"{unit.path} left as it was" if unit.path.exists() else "no dataset folder written"
        info(f"hwnoise: import {unit.name}: no page imported (each was skipped, as said above); {before}")
        return None
    ds = unit.ds
    if unit.record_pages:
        r = unit.records
        info(f"{ds.name}: {unit.record_pages} page(s) with gold records, {r['records']} records, "
             f"{r['unresolved']} of {r['xpaths']} XPaths unresolved "
             f"({r['unresolved'] / max(r['xpaths'], 1):.1%}; {r['hidden']} name hidden elements)")
    problems = {kind: files for kind, files in unit.problems.items() if files}
    for kind, files in problems.items():
        _say_problem(ds.name, kind, files)
    apply_requery(ds, unit.requeried)
    query_writer = _write_query(ds)
    gold = list((ds.path / "gold").glob("*.txt"))
    ds.meta.pop("import_problems", None)  # a rerun's own, or none
    finish_unfinished(ds)
    ds.update_meta(counts={
        "pages": sum(1 for _ in (ds.path / "pages").glob("*.html")),
        "gold": len(gold),
        "gold_empty": sum(1 for g in gold if g.stat().st_size == 0),
        "submissions": len(ds.submissions()),
        "imported_last_run": unit.written,
        **{kind: len(files) for kind, files in problems.items()},
    }, query_written_by=query_writer, **({"import_problems": problems} if problems else {}))
    return ds.path


def _write_page(fmt: str, unit: _Unit, sp: SourcePage) -> None:
    """Write one page: bytes, gold, then its submission (so a listed page always has bytes). A
    page that is no HTML (empty, an image, binary bytes: ``sniff_html``, which the features stage
    skips by) is not written but noted, with why, in the unit's problems; so is a page file that
    cannot be read as a page (``PageFileError``: its gzip data cut short or damaged, inflating
    past the limit), so that one bad file of a crawl does not stop the import of the rest."""
    try:
        try:
            html = sp.read_html()
        except PageFileError as exc:
            unit.problems["unreadable"].append(f"{sp.source} ({exc.why})")
            return
        why = sniff_html(html)
        gold = sp.read_gold() if why is None else None
    except OSError as exc:
        raise ImportFormatError(f"{exc.filename or sp.source}: cannot read: {exc.strerror}") from None
    if why is not None:
        unit.problems["not_html"].append(f"{sp.source} ({why})")
        return
    url = sp.url or source_url(fmt, sp.source)
    pid = page_id(sp.method, url, sp.fields)
    if pid in unit.ids:  # a URL given twice by the source: tell the pages apart
        url = f"{url}#source={quote(sp.source)}"
        pid = page_id(sp.method, url, sp.fields)
    unit.ids.add(pid)
    try:
        records = sp.read_records() if sp.read_records is not None else None
    except OSError as exc:
        raise ImportFormatError(f"{exc.filename or sp.source}: cannot read: {exc.strerror}") from None
    extra = {}
    if records is not None:
        text, extra = _resolve(fmt, sp, html, records, unit)
        gold = text if gold is None else gold
    unit.ds.write_page(pid, html)
    if records is not None:
        unit.ds.write_records(pid, records)
    if gold is not None:
        unit.ds.write_gold(pid, gold)
    elif sp.gold_source is not None:
        unit.problems["gold_missing"].append(sp.gold_source)
    fields = with_query(sp.fields, sp.query)  # after the ID: IDs stay stable
    known = unit.ds.add_submission({"id": pid, "method": sp.method, "url": url, "fields": fields,
                                    "site": sp.site, "source": sp.source, "has_gold": gold is not None,
                                    **sp.extra, **extra})
    requery(known, fields, sp.fields, unit.requeried)
    unit.written += 1


def with_query(fields: list[dict], query: str | None) -> list[dict]:
    """A page's submission fields with ``query`` (the search terms that found it) as a field
    ``q``, unless none is given or the page has a field ``q`` of its own."""
    fields = list(fields)
    if query and not any(f.get("name") == "q" for f in fields):
        fields.append({"name": "q", "value": query, "label": "Search"})
    return fields


def requery(known: dict, fields: list[dict], own: list[dict], out: list[dict]) -> None:
    """Note in ``out`` the recorded submission ``known`` of a page imported again, with this run's
    ``fields`` when they add a query (``with_query``: ``fields`` differ from the page's ``own``) that
    ``known`` lacks: an earlier import without ``--query`` (or without ``query/NAME.txt``) recorded
    the page without it, and ``add_submission`` keeps what was recorded first."""
    if fields != list(own) and known.get("fields") != fields:
        out.append({**known, "fields": fields})


def apply_requery(ds: Dataset, requeried: list[dict]) -> None:
    """Give the pages ``requery`` noted their query (``Dataset.replace_submissions``), and say so."""
    if requeried:
        ds.replace_submissions(requeried)
        info(f"{ds.name}: {len(requeried)} page(s) imported before now hold the query given this run")


def _resolve(fmt: str, sp: SourcePage, html: bytes, records: list, unit: _Unit) -> tuple[str, dict]:
    """A page's gold records resolved on it: their text (the page's gold text when the source
    gives none) and their counts for the submission; XPaths that name no shown element are
    reported, never guessed (``features.record_gold``)."""
    from hwnoise.features.record_gold import gold_from_records

    text, resolved = gold_from_records(html, records)
    counts = {k: getattr(resolved, k) for k in RECORD_COUNTS}
    for k, v in counts.items():
        unit.records[k] += v
    unit.record_pages += 1
    if resolved.not_paths:
        info(f"{fmt}: {sp.source}: {len(resolved.not_paths)} of {resolved.xpaths} record XPaths are no element "
             f"path such as /body[1]/div[3]/ul[1]/li[2] (e.g. {resolved.not_paths[0]!r}): records name "
             "elements by their tags and positions from the top; those XPaths are left out")
    if resolved.unresolved > len(resolved.not_paths):
        info(f"{fmt}: {sp.source}: {resolved.unresolved - len(resolved.not_paths)} of {resolved.xpaths} record "
             f"XPaths name no shown element ({resolved.hidden} hidden by the page's style); those records are "
             "left out of the node gold")
    return text, counts
