"""The one-pass DOM walk: one row per shown element from ``<body>`` down, with every measure.

``walk_page(html, query_terms)`` decodes the bytes (``hwnoise.decode``), parses
them with lxml's HTML parser (no ``<tbody>`` is invented), drops what a browser
does not show (``features.css``), visits the elements once in document order
(``lxml.etree.iterwalk``: iterative, no recursion limit), and then computes
every measure over the parent array: subtree sizes in one reverse pass, subtree
sums as prefix-sum differences over the document-order rows, children sums and
QueryScore with ``numpy.add.at``. The cost is linear in the size of the page.

Rows are a pandas DataFrame (``ROW_COLUMNS``; ``xpath``, ``tag`` and ``text``
hold Python strings); ``PageWalk.last`` gives each row's subtree as a row range.

The measures (DESIGN.md "The measures", seed 003 §2.1.5 and §3.2), per element i:

``chars`` C: characters of the text in i's subtree, each text node stripped and
its whitespace runs collapsed to one space. ``tags`` T: element descendants
(shown ones), 0 becomes 1 (seed 003 gives T = 1 for the leaves p, a, hr).
``link_chars`` LC: the part of C inside ``<a>``. ``link_tags`` LT: ``<a>``
elements in the subtree, i included. ``td`` = C / T. ``ctd`` = CETD's
composite text density, every zero denominator (``ln(B_i)`` too) taken as 1 and
0 when C = 0. ``density_sum``: the sum of the children's CTD. ``query_score``:
the sum over the text nodes below i of (term matches) / (distance), a text node
being one level below the element that holds it. ``matches``: term matches in
i's own text. ``distance``: depth below ``<body>`` (body 0).

Terms match whole words of ``hwnoise.text.tokenize`` (NFKC, case-folded, accents
kept: "café" does not match "cafe"), so "S" does not match "Silvia". A term the
tokeniser splits into several words ("item name") matches as a phrase: those
words consecutively within one text node, counted once per occurrence. Each
distinct term is counted on its own (terms "item" and "item name" both match
"item name", 2 matches).

Extended features (``features.columns.EXTENDED_FEATURES``):
``link_density`` LC / C (0 when C = 0); ``own_chars`` characters of i's own text;
``tag_code`` the tag's 1-based index in ``TAG_VOCABULARY`` (0 for any other tag;
the list is append-only so codes stay stable); ``position`` node index / number
of rows; ``chars_before`` the share of the page's characters that come before i
in document order; ``own_query_score`` QueryScore with the page's own
submission terms (``own_terms``) instead of the site's query; ``parent_ctd``
the parent's CTD (0 for body); ``children`` shown element children;
``sibling_same_tag`` the share of i's siblings that have i's tag (repeated
record structure; 0 for an only child and for body).

Deep trees: libxml2 stops building a tree about 255 levels down (2,048 with
``huge_tree``) and silently drops what is deeper. When a page is nested deeper
than ``MAX_DEPTH`` (512, Chromium's limit) the markup is pre-scanned and every
tag that would open below that depth is removed with its matching end tag
(replaced by a space), so its text joins the element at depth 512 and no text
is lost. Chromium keeps those elements as siblings at depth 512; their text
lands in the same place, their tags do not.

Pages that need scripts: hwnoise runs no scripts, and a page built by its scripts (a
forum on Discourse, a single-page app) shows nothing without them but often holds its text
in ``<noscript>`` for clients like this one. When the shown text is under
``NOSCRIPT_SHOWN`` characters and the body's ``<noscript>`` elements hold more than
``NOSCRIPT_RATIO`` times as much, the page is walked as a browser with scripting off shows
it: ``<noscript>`` content is shown (``css.SCRIPTING_OFF_DROP``; ``PageWalk.scripting_off``).
Every other page keeps the view with scripting on, where ``<noscript>`` is dropped. Content a
page streams out of order and moves into place by script (React's ``$RC``/``$RS``, Marko's
``$af``) is moved there before the walk, as the browser's scripts would (``features.streamed``).

``xpath`` is ``/html/body/div[2]/p[1]``-style with positions counted among the
shown siblings of the same tag.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from hwnoise.decode import decode_html, own_utf8
from hwnoise.features import native
from hwnoise.features.css import DROP_TAGS, SCRIPTING_OFF_DROP, TooDeep, hidden_rows, hides, page_style
from hwnoise.features.limits import cap_markup, utf8_within_caps
from hwnoise.features.measures import (TAG_VOCABULARY, Utf8Column, composite_text_density, query_scores,
                                       subtree_last, tree_measures)
from hwnoise.features.streamed import place_streamed, streamed_id, xml_text
from hwnoise.markup import MAX_DEPTH, flatten_deep, stopped_too_deep
from hwnoise.text import normalize, tokenize
from hwnoise.text import words as text_words

if TYPE_CHECKING:  # pandas loads when a DataFrame of rows is asked for, not for the walk
    import pandas as pd

__all__ = ["PageWalk", "walk_page", "COMPILED", "parse_html", "TermMatcher", "TAG_VOCABULARY", "MAX_DEPTH",
           "composite_text_density", "query_scores", "subtree_last",
           "ROW_COLUMNS"]

#: True when the walk runs its compiled parts (``features/_walk.c``: the visit, the paths, the
#: attribute cap's scan, the site-key hash); False when they were not built, or when
#: ``HWNOISE_WALK=python`` asks for the pure-Python walk (``features.native``).
COMPILED: bool = native.ext is not None

#: The columns of ``PageWalk.rows``, in order.
ROW_COLUMNS: list[str] = [
    "node", "parent", "xpath", "tag", "chars", "tags", "link_chars", "link_tags", "td", "ctd",
    "density_sum", "query_score", "matches", "distance",
    "link_density", "own_chars", "tag_code", "position", "chars_before", "own_query_score",
    "parent_ctd", "children", "sibling_same_tag", "text",
]


class PageWalk:
    """The walk of one page: ``rows`` (one per shown element), ``segments`` and ``encoding``.

    ``segments`` lists ``(node, text)`` for every non-empty text node in document
    order (whitespace-collapsed), attributed to the element that directly holds
    it. ``last[i]`` is the index of i's last descendant: i's subtree is the
    rows ``i .. last[i]`` (rows are in document order).

    ``columns`` holds the rows as parallel arrays (numpy for numbers, lists of
    str for ``xpath``, ``tag``, ``text``, or for ``xpath`` and ``text`` ``Utf8Column``
    after ``walk_page(..., utf8_columns=True)``); ``rows`` is the pandas DataFrame of
    them, built on first use (the features stage writes the arrays to Arrow
    without it). ``tagpath`` is each row's xpath without positions, ``classes``
    and ``ids`` each row's class and id attributes (None when absent), and
    ``elements`` the lxml elements of the rows (only with ``walk_page(...,
    keep_tree=True)``, with ``root`` the parsed tree) so that later stages need
    not parse and visit the page again.
    """

    def __init__(self, rows: pd.DataFrame | None = None, segments: list[tuple[int, str]] | None = None,
                 encoding: str | None = None, last: np.ndarray | None = None, *,
                 columns: dict | None = None, tagpath: list[str] | None = None,
                 classes: list | None = None, ids: list | None = None,
                 elements: list | None = None, root=None):
        if rows is None and columns is None:
            raise TypeError("PageWalk needs rows or columns")
        self._rows = rows
        self.columns = columns
        self._segments = segments if segments is not None else []
        self._seg_arrays = None  # (owner array, texts) when the walk made them
        self._normalized = None
        self.encoding = encoding
        self.last = last if last is not None else np.zeros(0, dtype=np.int64)
        self._tagpath = tagpath
        self.classes = classes
        self.ids = ids
        self.elements = elements
        self.root = root
        self._site_keys = None
        #: True when the page was walked as a browser with scripting off shows it (module doc)
        self.scripting_off = False
        #: how many parts streamed out of order (React, Marko) were put in place (``features.streamed``)
        self.streamed = 0
        #: the page's text as walked when it nested too deep and was flattened (``flatten_deep``),
        #: else None: what other readers of the page (stacked extractors) should read instead
        self.flattened: str | None = None

    @property
    def segments(self) -> list[tuple[int, str]]:
        if self._segments is None:
            owner, texts = self._seg_arrays
            self._segments = list(zip(owner.tolist(), texts))
        return self._segments

    @segments.setter
    def segments(self, value: list[tuple[int, str]]) -> None:
        self._segments, self._seg_arrays, self._normalized = value, None, None

    def segment_arrays(self) -> tuple[np.ndarray, list[str]]:
        """``(owner, texts)``: the ``segments`` as an int64 array of owners and a list of texts."""
        if self._seg_arrays is None:
            segs = self._segments or []
            self._seg_arrays = (np.fromiter((o for o, _ in segs), dtype=np.int64, count=len(segs)),
                                [t for _, t in segs])
        return self._seg_arrays

    def subtree_texts(self) -> list[str]:
        """Each row's subtree text (its segments joined by one space): a row's segments and its
        descendants' are contiguous in document order, from its first to its subtree's last."""
        owner, texts = self.segment_arrays()
        n, nseg = len(self), len(texts)
        parent = np.asarray(self.column("parent"), dtype=np.int64)
        first = np.full(n, nseg, dtype=np.int64)
        np.minimum.at(first, owner, np.arange(nseg))
        for i in range(n - 1, 0, -1):
            p = parent[i]
            if first[i] < first[p]:
                first[p] = first[i]
        last = np.asarray(self.last, dtype=np.int64)
        cs = np.concatenate(([0], np.cumsum(np.bincount(owner, minlength=n))))
        count = cs[last + 1] - cs[np.arange(n)]
        return [" ".join(texts[first[i]:first[i] + count[i]]) if count[i] else "" for i in range(n)]

    def normalized_segments(self) -> list[str]:
        """Each segment's text normalised (``hwnoise.text.normalize``), made once per walk.

        ASCII segments are lower-cased (``_fold_ascii``), and ``normalize`` runs only on the
        others (tests/test_walk.py checks both ways agree)."""
        if self._normalized is None:
            texts = self.segment_arrays()[1]
            norm, rest = _fold_ascii(texts if isinstance(texts, list) else list(texts))
            if rest:  # the others at once, joined by NUL, which neither NFKC nor folding crosses
                others = [texts[j] for j in rest]
                done = normalize("\x00".join(others)).split("\x00")
                if len(done) != len(others):  # a NUL inside a text (not from the walk): one by one
                    done = [normalize(t) for t in others]
                for j, t in zip(rest, done):
                    norm[j] = t
            self._normalized = norm
        return self._normalized

    @property
    def rows(self) -> pd.DataFrame:
        if self._rows is None:
            self._rows = _frame(self.columns)
        return self._rows

    @rows.setter
    def rows(self, value: pd.DataFrame) -> None:
        self._rows, self.columns = value, None

    @property
    def tagpath(self) -> list[str]:
        """Each row's tag path (``/html/body/div/p``: the xpath without positions)."""
        if self._tagpath is None:
            self._tagpath = [_POS_RE.sub("", x) for x in self.column("xpath")]
        elif isinstance(self._tagpath, Utf8Column):
            return self._tagpath.tolist()
        return self._tagpath

    def column(self, name: str):
        """One column, from the arrays when the walk has them (no DataFrame built); a
        ``Utf8Column`` as its list of str."""
        if self.columns is not None:
            values = self.columns[name]
            return values.tolist() if isinstance(values, Utf8Column) else values
        values = self._rows[name]
        return values.tolist() if values.dtype == object else values.to_numpy()

    @property
    def site_keys(self) -> np.ndarray:
        """uint64 hash of each row's (tag path, own text), stable across processes and runs:
        the keys of the ``sitelevel`` column (``features.build``)."""
        if self._site_keys is None and native.ext is not None:  # the same keys, compiled
            keys = np.empty(len(self), dtype=np.uint64)
            paths = self._tagpath
            texts = self.columns["text"] if self.columns is not None else None
            if isinstance(paths, Utf8Column) and isinstance(texts, Utf8Column):  # the same bytes hashed
                native.ext.site_keys_utf8(paths.offsets, paths.data, texts.offsets, texts.data, keys)
                self._site_keys = keys
            else:
                texts = self.column("text")
                if native.ext.site_keys(self.tagpath, texts if isinstance(texts, list) else list(texts), keys):
                    self._site_keys = keys
        if self._site_keys is None:
            paths = self.tagpath
            distinct = list(dict.fromkeys(paths))
            index = {p: k for k, p in enumerate(distinct)}
            path_id = np.fromiter(map(index.__getitem__, paths), dtype=np.int64, count=len(paths))
            path_h = _mix64(stable_hashes(distinct) ^ np.uint64(0x9E3779B97F4A7C15))
            self._site_keys = _mix64(stable_hashes(self.column("text")) ^ path_h[path_id])
        return self._site_keys

    def __len__(self) -> int:
        return len(self.columns["node"]) if self.columns is not None else len(self._rows)


