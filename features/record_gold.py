"""Record gold given as XPaths: the walker's rows that a page's gold records name.

A record is a list of absolute XPaths in the browser's form, ``/body[1]/div[3]/table[1]/
tbody[1]/tr[2]`` (NEXT-EVAL writes them so; ``import plain`` reads the same format from
``records/NAME.json``): every step has a position counted among the element siblings with
the same tag in the page's DOM, whether shown or not. The walker's own ``xpath`` column
counts only shown siblings and starts at ``/html/body``, so the two are joined through the
parsed tree itself: ``features.elements.shown_elements`` gives the walker's rows as lxml
elements (the same decoding, parsing and visibility verdicts), and ``dom_xpaths`` writes each
row's XPath in the browser's form. An XPath that names no shown element is *unresolved*:
counted (``hidden`` when the element exists but the walker does not show it), never guessed.

Node gold (DESIGN: "an element that a record XPath names, and everything inside it, is
content; everything else is noise") is ``record_labels``; the gold text of a page is its
records' text in document order, one record a block (``record_text``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hwnoise.dataset import check_records, read_records_file
from hwnoise.errors import HwnoiseError

__all__ = ["RecordGold", "RecordGoldError", "dom_xpaths", "child_positions", "element_xpath", "resolve_records",
           "record_labels", "record_text", "text_xpaths", "read_records", "records_path_for", "normalize_xpath",
           "check_records"]

_STEP_RE = re.compile(r"([A-Za-z][\w.-]*)(?:\[(\d+)\])?")


class RecordGoldError(HwnoiseError):
    """A records file that is not a JSON list of records, each a list of XPath strings."""


def normalize_xpath(xpath: str) -> str:
    """An absolute element XPath in the gold's form: ``/body[1]/...``, lower-case tags, every
    step with a position (``[1]`` added where left out), a leading ``/html[1]`` dropped."""
    steps = [s for s in xpath.strip().split("/") if s]
    out = []
    for s in steps:
        m = _STEP_RE.fullmatch(s)
        if not m:
            return xpath.strip()
        out.append(f"{m.group(1).lower()}[{m.group(2) or 1}]")
    if out and out[0] == "html[1]":
        out = out[1:]
    return "/" + "/".join(out)


def read_records(path: str | Path) -> list[list[str]] | None:
    """The gold records of a ``records/ID.json`` file, or None when there is none."""
    return read_records_file(path)


def records_path_for(html_path: str | Path) -> Path:
    """``DATASET/records/ID.json`` beside ``DATASET/pages/ID.html``."""
    html_path = Path(html_path)
    return html_path.parent.parent / "records" / f"{html_path.stem}.json"


def dom_xpaths(elements: list, parents: list[int]) -> list[str]:
    """The browser-form XPath of each shown element (``shown_elements``' order, row 0 = body):
    positions among all element siblings of the same tag in the parsed tree."""
    n = len(elements)
    out = [""] * n
    if not n:
        return out
    out[0] = "/body[1]"
    positions: dict = {}
    for i in range(1, n):
        el = elements[i]
        par = el.getparent()
        pos = positions.get(par)
        if pos is None:
            pos = positions[par] = child_positions(par)
        out[i] = f"{out[parents[i]]}/{el.tag}[{pos.get(el, 1)}]"
    return out


def child_positions(parent) -> dict:
    """Each element child of ``parent`` and its position among the children of its tag, from
    1: the step ``tag[k]`` of a browser-form XPath."""
    pos: dict = {}
    count: dict[str, int] = {}
    for ch in parent.iterchildren():
        t = ch.tag
        if t.__class__ is str:
            count[t] = count.get(t, 0) + 1
            pos[ch] = count[t]
    return pos


#: What JavaScript's ``String.prototype.trim`` strips (NEXT-EVAL's test for a non-blank text
#: node); Python's ``str.strip`` differs on U+001C-U+001F, U+0085 and U+FEFF.
JS_SPACE = (" \t\n\x0b\x0c\r\xa0\ufeff\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
            "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

#: Elements whose text NEXT-EVAL's text map leaves out (``<template>``'s content is not in
#: the browser's tree).
_NO_TEXT = frozenset({"script", "style", "template"})


def text_xpaths(root) -> list[str]:
    """The keys of NEXT-EVAL's flat text map of a parsed page, sorted: the browser-form XPath
    of every element that directly holds a non-blank text node outside ``<script>`` and
    ``<style>``, shown or hidden (the paper's ``extractTextWithXPaths`` walks every text node).
    Its record metric expands each record to the keys below it (``training.record_metrics``)."""
    out: list[str] = []
    top = root if root.tag == "html" else root.getroottree().getroot()
    stack = [(top, "")]
    while stack:
        el, path = stack.pop()
        count: dict[str, int] = {}
        for ch in el.iterchildren():
            t = ch.tag
            if t.__class__ is not str:  # a comment or PI: its tail is the parent's text
                continue
            k = count[t] = count.get(t, 0) + 1
            if t in _NO_TEXT:
                continue
            p = f"{path}/{t}[{k}]"
            if (ch.text and ch.text.strip(JS_SPACE)) or any(
                    g.tail and g.tail.strip(JS_SPACE) for g in ch.iterchildren()):
                out.append(p)
            stack.append((ch, p))
    out.sort()
    return out


def element_xpath(el) -> str:
    """One lxml element's XPath in the browser's form (``/body[1]/...``; ``/html`` left out)."""
    steps = []
    while el is not None and el.tag != "html":
        par = el.getparent()
        if par is None:
            steps.append(f"{el.tag}[1]")
            break
        k = 1 + sum(1 for s in el.itersiblings(preceding=True) if s.tag == el.tag)
        steps.append(f"{el.tag}[{k}]")
        el = par
    return "/" + "/".join(reversed(steps))


@dataclass
class RecordGold:
    """Gold records resolved on one page: per record the rows (walker nodes) it names."""

    rows: list[list[int]] = field(default_factory=list)   # only records with a resolved XPath
    xpaths: int = 0        # XPaths in the gold
    unresolved: int = 0    # XPaths naming no shown element (hidden ones included)
    hidden: int = 0        # of those, XPaths naming an element the walker does not show
    records: int = 0       # records in the gold
    empty: int = 0         # records none of whose XPaths resolved
    not_paths: list[str] = field(default_factory=list)  # of the unresolved, those that are no element path


def is_element_path(xpath: str) -> bool:
    """Whether ``xpath`` is an element path as gold records give them (``/body[1]/div[3]``, the
    positions optional), which ``normalize_xpath`` reads; ``//li[@class='r']`` or a typo is not."""
    steps = xpath.strip().split("/")
    return len(steps) > 1 and steps[0] == "" and all(_STEP_RE.fullmatch(s) for s in steps[1:])


def resolve_records(html: bytes | str, records: list[list[str]], *, http_charset: str | None = None,
                    n_rows: int | None = None) -> RecordGold:
    """Resolve gold records on a page. ``n_rows`` (the walk's row count) is checked against
    the shown elements, so that a misjoin is an error rather than wrong labels."""
    from hwnoise.features.elements import shown_elements

    view = shown_elements(html, http_charset)
    root, els, parents = view.root, view.elements, view.parents
    if n_rows is not None and n_rows != len(els):
        raise RecordGoldError(f"the page's shown elements ({len(els)}) differ from the walk's rows "
                              f"({n_rows}); cannot place the gold records")
    index = {x: i for i, x in enumerate(dom_xpaths(els, parents))}
    body = root.find("body")
    out = RecordGold(records=len(records))
    for rec in records:
        got = []
        for x in rec:
            out.xpaths += 1
            norm = normalize_xpath(x)
            i = index.get(norm)
            if i is None:
                out.unresolved += 1
                if not is_element_path(x):
                    out.not_paths.append(x)
                    continue
                if body is not None and _exists(body, norm):
                    out.hidden += 1
                continue
            got.append(i)
        if got:
            out.rows.append(sorted(set(got)))
        else:
            out.empty += 1
    out.rows.sort()
    return out


def _exists(body, xpath: str) -> bool:
    """Whether the element exists in the tree (shown or not)."""
    try:
        return bool(body.xpath("." + xpath[len("/body[1]"):])) if xpath.startswith("/body[1]") else False
    except Exception:  # noqa: BLE001 - a malformed XPath names nothing
        return False


def record_labels(n_rows: int, last: np.ndarray, gold: RecordGold) -> np.ndarray:
    """Booleans per row: True (content) for every row a record names and its subtree."""
    diff = np.zeros(n_rows + 1, dtype=np.int64)
    for rows in gold.rows:
        for i in rows:
            diff[i] += 1
            diff[last[i] + 1] -= 1
    return np.cumsum(diff[:n_rows]) > 0


def gold_from_records(html: bytes | str, records: list[list[str]]) -> tuple[str, RecordGold]:
    """What a page's gold records give at import: the gold text (``record_text``) and the
    records resolved on the page (``resolve_records``: the counts of records, XPaths, and those
    that name no shown element), from one walk of the page."""
    from hwnoise.features.walk import walk_page

    walk = walk_page(html)
    gold = resolve_records(html, records, n_rows=len(walk.rows))
    return record_text(walk, gold), gold


def record_text(walk, gold: RecordGold) -> str:
    """The records' text in document order, one record a block (blank line between)."""
    last = np.asarray(walk.last)
    owners = np.asarray([o for o, _ in walk.segments], dtype=np.int64)
    texts = [t for _, t in walk.segments]
    blocks = []
    for rows in sorted(gold.rows):
        mask = np.zeros(len(owners), dtype=bool)
        for i in rows:
            mask |= (owners >= i) & (owners <= last[i])
        text = " ".join(texts[k] for k in np.flatnonzero(mask))
        if text:
            blocks.append(text)
    return "\n\n".join(blocks)
