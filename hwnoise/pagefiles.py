"""Page files on disk: which files of a folder are pages, their names, and their bytes.

One place for what ``hwnoise import plain``, ``hwnoise extract`` and ``hwnoise features
PAGE.html`` read: ``NAME.html``, ``NAME.htm`` or ``NAME.xhtml``, each also gzip-compressed
(``NAME.html.gz``, as crawlers and benchmark sets such as WCXB store them). A compressed page
is recognised by its bytes (gzip's magic number), not by its name, and is inflated up to
``MAX_INFLATED`` bytes, so that a small file cannot fill the memory (a "zip bomb").
"""
from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path

from hwnoise.errors import HwnoiseError

__all__ = ["PAGE_SUFFIXES", "MAX_INFLATED", "PageFileError", "is_page_file", "page_name",
           "page_files", "read_page_file", "read_page_head", "names_a_file"]

#: File name endings of pages (each also with ``.gz`` after it).
PAGE_SUFFIXES = (".html", ".htm", ".xhtml")
#: The most bytes a compressed page may inflate to (the walk caps a page at 32 MiB of text).
MAX_INFLATED = 64 << 20
_GZIP_MAGIC = b"\x1f\x8b"


class PageFileError(HwnoiseError):
    """A page file that cannot be read: the message names the file and what is wrong (``why``:
    what is wrong alone, for a list of the pages skipped). ``PageFileError(message)`` alone, as
    pickle rebuilds one that a worker process raised, is the whole message."""

    def __init__(self, where: Path | str, why: str | None = None):
        super().__init__(str(where) if why is None else f"{where}: {why}")
        self.why = str(where) if why is None else why


def _strip_gz(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") else name


def is_page_file(path: Path) -> bool:
    """Whether ``path``'s name ends as a page's does (``.html``, ``.htm``, ``.xhtml``, ``+.gz``)."""
    return _strip_gz(path.name).lower().endswith(PAGE_SUFFIXES)


def page_name(path: Path) -> str:
    """The page's name: its file name without the page suffix and ``.gz`` (``a.html.gz`` -> ``a``)."""
    name = _strip_gz(path.name)
    for suffix in PAGE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def page_files(folder: Path, recursive: bool = False) -> list[Path]:
    """The page files of ``folder`` (and of its subfolders with ``recursive``), sorted by path."""
    found = folder.rglob("*") if recursive else folder.iterdir()
    return sorted(p for p in found if p.is_file() and is_page_file(p))


def _inflate(data: bytes, where: Path | str) -> bytes:
    """Every gzip member of ``data``, inflated, at most ``MAX_INFLATED`` bytes in all."""
    out: list[bytes] = []
    size = 0
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = d.decompress(data, MAX_INFLATED - size + 1)
        except zlib.error as exc:
            raise PageFileError(where, f"not a readable gzip file ({exc}); give the page's "
                                "HTML, compressed or not") from None
        size += len(chunk)
        if size > MAX_INFLATED or d.unconsumed_tail:
            raise PageFileError(where, f"inflates to more than {MAX_INFLATED >> 20} MiB; not "
                                "a page hwnoise reads (decompress it yourself if it is one)")
        if not d.eof:
            raise PageFileError(where, "the gzip data is cut short: a truncated file")
        out.append(chunk)
        data = d.unused_data.lstrip(b"\x00")  # members may follow; padding after the last
        if data and not data.startswith(_GZIP_MAGIC):
            break  # trailing junk after the last member, as gzip(1) ignores it
    return b"".join(out)


def names_a_file(text: str) -> bool:
    """Whether ``text``, given where a page's HTML or its file may be, names a file rather than
    being the page: short (under PATH_MAX), one line, no markup, and a file that exists."""
    return len(text) < 4096 and "<" not in text and "\n" not in text and os.path.isfile(text)


def read_page_file(path: Path | str) -> bytes:
    """The page's bytes as the server sent them: the file's, inflated if it is gzip data."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                data = fh.read()
            else:  # a device or a pipe (/dev/zero, <(...)): no size to trust, it may never end
                data = fh.read(MAX_INFLATED + 1)
                if len(data) > MAX_INFLATED:
                    raise PageFileError(path, f"gives more than {MAX_INFLATED >> 20} MiB and is no file "
                                        "(a device or a pipe); save the page to a file and give that")
    except OSError as exc:
        raise PageFileError(path, f"cannot read the page: {exc.strerror or exc}") from None
    if data.startswith(_GZIP_MAGIC):
        data = _inflate(data, path)
    return data


def read_page_head(path: Path | str, size: int) -> bytes:
    """``read_page_file(path)[:size]``, reading (and inflating) no more of the file than that
    needs: a look at a page's start (its URL) while pages are listed must not read each whole.
    Gzip data that does not inflate cleanly that far is left to ``read_page_file``'s rules."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(size)
            if not head.startswith(_GZIP_MAGIC):
                return head
            fh.seek(0)
            with gzip.GzipFile(fileobj=fh) as gz:
                return gz.read(size)
    except (OSError, EOFError, zlib.error):
        return read_page_file(path)[:size]  # its error, or what it makes of a damaged file


def is_url(item: str) -> bool:
    """Whether a page argument is an http(s) URL (to fetch), not a file name."""
    return item[:8].lower().startswith(("http://", "https://"))