_POS_RE = re.compile(r"\[\d+\]")


def _fold_ascii(texts: list[str]) -> tuple[list, list[int]]:
    """``(folded, rest)``: each ASCII text lower-cased, which is its ``normalize`` (an ASCII
    text is its own NFKC and ``str.lower`` is its case folding), None for the others, and the
    indices of those. Compiled (``features/_walk.c`` ``fold_ascii``) when it is there."""
    if native.ext is not None:
        got = native.ext.fold_ascii(texts)
        if got is not None:
            return got
    out = [t.lower() if t.isascii() else None for t in texts]
    return out, [j for j, t in enumerate(out) if t is None]

_P1 = np.uint64(0xC2B2AE3D27D4EB4F)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over a uint64 array (wrapping arithmetic)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def stable_hashes(strings: list[str]) -> np.ndarray:
    """A uint64 hash of each string, the same in every process and run (no salt), in numpy: a
    polynomial hash of its UTF-8 bytes (mod 2**64, odd base) mixed with its length. Equal
    strings give equal hashes; for natural text different ones collide with odds of about
    2**-64 (crafted inputs can collide: the cost is one ``sitelevel`` value off)."""
    n = len(strings)
    if not n:
        return np.zeros(0, dtype=np.uint64)
    if native.ext is not None:  # the same hash, compiled (features/_walk.c)
        out = np.empty(n, dtype=np.uint64)
        if native.ext.stable_hashes(strings if isinstance(strings, list) else list(strings), out):
            return out
    data = "\x00".join(strings).encode("utf-8", "surrogatepass")
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 0)
    if len(ends) == n - 1:
        starts = np.concatenate(([0], ends + 1))
        stops = np.append(ends, len(buf))
    else:  # a NUL inside a string: place them by their lengths (one encode each)
        data = b"".join(x.encode("utf-8", "surrogatepass") for x in strings)
        buf = np.frombuffer(data, dtype=np.uint8)
        lens = np.fromiter((len(x.encode("utf-8", "surrogatepass")) for x in strings), np.int64, n)
        stops = np.cumsum(lens)
        starts = stops - lens
    size = stops - starts
    out = _mix64(size.astype(np.uint64) + np.uint64(1))
    if not len(buf):  # empty strings only
        return _mix64(out)
    gap = np.diff(np.append(starts, len(buf))) if len(ends) == n - 1 else size  # bytes up to the next string
    pos = np.arange(len(buf), dtype=np.int64) - np.repeat(starts, gap)
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(int(size.max()) + 1, _P1, dtype=np.uint64))
        cs = np.concatenate(([np.uint64(0)], np.cumsum((buf.astype(np.uint64) + np.uint64(1))
                                                        * powers[pos], dtype=np.uint64)))
        return _mix64(out ^ _mix64(cs[stops] - cs[starts]))


