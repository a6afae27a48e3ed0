"""The measures of a walk, in one place, over parallel arrays of its rows (numpy).

Both the plain walk (``features.walk``) and the rendered re-measure
(``features.rendered``, the walk without what the browser hides) describe a page
as rows in document order with a ``parent`` array, and call ``tree_measures`` to
get every measure (DESIGN.md "The measures", seed 003 §2.1.5 and §3.2; the
column meanings are documented in ``features.walk``). Subtree sums are
prefix-sum differences over the document-order rows, children sums and
QueryScore use ``numpy.add.at``: linear in the size of the page.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hwnoise.features import native

__all__ = ["subtree_sizes", "subtree_last", "subtree_sum", "query_scores",
           "composite_text_density", "sibling_structure", "tree_measures", "tag_codes", "tag_factor",
           "TAG_VOCABULARY", "Utf8Column"]


class Utf8Column:
    """A column of strings laid out as an Arrow string array: ``offsets`` (int32, one more than
    rows, bytes) into ``data`` (UTF-8, bytes). The compiled walk makes the features stage's
    xpath, tag path and text columns this way (``walk_page(..., utf8_columns=True)``), with no
    str per row; the stage hands the two buffers to Arrow as they are. ``tolist`` gives the
    strs."""

    __slots__ = ("offsets", "data")

    def __init__(self, offsets: bytes, data: bytes):
        self.offsets, self.data = offsets, data

    def __len__(self) -> int:
        return len(self.offsets) // 4 - 1

    def tolist(self) -> list[str]:
        off = np.frombuffer(self.offsets, dtype=np.int32).tolist()
        data = self.data
        return [data[a:b].decode("utf-8") for a, b in zip(off, off[1:])]


#: Fixed tag vocabulary for ``tag_code`` (1-based; 0 = any other tag). Append only.
TAG_VOCABULARY: list[str] = [
    "body", "div", "span", "p", "a", "ul", "ol", "li", "dl", "dt", "dd",
    "table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "footer", "nav", "aside", "main",
    "article", "section", "form", "input", "button", "label", "select", "option", "textarea",
    "img", "figure", "figcaption", "br", "hr", "strong", "b", "em", "i", "u", "small",
    "sup", "sub", "font", "center", "blockquote", "pre", "code", "address", "time", "abbr",
    "cite", "q", "mark", "picture", "video", "audio", "fieldset", "legend", "details",
    "summary", "menu", "object", "embed", "svg", "center", "big", "s", "strike", "tt",
    "var", "kbd", "samp", "ins", "del", "dfn", "bdi", "bdo", "wbr", "area", "map", "nobr",
    "frameset", "frame", "marquee", "col", "colgroup", "optgroup", "output", "progress",
    "meter", "dialog", "data", "ruby", "rt", "rp", "hgroup", "search",
]
_TAG_CODE: dict[str, int] = {}
for _k, _t in enumerate(TAG_VOCABULARY, 1):
    _TAG_CODE.setdefault(_t, _k)


def tag_codes(tags: Sequence[str], factor: tuple[np.ndarray, list[str]] | None = None) -> np.ndarray:
    """``tag_code`` of each tag: its 1-based index in ``TAG_VOCABULARY``, 0 for any other.
    ``factor`` is ``tag_factor(tags)`` when the caller has it."""
    codes, uniq = factor if factor is not None else tag_factor(tags)
    get = _TAG_CODE.get
    return np.array([get(t, 0) for t in uniq], dtype=np.int64)[codes] if uniq else np.zeros(0, np.int64)


def tag_factor(tags: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """``(codes, distinct)``: each tag's index into the list of the distinct tags (a page has
    a few dozen), so per-tag work runs once per distinct tag and numpy does the rest."""
    uniq = list(dict.fromkeys(tags))
    index = {t: k for k, t in enumerate(uniq)}
    return np.fromiter(map(index.__getitem__, tags), dtype=np.int64, count=len(tags)), uniq


def subtree_sizes(parent) -> np.ndarray:
    """Rows in each row's subtree (itself included), summed bottom-up in one reverse pass
    (rows are in document order, so every child comes after its parent)."""
    parents = parent.tolist() if isinstance(parent, np.ndarray) else list(parent)
    n = len(parents)
    size = [1] * n
    for i in range(n - 1, 0, -1):
        size[parents[i]] += size[i]
    return np.asarray(size, dtype=np.int64)


def subtree_last(parent) -> np.ndarray:
    """Index of each row's last descendant, for rows in document order (``PageWalk.last``
    for a parent array alone): row i's subtree is rows ``i .. last[i]``."""
    return np.arange(len(parent), dtype=np.int64) + subtree_sizes(parent) - 1


