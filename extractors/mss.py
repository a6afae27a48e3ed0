"""Luo et al. (2009) as seed 002 §4.1 describes it: the maximum scoring subsequence of text
segments (method ``mss``).

1. The page's text nodes, in document order, are grouped into *text segments*: a new
   segment starts wherever an element whose computed ``display`` is not an inline kind
   (``block``, ``list-item``, ``table-cell``, ``flex``, ...) opens or closes, so the pieces
   of a paragraph split by ``<a>``, ``<b>`` or ``<span>`` stay one segment. Styles come from
   the rendered mode (``DATASET/render.parquet``, or the page is rendered on the spot);
   what the browser hides (``features.rendered.hidden_rows``) has no text.
2. Each segment s gets ``F(s) × length(s)`` (length in characters), with F = 1 when
   p_size ≥ 0.7, p_color ≥ 0.2 and p_link ≤ 0.5, else −1; p_size, p_color and p_link are the
   shares of the segment's characters in the page's most common font size, in its most
   common colour (both weighted by characters), and inside links.
3. The maximum scoring contiguous subsequence of those scores (``max_scoring_subsequence``,
   linear time, Kadane's prefix-sum form) is the body.

As in seed 002, the authors' post-processing (dropping segments whose box is not aligned
with the body's, to remove images and sidebars inside the article) is left out: the paper
does not say how it works. Scores can only be lower for it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hwnoise.extractors.base import PageMethod, RendersPages
from hwnoise.features.columns import CONTENT, NOISE

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["max_scoring_subsequence", "text_segments", "segment_scores", "mss_select", "MSS",
           "make", "INLINE_DISPLAYS"]

#: Computed ``display`` values that do not break a line (no segment boundary).
INLINE_DISPLAYS = frozenset({"inline", "inline-block", "inline-flex", "inline-grid",
                             "inline-table", "contents", "ruby", "ruby-base", "ruby-text", ""})


def max_scoring_subsequence(scores: Sequence[float] | np.ndarray) -> tuple[int, int, float]:
    """The contiguous run ``scores[start:end]`` (non-empty, ``end`` exclusive) of largest sum.

    Linear time: with prefix sums P, the best run ending at j starts after the smallest
    P before it. Ties go to the run that ends first, then to the one that starts first.
    Returns ``(0, 0, 0.0)`` for an empty sequence.
    """
    x = np.asarray(scores, dtype=float)
    n = len(x)
    if n == 0:
        return 0, 0, 0.0
    p = np.concatenate(([0.0], np.cumsum(x)))
    low = np.minimum.accumulate(p[:-1])  # smallest prefix before each end
    gain = p[1:] - low
    j = int(np.argmax(gain))
    start = int(np.argmin(p[:j + 1]))
    return start, j + 1, float(p[j + 1] - p[start])


def text_segments(html: bytes | str, render: pd.DataFrame | None, *, http_charset: str | None = None
                  ) -> list[dict]:
    """The page's text segments: ``[{text, nodes, chars, size_chars, color_chars,
    link_chars}]`` in document order, the shares being counted against the page's most
    common font size and colour (see the module docstring). Without ``render`` every
    element counts as inline except the block tags of HTML's default style sheet."""
    from hwnoise.features.elements import shown_elements
    from hwnoise.features.rendered import dominant

    view = shown_elements(html, http_charset)
    els, parents = view.elements, view.parents
    n = len(els)
    tags = [el.tag for el in els]
    owner, texts, in_link, seg_of = _text_nodes(els, tags, _block_flags(tags, render, n))
    if not texts:
        return []
    owner_a = np.asarray(owner, dtype=np.int64)
    length = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    size, color, keep_node = _node_styles(render, parents, tags, owner_a, length)
    keep = keep_node[owner_a]
    w = np.where(keep, length, 0)
    t_size = size[owner_a]
    t_color = color[owner_a]
    ok = ~np.isnan(t_size)
    base_size = dominant(t_size[ok], w[ok]) if ok.any() else None
    base_color = dominant(t_color[t_color != ""], w[t_color != ""])
    same_size = (t_size == base_size) if base_size is not None else np.ones(len(texts), bool)
    same_color = (t_color == base_color) if base_color is not None else np.ones(len(texts), bool)
    out: list[dict] = []
    seg_a = np.asarray(seg_of)
    for s in np.unique(seg_a[keep]):
        m = (seg_a == s) & keep
        chars = int(length[m].sum())
        out.append({
            "text": " ".join(t for t, k in zip(texts, m) if k),
            "nodes": sorted(set(owner_a[m].tolist())),
            "chars": chars,
            "size_chars": int(length[m & same_size].sum()),
            "color_chars": int(length[m & same_color].sum()),
            "link_chars": int(length[m & np.asarray(in_link)].sum()),
        })
    return out


