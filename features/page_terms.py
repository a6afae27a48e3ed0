"""A page's own query, read from the page, for pages that came from no form.

QueryScore, matches and own QueryScore count the domain query's terms and the page's own
submission terms; a page of a public benchmark (NEXT-EVAL, WCXB) has neither, so those columns
are zero on every node. ``page_terms`` derives terms from the page itself, from the sources
named:

- ``title``: the words of ``<title>``, less the site-name part (the last of two or more parts
  split at `` | ``, `` - ``, `` – ``, `` — ``, ``//``, `` :: ``, `` » ``, and any part whose
  words are all in the URL's host);
- ``inputs``: the values of text and search ``<input>`` elements (a search box echoes the query);
- ``url``: the values of the URL's query string;
- ``h1``: the words of the first ``<h1>``.

Words are ``hwnoise.text.tokenize``'s, less English stopwords (jusText's list) and one-letter
words. PROTOTYPE: off unless ``HWNOISE_PAGE_TERMS=title,inputs,url,h1`` is set; the walk
(``features.walk.walk_page``) reads it, so features, evaluate and extract all see it.
"""
from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlsplit

from hwnoise.text import tokenize

__all__ = ["SOURCES", "ENV", "page_terms", "sources_from_env"]

SOURCES = ("title", "inputs", "url", "h1")
ENV = "HWNOISE_PAGE_TERMS"
_SEPARATORS = re.compile(r"\s+[|\-\u2013\u2014:\u00bb\u00b7]+\s+|\s*\|\s*|\s*//\s*")
_TEXT_INPUTS = frozenset(("", "text", "search"))


def sources_from_env() -> tuple[str, ...]:
    """The sources ``HWNOISE_PAGE_TERMS`` names (empty: off); an unknown one is an error."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return ()
    got = tuple(s.strip().lower() for s in raw.split(",") if s.strip())
    bad = [s for s in got if s not in SOURCES]
    if bad:
        raise ValueError(f"{ENV}={raw!r}: unknown source(s) {', '.join(bad)}; choose from {', '.join(SOURCES)}")
    return got


@functools.lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    import justext

    return frozenset(w.casefold() for w in justext.get_stoplist("English"))


def _title_words(title: str, host_words: set[str]) -> list[str]:
    parts = [p for p in _SEPARATORS.split(title) if p.strip()]
    if len(parts) > 1:
        parts = parts[:-1]  # the site's name, as most titles end
    kept = [p for p in parts if not (host_words and set(tokenize(p)) <= host_words)]
    return [w for p in (kept or parts) for w in tokenize(p)]


def page_terms(root, sources: Sequence[str], url: str | None = None) -> list[str]:
    """The page's terms from ``sources`` (see the module), read from its parsed tree ``root``."""
    words: list[str] = []
    split = urlsplit(url) if url and "://" in url else None
    if "title" in sources:
        t = root.find("head/title")
        t = t if t is not None else root.find(".//title")
        if t is not None:
            host = set(tokenize((split.hostname or "").replace(".", " "))) if split else set()
            words += _title_words(" ".join("".join(t.itertext()).split()), host)
    if "inputs" in sources:
        for el in root.iter("input"):
            v = el.get("value")
            if v and (el.get("type") or "").strip().lower() in _TEXT_INPUTS:
                words += tokenize(v)
    if "url" in sources and split is not None:
        for _k, v in parse_qsl(split.query):
            words += tokenize(v)
    if "h1" in sources:
        h = next(root.iter("h1"), None)
        if h is not None:
            words += tokenize(" ".join(h.itertext()))
    stop = _stopwords()
    return [w for w in dict.fromkeys(words) if len(w) > 1 and w not in stop]
