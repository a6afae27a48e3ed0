"""Wang et al. (2009) as seed 002 §4.2 describes it: title and body nodes found by RBF SVMs on
the rendered page (method ``wang``).

Every walker node below ``<body>`` of a rendered page (``features.render``; what the browser
hides is left out) is a candidate. The *body* classifier sees, per node, its border box (left, top, width,
height) normalised by the first two screens (1366 × 2·768 px), the share of those two screens
its box covers, and the shares of the page's formatting elements (``FORMAT_TAGS``), of the
page's formatted text (text inside them) and of all the page's text that its subtree holds.
The *title* classifier sees the node's box normalised by the first screen (1366 × 768), its
signed vertical distance to the body (top of the body minus bottom of the title, over the
screen height), the horizontal overlap of the two boxes (pixels shared along x, over the
screen width), whether its text ends with a full stop, and its word count; seed 002's reading
of the two ill-defined features.

Both are scikit-learn pipelines (standardisation, then ``SVC(kernel="rbf")`` with balanced
class weights; the authors gave no tuning). On a page, the body is the candidate with the
highest decision value among nodes that start within the first two screens, then the title
the best one among short nodes (at most ``max_title_words`` words) that start within them,
given that body. The text is the title's then the body's (the title alone when it sits inside
the body is not repeated).

Training labels come from gold text: the body node is the node whose subtree words best match
the gold without its first line (F1 over the gold's vocabulary), the title node the one whose
words best match the first line (big9's gold starts with the headline); near-ties are
positives too. ``fit(pages)`` trains on the pages it is given (one dataset's training pages in
``hwnoise evaluate``: one site, as the authors trained on one site); ``train_on`` names
dataset folders to train on instead, to apply one site's model to the others.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hwnoise.extractors.base import ExtractorError, PageMethod, RendersPages
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.text import tokenize

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["Wang", "make", "page_nodes", "body_features", "title_features", "gold_nodes",
           "BODY_FEATURES", "TITLE_FEATURES", "FORMAT_TAGS"]

SCREEN_W, SCREEN_H = 1366.0, 768.0
#: Elements that format text (counted for the body's formatting shares).
FORMAT_TAGS = frozenset("p br b strong i em u font blockquote small big sub sup span h1 h2 h3 "
                        "h4 h5 h6 pre code q cite".split())
BODY_FEATURES = ["left", "top", "width", "height", "screen_area", "format_share",
                 "formatted_text_share", "text_share"]
TITLE_FEATURES = ["left", "top", "width", "height", "vertical_distance", "horizontal_overlap",
                  "full_stop", "words"]


def _formatting(rows: pd.DataFrame, parent: np.ndarray, depth: np.ndarray,
                shown: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step: shown formatting elements, and shown nodes inside one (filled top-down by depth)."""
    tags = rows["tag"].to_numpy(object)
    fmt = np.isin(tags, list(FORMAT_TAGS)) & shown
    in_fmt = fmt.copy()
    for d in range(1, int(depth.max(initial=0)) + 1):
        idx = np.flatnonzero(depth == d)
        in_fmt[idx] |= in_fmt[parent[idx]] & shown[idx]
    return fmt, in_fmt


