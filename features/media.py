"""Media queries, answered for the one screen every page is read for: a desktop browser window.

A style sheet can hold rules for some screens only: ``@media (min-width: 1080px) { ... }``, or a
whole ``<style media="...">``. Sites that lay a page out per width (Medium serves one sheet per
width range, each hiding the copies of the page made for the other widths; shops hide their
mobile menu on wide screens) need the query answered, or every copy is hidden at once, or none.
The walk answers them for ``VIEWPORT`` (the rendered mode lays pages out at the same size, seed
002 §4.2): a colour screen 1,366 × 768 CSS pixels, landscape, one device pixel a CSS pixel, a
mouse (``hover``, ``pointer: fine``), light colours, motion allowed, scripts on.

``matches(query_list)`` follows Media Queries Level 4 for what pages use: media types (``all``,
``screen``; ``print`` and the others are not this screen), ``only`` and ``not``, features joined
by ``and``, ``min-``/``max-`` prefixes and the range forms (``(width >= 768px)``,
``(400px < width <= 700px)``), lengths in ``px``, ``em`` and ``rem`` (16 px), ``pt``, ``cm``,
``mm``, ``in``. A query that cannot be parsed or asks about a feature not listed here does not
match, as a browser treats it (``not`` of it does not match either).
"""
from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["VIEWPORT", "matches"]

#: The screen every page is read for (CSS pixels): the walk's media queries and the rendered mode.
VIEWPORT = (1366, 768)

_PX = {"px": 1.0, "em": 16.0, "rem": 16.0, "pt": 96 / 72, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54,
       "mm": 96 / 25.4, "q": 96 / 101.6, "vw": VIEWPORT[0] / 100, "vh": VIEWPORT[1] / 100}
#: Discrete features and the values this screen has.
_DISCRETE = {
    "orientation": {"landscape"}, "hover": {"hover"}, "any-hover": {"hover"}, "pointer": {"fine"},
    "any-pointer": {"fine"}, "prefers-color-scheme": {"light"}, "prefers-reduced-motion": {"no-preference"},
    "prefers-contrast": {"no-preference"}, "prefers-reduced-transparency": {"no-preference"},
    "forced-colors": {"none"}, "inverted-colors": {"none"}, "scan": {"progressive"},
    "display-mode": {"browser"}, "update": {"fast"}, "overflow-block": {"scroll"},
    "overflow-inline": {"scroll"}, "scripting": {"enabled"}, "color-gamut": {"srgb"},
    "dynamic-range": {"standard"}, "video-dynamic-range": {"standard"},
}
#: Numeric features: their value on this screen and the kind of number they take.
_NUMERIC = {
    "width": (VIEWPORT[0], "length"), "height": (VIEWPORT[1], "length"),
    "device-width": (VIEWPORT[0], "length"), "device-height": (VIEWPORT[1], "length"),
    "aspect-ratio": (VIEWPORT[0] / VIEWPORT[1], "ratio"),
    "device-aspect-ratio": (VIEWPORT[0] / VIEWPORT[1], "ratio"),
    "resolution": (1.0, "resolution"), "device-pixel-ratio": (1.0, "number"),
    "color": (8, "number"), "color-index": (0, "number"), "monochrome": (0, "number"), "grid": (0, "number"),
}
_TYPES_HERE = {"all", "screen"}
_TYPES_KNOWN = _TYPES_HERE | {"print", "speech", "aural", "braille", "embossed", "handheld", "projection",
                              "tty", "tv"}
_FEATURE_RE = re.compile(r"\(([^()]*)\)")
_VALUE_RE = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([a-z%]*)(?:\s*/\s*([+-]?(?:\d+\.?\d*|\.\d+)))?")
_RANGE_RE = re.compile(r"^(?:(.+?)\s*(<=|>=|<|>|=)\s*)?([a-z-]+)\s*(?:(<=|>=|<|>|=)\s*(.+))?$")


@lru_cache(maxsize=1024)
def matches(query_list: str) -> bool:
    """Whether a media query list (``@media``'s prelude, or a ``media`` attribute) holds for
    ``VIEWPORT``'s screen: one of its comma-separated queries does. An empty list holds."""
    text = " ".join(query_list.lower().split())
    if not text:
        return True
    return any(_query(q.strip()) for q in _split_commas(text))