class TermMatcher:
    """Counts whole-word (and multi-word phrase) matches of a set of terms in a word list.

    ``terms`` is a list of terms (a term of several words matches as a phrase) or one search as
    a str, whose words are the terms (as ``extract``'s ``query``): a str was iterated letter by
    letter, so ``walk_page(html, "obama")`` counted every o, b, a and m as a match."""

    def __init__(self, terms: Iterable[str] | str = ()):
        if isinstance(terms, str):
            terms = tokenize(terms)
        single: set[str] = set()
        phrases: set[tuple[str, ...]] = set()
        for term in terms:
            toks = tokenize(str(term))
            if len(toks) == 1:
                single.add(toks[0])
            elif toks:
                phrases.add(tuple(toks))
        self.single = frozenset(single)
        self.phrases = sorted(phrases)
        self._firsts = frozenset(p[0] for p in self.phrases)
        keys = self.single | self._firsts
        # a necessary condition: the normalised text holds one of the words as a substring
        #: the words the pre-filter looks for (``str.find``), None past 300 of them
        self.prefilter = tuple(sorted(keys)) if keys and len(keys) <= 300 else None

    def __bool__(self) -> bool:
        return bool(self.single or self.phrases)

    def count(self, words: list[str]) -> int:
        """Matches of the terms in ``words`` (the tokens of one text node)."""
        single = self.single
        n = sum(map(single.__contains__, words)) if single else 0
        if self.phrases and not self._firsts.isdisjoint(words):
            for ph in self.phrases:
                k = len(ph)
                first = ph[0]
                for j in range(len(words) - k + 1):
                    if words[j] == first and tuple(words[j:j + k]) == ph:
                        n += 1
        return n


