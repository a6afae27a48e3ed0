"""Probes: the site's answer to a search that nothing can match.

Hidden-web crawlers learn what a form's "no results" page looks like by submitting values
no record can hold (Raghavan & Garcia-Molina's HiWE, VLDB 2001: error-page detection;
Madhavan et al., VLDB 2008: result pages with the same signature for different queries carry
no records). ``hwnoise collect`` does the same after a crawl: it resubmits the first
submission of each form action with every free-text field set to a made-up word, and keeps
the answers as *probes* (``probes.jsonl``, ``probes/ID.html``), apart from the pages. The
labelling stage (``hwnoise.labelling.auto``) then knows a crawled page that shows what the
probes show as a page without records.

A field is free text when the form says it is typed into (``type`` text or search; no type,
for URL lists and HAR) and the crawl typed words into it: its values differ and hold letters
(a price or a year field is left as the first submission had it).
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence

from .submissions import make_submission

__all__ = ["TEXT_TYPES", "nonsense_word", "free_text_fields", "probe_submissions"]

#: Form field types whose values a user types.
TEXT_TYPES = ("text", "search")


def nonsense_word(seed: str, k: int) -> str:
    """A made-up word no record holds: consonants only, from a hash (the same in every run)."""
    digest = hashlib.sha256(f"{seed}\x1f{k}".encode()).digest()
    letters = "bcdfghjklmnpqrstvwxz"
    return "zq" + "".join(letters[b % len(letters)] for b in digest[:10])


def free_text_fields(subs: Sequence[dict]) -> set[str]:
    """Names of the fields a user types into, over one form's submissions."""
    values: dict[str, set[str]] = {}
    for sub in subs:
        for f in sub.get("fields") or ():
            if f.get("type") in (*TEXT_TYPES, None):
                values.setdefault(str(f.get("name")), set()).add(str(f.get("value") or ""))
    return {n for n, vs in values.items()
            if len(vs) > 1 and any(any(c.isalpha() for c in v) for v in vs)}


def probe_submissions(subs: Sequence[dict], per_action: int = 2) -> list[dict]:
    """``per_action`` probes for each form action of ``subs`` (none for an action without a
    free-text field): its first submission with every free-text field a nonsense word."""
    by_action: dict[tuple[str, str], list[dict]] = {}
    for sub in subs:
        key = (str(sub.get("method", "GET")).upper(), str(sub.get("action") or sub.get("url") or ""))
        by_action.setdefault(key, []).append(sub)
    out: list[dict] = []
    for (method, action), group in by_action.items():
        names = free_text_fields(group)
        first = group[0]
        fields = first.get("fields") or []
        if not names or not first.get("action") or not any(f.get("name") in names for f in fields):
            continue
        for k in range(per_action):
            word = nonsense_word(f"{method} {action}", k)
            filled = [{**f, "value": word} if f.get("name") in names else dict(f) for f in fields]
            out.append(make_submission(method, first["action"], filled, enctype=first.get("enctype"),
                                       charset=first.get("charset")))
    return out
