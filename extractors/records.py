"""Records out of node labels: group a page's content nodes into data records.

*Snapping* comes first (``snap_members``): where the page has a group of alike siblings
(``features.record_struct.record_groups``: >= 3 same-tag siblings with alike subtree tag
strings) whose members are mostly content by the labels, each member is a record, whole,
however the labels cut it; outer groups first, never cutting a record the labels give whole
(nor, since session 34, a group of one-text lines cutting a content root that is one of three
or more of its tag under one parent: ``thin_cut``).
A member whose text is mostly a group of alike children holding several fields each is a region,
not a record, and its records are snapped inside it (``box_fields``, ``drop_boxes``).
On a single-child chain (``li > div``, the ``div`` holding all of the ``li``'s text; see
``chain_members``) the record is the element the labels name where they name an inner one, else
the outermost element of the chain that is one of alike siblings (``level``; NEXT-EVAL's gold
names the outer one on most pages, ``bench/records_levels.py``). The content outside snapped
records is grouped from the labels as below (``candidate_rows``). Last, regions (records under
one parent) holding less than ``min_rel`` (0.1) of the largest region's characters are dropped:
menus, facets and footers the model labelled content; and, where the model gives its content
probability per row (``proba``), regions whose text it gives a mean probability under
``min_conf`` (0.4) (``drop_regions``; both chosen on NEXT-EVAL's page-grouped folds, README
"Records").

A content node whose parent is noise starts a *content root* (the maximal content subtrees of
the page). Roots under one parent are the candidates of a data region; each record is one
root element or, when the page's structure repeats in runs (MDR's generalized nodes: a record
made of k consecutive siblings, e.g. a title row and a details row), a run of k consecutive
roots. The run length k is chosen per parent as the smallest k (1..3) whose runs share one
tag string (the tag sequence of the run, as DEPTA and MDR compare tag strings) over the whole
group; k = 1 when no run length repeats.

Two labelling slips are repaired from the structure, so that records follow the repeated
siblings rather than the slips:

- *over-inclusion*: a root whose element children repeat one tag many times (at least
  ``min_repeat`` children, and they hold most of its text) while its own tag does not repeat
  among its siblings is a region, not a record: its children become the roots (a ``<tbody>``
  or ``<ul>`` labelled content with its rows);
- *fragments*: roots that are all below one noise element ``e`` whose siblings of the same tag
  also hold roots (cells of rows whose ``<tr>`` was labelled noise) are lifted to ``e``.

A page's only record must hold at least two fields (elements with text of their own): a lone
message such as "No results for ..." labelled content is not a record.

``records_from_labels(walk, labels, xpaths, proba=None)`` returns ``Record`` objects; XPaths are written
in the gold's form (``features.record_gold.dom_xpaths``), so records can be scored against
gold records as sets of XPaths (``training.record_metrics``).

Last, ``with_hidden`` adds the records a page holds but hides beside the shown ones (results
paginated in the browser, collapsed groups): hidden elements at a shown record's tag path whose
tag strings are alike to those records'.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields

import numpy as np

from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.record_struct import (RECORD_DISTANCE, RECORD_MIN, by_depth, record_groups, tag_distance,
                                            tag_string)

__all__ = ["Record", "GroupingOptions", "records_from_labels", "with_hidden", "record_rows", "records_content",
           "walk_xpaths", "rows_inside", "candidate_rows", "drop_regions", "drop_thin",
           "region_conf", "page_records", "record_json", "row_xpaths", "chain_members"]


#: A region whose confidence is under this share of the page's most confident region's is no
#: region of records (``drop_unsure``); chosen on NEXT-EVAL's page folds (README "Records").
REL_CONF = 0.4

#: A region of one-text records (a list of links) beside a region whose records hold at least this
#: many text elements on average is no region of records (``drop_thin``); chosen on NEXT-EVAL's page
#: folds (docs/records.md, session 33).
RICH_FIELDS = 3.0
#: The share of a region's records that must be one text element each for ``drop_thin`` to drop it.
THIN_SHARE = 0.8
#: Alike children make a snapped member a region (a column of lists, ``_containers``) only where they
#: hold at least this many elements with text of their own each on average: alike one-text children
#: (a card's description, duration and links) are a record's fields. Chosen on NEXT-EVAL's page folds
#: (docs/records.md, session 34).
BOX_FIELDS = 3.0
#: A group of alike siblings whose members hold fewer elements with text of their own than this on
#: average (a list of links, one-line fields) does not cut a content root that is one of three or
#: more of its tag under one parent: snapping leaves records the labels give whole as they are
#: (``_uncut``; session 34; ``thin_cut_any``, off, extends it to any content root).
THIN_CUT = 2.0


@dataclass(frozen=True)
class GroupingOptions:
    """The grouping's tuning knobs (``record_rows``), one object through its steps; the defaults
    are the ones chosen on NEXT-EVAL's page folds (README "Records")."""

    #: A root whose element children repeat one tag at least this many times is a region (over-inclusion).
    min_repeat: int = 3
    #: The most consecutive siblings one record spans (a title row and a details row: 2).
    max_run: int = 3
    #: Characters a lone root (and a group of snapped members) needs: a price or a date alone is no record.
    min_single: int = 20
    #: Elements with text of their own that a page's only record needs ("No results for ..." is none).
    min_fields: int = 2
    #: The structure first (``snap_members``): alike siblings that are mostly content are records, whole.
    snap: bool = True
    #: The share of a group's members that must be mostly content for it to be snapped.
    min_content: float = 0.5
    #: A record's level on its single-child chain (``_level``): "article", "outer", "labels" or "none".
    level_rule: str = "article"
    #: A region under this share of the page's largest region's characters is dropped (``drop_regions``).
    min_rel: float = 0.1
    #: A region whose confidence (``region_conf``) is under this is dropped.
    min_conf: float = 0.4
    #: A region at least this confident is kept however small (above 1: never).
    keep_conf: float = 1.01
    #: A region under this share of the page's most confident region's confidence is dropped (``drop_unsure``).
    rel_conf: float = REL_CONF
    #: A region whose records are (nearly) all one text element each goes when another region's records
    #: hold at least this many on average (``drop_thin``; 0: never).
    rich_fields: float = RICH_FIELDS
    #: A member is a region (a column of lists, ``_containers``) only where the alike children holding
    #: its text hold at least this many elements with text of their own each on average (0: any).
    box_fields: float = BOX_FIELDS
    #: A member that is a region is no record even when most of its group are records (its records
    #: are snapped inside it); False: such a member stays a record unless half its group are regions.
    drop_boxes: bool = True
    #: A group whose members hold fewer elements with text of their own than this on average (a
    #: list of links) never cuts a content root that has two or more content roots of its tag beside
    #: it (records the labels give whole: their link lists are their fields; 0: off).
    thin_cut: float = THIN_CUT
    #: ``thin_cut`` for any content root, not only one of three or more of its tag under one parent.
    thin_cut_any: bool = False

    @classmethod
    def from_dict(cls, options: dict) -> GroupingOptions:
        """The options named in ``options`` (as ``bench/records_loss.py --option KEY=JSON`` gives them),
        the others by default; a name that is no option is an error that names it."""
        known = [f.name for f in dataclass_fields(cls)]
        unknown = [k for k in options if k not in known]
        if unknown:
            raise ValueError(f"unknown grouping option(s) {', '.join(map(repr, unknown))}; "
                             f"the options are {', '.join(known)}")
        return cls(**options)


