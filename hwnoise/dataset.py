"""The dataset folder: the contract between stages (see DESIGN.md, "The dataset folder").

::

    DATASET/
      dataset.json        name, source format, created, hwnoise version, notes
      submissions.jsonl   one submission a line: id, method, action, url, site,
                          fields [{name, value, label}]
      journal.jsonl       one fetch a line (written by hwnoise.forms)
      pages/ID.html       the bytes as received
      gold/ID.txt         the content text of the page, UTF-8, where known
      probes.jsonl        probe fetches (``hwnoise collect --probes``): the site's answer to a
      probes/ID.html      search nothing matches, as journal lines and bytes (not pages)
      query.json          the domain query: [{term, kind, submissions: [...]}]
      features.parquet    one row per DOM node of every page (file or folder of parts)
      labels.parquet      node labels without gold (``hwnoise label``): one row per page and
                          node, see ``LABEL_COLUMNS``; a person's rows survive an --auto rerun

Everything is written atomically (temp file + rename) or appended a whole line at
a time, so a run killed midway leaves every file readable.
"""
from __future__ import annotations

import datetime as _dt
import glob
import json
import os
import re
import socket
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hwnoise import __version__
from hwnoise.decode import charset_of
from hwnoise.errors import HwnoiseError
from hwnoise.jsontext import read_json_file


class DatasetError(HwnoiseError):
    """A dataset folder is missing, or one of its files cannot be read."""


#: statuses of answers without a whole page (204, 205, 304 carry none; a 206, to a request that
#: asked no range, a part), which ``hwnoise collect`` journals as failures
NO_WHOLE_PAGE_STATUSES = frozenset({204, 205, 206, 304})


def kept_without_a_page(record: dict | None) -> bool:
    """Whether a journal line is a success an older run made of an answer without a whole page
    (``NO_WHOLE_PAGE_STATUSES``, failures since): the body it kept is no page."""
    return bool(record) and not record.get("error") and record.get("status") in NO_WHOLE_PAGE_STATUSES


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _process_umask() -> int:
    """The process's umask (read once, at import, when nothing else runs yet)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _process_umask()


def _file_mode(path: Path) -> int:
    """The mode a replaced file keeps, or a new one gets as ``open()`` would make it."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