#: ``collect_ids=False``: libxml2 keeps no table of the ``id`` attributes (4 % of the parse); it
#: serves only XPath's ``id()``, which nothing here calls (``#x`` selectors compare ``@id``).
_PARSER_OPTS = dict(encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True,
                    no_network=True, default_doctype=False, collect_ids=False)
_EMPTY = b"<html><body></body></html>"


def parse_html(text: str | None, utf8: bytes | None = None) -> tuple[etree._Element, bool]:
    """Parse decoded HTML with lxml (recovering from any markup). Returns ``(root, too_deep)``,
    ``too_deep`` when libxml2 stopped at its depth limit (2,048 levels with ``huge_tree``)
    and dropped what was deeper; flatten with ``flatten_deep`` and parse again then. A tree
    deeper than ``MAX_DEPTH`` but complete is not reported: check the depths for that.

    ``utf8``, when given, is ``text`` as valid UTF-8 bytes without NUL (the page's
    own bytes): parsed as they are, which saves encoding the text again. ``text`` is None when
    the page was not decoded at all: ``utf8`` is then within the caps (``limits.utf8_within_caps``).
    """
    if text is not None:
        text, utf8 = cap_markup(text, utf8)  # what libxml2 or the walk would choke on (features/limits.py)
    if utf8 is not None:
        data = utf8
    else:
        if "\x00" in text:
            text = text.replace("\x00", "\ufffd")
        data = text.encode("utf-8", errors="replace")
    parser = _parser()
    try:
        # not blank (``data.strip()``, without copying the page to find out)
        root = etree.fromstring(data, parser) if data and not data.isspace() else None
    except (etree.XMLSyntaxError, ValueError):
        root = None
    too_deep = stopped_too_deep(parser)
    if root is None:
        root = etree.fromstring(_EMPTY, parser)
    _merge_stray_roots(root)
    return root, too_deep


_LOCAL = threading.local()


def _parser() -> etree.HTMLParser:
    """One lxml HTML parser per thread (a parser must not be shared between threads)."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = etree.HTMLParser(**_PARSER_OPTS)
    return parser


def _append_text(parent: etree._Element, text: str | None) -> None:
    if not text:
        return
    if len(parent):  # the texts joined are the parser's: xml_text, for what lxml refuses
        parent[-1].tail = xml_text((parent[-1].tail or "") + text)
    else:
        parent.text = xml_text((parent.text or "") + text)


def _merge_stray_roots(root: etree._Element) -> None:
    """Move what libxml2 put in extra top-level ``<html>`` elements into the first body.

    A page with a second ``<html>`` after ``</html>`` (archived pages often have
    one) makes libxml2 start sibling roots; a browser keeps one tree and shows
    that content in the body, and so does the walk.
    """
    strays = [s for s in root.itersiblings() if isinstance(s.tag, str)]
    if not strays:
        return
    body = root.find("body")
    if body is None:
        body = etree.SubElement(root, "body")
    for stray in strays:
        parts = [stray]
        inner = stray.find("body")
        if inner is not None:
            parts = [inner]
        for part in parts:
            _append_text(body, part.text)
            for child in list(part):
                if child.tag in ("head", "body"):
                    continue
                body.append(child)  # moves the child with its tail


# -- the walk ------------------------------------------------------------------------------
def _visit(root: etree._Element, hidden: set, attrs: bool = False, keep: bool = False,
           drop: frozenset = DROP_TAGS, seen: list | None = None):
    """Visit the shown elements under body once, iteratively, in document order.

    Skips (with their subtrees, keeping their tails) the ``drop`` tags (``DROP_TAGS``), the
    elements in ``hidden`` and those whose ``hidden`` attribute or inline style
    hides them. With ``attrs`` it also records each row's class and id (for
    ``match_rows``), with ``keep`` each row's element.

    Runs the compiled visit (``features/_walk.c``) when it is there, else (or when
    the compiled one hands the page back: a comment or PI among the visited nodes, a
    namespaced element) ``_visit_python``, the reference: both give the same values
    (the compiled one its numbers as numpy arrays, the Python one as lists; ``visit_lists``
    makes them alike). The last three entries are each segment's length (an array), the
    rows' ``measures.tag_factor`` and a 3 x rows array of each row's own characters, own
    characters inside a link and characters before it, or None (then ``_measure`` and the
    measures compute them). ``seen``, a list, gets True when a skipped element may be a part
    streamed out of order (``features.streamed.streamed_id``: React's or Marko's).
    """
    body = root.find("body")
    if body is None:
        body = root
    if native.ext is not None:
        got = native.ext.visit(body, drop, hidden, hides, attrs, keep)
        if got is not None:
            (tags, parents, depths, seg_start, seg_owner, seg_text, seg_link, link_flag, classes, ids,
             elements, lasts, seg_len, codes, uniq, sums, segment) = got
            if segment and seen is not None:
                seen.append(True)
            i64, buf = np.int64, np.frombuffer
            return (tags, buf(parents, i64), buf(depths, i64), buf(seg_start, i64), buf(seg_owner, i64),
                    seg_text, buf(seg_link, np.bool_), buf(link_flag, np.bool_), _path0(body), classes, ids,
                    elements, buf(lasts, i64), buf(seg_len, i64), (buf(codes, i64), uniq),
                    buf(sums, i64).reshape(3, -1))
    return _visit_python(root, hidden, attrs, keep, drop, seen)


def _path0(body: etree._Element) -> str:
    """Body's own path from the root (``/html/body``)."""
    return "/" + "/".join([str(a.tag) for a in reversed(list(body.iterancestors()))] + [str(body.tag)])