def _shown_text(walk: "PageWalk", parent: np.ndarray, shown: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Step: per node, the words of its own shown text and its subtree's last shown text."""
    n = len(parent)
    own_words = np.zeros(n)
    last_text = [""] * n
    for node, text in walk.segments:
        if 0 <= node < n and shown[node]:
            own_words[node] += len(tokenize(text))
    # the last shown text of each subtree, for the full stop
    for node, text in walk.segments:
        if 0 <= node < n and shown[node]:
            k = node
            while k >= 0:
                last_text[k] = text
                k = parent[k]
    return own_words, last_text


def _boxes(r: pd.DataFrame) -> dict[str, np.ndarray]:
    """Step: the rendered border box of each node (``x, y, w, h``), no box as 0."""
    return {"x": np.nan_to_num(r["x"].to_numpy(float)), "y": np.nan_to_num(r["y"].to_numpy(float)),
            "w": np.nan_to_num(r["width"].to_numpy(float)), "h": np.nan_to_num(r["height"].to_numpy(float))}


def page_nodes(walk: "PageWalk", render: pd.DataFrame | None) -> pd.DataFrame:
    """Per walker node: box, shown flag, subtree counts (chars, words, formatting elements,
    formatted chars), the subtree's last text, all hidden text left out."""
    from hwnoise.features.measures import subtree_last, subtree_sum
    from hwnoise.features.rendered import align_render, hidden_rows

    rows = walk.rows
    parent = rows["parent"].to_numpy(np.int64)
    depth = rows["distance"].to_numpy(np.int64)
    last = subtree_last(parent)
    r = align_render(rows, render)
    if r is None:
        raise ExtractorError("wang needs the rendered page (run 'hwnoise render DATASET')")
    shown = ~hidden_rows(rows, r)
    fmt, in_fmt = _formatting(rows, parent, depth, shown)
    own_chars = np.where(shown, rows["own_chars"].to_numpy(float), 0.0)
    own_words, last_text = _shown_text(walk, parent, shown)
    return pd.DataFrame({
        "node": np.arange(len(rows)), "shown": shown, **_boxes(r),
        "chars": subtree_sum(own_chars, last), "words": subtree_sum(own_words, last),
        "formats": subtree_sum(fmt.astype(float), last),
        "formatted_chars": subtree_sum(np.where(in_fmt, own_chars, 0.0), last),
        "full_stop": np.array([t.rstrip().endswith(".") for t in last_text], dtype=float),
        "last": last,
    })


def body_features(nodes: pd.DataFrame) -> np.ndarray:
    """The body classifier's features per node (``BODY_FEATURES``), by the first two screens."""
    h2 = 2 * SCREEN_H
    x, y, w, h = (nodes[c].to_numpy(float) for c in ("x", "y", "w", "h"))
    ox = np.clip(np.minimum(x + w, SCREEN_W) - np.maximum(x, 0), 0, None)
    oy = np.clip(np.minimum(y + h, h2) - np.maximum(y, 0), 0, None)
    total = nodes[["formats", "formatted_chars", "chars"]].iloc[0].to_numpy(float)
    total = np.where(total > 0, total, 1)
    return np.column_stack([
        x / SCREEN_W, y / h2, w / SCREEN_W, h / h2, ox * oy / (SCREEN_W * h2),
        nodes["formats"].to_numpy(float) / total[0],
        nodes["formatted_chars"].to_numpy(float) / total[1],
        nodes["chars"].to_numpy(float) / total[2],
    ])


def title_features(nodes: pd.DataFrame, body: int) -> np.ndarray:
    """The title classifier's features per node (``TITLE_FEATURES``) given the body node."""
    x, y, w, h = (nodes[c].to_numpy(float) for c in ("x", "y", "w", "h"))
    bx, by, bw = x[body], y[body], w[body]
    overlap = np.clip(np.minimum(x + w, bx + bw) - np.maximum(x, bx), 0, None)
    return np.column_stack([
        x / SCREEN_W, y / SCREEN_H, w / SCREEN_W, h / SCREEN_H,
        (by - (y + h)) / SCREEN_H, overlap / SCREEN_W,
        nodes["full_stop"].to_numpy(float), np.log1p(nodes["words"].to_numpy(float)),
    ])


def _body_candidates(nodes: pd.DataFrame) -> np.ndarray:
    """Shown nodes below ``<body>`` with text and a box that starts within two screens."""
    return np.flatnonzero(nodes["shown"].to_numpy() & (nodes["chars"].to_numpy() > 0)
                          & (nodes["node"].to_numpy() > 0)
                          & (nodes["w"].to_numpy() * nodes["h"].to_numpy() > 0)
                          & (nodes["y"].to_numpy() < 2 * SCREEN_H))


def _title_candidates(nodes: pd.DataFrame, max_words: int) -> np.ndarray:
    words = nodes["words"].to_numpy()
    return np.flatnonzero(nodes["shown"].to_numpy() & (words >= 1) & (words <= max_words)
                          & (nodes["node"].to_numpy() > 0)
                          & (nodes["w"].to_numpy() * nodes["h"].to_numpy() > 0)
                          & (nodes["y"].to_numpy() < 2 * SCREEN_H))


def _subtree_f1(walk: "PageWalk", nodes: pd.DataFrame, gold_words: list[str]) -> np.ndarray:
    """Per node, F1 of its (shown) subtree words against the gold words, counted over the
    gold's vocabulary (a word of the subtree counts when the gold has it)."""
    n = len(nodes)
    if not gold_words:
        return np.zeros(n)
    vocab = set(gold_words)
    shown = nodes["shown"].to_numpy()
    total = np.zeros(n)
    inv = np.zeros(n)
    for node, text in walk.segments:
        if 0 <= node < n and shown[node]:
            toks = tokenize(text)
            total[node] += len(toks)
            inv[node] += sum(1 for t in toks if t in vocab)
    last = nodes["last"].to_numpy()
    idx = np.arange(n)
    ct, ci = np.concatenate(([0.0], np.cumsum(total))), np.concatenate(([0.0], np.cumsum(inv)))
    t, i = ct[last + 1] - ct[idx], ci[last + 1] - ci[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(t > 0, i / np.where(t > 0, t, 1), 0.0)
        r = np.minimum(i, len(gold_words)) / len(gold_words)
        return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)


def gold_nodes(walk: "PageWalk", nodes: pd.DataFrame, gold: str, *, near: float = 0.98
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """``(title positives, body positives, best body)``: nodes whose words match the gold's first
    line (title) and the rest (body) within ``near`` of the best F1."""
    lines = [ln.strip() for ln in gold.splitlines() if ln.strip()]
    if not lines:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), -1
    head, rest = (lines[0], " ".join(lines[1:])) if len(lines) > 1 else ("", lines[0])
    f_body = _subtree_f1(walk, nodes, tokenize(rest))
    cand = _body_candidates(nodes)
    if not len(cand) or f_body[cand].max() <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), -1
    best = cand[np.argmax(f_body[cand])]
    body_pos = cand[f_body[cand] >= near * f_body[best]]
    head_words = tokenize(head)
    title_pos = np.zeros(0, np.int64)
    if head_words:
        tc = _title_candidates(nodes, max(3 * len(head_words), 10))
        f_t = _subtree_f1(walk, nodes, head_words)
        if len(tc) and f_t[tc].max() >= 0.5:
            title_pos = tc[f_t[tc] >= near * f_t[tc].max()]
    return title_pos, body_pos, int(best)


