"""The domain query (seed 003 §3.1): the terms of every submission's field names, values and
visible labels (§5.1), repeats dropped, each term kept with its kind and the submissions it
came from, so that features/ can choose which kinds to match.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote_plus

from hwnoise.dataset import Dataset, page_id
from hwnoise.text import tokenize

_SEPARATORS = re.compile(r"[_\-./\\|:;,+=&?#@~]+")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: field types whose values no person typed or saw (tokens, session ids)
_UNSEEN_VALUE_TYPES = {"hidden", "password"}


def _url_decode(text: str) -> str:
    for _ in range(3):  # doubly encoded values occur
        if not _PERCENT.search(text) and "+" not in text:
            break
        decoded = unquote_plus(text)
        if decoded == text:
            break
        text = decoded
    return text


def _split_case(word: str) -> str:
    """Spaces at camelCase, ACRONYMWord, letter/digit boundaries: "itemName2HTMLPage" ->
    "item Name 2 HTML Page"."""
    out = []
    n = len(word)
    for i, ch in enumerate(word):
        if i:
            prev = word[i - 1]
            nxt = word[i + 1] if i + 1 < n else ""
            if ((prev.islower() and ch.isupper())
                    or (prev.isalpha() and ch.isdigit()) or (prev.isdigit() and ch.isalpha())
                    or (prev.isupper() and ch.isupper() and nxt.islower())):
                out.append(" ")
        out.append(ch)
    return "".join(out)


def split_terms(text: str | None, *, split_case: bool = True) -> list[str]:
    """The terms of one field name, value or label, in order (repeats kept).

    URL-decoded; ``item_name`` -> item, name; ``camelCase`` -> camel, case; numbers are
    terms of their own (``isbn13`` -> isbn, 13); then the one tokeniser (NFKC, case-folded).
    ``split_case=False`` keeps words whole ("McDonald", "iPhone13"), as the query does for
    values and labels, which are matched against page text as a person wrote them.
    """
    if not text:
        return []
    text = _url_decode(str(text))
    text = _SEPARATORS.sub(" ", text)
    if split_case:
        text = " ".join(_split_case(w) for w in text.split())
    return tokenize(text)


def _sub_id(sub: dict) -> str:
    return sub.get("id") or page_id(sub.get("method", "GET"), sub.get("action") or sub.get("url", ""),
                                    sub.get("fields") or [])


def build_query(submissions: Iterable[dict]) -> list[dict]:
    """``[{term, kind, submissions}]``: one entry per (term, kind), in order of first
    appearance, listing the IDs of the submissions it came from.

    Kinds: ``name`` (HTML field names, split at camelCase and digits), ``value`` (values sent; hidden and password
    values, which no person typed, are left out), ``visible_label`` (the label a person sees).
    """
    entries: dict[tuple[str, str], dict] = {}
    seen: dict[tuple[str, str], set] = {}
    for sub in submissions:
        sid = _sub_id(sub)
        for f in sub.get("fields") or []:
            sources = [("name", f.get("name"))]
            if str(f.get("type") or "").lower() not in _UNSEEN_VALUE_TYPES:
                sources.append(("value", f.get("value")))
            sources.append(("visible_label", f.get("label")))
            for kind, text in sources:
                for term in split_terms(text, split_case=kind == "name"):
                    key = (term, kind)
                    entry = entries.get(key)
                    if entry is None:
                        entry = entries[key] = {"term": term, "kind": kind, "submissions": []}
                        seen[key] = set()
                    if sid not in seen[key]:
                        seen[key].add(sid)
                        entry["submissions"].append(sid)
    return list(entries.values())


def write_domain_query(dataset: Dataset) -> list[dict]:
    """Build the domain query of every submission in ``dataset`` and write ``query.json``
    (left untouched when it already holds exactly that query)."""
    query = build_query(dataset.submissions())
    try:
        unchanged = dataset.query_path.exists() and dataset.query() == query
    except Exception:  # noqa: BLE001 - an unreadable query.json is simply rewritten
        unchanged = False
    if not unchanged:
        dataset.write_query(query)
    return query