#: A temp file or work folder that names no owner (made before names held one) is a leftover
#: once it is this many seconds old.
UNOWNED_AGE = 3600


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (one of another user counts; a zombie, killed and not yet
    reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc (not Linux): it exists
        return True


def left_by_a_dead_run(host: str | None, pid: int | None, path: Path) -> bool:
    """Whether a temp file or work folder at ``path`` that names its owner ``host`` and ``pid``
    (None when it names none) is a killed run's leftover: its owner is a process of this machine
    that no longer runs; one that names no owner (made before names held one, or this instant)
    once it is ``UNOWNED_AGE`` old. Another machine's is never removed from here."""
    if pid is not None:
        return host == socket.gethostname() and not running(pid)
    return time.time() - path.stat().st_mtime > UNOWNED_AGE


def _temp_prefix(path: Path) -> str:
    """The start of ``atomic_write_bytes``'s temp names for ``path``: ``.NAME.PID@HOST.``, so
    that a leftover names the process that made it (``clear_stale_temps``)."""
    return f".{path.name}.{os.getpid()}@{socket.gethostname()}."


def clear_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temp files ``atomic_write_bytes`` left beside ``path`` when its process was
    killed outright (SIGKILL, out of memory: no ``finally`` ran), and return them. Only names of
    its own pattern (``.NAME.PID@HOST.XXXXXXXX.tmp``), and only when that process of this
    machine no longer runs; a name without an owner (written before names held one) only
    when it is older than ``UNOWNED_AGE``."""
    path = Path(path)
    own = re.compile(re.escape(f".{path.name}.") + r"(?:(\d+)@([^/]+)\.)?[A-Za-z0-9_]{8}\.tmp")
    removed = []
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        m = own.fullmatch(tmp.name)
        if m is None or not tmp.is_file() or tmp.is_symlink():
            continue
        try:
            if left_by_a_dead_run(m.group(2), None if m.group(1) is None else int(m.group(1)), tmp):
                tmp.unlink()
                removed.append(tmp)
        except OSError:  # gone meanwhile, or not ours to remove
            continue
    return removed


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and a rename; the temp
    file's name holds this process's id (``clear_stale_temps`` removes it if the process is
    killed before the rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode(path))  # mkstemp makes 0600: as open() would, or the file's own
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and (not exc.filename or exc.filename == tmp):
            # a full disk says no file, and a rename onto a folder names the temp file: this one
            raise _naming(exc, path) from None
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as indented UTF-8 JSON, atomically."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one JSON line (``outputs.json_line``: a file name that is not UTF-8 as the escape
    ``\\udce9``) and fsync it: a killed run loses at most this line, never earlier ones."""
    from hwnoise.outputs import json_line

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    append_synced(path, (json_line(record) + "\n").encode("utf-8"))


def append_synced(path: str | os.PathLike, data: bytes) -> None:
    """Append ``data`` with one write and fsync it (a journal's line, a WARC's record set); an
    error names ``path`` (a full disk's names no file). A torn tail is the next run's to cut."""
    try:
        with open(path, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        if exc.filename:
            raise
        raise _naming(exc, Path(path)) from None


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` (a write's ``No space left on device``, which names no file) naming ``path``, so that
    the command line says it in one line instead of a traceback."""
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read a JSON-lines file. A torn last line (a killed writer) is skipped with a warning;
    a bad line elsewhere raises DatasetError naming file and line."""
    path = Path(path)
    if not path.exists():
        return []
    out: list[dict] = []
    lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()  # a BOM, as editors save
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except RecursionError:
            raise DatasetError(f"{path}:{i}: JSON nested too deeply") from None
        except json.JSONDecodeError as exc:
            if i == len(lines):
                warnings.warn(f"{path}:{i}: skipping a torn last line (an interrupted write)")
                continue
            raise DatasetError(f"{path}:{i}: not valid JSON: {exc.msg}") from None
    return out


def read_records_file(path: str | os.PathLike) -> list[list[str]] | None:
    """A ``records/ID.json`` file: a JSON list of records, each a non-empty list of XPath
    strings (a bare string is a one-XPath record); None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    return check_records(read_json(path), str(path))


def read_json(path: Path) -> Any:
    """A JSON file a person may have written or saved (``jsontext.read_json_file``); whatever is
    wrong with it is a DatasetError naming the file (and the line)."""
    return read_json_file(path, DatasetError)


def check_records(obj: Any, where: str) -> list[list[str]]:
    """``obj`` as gold records (lists of XPath strings), or a DatasetError naming ``where``."""
    if not isinstance(obj, list):
        raise DatasetError(f"{where}: expected a JSON list of records, each a list of XPaths")
    out = []
    for k, rec in enumerate(obj, 1):
        if isinstance(rec, str):
            rec = [rec]
        if not isinstance(rec, list) or not rec or not all(isinstance(x, str) for x in rec):
            raise DatasetError(f"{where}: record {k} is not a non-empty list of XPath strings")
        out.append(list(rec))
    return out


def page_id(method: str, url: str, fields: Iterable[dict] | None = None) -> str:
    """A stable page ID derived from the submission (method, URL, sorted fields)."""
    items = sorted((str(f.get("name", "")), str(f.get("value", ""))) for f in (fields or []))
    key = json.dumps([method.upper(), url, items], ensure_ascii=False)
    import hashlib  # here: 3 ms of start-up for every command that reads a dataset

    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


#: A page ID used as a file name as it is: a letter or digit, then letters, digits, ``._-``.
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_ID_LENGTH = 128
#: Names Windows refuses for a file whatever the extension.
_RESERVED = frozenset(["con", "prn", "aux", "nul"] + [f"{d}{i}" for d in ("com", "lpt") for i in range(10)])


def is_safe_id(pid: object) -> bool:
    """Whether ``pid`` can be a file name stem as it is (no ``/``, ``..``, NUL, 128 chars at most)."""
    return (isinstance(pid, str) and len(pid) <= MAX_ID_LENGTH and _SAFE_ID.fullmatch(pid) is not None
            and pid.split(".")[0].lower() not in _RESERVED)


def safe_id(pid: object) -> str:
    """The file name stem of page ID ``pid``: the ID itself when ``is_safe_id``, else its
    letters and digits (at most 64) and a hash of the whole ID ("../../x" -> "x-3f2a...").

    Every path built from an ID (pages/ID.html, gold/ID.txt) goes through this, so an ID read
    from data (a submissions file, a hand-edited submissions.jsonl) never leaves the folder,
    never holds a NUL and never exceeds a file-name limit; a safe ID maps to itself.
    """
    text = pid if isinstance(pid, str) else json.dumps(pid, ensure_ascii=False, default=str)
    if is_safe_id(text):
        return text
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:64].strip("-")
    import hashlib

    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug}-{digest}" if slug else digest


_UNNAMED: set[Path] = set()


def _name_no_page_id(path: Path) -> None:
    """Say once per run that a page file put in ``pages/`` by hand is left out: its name is no page
    ID (``is_safe_id``), so the ID its name gives maps to another file (``safe_id``)."""
    if path in _UNNAMED:
        return
    _UNNAMED.add(path)
    from hwnoise.progress import info

    info(f"hwnoise: warning: {path}: left out, its name is no page ID (letters, digits, '.', '-' and '_', "
         f"at most {MAX_ID_LENGTH} characters); rename it to {safe_id(path.stem)}.html to include it")


def is_within(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether ``path``, symlinks followed, lies inside the folder ``root`` (itself resolved):
    importers refuse files that a symlink or a ``../`` in data would fetch from elsewhere."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL
        return False


def site_of(url: str | None) -> str:
    """The site of a URL: its registrable domain ("news.example.co.uk" -> "example.co.uk"),
    from the public-suffix list tldextract ships (no network); an IP address or a name with
    no public suffix (localhost) is its own site; "" when the URL has no host."""
    if not url:
        return ""
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""
    if not host:
        return ""
    ext = _public_suffixes()(host)
    domain = ".".join(p for p in (ext.domain, ext.suffix) if p) if ext.suffix and ext.domain else ""
    if domain:
        return domain
    return host[4:] if host.startswith("www.") else host


_EXTRACT = None


def _public_suffixes():
    """tldextract on its bundled snapshot of the public-suffix list (never fetched)."""
    global _EXTRACT
    if _EXTRACT is None:
        import tldextract

        _EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None,
                                         include_psl_private_domains=True)
    return _EXTRACT


def _with_id(sub: dict) -> dict:
    """``sub`` with a safe ``id`` (derived when missing; mapped by ``safe_id`` when unsafe, the
    given one kept as ``given_id``). Changes ``sub`` in place and returns it."""
    sub.setdefault("method", "GET")
    sub.setdefault("fields", [])
    pid = sub.get("id")
    if pid is None or pid == "":
        fields = sub["fields"] if isinstance(sub["fields"], list) else []
        sub["id"] = page_id(str(sub["method"]), str(sub.get("action") or sub.get("url") or ""),
                            [f for f in fields if isinstance(f, dict)])
    elif not is_safe_id(pid):
        sub["given_id"] = pid
        sub["id"] = safe_id(pid)
    return sub


@dataclass
class Page:
    """One result page of a dataset, as the stages see it."""

    id: str
    dataset: "Dataset"
    submission: dict = field(default_factory=dict)
    fetch: dict | None = None

    @property
    def url(self) -> str:
        return (self.fetch or {}).get("final_url") or self.submission.get("url", "")

    @property
    def site(self) -> str:
        return self.submission.get("site") or site_of(self.submission.get("url")) or self.dataset.name

    @property
    def html_path(self) -> Path:
        return self.dataset.page_path(self.id)

    @property
    def gold_path(self) -> Path:
        return self.dataset.gold_file(self.id)

    @property
    def http_charset(self) -> str | None:
        """The charset the server declared, when the page was fetched (from the journal)."""
        if not self.fetch:
            return self.submission.get("charset")
        enc = self.fetch.get("http_charset")
        if enc:
            return enc
        headers = {k.lower(): v for k, v in (self.fetch.get("headers") or {}).items()}
        return charset_of(headers.get("content-type"))

    @property
    def records_path(self) -> Path:
        """Optional gold records: a JSON list of records, each a list of XPaths."""
        return self.dataset.path / "records" / f"{self.id}.json"

    def read_html(self) -> bytes:
        """The page's bytes as fetched; a submission not fetched (yet, or its fetch failed) is a
        FileNotFoundError that says so."""
        try:
            return self.html_path.read_bytes()
        except FileNotFoundError as exc:
            if self.id not in {s["id"] for s in self.dataset.submissions()}:
                raise
            error = (self.fetch or {}).get("error")
            why = f"its fetch failed ({error})" if error else "not fetched yet"
            raise FileNotFoundError(exc.errno, f"page {self.id!r} has no page file: {why}; 'hwnoise collect "
                                    "SUBMISSIONS --into DATASET --retry-failed' fetches it", str(self.html_path)) from None

    def read_gold(self) -> str | None:
        return self.gold_path.read_text(encoding="utf-8") if self.gold_path.exists() else None

    def read_records(self) -> list[list[str]] | None:
        """The page's gold records (lists of XPaths), or None when it has none."""
        return read_records_file(self.records_path)

    @property
    def fields(self) -> list[dict]:
        return list(self.submission.get("fields") or [])


def check_distinct(datasets: Iterable["Dataset"]) -> None:
    """A ``DatasetError`` for a dataset folder given twice, or two of one name: reports, tables
    and splits key datasets by name, and such a pair was pooled into one dataset (each page of
    a folder given twice scored twice) and printed twice."""
    seen: dict[str, Dataset] = {}
    for ds in datasets:
        first = seen.setdefault(ds.name, ds)
        if first is ds:
            continue
        if first.path.resolve() == ds.path.resolve():
            raise DatasetError(f"{ds.path}: given twice; give each dataset once")
        raise DatasetError(f"{ds.path}: named {ds.name!r}, as {first.path} is (the name in its dataset.json); "
                           "datasets are told apart by name: rename one ('name' in dataset.json)")


#: A dataset folder's own parts, read back as the dataset (records/*.json says its gold has
#: records): no output of a command goes into them, nor replaces one of its files.
DATASET_PARTS = ("pages", "gold", "records", "probes", "features.parquet", "labels.parquet",
                 "render.parquet", "dataset.json", "submissions.jsonl", "journal.jsonl", "query.json",
                 "probes.jsonl", "render_failed.jsonl")


def dataset_part(path: str | os.PathLike) -> tuple[Path, str] | None:
    """``(dataset folder, part)`` when ``path`` is or lies inside one of a dataset folder's
    ``DATASET_PARTS``, else None."""
    p = Path(path).resolve()
    for child, parent in zip((p, *p.parents), p.parents):
        if child.name in DATASET_PARTS and (parent / "dataset.json").is_file():
            return parent, child.name
    return None


def _utf8_path(path: Path) -> Path:
    """``path``, or a ``DatasetError`` when it is not UTF-8 (a Linux file name may hold any bytes,
    which Python gives as surrogates): dataset.json, the feature table (pyarrow takes UTF-8 paths
    only) and the reports could not name it, and each stage failed with a traceback of its own."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{raw.decode('utf-8', 'backslashreplace')}: the folder's path is not UTF-8 "
                           f"(byte 0x{raw[exc.start]:02x}, from another encoding); rename it with UTF-8 "
                           "characters") from None
    return path


def names(value: Iterable[str] | str) -> list:
    """``value`` as a list of names, one str being one name: a str was iterated letter by
    letter (``read_features("ctd")`` read no column, ``query_terms("value")`` no term)."""
    return [value] if isinstance(value, str) else list(value)


class Dataset:
    """A dataset folder. ``Dataset.create`` makes one, ``Dataset(path)`` opens one."""

    def __init__(self, path: str | os.PathLike):
        self.path = _utf8_path(Path(path))
        if not (self.path / "dataset.json").is_file():
            raise DatasetError(
                f"{self.path}: not a dataset folder (no dataset.json). Make one with "
                "'hwnoise collect', 'hwnoise import' or 'hwnoise demo'."
            )
        from hwnoise.jsontext import read_json_file

        # an editor's save: a BOM, UTF-16; in cp1252 one line naming it (a traceback before)
        self.meta: dict = read_json_file(self.path / "dataset.json", DatasetError)
        if not isinstance(self.meta, dict):
            raise DatasetError(f"{self.path / 'dataset.json'}: not a JSON object")

    # -- creation and metadata ------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike, name: str | None = None, source: str = "",
               notes: str = "", **meta: Any) -> "Dataset":
        """Create (or reopen, keeping its contents) the dataset folder at ``path``."""
        path = _utf8_path(Path(path))
        if path.exists() and not path.is_dir():
            raise DatasetError(f"{path}: exists and is not a folder; give a new or a dataset folder")
        try:
            (path / "pages").mkdir(parents=True, exist_ok=True)
            (path / "gold").mkdir(exist_ok=True)
        except OSError as exc:
            raise DatasetError(f"{path}: cannot create the dataset folder: {exc.strerror or exc}; "
                               "choose a place you can write") from None
        mpath = path / "dataset.json"
        if mpath.exists():
            ds = cls(path)
            if meta or notes or source:
                ds.update_meta(**({"source": source} if source else {}),
                               **({"notes": notes} if notes else {}), **meta)
            return ds
        write_json(mpath, {"name": name or path.name, "source": source, "created": now_iso(),
                           "hwnoise": __version__, "notes": notes, **meta})
        return cls(path)

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.path.name)

    def update_meta(self, **kw: Any) -> None:
        self.meta.update(kw)
        write_json(self.path / "dataset.json", self.meta)

    # -- submissions and journal ----------------------------------------------
    @property
    def submissions_path(self) -> Path:
        return self.path / "submissions.jsonl"

    @property
    def journal_path(self) -> Path:
        return self.path / "journal.jsonl"

    def submissions(self) -> list[dict]:
        """Every submission, first occurrence of each ID, in file order.

        A line without an ``id`` gets the one ``add_submission`` would give it; an ID that is
        not a safe file name is mapped by ``safe_id`` (the given one kept as ``given_id``).
        """
        seen: dict[str, dict] = {}
        for i, sub in enumerate(read_jsonl(self.submissions_path), 1):
            if not isinstance(sub, dict):
                raise DatasetError(f"{self.submissions_path}: record {i} is not a JSON object")
            seen.setdefault(_with_id(sub)["id"], sub)
        return list(seen.values())

    def add_submission(self, sub: dict) -> dict:
        """Record a submission (adding ``id`` and ``site`` when missing) unless its ID is known;
        return the submission as recorded (the first one given, when the ID was known: two URLs
        that mean one submission are fetched as the first was recorded)."""
        sub = dict(sub)
        sub.setdefault("site", site_of(sub.get("url")))
        sub = _with_id(sub)
        if not hasattr(self, "_known"):
            self._known = {s["id"]: s for s in self.submissions()}
        known = self._known.get(sub["id"])
        if known is not None:
            return known
        append_jsonl(self.submissions_path, sub)
        self._known[sub["id"]] = sub
        return sub

    def replace_submissions(self, subs: Iterable[dict]) -> None:
        """Rewrite ``submissions.jsonl`` (atomically) with each of ``subs`` in place of the
        recorded submission of its ID, in its place; later lines of that ID are dropped, the
        other lines kept as they are. For a re-import that gives known pages what an earlier
        run did not (the query that found them): ``add_submission`` keeps the first one given."""
        from hwnoise.outputs import json_line

        new = {sub["id"]: sub for sub in (_with_id(dict(s)) for s in subs)}
        if not new:
            return
        out, done = [], set()
        text = self.submissions_path.read_text(encoding="utf-8-sig", errors="surrogateescape")
        for line in text.splitlines():
            try:
                sub = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:
                sub = None  # kept as it is: read_jsonl says what is wrong with it
            pid = _with_id(dict(sub))["id"] if isinstance(sub, dict) else None
            if pid in new:
                if pid not in done:
                    out.append(json_line(new[pid]))
                    done.add(pid)
                continue
            out.append(line)
        out += [json_line(s) for pid, s in new.items() if pid not in done]
        atomic_write_bytes(self.submissions_path, ("\n".join(out) + "\n").encode("utf-8", "surrogateescape"))
        if hasattr(self, "_known"):
            self._known.update(new)

    def journal(self) -> dict[str, dict]:
        """The last journal line of each submission ID."""
        out: dict[str, dict] = {}
        for rec in read_jsonl(self.journal_path):
            out[rec.get("submission") or rec.get("id")] = rec
        return out

    def append_journal(self, record: dict) -> None:
        append_jsonl(self.journal_path, record)

    # -- probes: what the site shows for a search nothing matches --------------
    @property
    def probes_path(self) -> Path:
        return self.path / "probes.jsonl"

    def probe_path(self, pid: str) -> Path:
        """probes/ID.html, the ID made a safe file name."""
        return self.path / "probes" / f"{safe_id(pid)}.html"

    def write_probe(self, record: dict, body: bytes | None) -> None:
        """A probe's bytes (atomically) and then its journal line (``submission`` = its ID)."""
        if body is not None:
            atomic_write_bytes(self.probe_path(record["submission"]), body)
        append_jsonl(self.probes_path, record)

    def probes(self) -> list[tuple[dict, bytes]]:
        """The probes fetched with success, (journal line, bytes), in the order first fetched."""
        last: dict[str, dict] = {}
        for rec in read_jsonl(self.probes_path):
            if isinstance(rec, dict) and rec.get("submission"):
                last[rec["submission"]] = rec
        out = []
        for pid, rec in last.items():
            path = self.probe_path(pid)
            if not rec.get("error") and path.is_file():
                out.append((rec, path.read_bytes()))
        return out

    # -- pages ----------------------------------------------------------------
    def page_path(self, pid: str) -> Path:
        """pages/ID.html, the ID made a safe file name (``safe_id``): never outside the folder."""
        return self.path / "pages" / f"{safe_id(pid)}.html"

    def gold_file(self, pid: str) -> Path:
        """gold/ID.txt, the ID made a safe file name (``safe_id``)."""
        return self.path / "gold" / f"{safe_id(pid)}.txt"

    def write_page(self, pid: str, data: bytes) -> Path:
        path = self.page_path(pid)
        atomic_write_bytes(path, data)
        return path

    def write_gold(self, pid: str, text: str) -> Path:
        path = self.gold_file(pid)
        atomic_write_text(path, text)
        return path

    def has_records(self) -> bool:
        """Whether any page of the dataset has gold records (``records/ID.json``)."""
        folder = self.path / "records"
        return folder.is_dir() and any(folder.glob("*.json"))

    def write_records(self, pid: str, records: list[list[str]]) -> Path:
        """Gold records of a page (``features.record_gold``): a list of lists of XPaths."""
        path = self.path / "records" / f"{pid}.json"
        path.parent.mkdir(exist_ok=True)
        write_json(path, records)
        return path

    def page(self, pid: str) -> Page:
        """The page of ID ``pid`` (or of that name, its source file's stem, when one page has it):
        a submission or a page file of the folder; any other is a DatasetError naming the folder."""
        subs = {s["id"]: s for s in self.submissions()}
        if pid not in subs and not self.page_path(pid).exists():
            named = [s for s in subs.values() if s.get("name") == pid]
            if len(named) != 1:
                known = [*subs][:3]
                raise DatasetError(f"{self.path}: no page {pid!r} among its {len(subs)} submission(s)"
                                   + (f" (IDs such as {', '.join(map(repr, known))}; Dataset.pages() lists "
                                      "them)" if known else "") if not named else
                                   f"{self.path}: {len(named)} pages are named {pid!r}; give one's ID "
                                   f"({', '.join(repr(s['id']) for s in named[:3])})")
            pid = named[0]["id"]
        return Page(pid, self, subs.get(pid, {"id": pid}), self.journal().get(pid))

    def pages(self) -> Iterator[Page]:
        """Pages that have bytes on disk, in submission order (then any stray page files)."""
        journal = self.journal()
        listed = set()
        for sub in self.submissions():
            pid = sub["id"]
            listed.add(pid)
            if self.page_path(pid).exists():
                yield Page(pid, self, sub, journal.get(pid))
        for p in sorted((self.path / "pages").glob("*.html")):
            if p.stem in listed:
                continue
            if safe_id(p.stem) != p.stem:  # its ID's file is another name: it could not be read
                _name_no_page_id(p)
                continue
            yield Page(p.stem, self, {"id": p.stem}, journal.get(p.stem))

    def unfetched(self) -> list[str]:
        """IDs of submissions without a page file: not fetched yet, or their fetch failed
        (``journal.jsonl`` says which; ``hwnoise collect --retry-failed`` fetches both). ``pages``
        leaves them out."""
        return [sub["id"] for sub in self.submissions() if not self.page_path(sub["id"]).exists()]

    def page_ids(self) -> list[str]:
        return [p.id for p in self.pages()]

    # -- domain query ---------------------------------------------------------
    @property
    def query_path(self) -> Path:
        return self.path / "query.json"

    def query(self) -> list[dict]:
        """The domain query: ``[{term, kind, submissions}]`` ([] when none was written)."""
        if not self.query_path.exists():
            return []
        query = read_json(self.query_path)  # written by hand, maybe saved by an editor in UTF-16
        bad = "not a list" if not isinstance(query, list) else next(
            (f"item {i + 1} is not an object with a string 'term'" for i, t in enumerate(query)
             if not (isinstance(t, dict) and isinstance(t.get("term"), str))), None)
        if bad:
            raise DatasetError(f"{self.query_path}: not a domain query ({bad}); expected a JSON list of "
                               '{"term": "...", "kind": "...", "submissions": [...]} objects '
                               "(fix it, or delete the file for none)")
        return query

    def write_query(self, terms: list[dict]) -> None:
        write_json(self.query_path, terms)

    def query_terms(self, kinds: Iterable[str] | str | None = None) -> list[str]:
        """The domain query's terms, optionally only those of the given kinds (one as a str)."""
        wanted = set(names(kinds)) if kinds else None
        return [t["term"] for t in self.query() if wanted is None or t.get("kind") in wanted]

    # -- features -------------------------------------------------------------
    @property
    def features_path(self) -> Path:
        return self.path / "features.parquet"

    def has_features(self) -> bool:
        return self.features_path.exists()

    def read_features(self, columns: Iterable[str] | str | None = None, *,
                      pages: Iterable[str] | str | None = None,
                      filters=None, arrow: bool = False):
        """The feature table (a file or a folder of part files) as a pandas DataFrame (with
        ``arrow``, as a ``pyarrow.Table``: strings stay in Arrow buffers, a fraction of the
        memory of Python strings).

        Reads only what is asked (Parquet projection and predicate pushdown, so memory
        follows the columns and rows taken, not the table): ``columns`` (names the table
        lacks are left out), ``pages`` (page ids; one column or page may be a str) and ``filters`` (pyarrow's
        ``[(column, op, value), ...]`` form, ANDed with ``pages``).
        """
        import pyarrow.parquet as pq

        path = self.features_path
        self.feature_parts()  # none yet, or an empty folder: the error that says so
        if columns is not None:
            have = set(self.feature_schema().names)
            columns = [c for c in dict.fromkeys(names(columns)) if c in have]
        conds = list(filters or [])
        if pages is not None:
            conds.append(("page", "in", [str(p) for p in names(pages)]))
        try:
            table = pq.read_table(path, columns=columns, filters=conds or None)
        except (OSError, ValueError) as exc:
            raise self.unreadable_features(path, exc) from None
        return table if arrow else table.to_pandas()

    def feature_parts(self) -> list[Path]:
        """The feature table's Parquet files (a folder of part files, or one file), in order."""
        path = self.features_path
        if not path.exists():
            raise DatasetError(f"{self.path}: no features.parquet yet; run 'hwnoise features {self.path}'.")
        if not path.is_dir():
            return [path]
        parts = sorted(path.glob("*.parquet"))
        if not parts:
            raise DatasetError(f"{path}: an empty feature table folder; run 'hwnoise features {self.path}' again.")
        return parts

    def feature_schema(self):
        """The feature table's Arrow schema (its first part's)."""
        import pyarrow.parquet as pq

        first = self.feature_parts()[0]
        try:
            return pq.read_schema(first)
        except (OSError, ValueError) as exc:
            raise self.unreadable_features(first, exc) from None

    def unreadable_features(self, path: Path, exc: Exception) -> DatasetError:
        """The error for a feature table (or one of its parts, ``path``) that cannot be read: a
        run killed while writing it, a disk that failed, a file that is not Parquet."""
        return DatasetError(f"{path}: cannot read the feature table ({exc}); "
                            f"run 'hwnoise features {self.path}' again.")

    # -- node labels without gold (hwnoise label) -------------------------------
    @property
    def labels_path(self) -> Path:
        return self.path / "labels.parquet"

    def read_labels(self):
        """The labels table (``LABEL_COLUMNS`` first, then one ``v_SOURCE`` verdict column per
        automatic source); an empty table when ``hwnoise label`` has not run."""
        import pandas as pd

        if not self.labels_path.exists():
            return pd.DataFrame({c: pd.Series(dtype=t) for c, t in LABEL_COLUMNS.items()})
        # 'hwnoise label --auto' reads this table too (to keep a person's rows): to be told to
        # rerun it, which fails on the same file, left no way out but to find what to delete
        again = (f"move it aside (mv {self.labels_path} {self.labels_path}.bad) and run 'hwnoise label "
                 f"{self.path} --auto' to label the pages again; the labels a person set in it are not kept")
        try:
            table = pd.read_parquet(self.labels_path)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is one clear line
            raise DatasetError(f"{self.labels_path}: cannot read the labels ({exc}); {again}") from None
        missing = [c for c in LABEL_COLUMNS if c not in table.columns]
        if missing:  # another tool's table, or one edited by hand: a KeyError each page, or a traceback
            raise DatasetError(f"{self.labels_path}: not a labels table of hwnoise (no column "
                               f"{', '.join(missing)}; it has {', '.join(map(str, table.columns[:8])) or 'none'}); "
                               f"{again}")
        return table

    def labels_newer(self) -> bool:
        """True when ``labels.parquet`` changed after ``features.parquet`` was written (the
        feature table's ``label`` column is then stale)."""
        if not (self.labels_path.exists() and self.features_path.exists()):
            return False
        return self.labels_path.stat().st_mtime_ns > self.features_path.stat().st_mtime_ns

    def write_labels(self, df) -> Path:
        """Replace the labels table atomically (parquet written to memory, then temp + rename)."""
        import io

        buf = io.BytesIO()
        df.reset_index(drop=True).to_parquet(buf, index=False)
        atomic_write_bytes(self.labels_path, buf.getvalue())
        return self.labels_path

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r})"


#: Columns of ``labels.parquet`` and their dtypes: ``label`` S/N, ``source`` what set it
#: (``auto`` combination, ``person``), ``confidence`` in [0.5, 1], ``set_by`` auto|person,
#: ``time`` ISO 8601, ``checked`` whether a person marked the page checked.
LABEL_COLUMNS: dict[str, str] = {
    "page": "object", "node": "int64", "xpath": "object", "label": "object", "source": "object",
    "confidence": "float64", "set_by": "object", "time": "object", "checked": "bool",
}


