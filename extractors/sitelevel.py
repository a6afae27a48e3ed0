"""SiteLevel template detection (seed 000, after Chakrabarti, Kumar & Punera, WWW 2007).

For a site's training pages, every node gets a hash; a hash seen in at least ``p`` (10 %) of
the pages is *template*. A node at least 85 % of whose HTML lies in template nodes is template
too. On a test page, nodes whose hash is a template hash are noise (S), and the 85 % rule is
applied with those nodes; everything else is content (N).

Choices where seed 000 is silent (documented here and in the report):

- The DOM is the walker's rows (what a browser shows). The HTML of a node (for the 85 % rule
  and the ``html`` key) is read from lxml's tree of the same page, parsed again here with the
  walker's own parser and hiding rules so that the elements line up with the rows; a node's
  HTML length counts what lxml would serialise (tags, attributes, text, hidden children and
  comments included), computed bottom-up in one pass.
- ``key="text"`` (default): the hash of a node is its tag path (``/html/body/div/p``, no
  positions) plus its own text. A node with no own text (a container: ``li`` around an ``a``,
  the ``div`` of an article) is hashed by its tag path plus its whole subtree text instead, so
  that a wrapper of template text repeats and the wrapper of a changing article does not (its
  own text being empty on every page, path + own text would make every wrapper template).
  ``key="subtree"`` hashes the tag path plus the subtree text of every node; ``key="html"`` the
  node's serialised HTML.
- "at least p % of the pages" is ``max(min_pages, ceil(p * N))`` pages with ``min_pages = 2``:
  with ten pages per site-year, 10 % is one page, and a hash that occurs on one page only is
  not repeated at all.
- Test pages are labelled with the hashes of the training pages only.
"""
from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from lxml import etree

from hwnoise.extractors.base import ExtractorError, WalkMethod, option_flag, walk_of
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.elements import ElementView, html_len_or_proxy, shown_elements

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.dataset import Page
    from hwnoise.features.walk import PageWalk

__all__ = ["SiteLevel", "make", "template_stats", "tag_paths", "template_by_share"]

_POS_RE = re.compile(r"\[\d+\]")
KEYS = ("text", "subtree", "html")


# -- hashes and the 85 % rule ------------------------------------------------------------------
def tag_paths(walk: "PageWalk") -> list[str]:
    """Each row's tag path without positions (``/html/body/div/p``), as the walk made them."""
    return list(walk.tagpath)


def _h(*parts: str) -> int:
    """A stable 64-bit hash (the same in every process, unlike ``hash``)."""
    data = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def node_keys(walk: "PageWalk", key: str = "text", view: ElementView | None = None) -> list[int]:
    """The hash of each row (see the module docstring for the keys)."""
    if key == "text":
        paths = tag_paths(walk)
        own = walk.rows["text"].tolist()
        sub = walk.subtree_texts() if not all(own) else own
        return [_h(p, t) if t else _h(p, "", s) for p, t, s in zip(paths, own, sub)]
    if key == "subtree":
        paths = tag_paths(walk)
        return [_h(p, "", t) for p, t in zip(paths, walk.subtree_texts())]
    if key == "html":
        if view is None or not view.aligned:
            raise ExtractorError("sitelevel key='html' needs the page's lxml elements")
        return [_h(etree.tostring(e, encoding="unicode", with_tail=False)) for e in view.elements]
    raise ExtractorError(f"sitelevel: unknown key {key!r}; choose from {', '.join(KEYS)}")


def template_by_share(parent: np.ndarray, html_len: np.ndarray, template: np.ndarray,
                      share: float = 0.85) -> np.ndarray:
    """Add to ``template`` every node at least ``share`` of whose HTML lies in template nodes.

    Bottom-up: a node's template HTML is the sum over its children of the child's whole HTML
    when the child is template, else the child's own template HTML; a node marked by the rule
    counts whole for its parent."""
    template = np.asarray(template, dtype=bool).copy()
    n = len(parent)
    inside = np.zeros(n, dtype=np.float64)
    for i in range(n - 1, -1, -1):  # children come after their parent in document order
        if not template[i] and html_len[i] > 0 and inside[i] >= share * html_len[i]:
            template[i] = True
        p = parent[i]
        if p >= 0:
            inside[p] += html_len[i] if template[i] else inside[i]
    return template


