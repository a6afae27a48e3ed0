"""Context features of a page's nodes: what a node's surroundings say about it.

Per-node features (CTD, link density, ...) transfer poorly across sites (DESIGN.md, "What a
rough probe showed"). These columns add what a node's own numbers lack, all computed within one
page so that they carry over to sites never seen in training:

Record structure (listing and collection pages are many siblings of one shape; the subtree-level
view of the same structure is :mod:`hwnoise.features.record_struct`, whose ``RECORD_MIN`` and
depth levels these columns share). A node's
*signature* is its tag plus its class tokens with digits removed (``li.item``); without the
page's HTML it is the tag alone.

- ``ctx_sig_siblings``: siblings (same parent, itself included) sharing the node's signature.
- ``ctx_sig_share``: share of the parent's characters that those siblings hold together.
- ``ctx_in_record``: 1 when the node or an ancestor is a record (``ctx_sig_siblings`` >= 3).
- ``ctx_record_depth``: depth below the nearest record (0 at the record, -1 outside any).
- ``ctx_record_page_share``: share of the page's characters held by the nearest record's
  group (the record and its same-signature siblings); 0 outside any record.

Position and per-page normalisation:

- ``ctx_text_pos``: ``chars_before`` (already the share of the page's characters before the
  node) divided once more by the page's characters: position scaled down by page size,
  about 1e-5 on a typical page. Meant as the plain share, which ``chars_before`` is;
  kept as computed because the shipped ``general`` model and saved models were trained
  on it (changing it would change their inputs silently).
- ``ctx_ctd_rank``: percentile rank of ``ctd`` within the page (0..1).
- ``ctx_ctd_z``, ``ctx_chars_z``, ``ctx_ld_z``: z-scores within the page of ``ctd``,
  log(1 + ``chars``) and ``link_density``.

Class/id tokens (a hand-listed set; needs the HTML, else NaN):

- ``ctx_cls_noise`` / ``ctx_cls_content``: the node's own class or id holds a noise token
  (nav, menu, footer, header, sidebar, comment, ad, related, share, breadcrumb, cookie, ...) or
  a content token (content, main, article, product, item, result, listing, card, post, ...).
- ``ctx_anc_noise`` / ``ctx_anc_content``: the node or an ancestor does.
- ``ctx_tag_noise`` / ``ctx_tag_content``: the node is inside ``nav``/``header``/``footer``/
  ``aside``/``form`` or ``main``/``article`` (from its tag path).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hwnoise.features.record_struct import RECORD_MIN, by_depth

__all__ = ["CONTEXT_FEATURES", "add_context_features", "context_columns", "NOISE_TOKENS",
           "CONTENT_TOKENS", "SignatureGroups", "signature_groups", "signatures"]

CONTEXT_FEATURES: list[str] = [
    "ctx_sig_siblings", "ctx_sig_share", "ctx_in_record", "ctx_record_depth",
    "ctx_record_page_share", "ctx_text_pos", "ctx_ctd_rank", "ctx_ctd_z", "ctx_chars_z",
    "ctx_ld_z", "ctx_cls_noise", "ctx_cls_content", "ctx_anc_noise", "ctx_anc_content",
    "ctx_tag_noise", "ctx_tag_content",
]

NOISE_TOKENS = ("nav", "menu", "footer", "header", "sidebar", "comment", "ad", "ads", "advert",
                "related", "share", "social", "breadcrumb", "cookie", "banner", "promo", "widget",
                "popup", "modal", "newsletter", "subscribe", "login", "search", "pagination",
                "pager", "masthead", "toolbar", "copyright", "sponsor", "skip")
CONTENT_TOKENS = ("content", "main", "article", "product", "item", "result", "results", "listing",
                  "list", "card", "post", "entry", "story", "body", "text", "grid", "tile",
                  "teaser", "record", "hentry", "blog", "news", "collection")

_SPLIT = re.compile(r"[^a-z]+")
_NOISE = frozenset(NOISE_TOKENS)
_CONTENT = frozenset(CONTENT_TOKENS)
_TAG_NOISE = re.compile(r"/(?:nav|header|footer|aside|form)(?:\[|/|$)")
_TAG_CONTENT = re.compile(r"/(?:main|article)(?:\[|/|$)")


def _tokens(s: str) -> set[str]:
    """Class/id words: lower case, split on anything but letters (``main-nav_2`` -> main, nav)."""
    return {t for t in _SPLIT.split(s.lower()) if t}


def _words_of(classes: list[str]) -> tuple[list[set[str]], list[str]]:
    """Each row's class/id words (``_tokens``) and their sorted join (the signature's suffix),
    each distinct string split once (a page's elements share a few dozen of them)."""
    seen: dict[str, tuple[set[str], str]] = {}
    for c in classes:
        if c not in seen:
            words = _tokens(c)
            seen[c] = (words, ".".join(sorted(words)))
    return [seen[c][0] for c in classes], [seen[c][1] for c in classes]


def _parent_positions(rows: pd.DataFrame) -> np.ndarray:
    """Each row's parent as a row position (-1 for the root or a parent not among the rows)."""
    n = len(rows)
    parent = rows["parent"].to_numpy(dtype=np.int64)
    if "node" in rows.columns:
        node = rows["node"].to_numpy(dtype=np.int64)
        pos = np.full(int(max(node.max(), parent.max(), 0)) + 1, -1, dtype=np.int64)
        pos[node] = np.arange(n)
        return np.where(parent >= 0, pos[np.maximum(parent, 0)], -1)
    return np.where((parent >= 0) & (parent < n), parent, -1)


def level_depths(levels: list[np.ndarray], n: int) -> np.ndarray:
    """Each of the ``n`` rows' depth in the page's tree (0 at the roots), from its ``levels``."""
    depth = np.zeros(n, dtype=np.int64)
    for d, idx in enumerate(levels):
        depth[idx] = d
    return depth


def _levels(parent: np.ndarray) -> list[np.ndarray]:
    """Row positions grouped by depth (roots first): each level's parents are in earlier levels."""
    n = len(parent)
    depth = np.zeros(n, dtype=np.int64)
    todo = parent >= 0
    cur = parent.copy()
    while todo.any():  # one step up per pass: as many passes as the tree is deep
        depth[todo] += 1
        cur = np.where(todo, parent[np.maximum(cur, 0)], -1)
        todo = cur >= 0
    return by_depth(depth)


def _down(parent: np.ndarray, levels: list[np.ndarray], own: np.ndarray, combine) -> np.ndarray:
    """Propagate a value from ancestors to descendants: ``out[i] = combine(out[parent], own[i])``."""
    out = own.copy()
    for idx in levels:
        p = parent[idx]
        has = p >= 0
        if has.any():
            out[idx[has]] = combine(out[p[has]], own[idx[has]])
    return out


def _z(x: np.ndarray) -> np.ndarray:
    sd = np.nanstd(x)
    return (x - np.nanmean(x)) / sd if sd > 0 else np.zeros_like(x)


def _class_strings(rows: pd.DataFrame, walk_or_html: Any, http_charset: str | None,
                   walk: Any = None) -> list[str] | None:
    """Each row's ``class`` and ``id`` joined, from the elements of ``walk`` when it kept its
    tree, else from the page's HTML walked again (the walker's parser and hiding rules); None
    when no HTML is given or the elements do not line up."""
    if walk_or_html is None:
        return None
    html = walk_or_html
    if not isinstance(html, (bytes, str)):
        html = getattr(walk_or_html, "html", None)
        if html is None:
            return None
    from hwnoise.features.elements import shown_elements

    tags = rows["tag"].astype(str).tolist() if "tag" in rows.columns else None
    view = shown_elements(html, http_charset, n_rows=len(rows), tags=tags, walk=walk)
    if not view.aligned:
        return None
    return [f"{el.get('class') or ''} {el.get('id') or ''}" for el in view.elements]


def _signatures(tags: np.ndarray, joined: list[str] | None) -> np.ndarray:
    """Each row's signature: tag + its class/id words without digits (``_words_of``'s joins; the
    tag alone without HTML)."""
    if joined is None:
        return np.asarray(tags).astype(object)
    return np.array([t + "." + j for t, j in zip(tags, joined)], dtype=object)


@dataclass
class SignatureGroups:
    """Siblings sharing a signature (same parent, same tag + class words), per row position."""

    parent: np.ndarray       # the parent's row position (-1 at the root)
    levels: list[np.ndarray]  # row positions by depth, roots first
    group: np.ndarray        # the row's group (0..groups-1)
    count: np.ndarray        # members of the row's group (itself included), float
    share: np.ndarray        # share of the parent's characters the group holds
    group_chars: np.ndarray  # characters per group
    is_record: np.ndarray    # the row is a record: >= RECORD_MIN members, not the root
    record: np.ndarray       # the nearest record, itself or an ancestor (row position, -1: none)


def _groups(parent: np.ndarray, levels: list[np.ndarray], sig: np.ndarray,
            chars: np.ndarray) -> SignatureGroups:
    sig_code = pd.factorize(sig)[0].astype(np.int64)
    key = (parent + 1) * (int(sig_code.max()) + 1) + sig_code
    _, inv, count = np.unique(key, return_inverse=True, return_counts=True)
    group_chars = np.bincount(inv, weights=chars)
    sib = count[inv].astype(float)
    parent_chars = np.where(parent >= 0, chars[np.maximum(parent, 0)], chars)
    share = np.where(parent_chars > 0, group_chars[inv] / np.maximum(parent_chars, 1), 0.0)
    share = np.where(parent >= 0, share, 1.0)
    is_rec = (sib >= RECORD_MIN) & (parent >= 0)
    own = np.where(is_rec, np.arange(len(parent)), -1)
    record = _down(parent, levels, own, lambda up, mine: np.where(mine >= 0, mine, up))
    return SignatureGroups(parent, levels, inv.astype(np.int64), sib, share, group_chars, is_rec, record)


def signatures(rows: pd.DataFrame, walk_or_html: Any = None, *,
               http_charset: str | None = None) -> np.ndarray:
    """Each row's signature (``li.item``; the tag alone without the page's HTML)."""
    classes = _class_strings(rows, walk_or_html, http_charset)
    return _signatures(rows["tag"].astype(str).to_numpy(), None if classes is None else _words_of(classes)[1])


def signature_groups(rows: pd.DataFrame, walk_or_html: Any = None, *, http_charset: str | None = None,
                     sig: np.ndarray | None = None) -> SignatureGroups:
    """The signature groups and nearest records of one page's rows (as the ``ctx_sig_*`` and
    ``ctx_*record*`` columns see them); ``sig`` gives the rows' :func:`signatures` when known."""
    if len(rows) == 0:
        e = np.zeros(0, dtype=np.int64)
        return SignatureGroups(e, [], e, e.astype(float), e.astype(float), e.astype(float), e.astype(bool), e)
    parent = _parent_positions(rows)
    levels = _levels(parent)
    chars = pd.to_numeric(rows["chars"], errors="coerce").fillna(0).to_numpy(dtype=float)
    sig = signatures(rows, walk_or_html, http_charset=http_charset) if sig is None else np.asarray(sig)
    return _groups(parent, levels, sig, chars)


def _class_columns(toks: list[set[str]] | None, parent: np.ndarray,
                   levels: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The class/id token columns, the node's own and its ancestors' (NaN without HTML)."""
    if toks is None:
        return dict.fromkeys(("ctx_cls_noise", "ctx_cls_content", "ctx_anc_noise", "ctx_anc_content"),
                             np.full(len(parent), np.nan))
    cls_noise = np.array([bool(k & _NOISE) for k in toks], dtype=float)
    cls_content = np.array([bool(k & _CONTENT) for k in toks], dtype=float)
    return {
        "ctx_cls_noise": cls_noise,
        "ctx_cls_content": cls_content,
        "ctx_anc_noise": _down(parent, levels, cls_noise, np.maximum),
        "ctx_anc_content": _down(parent, levels, cls_content, np.maximum),
    }


def _record_columns(parent: np.ndarray, levels: list[np.ndarray], sig: np.ndarray,
                    chars: np.ndarray, total: float) -> dict[str, np.ndarray]:
    """The record-structure columns (``ctx_sig_*``, ``ctx_*record*``) from the signature groups."""
    g = _groups(parent, levels, sig, chars)
    # the nearest record (the node or an ancestor, ``g.record``): its group's share, the depth below it
    has = g.record >= 0
    rec = np.maximum(g.record, 0)
    depth = level_depths(levels, len(parent))
    rec_share = np.where(has, g.group_chars[g.group[rec]] / total, np.nan)
    rec_depth = np.where(has, depth - depth[rec], np.nan)
    return {
        "ctx_sig_siblings": g.count,
        "ctx_sig_share": g.share,
        "ctx_in_record": has.astype(float),
        "ctx_record_depth": np.where(np.isnan(rec_depth), -1.0, rec_depth),
        "ctx_record_page_share": np.nan_to_num(rec_share, nan=0.0),
    }


def _position_columns(rows: pd.DataFrame, chars: np.ndarray, total: float) -> dict[str, np.ndarray]:
    """The position and per-page normalisation columns (``ctx_text_pos``, ``ctx_ctd_rank``,
    the z-scores)."""
    n = len(rows)
    before = pd.to_numeric(rows.get("chars_before", pd.Series(0.0, index=rows.index)),
                           errors="coerce").fillna(0).to_numpy(dtype=float)
    ctd = pd.to_numeric(rows["ctd"], errors="coerce").to_numpy(dtype=float) if "ctd" in rows else np.full(n, np.nan)
    ld = (pd.to_numeric(rows["link_density"], errors="coerce").to_numpy(dtype=float)
          if "link_density" in rows else np.full(n, np.nan))
    return {
        "ctx_text_pos": before / total,
        "ctx_ctd_rank": pd.Series(ctd).rank(pct=True).to_numpy(dtype=float),
        "ctx_ctd_z": _z(ctd),
        "ctx_chars_z": _z(np.log1p(chars)),
        "ctx_ld_z": _z(ld),
    }


def _tag_columns(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The tag-path columns, inside a noise or content element by ``xpath`` (0 without it)."""
    xpath = rows["xpath"].astype(str) if "xpath" in rows.columns else pd.Series([""] * len(rows), index=rows.index)
    return {
        "ctx_tag_noise": xpath.str.contains(_TAG_NOISE).to_numpy(dtype=float),
        "ctx_tag_content": xpath.str.contains(_TAG_CONTENT).to_numpy(dtype=float),
    }


def context_columns(rows: pd.DataFrame, walk_or_html: Any = None, *,
                    http_charset: str | None = None, walk: Any = None) -> pd.DataFrame:
    """The :data:`CONTEXT_FEATURES` of one page's rows (same index as ``rows``)."""
    if len(rows) == 0:
        return pd.DataFrame({c: np.zeros(0) for c in CONTEXT_FEATURES}, index=rows.index)
    parent = _parent_positions(rows)
    levels = _levels(parent)
    chars = pd.to_numeric(rows["chars"], errors="coerce").fillna(0).to_numpy(dtype=float)
    tags = rows["tag"].astype(str).to_numpy()
    classes = _class_strings(rows, walk_or_html, http_charset, walk)
    toks, joined = (None, None) if classes is None else _words_of(classes)
    total = max(chars.max(), 1.0)
    out = {
        **_class_columns(toks, parent, levels),
        **_record_columns(parent, levels, _signatures(tags, joined), chars, total),
        **_position_columns(rows, chars, total),
        **_tag_columns(rows),
    }
    return pd.DataFrame(out, index=rows.index)[CONTEXT_FEATURES]


def add_context_features(rows: pd.DataFrame, walk_or_html: Any = None, *,
                         http_charset: str | None = None, walk: Any = None) -> pd.DataFrame:
    """``rows`` (one page) with the :data:`CONTEXT_FEATURES` columns added (replacing any).

    ``walk_or_html`` is the page's HTML (bytes or str) for the class/id columns and the
    class-aware record signature; without it (None, or a walk) those use the tag alone / NaN.
    ``walk``, a walk of that HTML with its tree kept, saves walking it again for them.
    """
    cols = context_columns(rows, walk_or_html, http_charset=http_charset, walk=walk)
    return rows.drop(columns=[c for c in CONTEXT_FEATURES if c in rows.columns]).join(cols)
