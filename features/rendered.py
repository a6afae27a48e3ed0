"""The walker's rows as the browser shows them: ``apply_render(rows, render)``.

``render`` is ``DATASET/render.parquet`` (``features.render``), one row per walker
row keyed ``(page, node)``. ``apply_render``:

1. drops the rows the browser hides, with their subtrees (the walker's rows of a
   page are a preorder tree, and only whole subtrees are dropped, so every kept
   row keeps its ancestors). An element is hidden when its computed

   - ``display`` is ``none``;
   - ``visibility`` is ``hidden`` or ``collapse`` and no element below it is
     visible again (CSS lets a child say ``visibility: visible``; such a subtree
     is kept whole);
   - box has no area, and nothing below it has an area or any text
     (empty spacers, collapsed empty containers; an element whose box is empty
     but whose text spills out, e.g. an inline with overflowing content, stays);
   - box lies wholly left of the page (``x + width <= 0``), or wholly above it
     (``y + height <= 0``) and is at most 100 px high: the "skip to content"
     links and other off-screen text a person never sees. (Pages render
     without their external style sheets, which hwnoise does not have, so big
     blocks above the page are layouts gone wrong, not hidden text: a nymag
     2017 article lies at y = -4671 px; it is kept.)

   ``opacity: 0`` is kept as a feature but not dropped: with scripts off, pages
   that fade their content in would lose it. ``<body>`` is never dropped. A
   node the browser lost (``display`` "") counts as shown.

2. recomputes, for the kept rows, every measure of the walk exactly as
   ``walk_page`` would have computed it had those elements been hidden by the
   page's own style sheet: ``node``, ``parent``, ``xpath``, ``chars``, ``tags``,
   ``link_chars``, ``link_tags``, ``td``, ``ctd``, ``density_sum``,
   ``query_score``, ``own_query_score``, ``position``, ``chars_before``,
   ``link_density``, ``parent_ctd``, ``children``, ``sibling_same_tag``. Text a
   row owns belongs to a link exactly when the row or an ancestor is ``<a>``,
   so link counts follow from the rows; the own-term matches behind
   ``own_query_score`` are recovered from the column itself. ``sitelevel`` and
   ``label`` are carried over.

3. adds the rendered features ``RENDER_FEATURES``: ``box_x``, ``box_y``,
   ``box_width``, ``box_height`` (the border box, x and width divided by the
   viewport's 1366 px width, y and height by its 768 px height, so ``box_y`` < 1
   is the first screen); ``font_size_rel`` (font size over the page's most
   common font size, weighted by own characters); ``font_weight`` (100..900);
   ``color_luminance`` (WCAG relative luminance of the text colour, 0 black ..
   1 white); ``color_differs`` (1 when the text colour is not the page's most
   common text colour); ``opacity``. A row without render data gets neutral
   values (0 boxes, size ratio 1, weight 400, the dominant colour).

Pages of ``rows`` that ``render`` lacks pass through undropped with neutral
rendered features.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from hwnoise.features.render import VIEWPORT
from hwnoise.features.measures import subtree_last, tree_measures

__all__ = ["apply_render", "rendered_walk", "hidden_rows", "RENDER_FEATURES", "parse_color", "luminance",
           "align_render", "dominant"]

#: The rendered extended features ``apply_render`` adds.
RENDER_FEATURES: list[str] = ["box_x", "box_y", "box_width", "box_height", "font_size_rel",
                              "font_weight", "color_luminance", "color_differs", "opacity"]

#: Tallest box (px) dropped for lying wholly above the page: skip links moved up are small;
#: without its external style sheets a page can put a whole article above (nymag 2017).
_MAX_ABOVE = 100.0

_COLOR_RE = re.compile(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+%?))?\s*\)")


def parse_color(values) -> np.ndarray:
    """``rgb(r, g, b)``/``rgba(...)`` strings -> float array (n, 4) of r, g, b in 0..255 and
    alpha 0..1; anything else is NaN."""
    vals = list(values)
    out = np.full((len(vals), 4), np.nan)
    cache: dict = {}
    for k, v in enumerate(vals):
        if not isinstance(v, str):
            continue
        got = cache.get(v)
        if got is None:
            m = _COLOR_RE.match(v.strip())
            if m is None:
                got = (np.nan,) * 4
            else:
                a = m.group(4)
                alpha = 1.0 if a is None else (float(a[:-1]) / 100 if a.endswith("%") else float(a))
                got = (float(m.group(1)), float(m.group(2)), float(m.group(3)), alpha)
            cache[v] = got
        out[k] = got
    return out


def luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of an (n, >=3) array of 0..255 channels."""
    c = np.asarray(rgb, dtype=float)[:, :3] / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def dominant(values, weights) -> object:
    """The value with the largest total weight (first seen on a tie); None when no weight."""
    s = pd.Series(np.asarray(weights, dtype=float)).groupby(pd.Series(list(values)), sort=False).sum()
    s = s[s > 0]
    if s.empty:
        return None
    return s.idxmax()


