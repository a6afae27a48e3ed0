"""ARFF in and out: feature tables for Weka, and ARFF files users bring from Weka.

The header is written by liac-arff; the data lines are formatted column-wise with pandas, so
a million rows export in seconds. What Weka 3.6.14 needs and Python does not give by default:

- ``Infinity``/``-Infinity`` for infinite numbers and ``?`` for NaN (Weka rejects ``inf``/``nan``);
- a string that is exactly ``?``, empty, or holds quotes, braces, commas, ``%`` or white space is
  quoted (Weka reads a bare ``?`` as missing and a bare brace as a sparse row);
- the class attribute ``result {S,N}`` always declares both values (a table of one class still
  loads, and trains and tests agree on the class indices); labels outside S/N (a user's class
  set) are declared as they are, in their categorical order or sorted.
"""
from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Iterable

import arff as liac
import numpy as np
import pandas as pd

from hwnoise.errors import HwnoiseError
from hwnoise.features.columns import CLASSES, LABEL, THESIS_FEATURES

#: The class attribute's name in every ARFF file hwnoise writes (seed 003, Figure 3.3).
CLASS_ATTRIBUTE = "result"
#: The optional first string attribute naming each row's page.
PAGE_ATTRIBUTE = "page"
#: Class attribute names read_arff recognises (else the last nominal attribute is the class).
_CLASS_NAMES = ("result", "class", "label")

_NEEDS_QUOTES = re.compile(r"""["'\\\s%,{}\x00-\x1f]""")


class ArffError(HwnoiseError):
    """An ARFF file that cannot be read, or a table that cannot be written as ARFF."""


def quote(value: object) -> str:
    """One string value as an ARFF token, quoted and escaped when Weka needs it."""
    s = str(value)
    if s == "" or s == "?" or _NEEDS_QUOTES.search(s):
        # liac-arff's escaping (\\, \', \", \%, \n, \t, octal) is what Java's StreamTokenizer reads.
        return "'" + liac._RE_ESCAPE_CHARS.sub(liac._unescape_sub_callback, s) + "'"
    return s


def _numeric_tokens(col: pd.Series, name: str) -> list[str]:
    """Format a numeric (or boolean) column: shortest round-trip decimals, Infinity, ?."""
    try:
        if pd.api.types.is_bool_dtype(col.dtype):
            arr = col.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            arr = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        raise ArffError(f"column {name!r} is not numeric ({exc}); give it as a nominal "
                        "feature or leave it out of --features") from None
    finite = np.isfinite(arr)
    whole = finite.all() and (np.floor(arr) == arr).all() and (np.abs(arr) < 2**53).all()
    if whole and not np.signbit(arr[arr == 0]).any():  # -0.0 as "0" would lose its sign
        return list(map(str, arr.astype(np.int64).tolist()))  # counts: "3", not "3.0"
    tokens = list(map(repr, arr.tolist()))  # float repr: the shortest string that round-trips
    for i in np.flatnonzero(~finite).tolist():
        v = arr[i]
        tokens[i] = "?" if v != v else ("Infinity" if v > 0 else "-Infinity")
    return tokens


def _string_tokens(col: pd.Series) -> list[str]:
    codes, uniques = pd.factorize(col.astype(object), use_na_sentinel=True)
    quoted = np.asarray([quote(v) for v in uniques] + ["?"], dtype=object)
    return quoted[codes].tolist()  # code -1 (missing) picks the last entry, "?"


def _is_numeric(col: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype))


def _check_columns(df: pd.DataFrame, features: list[str], page: bool) -> None:
    """The table has every feature asked for, and a page column when it is exported."""
    missing = [f for f in features if f not in df.columns]
    if missing:
        raise ArffError(f"the feature table has no column(s) {', '.join(missing)}; "
                        f"it has {', '.join(map(str, df.columns))}")
    if page and PAGE_ATTRIBUTE not in df.columns:
        raise ArffError("the feature table has no 'page' column to export")


