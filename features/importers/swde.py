"""SWDE (Hao et al. 2011), book vertical: one dataset per site.

Gold is the page's attribute values (title, author, isbn_13, publisher, publication_date), one
a line, HTML entities decoded, ``<NULL>`` dropped. SWDE has no search forms: each page gets a
*simulated* search by its title and author values (one ``author`` field per author), which is
what a deep-web book search would send; ``dataset.json`` notes say so. Pages are UTF-8 with a
BOM and start with a ``<base href=URL>`` line the dataset authors added: that is the page URL.
"""
from __future__ import annotations

import html as _html
import re
from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import site_of
from hwnoise.features.importers import ImportFormatError, SourcePage, decode_text, file_head, inside
from hwnoise.text import collapse_space

ATTRIBUTES = ("title", "author", "isbn_13", "publisher", "publication_date")
NULL = "<NULL>"
SIMULATED_NOTE = ("submissions simulated: SWDE has no search forms; each page's submission is a "
                  "search by its title and author values from the ground truth")
_BASE_RE = re.compile(rb"""<base\s+href\s*=\s*["']([^"']+)["']""", re.I)
_SITE_RE = re.compile(r"^(?P<vertical>[a-z]+)-(?P<site>[^(]+)\(\d+\)$")


def read_truth(path: Path) -> dict[str, list[str]]:
    """Page ID -> values of one ground-truth file (entities decoded, ``<NULL>`` dropped).

    Decoded as gold files are (``decode_text``: UTF-8, UTF-16, else cp1252). A file cut short
    or edited wrong would give pages a cut value, or another page's, or none, silently: a
    last line without its line end, a row whose count is not its number of values (upstream:
    ``0437<TAB>0<TAB><NULL>``), and a page given twice are refused naming the line.
    """
    lines = decode_text(path.read_bytes()).split("\n")
    if lines[-1].strip():
        raise ImportFormatError(f"{path}:{len(lines)}: the last line has no line end: the file is cut "
                                "short? Restore it (or end the line, if it is whole)")
    out: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if n <= 2 or not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) < 2 or not cells[0].strip().isdigit() or not cells[1].strip().isdigit():
            raise ImportFormatError(f"{path}:{n}: expected 'PAGE_ID<TAB>COUNT<TAB>VALUE...'")
        pid, count, given = cells[0].strip(), int(cells[1]), cells[2:]
        values = [v for v in given if v.strip() != NULL]
        if count not in (len(values), len(given)):
            raise ImportFormatError(f"{path}:{n}: page {pid} says {count} value(s) and has {len(values)}; "
                                    "the row is cut short or mistyped")
        if pid in first:
            raise ImportFormatError(f"{path}:{n}: page {pid} again (first on line {first[pid]}); one row a page")
        first[pid] = n
        out[pid] = [v for v in (collapse_space(_html.unescape(v)) for v in values) if v]
    return out


def gold_text(values: dict[str, list[str]]) -> str:
    """One value a line, in ATTRIBUTES order."""
    return "\n".join(v for attr in ATTRIBUTES for v in values.get(attr, []))


def pages(src: Path) -> Iterator[SourcePage]:
    root = src
    site_dirs = sorted(p for p in root.glob("*/*") if p.is_dir() and _SITE_RE.match(p.name))
    if not site_dirs:
        raise ImportFormatError(f"{src}: no <vertical>/<vertical>-<site>(N)/ folders (SWDE layout)")
    for site_dir in site_dirs:
        m = _SITE_RE.match(site_dir.name)
        vertical, site = m.group("vertical"), m.group("site")
        truth, truth_files = {}, {}
        for attr in ATTRIBUTES:
            path = root / "groundtruth" / vertical / f"{vertical}-{site}-{attr}.txt"
            if path.is_file():
                truth[attr] = read_truth(inside(path, src))
                truth_files[attr] = path
        if not truth:
            raise ImportFormatError(f"{root / 'groundtruth' / vertical}: no ground truth for {site}")
        absent = [attr for attr in ATTRIBUTES if attr not in truth]
        if absent:  # its values would silently be missing from every page's gold
            raise ImportFormatError(f"{root / 'groundtruth' / vertical / f'{vertical}-{site}-{absent[0]}.txt'}: "
                                    f"missing, beside the other ground truth of {site}; restore it")
        for path in sorted(site_dir.glob("*.htm")):
            pid = path.stem
            head = file_head(inside(path, src), 2048)
            mm = _BASE_RE.search(head)
            url = mm.group(1).decode("utf-8", errors="replace") if mm else ""
            missing = next((attr for attr, t in truth.items() if pid not in t), None)
            if missing:
                raise ImportFormatError(f"{truth_files[missing]}: no row for page {pid} ({path.relative_to(src)}); "
                                        "every page of the site has one, <NULL> when it has no value")
            values = {attr: t[pid] for attr, t in truth.items()}
            fields = [{"name": "title", "value": v, "label": "Title"} for v in values.get("title", [])]
            fields += [{"name": "author", "value": v, "label": "Author"} for v in values.get("author", [])]
            yield SourcePage(
                unit=f"swde-{site}",
                source=path.relative_to(src).as_posix(),
                url=url,
                site=site_of(url) or site,
                read_html=path.read_bytes,
                read_gold=(lambda v=values: gold_text(v) if v else None),
                fields=fields,
                extra={"simulated": True, "swde_id": pid, "vertical": vertical,
                       "values": values},
                unit_meta={"notes": SIMULATED_NOTE, "submissions_simulated": True,
                           "vertical": vertical, "swde_site": site},
            )
