"""The content text laid out as a browser lays it out: lines, and their blocks as Markdown.

A page's content is the text segments of the nodes labelled content (``walk.segments``, the
text nodes of the page in document order, each owned by the element that holds it). They run
into lines as HTML's ``innerText`` breaks a page shown with its default styles: a paragraph set
off by blank lines, every other block (``hwnoise.markup.BLOCK_TAGS``) on lines of its own, a new
line at ``<br>``, a row's cells on one line a tab apart, and a link or a ``<b>`` inside a paragraph
on the paragraph's line (``content_lines``). ``plain_text`` joins the lines;
``markdown`` writes each line's block as Markdown (CommonMark, with GitHub's tables): headings,
list items, block quotes, table rows, paragraphs. Both move only what stands between words, so
the words are those of the segments, whichever way the text is written.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hwnoise.features.columns import CONTENT
from hwnoise.markup import BLOCK_TAGS

if TYPE_CHECKING:  # pragma: no cover - names for type hints only
    from hwnoise.features.walk import PageWalk

__all__ = ["Lines", "content_lines", "plain_text", "markdown", "nearest"]


@dataclass
class Lines:
    """A page's content as lines: each line's text (its segments joined by one space), what stands
    before it (``seps``: "\\n", "\\n\\n" or more, or "\\t" between two cells of a row; "" before the
    first) and its block (the row of its first segment's nearest block, ancestor or itself; -1
    without rows), with the rows' tags and parents the blocks are read from (empty without rows)."""

    texts: list[str] = field(default_factory=list)
    seps: list[str] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    parent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


#: Elements whose start and end leave a blank line in the text (HTML's ``innerText``: a required
#: line break count of 2), and those between whose siblings a tab stands (a table's cells).
_PARAGRAPH = frozenset({"p"})
_CELLS = frozenset({"td", "th"})