# -- the method --------------------------------------------------------------------------------
class SiteLevel(WalkMethod):
    """SiteLevel: template = node hashes shared by at least p of a site's training pages."""

    name = "sitelevel"
    needs_training = True

    def __init__(self, p: float = 0.10, key: str = "text", share: float = 0.85,
                 min_pages: int = 2, per_site: bool = True) -> None:
        super().__init__()
        if key not in KEYS:
            raise ExtractorError(f"sitelevel: unknown key {key!r}; choose from {', '.join(KEYS)}")
        if not 0 < p <= 1:
            raise ExtractorError(f"sitelevel: p must be in (0, 1], got {p}")
        self.p, self.key, self.share, self.min_pages, self.per_site = p, key, share, min_pages, per_site
        self.templates_: dict[str, set] | None = None
        self.stats_: dict | None = None

    # ---- per page
    def analyse(self, html: bytes | str, http_charset: str | None = None,
                walk: "PageWalk | None" = None, query_terms: Sequence[str] = ()):
        """The walk, the aligned lxml view and the node hashes of one page."""
        if walk is None:
            from hwnoise.features.walk import walk_page
            walk = walk_page(html, query_terms, http_charset=http_charset, keep_tree=True)
        view = shown_elements(html, http_charset, len(walk), walk.column("tag"), walk=walk)
        return walk, view, node_keys(walk, self.key, view)

    def _site(self, page: "Page") -> str:
        return page.site if self.per_site else ""

    def record(self, page: "Page", walk: "PageWalk | None" = None) -> tuple:
        """What fitting keeps of one training page: (site, hashes, parent, HTML lengths), light
        arrays only, so that the walks and lxml trees of a site's pages are never all held."""
        walk, view, keys = self.analyse(page.read_html(), page.http_charset,
                                        walk if walk is not None else walk_of(page, keep_tree=True))
        return (self._site(page), keys, walk.rows["parent"].to_numpy(),
                html_len_or_proxy(walk, view))

    def fit(self, pages: Sequence["Page"]) -> "SiteLevel":
        """Count, per site, on how many training pages each hash occurs."""
        return self.fit_records([self.record(page) for page in pages])

    def fit_records(self, records: Sequence[tuple]) -> "SiteLevel":
        """:meth:`fit` from :meth:`record` tuples (for callers that walk the pages anyway)."""
        counts: dict[str, Counter] = {}
        npages: Counter = Counter()
        for site, keys, _, _ in records:
            counts.setdefault(site, Counter()).update(set(keys))
            npages[site] += 1
        self.templates_ = {}
        for site, c in counts.items():
            need = max(self.min_pages, math.ceil(self.p * npages[site] - 1e-9))
            self.templates_[site] = {k for k, v in c.items() if v >= need}
        self._records = list(records)
        labels = self.training_labels()
        nodes = sum(len(x) for x in labels)
        tmpl = sum(int(x.sum()) for x in labels)
        self.stats_ = {"pages": len(labels), "nodes": nodes, "template_nodes": tmpl,
                       "share": tmpl / nodes if nodes else 0.0}
        return self

    def training_labels(self) -> list[np.ndarray]:
        """SiteLevel's template flags (bool per node) of each training page, in fit order."""
        self._check()
        return [self._flags(site, keys, parent, hl) for site, keys, parent, hl in self._records]

    def _check(self) -> None:
        if self.templates_ is None:
            raise ExtractorError("sitelevel: call fit(pages) with a site's training pages first")

    def _flags(self, site, keys, parent, html_len) -> np.ndarray:
        tset = self.templates_.get(site)
        if tset is None:  # an unseen site: use every site's templates
            tset = set().union(*self.templates_.values()) if self.templates_ else set()
        hit = np.fromiter((k in tset for k in keys), dtype=bool, count=len(keys))
        return template_by_share(parent, html_len, hit, self.share)

    def template_flags(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        """True where a node of ``page`` is template."""
        self._check()
        walk, view, keys = self.analyse(page.read_html(), page.http_charset, walk)
        return self._flags(self._site(page), keys, walk.rows["parent"].to_numpy(),
                           html_len_or_proxy(walk, view))

    def node_labels(self, page: "Page", walk: "PageWalk") -> np.ndarray:
        return np.where(self.template_flags(page, walk), NOISE, CONTENT)

def make(p: float = 0.10, key: str = "text", share: float = 0.85, min_pages: int = 2,
         per_site: bool = True) -> SiteLevel:
    """The ``sitelevel`` method (see the module docstring for the options)."""
    return SiteLevel(p=float(p), key=key, share=float(share), min_pages=int(min_pages),
                     per_site=option_flag(per_site))


def template_stats(pages: Sequence["Page"], **options: Any) -> dict:
    """Tables 3-4 of seed 000 for a set of pages: pages, nodes, template nodes and their share."""
    return dict(make(**options).fit(pages).stats_)


def main(argv: Sequence[str] | None = None) -> int:
    """Print Tables 3-4 of seed 000 for dataset folders: ``python -m
    hwnoise.extractors.sitelevel DATASET...`` (every page of each dataset, p = 10 %)."""
    import argparse

    from hwnoise.dataset import Dataset

    ap = argparse.ArgumentParser(description="SiteLevel statistics (Tables 3-4 of seed 000)")
    ap.add_argument("datasets", nargs="+", help="dataset folders")
    ap.add_argument("--p", type=float, default=0.10, help="share of pages a template hash needs")
    ap.add_argument("--key", default="text", choices=KEYS, help="what a node's hash covers")
    args = ap.parse_args(argv)
    print(f"{'dataset':<32}{'pages':>7}{'nodes':>9}{'template':>10}{'share':>8}")
    for d in args.datasets:
        st = template_stats(list(Dataset(d).pages()), p=args.p, key=args.key)
        print(f"{Dataset(d).name:<32}{st['pages']:>7}{st['nodes']:>9}{st['template_nodes']:>10}"
              f"{100 * st['share']:>7.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