def _visit_python(root: etree._Element, hidden: set, attrs: bool = False, keep: bool = False,
                  drop: frozenset = DROP_TAGS, seen: list | None = None):
    """``_visit`` in Python over ``etree.iterwalk``: the fallback and the reference of the
    compiled visit."""
    body = root.find("body")
    if body is None:
        body = root
    rows = _PythonRows(attrs, keep)
    walker = etree.iterwalk(body, events=("start", "end"))
    skip, open_row, close_row, add_text = walker.skip_subtree, rows.open, rows.close, rows.segment
    for event, el in walker:
        if event == "start":
            if el is not body and _skipped(el, drop, hidden, seen):  # body itself is always shown
                skip()
            else:
                open_row(el)
        else:
            close_row(el)
            if el is body:
                break
            tl = el.tail  # the tail of a row or of a skipped element: held by the open row
            if tl:
                add_text(tl)
    return rows.visit(_path0(body))


def _skipped(el: etree._Element, drop: frozenset, hidden: set, seen: list | None) -> bool:
    """Start step: whether ``el``'s subtree is skipped (a ``drop`` tag or hidden); ``seen`` as ``_visit``'s."""
    if el.tag in drop:
        return True
    st = el.get("style")
    if (st is not None and hides(st)) or el.get("hidden") is not None or (hidden and el in hidden):
        if seen is not None and streamed_id(el.get("id"), el.get("hidden") is not None):
            seen.append(True)
        return True
    return False


class _PythonRows:
    """The Python visit's lists (``_visit``'s tuple) and its open rows: (element, row, in link) of each."""

    __slots__ = ("tags", "parents", "depths", "seg_start", "seg_owner", "seg_text", "seg_link", "link_flag",
                 "classes", "ids", "elements", "lasts", "attrs", "keep", "stack", "top", "cur", "in_link")

    def __init__(self, attrs: bool, keep: bool):
        self.tags: list[str] = []
        self.parents: list[int] = []
        self.depths: list[int] = []
        self.seg_start: list[int] = []
        self.seg_owner: list[int] = []
        self.seg_text: list[str] = []
        self.seg_link: list[bool] = []
        self.link_flag: list[bool] = []
        self.classes: list = []
        self.ids: list = []
        self.elements: list = []
        self.lasts: list[int] = []
        self.attrs, self.keep = attrs, keep
        self.stack: list[tuple] = []  # (element, row, in link) of the open rows above the current one
        self.top, self.cur, self.in_link = None, -1, False

    def open(self, el: etree._Element) -> None:
        """Start step: a row for the shown element ``el``, now the open row, and its text."""
        i = len(self.tags)
        tag = el.tag
        self.tags.append(tag)
        self.parents.append(self.cur)
        self.depths.append(len(self.stack))  # the rows open above: body's depth is 0
        self.seg_start.append(len(self.seg_text))
        self.lasts.append(i)
        is_a = tag == "a"
        self.link_flag.append(is_a)
        if self.attrs:
            self.classes.append(el.get("class"))
            self.ids.append(el.get("id"))
        if self.keep:
            self.elements.append(el)
        self.stack.append((self.top, self.cur, self.in_link))
        self.top, self.cur, self.in_link = el, i, self.in_link or is_a
        txt = el.text
        if txt:
            self.segment(txt)

    def close(self, el: etree._Element) -> None:
        """End step: when ``el`` is the open row, close it (its subtree ends at the last row)."""
        if el is self.top:
            self.lasts[self.cur] = len(self.tags) - 1
            self.top, self.cur, self.in_link = self.stack.pop()

    def segment(self, text: str) -> None:
        """Text step: ``text`` (a text or a tail), whitespace collapsed, a segment of the open row."""
        t = " ".join(text.split())
        if t:
            self.seg_owner.append(self.cur)
            self.seg_text.append(t)
            self.seg_link.append(self.in_link)

    def visit(self, path0: str) -> tuple:
        """The visit's tuple, ``_visit``'s form (the entries only the compiled visit makes None)."""
        return (self.tags, self.parents, self.depths, self.seg_start, self.seg_owner, self.seg_text,
                self.seg_link, self.link_flag, path0, self.classes, self.ids, self.elements, self.lasts,
                None, None, None)


def visit_lists(visit: tuple) -> tuple:
    """A visit with its numbers as lists (the compiled visit gives numpy arrays), the segments'
    lengths and tag factor left out: the Python visit's form."""
    return tuple(v.tolist() if isinstance(v, np.ndarray) else v for v in visit[:13])