def _subtree_any(flag: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per row: does any row strictly below it have ``flag``?"""
    cs = np.concatenate(([0], np.cumsum(flag.astype(np.int64))))
    idx = np.arange(len(flag))
    return (cs[last + 1] - cs[idx + 1]) > 0


def align_render(rows: pd.DataFrame, render: pd.DataFrame | None) -> pd.DataFrame | None:
    """``render`` rows of one page reordered to match ``rows`` (by ``node``); None when there
    is no render data or its tags disagree with the rows (a page walked differently)."""
    if render is None or render.empty:
        return None
    r = render.drop_duplicates("node").set_index("node").reindex(rows["node"].to_numpy())
    if "tag" in r.columns:
        have = r["tag"].notna().to_numpy()
        if (r["tag"].to_numpy()[have] != rows["tag"].to_numpy()[have]).any() or not have.all():
            return None
    return r.reset_index()


def hidden_rows(rows: pd.DataFrame, r: pd.DataFrame) -> np.ndarray:
    """Boolean mask over ``rows`` (one page, preorder) of the rows the browser hides, their
    subtrees included (see the module docstring); ``r`` is ``align_render``'s result."""
    n = len(rows)
    if n == 0:
        return np.zeros(0, dtype=bool)
    parent = rows["parent"].to_numpy(np.int64)
    last = subtree_last(parent)
    display = r["display"].fillna("").to_numpy(object)
    vis = r["visibility"].fillna("").to_numpy(object)
    x, y = r["x"].to_numpy(float), r["y"].to_numpy(float)
    w, h = r["width"].to_numpy(float), r["height"].to_numpy(float)
    known = display != ""
    own_chars = rows["own_chars"].to_numpy(np.int64) if "own_chars" in rows else rows["text"].str.len().to_numpy()
    cs = np.concatenate(([0], np.cumsum(own_chars)))
    chars = cs[last + 1] - cs[np.arange(n)]
    area = np.nan_to_num(w) * np.nan_to_num(h) > 0
    invisible = np.isin(vis, ["hidden", "collapse"])
    own = known & (display == "none")
    own |= known & invisible & ~_subtree_any(known & ~invisible & ~(display == "none"), last)
    own |= known & ~area & (chars == 0) & ~_subtree_any(area, last)
    own |= known & area & ((x + w <= 0) | ((y + h <= 0) & (h <= _MAX_ABOVE)))
    own[0] = False
    # a hidden row takes its subtree with it
    mark = np.zeros(n + 1, dtype=np.int64)
    roots = np.flatnonzero(own)
    np.add.at(mark, roots, 1)
    np.add.at(mark, last[roots] + 1, -1)
    return np.cumsum(mark[:n]) > 0


# -- the walk's measures on the kept rows ---------------------------------------------------
def _own_matches(parent: np.ndarray, depth: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Invert ``_query_score``: each row's own matches from the scores (deepest rows first)."""
    n = len(parent)
    m = np.zeros(n)
    acc = np.zeros(n)
    if n == 0 or not np.any(qs):
        return m
    for d in range(int(depth.max()), -1, -1):
        idx = np.flatnonzero(depth == d)
        m[idx] = np.round(qs[idx] - acc[idx])
        cur = idx[m[idx] != 0]
        val = m[cur]
        dist = 2.0
        while len(cur):
            cur = parent[cur]
            keep = cur >= 0
            cur, val = cur[keep], val[keep]
            np.add.at(acc, cur, val / dist)
            dist += 1.0
    return np.maximum(m, 0)


def _remeasure(rows: pd.DataFrame, drop: np.ndarray) -> pd.DataFrame:
    """The rows not in ``drop`` with the walk's measures recomputed without the dropped ones."""
    n = len(rows)
    parent0 = rows["parent"].to_numpy(np.int64)
    depth0 = rows["distance"].to_numpy(np.int64)
    last0 = subtree_last(parent0)
    own_chars0 = rows["own_chars"].to_numpy(np.int64)
    keep = np.flatnonzero(~drop)
    new_of = np.cumsum(~drop) - 1
    # characters of dropped subtrees that come before each row (for chars_before)
    roots = np.flatnonzero(drop & ~np.r_[False, drop[parent0[1:]]]) if n > 1 else np.zeros(0, np.int64)
    cs0 = np.concatenate(([0], np.cumsum(own_chars0)))
    root_chars = cs0[last0[roots] + 1] - cs0[roots]
    before = np.zeros(n + 1)
    np.add.at(before, last0[roots] + 1, root_chars)
    hidden_before = np.cumsum(before)[:n]
    own_m0 = _own_matches(parent0, depth0, rows["own_query_score"].to_numpy(float)) \
        if "own_query_score" in rows else np.zeros(n)

    out = rows.iloc[keep].copy().reset_index(drop=True)
    k = len(out)
    parent = np.where(parent0[keep] >= 0, new_of[np.maximum(parent0[keep], 0)], -1).astype(np.int64)
    depth = depth0[keep]
    tag = out["tag"].tolist()
    own_chars = own_chars0[keep]
    in_link = np.fromiter((t == "a" for t in tag), dtype=bool, count=k)
    for d in range(1, int(depth.max(initial=0)) + 1):
        idx = np.flatnonzero(depth == d)
        in_link[idx] |= in_link[parent[idx]]
    cb_old = float(rows["chars"].iloc[0]) if n else 0.0
    prior = out["chars_before"].to_numpy(float) * (cb_old or 1) - hidden_before[keep] \
        if "chars_before" in out else np.zeros(k)
    matches = out["matches"].to_numpy(np.int64) if "matches" in out else np.zeros(k, np.int64)
    root_path = out["xpath"].iloc[0] if k else ""
    m = tree_measures(parent, tag, depth, own_chars, own_chars * in_link, matches, own_m0[keep],
                      prior, root_path)
    always = ["node", "parent", "xpath", "chars", "tags", "link_chars", "link_tags", "td", "ctd",
              "density_sum"]
    optional = ["query_score", "own_query_score", "link_density", "position", "chars_before",
                "parent_ctd", "children", "sibling_same_tag"]
    m["query_score"] = m["query_score"] if "matches" in out else None
    m["chars_before"] = np.clip(m["chars_before"], 0.0, None)
    for c in always:
        out[c] = m[c]
    for c in optional:
        if c in out and m[c] is not None:
            out[c] = m[c]
    return out


def _features(rows: pd.DataFrame, r: pd.DataFrame | None) -> dict[str, np.ndarray]:
    """The rendered features of one page's (kept) rows."""
    k = len(rows)
    if r is None or k == 0:
        return {"box_x": np.zeros(k), "box_y": np.zeros(k), "box_width": np.zeros(k),
                "box_height": np.zeros(k), "font_size_rel": np.ones(k),
                "font_weight": np.full(k, 400.0), "color_luminance": np.zeros(k),
                "color_differs": np.zeros(k), "opacity": np.ones(k)}
    vw, vh = VIEWPORT
    weight = rows["own_chars"].to_numpy(float)
    size = r["font_size"].to_numpy(float)
    base = dominant(size[~np.isnan(size)], weight[~np.isnan(size)])
    if base is None or not base:
        base = float(np.nanmedian(size)) if np.isfinite(size).any() else 16.0
    colors = r["color"].fillna("").to_numpy(object)
    base_color = dominant(colors[colors != ""], weight[colors != ""]) or "rgb(0, 0, 0)"
    rgba = parse_color(colors)
    lum = luminance(np.nan_to_num(rgba[:, :3]))
    base_lum = float(luminance(parse_color([base_color])[:, :3].clip(0))[0]) \
        if not np.isnan(parse_color([base_color])).any() else 0.0
    lum = np.where(np.isnan(rgba[:, 0]), base_lum, lum)
    # effective opacity: the product down the tree (CSS opacity is not inherited but composes)
    op = np.nan_to_num(r["opacity"].to_numpy(float), nan=1.0)
    parent = rows["parent"].to_numpy(np.int64)
    depth = rows["distance"].to_numpy(np.int64)
    eff = op.copy()
    for d in range(1, int(depth.max(initial=0)) + 1):
        idx = np.flatnonzero(depth == d)
        eff[idx] *= eff[parent[idx]]
    return {
        "box_x": np.nan_to_num(r["x"].to_numpy(float)) / vw,
        "box_y": np.nan_to_num(r["y"].to_numpy(float)) / vh,
        "box_width": np.nan_to_num(r["width"].to_numpy(float)) / vw,
        "box_height": np.nan_to_num(r["height"].to_numpy(float)) / vh,
        "font_size_rel": np.nan_to_num(size / base, nan=1.0),
        "font_weight": np.nan_to_num(r["font_weight"].to_numpy(float), nan=400.0),
        "color_luminance": lum,
        "color_differs": ((colors != "") & (colors != base_color)).astype(float),
        "opacity": eff,
    }


def _one_page(rows: pd.DataFrame, render: pd.DataFrame | None, page: object,
              drop: bool = True, walk_node: bool = False) -> tuple[pd.DataFrame, int]:
    rows = rows.sort_values("node", kind="stable").reset_index(drop=True)
    if walk_node:
        rows["walk_node"] = rows["node"].to_numpy()
    r = align_render(rows, render)
    if render is not None and not render.empty and r is None:
        warnings.warn(f"page {page}: render.parquet does not match its rows (walked differently?); "
                      "its render data is ignored", stacklevel=3)
    dropped = 0
    if r is not None and drop:
        drop = hidden_rows(rows, r)
        dropped = int(drop.sum())
        if dropped:
            keep = ~drop
            rows = _remeasure(rows, drop)
            r = r.iloc[np.flatnonzero(keep)].reset_index(drop=True)
    for name, values in _features(rows, r).items():
        rows[name] = values
    return rows, dropped


def apply_render(rows: pd.DataFrame, render: pd.DataFrame | None, *, drop: bool = True,
                 walk_node: bool = False) -> pd.DataFrame:
    """``rows`` (the walker's rows of one page, or feature rows of many with a ``page``
    column) without what the browser hides, measures recomputed, plus ``RENDER_FEATURES``.

    ``render``: ``render.parquet``'s rows (``page``, ``node``, ...), or one page's render
    rows when ``rows`` has no ``page`` column. The number of dropped rows is in
    ``result.attrs["render_dropped"]``. With ``drop=False`` no row is dropped (the rows stay
    aligned with the walk) and only the features are added. With ``walk_node`` a column
    ``walk_node`` keeps each row's node number in the walk (to map labels back to it).
    """
    if "page" not in rows.columns:
        if render is not None and "page" in render.columns and render["page"].nunique() > 1:
            raise ValueError("rows have no 'page' column but render holds several pages")
        out, dropped = _one_page(rows, render, "", drop, walk_node)
        out.attrs["render_dropped"] = dropped
        return out
    by_page = {} if render is None or render.empty else {p: g for p, g in render.groupby("page", sort=False)}
    parts, total = [], 0
    for page, g in rows.groupby("page", sort=False):
        part, dropped = _one_page(g, by_page.get(page), page, drop, walk_node)
        parts.append(part)
        total += dropped
    extra = ["walk_node"] if walk_node else []
    cols = list(rows.columns) + [c for c in extra + RENDER_FEATURES if c not in rows.columns]
    out = pd.concat(parts, ignore_index=True)[cols] if parts else rows.assign(
        **{c: pd.Series(dtype=float) for c in RENDER_FEATURES})
    out.attrs["render_dropped"] = total
    return out


def rendered_walk(walk, render: pd.DataFrame | None):
    """``(walk', kept)``: a ``PageWalk`` of the rows the browser shows (measures recomputed,
    ``segments`` renumbered, hidden text gone) and the original row index of each kept row,
    so that a method run on ``walk'`` (e.g. CETD) can be mapped back to the walker's rows.
    Without usable render data it returns the walk itself and every index."""
    from hwnoise.features.walk import PageWalk

    rows = walk.rows
    r = align_render(rows, render)
    if r is None:
        return walk, np.arange(len(rows))
    drop = hidden_rows(rows, r)
    kept = np.flatnonzero(~drop)
    if not drop.any():
        return walk, kept
    new_rows = _remeasure(rows, drop)
    new_of = np.cumsum(~drop) - 1
    segments = [(int(new_of[o]), t) for o, t in walk.segments if 0 <= o < len(drop) and not drop[o]]
    last = subtree_last(new_rows["parent"].to_numpy(np.int64))
    return PageWalk(rows=new_rows, segments=segments, encoding=walk.encoding, last=last), kept
