"""Checks that an output place (``-o``/``--out``/``--into``) can be written, made before the work;
and names written into outputs as text (``markdown_text``, ``printable``).

A long run that only finds out at its end that it cannot write would lose its work; so each
command checks its output folder or file first, by trying (permissions alone do not tell: root
ignores them, a read-only file system or a file in the path does not). The check leaves nothing
behind: folders it had to make for the try are removed again.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from hwnoise.errors import HwnoiseError


def check_out_dir(path: str | os.PathLike, option: str) -> Path:
    """Raise one line unless files can be written in folder ``path`` (made if missing) and it
    is no part of a dataset folder (``dataset_part``)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise HwnoiseError(f"{option} {p}: exists and is not a folder; give a folder")
    _refuse_dataset_part(p, option)
    missing = [q for q in (p, *p.parents) if not q.exists()]  # deepest first
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=p, prefix=".hwnoise-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise HwnoiseError(f"{option} {p}: cannot write there ({exc.strerror or exc}); "
                           "give a folder you can write") from None
    finally:
        for q in missing:
            try:
                q.rmdir()
            except OSError:
                pass
    return p


def check_out_file(path: str | os.PathLike, option: str) -> Path:
    """Raise one line unless file ``path`` can be written (its folder made if missing)."""
    p = Path(path)
    if p.is_dir():
        raise HwnoiseError(f"{option} {p}: is a folder; give a file name")
    _refuse_dataset_part(p, option, p)  # the file itself too: -o DATASET/labels.parquet replaced the labels
    try:
        check_out_dir(p.parent, option)
    except HwnoiseError:
        raise HwnoiseError(f"{option} {p}: cannot write there (its folder {p.parent} cannot be "
                           "written); give a file you can write") from None
    return p


def _refuse_dataset_part(folder: Path, option: str, given: Path | None = None) -> None:
    """One line when ``folder`` is inside a dataset's own parts (its pages/, gold/, records/...):
    a report.json written into records/ made the dataset's gold look like records, and what
    else a run writes there is read back as the dataset's."""
    from hwnoise.dataset import dataset_part

    inside = dataset_part(folder)
    if inside is not None:
        where = "is" if Path(folder).resolve() == inside[0] / inside[1] else "inside"
        raise HwnoiseError(f"{option} {given or folder}: {where} the {inside[1]} of the dataset {inside[0]}, "
                           "which hwnoise reads as the dataset's own; give a place outside it")


@contextlib.contextmanager
def output_stream(path: str | os.PathLike | None, option: str = "-o/--out") -> Iterator[TextIO]:
    """Standard output, or a text file ``path`` written as ``path.part`` and renamed to ``path``
    when the run ends well: a file named ``path`` is whole, and a run that fails or is stopped
    keeps what it wrote in ``path.part`` (said on stderr) instead of leaving a cut file."""
    if path is None:
        yield sys.stdout
        return
    final = check_out_file(path, option)
    final.parent.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    with open(part, "w", encoding="utf-8", newline="\n") as out:
        try:
            yield out
        except BaseException:
            out.close()
            sys.stderr.write(f"hwnoise: what was written before the stop is kept in {part}\n")
            raise
    os.replace(part, final)


def json_line(value: object) -> str:
    r"""``value`` as one line of JSON, its text as it is (``ensure_ascii=False``), except a lone
    surrogate, which no UTF-8 output can hold: a file name that is not UTF-8 (``caf\xe9.html``,
    which Python gives as ``'caf\udce9.html'``) is written as the JSON escape ``\udce9``, read
    back by ``json.loads`` as the same name, instead of failing the write of the whole run."""
    import json

    line = json.dumps(value, ensure_ascii=False, default=str)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a surrogate stands only inside a JSON string: its escape is JSON
        line = line.encode("utf-8", "backslashreplace").decode("utf-8")
    return line


#: what Markdown (and the HTML it passes through) reads in inline text: a table cell's end,
#: code, emphasis, links, tags, entities, strike-through, maths
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def markdown_text(value: object) -> str:
    """``value`` as literal Markdown inline text (a table cell, a list item): what Markdown would
    read (``|``, ``*``, ``<``, ``&``...) backslash-escaped, and line breaks and other control
    characters as their escapes (``\\n``), so a dataset named ``a|b`` or ``<b>x`` neither
    breaks a report.md table row nor turns into markup."""
    return printable(_MARKDOWN_SPECIAL.sub(r"\\\1", str(value)))


def printable(value: object) -> str:
    """``value`` with its line breaks and other control characters written as their escapes
    (``\\n``, ``\\x1b``): a name printed in a table stays on its row, and an escape sequence in a
    dataset's name does not drive the terminal (recolour it, retitle it, return the carriage)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))
