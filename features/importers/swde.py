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
from hwnoise.features.importers import ImportFormatError, SourcePage, inside
from hwnoise.text import collapse_space

ATTRIBUTES = ("title", "author", "isbn_13", "publisher", "publication_date")
NULL = "<NULL>"
SIMULATED_NOTE = ("submissions simulated: SWDE has no search forms; each page's submission is a "
                  "search by its title and author values from the ground truth")
_BASE_RE = re.compile(rb"""<base\s+href\s*=\s*["']([^"']+)["']""", re.I)
_SITE_RE = re.compile(r"^(?P<vertical>[a-z]+)-(?P<site>[^(]+)\(\d+\)$")


def read_truth(path: Path) -> dict[str, list[str]]:
    """Page ID -> values of one ground-truth file (entities decoded, ``<NULL>`` dropped)."""
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    out: dict[str, list[str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if n <= 2 or not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) < 2 or not cells[0].strip().isdigit():
            raise ImportFormatError(f"{path}:{n}: expected 'PAGE_ID<TAB>COUNT<TAB>VALUE...'")
        values = [collapse_space(_html.unescape(v)) for v in cells[2:] if v.strip() != NULL]
        out[cells[0].strip()] = [v for v in values if v]
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
        truth = {}
        for attr in ATTRIBUTES:
            path = root / "groundtruth" / vertical / f"{vertical}-{site}-{attr}.txt"
            if path.is_file():
                truth[attr] = read_truth(inside(path, src))
        if not truth:
            raise ImportFormatError(f"{root / 'groundtruth' / vertical}: no ground truth for {site}")
        for path in sorted(site_dir.glob("*.htm")):
            pid = path.stem
            head = inside(path, src).read_bytes()[:2048]
            mm = _BASE_RE.search(head)
            url = mm.group(1).decode("utf-8", errors="replace") if mm else ""
            values = {attr: t[pid] for attr, t in truth.items() if pid in t}
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