def _class_values(df: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """The labels (all missing without a label column) and the class values to declare:
    S/N, or a user's class set (from a Weka ARFF file) in its categorical order or sorted."""
    class_values = list(CLASSES)
    if LABEL not in df.columns:
        return pd.Series([None] * len(df), index=df.index, dtype=object), class_values
    labels = df[LABEL]
    known = labels.dropna().astype(str)
    if set(known.unique()) - set(CLASSES):
        if isinstance(labels.dtype, pd.CategoricalDtype):
            class_values = [str(v) for v in labels.cat.categories]
        else:
            class_values = sorted(set(known.unique()))
    return labels, class_values


def _attributes(df: pd.DataFrame, features: list[str], page: bool,
                class_values: list[str]) -> tuple[list[tuple[str, object]], list[str]]:
    """The ARFF attributes (page, features, class) and each feature's kind, numeric or nominal."""
    attributes: list[tuple[str, object]] = [(PAGE_ATTRIBUTE, "STRING")] if page else []
    kinds: list[str] = []
    for f in features:
        col = df[f]
        if _is_numeric(col):
            attributes.append((f, "NUMERIC"))
            kinds.append("numeric")
        else:
            values = sorted({str(v) for v in col.dropna().unique()})
            if isinstance(col.dtype, pd.CategoricalDtype):
                values = [str(v) for v in col.cat.categories]
            attributes.append((f, values or ["?"]))
            kinds.append("nominal")
    attributes.append((CLASS_ATTRIBUTE, class_values))
    return attributes, kinds


def _header(relation: str, attributes: list[tuple[str, object]]) -> str:
    """The header text: liac-arff's, with the nominal values quoted as Weka needs."""
    from hwnoise import __version__

    description = (f"written by hwnoise {__version__}; class attribute {CLASS_ATTRIBUTE}: "
                   "S = noise, N = content")
    # liac-arff writes a name in double quotes, unescaped, and only when it holds ' %{},': a name
    # with a quote, tab, newline or backslash (a Weka user's attribute) broke the header, so
    # the names are written here, quoted as values are, in place of placeholders
    placeholders = [(f"a{j}", t) for j, (_, t) in enumerate(attributes)]
    lines = liac.ArffEncoder().iter_encode({"relation": "r", "attributes": placeholders,
                                            "description": description})
    header = "\n".join(lines) + "\n"
    # the relation's name as given (a dataset's name with spaces, quotes, %): quoted as values are
    header = header.replace("\n@RELATION r\n", f"\n@RELATION {quote(relation or 'hwnoise')}\n", 1)
    # liac-arff leaves a bare '?' and braces unquoted in nominal values: Weka would misread them
    for _, t in attributes:
        if isinstance(t, list):
            liac_form = "{%s}" % ", ".join(liac.encode_string(v) for v in t)
            header = header.replace(liac_form, "{%s}" % ", ".join(quote(v) for v in t), 1)
    for j, (name, _) in enumerate(attributes):
        header = header.replace(f"\n@ATTRIBUTE a{j} ", f"\n@ATTRIBUTE {quote(name)} ", 1)
    return header


def _data_chunks(df: pd.DataFrame, features: list[str], kinds: list[str], labels: pd.Series,
                 page: bool, chunk_rows: int) -> Iterable[str]:
    """The data lines, ``chunk_rows`` rows a chunk, formatted column by column."""
    for start in range(0, len(df), chunk_rows):
        part = df.iloc[start:start + chunk_rows]
        cols: list[list[str]] = []
        if page:
            cols.append(_string_tokens(part[PAGE_ATTRIBUTE]))
        for f, kind in zip(features, kinds):
            cols.append(_numeric_tokens(part[f], f) if kind == "numeric" else _string_tokens(part[f]))
        cols.append(_string_tokens(labels.iloc[start:start + chunk_rows].astype(object)))
        if len(part):
            yield "\n".join(map(",".join, zip(*cols))) + "\n"


def arff_text_chunks(df: pd.DataFrame, features: Iterable[str] = THESIS_FEATURES, page: bool = False,
                     relation: str = "hwnoise", chunk_rows: int = 20_000) -> Iterable[str]:
    """The ARFF file for ``df`` as text chunks (header first, then data lines, ``chunk_rows``
    rows a chunk: each value of a chunk is a Python string while it is written, about 60 bytes
    a value)."""
    features = list(features)
    _check_columns(df, features, page)
    labels, class_values = _class_values(df)
    attributes, kinds = _attributes(df, features, page, class_values)
    yield _header(relation, attributes)
    yield from _data_chunks(df, features, kinds, labels, page, chunk_rows)


def write_arff(df: pd.DataFrame, path: str | os.PathLike | IO[str] | None,
               features: Iterable[str] = THESIS_FEATURES, page: bool = False,
               relation: str = "hwnoise") -> Path | None:
    """Write ``df`` (feature columns + ``label``) as ARFF to ``path`` ("-" or None: stdout;
    a text stream: that stream). Files are written atomically (temp file + rename)."""
    chunks = arff_text_chunks(df, features, page=page, relation=relation)
    if path is None or str(path) == "-":
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return None
    if hasattr(path, "write"):
        for chunk in chunks:
            path.write(chunk)  # type: ignore[union-attr]
        return None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


_NUMERIC_TYPES = ("NUMERIC", "REAL", "INTEGER")
#: tokens per block of the fast data reader: bounds its memory (about 100 bytes a token)
_BLOCK_TOKENS = 1_000_000
#: the longest line an ARFF file may have: a row of a million numbers is some 10 MiB
MAX_LINE_BYTES = 64 << 20
#: bytes read at a time (at most MAX_LINE_BYTES: a line inside one chunk is never too long)
_READ_CHUNK = 8 << 20
_LINE_END = re.compile(rb"[\r\n]")


@dataclass
class ArffTable:
    """An ARFF file as numpy arrays, as Weka holds it: every numeric and nominal attribute but
    the class is a column of ``X`` (numbers; nominal values as their declared index; NaN for
    ``?``), the class is ``y`` (index into ``classes``, -1 for ``?``), and string attributes
    (such as hwnoise's ``page``) are kept aside in ``strings``. ``weights`` are the rows'
    instance weights (``1,2,S,{0.5}``), None when every row weighs 1; ``weighted_line`` is the
    file line of the first row weighing otherwise."""
    relation: str
    attributes: list[tuple[str, object]]
    names: list[str]
    X: np.ndarray
    nominal: dict[int, list[str]]
    class_name: str
    classes: list[str]
    y: np.ndarray
    strings: dict[str, np.ndarray]
    source: str = ""
    weights: np.ndarray | None = None
    weighted_line: int = 0

    @property
    def labelled(self) -> np.ndarray:
        """Rows whose class is known."""
        return self.y >= 0

    def labels(self) -> np.ndarray:
        """The class of each row as a string (None when missing)."""
        lab = np.asarray(list(self.classes) + [None], dtype=object)
        return lab[np.where(self.y >= 0, self.y, len(self.classes))]


def _class_attribute(attributes: list[tuple[str, object]]) -> str | None:
    """The class: the last attribute when it is nominal (Weka's default), else one named
    result/class/label, else the last nominal attribute."""
    if attributes and isinstance(attributes[-1][1], list):
        return attributes[-1][0]
    kinds = dict(attributes)
    named = next((n for n, _ in attributes if n.lower() in _CLASS_NAMES and isinstance(kinds[n], list)), None)
    if named is not None:
        return named
    nominal = [n for n, t in attributes if isinstance(t, list)]
    return nominal[-1] if nominal else None


def load_arff(path: str | os.PathLike) -> ArffTable:
    """Read an ARFF file into an :class:`ArffTable`: the matrix is built in blocks of rows
    straight from the tokens (no per-column assignment), so a file with a million attributes
    costs about its size in memory. Raises ArffError naming the file and line when malformed."""
    path = Path(path)
    text = _read_text(path)
    text = _weka_header(path, _without_comments(text))
    text, weights = _instance_weights(path, text)
    if _DATA_DECLARED.search(text) is None:  # liac-arff: "Invalid layout" at the last line
        what = "an empty file" if not text.strip() else "no @DATA line"
        raise ArffError(f"{path}: not an ARFF file ({what}): ARFF declares '@RELATION name', one "
                        "'@ATTRIBUTE name type' a line, then '@DATA' and one row of values a line")
    _check_layout(path, text)
    obj, tokens = _fast_tokens(path, text)
    if tokens is None:
        obj = _liac_decode(path, text)
        rows = obj["data"]
        tokens = np.empty((len(rows), len(obj["attributes"])), dtype=object)
        if rows:
            tokens[:] = rows
        blocks = [tokens]
    else:
        blocks = tokens
    attributes = [(str(n), t) for n, t in obj["attributes"]]
    class_name = _class_attribute(attributes)
    if class_name is None:
        raise ArffError(f"{path}: no nominal class attribute (Weka's J48 needs one: the last "
                        f"attribute, e.g. '@attribute {CLASS_ATTRIBUTE} {{S,N}}')")
    t = _table(path, text, obj, attributes, class_name, blocks)
    if weights is not None:
        t.weights, t.weighted_line = weights
    return t


def _check_layout(path: Path, text: str) -> None:
    """Refuse, naming the line as Weka does, what Weka's ArffLoader refuses and liac-arff read
    past: a header line that is no declaration (a note without '%', ``@attributes``) or a
    declaration out of place (no ``@relation`` first, a second one), both dropped without a
    word or called "Invalid layout"; an ``@relation`` without a name (liac-arff: "not enough
    values to unpack"); and a sparse row whose indices are not in increasing order (``{2 S, 0
    1}``: Weka's "indices have to be ordered"; liac-arff took the last value given for an index).
    ``text`` has its comments cut and its lines where the file has them."""
    data = _DATA_DECLARED.search(text)
    lines = text[:data.start()].split("\n")
    relation = False
    for i, line in enumerate(lines, 1):
        words = line.split(None, 1)
        if not words:
            continue
        keyword = words[0].lower()
        if not relation:
            if keyword != "@relation":
                raise ArffError(f"{path}:{i}: keyword @relation expected, read {words[0][:40]!r}: an ARFF "
                                "file opens with '@RELATION name' (after comments, '%' to the line's end)")
            if len(words) < 2:
                raise ArffError(f"{path}:{i}: @relation without a name; write '@RELATION name'")
            relation = True
        elif keyword == "@relation":
            raise ArffError(f"{path}:{i}: a second @relation; an ARFF file declares one, then its attributes")
        elif keyword not in ("@attribute", "@end"):  # @end closes a relational attribute
            raise ArffError(f"{path}:{i}: keyword @attribute or @data expected, read {words[0][:40]!r}"
                            + ("" if keyword.startswith("@") else " (a note in the header starts with '%')"))
    if not relation:
        raise ArffError(f"{path}:{text.count(chr(10), 0, data.start()) + 1}: keyword @relation expected "
                        "before @data: an ARFF file opens with '@RELATION name'")
    start = data.end()
    if text.find("{", start) < 0:  # no sparse row (a dense file: most)
        return
    for row in _SPARSE_ROW.finditer(text, start):  # only the sparse rows, not a copy of every line
        keys = [int(k) for k, _ in liac._RE_SPARSE_KEY_VALUES.findall(row.group()) if k]
        for a, b in zip(keys, keys[1:]):
            if b <= a:
                line = text.count("\n", 0, row.start()) + 1
                raise ArffError(f"{path}:{line}: a sparse row's indices must be in increasing order, "
                                f"as Weka reads them ({b} after {a}); write each index once, in order")


#: a sparse data row: a line whose first character but blanks is '{'
_SPARSE_ROW = re.compile(r"^[ \t]*\{[^\n]*", re.M)


#: a row's instance weight: '{w}' after its values (Weka 3.6: '1,2,S,{0.5}', '{0 1,2 S} {3}');
#: a line that is one brace group is a sparse row
_WEIGHT = re.compile(r"^([^\n]*[^\s,])[ \t,]*\{([^{}\n]*)\}[ \t]*$", re.M)


def _instance_weights(path: Path, text: str) -> tuple[str, tuple[np.ndarray, int] | None]:
    """The text with each row's instance weight ``{w}`` taken off, and the weights (one a row)
    with the line of the first row weighing other than 1; None when every row weighs 1. A weight
    is read with Java's Double.parseDouble, NaN as 1 (as Weka reads them), 0 as 0 (J48 keeps such
    a row among its split points and counts); a negative or infinite one is refused naming its
    line."""
    m = _DATA_LINE.search(text)
    if m is None or text.find("{", m.end()) < 0 or not _WEIGHT.search(text, m.end()):
        return text, None  # no brace after @data (a dense file without weights: most): no regex
    base = text.count("\n", 0, m.end()) + 1
    lines = text[m.end() + 1:].split("\n")
    weights: list[float] = []
    first = 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        w = 1.0
        found = _WEIGHT.match(line) if line.rstrip().endswith("}") else None
        if found:
            lines[i] = found.group(1)
            w = _instance_weight(path, base + i + 1, found.group(2).strip())
        if w != 1.0 and not first:
            first = base + i + 1
        weights.append(w)
    text = text[:m.end() + 1] + "\n".join(lines)
    return text, ((np.asarray(weights), first) if first else None)


def _instance_weight(path: Path, line: int, token: str) -> float:
    try:
        w = _java_double(token)
    except ValueError:
        raise ArffError(f"{path}:{line}: instance weight {{{token}}} is not a number") from None
    if w != w:
        return 1.0                                   # Weka: a weight of NaN is no weight
    if w < 0 or w == math.inf:
        raise ArffError(f"{path}:{line}: instance weight {{{token}}} is negative or infinite "
                        "(J48 takes weights above 0)")
    return w


def _read_text(path: Path) -> str:
    """The file as text (UTF-8, else latin-1; line ends made ``\\n``), read in chunks and
    refused, naming the line, as soon as a line passes ``MAX_LINE_BYTES``: a file of one
    gigantic line (no newline) was held whole, then split and matched by regexes."""
    data = bytearray()
    line_start = 0                                   # where the line being read began
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_READ_CHUNK):
                base = len(data)
                data += chunk
                first = _LINE_END.search(chunk)
                end = base + first.start() if first else len(data)
                if end - line_start > MAX_LINE_BYTES:
                    breaks = (data.count(b"\n", 0, line_start) + data.count(b"\r", 0, line_start)
                              - data.count(b"\r\n", 0, line_start))
                    raise ArffError(f"{path}:{breaks + 1}: a line longer than {MAX_LINE_BYTES >> 20} MiB, the "
                                    "most hwnoise reads (is this an ARFF file, a newline after each row?)")
                if first:
                    line_start = base + max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
    except FileNotFoundError:
        raise ArffError(f"{path}: no such ARFF file") from None
    except IsADirectoryError:
        raise ArffError(f"{path}: is a folder, not an ARFF file") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    del data
    return re.sub(r"\r\n?", "\n", text) if "\r" in text else text