@dataclass
class Record:
    """One data record: its element rows (consecutive siblings), XPaths, text and fields."""

    rows: list[int]
    xpaths: list[str]
    text: str
    fields: list[dict] = field(default_factory=list)
    hidden: bool = False  # held by the page but hidden (``with_hidden``): no walker rows


def row_xpaths(html: bytes | str, n_rows: int, *, http_charset: str | None = None,
               text_keys: bool = False) -> list[str] | tuple[list[str], list[str]]:
    """Every walker row's XPath in the browser's form (``/body[1]/div[3]/...``); with
    ``text_keys``, also the page's text-map keys (``record_gold.text_xpaths``, which the record
    metric expands records to), from the same parse."""
    return _xpaths(*_shown_tree(html, n_rows, http_charset), text_keys)


def _shown_tree(html: bytes | str, n_rows: int, http_charset: str | None) -> tuple:
    """``features.elements.shown_elements`` of the page, checked against the walk's row count."""
    from hwnoise.features.elements import shown_elements
    from hwnoise.features.record_gold import RecordGoldError

    view = shown_elements(html, http_charset, n_rows)
    if not view.aligned:
        raise RecordGoldError(f"the page's shown elements ({len(view.elements)}) differ from the walk's rows ({n_rows})")
    return view.root, view.elements, view.parents


def walk_xpaths(walk, *, text_keys: bool = False) -> list[str] | tuple[list[str], list[str]]:
    """``row_xpaths`` of a walk made with ``keep_tree`` (its tree and elements): no second walk."""
    return _xpaths(walk.root, walk.elements, walk.column("parent").tolist(), text_keys)


def _xpaths(root, els: list, parents: list[int], text_keys: bool):
    from hwnoise.features.record_gold import dom_xpaths, text_xpaths

    xpaths = dom_xpaths(els, parents)
    return (xpaths, text_xpaths(root)) if text_keys else xpaths


def chain_members(i: int, parent: np.ndarray, chars: np.ndarray, last: np.ndarray) -> list[int]:
    """Row ``i``'s single-child chain, outermost first: its ancestors below ``<body>`` and its
    descendants that hold exactly its text (``li > div`` where the ``div`` holds all of the
    ``li``'s text). A row without text is a chain of its own."""
    if chars[i] <= 0:
        return [i]
    up = []
    p = int(parent[i])
    while p > 0 and chars[p] == chars[i]:
        up.append(p)
        p = int(parent[p])
    down = []
    c = i
    while True:
        kids = np.flatnonzero(parent[c + 1:int(last[c]) + 1] == c) + c + 1
        full = kids[chars[kids] == chars[i]]
        if len(full) != 1:
            break
        c = int(full[0])
        down.append(c)
    return up[::-1] + [i] + down


def _children(parent: np.ndarray) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in range(len(parent))]
    for i in range(1, len(parent)):
        if parent[i] >= 0:
            kids[parent[i]].append(i)
    return kids


