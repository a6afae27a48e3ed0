"""How well labels from gold text agree with the labels L3S-GN1's own markup gives.

L3S-GN1 marks content on the page itself: the annotated copy of each page wraps its text in
``x-nc-selN`` spans. For every element of the *original* page (walked with ``walk_page``) two
labels are compared:

- **gold**: ``label_page(walk, gold_text)``, the labels every dataset gets (LCS of the page's
  words with the gold words; the gold is the sel1/sel2 text the l3s importer writes);
- **markup**: the page's words are aligned by LCS with the annotated page's words *in place*
  (every annotated word carries its innermost span label), so a word is content when it lines
  up with a word inside an ``x-nc-sel1``/``x-nc-sel2`` span. Elements are then labelled by the
  same rule as ``label_page`` (half of the own words; wrappers by their subtree; no words: S).

The difference between the two is what aligning with a bag of gold text, rather than with
positions on the page, costs. Scores treat markup as the reference: accuracy, Cohen's kappa,
and the precision and recall of the gold labels' content (N) nodes.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.importers import l3s as l3s_format
from hwnoise.features.labels import half_rule
from hwnoise.text import lcs_blocks, tokenize

__all__ = ["label_agreement", "markup_labels", "agreement_scores", "l3s_pages"]


def _page_words(walk) -> tuple[list[str], np.ndarray]:
    words: list[str] = []
    owners: list[int] = []
    for node, text in walk.segments:
        toks = tokenize(text)
        words.extend(toks)
        owners.extend([node] * len(toks))
    return words, np.asarray(owners, dtype=np.int64)


def markup_labels(walk, annotated: bytes) -> np.ndarray:
    """"S"/"N" per row of ``walk`` from the content spans of the page's annotated copy."""
    return _markup(walk, annotated)[0]


def _markup(walk, annotated: bytes) -> tuple[np.ndarray, int, int]:
    """(labels, page words, page words aligned with a word of the annotated page)."""
    n = len(walk.rows)
    words, owner = _page_words(walk)
    ann_words, ann_content = l3s_format.labelled_words(annotated)
    marked = np.zeros(len(words), dtype=bool)
    aligned = 0
    for start, dest, length in lcs_blocks(words, ann_words):
        marked[start:start + length] = ann_content[dest:dest + length]
        aligned += length
    own_words = np.bincount(owner, minlength=n)[:n] if n else np.zeros(0, dtype=np.int64)
    own_marked = np.bincount(owner[marked], minlength=n)[:n] if n else np.zeros(0, dtype=np.int64)
    content = half_rule(np.asarray(walk.last, dtype=np.int64), own_words, own_marked)
    return np.where(content, CONTENT, NOISE).astype(object), len(words), aligned


def agreement_scores(reference: np.ndarray, labels: np.ndarray) -> dict:
    """Accuracy, Cohen's kappa and content-node precision/recall/F1 of ``labels`` against
    ``reference`` (both "S"/"N" arrays)."""
    ref = np.asarray(reference) == CONTENT
    got = np.asarray(labels) == CONTENT
    n = int(ref.size)
    if n == 0:
        return {"nodes": 0}
    both = int(np.sum(ref & got))
    acc = float(np.mean(ref == got))
    p_ref, p_got = float(ref.mean()), float(got.mean())
    expected = p_ref * p_got + (1 - p_ref) * (1 - p_got)
    kappa = (acc - expected) / (1 - expected) if expected < 1 else (1.0 if acc == 1 else 0.0)
    precision = both / int(got.sum()) if got.any() else (1.0 if not ref.any() else 0.0)
    recall = both / int(ref.sum()) if ref.any() else (1.0 if not got.any() else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"nodes": n, "accuracy": acc, "kappa": float(kappa), "content_precision": precision,
            "content_recall": recall, "content_f1": f1, "content_share_markup": p_ref,
            "content_share_gold": p_got,
            "confusion": {"markup_N_gold_N": both, "markup_N_gold_S": int(np.sum(ref & ~got)),
                          "markup_S_gold_N": int(np.sum(~ref & got)),
                          "markup_S_gold_S": int(np.sum(~ref & ~got))}}


def l3s_pages(dataset_dir_or_src: str | Path, limit: int | None = None
              ) -> Iterator[tuple[str, bytes, str | None, bytes, str | None]]:
    """``(page id, original bytes, gold text, annotated bytes, charset)`` per L3S-GN1 page, from
    an imported dataset folder (its submissions name the annotated files) or the source."""
    path = Path(dataset_dir_or_src)
    count = 0
    if (path / "dataset.json").is_file():
        ds = Dataset(path)
        src = Path(ds.meta.get("source") or "")
        for page in ds.pages():
            rel = page.submission.get("annotated")
            if not rel:
                continue
            ann = src / rel
            if not ann.is_file():
                from hwnoise.features.importers import ImportFormatError

                raise ImportFormatError(f"{ann}: annotated page missing (dataset.json source is {src})")
            yield page.id, page.read_html(), page.read_gold(), ann.read_bytes(), page.http_charset
            count += 1
            if limit and count >= limit:
                return
        return
    folder = l3s_format.find_folder(path)
    for sp in l3s_format.pages(path):
        ann = folder / "annotated" / Path(sp.source).name
        yield sp.source, sp.read_html(), sp.read_gold(), ann.read_bytes(), sp.extra.get("charset")
        count += 1
        if limit and count >= limit:
            return


def label_agreement(dataset_dir_or_src: str | Path, *, limit: int | None = None,
                    per_page: bool = False) -> dict:
    """Agreement of ``label_page``'s labels with the L3S-GN1 markup over every page's elements.

    ``dataset_dir_or_src`` is an l3s dataset folder written by ``hwnoise import l3s`` or the
    L3S-GN1 folder itself. Returns the pooled scores over all elements (``agreement_scores``)
    plus ``pages``, ``words`` (of the original pages), ``words_aligned_with_annotated`` (the
    share of them the LCS lined up with the annotated copy), the per-page means of accuracy and kappa, and (``per_page=True``) a
    ``per_page`` list.
    """
    from hwnoise.features.labels import label_page
    from hwnoise.features.walk import walk_page

    refs, gots, pages = [], [], []
    words = aligned = 0
    for pid, html, gold, annotated, charset in l3s_pages(dataset_dir_or_src, limit):
        if gold is None:
            continue
        walk = walk_page(html, http_charset=charset)
        ref, n_words, n_aligned = _markup(walk, annotated)
        words += n_words
        aligned += n_aligned
        got = np.asarray(label_page(walk, gold), dtype=object)
        refs.append(ref)
        gots.append(got)
        scores = agreement_scores(ref, got)
        scores.pop("confusion", None)
        pages.append({"page": pid, **scores})
    if not refs:
        return {"pages": 0, "nodes": 0}
    out = agreement_scores(np.concatenate(refs), np.concatenate(gots))
    out["pages"] = len(pages)
    out["words"] = words
    out["words_aligned_with_annotated"] = aligned / words if words else 1.0
    scored = [p for p in pages if p.get("nodes")]
    out["mean_page_accuracy"] = float(np.mean([p["accuracy"] for p in scored]))
    out["mean_page_kappa"] = float(np.mean([p["kappa"] for p in scored]))
    if per_page:
        out["per_page"] = pages
    return out