def content_lines(walk: "PageWalk", labels: Sequence[str] | np.ndarray) -> Lines:
    """The lines of the own text of the nodes ``labels`` calls content, broken as HTML's
    ``innerText`` breaks a page shown with its default styles. Between two kept segments stands a
    blank line where a ``<p>`` starts or ends between them (an empty one too), else a newline where
    another block starts or ends there (``hwnoise.markup.BLOCK_TAGS``), or one a ``<br>`` there
    when they are more; else a tab between two cells of a row; else a space. (Where a cell holds
    a block, innerText sets the cell's tab after the block's blank line, and adds a row's newline
    to the blank lines around it: not followed here.) Where an element starts and ends among the
    segments comes from the walk's rows: its characters before (``chars_before`` times the root's
    ``chars``) and its own ``chars``. One text node a line for a walk without its rows."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return Lines()
    keep = labels == CONTENT
    n = len(keep)
    kept = [(k, text) for k, (node, text) in enumerate(walk.segments) if 0 <= node < n and keep[node] and text]
    if not kept:
        return Lines()
    layout = _layout(walk, [k for k, _ in kept])
    if layout is None:  # no rows to lay out by: one text node a line
        return Lines([t for _, t in kept], [""] + ["\n"] * (len(kept) - 1), [-1] * len(kept))
    between, blocks, tags, parent = layout
    lines = Lines(tags=tags, parent=parent)
    run, sep = [kept[0][1]], ""
    for j in range(1, len(kept)):
        if between[j - 1] != " ":
            lines.texts.append(" ".join(run))
            lines.seps.append(sep)
            lines.blocks.append(int(blocks[j - len(run)]))
            run, sep = [], between[j - 1]
        run.append(kept[j][1])
    lines.texts.append(" ".join(run))
    lines.seps.append(sep)
    lines.blocks.append(int(blocks[len(kept) - len(run)]))
    return lines


def _layout(walk: "PageWalk", kept: Sequence[int]):
    """``(between, each kept segment's block, tags, parent)``: what stands between each two kept
    segments (``content_lines``), or None for a walk without the rows' tags and positions (a
    bench's stand-in walk) or with rows that do not fit."""
    kept = np.asarray(kept, dtype=np.int64)
    try:
        owner, texts = walk.segment_arrays()
        tags = walk.column("tag")
        parent = np.asarray(walk.column("parent"), dtype=np.int64)
        before = np.asarray(walk.column("chars_before"), dtype=np.float64)
        chars = np.asarray(walk.column("chars"), dtype=np.int64)
    except (AttributeError, KeyError, TypeError):
        return None
    n = len(parent)
    if not len(kept) or len(tags) != n or len(before) != n or len(chars) != n or not n:
        return None
    own = owner[kept]
    if own.min() < 0 or own.max() >= n:
        return None
    seg_len = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    ends = np.cumsum(seg_len)  # a segment's end; its start is the previous segment's end
    gap_lo, gap_hi = ends[kept[:-1]], ends[kept[1:]] - seg_len[kept[1:]]  # from one's end to the next's start
    start = np.rint(before * (int(chars[0]) or 1)).astype(np.int64)  # chars_before's own denominator
    stop = start + chars  # where the element's text ends
    tag = np.asarray(tags, dtype=object)
    block = np.fromiter((t in BLOCK_TAGS for t in tags), dtype=bool, count=n)
    blocks = _jump(block | (parent < 0) | (parent >= n), parent)[own]  # the root when no block is

    def inside(rows: np.ndarray, at_stop: bool = True) -> np.ndarray:
        """How many starts (and stops) of ``rows`` lie in each gap."""
        edges = np.sort(np.concatenate((start[rows], stop[rows])) if at_stop else start[rows])
        return np.searchsorted(edges, gap_hi, side="right") - np.searchsorted(edges, gap_lo, side="left")

    is_br, is_cell = tag == "br", np.isin(tag, list(_CELLS))
    paragraph = inside(np.flatnonzero(np.isin(tag, list(_PARAGRAPH)))) > 0
    other = inside(np.flatnonzero(block & ~is_br & ~is_cell & ~np.isin(tag, list(_PARAGRAPH)))) > 0
    brs = inside(np.flatnonzero(is_br), at_stop=False)
    cell = inside(np.flatnonzero(is_cell)) > 0
    count = np.maximum(np.where(paragraph, 2, np.where(other, 1, 0)), brs)
    between = ["\n" * c if c else ("\t" if t else " ") for c, t in zip(count.tolist(), cell.tolist())]
    return between, blocks, list(tags), parent


def plain_text(lines: Lines) -> str:
    """The lines, each after what stands before it (a newline, a blank line, a tab)."""
    return "".join(sep + text for sep, text in zip(lines.seps, lines.texts))


# -- Markdown --------------------------------------------------------------------------------
_HEADINGS = {f"h{k}": k for k in range(1, 7)}
#: characters that would start Markdown inline syntax (emphasis, code, links, HTML, entities)
_INLINE = re.compile(r"([\\`*_\[\]<]|&(?=#?\w+;))")
#: what at a line's start, once ``_INLINE`` has escaped (``*`` and a backtick fence with it), would
#: make it another block: a heading, a quote, a list item, a setext underline, a fence, a table row
_START = re.compile(r"^(#{1,6}(?=\s|$)|[>+-](?=\s|$)|=+\s*$|-+\s*$|\d{1,9}(?=[.)](?:\s|$))|~{3,}|\|)")


def _escape(text: str, cell: bool = False) -> str:
    """``text`` as literal Markdown: inline syntax escaped, and a line start that would begin
    another block; in a table's cell its ``|`` too."""
    text = _INLINE.sub(r"\\\1", text)
    if cell:
        return text.replace("|", "\\|")
    m = _START.match(text)
    if m:
        if m.group(0)[0].isdigit():  # "1. Finland": the number stays, its "." is escaped
            return text[:m.end()] + "\\" + text[m.end():]
        return "\\" + text
    return text


def nearest(tags: list[str], parent: np.ndarray, wanted, stop=frozenset()) -> np.ndarray:
    """For every row, its nearest ancestor-or-self whose tag is in ``wanted``: -1 where there is
    none, or where an element of ``stop`` comes first. Pointer jumping over the parents (rounds
    of the log of the depth, each one pass over the rows), not a walk up from each row."""
    n = len(parent)
    tag = np.asarray(tags, dtype=object)
    hit = np.isin(tag, list(wanted)) if n else np.zeros(0, dtype=bool)
    end = hit | (np.isin(tag, list(stop)) if stop and n else False) | (parent < 0) | (parent >= n)
    up = _jump(end, parent)
    return np.where(hit[up], up, -1)


def _jump(end: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each row's nearest ancestor-or-self where ``end`` holds (a root must hold it): pointer
    jumping, each round one pass over the rows, as many rounds as the log of the depth."""
    up = np.where(end, np.arange(len(parent)), parent)
    while True:
        pending = ~end[up]
        if not pending.any():
            return up
        up[pending] = up[up[pending]]


def _list_nesting(tags: list[str], parent: np.ndarray, items: np.ndarray, lists: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For each list item (``items``/``lists``: each row's nearest ``li`` and list), the spaces
    before its marker (the content column of the item it is nested in: 2 under ``- ``, 3 under
    ``1. ``, CommonMark's nesting) and its outermost list, in one pass in document order (a
    row's parent comes before it)."""
    n = len(parent)
    indent, outer = np.zeros(n, dtype=np.int64), lists.copy()
    for r in np.flatnonzero(np.asarray(tags, dtype=object) == "li").tolist():
        p = int(parent[r])
        above = int(items[p]) if 0 <= p < n else -1  # the item this one is nested in
        if above >= 0:
            up = int(lists[above])
            indent[r] = indent[above] + (3 if up >= 0 and tags[up] == "ol" else 2)
            outer[r] = outer[above]
    return indent, outer


def _at(of: np.ndarray, row: int) -> int:
    return int(of[row]) if row >= 0 else -1


def markdown(lines: Lines) -> str:
    """The lines as Markdown: ``#`` headings (h1-h6), ``-`` / ``1.`` list items, ``>`` quotes,
    a table's rows as a table (its first row the header), the other blocks paragraphs; lines of
    one block (a ``<br>`` between them) kept apart by a hard line break. Blocks are separated by
    a blank line, the items of one list and the rows of one table by a newline, the blocks of one
    quote by a ``>`` line; a list in a list item is indented under it."""
    tags, parent = lines.tags, lines.parent
    if len(parent):  # each row's nearest cell, row, table, quote, list item and list, at once
        cells, rows = nearest(tags, parent, {"td", "th"}, {"table"}), nearest(tags, parent, {"tr"}, {"table"})
        tables, quotes = nearest(tags, parent, {"table"}), nearest(tags, parent, {"blockquote"})
        items, lists = nearest(tags, parent, {"li"}), nearest(tags, parent, {"ul", "ol", "menu", "dir"})
        indent, outer = _list_nesting(tags, parent, items, lists)
    out: list[tuple[str, tuple]] = []  # (Markdown of a block, what it continues: list or table)
    table: list[list[list[str]]] = []  # rows of cells of lines, while lines are in one table
    where = (-1, -1, -1)  # (table, row, cell) of the table being read

    def end_table() -> None:
        if table:  # every row as wide as the widest: GitHub's tables drop cells past the header's
            width = max(map(len, table))
            rows = ["| " + " | ".join([_escape(" ".join(c), cell=True) for c in row] + [""] * (width - len(row)))
                    + " |" for row in table]
            rows.insert(1, "|" + " --- |" * width)
            out.append(("\n".join(rows), ("table", where[0])))
            table.clear()

    prev = (None, -1, "")  # the previous line's block, list item and continuation indent
    for text, b in zip(lines.texts, lines.blocks):
        if b < 0:  # no rows: paragraphs
            out.append((_escape(text), ()))
            continue
        cell = int(cells[b])
        if cell >= 0:
            row = int(rows[cell])
            tab = _at(tables, row if row >= 0 else cell)
            if tab != where[0]:
                end_table()
            if not table or row != where[1]:
                table.append([])
            if not table[-1] or cell != where[2]:
                table[-1].append([])
            table[-1][-1].append(text)
            where, prev = (tab, row, cell), (None, -1, "")
            continue
        end_table()
        where = (-1, -1, -1)
        inside = int(quotes[b])
        quote = "> " if inside >= 0 else ""
        item = int(items[b])
        line = _escape(text)
        if out and (b == prev[0] or (item >= 0 and item == prev[1])):
            # the same block after a <br>, or another block of the same list item: one block
            md, cont = out[-1]
            heading = prev[0] is not None and tags[prev[0]] in _HEADINGS
            out[-1] = (md + (" " if heading else "\\\n" + quote + prev[2]) + line, cont)
            continue
        if tags[b] in _HEADINGS:
            out.append((quote + "#" * _HEADINGS[tags[b]] + " " + line, ("quote", inside) if quote else ()))
            prev = (b, -1, "")
        elif item >= 0:
            lst = int(lists[item])
            mark = " " * int(indent[item]) + ("1. " if lst >= 0 and tags[lst] == "ol" else "- ")
            out.append((quote + mark + line, ("list", int(outer[item]))))
            prev = (b, item, " " * len(mark))
        else:
            out.append((quote + line, ("quote", inside) if quote else ()))
            prev = (b, -1, "")
    end_table()
    if not out:
        return ""
    parts = [out[0][0]]
    for (md, cont), (_, before) in zip(out[1:], out[:-1]):  # one list, table or quote goes on
        parts.append(("\n>\n" if cont[0] == "quote" else "\n") if cont and cont == before else "\n\n")
        parts.append(md)
    return "".join(parts)
