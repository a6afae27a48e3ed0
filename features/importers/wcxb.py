"""WCXB v1.0, dev split subset: one dataset per page type.

Pages are ``dev/html/NNNN.html.gz`` (inflated by ``pagefiles.read_page_file``, as plain's are,
within its size limit; bytes otherwise unchanged; all UTF-8). Gold is ``ground_truth.main_content``;
a page whose main_content is missing, null or empty has no gold (README: mostly SPAs and empty
shells). The page type is ``_internal.page_type.primary`` of
the ground truth (``subset.tsv``'s ``page_type``); the site is ``subset.tsv``'s domain.
"""
from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from hwnoise.dataset import is_safe_id, site_of
from hwnoise.features.importers import ImportFormatError, SourcePage, inside
from hwnoise.jsontext import parse_json
from hwnoise.pagefiles import read_page_file


def read_truth(path: Path) -> dict:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read the page's ground truth ({exc.strerror or exc}); "
                                "each SPLIT/html/ID.html.gz needs SPLIT/ground-truth/ID.json: restore "
                                "it or drop the page from subset.tsv") from None
    truth = parse_json(data, str(path), ImportFormatError)
    if not isinstance(truth, dict):
        raise ImportFormatError(f"{path}: not a JSON object (WCXB ground truth: an object with "
                                "ground_truth.main_content)")
    _check_types(truth, path)
    return truth


#: The keys of a ground truth that are read, and the JSON type each must have when present and
#: not null: a wrong one (a hand edit, another tool's output) would be a traceback, or a
#: main_content that is a number silently no gold.
_TYPES = {("url",): str, ("ground_truth",): dict, ("ground_truth", "main_content"): str,
          ("ground_truth", "with"): list, ("ground_truth", "without"): list,
          ("_internal",): dict, ("_internal", "page_type"): dict, ("_internal", "page_type", "primary"): str}
_TYPE_NAMES = {str: "text", dict: "an object", list: "a list"}


def _check_types(truth: dict, path: Path) -> None:
    """Refuse a ground truth whose keys read have another JSON type than ``_TYPES`` says."""
    for keys, want in _TYPES.items():
        value = truth
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            continue
        if not isinstance(value, want):
            got = _json_type(value)
        elif want is list and not all(isinstance(x, str) for x in value):
            got = "a list holding more than text"
        else:
            continue
        raise ImportFormatError(f"{path}: {'.'.join(keys)} is {got}, not {_TYPE_NAMES[want]}"
                                f"{' of text' if want is list else ''} (WCXB ground truth); mend or "
                                "restore the file")


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def main_content(truth: dict) -> str | None:
    """``ground_truth.main_content`` when it is a non-empty string, else None (no gold)."""
    text = (truth.get("ground_truth") or {}).get("main_content")
    return text if isinstance(text, str) and text.strip() else None


def page_type(truth: dict) -> str:
    return (((truth.get("_internal") or {}).get("page_type") or {}).get("primary")) or "unknown"


def _rows(src: Path) -> list[dict]:
    """subset.tsv rows, or (without it) one row per file of dev/html."""
    tsv = src / "subset.tsv"
    if tsv.is_file():
        try:
            with open(tsv, encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh, delimiter="\t"))
        except UnicodeDecodeError as exc:
            raise ImportFormatError(f"{tsv}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                    "save it as UTF-8") from None
        for line, row in enumerate(rows, 2):
            # the ids become paths: a "../" or an absolute path would read files outside SRC
            for key in ("split", "file_id"):
                value = row.get(key)
                if key == "file_id" and value is None:
                    raise ImportFormatError(f"{tsv}:{line}: no file_id column")
                if value is not None and value != "" and not is_safe_id(value):
                    raise ImportFormatError(f"{tsv}:{line}: {key} {value[:80]!r} is not a plain file name "
                                            "(letters, digits, '._-'); refused")
        _check_once(rows, tsv)
        return rows
    return [{"split": "dev", "file_id": p.name[:-len(".html.gz")]}
            for p in sorted((src / "dev" / "html").glob("*.html.gz"))]


def _check_once(rows: list[dict], tsv: Path) -> None:
    """Refuse a page listed twice in subset.tsv (a row pasted twice): it would be imported twice,
    the second copy under an ID of its own."""
    first: dict[tuple[str, str], int] = {}
    for line, row in enumerate(rows, 2):
        key = (row.get("split") or "dev", row["file_id"])
        if key in first:
            raise ImportFormatError(f"{tsv}:{line}: page {key[0]}/{key[1]} again (first on line "
                                    f"{first[key]}); drop one of the rows")
        first[key] = line


def pages(src: Path) -> Iterator[SourcePage]:
    if not (src / "dev" / "html").is_dir() and not (src / "subset.tsv").is_file():
        raise ImportFormatError(f"{src}: no dev/html/ folder or subset.tsv (WCXB layout)")
    rows = _rows(src)
    truths = {}
    for row in rows:
        split, fid = row.get("split") or "dev", row["file_id"]
        truth_path = inside(src / split / "ground-truth" / f"{fid}.json", src)
        truths[(split, fid)] = read_truth(truth_path)
    rows.sort(key=lambda r: (page_type(truths[(r.get("split") or "dev", r["file_id"])]), r["file_id"]))
    for row in rows:
        split, fid = row.get("split") or "dev", row["file_id"]
        truth = truths[(split, fid)]
        html_path = inside(src / split / "html" / f"{fid}.html.gz", src)
        ptype = page_type(truth)
        url = truth.get("url") or row.get("url") or ""
        yield SourcePage(
            unit=f"wcxb-{ptype}",
            source=f"{split}/html/{fid}.html.gz",
            url=url,
            site=row.get("domain") or site_of(url) or f"wcxb-{fid}",
            read_html=(lambda p=html_path: read_page_file(p)),
            read_gold=(lambda t=truth: main_content(t)),
            extra={"file_id": fid, "split": split, "page_type": ptype, "charset": "utf-8",
                   "with": (truth.get("ground_truth") or {}).get("with") or [],
                   "without": (truth.get("ground_truth") or {}).get("without") or []},
            unit_meta={"notes": f"WCXB v1.0 {split} split, page type {ptype}; gold is "
                                "ground_truth.main_content (pages without it have no gold)",
                       "page_type": ptype, "split": split},
        )
