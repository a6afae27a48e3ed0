"""ARFF in and out: feature tables for Weka, and ARFF files users bring from Weka.

The header is written by liac-arff; the data lines are formatted column-wise with pandas, so
a million rows export in seconds. What Weka 3.6.14 needs and Python does not give by default:

- ``Infinity``/``-Infinity`` for infinite numbers and ``?`` for NaN (Weka rejects ``inf``/``nan``);
- a string that is exactly ``?``, empty, or holds quotes, braces, commas, ``%`` or white space is
  quoted (Weka reads a bare ``?`` as missing and a bare brace as a sparse row);
- the class attribute ``result {S,N}`` always declares both values (a table of one class still
  loads, and trains and tests agree on the class indices).
"""
from __future__ import annotations

import io
import os
import re
import sys
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
    if finite.all() and (np.floor(arr) == arr).all() and (np.abs(arr) < 2**53).all():
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


#: pandas before 3.0 parses some decimals one bit off unless asked for round-trip parsing
#: (Python's); 3.0 parses exactly by default and deprecates the option.
_EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def _is_numeric(col: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype))


def _header(relation: str, attributes: list[tuple[str, object]]) -> str:
    from hwnoise import __version__

    relation = re.sub(r"[^\w.\-]+", "_", relation).strip("_") or "hwnoise"
    description = (f"written by hwnoise {__version__}; class attribute {CLASS_ATTRIBUTE}: "
                   "S = noise, N = content")
    lines = liac.ArffEncoder().iter_encode({"relation": relation, "attributes": attributes,
                                            "description": description})
    return "\n".join(lines) + "\n"


def arff_text_chunks(df: pd.DataFrame, features: Iterable[str] = THESIS_FEATURES, page: bool = False,
                     relation: str = "hwnoise", chunk_rows: int = 200_000) -> Iterable[str]:
    """The ARFF file for ``df`` as text chunks (header first, then data lines)."""
    features = list(features)
    missing = [f for f in features if f not in df.columns]
    if missing:
        raise ArffError(f"the feature table has no column(s) {', '.join(missing)}; "
                        f"it has {', '.join(map(str, df.columns))}")
    if page and PAGE_ATTRIBUTE not in df.columns:
        raise ArffError("the feature table has no 'page' column to export")
    if LABEL in df.columns:
        labels = df[LABEL]
        known = labels.dropna().astype(str)
        odd = sorted(set(known.unique()) - set(CLASSES))
        if odd:
            raise ArffError(f"labels must be {'/'.join(CLASSES)} (S = noise, N = content); found {odd[:5]}")
    else:
        labels = pd.Series([None] * len(df), index=df.index, dtype=object)

    attributes: list[tuple[str, object]] = []
    kinds: list[str] = []
    if page:
        attributes.append((PAGE_ATTRIBUTE, "STRING"))
        kinds.append("string")
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
    attributes.append((CLASS_ATTRIBUTE, list(CLASSES)))
    header = _header(relation, attributes)
    # liac-arff leaves a bare '?' and braces unquoted in nominal values: Weka would misread them
    for _, t in attributes:
        if isinstance(t, list):
            liac_form = "{%s}" % ", ".join(liac.encode_string(v) for v in t)
            header = header.replace(liac_form, "{%s}" % ", ".join(quote(v) for v in t), 1)
    yield header

    for start in range(0, len(df), chunk_rows):
        part = df.iloc[start:start + chunk_rows]
        cols: list[list[str]] = []
        if page:
            cols.append(_string_tokens(part[PAGE_ATTRIBUTE]))
        for f, kind in zip(features, kinds[1 if page else 0:]):
            cols.append(_numeric_tokens(part[f], f) if kind == "numeric" else _string_tokens(part[f]))
        cols.append(_string_tokens(labels.iloc[start:start + chunk_rows].astype(object)))
        if len(part):
            yield "\n".join(map(",".join, zip(*cols))) + "\n"


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


