"""Page-level template detection by isotonic smoothing (seed 000; Chakrabarti, Kumar & Punera,
WWW 2007).

1. Training labels come from SiteLevel (``hwnoise.extractors.sitelevel``) on the training pages.
2. Six features per node (seed 000, "Treinando o classificador"): distance to the top and to
   the left of the page, links per word, share of the text inside anchors, mean anchor length,
   share of intra-site links, share of the node's HTML that is visible text.
3. Four logistic regressions (scikit-learn), one per node-area bucket; the buckets are cut at
   the means, over the training sites, of each site's three quartiles of node area (Table 5).
4. The classifiers' templateness scores are smoothed over the DOM tree by regularised isotonic
   regression: minimise ``sum_i (y_i - x_i)^2 + c * #{i : x_i != x_parent(i)}`` subject to
   ``x_parent(i) <= x_i`` (a node's templateness cannot exceed its children's: the children of
   a template are template), then nodes with ``x >= 0.5`` are template (noise, S).

Choices where seed 000 is silent or the data lack what it used:

- Geometry: when ``DATASET/render.parquet`` exists (columns ``page, node, x, y, width,
  height``) the rendered top/left/area are used; otherwise document-order proxies: top = the
  share of the page's text before the node (``chars_before``), left = depth / deepest depth,
  area = the node's characters. ``geometry_`` records which was used.
- Smoothing values: seed 000 names the objective's parts (the tree constraint, the penalty
  c per node) but not the program. Ours solves it exactly over the reals: each node's least
  cost as a function of its value is a continuous piecewise quadratic, built bottom-up (checked
  in the tests against an independent solver). ``levels=N`` instead restricts the values to N
  quantiles of the page's scores (faster; an approximation).
- Intra-site links: an ``<a href>`` whose resolved host has the page's site (relative links
  are intra-site); links per word counts ``<a>`` elements over the words of the subtree.
- ``training="pooled"`` adds to a dataset's training pages every page of the datasets named in
  ``pool`` (other than the dataset being scored), as the paper's "total" classifier.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import numpy as np

from hwnoise.dataset import site_of
from hwnoise.extractors.base import ExtractorError, WalkMethod, option_flag, walk_of
from hwnoise.extractors.sitelevel import SiteLevel
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.elements import ElementView, html_len_or_proxy, shown_elements
from hwnoise.text import tokenize

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["Isotonic", "make", "smooth_tree", "isotonic_tree", "node_features", "FEATURES"]

FEATURES = ["top", "left", "links_per_word", "anchor_text_share", "mean_anchor_length",
            "intra_site_link_share", "visible_text_share"]
#: the six features of seed 000 (distance to the margins is two of them)


# -- the smoothing ----------------------------------------------------------------------------
def _levels(scores: np.ndarray, levels: int | None) -> np.ndarray:
    values = np.unique(scores)
    if levels is not None and len(values) > levels:
        values = np.unique(np.quantile(scores, np.linspace(0, 1, levels)))
    return values


# -- exact smoothing: piecewise quadratic functions of the node value ---------------------------
_EPS = 1e-12


class _PQ:
    """A continuous piecewise quadratic on [xs[0], xs[-1]]: a*v^2 + b*v + c0 on [xs[i], xs[i+1]]."""
    __slots__ = ("xs", "a", "b", "c")

    def __init__(self, xs, a, b, c):
        self.xs, self.a, self.b, self.c = xs, a, b, c

    def piece(self, v: float) -> int:
        return int(min(max(np.searchsorted(self.xs, v, side="right") - 1, 0), len(self.a) - 1))

    def __call__(self, v: float) -> float:
        i = self.piece(v)
        return float((self.a[i] * v + self.b[i]) * v + self.c[i])

    def argmin_from(self, v: float) -> tuple[float, float]:
        """(min, argmin) of the function over [v, end] (the smallest argmin)."""
        best, arg = np.inf, v
        for i in range(self.piece(v), len(self.a)):
            lo, hi = max(self.xs[i], v), self.xs[i + 1]
            a, b, c = self.a[i], self.b[i], self.c[i]
            cands = [lo, hi]
            if a > 0:
                p = -b / (2 * a)
                if lo < p < hi:
                    cands.append(p)
            for w in sorted(cands):
                f = (a * w + b) * w + c
                if f < best - _EPS:
                    best, arg = f, w
        return float(best), float(arg)


def _pq_merge(f: _PQ, g: _PQ):
    xs = np.unique(np.concatenate([f.xs, g.xs]))
    keep = np.concatenate(([True], np.diff(xs) > _EPS))
    xs = xs[keep]
    xs[-1] = max(f.xs[-1], g.xs[-1])
    mid = (xs[:-1] + xs[1:]) / 2
    i = np.clip(np.searchsorted(f.xs, mid, side="right") - 1, 0, len(f.a) - 1)
    j = np.clip(np.searchsorted(g.xs, mid, side="right") - 1, 0, len(g.a) - 1)
    return xs, i, j


def _pq_add(f: _PQ, g: _PQ) -> _PQ:
    xs, i, j = _pq_merge(f, g)
    return _PQ(xs, f.a[i] + g.a[j], f.b[i] + g.b[j], f.c[i] + g.c[j])


def _roots(a: float, b: float, c: float, lo: float, hi: float) -> list[float]:
    """Roots of a*v^2 + b*v + c strictly inside (lo, hi)."""
    if abs(a) < 1e-15:
        if abs(b) < 1e-15:
            return []
        r = [-c / b]
    else:
        disc = b * b - 4 * a * c
        if disc < 0:
            return []
        s = np.sqrt(disc)
        q = -0.5 * (b + np.copysign(s, b))     # the stable pair of roots
        r = [q / a] + ([c / q] if q != 0 else [])
    return sorted(x for x in r if lo + _EPS < x < hi - _EPS)


def _pq_min(f: _PQ, g: _PQ) -> _PQ:
    """The pointwise minimum of two piecewise quadratics."""
    xs, i, j = _pq_merge(f, g)
    out_x, out_a, out_b, out_c = [xs[0]], [], [], []
    for p in range(len(xs) - 1):
        lo, hi = xs[p], xs[p + 1]
        fa, fb, fc = f.a[i[p]], f.b[i[p]], f.c[i[p]]
        ga, gb, gc = g.a[j[p]], g.b[j[p]], g.c[j[p]]
        cuts = [lo] + _roots(fa - ga, fb - gb, fc - gc, lo, hi) + [hi]
        for s in range(len(cuts) - 1):
            m = (cuts[s] + cuts[s + 1]) / 2
            take_f = (fa * m + fb) * m + fc <= (ga * m + gb) * m + gc
            coef = (fa, fb, fc) if take_f else (ga, gb, gc)
            if out_a and (out_a[-1], out_b[-1], out_c[-1]) == coef:
                out_x[-1] = cuts[s + 1]
                continue
            out_a.append(coef[0]); out_b.append(coef[1]); out_c.append(coef[2])  # noqa: E702
            out_x.append(cuts[s + 1])
    return _PQ(np.asarray(out_x), np.asarray(out_a), np.asarray(out_b), np.asarray(out_c))


def _pq_suffix_min(f: _PQ) -> _PQ:
    """v -> min over w >= v of f(w)."""
    xs, a, b, c = f.xs, f.a, f.b, f.c
    pieces: list[tuple[float, float, float, float, float]] = []   # (lo, hi, a, b, c), right to left
    run = np.inf
    for i in range(len(a) - 1, -1, -1):
        lo, hi = xs[i], xs[i + 1]
        ai, bi, ci = a[i], b[i], c[i]
        # h(v) = min over [v, hi] of the piece: constant up to its minimum point, then the piece
        if ai > 0:                       # (pieces are never concave: squares and constants)
            p = min(max(-bi / (2 * ai), lo), hi)
        else:
            p = hi if bi <= 0 else lo
        qp = (ai * p + bi) * p + ci
        segs = []
        if p > lo:
            segs.append((lo, p, 0.0, 0.0, qp))
        if p < hi:
            segs.append((p, hi, ai, bi, ci))
        # min with the running minimum to the right (h is non-decreasing in v)
        for slo, shi, sa, sb, sc in reversed(segs):
            hlo = (sa * slo + sb) * slo + sc
            hhi = (sa * shi + sb) * shi + sc
            if hlo >= run:
                pieces.append((slo, shi, 0.0, 0.0, run))
            elif hhi <= run:
                pieces.append((slo, shi, sa, sb, sc))
            else:
                r = _roots(sa, sb, sc - run, slo, shi)
                cut = r[0] if r else shi
                pieces.append((cut, shi, 0.0, 0.0, run))
                pieces.append((slo, cut, sa, sb, sc))
            run = min(run, hlo)
    pieces.reverse()
    out_x, out_a, out_b, out_c = [pieces[0][0]], [], [], []
    for lo, hi, pa, pb, pc in pieces:
        if hi - lo <= _EPS and out_a:
            out_x[-1] = hi
            continue
        if out_a and (out_a[-1], out_b[-1], out_c[-1]) == (pa, pb, pc):
            out_x[-1] = hi
            continue
        out_a.append(pa); out_b.append(pb); out_c.append(pc)  # noqa: E702
        out_x.append(hi)
    return _PQ(np.asarray(out_x), np.asarray(out_a), np.asarray(out_b), np.asarray(out_c))


def _smooth_exact(parent: np.ndarray, y: np.ndarray, c: float) -> np.ndarray:
    """The exact optimum of the smoothing objective: bottom-up, node i's cost as a function of
    its value v, ``f_i(v) = (y_i - v)^2 + sum_children min(f_ch(v), c + min_{w >= v} f_ch(w))``
    as continuous piecewise quadratics on [min y, max y] (an optimum never leaves that range:
    clipping keeps the order, equal values and lowers the squares); then top-down the argmins."""
    n = len(y)
    lo, hi = float(y.min()), float(y.max())
    if hi - lo <= _EPS:
        return np.full(n, lo)
    dom = np.array([lo, hi])
    f: list[_PQ | None] = [None] * n
    acc: list[_PQ | None] = [None] * n
    for i in range(n - 1, -1, -1):
        own = _PQ(dom.copy(), np.array([1.0]), np.array([-2.0 * y[i]]), np.array([y[i] * y[i]]))
        fi = own if acc[i] is None else _pq_add(own, acc[i])
        f[i] = fi
        acc[i] = None
        p = parent[i]
        if p >= 0:
            s = _pq_suffix_min(fi)
            jump = _PQ(s.xs, s.a, s.b, s.c + c)
            term = _pq_min(fi, jump)
            acc[p] = term if acc[p] is None else _pq_add(acc[p], term)
    x = np.empty(n)
    for i in range(n):
        p = parent[i]
        if p < 0:
            x[i] = f[i].argmin_from(lo)[1]
            continue
        v = x[p]
        best, arg = f[i].argmin_from(v)
        x[i] = v if f[i](v) <= c + best + 1e-12 else arg
    return x


def smooth_tree(parent: Sequence[int], scores: Sequence[float], c: float = 0.01, *,
                levels: int | None = None) -> np.ndarray:
    """Regularised isotonic regression on a tree (rows in document order, parent -1 at the root).

    Minimises ``sum (y_i - x_i)^2 + c * #{i: x_i != x_parent(i)}`` under ``x_parent <= x_child``
    exactly (any real values; see :func:`_smooth_exact`). ``levels`` (an int) instead restricts
    the values to that many quantiles of the scores, the faster approximation of earlier
    versions: dynamic programming over the grid, O(n * levels)."""
    parent = np.asarray(parent, dtype=np.int64)
    y = np.asarray(scores, dtype=np.float64)
    n = len(y)
    if n == 0:
        return y.copy()
    if levels is None:
        return _smooth_exact(parent, y, float(c))
    V = _levels(y, levels)
    k = len(V)
    acc = np.zeros((n, k))
    f_all = np.empty((n, k))
    above_min = np.empty((n, k))  # min over w > v of f_i(w) (inf for the top value)
    above_arg = np.empty((n, k), dtype=np.int64)
    idx = np.arange(k)
    for i in range(n - 1, -1, -1):  # children come after their parent in document order
        f = (y[i] - V) ** 2 + acc[i]
        f_all[i] = f
        rev = f[::-1]
        run_min = np.minimum.accumulate(rev)[::-1]  # min over w >= v
        # argmin over w >= v (first on ties, scanning from the top)
        pos = np.maximum.accumulate(np.where(rev == run_min[::-1], idx, 0))
        run_arg = (k - 1 - pos)[::-1]
        above_min[i, :-1] = run_min[1:]
        above_min[i, -1] = np.inf
        above_arg[i, :-1] = run_arg[1:]
        above_arg[i, -1] = k - 1
        p = parent[i]
        if p >= 0:
            acc[p] += np.minimum(f, c + above_min[i])
    x = np.empty(n, dtype=np.int64)
    for i in range(n):
        p = parent[i]
        if p < 0:
            x[i] = int(np.argmin(f_all[i]))
            continue
        v = x[p]
        x[i] = v if f_all[i, v] <= c + above_min[i, v] else above_arg[i, v]
    return V[x]


def isotonic_tree(parent: Sequence[int], scores: Sequence[float], c: float = 0.01, *,
                  threshold: float = 0.5, levels: int | None = None) -> np.ndarray:
    """Template flags after smoothing: ``smooth_tree(...) >= threshold``."""
    return smooth_tree(parent, scores, c, levels=levels) >= threshold


def tree_cost(parent: Sequence[int], scores: Sequence[float], x: Sequence[float], c: float) -> float:
    """The objective of :func:`smooth_tree` (inf when ``x`` breaks the tree constraint)."""
    parent = np.asarray(parent)
    y, x = np.asarray(scores, float), np.asarray(x, float)
    has = parent >= 0
    px = x[np.where(has, parent, 0)]
    if np.any(has & (x < px - 1e-12)):
        return float("inf")
    return float(((y - x) ** 2).sum() + c * np.sum(has & (np.abs(x - px) > 1e-12)))


# -- the features -----------------------------------------------------------------------------
def _render_table(page: "Page"):
    path = Path(page.dataset.path) / "render.parquet"
    if not path.exists():
        return None
    import pandas as pd

    try:
        df = pd.read_parquet(path)
    except Exception:  # noqa: BLE001 - an unreadable render table falls back to proxies
        return None
    return df[df["page"].astype(str) == str(page.id)]


def _safe(a: np.ndarray) -> np.ndarray:
    """A safe divisor: ``a`` with its values that are not positive replaced by 1."""
    return np.where(a > 0, a, 1.0)


def _link_features(walk: "PageWalk", chars: np.ndarray, link_chars: np.ndarray, link_tags: np.ndarray,
                   last: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step: links per word, share of the text in anchors and mean anchor length per node."""
    from hwnoise.features.measures import subtree_sum

    own_words = np.zeros(len(chars))
    for node, text in walk.segments:
        own_words[node] += len(tokenize(text))
    words = subtree_sum(own_words, last)
    links_per_word = np.where(words > 0, link_tags / _safe(words), link_tags)
    anchor_share = np.where(chars > 0, link_chars / _safe(chars), 0.0)
    mean_anchor = np.where(link_tags > 0, link_chars / _safe(link_tags), 0.0)
    return links_per_word, anchor_share, mean_anchor