def snap_members(parent: np.ndarray, tags: list[str], last: np.ndarray, chars: np.ndarray,
                 own: np.ndarray, content: np.ndarray, groups: tuple[np.ndarray, np.ndarray],
                 depth: np.ndarray, *, options: GroupingOptions | None = None,
                 min_region: float = 0.6) -> list[list[int]]:
    """The records that the page's structure gives where the labels mostly agree: members of
    a group of alike siblings (``features.record_struct.record_groups``) of which at least
    ``min_content`` are mostly content (half their characters or more), the group holding at
    least ``min_single`` characters and ``min_region`` of its parent's (a data region is mostly
    its records), and most members no region themselves (their text not mostly one group of
    alike children: a column of lists is not a record; nor does a member hold two content roots
    of one group of alike siblings: records the labels give apart stay apart). Consecutive members
    whose tags repeat with a period of 2 up to ``max_run`` are one record each run (``_runs``).
    Outer groups first: a group inside a chosen member is that record's fields. Each member's
    level on its single-child chain follows ``level_rule`` (``_level``): by default
    ``article``, the chain's repeated element or an ``<article>`` below it (``level``; README
    "Records"); ``outer`` the repeated element alone (chosen over ``labels`` by NEXT-EVAL's
    page-grouped folds); ``labels`` takes an inner element the labels name, else ``level``. Members without text or
    without any content, and table header rows, are left out.
    ``groups`` is ``record_groups(parent, tags, last)``, ``depth`` the rows' depth; ``min_content``,
    ``min_single``, ``max_run`` and ``level_rule`` are ``options``' (None: the defaults)."""
    options = GroupingOptions() if options is None else options
    gid, is_rec = groups
    idx = np.arange(len(parent))
    cs = np.concatenate([[0], np.cumsum(np.where(content, own, 0))])
    cc = cs[last + 1] - cs[idx]  # content characters in each subtree
    gchars = np.bincount(gid, weights=chars)
    has = chars > 0
    mostly = has & (cc >= 0.5 * chars)  # a member that is mostly content
    texts = np.bincount(gid, weights=has)
    share = np.bincount(gid, weights=mostly) / np.maximum(texts, 1)
    region = gchars[gid] >= min_region * chars[np.maximum(parent, 0)]  # the parent's text is mostly theirs
    cand = (is_rec & region & has & (share[gid] >= options.min_content) & (texts[gid] >= RECORD_MIN)
            & (gchars[gid] >= options.min_single))
    roots = _uncut(cand, parent, tags, chars, content, is_rec, gid, gchars, depth, min_region,
                   own if options.thin_cut > 0 else None, last, options.thin_cut, options.thin_cut_any)
    container = _containers(cand, roots, parent, chars, last, is_rec, gid, gchars, region, min_region,
                            own, options.box_fields)
    boxed = np.bincount(gid, weights=container) / np.maximum(texts, 1)
    cand &= boxed[gid] < 0.5
    if options.drop_boxes:
        cand &= ~container
    chosen = _outer_members(cand, parent, tags, last, cc)
    out = []
    for p, members in chosen.items():  # runs of k members (a title row and a details row) are one record
        sibs = np.flatnonzero(parent[p + 1:int(last[p]) + 1] == p) + p + 1
        for run in _runs(members, tags, [int(c) for c in sibs], options.max_run):
            if len(run) == 1:
                run = [_level(run[0], parent, chars, last, is_rec, content, options.level_rule, tags)]
            out.append(run)
    return sorted(out)