def _drop_rows(visit: tuple, rows: list[int]) -> tuple:
    """The visit without the given rows and their subtrees (a style sheet hides them): in numpy
    for the compiled visit's arrays (``_drop_rows_arrays``), else in Python, the reference."""
    if isinstance(visit[1], np.ndarray) and visit[12] is not None:
        return _drop_rows_arrays(visit, rows)
    visit = visit_lists(visit)
    tags, parents, depths, seg_start, seg_owner, seg_text, seg_link, link_flag, path0 = visit[:9]
    n = len(tags)
    drop = bytearray(n)
    for r in rows:
        drop[r] = 1
    for i in range(1, n):  # pre-order: a parent's verdict is known before its children's
        if not drop[i] and drop[parents[i]]:
            drop[i] = 1
    new = [-1] * n
    k = 0
    for i in range(n):
        if not drop[i]:
            new[i] = k
            k += 1
    keep_seg = [not drop[o] for o in seg_owner]
    seg_before = [0] * (len(seg_owner) + 1)
    for j, kept in enumerate(keep_seg):
        seg_before[j + 1] = seg_before[j] + kept
    keep = [i for i in range(n) if not drop[i]]
    classes, ids, elements = visit[9:12]
    return ([tags[i] for i in keep], [new[parents[i]] if parents[i] >= 0 else -1 for i in keep],
            [depths[i] for i in keep], [seg_before[seg_start[i]] for i in keep],
            [new[o] for o, kp in zip(seg_owner, keep_seg) if kp],
            [t for t, kp in zip(seg_text, keep_seg) if kp],
            [lk for lk, kp in zip(seg_link, keep_seg) if kp],
            [link_flag[i] for i in keep], path0,
            [classes[i] for i in keep] if classes else [], [ids[i] for i in keep] if ids else [],
            [elements[i] for i in keep] if elements else [], None, None, None, None)


def _drop_rows_arrays(visit: tuple, rows: list[int]) -> tuple:
    """``_drop_rows`` over the compiled visit's arrays: each dropped row's subtree is the rows up
    to its ``last``, so the rows kept, their new numbers and their segments come from prefix
    sums; each kept row's ``last`` is renumbered with them (the tag factor is left to the
    measures: a tag may be gone)."""
    from itertools import compress

    (tags, parents, depths, seg_start, seg_owner, seg_text, seg_link, link_flag, path0, classes, ids,
     elements, lasts) = visit[:13]
    n = len(tags)
    hit = np.asarray(rows, dtype=np.int64)
    mark = np.zeros(n + 1, dtype=np.int64)
    np.add.at(mark, hit, 1)
    np.add.at(mark, lasts[hit] + 1, -1)
    keep = np.cumsum(mark[:n]) == 0
    before = np.cumsum(keep)  # kept rows up to each row
    new = before - 1
    kept = np.flatnonzero(keep)
    par = parents[kept]
    keep_seg = keep[seg_owner]
    seg_before = np.concatenate(([0], np.cumsum(keep_seg)))
    rows_kept, segs_kept = keep.tolist(), keep_seg.tolist()
    return (list(compress(tags, rows_kept)), np.where(par >= 0, new[np.maximum(par, 0)], -1), depths[kept],
            seg_before[seg_start[kept]], new[seg_owner[keep_seg]], list(compress(seg_text, segs_kept)),
            seg_link[keep_seg], link_flag[kept], path0,
            list(compress(classes, rows_kept)) if classes else [], list(compress(ids, rows_kept)) if ids else [],
            list(compress(elements, rows_kept)) if elements else [], before[lasts[kept]] - 1,
            visit[13][keep_seg] if visit[13] is not None else None, None, None)


def _find_segments(joined: str, keys: tuple[str, ...]) -> list[int]:
    """For each NUL-separated segment of ``joined`` holding one of ``keys`` as a substring,
    the position of one such occurrence (``str.find``, which skips to the segment's end after
    a hit: a key holds no NUL, so an occurrence lies inside one segment)."""
    find = joined.find
    out: list[int] = []
    for key in keys:
        pos = find(key)
        while pos >= 0:
            out.append(pos)
            end = find("\x00", pos)
            if end < 0:
                break
            pos = find(key, end)
    return out


def _prefiltered(norm: list[str], prefilters: list[tuple[str, ...]]) -> list[int]:
    """The indices (ascending) of the segments holding one of the pre-filters' words as a
    substring: one compiled pass over the segments (``features/_walk.c`` ``find_segments``), or
    ``str.find`` over the segments joined by NUL (``_find_segments``), its reference."""
    if native.ext is not None:
        keys = tuple(dict.fromkeys(k for p in prefilters for k in p))
        got = native.ext.find_segments(norm if isinstance(norm, list) else list(norm), keys)
        if got is not None:
            return got
    joined = "\x00".join(norm)
    starts = np.cumsum(np.fromiter(map(len, norm), dtype=np.int64, count=len(norm)) + 1) - 1
    hits: set[int] = set()
    for keys in prefilters:
        pos = _find_segments(joined, keys)
        if pos:
            hits.update(np.searchsorted(starts, pos, side="left").tolist())
    return sorted(hits)


def _match_counts(owners: np.ndarray, norm: list[str], n: int, *matchers: TermMatcher):
    """Per row, the matches of each matcher in the row's own text (``norm``: the segments'
    texts normalised, ``PageWalk.normalized_segments``). Only segments where a matcher's
    pre-filter finds one of its words as a substring are split into words."""
    outs = [np.zeros(n, dtype=np.int64) for _ in matchers]
    active = [(k, m) for k, m in enumerate(matchers) if m]
    if not active or not norm:
        return outs
    if all(m.prefilter is not None for _, m in active):
        candidates = _prefiltered(norm, [m.prefilter for _, m in active])
    else:
        candidates = range(len(norm))
    findall = text_words
    for j in candidates:
        words = findall(norm[j])
        if not words:
            continue
        owner = owners[j]
        for k, m in active:
            c = m.count(words)
            if c:
                outs[k][owner] += c
    return outs