def _table(path: Path, text: str, obj: dict, attributes, class_name: str, blocks) -> ArffTable:
    kinds = [("class" if n == class_name else "numeric" if t in _NUMERIC_TYPES else "date" if t == "DATE"
              else "nominal" if isinstance(t, list) else "string") for n, t in attributes]
    feat_idx = [j for j, k in enumerate(kinds) if k in ("numeric", "nominal", "date")]
    feat_pos = {j: i for i, j in enumerate(feat_idx)}
    n = sum(b.shape[0] for b in blocks)
    X = np.empty((n, len(feat_idx)), dtype=np.float64)
    cj = kinds.index("class")
    classes = [str(v) for v in attributes[cj][1]]
    y = np.empty(n, dtype=np.int64)
    strings = {attributes[j][0]: np.empty(n, dtype=object) for j, k in enumerate(kinds) if k == "string"}
    num_cols = [j for j in feat_idx if kinds[j] == "numeric"]
    # nominal attributes grouped by their value list: one vectorised lookup per group
    groups: dict[tuple[str, ...], list[int]] = {}
    for j in feat_idx:
        if kinds[j] == "nominal":
            groups.setdefault(tuple(str(v) for v in attributes[j][1]), []).append(j)
    start = 0
    for block in blocks:
        rows = slice(start, start + block.shape[0])
        if num_cols:
            X[rows, [feat_pos[j] for j in num_cols]] = _numbers(path, text, block[:, num_cols], start)
        for j in (j for j in feat_idx if kinds[j] == "date"):
            X[rows, feat_pos[j]] = _dates(path, text, block[:, j], obj["dates"][j], attributes[j][0], start)
        for values, cols in groups.items():
            codes = _codes(path, text, block[:, cols], values, start).astype(np.float64)
            codes[codes < 0] = np.nan
            X[rows, [feat_pos[j] for j in cols]] = codes
        for name, arr in strings.items():
            j = [a[0] for a in attributes].index(name)
            col = block[:, j]
            arr[rows] = col
        y[rows] = _codes(path, text, block[:, [cj]], tuple(classes), start)[:, 0]
        start += block.shape[0]
    names = [attributes[j][0] for j in feat_idx]
    nominal = {feat_pos[j]: [str(v) for v in attributes[j][1]] for j in feat_idx if kinds[j] == "nominal"}
    return ArffTable(relation=str(obj.get("relation", "")), attributes=attributes, names=names, X=X,
                     nominal=nominal, class_name=class_name, classes=classes, y=y, strings=strings,
                     source=str(path))