def read_arff(path: str | os.PathLike) -> pd.DataFrame:
    """Read an ARFF file into a DataFrame: numeric attributes as floats, nominal ones as
    categoricals (declared order), the class attribute renamed ``label``, ``page`` kept.

    The class is the attribute named ``result``, ``class`` or ``label``, else the last nominal
    attribute; its values must be S (noise) and N (content). Sparse rows are read too.
    Raises ArffError naming the file and line on malformed input.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ArffError(f"{path}: no such ARFF file") from None
    except UnicodeDecodeError:
        text = path.read_bytes().decode("latin-1")
    obj, df = _fast_read(path, text)
    if df is None:
        obj = _liac_decode(path, text)
        data = obj["data"]
        names = [a[0] for a in obj["attributes"]]
        df = pd.DataFrame(data, columns=names) if data else pd.DataFrame({n: [] for n in names})
    attributes = obj["attributes"]
    names = [a[0] for a in attributes]
    class_name = next((n for n in names if n.lower() in _CLASS_NAMES
                       and isinstance(dict(attributes)[n], list)), None)
    if class_name is None:
        nominal = [n for n, t in attributes if isinstance(t, list)]
        if not nominal:
            raise ArffError(f"{path}: no nominal class attribute; hwnoise needs '@attribute "
                            f"{CLASS_ATTRIBUTE} {{S,N}}' (S = noise, N = content)")
        class_name = nominal[-1]
    declared = [str(v) for v in dict(attributes)[class_name]]
    if not set(declared) <= set(CLASSES):
        line = _attribute_line(text, class_name)
        raise ArffError(f"{path}:{line}: the class attribute {class_name!r} has values "
                        f"{{{','.join(declared)}}}; hwnoise needs {{S,N}} (S = noise, N = content)")
    for n, t in attributes:
        if n == class_name:
            continue
        if isinstance(t, list):
            if n == PAGE_ATTRIBUTE:
                df[n] = _objects(df[n])
            else:
                df[n] = pd.Categorical(df[n], categories=[str(v) for v in t])
        elif t in ("NUMERIC", "REAL", "INTEGER"):
            df[n] = pd.to_numeric(df[n], errors="coerce").astype("float64")
        else:
            df[n] = _objects(df[n])
    df = df.rename(columns={class_name: LABEL})
    df[LABEL] = _objects(df[LABEL])
    df.attrs["relation"] = obj.get("relation", "")
    df.attrs["source"] = str(path)
    return df


def _objects(col: pd.Series) -> pd.Series:
    """An object column whose missing values are None (not NaN), however it was parsed."""
    return col.astype(object).where(col.notna(), None)


_DATA_LINE = re.compile(r"^[ \t]*@data[ \t]*\r?$", re.I | re.M)
_PLAIN_DATA = re.compile(r"[\"'{}%\\]")


def _liac_decode(path: Path, text: str) -> dict:
    try:
        return liac.ArffDecoder().decode(text)
    except liac.ArffException as exc:
        raise ArffError(f"{path}:{exc.line}: {_arff_message(exc)}") from None
    except (ValueError, TypeError) as exc:  # a bad escape sequence and the like
        raise ArffError(f"{path}: malformed ARFF ({exc})") from None


def _fast_read(path: Path, text: str) -> tuple[dict | None, pd.DataFrame | None]:
    """liac-arff parses the header; pandas' C parser reads a plain dense data section (no
    quotes, braces, comments or escapes) about 20x faster than liac-arff would. Anything
    unusual or wrong returns (None, None), and the liac-arff path reads the file and names
    the line of any error."""
    m = _DATA_LINE.search(text)
    if m is None:
        return None, None
    data_text = text[m.end():]
    if _PLAIN_DATA.search(data_text):
        return None, None
    obj = _liac_decode(path, text[:m.end()] + "\n")
    attributes = obj["attributes"]
    if not data_text.strip():
        return None, None
    lines = pd.Series(data_text.splitlines(), dtype=object)
    lines = lines[lines.str.strip() != ""]
    if (lines.str.count(",") != len(attributes) - 1).any():  # a short or long row: liac names it
        return None, None
    numeric = {j for j, (_, kind) in enumerate(attributes) if kind in ("NUMERIC", "REAL", "INTEGER")}
    try:
        raw = pd.read_csv(io.StringIO(data_text), header=None, skipinitialspace=True,
                          skip_blank_lines=True, na_values=["?"], keep_default_na=False, engine="c",
                          dtype={j: (np.float64 if j in numeric else object) for j in range(len(attributes))},
                          **_EXACT_FLOATS)
    except (pd.errors.ParserError, ValueError, TypeError):
        return None, None
    if raw.shape != (len(lines), len(attributes)):
        return None, None
    out = {}
    for j, (name, kind) in enumerate(attributes):
        col = raw[j]
        if j in numeric:
            out[name] = col.astype("float64")
            continue
        col = col.where(col.isna(), col.astype(str).str.strip())
        col = col.where(col != "", None)
        if isinstance(kind, list) and not (col.isin([str(v) for v in kind]) | col.isna()).all():
            return None, None
        out[name] = col.astype(object).where(col.notna(), None)
    return obj, pd.DataFrame(out, columns=[a[0] for a in attributes])


def feature_columns(df: pd.DataFrame) -> list[str]:
    """The attributes of a table read from ARFF that can serve as features (not page, label)."""
    return [c for c in df.columns if c not in (PAGE_ATTRIBUTE, LABEL)
            and (_is_numeric(df[c]) or isinstance(df[c].dtype, pd.CategoricalDtype))]


def _arff_message(exc: Exception) -> str:
    msg = str(exc)
    msg = re.sub(r",? (?:at|in) line -?\d+\.?", "", msg).strip()
    msg = re.sub(r"\s*line\s+-?\d+[:.]?", "", msg).strip()
    return msg.rstrip(".") or type(exc).__name__


def _attribute_line(text: str, name: str) -> int:
    pat = re.compile(r"^\s*@attribute\s+['\"]?" + re.escape(name) + r"['\"]?\s", re.I)
    for i, line in enumerate(io.StringIO(text), 1):
        if pat.match(line):
            return i
    return 0