def subtree_fields(own: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per row, how many elements with text of their own its subtree holds (itself included; rows
    in document order, ``last`` the last row of each subtree): a record's fields."""
    has = np.concatenate([[0], np.cumsum(np.asarray(own) > 0)])
    return (has[np.asarray(last) + 1] - has[:-1]).astype(float)


def _group_mean(values: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """Per group id, the mean of ``values`` over its rows."""
    return np.bincount(gid, weights=values) / np.maximum(np.bincount(gid), 1)


def _uncut(cand: np.ndarray, parent, tags, chars, content, is_rec, gid, gchars, depth,
           min_region: float, own: np.ndarray | None = None, last: np.ndarray | None = None,
           thin_cut: float = 0.0, thin_cut_any: bool = False) -> np.ndarray:
    """The labels' content roots; ``cand`` loses the members that would cut one (snapping never
    cuts a content root, unless it is a region labelled as a whole: mostly this group's text,
    neither itself one of alike siblings nor a row or item; with ``thin_cut``, nor one of three or
    more content roots of its tag under one parent when the group's members hold fewer than
    ``thin_cut`` elements with text of their own on average)."""
    idx = np.arange(len(parent))
    root = np.where(content, idx, -1)
    for lev in by_depth(depth):  # ancestors first: a content node under a content parent inherits its root
        p = parent[lev]
        inherit = (p >= 0) & content[lev] & content[np.maximum(p, 0)]
        root[lev[inherit]] = root[p[inherit]]
    repeated = np.zeros(len(parent), dtype=bool)
    thin_group = np.zeros(gid.max() + 1 if len(gid) else 0, dtype=bool)
    if thin_cut > 0 and own is not None and last is not None:
        tops = np.flatnonzero(root == idx)
        par = parent[tops]
        key = {}
        for t, q in zip(tops, par):
            key.setdefault((int(q), tags[t]), []).append(int(t))
        for ts in key.values():
            if len(ts) >= RECORD_MIN or thin_cut_any:
                repeated[ts] = True
        thin_group = _group_mean(subtree_fields(own, last), gid) < thin_cut
    for i in np.flatnonzero(cand):
        r = root[parent[i]] if parent[i] >= 0 else -1
        if r >= 0 and repeated[r] and thin_group[gid[i]]:
            cand[i] = False
        elif r >= 0 and (is_rec[r] or tags[r] in _ITEMS or gchars[gid[i]] < min_region * chars[r]):
            cand[i] = False
    return np.flatnonzero(root == idx)


def _containers(cand: np.ndarray, roots: np.ndarray, parent, chars, last, is_rec, gid, gchars, region,
                min_region: float, own: np.ndarray | None = None, box_fields: float = 0.0) -> np.ndarray:
    """Per row, whether a candidate member is a region rather than a record: its text mostly one
    group of alike children (down its single-child chain: a column of lists), or it holds
    content roots the labels give apart as records of one group (the labels' level wins). With
    ``box_fields`` > 0 only a group whose members hold that many elements with text of their own
    on average makes a region (alike one-text children are a record's fields: a card's rows)."""
    n = len(parent)
    box = np.zeros(n)
    boxing = is_rec & region
    if box_fields > 0 and own is not None:
        boxing &= _group_mean(subtree_fields(own, last), gid)[gid] >= box_fields
    np.maximum.at(box, parent[boxing], gchars[gid[boxing]])
    container = np.zeros(n, dtype=bool)
    # content roots at the level of their alike siblings (a div root inside a repeated li: the li)
    rec_roots = np.asarray([level(int(r), parent, chars, last, is_rec) for r in roots], dtype=np.int64)
    rec_roots = np.sort(rec_roots[is_rec[rec_roots]]) if len(rec_roots) else rec_roots
    for i in np.flatnonzero(cand):
        container[i] = any(box[c] >= min_region * chars[i] for c in chain_members(int(i), parent, chars, last))
        inner = _between(rec_roots, i + 1, last[i])
        if len(inner) >= 2 and np.bincount(gid[inner]).max() >= 2:
            container[i] = True
    return container


def _outer_members(cand: np.ndarray, parent, tags, last, cc) -> dict[int, list[int]]:
    """The candidates kept, outer first (a group inside a chosen member is its fields), by parent;
    a member the labels give no content (a heading item) and a table's header row are none."""
    chosen: dict[int, list[int]] = {}
    end = -1
    for i in np.flatnonzero(cand):
        if i <= end:
            continue  # inside a chosen record: its fields
        if cc[i] == 0:
            continue  # a member the labels give no content at all (a heading item) is no record
        kids = np.flatnonzero(parent[i + 1:int(last[i]) + 1] == i) + i + 1
        if tags[i] == "tr" and len(kids) and all(tags[k] == "th" for k in kids):
            continue  # a table's header row
        chosen.setdefault(int(parent[i]), []).append(int(i))
        end = int(last[i])
    return chosen


def level(i: int, parent: np.ndarray, chars: np.ndarray, last: np.ndarray, is_rec: np.ndarray,
          tags: list[str] | None = None) -> int:
    """The record element for row ``i``: the outermost element of its single-child chain
    (``chain_members``) that is one of alike siblings; ``i`` when none is. Where a repeated
    element has one child holding all its text (``li > div``), NEXT-EVAL's gold names the
    outer one on most pages (``bench/records_levels.py``). Given ``tags``, an ``<article>`` at
    or below that element is the record instead (HTML's element for a self-contained item)."""
    chain = chain_members(i, parent, chars, last)
    reps = [c for c in chain if is_rec[c]]
    top = reps[0] if reps else i
    if tags is not None:
        for c in chain:
            if c >= top and tags[c] == "article":
                return c
    return top


def _level(i: int, parent, chars, last, is_rec, content, rule: str, tags=None) -> int:
    """``level`` by ``rule``: "outer" (``level``), "article" (``level`` with an ``<article>`` on
    the chain first), "labels" (the outermost content element of the chain when ``i`` itself is
    noise, else ``level``), "none" (``i``)."""
    if rule == "none":
        return i
    if rule == "article":
        return level(i, parent, chars, last, is_rec, tags)
    if rule == "labels" and not content[i]:
        inner = [c for c in chain_members(i, parent, chars, last) if c > i and content[c]]
        if inner:
            return inner[0]
    return level(i, parent, chars, last, is_rec)


def record_rows(walk, labels, proba: np.ndarray | None = None, *, options: GroupingOptions | None = None,
                scorer=None) -> list[list[int]]:
    """The records of a page as lists of rows (each one element or a run of consecutive
    siblings), in document order, from the rows' noise/content labels (``candidate_rows``),
    less the regions ``drop_regions`` drops (by size and, given ``proba``, the model's content
    probability per row, by confidence). A page's only record needs ``min_fields`` elements
    with text of their own: one run of text alone is a message ("No results for ..."), not a record.
    With a region ``scorer`` (``extractors.regions.RegionScorer``, a model's), the groups of
    alike siblings it keeps join these records by its mode (``regions.scored_records``). Last, a
    region far less sure than the page's surest goes (``drop_unsure``, ``rel_conf``), and so does a
    region of one-text records beside a region of records with several fields (``drop_thin``,
    ``rich_fields``).
    ``options``: the grouping's knobs (``GroupingOptions``; None: the defaults)."""
    options = GroupingOptions() if options is None else options
    records = candidate_rows(walk, labels, options=options)
    records = drop_regions(walk, labels, records, proba, options=options)
    if scorer is not None:
        from hwnoise.extractors.regions import scored_records

        records = scored_records(walk, labels, proba, records, scorer)
    records = drop_unsure(walk, _table_rows(walk, records), proba, options.rel_conf)
    return drop_thin(walk, records, options.rich_fields)


def records_content(walk, labels, recs: list[list[int]]) -> np.ndarray:
    """``labels`` made the rows inside ``recs`` (the page's records) content and all others
    noise; ``labels`` as they are when ``recs`` is empty. A record is content whole however the
    labels cut it (a card whose title alone was labelled content), and content outside any
    record (a heading, a facet) is not, as in gold that is data records (NEXT-EVAL's; README
    "Records")."""
    if not recs:
        return np.asarray(labels, dtype=object)
    return np.where(rows_inside(recs, np.asarray(walk.last, dtype=np.int64)), CONTENT, NOISE).astype(object)


def rows_inside(recs: list[list[int]], last: np.ndarray) -> np.ndarray:
    """Per row, whether it lies in the subtree of one of the records' rows (``last``: each
    row's last descendant)."""
    mark = np.zeros(len(last) + 1, dtype=np.int64)
    for r in (r for rec in recs for r in rec):
        mark[r] += 1
        mark[int(last[r]) + 1] -= 1
    return np.cumsum(mark)[:len(last)] > 0


@dataclass
class _Tree:
    """A page's structure as the grouping reads it: the walk's arrays, made once per page."""

    parent: np.ndarray
    tags: list[str]
    chars: np.ndarray
    last: np.ndarray
    kids: list[list[int]]
    tagstr: str           # one character per row (``tag_string``): a subtree's tag string is a slice
    tagpath: list[str]    # each row's XPath without positions

    def shape(self, i: int) -> str:
        return self.tagstr[i:int(self.last[i]) + 1]

    def alone(self, i: int, among: list[int]) -> bool:
        """No same-tag sibling, and no other root at the same tag path (records repeat)."""
        p = self.parent[i]
        if p >= 0 and sum(1 for c in self.kids[p] if self.tags[c] == self.tags[i]) > 1:
            return False
        return sum(1 for r in among if self.tagpath[r] == self.tagpath[i]) == 1


def candidate_rows(walk, labels, *, options: GroupingOptions | None = None) -> list[list[int]]:
    """Every record the labels give, before any region is dropped (``record_rows``; ``options``:
    its knobs, None: the defaults). With ``snap`` the structure goes first (``snap_members``:
    alike siblings that are mostly content are records, whole, at a consistent level); the
    content outside them is grouped from the labels: the outermost content elements, split where
    one holds a region of alike records (``_split_regions``), lifted where they are fragments of
    one (``_lift_fragments``), then runs of consecutive siblings (``_generalized``)."""
    options = GroupingOptions() if options is None else options
    rows = walk.rows
    n = len(rows)
    if n == 0:
        return []
    content = np.asarray(labels, dtype=object) == CONTENT
    parent = rows["parent"].to_numpy(dtype=np.int64)
    tags = rows["tag"].tolist()
    last = np.asarray(walk.last, dtype=np.int64)
    t = _Tree(parent=parent, tags=tags, chars=rows["chars"].to_numpy(dtype=np.int64), last=last,
              kids=_children(parent), tagstr=tag_string(tags),
              tagpath=rows["xpath"].str.replace(r"\[\d+\]", "", regex=True).tolist())
    snapped: list[list[int]] = []
    free = content.copy()
    groups = record_groups(parent, tags, last)
    if options.snap:
        depth = rows["distance"].to_numpy(dtype=np.int64)
        snapped = snap_members(parent, tags, last, t.chars, _own(rows), content, groups, depth, options=options)
        free &= ~rows_inside(snapped, last)
    roots = [i for i in range(n) if free[i] and (parent[i] < 0 or not free[parent[i]])]
    roots = _split_regions(t, roots, options.min_repeat)
    roots = _lift_fragments(t, roots, content, options.max_run)
    records = _generalized(t, _outermost(t, roots), options.min_single, options.max_run)
    if options.snap:  # the same level rule for records from labels; none may hold a snapped record
        if options.level_rule in ("outer", "article"):
            records = [[_level(rec[0], parent, t.chars, last, groups[1], content, options.level_rule, tags)]
                       if len(rec) == 1 else rec for rec in records]
        starts = np.sort(np.asarray([r for rec in snapped for r in rec], dtype=np.int64))
        records = [rec for rec in records if not any(len(_between(starts, r, last[r])) for r in rec)]
        records = [list(x) for x in dict.fromkeys(tuple(r) for r in records)]
    records.extend(snapped)
    return sorted(records)


def _between(rows: np.ndarray, first: int, end: int) -> np.ndarray:
    """The sorted ``rows`` from ``first`` to ``end`` (a subtree's rows), by bisection: looking at
    each would make grouping a long list quadratic."""
    return rows[np.searchsorted(rows, first):np.searchsorted(rows, end, "right")]


def _table_rows(walk, records: list[list[int]]) -> list[list[int]]:
    """In a table whose header row names its columns (``th`` cells), each body row with as many
    cells is a record and its cells are its fields: a record that is such a row's cell becomes the
    row (a page with one result, whose cells are alike siblings to the grouping), and one that is
    the table or its body becomes its rows. Other records stay as they are."""
    tags = walk.rows["tag"].tolist()
    if "th" not in tags or not records:
        return records
    parent = walk.rows["parent"].to_numpy(dtype=np.int64)
    kids = _children(parent)
    rows_of = _data_rows(parent, tags, np.asarray(walk.last, dtype=np.int64), kids)
    row_of_cell = {c: r for rows in rows_of.values() for r in rows for c in kids[r]}
    out: list[list[int]] = []
    for rec in records:
        if len(rec) == 1 and rows_of.get(rec[0]):  # a table, or a body of it that holds rows
            out.extend([r] for r in rows_of[rec[0]])
        elif all(r in row_of_cell for r in rec):
            out.extend([row_of_cell[r]] for r in rec)
        else:
            out.append(rec)
    return sorted(list(x) for x in dict.fromkeys(tuple(r) for r in out))


def _data_rows(parent: np.ndarray, tags: list[str], last: np.ndarray,
               kids: list[list[int]]) -> dict[int, list[int]]:
    """The body rows of each table with a header row (two or more ``th`` cells and nothing else),
    keyed by the table and by its ``tbody``: the rows of that table (not of a table inside it)
    with at least one ``td`` and as many cells as the header."""
    by_table: dict[int, list[int]] = {}  # each row under its nearest table, in document order
    for r in (i for i, tag in enumerate(tags) if tag == "tr"):
        by_table.setdefault(_table_of(parent, tags, r), []).append(r)
    out: dict[int, list[int]] = {}
    for table, rows in by_table.items():
        if table < 0:
            continue
        width = next((len(kids[r]) for r in rows if len(kids[r]) >= 2
                      and all(tags[c] == "th" for c in kids[r])), 0)
        body = [r for r in rows if len(kids[r]) == width and any(tags[c] == "td" for c in kids[r])]
        if width and body:
            for key in [table] + [c for c in kids[table] if tags[c] == "tbody"]:
                out[key] = [r for r in body if key == table or last[key] >= r > key]
    return out


def _table_of(parent: np.ndarray, tags: list[str], i: int) -> int:
    """The nearest ``table`` above row ``i`` (-1: none)."""
    p = int(parent[i])
    while p >= 0 and tags[p] != "table":
        p = int(parent[p])
    return p


def _split_regions(t: _Tree, roots: list[int], min_repeat: int) -> list[int]:
    """Over-inclusion: a region labelled as one record is split into its repeated children (a
    list of one item is the item), until nothing splits."""
    chars, tags, kids = t.chars, t.tags, t.kids
    changed = True
    while changed:
        changed = False
        out = []
        for r in roots:
            ks = [c for c in kids[r] if chars[c] > 0]
            one = r
            while tags[one] in _LISTS and len(ks) == 1:  # a list of one item: the item
                one = ks[0]
                ks = [c for c in kids[one] if chars[c] > 0]
            if one != r and tags[one] in _ITEMS:
                out.append(one)
                changed = True
                continue
            need = min_repeat
            if len(ks) == 2 and all(len(t.shape(c)) >= 4 for c in ks):
                need = 2  # two structured records alike
            if len(ks) >= need and t.alone(r, roots):
                top = max(set(tags[c] for c in ks), key=lambda tag: sum(tags[c] == tag for c in ks))
                rep = [c for c in ks if tags[c] == top]
                d = [tag_distance(t.shape(a), t.shape(b)) for a, b in zip(rep, rep[1:])]
                if (len(rep) >= need and sum(chars[c] for c in rep) >= 0.6 * chars[r]
                        and sum(d) / len(d) <= 0.3):  # alike, as a data region's records are
                    out.extend(ks)
                    changed = True
                    continue
            out.append(r)
        roots = out
    return roots


def _lift_fragments(t: _Tree, roots: list[int], content: np.ndarray, max_run: int) -> list[int]:
    """Fragments: roots below one noise element whose same-tag siblings also hold roots, or
    unlike parts that together are most of it, become that element."""
    parent, tags, chars, kids = t.parent, t.tags, t.chars, t.kids
    holder: dict[int, list[int]] = {}
    for r in roots:
        holder.setdefault(int(parent[r]), []).append(r)
    lifted: dict[int, int] = {}
    for p, rs in holder.items():
        if p <= 0 or content[p]:
            continue
        gp = parent[p]
        sibs = [c for c in kids[gp] if tags[c] == tags[p]] if gp >= 0 else []
        repeated = len(sibs) >= 2 and sum(1 for s in sibs if s in holder) >= 2
        # parts of one record: unlike each other, together most of their noise parent's text
        parts = False
        if 2 <= len(rs) <= 8 and sum(chars[r] for r in rs) >= 0.8 * chars[p]:
            d = [tag_distance(t.shape(a), t.shape(b)) for a, b in zip(rs, rs[1:])]
            shapes = [t.shape(r) for r in rs]
            periodic = any(len(rs) >= 2 * k and all(tag_distance(shapes[i], shapes[i + k]) <= 0.3
                                                    for i in range(len(rs) - k))
                           for k in range(1, max_run + 1))
            parts = sum(d) / len(d) > 0.3 and not periodic  # a run of generalized nodes is not
        if len(rs) >= 2 and (repeated or parts):
            for r in rs:
                lifted[r] = p
    return sorted({lifted.get(r, r) for r in roots})


def _outermost(t: _Tree, roots: list[int]) -> list[int]:
    """The roots not inside another (a lifted parent covers its fragments), less a table's
    header (``th`` cells, ``thead`` rows), which is never a record."""
    keep, end = [], -1
    for r in roots:
        if r <= end:
            continue
        keep.append(r)
        end = t.last[r]
    return [r for r in keep if t.chars[r] > 0 and t.tags[r] != "th" and "/thead" not in t.tagpath[r]]


def _generalized(t: _Tree, roots: list[int], min_single: int, max_run: int) -> list[list[int]]:
    """Generalized nodes: runs of up to ``max_run`` consecutive roots under one parent; a lone
    short snippet (a price, a date) is no record."""
    by_parent: dict[int, list[int]] = {}
    for r in roots:
        by_parent.setdefault(int(t.parent[r]), []).append(r)
    records: list[list[int]] = []
    for p, rs in by_parent.items():
        if len(rs) == 1 and t.chars[rs[0]] < min_single:
            continue
        records.extend(_runs(rs, t.tags, t.kids[p] if p >= 0 else rs, max_run))
    return records


def drop_regions(walk, labels, records: list[list[int]], proba: np.ndarray | None = None, *,
                 options: GroupingOptions | None = None) -> list[list[int]]:
    """``records`` less the regions that are not the page's records. A region is the records
    under one parent (of their outermost same-text ancestors: ``li > div`` records of one list
    are one region); its size is its characters, its confidence the mean content probability
    (``proba``) of its records' text, weighted by characters (``region_conf``). A region is
    dropped when it holds less than ``min_rel`` of the largest region's characters (menus,
    facets, footers labelled content) unless its confidence is at least ``keep_conf``, or when
    its confidence is under ``min_conf``. Without ``proba`` (gold labels, a method without
    probabilities) every region's confidence is 1. Then a page's only record needs
    ``min_fields`` content elements with text of their own. The four knobs are ``options``'
    (``GroupingOptions``; None: the defaults)."""
    if not records:
        return []
    options = GroupingOptions() if options is None else options
    key, size, conf = _regions(walk, records, proba)
    top = max(size.values())
    keep = {k for k in size if conf[k] >= options.min_conf
            and (size[k] >= options.min_rel * top or conf[k] >= options.keep_conf)}
    records = [rec for k, rec in zip(key, records) if k in keep]
    if len(records) == 1 and options.min_fields > 1:
        content = np.asarray(labels, dtype=object) == CONTENT
        last = np.asarray(walk.last, dtype=np.int64)
        has = _own(walk.rows) > 0
        fields = sum(int(has[r:int(last[r]) + 1][content[r:int(last[r]) + 1]].sum()) for r in records[0])
        if fields < options.min_fields:
            return []
    return records


def _regions(walk, records: list[list[int]], proba: np.ndarray | None) -> tuple[list[int], dict, dict]:
    """Each record's region (the parent of its outermost same-text ancestor), and per region its
    characters and its confidence (``region_conf``)."""
    rows = walk.rows
    parent = rows["parent"].to_numpy(dtype=np.int64)
    chars = rows["chars"].to_numpy(dtype=np.int64)
    last = np.asarray(walk.last, dtype=np.int64)
    own = _own(rows)
    key = [int(parent[chain_members(rec[0], parent, chars, last)[0]]) for rec in records]
    size: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for k, rec in zip(key, records):
        size[k] = size.get(k, 0) + int(chars[rec].sum())
        members.setdefault(k, []).extend(rec)
    return key, size, {k: region_conf(m, proba, own, last) for k, m in members.items()}


def drop_unsure(walk, records: list[list[int]], proba: np.ndarray | None, rel_conf: float = REL_CONF) \
        -> list[list[int]]:
    """``records`` less the regions whose confidence is under ``rel_conf`` times the page's most
    confident region's: the menus, sort options and footer link lists beside a page's results,
    whichever step grouped them (the labels or a region scorer). Without ``proba`` nothing goes."""
    if not records or proba is None or rel_conf <= 0:
        return records
    key, _, conf = _regions(walk, records, proba)
    top = max(conf.values())
    return [rec for k, rec in zip(key, records) if conf[k] >= rel_conf * top]


def drop_thin(walk, records: list[list[int]], rich_fields: float = RICH_FIELDS,
              thin_share: float = THIN_SHARE) -> list[list[int]]:
    """``records`` less the *thin* regions: those where at least ``thin_share`` of the records hold
    at most one element with text of its own (a list of links, a menu, a tag cloud), when another
    region of the page has records of at least ``rich_fields`` such elements on average (result
    records: a title, a price, a date...). A page whose records are all thin keeps them. Regions as
    ``drop_regions`` and ``drop_unsure`` take them (``_regions``); ``rich_fields`` 0: nothing goes."""
    if rich_fields <= 0 or len(records) < 2:
        return records
    key = _regions(walk, records, None)[0]
    last = np.asarray(walk.last, dtype=np.int64)
    per_node = subtree_fields(_own(walk.rows), last)
    fields: dict[int, list[int]] = {}
    for k, rec in zip(key, records):
        fields.setdefault(k, []).append(int(sum(per_node[r] for r in rec)))
    rich = {k for k, f in fields.items() if np.mean(f) >= rich_fields}
    thin = {k for k, f in fields.items() if np.mean([x <= 1 for x in f]) >= thin_share}
    drop = {k for k in thin if rich - {k}}
    return [rec for k, rec in zip(key, records) if k not in drop] if drop else records


def region_conf(heads: list[int], proba: np.ndarray | None, own: np.ndarray, last: np.ndarray) -> float:
    """The model's confidence in a region: the content probability of the text in the subtrees
    of ``heads`` (its records' elements), each row weighing its own characters; 1.0 without
    ``proba`` or text, and rows without a probability (NaN) left out."""
    if proba is None:
        return 1.0
    idx = np.concatenate([np.arange(h, int(last[h]) + 1) for h in heads])
    p, w = proba[idx], own[idx].astype(np.float64)
    ok = ~np.isnan(p) & (w > 0)
    return float(np.average(p[ok], weights=w[ok])) if ok.any() else 1.0


def _own(rows) -> np.ndarray:
    """Each row's own characters (the text of its own, not its descendants')."""
    return (rows["own_chars"].to_numpy(dtype=np.int64) if "own_chars" in rows
            else np.asarray([len(t) for t in rows["text"].tolist()], dtype=np.int64))


_LISTS = frozenset(("table", "tbody", "ul", "ol", "dl"))
_ITEMS = frozenset(("tr", "li"))


def _runs(rs: list[int], tags: list[str], siblings: list[int], max_run: int) -> list[list[int]]:
    """Split one parent's roots into records of k consecutive siblings (k = 1 unless the
    roots are consecutive siblings whose tag string repeats with period k > 1)."""
    if len(rs) < 4:
        return [[r] for r in rs]
    pos = {c: k for k, c in enumerate(siblings)}
    # blocks of consecutive roots, separated by noise siblings: equal blocks are records
    blocks = [[rs[0]]]
    for a, b in zip(rs, rs[1:]):
        if pos[b] == pos[a] + 1:
            blocks[-1].append(b)
        else:
            blocks.append([b])
    if (len(blocks) >= 3 and 1 < len(blocks[0]) <= max_run
            and len({tuple(tags[r] for r in bl) for bl in blocks}) == 1):
        return blocks
    consecutive = all(pos[b] == pos[a] + 1 for a, b in zip(rs, rs[1:]))
    seq = [tags[r] for r in rs]
    if consecutive and len(set(seq)) > 1:
        for k in range(2, max_run + 1):
            if len(rs) % k == 0 and len(rs) // k >= 2 and all(seq[i] == seq[i % k] for i in range(len(seq))):
                return [rs[i:i + k] for i in range(0, len(rs), k)]
    return [[r] for r in rs]


def records_from_labels(walk, labels, xpaths: list[str], proba: np.ndarray | None = None, *,
                        records: list[list[int]] | None = None,
                        options: GroupingOptions | None = None) -> list[Record]:
    """Records (``record_rows``; ``proba`` the model's content probability per row, optional;
    ``options`` its knobs, ``GroupingOptions``; ``records``: the rows of records already grouped,
    as ``predict_labels`` gives them) with their XPaths, text (own text of the record's content,
    document order) and fields (each content element with own text: its XPath and text)."""
    last = np.asarray(walk.last)
    content = np.asarray(labels, dtype=object) == CONTENT
    texts = walk.rows["text"].tolist()
    out = []
    for rows in (record_rows(walk, labels, proba, options=options) if records is None else records):
        fields = []
        for r in rows:
            for i in range(r, int(last[r]) + 1):
                if texts[i] and (content[i] or i == r):
                    fields.append({"xpath": xpaths[i], "text": texts[i]})
        out.append(Record(rows=rows, xpaths=[xpaths[r] for r in rows],
                          text=" ".join(f["text"] for f in fields), fields=fields))
    return out


#: Elements whose text is no field of a record (a browser never shows it).
_INERT = frozenset({"script", "style", "template", "noscript"})
#: Shown records a tag path's hidden ones are compared with (its first ones).
_HIDDEN_REFERENCE = 10
_POSITIONS = re.compile(r"\[\d+\]")


def with_hidden(records: list[Record], root, elements: list, xpaths: list[str]) -> list[Record]:
    """``records`` and the records ``root`` holds but hides alike to them, in document order
    (``elements``: the walk's rows' lxml elements, ``xpaths`` theirs): results paginated in
    the browser, collapsed row groups, the other panels of tabs. A hidden element is a record
    if it sits at the tag path of a shown one-element record (its XPath without positions),
    its tag string lies within ``RECORD_DISTANCE`` of one of that path's first records', it
    holds text, and no record holds the same text (a hidden copy of the list for small
    screens). Each is marked ``hidden`` (no walker rows); its fields are the elements with own
    text. NEXT-EVAL's gold lists such records: 431 of its XPaths on 7 of the 100 shared pages."""

    by_path: dict[str, list[int]] = {}
    for rec in records:
        if len(rec.rows) == 1:
            by_path.setdefault(_POSITIONS.sub("", rec.xpaths[0]), []).append(rec.rows[0])
    shown = set(elements)
    known = dict(zip(elements, xpaths))  # the shown elements' XPaths, and hidden ones' as found
    positions: dict = {}
    texts = {rec.text for rec in records}
    code: dict[str, str] = {}
    more: list[tuple[object, Record]] = []
    for path, rows in by_path.items():
        hidden = [el for el in _at_path(root, path) if el not in shown]
        refs = [tag_string(_tags(elements[r]), code) for r in rows[:_HIDDEN_REFERENCE]] if hidden else []
        for el in hidden:  # (at a shown record's tag path, so inside no <template> or <script>)
            fields = _own_texts(el)
            text = " ".join(t for _, t in fields)
            if not text or text in texts:
                continue
            if min(tag_distance(tag_string(_tags(el), code), r) for r in refs) > RECORD_DISTANCE:
                continue
            texts.add(text)
            more.append((el, Record(rows=[], xpaths=[_xpath_of(el, known, positions)], text=text, hidden=True,
                                    fields=[{"xpath": _xpath_of(e, known, positions), "text": t} for e, t in fields])))
    if not more:
        return records
    order = {el: k for k, el in enumerate(root.iter())}
    both = [(order[elements[rec.rows[0]]], rec) for rec in records] + [(order[el], rec) for el, rec in more]
    return [rec for _, rec in sorted(both, key=lambda pair: pair[0])]


def _at_path(root, path: str) -> list:
    """The elements of ``root`` (the page's ``<html>``) at the tag path ``path``
    (``/body/div/ul/li``), in document order. Compared tag by tag, not by an XPath query, so
    that any tag the parser kept is matched, ``fb:like`` too (a prefix XPath cannot resolve)."""
    steps = path.strip("/").split("/")
    out = []
    for el in root.iter():
        if el.tag != steps[-1]:
            continue
        node, k = el, len(steps) - 1
        while k >= 0 and node is not None and node.tag == steps[k]:
            node, k = node.getparent(), k - 1
        if k < 0 and node is not None and node.getparent() is None:  # right below the root
            out.append(el)
    return out


def _tags(el) -> list[str]:
    """An lxml subtree's element tags in document order (comments and PIs left out)."""
    return [e.tag for e in el.iter() if isinstance(e.tag, str)]


def _own_texts(el) -> list[tuple[object, str]]:
    """The elements of ``el``'s subtree with own text (their text nodes, whitespace squeezed,
    joined by one space), outside ``<script>`` and the like, in document order."""
    inert = {d for i in el.iter(*_INERT) for d in i.iter()}
    out = []
    for e in el.iter():
        if isinstance(e.tag, str) and e not in inert:
            text = " ".join(" ".join([e.text or ""] + [c.tail or "" for c in e]).split())
            if text:
                out.append((e, text))
    return out


def _xpath_of(el, known: dict, positions: dict) -> str:
    """``el``'s XPath in the gold's form, from its nearest ancestor whose XPath is ``known``;
    every XPath made on the way is added to ``known``, each parent's child positions to
    ``positions`` (once)."""
    from hwnoise.features.record_gold import child_positions

    chain = []
    while el is not None and el not in known and el.tag != "html":
        chain.append(el)
        el = el.getparent()
    base = known.get(el, "")
    for e in reversed(chain):
        par = e.getparent()
        pos = positions.get(par)
        if pos is None:
            pos = positions[par] = child_positions(par)
        base = known[e] = f"{base}/{e.tag}[{pos[e]}]"
    return base


def page_records(html: bytes | str, walk, labels, proba: np.ndarray | None = None, *,
                 http_charset: str | None = None, hidden: bool = True, records: list[list[int]] | None = None,
                 options: GroupingOptions | None = None) -> list[Record]:
    """``records_from_labels`` (``records``, ``options`` as there) with the XPaths computed from the
    page (from the walk's own tree where it kept it) and, with ``hidden``, the records the page
    hides (``with_hidden``)."""
    if walk.root is not None and walk.elements is not None:
        root, els, parents = walk.root, walk.elements, walk.column("parent").tolist()
    else:
        root, els, parents = _shown_tree(html, len(walk.rows), http_charset)
    xpaths = _xpaths(root, els, parents, False)
    recs = records_from_labels(walk, labels, xpaths, proba, records=records, options=options)
    return with_hidden(recs, root, els, xpaths) if hidden else recs


def record_json(page: str, k: int, rec: Record) -> dict:
    """One JSON line of ``hwnoise extract --records``."""
    out = {"page": page, "record": k, "xpath": rec.xpaths[0], "text": rec.text, "fields": rec.fields}
    if len(rec.xpaths) > 1:
        out["xpaths"] = rec.xpaths
    if rec.hidden:
        out["hidden"] = True
    return out


def records_json(page: str, html: bytes | str, walk, labels, proba: np.ndarray | None = None, *,
                 http_charset: str | None = None, records: list[list[int]] | None = None,
                 hidden: bool = True) -> list[dict]:
    """A page's records (``page_records``; ``records``: their rows, already grouped; ``hidden``:
    with the records the page hides) as the JSON objects ``extract --records`` writes."""
    if not len(labels):
        return []
    recs = page_records(html, walk, labels, proba, http_charset=http_charset, records=records, hidden=hidden)
    return [record_json(page, k, rec) for k, rec in enumerate(recs, 1)]