def _first_bad_line(text: str, row: int) -> int:
    """The file line of data row ``row`` (0-based), for an error message."""
    m = _DATA_LINE.search(text)
    if m is None:
        return 0
    base = text.count("\n", 0, m.end()) + 1
    seen = -1
    for i, line in enumerate(text[m.end():].split("\n")):
        stripped = line.strip()
        if stripped and not stripped.startswith("%"):
            seen += 1
            if seen == row:
                return base + i
    return 0


#: Java's Double.valueOf, which Weka reads numbers with: NaN and Infinity (in that case), decimals
#: and hexadecimals (0x1p4) with an optional f/d suffix, ASCII digits only. Python's float also
#: takes inf, nan, 1_000 and other scripts' digits, which Weka refuses; 1d and 0x1p4 it refuses.
_JAVA_NUMBER = re.compile(r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                          r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)")
#: a character outside plain decimals, where Python's float and Java's grammar part
_NOT_DECIMAL = re.compile(r"[^0-9.eE+\-]")


def _java_double(s: str) -> float:
    """One token as Java's Double.valueOf reads it (ValueError when Java refuses it)."""
    if not _JAVA_NUMBER.fullmatch(s):
        raise ValueError(s)
    if s[-1] in "fFdD":  # NaN, Infinity, decimals and exponents end otherwise
        s = s[:-1]
    return float.fromhex(s) if "x" in s or "X" in s else float(s)