def _svm(seed: int):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return make_pipeline(StandardScaler(), SVC(kernel="rbf", C=1.0, gamma="scale",
                                               class_weight="balanced", random_state=seed))


class Wang(RendersPages, PageMethod):
    """``wang``: title and body nodes by RBF SVMs on rendered boxes (trains on gold pages)."""

    name = "wang"
    needs_training = True

    def __init__(self, *, train_on: Sequence[str] | str | None = None, max_title_words: int = 40,
                 max_negatives: int = 4000, seed: int = 1, render_missing: bool = True,
                 timeout: float = 15.0):
        super().__init__()
        self.train_on = [train_on] if isinstance(train_on, str) else list(train_on or [])
        self.max_title_words = max_title_words
        self.max_negatives = max_negatives
        self.seed = seed
        self.render_missing = render_missing
        self.timeout = timeout
        self.body_model_ = None
        self.title_model_ = None

    # the rendered page
    def _nodes(self, page: "Page", walk: "PageWalk | None" = None) -> tuple["PageWalk", pd.DataFrame]:
        from hwnoise.features.walk import walk_page

        render = self.rendered(page)
        walk = walk if walk is not None else walk_page(page.read_html(), http_charset=page.http_charset)
        return walk, page_nodes(walk, render)

    def fit(self, pages: Sequence["Page"]) -> "Wang":
        """Train both SVMs on the pages with gold (or on the ``train_on`` datasets)."""
        from hwnoise.features.render import NoBrowserError

        if self.train_on:
            from hwnoise.dataset import Dataset

            pages = [p for path in self.train_on for p in Dataset(path).pages()]
        rng = np.random.default_rng(self.seed)
        xb, yb, xt, yt = [], [], [], []
        for page in pages:
            gold = page.read_gold()
            if not gold:
                continue
            try:
                walk, nodes = self._nodes(page)
            except NoBrowserError:
                raise  # no browser here: no page can be rendered, which is no page's fault
            except Exception as exc:  # noqa: BLE001 - a page that cannot be rendered is skipped
                self.failures += 1
                self.last_error = f"{page.html_path}: {exc}"
                continue
            title_pos, body_pos, best = gold_nodes(walk, nodes, gold)
            if best < 0:
                continue
            bc = _body_candidates(nodes)
            xb.append(body_features(nodes)[bc])
            yb.append(np.isin(bc, body_pos))
            if len(title_pos):
                tc = _title_candidates(nodes, self.max_title_words)
                xt.append(title_features(nodes, best)[tc])
                yt.append(np.isin(tc, title_pos))
        self.body_model_ = self._train(xb, yb, rng, "body")
        self.title_model_ = self._train(xt, yt, rng, "title") if xt else None
        return self

    def _train(self, xs, ys, rng, what: str):
        if not xs:
            raise ExtractorError(f"wang: no training page with gold text and a rendered {what}")
        x, y = np.vstack(xs), np.concatenate(ys)
        if y.all() or not y.any():
            raise ExtractorError(f"wang: the training pages give only one class for the {what}")
        neg = np.flatnonzero(~y)
        if len(neg) > self.max_negatives:
            keep = np.sort(np.concatenate([np.flatnonzero(y), rng.choice(neg, self.max_negatives, replace=False)]))
            x, y = x[keep], y[keep]
        return _svm(self.seed).fit(x, y.astype(int))

    # a page
    def predict_nodes(self, page: "Page", walk: "PageWalk | None" = None
                      ) -> tuple["PageWalk", pd.DataFrame, int, int]:
        """``(walk, nodes, title, body)``: the chosen nodes (-1 when none)."""
        if self.body_model_ is None:
            raise ExtractorError("wang is not fitted: call fit(pages) with gold pages first")
        walk, nodes = self._nodes(page, walk)
        bc = _body_candidates(nodes)
        if not len(bc):
            return walk, nodes, -1, -1
        body = int(bc[np.argmax(self.body_model_.decision_function(body_features(nodes)[bc]))])
        title = -1
        if self.title_model_ is not None:
            tc = _title_candidates(nodes, self.max_title_words)
            if len(tc):
                title = int(tc[np.argmax(self.title_model_.decision_function(title_features(nodes, body)[tc]))])
        return walk, nodes, title, body

    def _content(self, nodes: pd.DataFrame, title: int, body: int) -> np.ndarray:
        n = len(nodes)
        keep = np.zeros(n, dtype=bool)
        last = nodes["last"].to_numpy()
        for k in (title, body):
            if k >= 0:
                keep[k:last[k] + 1] = True
        return keep & nodes["shown"].to_numpy()

    def extract(self, page: "Page", walk: "PageWalk | None" = None) -> str:
        walk, nodes, title, body = self.predict_nodes(page, walk)
        if body < 0:
            return ""
        last = nodes["last"].to_numpy()
        shown = nodes["shown"].to_numpy()
        parts = []
        if title >= 0 and not (body <= title <= last[body]):
            parts.append([t for o, t in walk.segments if title <= o <= last[title] and shown[o]])
        parts.append([t for o, t in walk.segments if body <= o <= last[body] and shown[o]])
        return "\n".join(t for part in parts for t in part)

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        _, nodes, title, body = self.predict_nodes(page, walk)
        return np.where(self._content(nodes, title, body), CONTENT, NOISE).astype(object)


def make(**options) -> Wang:
    """Factory for the registry: ``wang`` (options: train_on, max_title_words, seed, ...)."""
    return Wang(**options)