def walk_page(html: bytes | str, query_terms: Iterable[str] = (), *, http_charset: str | None = None,
              own_terms: Iterable[str] = (), keep_tree: bool = False, utf8_columns: bool = False) -> PageWalk:
    """Walk one page: decode, parse, drop what is not shown, and measure every element.

    ``html`` is the page's bytes (decoded as a browser would, ``http_charset``
    first) or already-decoded text. ``query_terms`` is the domain query,
    ``own_terms`` the page's own submission terms (for ``own_query_score``);
    either may be a prepared ``TermMatcher``. With ``keep_tree`` the walk keeps
    the parsed tree (``root``) and the rows' lxml elements (``elements``), for
    stages that read more of the page (its HTML, the browser's view). With
    ``utf8_columns`` (the features stage, which writes them to Arrow) the compiled walk gives the
    ``xpath`` and ``text`` columns and the tag paths as ``Utf8Column``, Arrow's buffers,
    without a str per row; lists of str otherwise, and always in Python (the reference).
    Never fails on bad markup.
    """
    utf8 = None
    if isinstance(html, str):
        text, encoding = html, None
    else:
        html = bytes(html)
        encoding = _undecoded(html, http_charset)
        if encoding is not None:  # its text would be its own UTF-8: parse the bytes, decode nothing
            text, utf8 = None, html
        else:
            text, encoding = decode_html(html, http_charset)
            if (encoding == "utf-8" and not html.startswith(b"\xef\xbb\xbf") and b"\x00" not in html
                    and "\ufffd" not in text):
                utf8 = html  # valid UTF-8 as received: parse the bytes themselves
    root, too_deep = parse_html(text, utf8)
    visit, flat = None, None
    if not too_deep:
        try:
            visit, scripting_off, streamed = _view(root, text if text is not None else utf8.decode, keep_tree,
                                                   deeper=_deeper_than_chromium)
        except TooDeep:  # its style sheets' XPaths are left for the flattened tree
            too_deep = True
    depths = visit[2] if visit is not None else ()
    if too_deep or (len(depths) and (depths.max() if isinstance(depths, np.ndarray) else max(depths)) > MAX_DEPTH):
        flat = flatten_deep(text if text is not None else utf8.decode("utf-8"), MAX_DEPTH)
        root, _ = parse_html(flat)
        visit, scripting_off, streamed = _view(root, None, keep_tree)
    walk = _measure(visit, _matcher(query_terms), _matcher(own_terms), encoding, utf8=utf8_columns)
    walk.scripting_off, walk.streamed, walk.flattened = scripting_off, streamed, flat
    if keep_tree:
        walk.root = root
        walk.elements = visit[11]
        walk.classes = [e.get("class") for e in walk.elements]
        walk.ids = [e.get("id") for e in walk.elements]
    elif visit[9]:
        walk.classes, walk.ids = visit[9], visit[10]
    return walk


#: True on an element with a descendant more than ``MAX_DEPTH`` levels below it (one libxml2
#: XPath: each level's children read once).
_BELOW_MAX_DEPTH = etree.XPath("boolean(" + "/".join(["*"] * (MAX_DEPTH + 1)) + ")")


def _deeper_than_chromium(root: etree._Element) -> bool:
    """Whether the body holds an element deeper than ``MAX_DEPTH``, where Chromium's parser stops
    nesting. Asked by ``page_style`` before it reads style sheets by XPath: such a tree is
    flattened first, as the walk's view of it is (a descendant selector costs the cube of the
    depth: 30 of them on 1,000 nested divs took a minute, on 2,000 more than four)."""
    body = root.find("body")
    return bool(_BELOW_MAX_DEPTH(body if body is not None else root))


def _undecoded(html: bytes, http_charset: str | None) -> str | None:
    """The page's encoding when the walk may parse its bytes without decoding them (the compiled
    checks: valid UTF-8 whose text ``decode_html`` would give as it is, ``hwnoise.decode.own_utf8``,
    and within the caps of ``features.limits``), else None: decode. The Python code always
    decodes (the reference: the same text, so the same bytes parsed)."""
    if native.ext is None:
        return None
    encoding = own_utf8(html, http_charset, native.ext.plain_utf8)
    return encoding if encoding is not None and utf8_within_caps(html) else None


#: A page showing fewer characters than this may be walked with scripting off (module doc) ...
NOSCRIPT_SHOWN = 2000
#: ... when its ``<noscript>`` elements hold more than this many times the shown characters.
NOSCRIPT_RATIO = 5


def _view(root: etree._Element, source, keep: bool = False, deeper=None) -> tuple[tuple, bool, int]:
    """``(visit, scripting off, segments placed)``: what ``_shown`` shows, or for a page that
    shows (next to) nothing but holds its text in ``<noscript>`` what a browser with scripting
    off shows. A page whose visit skipped parts streamed out of order (React's, Marko's) has them put
    in place (``features.streamed``) and is visited again. ``deeper`` as ``css.page_style``'s."""
    seen: list = []
    visit = _shown(root, source, keep, seen=seen, deeper=deeper)
    placed = place_streamed(root) if seen else 0
    if placed:
        visit = _shown(root, source, keep, deeper=deeper)
    seg_len = visit[13]
    shown = int(seg_len.sum()) if seg_len is not None else sum(map(len, visit[5]))
    if shown < NOSCRIPT_SHOWN and _noscript_chars(root) > NOSCRIPT_RATIO * shown:
        return _shown(root, source, keep, drop=SCRIPTING_OFF_DROP, deeper=deeper), True, placed
    return visit, False, placed