def _numbers(path: Path, text: str, tok: np.ndarray, start: int) -> np.ndarray:
    """Numeric tokens (strings, None for missing) as floats, read as Weka reads them."""
    flat = tok.ravel()
    known = np.flatnonzero(~pd.isna(flat))
    vals = flat[known]  # str: both readers leave numbers as text
    out = np.full(flat.shape, np.nan)
    odd = np.zeros(len(vals), dtype=bool)
    if _NOT_DECIMAL.search(",".join(vals.tolist())):  # NaN, Infinity, 1d, 0x1p4, or not a number
        odd = np.asarray([_NOT_DECIMAL.search(v) is not None for v in vals.tolist()], dtype=bool)
    bad = None
    try:
        out[known[~odd]] = vals[~odd].astype(np.float64)  # Python's float: exact, keeps -0.0
    except ValueError:
        bad = next(i for i in np.flatnonzero(~odd) if not _is_float(vals[i]))
    for i in np.flatnonzero(odd):
        if bad is not None and i > bad:
            break
        try:
            out[known[i]] = _java_double(vals[i])
        except ValueError:
            bad = i
    if bad is not None:
        r = start + int(known[bad]) // tok.shape[1]
        raise ArffError(f"{path}:{_first_bad_line(text, r)}: {vals[bad]!r} is not a number (numeric "
                        "attribute)")
    return out.reshape(tok.shape)


#: Weka's date format when the declaration gives none (ISO 8601, local time)
_DATE_DEFAULT = "yyyy-MM-dd'T'HH:mm:ss"
#: ``date`` and its optional format, quoted or one word (which a quote or brace ends), after an
#: attribute's name; Weka ignores what follows on the line
_DATE_TYPE = re.compile(r"""(?i)date(?=\s|$)(?:\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s'",{}]+))?""")
#: the SimpleDateFormat letters read here (numbers only); the others are refused by name
_DATE_LETTERS = {"y": "year", "M": "month", "d": "day of the month", "H": "hour 0-23", "m": "minute",
                 "s": "second", "S": "millisecond"}
_JAVA_LETTERS = {"G": "era", "Y": "week year", "w": "week of the year", "W": "week of the month",
                 "D": "day of the year", "F": "day of the week in the month", "E": "day name",
                 "u": "day number of the week", "a": "am/pm", "k": "hour 1-24", "K": "hour 0-11",
                 "h": "hour 1-12", "z": "time zone", "Z": "time zone", "X": "time zone",
                 "L": "standalone month"}
#: the years whose dates hwnoise reads as Java does: Java's zone tables begin in 1900, its
#: calendar is Julian before 1582, Python's datetime ends in 9999
_DATE_YEARS = (1900, 9999)


@dataclass(frozen=True)
class _DateFormat:
    """A date attribute's format as Java's SimpleDateFormat parses it (lenient off): a regex over
    the value's start (Java ignores what follows) and the field of each group."""
    pattern: str
    regex: re.Pattern
    fields: tuple[tuple[str, int], ...]


#: a pattern's parts: a quote (''), quoted text ('o''clock'), a run of one letter, another character
_PATTERN_PART = re.compile(r"''|'((?:[^']|'')*)'|([A-Za-z])\2*|(.)", re.S)


def _date_format(pattern: str) -> _DateFormat:
    """Compile a SimpleDateFormat pattern: a number field skips spaces and tabs before it and reads
    the digits there, exactly as many as its letters when another field follows it at once
    ('yyyyMMdd'); literals ('-', 'T' quoted) match exactly. ValueError names a letter not read."""
    runs = list(_PATTERN_PART.finditer(pattern))
    parts: list[str] = []
    fields: list[tuple[str, int]] = []
    for k, run in enumerate(runs):
        quoted, letter, other = run.groups()
        if letter is None:
            if other == "'":
                raise ValueError(f"pattern {pattern!r}: a quote is not closed")
            parts.append(re.escape(other if other is not None else
                                   "'" if quoted is None else quoted.replace("''", "'")))
            continue
        n = len(run.group())
        if letter not in _DATE_LETTERS or (letter == "M" and n > 2):
            what = "month name" if letter == "M" else _JAVA_LETTERS.get(letter, "not a Java pattern letter")
            raise ValueError(f"pattern {pattern!r}: {run.group()!r} ({what}) is not read by hwnoise (it "
                             "reads the numbers y, M, MM, d, H, m, s, S and literals)")
        abutting = k + 1 < len(runs) and runs[k + 1].group(2) is not None
        parts.append(r"[ \t]*+(?=.{%d})([0-9]{1,%d}+)" % (n, n) if abutting else r"[ \t]*+([0-9]++)")
        fields.append((letter, n))
    return _DateFormat(pattern, re.compile("".join(parts), re.S), tuple(fields))


