"""Markdown tables read back as GitHub reads them, for the tests of report.md."""
from __future__ import annotations

import re


def markdown_tables(text: str) -> list[list[list[str]]]:
    """The tables of a Markdown text as GitHub reads them: rows of cells split at the pipes no
    backslash escapes, each cell's backslash escapes of ASCII punctuation undone (CommonMark)."""
    tables: list[list[list[str]]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            cells = re.split(r"(?<!\\)((?:\\\\)*)\|", line.strip())
            joined = [cells[0]] + [cells[i] + cells[i + 1] for i in range(1, len(cells) - 1, 2)]
            tables[-1].append([re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", c).strip() for c in joined[1:-1]])
        previous = line
    return tables