def _text_nodes(els: list, tags: list[str], block) -> tuple[list[int], list[str], list[bool], list[int]]:
    """The text nodes in document order, as the walk attributes them (``owner``: the element
    whose text or child's tail it is), whether each lies in a link, and its segment: a new one
    starts at every block element's start and end."""
    n = len(els)
    index = {el: i for i, el in enumerate(els)}
    owner: list[int] = []
    texts: list[str] = []
    in_link: list[bool] = []
    seg_of: list[int] = []
    seg = 0
    link = [False] * n
    stack: list[tuple] = [("open", 0, False)] if n else []
    while stack:
        kind, a, b = stack.pop()
        if kind == "text":
            t = " ".join(b.split())
            if t:
                owner.append(a)
                texts.append(t)
                in_link.append(link[a])
                seg_of.append(seg)
            continue
        if kind == "close":
            if block[a]:
                seg += 1
            continue
        i = a
        link[i] = b or tags[i] == "a"
        if block[i]:
            seg += 1
        stack.append(("close", i, None))
        el = els[i]
        for ch in el.iterchildren(reversed=True):
            if ch.tail:
                stack.append(("text", i, ch.tail))
            k = index.get(ch)
            if k is not None:
                stack.append(("open", k, link[i]))
        if el.text:
            stack.append(("text", i, el.text))
    return owner, texts, in_link, seg_of


def _node_styles(render: pd.DataFrame | None, parents, tags: list[str], owner: np.ndarray,
                 length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element, its font size and colour as Chromium computed them and whether it is shown
    (NaN, "" and all shown without ``render`` or when its rows do not align with the page)."""
    from hwnoise.features.rendered import align_render, hidden_rows

    n = len(tags)
    size = np.full(n, np.nan)
    color = np.full(n, "", dtype=object)
    keep_node = np.ones(n, dtype=bool)
    if render is None:
        return size, color, keep_node
    depth = [0] * n
    for i in range(1, n):
        depth[i] = depth[parents[i]] + 1
    own_chars = np.bincount(owner, weights=length, minlength=n)
    rows = pd.DataFrame({"node": np.arange(n), "parent": parents, "distance": depth,
                         "tag": tags, "own_chars": own_chars})
    r = align_render(rows, render)
    if r is not None:
        keep_node = ~hidden_rows(rows, r)
        size = r["font_size"].to_numpy(float)
        color = r["color"].fillna("").to_numpy(object)
    return size, color, keep_node


_DEFAULT_BLOCK = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr legend li main "
    "menu nav ol p pre section summary table tbody td tfoot th thead tr ul caption".split())


def _block_flags(tags: list[str], render: pd.DataFrame | None, n: int) -> np.ndarray:
    default = np.fromiter((t in _DEFAULT_BLOCK for t in tags), dtype=bool, count=n)
    if render is None or render.empty:
        return default
    r = render.drop_duplicates("node").set_index("node").reindex(np.arange(n))
    disp = r["display"].fillna("").to_numpy(object)
    known = disp != ""
    flags = ~np.isin(disp, list(INLINE_DISPLAYS))
    return np.where(known, flags, default)


def segment_scores(segments: list[dict], *, min_size: float = 0.7, min_color: float = 0.2,
                   max_link: float = 0.5) -> np.ndarray:
    """``F(s) × length(s)`` per segment (seed 002's thresholds by default)."""
    if not segments:
        return np.zeros(0)
    chars = np.array([s["chars"] for s in segments], dtype=float)
    denom = np.where(chars > 0, chars, 1)
    p_size = np.array([s["size_chars"] for s in segments]) / denom
    p_color = np.array([s["color_chars"] for s in segments]) / denom
    p_link = np.array([s["link_chars"] for s in segments]) / denom
    f = np.where((p_size >= min_size) & (p_color >= min_color) & (p_link <= max_link), 1.0, -1.0)
    return f * chars


def mss_select(segments: list[dict], **thresholds) -> list[dict]:
    """The segments of the maximum scoring subsequence (none when no segment scores > 0)."""
    scores = segment_scores(segments, **thresholds)
    if not len(scores) or scores.max() <= 0:
        return []
    start, end, _ = max_scoring_subsequence(scores)
    return segments[start:end]


class MSS(RendersPages, PageMethod):
    """``mss``: Luo et al. (2009) on the rendered page; page-level, labels walker nodes."""

    name = "mss"
    needs_training = False

    def __init__(self, *, render_missing: bool = True, scripts: bool = False, timeout: float = 15.0,
                 min_size: float = 0.7, min_color: float = 0.2, max_link: float = 0.5):
        super().__init__()
        self.render_missing = render_missing
        self.scripts = scripts
        self.timeout = timeout
        self.thresholds = {"min_size": min_size, "min_color": min_color, "max_link": max_link}

    def _render(self, page: "Page") -> pd.DataFrame | None:
        from hwnoise.features.render import NoBrowserError

        try:
            return self.rendered(page)
        except NoBrowserError:
            raise  # no browser here: every page would be read with default styles, and scored
        except Exception as exc:  # noqa: BLE001 - a page the browser cannot take: default styles
            self.failures += 1
            self.last_error = f"{page.html_path}: {exc}"
            return None

    def selected(self, page: "Page") -> list[dict]:
        segments = text_segments(page.read_html(), self._render(page), http_charset=page.http_charset)
        return mss_select(segments, **self.thresholds)

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str:
        return "\n".join(s["text"] for s in self.selected(page))

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        """Content: the elements that hold text of the selected segments."""
        labels = np.full(len(walk.rows), NOISE, dtype=object)
        for s in self.selected(page):
            idx = [k for k in s["nodes"] if k < len(labels)]
            labels[idx] = CONTENT
        return labels


def make(**options) -> MSS:
    """Factory for the registry: ``mss`` (options: render_missing, scripts, timeout, thresholds)."""
    return MSS(**options)