def _java_date(fmt: _DateFormat, value: str) -> float:
    """``value`` in ``fmt`` as Weka's ``Attribute.parseDate`` reads it: milliseconds since the
    epoch, the date and time in the local time zone (an hour the clocks repeat is its later
    instant, as in Java). ValueError says why Java would not read it (not in the format, a month
    13, a February 30th, an hour the clocks skip) or hwnoise does not (see ``_DATE_YEARS``)."""
    m = fmt.regex.match(value)
    if m is None:
        raise ValueError("not in that format")
    f = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0, "S": 0}
    for (letter, count), digits in zip(fmt.fields, m.groups()):
        if letter == "y" and count <= 2 and len(digits) == 2:
            raise ValueError("a two-digit year, which Java reads within 80 years of today's date")
        f[letter] = int(digits)
    if not _DATE_YEARS[0] <= f["y"] <= _DATE_YEARS[1]:
        raise ValueError(f"a year outside {_DATE_YEARS[0]}-{_DATE_YEARS[1]}, which hwnoise does not read")
    try:
        if f["S"] > 999:
            raise ValueError
        when = datetime(f["y"], f["M"], f["d"], f["H"], f["m"], f["s"], fold=1)
    except ValueError:
        raise ValueError("no such date or time (Java refuses it)") from None
    seconds = when.timestamp()
    if datetime.fromtimestamp(seconds) != when:
        raise ValueError("an hour the clocks skip in the local time zone (Java refuses it)")
    return float(int(seconds) * 1000 + f["S"])


def _dates(path: Path, text: str, col: np.ndarray, fmt: _DateFormat, name: str, start: int) -> np.ndarray:
    """A date attribute's tokens (None missing) as Weka's numbers, each distinct value read once."""
    codes, uniques = pd.factorize(pd.Series(col, dtype=object), use_na_sentinel=True)
    values = np.empty(len(uniques) + 1)
    values[-1] = np.nan
    for i, v in enumerate(uniques.tolist()):
        try:
            values[i] = _java_date(fmt, str(v))
        except ValueError as exc:
            r = start + int(np.flatnonzero(codes == i)[0])
            raise ArffError(f"{path}:{_first_bad_line(text, r)}: {v!r} is not a date of attribute {name!r} "
                            f"(format {fmt.pattern!r}): {exc}") from None
    return values[codes]


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _codes(path: Path, text: str, tok: np.ndarray, values: tuple[str, ...], start: int) -> np.ndarray:
    """Nominal tokens as value indices (-1 for missing)."""
    flat = pd.Series(tok.ravel(), dtype=object)
    is_missing = flat.isna()
    codes = pd.Index(list(values), dtype=object).get_indexer(flat.to_numpy())
    bad = (codes < 0) & ~is_missing.to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        r = start + i // max(tok.shape[1], 1)
        raise ArffError(f"{path}:{_first_bad_line(text, r)}: {str(flat.iat[i])!r} is not one of the "
                        f"declared values {{{','.join(values[:10])}{',...' if len(values) > 10 else ''}}}")
    return codes.astype(np.int64).reshape(tok.shape)


def read_arff(path: str | os.PathLike) -> pd.DataFrame:
    """Read an ARFF file into a DataFrame: numeric attributes as floats, nominal ones as
    categoricals (declared order), the class attribute renamed ``label``, ``page`` kept.

    The class is the last attribute when nominal (as Weka), else one named ``result``,
    ``class`` or ``label``, else the last nominal attribute; any set of class values.
    Sparse rows are read too. Raises ArffError naming the file and line on malformed input,
    and on instance weights, which only J48 on the file itself takes (:mod:`.arff_train`)."""
    t = load_arff(path)
    if t.weights is not None:
        raise ArffError(f"{path}:{t.weighted_line}: instance weights ('{{w}}' after a row) are taken by "
                        "J48 on this file alone (hwnoise train FILE.arff with j48 and no --test, --features "
                        "or --protocol but weka-cv); this would train as if every row weighed 1")
    return table_frame(t)