def _intra_links(view: ElementView, url: str, n: int) -> np.ndarray:
    """Step: 1 for each ``<a>`` row linking within the page's site (relative ones do), else 0."""
    site = site_of(url)
    is_intra = np.zeros(n)
    for i, el in enumerate(view.elements):
        if el.tag == "a":
            href = (el.get("href") or "").strip()
            if not href or href.startswith("#"):
                is_intra[i] = 1
                continue
            host = site_of(urljoin(url, href) if url else href)
            is_intra[i] = 1.0 if (not host or host == site) else 0.0
    return is_intra


def _html_features(view: ElementView | None, url: str, chars: np.ndarray, link_tags: np.ndarray,
                   last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step: intra-site link share and visible-text share per node (0 and 1 without an aligned view)."""
    from hwnoise.features.measures import subtree_sum

    n = len(chars)
    if view is None or not view.aligned:
        return np.zeros(n), np.ones(n)
    is_intra = _intra_links(view, url, n)
    intra = np.where(link_tags > 0, subtree_sum(is_intra, last) / _safe(link_tags), 0.0)
    visible = np.minimum(chars / _safe(view.html_len), 1.0)
    return intra, visible


def _document_geometry(r, chars: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step: top, left and area proxies from document order (text before, depth, characters)."""
    n = len(r)
    idx = np.arange(n)
    top = r["chars_before"].to_numpy(dtype=float) if "chars_before" in r else idx / max(n, 1)
    depth = r["distance"].to_numpy(dtype=float)
    left = depth / max(depth.max(initial=0), 1)
    return top, left, chars.copy()


def _rendered_geometry(render, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Step: top, left and area from the render rows; None when none fit the walk's nodes."""
    if render is None or not len(render):
        return None
    g = render.set_index("node")
    if not (len(g) and g.index.max() < n):
        return None
    node = g.index.to_numpy()
    top, left, area = np.zeros(n), np.zeros(n), np.zeros(n)
    top[node] = g["y"].to_numpy(float)
    left[node] = g["x"].to_numpy(float)
    area[node] = (g["width"] * g["height"]).to_numpy(float)
    return top, left, area


def node_features(walk: "PageWalk", view: ElementView | None, url: str = "",
                  render=None) -> tuple[np.ndarray, np.ndarray, str]:
    """The seven columns of :data:`FEATURES`, the node area and the geometry source used."""
    r = walk.rows
    last = np.asarray(walk.last, dtype=np.int64)
    chars = r["chars"].to_numpy(dtype=float)
    link_chars = r["link_chars"].to_numpy(dtype=float)
    link_tags = r["link_tags"].to_numpy(dtype=float)
    links_per_word, anchor_share, mean_anchor = _link_features(walk, chars, link_chars, link_tags, last)
    intra, visible = _html_features(view, url, chars, link_tags, last)
    top, left, area = _document_geometry(r, chars)
    geometry = "document-order"
    rendered = _rendered_geometry(render, len(r))
    if rendered is not None:
        (top, left, area), geometry = rendered, "rendered"
    X = np.column_stack([top, left, links_per_word, anchor_share, mean_anchor, intra, visible])
    return X, area, geometry


# -- the method -------------------------------------------------------------------------------
class Isotonic(WalkMethod):
    """Four area-bucket logistic regressions on SiteLevel labels, smoothed over the tree."""

    name = "isotonic"
    needs_training = True

    def __init__(self, c: float = 0.01, smoothing: bool = True, training: str = "dataset",
                 pool: Sequence[str] = (), p: float = 0.10, threshold: float = 0.5,
                 levels: int | None = None) -> None:
        super().__init__()
        if training not in ("dataset", "pooled"):
            raise ExtractorError(f"isotonic: training must be 'dataset' or 'pooled', got {training!r}")
        self.c, self.smoothing, self.training, self.pool = float(c), bool(smoothing), training, list(pool)
        self.p, self.threshold = float(p), float(threshold)
        self.levels = None if levels in (None, "", "exact", 0) else int(levels)
        self.cuts_: np.ndarray | None = None
        self.models_: list = []
        self.geometry_: set[str] = set()
        self.train_share_: float | None = None

    def _pool_pages(self, pages: Sequence["Page"]) -> list["Page"]:
        from hwnoise.dataset import Dataset

        if self.training != "pooled":
            return list(pages)
        own = {str(Path(p.dataset.path).resolve()) for p in pages}
        extra = []
        for d in self.pool:
            if str(Path(d).resolve()) in own:
                continue
            extra.extend(Dataset(d).pages())
        return list(pages) + extra

    def fit(self, pages: Sequence["Page"]) -> "Isotonic":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        pages = self._pool_pages(pages)
        if not pages:
            raise ExtractorError("isotonic: no training pages")
        sl = SiteLevel(p=self.p)
        records, Xs, areas, sites = [], [], [], []
        for page in pages:  # one walk per page: SiteLevel's hashes and the features together
            walk = walk_of(page, keep_tree=True)
            _, view, keys = sl.analyse(page.read_html(), page.http_charset, walk)
            records.append((sl._site(page), keys, walk.rows["parent"].to_numpy(),
                            html_len_or_proxy(walk, view)))
            X, area, geo = node_features(walk, view, page.url, _render_table(page))
            self.geometry_.add(geo)
            Xs.append(X), areas.append(area), sites.append(np.full(len(area), page.site, dtype=object))
        ys = [t.astype(int) for t in sl.fit_records(records).training_labels()]
        self.sitelevel_stats_ = sl.stats_
        X, y, area, site = np.vstack(Xs), np.concatenate(ys), np.concatenate(areas), np.concatenate(sites)
        self.train_share_ = float(y.mean()) if len(y) else 0.0
        # bucket cuts: the mean over sites of each site's quartiles of node area (Table 5)
        q = np.array([np.quantile(area[site == s], [0.25, 0.5, 0.75]) for s in np.unique(site)])
        self.cuts_ = q.mean(axis=0)
        bucket = np.searchsorted(self.cuts_, area, side="right")
        self.models_ = []
        for b in range(4):
            m = bucket == b
            if m.sum() == 0 or len(np.unique(y[m])) < 2:
                self.models_.append(float(y[m].mean()) if m.sum() else self.train_share_)
                continue
            clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
            self.models_.append(clf.fit(X[m], y[m]))
        return self

    def scores(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        """Each node's templateness score before smoothing."""
        if self.cuts_ is None:
            raise ExtractorError("isotonic: call fit(pages) with a site's training pages first")
        view = shown_elements(page.read_html(), page.http_charset, len(walk.rows),
                              walk.rows["tag"].tolist(), walk=walk)
        X, area, geo = node_features(walk, view, page.url, _render_table(page))
        self.geometry_.add(geo)
        bucket = np.searchsorted(self.cuts_, area, side="right")
        out = np.zeros(len(area))
        for b, model in enumerate(self.models_):
            m = bucket == b
            if not m.any():
                continue
            out[m] = model if isinstance(model, float) else model.predict_proba(X[m])[:, 1]
        return out

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        s = self.scores(page, walk)
        parent = walk.rows["parent"].to_numpy()
        flags = (isotonic_tree(parent, s, self.c, threshold=self.threshold, levels=self.levels)
                 if self.smoothing else s >= self.threshold)
        return np.where(flags, NOISE, CONTENT)


def make(c: float = 0.01, smoothing: Any = True, training: str = "dataset", pool: Any = (),
         p: float = 0.10, threshold: float = 0.5, levels: Any = None) -> Isotonic:
    """The ``isotonic`` method: ``c`` (0.01, 0.1, 1), ``smoothing`` on/off, ``training``
    ``dataset`` or ``pooled`` (with ``pool``: dataset folders, a list or comma-separated),
    ``levels`` None (exact smoothing, the default) or N quantiles of the scores (faster)."""
    if isinstance(pool, str):
        pool = [x for x in pool.split(",") if x]
    return Isotonic(c=float(c), smoothing=option_flag(smoothing), training=training, pool=pool,
                    p=float(p), threshold=float(threshold), levels=levels)