def _noscript_chars(root: etree._Element) -> int:
    """Characters of text (whitespace runs collapsed) in the body's ``<noscript>`` elements."""
    body = root.find("body")
    return sum(len(" ".join(" ".join(el.itertext()).split()))
               for el in (body if body is not None else root).iter("noscript")
               if next(el.iterancestors("noscript"), None) is None)  # outermost ones only


def _shown(root: etree._Element, source, keep: bool = False, drop: frozenset = DROP_TAGS,
           seen: list | None = None, deeper=None) -> tuple:
    """Visit what a browser shows: skip hidden elements (and the ``drop`` tags), then drop rows
    a style sheet hides; ``seen`` as ``_visit``'s, ``deeper`` as ``css.page_style``'s."""
    style = page_style(root, source, deeper=deeper)
    visit = _visit(root, style.elements, attrs=bool(style.simple), keep=keep, drop=drop, seen=seen)
    if style.simple:
        rows = hidden_rows(style, visit[0], visit[1], visit[9], visit[10], factor=visit[14])
        if rows:
            visit = _drop_rows(visit, rows)
    return visit


def _frame(columns: dict) -> pd.DataFrame:
    """The DataFrame of a walk's ``ROW_COLUMNS``, built without pandas' per-column checks
    (they cost more than the measures on a typical page); the public constructor if that
    API moves."""
    import pandas as pd

    n = len(columns["node"])
    arrays = []
    for c in ROW_COLUMNS:
        v = columns[c]
        if isinstance(v, Utf8Column):
            v = v.tolist()
        if isinstance(v, list):
            a = np.empty(n, dtype=object)
            a[:] = v
            v = a
        arrays.append(v)
    try:
        return pd.DataFrame._from_arrays(arrays, columns=ROW_COLUMNS, index=pd.RangeIndex(n),
                                         verify_integrity=False)
    except (AttributeError, TypeError):  # pragma: no cover - a pandas without the fast path
        return pd.DataFrame(dict(zip(ROW_COLUMNS, arrays)))


def _matcher(terms) -> TermMatcher:
    if isinstance(terms, TermMatcher):
        return terms
    if isinstance(terms, (list, tuple)) and not terms:
        return _NO_TERMS  # most pages have no own terms: no matcher made per page
    return TermMatcher(terms)


_NO_TERMS = TermMatcher(())


def _measure(visit: tuple, query: TermMatcher, own: TermMatcher, encoding, utf8: bool = False) -> PageWalk:
    """The walk's rows from the visit's arrays: own text and term matches here, every other
    measure in ``features.measures``; ``utf8`` as ``walk_page``'s."""
    tags, parents, depths, seg_start, seg_owner, seg_text, seg_link, link_flag, path0 = visit[:9]
    n = len(tags)
    parent = np.asarray(parents, dtype=np.int64)
    owner = np.asarray(seg_owner, dtype=np.int64)
    seg_len = visit[13]
    if seg_len is None:
        seg_len = np.fromiter(map(len, seg_text), dtype=np.int64, count=len(seg_text))
    sums = visit[15]
    if sums is not None:  # made by the compiled visit, as below
        own_chars, own_link, prior = sums
    else:
        in_link = np.asarray(seg_link, dtype=bool)
        own_chars = np.bincount(owner, weights=seg_len, minlength=n).astype(np.int64)
        own_link = np.bincount(owner[in_link], weights=seg_len[in_link], minlength=n).astype(np.int64)
        seg_cum = np.concatenate(([0], np.cumsum(seg_len)))
        prior = seg_cum[np.asarray(seg_start, dtype=np.int64)] if n else np.zeros(0, np.int64)
    walk = PageWalk(segments=None, encoding=encoding, columns={"node": ()})
    walk._segments, walk._seg_arrays = None, (owner, seg_text)
    norm = walk.normalized_segments() if (query or own) else []
    matches, own_matches = _match_counts(owner, norm, n, query, own)
    lasts = visit[12]
    columns = tree_measures(parent, tags, np.asarray(depths, dtype=np.int64), own_chars, own_link,
                            matches, own_matches, prior, path0,
                            last=np.asarray(lasts, dtype=np.int64) if lasts is not None else None,
                            is_a=np.asarray(link_flag, dtype=np.int64), factor=visit[14], utf8=utf8)
    walk.last = columns.pop("last")
    walk._tagpath = columns.pop("tagpath")
    columns["text"] = _own_text(owner, seg_text, n, utf8=utf8)
    walk.columns = columns
    return walk


def _own_text(owner: np.ndarray, texts: list[str], n: int, utf8: bool = False) -> list[str] | Utf8Column:
    """Each row's own text: its text nodes joined by one space, in document order; with
    ``utf8`` and the compiled helpers as a ``Utf8Column`` (no str per row)."""
    if utf8 and native.ext is not None and isinstance(texts, list):  # the same, as Arrow buffers
        got = native.ext.own_text_utf8(np.ascontiguousarray(owner, dtype=np.int64), texts, n)
        if got is not None:
            return Utf8Column(got[0], got[1])
    if native.ext is not None:  # the same, compiled (features/_walk.c)
        got = native.ext.own_text(np.ascontiguousarray(owner, dtype=np.int64), texts, n)
        if got is not None:
            return got
    out = np.full(n, "", dtype=object)
    if not len(texts):
        return out.tolist()
    arr = np.empty(len(texts), dtype=object)
    arr[:] = texts
    count = np.bincount(owner, minlength=n)
    one = count[owner] == 1
    out[owner[one]] = arr[one]
    for j in np.flatnonzero(~one).tolist():  # rows with several text nodes (a few)
        o = owner[j]
        out[o] = arr[j] if not out[o] else out[o] + " " + arr[j]
    return out.tolist()