def table_frame(t: ArffTable) -> pd.DataFrame:
    """An :class:`ArffTable` as the DataFrame :func:`read_arff` returns, built in one go."""
    pos = {name: i for i, name in enumerate(t.names)}
    n = t.X.shape[0]
    cols: dict[str, object] = {}
    for name, kind in t.attributes:
        if name == t.class_name:
            cols[LABEL] = pd.Series(t.labels(), dtype=object)
        elif name in t.strings:
            cols[name] = pd.Series(t.strings[name], dtype=object)
        elif name in pos and pos[name] in t.nominal:
            codes = t.X[:, pos[name]]
            vals = t.nominal[pos[name]]
            if name == PAGE_ATTRIBUTE:
                lab = np.asarray(list(vals) + [None], dtype=object)
                cols[name] = pd.Series(lab[np.where(np.isnan(codes), len(vals), np.nan_to_num(codes)).astype(np.intp)],
                                       dtype=object)
            else:
                cols[name] = pd.Categorical.from_codes(np.where(np.isnan(codes), -1, codes).astype(np.int64),
                                                       categories=vals)
    if all(name in cols or name in pos and pos[name] not in t.nominal for name, _ in t.attributes) \
            and len(cols) <= 2 and len(t.names) > 1000:
        # a wide numeric file: one float block, then the few other columns
        numeric = [name for name, _ in t.attributes if name in pos and pos[name] not in t.nominal]
        df = pd.DataFrame(t.X[:, [pos[c] for c in numeric]], columns=numeric)
        for name, col in cols.items():
            df[name] = col
        order = [LABEL if name == t.class_name else name for name, _ in t.attributes]
        df = df[order]
    else:
        for name, _ in t.attributes:
            if name in pos and pos[name] not in t.nominal:
                cols[name] = t.X[:, pos[name]]
        order = [LABEL if name == t.class_name else name for name, _ in t.attributes]
        df = pd.DataFrame({c: cols[c] for c in order}, index=pd.RangeIndex(n))
    df.attrs["relation"] = t.relation
    df.attrs["source"] = t.source
    return df


_DATA_LINE = re.compile(r"^[ \t]*@data[ \t]*\r?$", re.I | re.M)
#: the first ``@data`` line, and what follows it on that line (a comment or nothing is fine)
_DATA_DECLARED = re.compile(r"^[ \t]*@data\b[ \t]*([^\r\n]*)", re.I | re.M)


#: a declaration's keyword and the white space after it (Weka takes tabs there)
_KEYWORD_TAB = re.compile(r"^([ \t]*@(?:relation|attribute))[ \t]*\t[ \t]*", re.I | re.M)


def _weka_header(path: Path, text: str) -> str:
    """The text with its header read as Weka reads it, lines where they were: a tab after
    ``@relation``/``@attribute`` made a space (liac-arff splits the keyword off at a space only:
    "not enough values to unpack"), and a first row on the ``@data`` line itself refused (``@data
    1,S``: Weka reads it as a row, liac-arff dropped it without a word)."""
    m = _DATA_DECLARED.search(text)
    if m and m.group(1) and not m.group(1).startswith("%"):
        raise ArffError(f"{path}:{text.count(chr(10), 0, m.start()) + 1}: values on the @data line "
                        f"({m.group(1)[:40]!r}); put the first row on a line of its own")
    end = m.start() if m else len(text)
    if "\t" not in text[:end]:
        return text
    return _KEYWORD_TAB.sub(r"\1 ", text[:end]) + text[end:]


_PLAIN_DATA = re.compile(r"[\"'{}%\\]")


#: a line holding a '%' (a comment, or a '%' in a quoted value)
_LINE_WITH_PERCENT = re.compile(r"^[^\n%]*%[^\n]*", re.M)
#: a line's text up to its first '%' outside quotes, read as Weka's tokenizer reads it: a quote
#: opens a quoted value anywhere, a backslash escapes the next character in it, a line ends it
_BEFORE_COMMENT = re.compile(r"""(?:[^'"%\n]+|'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?)*""")


def _cut_comment(m: re.Match) -> str:
    line = m.group()
    end = _BEFORE_COMMENT.match(line).end()
    return line[:end]


def _without_comments(text: str) -> str:
    """The text with every comment cut, lines where they were: Weka reads a '%' outside quotes as
    the start of a comment to the end of the line, on a data row (``1,2,S % a note``) as in the
    header; liac-arff takes only whole comment lines and refused the row as "Invalid layout"."""
    if "%" not in text:
        return text
    return _LINE_WITH_PERCENT.sub(_cut_comment, text)


#: stands for the values of an empty nominal declaration ``{}`` while liac-arff (which needs a
#: first value) reads the file; replaced by [] afterwards
_NO_VALUES = "\x00hwnoise: no values"


class _DuplicateValue(liac.ArffException):
    def __init__(self, name: str, value: str):
        super().__init__()
        self.message = (f"nominal attribute {name!r} declares the value {value!r} twice (Weka refuses "
                        "duplicate labels)").replace("%", "%%") + ", at line %d."


class _Refused(liac.ArffException):
    def __init__(self, message: str):
        super().__init__()
        self.message = message.replace("%", "%%") + ", at line %d."


class _Decoder(liac.ArffDecoder):
    """liac-arff's decoder, with the nominal declarations Weka 3.6 takes and liac-arff does not:
    an empty ``{}`` (all values missing), and duplicate values refused as Weka refuses them; a
    quoted attribute name is unescaped as Weka unescapes it (``'it\\'s'`` is ``it's``); a date
    attribute is read as a string and its format kept in ``dates`` (attribute index: format)."""

    def __init__(self):
        super().__init__()
        self.dates: dict[int, _DateFormat] = {}

    def _decode_attribute(self, s):
        m = liac._RE_ATTRIBUTE.match(s.split(" ", 1)[1].strip()) if " " in s else None
        date = _DATE_TYPE.match(m.group(2)) if m else None
        if date:  # read as a string, its values made numbers by _table (liac-arff has no dates)
            name = liac._unquote(m.group(1)) if m.group(1)[:1] in ("'", '"') else m.group(1)
            pattern = date.group(1) or _DATE_DEFAULT
            try:
                self.dates[len(self._conversors)] = _date_format(liac._unquote(pattern) or pattern)
            except ValueError as exc:
                raise _Refused(f"date attribute {name!r}: {exc}") from None
            return name, "STRING"
        name, type_ = super()._decode_attribute(s)
        raw, declared = m.groups()
        if raw[:1] in ("'", '"'):  # liac-arff strips the quotes of a name but keeps its escapes
            name = liac._unquote(raw)
        if isinstance(type_, list):
            type_ = _declared_values(type_, declared)
            if not type_:
                type_ = [_NO_VALUES]
            seen: set = set()
            for v in type_:
                if v in seen:
                    raise _DuplicateValue(name, v)
                seen.add(v)
        return name, type_