def subtree_sum(values: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Σ of ``values`` over each row's subtree (rows ``i .. last[i]``)."""
    cs = np.concatenate(([0], np.cumsum(values)))
    return cs[last + 1] - cs[np.arange(len(last))]


def query_scores(parent: np.ndarray, own_matches: np.ndarray) -> np.ndarray:
    """Σ over text nodes below each row of matches / distance (own text at distance 1)."""
    qs = np.zeros(len(parent), dtype=np.float64)
    cur = np.flatnonzero(own_matches)
    if not len(cur):
        return qs
    m = np.asarray(own_matches)[cur].astype(np.float64)
    dist = 1.0
    while len(cur):
        np.add.at(qs, cur, m / dist)
        cur = parent[cur]
        keep = cur >= 0
        cur, m = cur[keep], m[keep]
        dist += 1.0
    return qs


def composite_text_density(c, t, lc, lt) -> np.ndarray:
    """CETD's composite text density (seed 003 §2.1.5), zero denominators as 1."""
    c = c.astype(np.float64)
    lc = lc.astype(np.float64)
    t1 = np.where(t == 0, 1, t).astype(np.float64)
    lc1 = np.where(lc == 0, 1.0, lc)
    lt1 = np.where(lt == 0, 1, lt).astype(np.float64)
    nonlink = c - lc
    nonlink1 = np.where(nonlink == 0, 1.0, nonlink)
    cb, lcb = (c[0], lc[0]) if len(c) else (0.0, 0.0)
    cb1 = cb if cb else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        extra = (c / nonlink1) * lc + (lcb / cb1) * c
        ratio = (c / lc1) * (t1 / lt1)
        return _ctd_from_parts(extra + math.e, extra == 0, np.where(ratio > 0, ratio, 1.0), c / t1, c == 0)


def _ctd_from_parts(arg: np.ndarray, extra_zero: np.ndarray, ratio1: np.ndarray, cdt: np.ndarray,
                    c_zero: np.ndarray) -> np.ndarray:
    """CTD from its parts, the logs in numpy (a C log may differ from numpy's in the last bit):
    ``arg`` = extra + e, ``ratio1`` the ratio (1 where not positive), ``cdt`` = C / T."""
    with np.errstate(divide="ignore", invalid="ignore"):
        # ln(e) is exactly 1 only on some of numpy's log paths (1.24's scalar path gives
        # 0.9999999999999999, whose ln is -1e-16, not 0): no links at all means ln(ln(e)) = 0
        b = np.log(arg)
        b[extra_zero] = 1.0
        lnb = np.log(b)
        lnb[lnb == 0] = 1.0
        ctd = cdt * np.log(ratio1) / lnb
    ctd[c_zero] = 0.0
    return ctd


def _tree_tail(chars, tags_, link_chars, link_tags, parent, prior):
    """The columns of ``tree_measures`` after the sums (ctd, td, link_density, position,
    chars_before, density_sum, parent_ctd), their arithmetic compiled (``features/_walk.c``
    ``tree_tail``, ``ctd_tail``: the numpy code's operations in its order, so the same
    doubles; tests/test_measures_compiled.py) and CTD's logs in numpy; None when not built
    or the rows are not a tree in document order."""
    n = len(parent)
    if native.ext is None or not n:
        return None
    ins = np.empty((6, n), dtype=np.int64)
    for k, v in enumerate((chars, tags_, link_chars, link_tags, parent, prior)):
        ins[k] = v
    outs = np.empty((7, n), dtype=np.float64)
    masks = np.empty((2, n), dtype=np.bool_)
    if not native.ext.tree_tail(ins, outs, masks):
        return None
    arg, ratio1, cdt, td, link_density, position, chars_before = outs
    ctd = _ctd_from_parts(arg, masks[0], ratio1, cdt, masks[1])
    sums = np.empty((2, n), dtype=np.float64)
    if not native.ext.ctd_tail(ins[4], ctd, sums):
        return None
    return ctd, td, link_density, position, chars_before, sums[0], sums[1]


def sibling_structure(parent: np.ndarray, tags: Sequence[str],
                      factor: tuple[np.ndarray, list[str]] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(nth, children, sibling_same_tag)``: each row's 1-based position among its shown
    siblings with the same tag, its shown element children, and the share of its siblings
    that have its tag (0 for an only child and for body). ``factor`` as in ``tag_codes``."""
    n = len(parent)
    codes, uniq = factor if factor is not None else tag_factor(tags)
    key = parent * (len(uniq) or 1) + codes
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1]))) if n else np.zeros(0, np.int64)
    group_size = np.diff(np.concatenate((starts, [n])))
    group_of = np.repeat(np.arange(len(starts)), group_size)
    nth = np.empty(n, dtype=np.int64)
    nth[order] = np.arange(n) - starts[group_of] + 1
    same = np.empty(n, dtype=np.int64)
    same[order] = group_size[group_of]
    children = np.bincount(parent[1:], minlength=n) if n > 1 else np.zeros(n, dtype=np.int64)
    sib = np.where(parent >= 0, children[np.maximum(parent, 0)] - 1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sibling_same = np.where(sib > 0, (same - 1) / np.where(sib > 0, sib, 1), 0.0)
    return nth, children.astype(np.int64), sibling_same.astype(np.float64)


def xpaths(parent: np.ndarray, tags: Sequence[str], nth: np.ndarray, root_path: str, *,
           depth: np.ndarray | None = None, factor: tuple[np.ndarray, list[str]] | None = None,
           utf8: bool = False) -> tuple[list[str] | Utf8Column, list[str] | Utf8Column]:
    """``(xpath, tag path)`` of each row: ``/html/body/div[2]/p[1]`` (positions among shown
    siblings of the same tag) and the same without positions (``/html/body/div/p``).

    Each row's string is its parent's plus a step (``/tag[k]``) made once per distinct tag
    and position; ``depth`` is accepted for callers that pass it and not needed. With
    ``utf8`` and the compiled helpers, both come as ``Utf8Column`` (no str per row); lists of
    str otherwise, the reference."""
    n = len(tags)
    if not n:
        return [], []
    parent = np.asarray(parent, dtype=np.int64)
    codes, uniq = factor if factor is not None else tag_factor(tags)
    if utf8 and native.ext is not None:  # the same strings as Arrow buffers (features/_walk.c)
        got = native.ext.xpaths_utf8(np.ascontiguousarray(parent), np.ascontiguousarray(codes, dtype=np.int64),
                                     [str(t) for t in uniq], np.ascontiguousarray(nth, dtype=np.int64), root_path)
        if got is not None:
            return Utf8Column(got[0], got[1]), Utf8Column(got[2], got[3])
    if native.ext is not None:  # the same strings in one compiled pass (features/_walk.c)
        got = native.ext.xpaths(np.ascontiguousarray(parent), np.ascontiguousarray(codes, dtype=np.int64),
                                [str(t) for t in uniq], np.ascontiguousarray(nth, dtype=np.int64), root_path)
        if got is not None:
            return got[0], got[1]
    slash = np.array(["/" + str(t) for t in uniq], dtype=object)[codes]
    nth = np.asarray(nth, dtype=np.int64)
    pos = np.array([f"[{k}]" for k in range(int(nth.max()) + 1)], dtype=object)[nth]
    steps = (slash + pos).tolist()
    slashes = slash.tolist()
    if native.ext is not None:  # the same loop, compiled (features/_walk.c), for rows in document order
        parent_c = np.ascontiguousarray(parent)
        xp = native.ext.paths(parent_c, steps, root_path)
        if xp is not None:
            return xp, native.ext.paths(parent_c, slashes, root_path)
    xp = [root_path] * n
    tp = [root_path] * n
    for i, p, st, sl in zip(range(1, n), parent[1:].tolist(), steps[1:], slashes[1:]):
        xp[i] = xp[p] + st
        tp[i] = tp[p] + sl
    return xp, tp


def _tree_sums(parent, last, own_chars, own_link_chars, is_a, factor, matches, own_matches):
    """``subtree_sum`` of own_chars, own_link_chars and is_a, ``sibling_structure`` and both
    ``query_scores`` in one compiled pass (``features/_walk.c`` ``tree_sums``, equal to the
    numpy functions above to the bit: tests/test_measures_compiled.py): ``((chars,
    link_chars, link_tags, nth, children), (sibling_same_tag, query_score, own_query_score))``,
    or None when not built or the rows are not a tree in document order."""
    n = len(parent)
    if native.ext is None or not n:
        return None
    ins = np.empty((8, n), dtype=np.int64)
    for k, v in enumerate((parent, last, own_chars, own_link_chars, is_a, factor[0], matches, own_matches)):
        ins[k] = v
    ints = np.empty((5, n), dtype=np.int64)
    floats = np.empty((3, n), dtype=np.float64)
    if not native.ext.tree_sums(ins, ints, floats, len(factor[1])):
        return None
    return tuple(ints), tuple(floats)


def _structure(parent: np.ndarray, tags: Sequence[str], last: np.ndarray | None, is_a: np.ndarray | None,
               factor: tuple[np.ndarray, list[str]] | None):
    """``tree_measures``' structure: ``(last, tags, is_a, factor)``, each row's last descendant, the
    tags below it (its subtree's size less itself, at least 1), whether it is ``<a>`` and
    ``tag_factor(tags)``; the caller's ``last``, ``is_a`` and ``factor`` when it has them."""
    n = len(parent)
    if last is None:
        last = subtree_last(parent)
    size = last - np.arange(n, dtype=np.int64) + 1
    if factor is None:
        factor = tag_factor(tags)
    if is_a is None:
        is_a = (factor[0] == factor[1].index("a")).astype(np.int64) if "a" in factor[1] else np.zeros(n, np.int64)
    return last, np.maximum(size - 1, 1), is_a, factor


def _sums_numpy(parent, tags, last, own_chars, own_link_chars, is_a, factor, matches, own_matches):
    """``tree_measures``' sums in numpy, the reference ``_tree_sums`` equals: ``((chars,
    link_chars, link_tags, nth, children), (sibling_same_tag, query_score, own_query_score))``."""
    chars = subtree_sum(own_chars, last)
    link_chars = subtree_sum(own_link_chars, last)
    link_tags = subtree_sum(is_a, last)
    nth, children, sibling_same = sibling_structure(parent, tags, factor)
    qs, own_qs = query_scores(parent, matches), query_scores(parent, own_matches)
    return (chars, link_chars, link_tags, nth, children), (sibling_same, qs, own_qs)


def _tail_numpy(chars, tags_, link_chars, link_tags, parent, prior):
    """``tree_measures``' columns after the sums in numpy, the reference ``_tree_tail`` equals:
    ``(ctd, td, link_density, position, chars_before, density_sum, parent_ctd)``."""
    n = len(parent)
    ctd = composite_text_density(chars, tags_, link_chars, link_tags)
    density_sum = np.zeros(n, dtype=np.float64)
    if n > 1:
        np.add.at(density_sum, parent[1:], ctd[1:])
    cb = chars[0] if n else 0
    with np.errstate(divide="ignore", invalid="ignore"):
        link_density = np.where(chars > 0, link_chars / np.where(chars > 0, chars, 1), 0.0)
    parent_ctd = np.where(parent >= 0, ctd[np.maximum(parent, 0)], 0.0) if n else np.zeros(0)
    td, position = chars / tags_, np.arange(n, dtype=np.int64) / max(n, 1)
    chars_before = np.asarray(prior, dtype=np.float64) / (cb or 1)
    return ctd, td, link_density, position, chars_before, density_sum, parent_ctd


def _columns(parent, tags, depth, own_chars, matches, factor, last, tags_, sums, tail,
             paths) -> dict[str, object]:
    """``tree_measures``' returned dict: the columns in ``walk.ROW_COLUMNS`` order, then ``last``
    and ``tagpath``."""
    (chars, link_chars, link_tags, nth, children), (sibling_same, qs, own_qs) = sums
    ctd, td, link_density, position, chars_before, density_sum, parent_ctd = tail
    xpath, tagpath = paths
    return {
        "node": np.arange(len(parent), dtype=np.int64),
        "parent": parent,
        "xpath": xpath,
        "tag": list(tags),
        "chars": chars,
        "tags": tags_,
        "link_chars": link_chars,
        "link_tags": link_tags,
        "td": td,
        "ctd": ctd,
        "density_sum": density_sum,
        "query_score": qs,
        "matches": np.asarray(matches, dtype=np.int64),
        "distance": np.asarray(depth, dtype=np.int64),
        "link_density": link_density,
        "own_chars": np.asarray(own_chars, dtype=np.int64),
        "tag_code": tag_codes(tags, factor),
        "position": position,
        "chars_before": chars_before,
        "own_query_score": own_qs,
        "parent_ctd": np.asarray(parent_ctd, dtype=np.float64),
        "children": children,
        "sibling_same_tag": sibling_same,
        "last": last,
        "tagpath": tagpath,
    }


def tree_measures(parent: np.ndarray, tags: Sequence[str], depth: np.ndarray, own_chars: np.ndarray,
                  own_link_chars: np.ndarray, matches: np.ndarray, own_matches: np.ndarray,
                  chars_prior: np.ndarray, root_path: str, *, last: np.ndarray | None = None,
                  is_a: np.ndarray | None = None,
                  factor: tuple[np.ndarray, list[str]] | None = None, utf8: bool = False) -> dict[str, object]:
    """Every measure of the rows of one page (document order, ``parent`` -1 for body).

    ``own_chars``/``own_link_chars``: characters of each row's own text and the part of it
    inside a link; ``matches``/``own_matches``: term matches of the domain query and of the
    page's own terms in each row's own text; ``chars_prior``: characters of the page's text
    before each row in document order. Returns the columns ``node .. sibling_same_tag`` of
    ``walk.ROW_COLUMNS`` (all but ``text``) plus ``last`` (each row's last descendant) and
    ``tagpath`` (the xpath without positions). ``last`` and ``is_a`` (1 for ``<a>``) may be
    given when the caller has them (the visit records them as it goes), and so may ``factor``,
    ``tag_factor(tags)``. ``utf8``: ``xpath`` and ``tagpath`` as ``Utf8Column`` (``xpaths``).
    """
    last, tags_, is_a, factor = _structure(parent, tags, last, is_a, factor)
    sums = _tree_sums(parent, last, own_chars, own_link_chars, is_a, factor, matches, own_matches)
    if sums is None:  # not built, or the rows are not a tree in document order
        sums = _sums_numpy(parent, tags, last, own_chars, own_link_chars, is_a, factor, matches, own_matches)
    (chars, link_chars, link_tags, nth, _), _ = sums
    tail = _tree_tail(chars, tags_, link_chars, link_tags, parent, chars_prior)
    if tail is None:  # not built, or the rows are not a tree in document order
        tail = _tail_numpy(chars, tags_, link_chars, link_tags, parent, chars_prior)
    paths = xpaths(parent, tags, nth, root_path, depth=np.asarray(depth), factor=factor, utf8=utf8)
    return _columns(parent, tags, depth, own_chars, matches, factor, last, tags_, sums, tail, paths)