def _split_commas(text: str) -> list[str]:
    """The queries of a list: split on the commas outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def _query(q: str) -> bool:
    """One media query: ``[only | not] type [and (feature)]...`` or ``(feature) [and (feature)]...``."""
    if not q:
        return False  # an empty query among commas matches nothing
    negate = False
    words = q.split(" ", 1)
    if words[0] in ("only", "not") and len(words) == 2 and not words[1].startswith("("):
        negate, q = words[0] == "not", words[1]
    elif words[0] == "not" and len(words) == 2:  # "not (feature)" (Level 4)
        got = _conditions(words[1])
        return False if got is None else not got
    if not q.startswith("("):
        kind, _, rest = q.partition(" ")
        if kind not in _TYPES_KNOWN:
            return False  # an unknown media type is not a screen, even negated
        ok = kind in _TYPES_HERE
        rest = rest.strip()
        if rest:
            if not rest.startswith("and "):
                return False
            got = _conditions(rest[4:])
            if got is None:
                return False
            ok = ok and got
        return ok != negate
    got = _conditions(q)
    return bool(got)


def _conditions(text: str) -> bool | None:
    """``(a) and (b) ...`` (or ``(a) or (b) ...``); None when it cannot be read or asks about a
    feature this module does not know."""
    parts = [p.strip() for p in re.split(r"\s+(and|or)\s+", text.strip())]
    values, joins = parts[0::2], parts[1::2]
    if len(set(joins)) > 1:
        return None  # "and" and "or" mixed without parentheses: invalid
    results = []
    for part in values:
        if part.startswith("not "):
            got = _conditions(part[4:])
            results.append(None if got is None else not got)
            continue
        m = _FEATURE_RE.fullmatch(part)
        if m is None:
            return None
        got = _feature(m.group(1).strip())
        if got is None:
            return None
        results.append(got)
    if any(r is None for r in results):
        return None
    return any(results) if joins and joins[0] == "or" else all(results)


def _feature(text: str) -> bool | None:
    """One feature test: ``name``, ``name: value``, ``min-name: value`` or a range."""
    if ":" in text:
        name, _, value = (s.strip() for s in text.partition(":"))
        prefix = ""
        for p in ("-webkit-min-", "-webkit-max-", "min--moz-", "max--moz-", "min-", "max-"):
            if name.startswith(p):
                prefix, name = p.strip("-").replace("webkit-", "").replace("--moz", ""), name[len(p):]
                break
        if name.startswith("-webkit-"):
            name = name[len("-webkit-"):]
        if name in _DISCRETE and not prefix:
            return value in _DISCRETE[name]
        if name not in _NUMERIC:
            return None
        have, kind = _NUMERIC[name]
        want = _number(value, kind)
        if want is None:
            return None
        if prefix == "min":
            return have >= want - 1e-9
        if prefix == "max":
            return have <= want + 1e-9
        return abs(have - want) < 1e-9
    if text in _DISCRETE:  # boolean context: true unless the value is "none" (or 0)
        return not ({"none", "no-preference"} >= _DISCRETE[text])
    if text in _NUMERIC:
        return _NUMERIC[text][0] != 0
    m = _RANGE_RE.match(text)
    if m is None or m.group(3) not in _NUMERIC or (m.group(2) is None and m.group(4) is None):
        return None
    have, kind = _NUMERIC[m.group(3)]
    checks = []
    if m.group(2) is not None:  # "value op name"
        v = _number(m.group(1), kind)
        if v is None:
            return None
        checks.append(_compare(v, m.group(2), have))
    if m.group(4) is not None:  # "name op value"
        v = _number(m.group(5), kind)
        if v is None:
            return None
        checks.append(_compare(have, m.group(4), v))
    return all(checks)


def _compare(a: float, op: str, b: float) -> bool:
    eps = 1e-9
    return {"<": a < b - eps, "<=": a <= b + eps, ">": a > b + eps, ">=": a >= b - eps,
            "=": abs(a - b) < eps}[op]


def _number(value: str, kind: str) -> float | None:
    """A length in CSS pixels, a ratio, a resolution in dppx or a plain number; None when the
    value is not of that kind."""
    m = _VALUE_RE.fullmatch(value.strip())
    if m is None:
        return None
    num, unit, denom = float(m.group(1)), m.group(2), m.group(3)
    if kind == "ratio":
        if unit:
            return None
        return num / float(denom) if denom is not None and float(denom) else (num if denom is None else None)
    if denom is not None:
        return None
    if kind == "length":
        if not unit:
            return 0.0 if num == 0 else None
        return num * _PX[unit] if unit in _PX else None
    if kind == "resolution":
        return {"dppx": num, "x": num, "dpi": num / 96, "dpcm": num * 2.54 / 96}.get(unit)
    return None if unit else num