def _declared_values(values: list, declared: str) -> list:
    """A nominal declaration's values as Weka reads them, where liac-arff gives None: a bare ``?``
    is a value named "?" (``{?,a}``), an empty one (``{a,b,}``) is no value. liac-arff made both
    a value named "None", so a J48 tree on such an attribute grew a branch Weka's has not."""
    if None not in values:
        return values
    inner = declared.strip()[1:-1]
    parts = [p.strip() for p in inner.split(",")] if not any(q in inner for q in "'\"\\") else None
    if parts is None or len(parts) != len(values):  # quoted values: only the empty ones dropped
        return [v for v in values if v is not None]
    return [("?" if p == "?" else None) if v is None else v for v, p in zip(values, parts)
            if v is not None or p == "?"]


def _liac_decode(path: Path, text: str) -> dict:
    dec = _Decoder()
    # liac-arff strips the text's leading blank lines (and the comment lines _without_comments
    # emptied, such as the first line of every ARFF hwnoise writes) before it counts lines
    lead = text[:len(text) - len(text.lstrip("\r\n "))].count("\n")
    try:
        obj = dec.decode(text, return_type=liac.DENSE_GEN)
        # numbers stay text for _numbers, as from the fast reader: liac-arff's INTEGER conversor,
        # int(float(x)), cut 2.5 to 2 (Weka keeps 2.5) and raised OverflowError on 1e400
        for j, (_, t) in enumerate(obj["attributes"]):
            if t in _NUMERIC_TYPES:
                dec._conversors[j] = str
        obj["data"] = list(obj["data"])
        obj["attributes"] = [(n, [] if t == [_NO_VALUES] else "DATE" if j in dec.dates else t)
                             for j, (n, t) in enumerate(obj["attributes"])]
        obj["dates"] = dec.dates
        return obj
    except liac.ArffException as exc:
        line = exc.line if exc.line != -1 else dec._current_line  # raised while reading the rows
        raise ArffError(f"{path}:{line + lead}: {_arff_message(exc)}") from None
    except (ValueError, TypeError) as exc:  # a bad escape sequence and the like
        raise ArffError(f"{path}:{dec._current_line + lead}: malformed ARFF ({exc})") from None


def _fast_tokens(path: Path, text: str) -> tuple[dict | None, list[np.ndarray] | None]:
    """liac-arff parses the header; a plain dense data section (no quotes, braces, comments or
    escapes) is split here into blocks of token rows, each a 2-D object array of at most
    ``_BLOCK_TOKENS`` tokens. Anything unusual returns (None, None), and liac-arff reads the
    file and names the line of any error."""
    m = _DATA_LINE.search(text)
    if m is None:
        return None, None
    data_text = text[m.end():]
    if _PLAIN_DATA.search(data_text):
        return None, None
    obj = _liac_decode(path, text[:m.end()] + "\n")
    width = len(obj["attributes"])
    if not data_text.strip() or width == 0:
        return None, None
    strip = " " in data_text or "\t" in data_text or "\r" in data_text
    lines = [ln for ln in data_text.split("\n") if ln.strip()]
    per_block = max(1, _BLOCK_TOKENS // width)
    blocks = []
    for b in range(0, len(lines), per_block):
        part = lines[b:b + per_block]
        toks = ",".join(part).split(",")
        if len(toks) != len(part) * width:       # a short or long row: liac-arff names it
            return None, None
        arr = np.asarray(toks, dtype=object).reshape(len(part), width)
        del toks
        if strip:
            # a copy: pandas 3 (copy-on-write) hands out a read-only view, written to below
            arr = pd.Series(arr.ravel(), dtype=object).str.strip().to_numpy(dtype=object, copy=True).reshape(arr.shape)
        if (arr == "").any():
            return None, None
        arr[arr == "?"] = None                   # a bare ? is a missing value
        blocks.append(arr)
    return obj, blocks


def feature_columns(df: pd.DataFrame) -> list[str]:
    """The attributes of a table read from ARFF that can serve as features (not page, label)."""
    return [c for c in df.columns if c not in (PAGE_ATTRIBUTE, LABEL)
            and (_is_numeric(df[c]) or isinstance(df[c].dtype, pd.CategoricalDtype))]


def _arff_message(exc: Exception) -> str:
    try:
        msg = str(exc)
    except (TypeError, ValueError):  # liac-arff formats "... line %d" % line over the row's own '%'
        msg = str(getattr(exc, "message", "") or "").replace("line %d", "line 0")
    msg = re.sub(r",? (?:at|in) line -?\d+\.?", "", msg).strip()
    msg = re.sub(r"\s*line\s+-?\d+[:.]?", "", msg).strip()
    return msg.rstrip(".") or type(exc).__name__
