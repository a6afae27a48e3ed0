"""Variants of the ``general`` preset, measured across sites on WCXB (issue 12's cross-site figure).

    python bench/general_variants.py cache --data ../shared/datasets --work /tmp/gv   # ~6 min
    python bench/general_variants.py run base pagg ctx --work /tmp/gv               # ~8 min a variant
    python bench/general_variants.py thresholds base --work /tmp/gv                  # seconds
    python bench/general_variants.py oracle base --work /tmp/gv                      # ~1 min
    python bench/general_variants.py subtree base --work /tmp/gv                     # ~20 min

``cache`` imports WCXB dev, assembles every gold page's rows with the general preset's columns
plus parent/grandparent context (``hwnoise.features.assembly``, the one assembly), and keeps each
page's text segments, gold and trafilatura's text. ``run`` computes out-of-fold probabilities of
content for each variant with the ``cross-site`` protocol's folds (5, grouped by site, seed 1);
``thresholds`` scores them with global thresholds and with a per-page threshold that maximises
the page's expected F1 (its probabilities taken as calibrated). Text F1 is ``hwnoise.text``'s,
from the content nodes' own text as ``text_from_labels`` joins it.

Variants (gradient boosting as the preset, trained on the nodes that hold text of their own,
the only ones whose label changes the extracted text):

- ``base``: the preset's columns.
- ``ctx``: + the parent/grandparent context columns (``--context``).
- ``records``: + the record-structure group (``rs_*``, ``hwnoise.features.record_struct``).
- ``lc3`` / ``lconly``: the preset's columns, the listing and collection pages' nodes weighted
  three times / trained on alone.
- ``pagg``: + page aggregates of the stacked extractors (share of the page's text each keeps,
  the node's share minus it, how many agree).
- ``lr05`` / ``leaf63`` / ``leaf15`` / ``balanced``: the preset's columns, the gradient boosting's
  parameters changed (``HGB_PARAMS``).

``oracle`` scores each listing/collection page at the threshold that is best *for that page*
(a ceiling for any choice of threshold, not a method); ``subtree`` keeps the content of the page's
main subtree (the element maximising the sum over its text of characters x (p - t)) at a lower
threshold and outside it at a higher one (``main_subtree``).
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"


def cache(data: Path, work: Path) -> None:
    from hwnoise.cli import main as cli
    from hwnoise.dataset import Dataset
    from hwnoise.extractors.model import run_extractor
    from hwnoise.features.assembly import assemble_page, walk_dataset_page
    from hwnoise.training.spec import preset_spec

    wc = work / "wc"
    if not wc.exists():
        cli(["import", "wcxb", str(data / "wcxb"), "--into", str(wc)])
    try:
        from hwnoise.features.record_struct import record_struct
    except ImportError:  # a version without the record-structure group
        record_struct = None
    cols = replace(preset_spec("general"), context=True).columns()
    frames, segs = [], {}
    for d in sorted(p for p in wc.iterdir() if p.is_dir()):
        ds = Dataset(d)
        for page in ds.pages():
            gold = page.read_gold()
            if gold is None:
                continue
            walk = walk_dataset_page(page)
            rows = assemble_page(page, cols, stacker=run_extractor, walk=walk).rows
            if record_struct is not None:  # the record-structure group, for the ``records`` variant
                rows = rows.join(record_struct(walk).reset_index(drop=True))
            rows["dataset"], rows["page"], rows["site"] = ds.name, page.id, page.site
            frames.append(rows)
            segs[(ds.name, page.id)] = (walk.segments, gold,
                                        run_extractor("trafilatura", page.read_html(), page.http_charset))
        print(f"{d.name}: {len(frames)} pages", file=sys.stderr)
    pd.concat(frames, ignore_index=True).to_parquet(work / "rows.parquet")
    with open(work / "segs.pkl", "wb") as fh:
        pickle.dump({"segs": segs, "cols": cols}, fh)


HGB_PARAMS = {  # variants of the gradient boosting's parameters (the preset's: scikit-learn's defaults)
    "lr05": dict(learning_rate=0.05, max_iter=300),
    "leaf63": dict(max_leaf_nodes=63, max_iter=200, learning_rate=0.05, l2_regularization=1.0),
    "leaf15": dict(max_leaf_nodes=15, min_samples_leaf=200, max_iter=200),
    "balanced": dict(class_weight="balanced"),
}


class Bench:
    """The cached rows, the folds, and the scoring."""

    def __init__(self, work: Path) -> None:
        from hwnoise.training.protocols import splits

        self.work = work
        self.rows = pd.read_parquet(work / "rows.parquet")
        with open(work / "segs.pkl", "rb") as fh:
            meta = pickle.load(fh)
        self.segs, self.cols = meta["segs"], meta["cols"]
        r = self.rows
        r["key"] = r["dataset"] + "/" + r["page"].astype(str)
        self.table = r[["key", "dataset", "page", "site"]].drop_duplicates("key").reset_index(drop=True)
        self.folds = list(splits(self.table, "cross-site", seed=1, k=5))
        self.kind = self.table.set_index("key")["dataset"].str.replace("wcxb-", "")
        self.text = r["own_chars"].to_numpy() > 0
        self.groups = {k: np.flatnonzero(g) for k, g in
                       ((k, ((r["key"] == k).to_numpy() & self.text)) for k in self.table["key"])}

    def features(self, variant: str) -> list[str]:
        base = [c for c in self.cols if not c.startswith(("ctx_parent_", "ctx_grand_"))]
        if variant == "base":
            return base
        if variant == "ctx":
            return base + [c for c in self.cols if c.startswith(("ctx_parent_", "ctx_grand_"))
                           and self.rows[c].notna().any()]
        if variant == "pagg":
            return base + self._page_aggregates(base)
        if variant in ("lc3", "lconly") or variant in HGB_PARAMS:  # the preset's columns (see oof)
            return base
        if variant == "records":  # the record-structure group (features/record_struct.py), if cached
            rs = [c for c in self.rows.columns if c.startswith("rs_")]
            if not rs:
                raise SystemExit("the cache has no rs_* columns: rebuild it with 'cache' on a version "
                                 "that has features/record_struct.py")
            return base + rs
        raise SystemExit(f"unknown variant {variant!r}: base, ctx, pagg, records, lc3, lconly, "
                         f"{', '.join(HGB_PARAMS)}")

    def _page_aggregates(self, base: list[str]) -> list[str]:
        r, stk = self.rows, [c for c in base if c.startswith("stack_")]
        w, k = r["own_chars"].to_numpy(float), r["key"].to_numpy()
        tot = pd.Series(w).groupby(k).transform("sum").to_numpy()
        new = []
        for c in stk:
            v = r[c].to_numpy(float)
            r["pg_" + c] = pd.Series(np.nan_to_num(v) * w).groupby(k).transform("sum").to_numpy() / np.maximum(tot, 1)
            r["rel_" + c] = v - r["pg_" + c]
            new += ["pg_" + c, "rel_" + c]
        r["agree"] = np.nansum(r[stk].to_numpy(float) > 0.5, axis=1)
        r["agree_mean"] = np.nanmean(r[stk].to_numpy(float), axis=1)
        r["pg_chars_log"] = np.log1p(tot)
        return new + ["agree", "agree_mean", "pg_chars_log"]

    def oof(self, variant: str) -> np.ndarray:
        from sklearn.ensemble import HistGradientBoostingClassifier

        path = self.work / f"oof_{variant}.npy"
        if path.exists():
            return np.load(path)
        feats, r = self.features(variant), self.rows
        p = np.full(len(r), np.nan)
        for tr, te in self.folds:
            trm = r["key"].isin(set(self.table["key"].iloc[tr])).to_numpy() & self.text
            tem = r["key"].isin(set(self.table["key"].iloc[te])).to_numpy() & self.text
            trr = r[trm & r["label"].isin(["S", "N"]).to_numpy()]
            lc = trr["dataset"].isin(["wcxb-listing", "wcxb-collection"]).to_numpy()
            weight = None
            if variant == "lconly":  # train on the listing and collection pages alone
                trr, lc = trr[lc], lc[lc]
            elif variant == "lc3":  # their nodes count three times
                weight = np.where(lc, 3.0, 1.0)
            est = HistGradientBoostingClassifier(random_state=1, **HGB_PARAMS.get(variant, {})).fit(
                trr[feats].to_numpy(float), (trr["label"] == "N").to_numpy(int), sample_weight=weight)
            p[tem] = est.predict_proba(r.loc[tem, feats].to_numpy(float))[:, 1]
        np.save(path, p)
        return p

    def score(self, p: np.ndarray, thr: float = 0.5, page_thr=None, keys=None, labeller=None) -> pd.DataFrame:
        """Text F1 per page of the nodes whose probability reaches the threshold, their text
        joined as the model method joins it (``text_from_labels`` over the walk's segments).
        ``labeller(key, p_of_page_rows)`` may decide each page's content instead."""
        from hwnoise.extractors.base import text_from_labels
        from hwnoise.features.columns import CONTENT, NOISE
        from hwnoise.text import text_scores

        node, w, out = self.rows["node"].to_numpy(), self.rows["own_chars"].to_numpy(float), []
        for key, idx in self.groups.items():
            if keys is not None and key not in keys:
                continue
            if labeller is not None:  # every row of the page
                labels = np.where(labeller(key, p), CONTENT, NOISE).astype(object)
            else:
                labels = np.full(int(node[idx].max()) + 1 if len(idx) else 1, NOISE, dtype=object)
                t = page_thr(w[idx], p[idx]) if page_thr is not None else thr
                labels[node[idx]] = np.where(p[idx] >= t, CONTENT, NOISE)
            sg, gold, _ = self.segs[tuple(key.split("/", 1))]
            s = text_scores(text_from_labels(SimpleNamespace(segments=sg), labels), gold)
            out.append({"key": key, "kind": self.kind[key], "f1": s["f1"], "p": s["precision"], "r": s["recall"]})
        return pd.DataFrame(out)

    def oracle(self, p: np.ndarray, grid=(0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)) -> pd.DataFrame:
        """Each listing/collection page scored at the threshold of ``grid`` best for that page."""
        lc = {k for k in self.groups if self.kind[k] in ("listing", "collection")}
        per = [self.score(p, t, keys=lc).set_index("key")["f1"] for t in grid]
        best = pd.concat(per, axis=1).max(axis=1)
        return pd.DataFrame({"key": best.index, "kind": [self.kind[k] for k in best.index], "f1": best.to_numpy(),
                             "p": np.nan, "r": np.nan})

    def main_subtree(self, t: float, t_in: float, t_out: float):
        """A labeller: content inside the page's main subtree at ``t_in``, outside at ``t_out``."""
        r = self.rows
        node, parent, w, key_of = (r["node"].to_numpy(), r["parent"].to_numpy(), r["own_chars"].to_numpy(float),
                                   r["key"].to_numpy())
        pages = {k: np.flatnonzero(key_of == k) for k in self.groups}

        def label(key: str, p: np.ndarray) -> np.ndarray:
            idx = pages[key]
            n = int(node[idx].max()) + 1
            par, pp, ww = np.full(n, -1), np.zeros(n), np.zeros(n)
            par[node[idx]], pp[node[idx]], ww[node[idx]] = parent[idx], np.nan_to_num(p[idx]), w[idx]
            gain = np.where(ww > 0, ww * (pp - t), 0.0)
            for i in range(n - 1, 0, -1):  # subtree sums: rows are in document order
                if par[i] >= 0:
                    gain[par[i]] += gain[i]
            inside = np.zeros(n, bool)
            inside[int(np.argmax(gain))] = True
            for i in range(int(np.argmax(gain)) + 1, n):
                inside[i] = par[i] >= 0 and inside[par[i]]
            return np.where(inside, pp >= t_in, pp >= t_out)
        return label

    def trafilatura(self) -> pd.DataFrame:
        from hwnoise.text import text_scores

        out = []
        for key in self.table["key"]:
            _, gold, traf = self.segs[tuple(key.split("/", 1))]
            s = text_scores(traf or "", gold)
            out.append({"key": key, "kind": self.kind[key], "f1": s["f1"], "p": s["precision"], "r": s["recall"]})
        return pd.DataFrame(out)


def expected_f1_threshold(beta: float = 1.0):
    """A page's threshold: the cut of its nodes, by probability, that maximises the expected
    F-beta of characters when the probabilities are taken as calibrated."""
    def thr(w: np.ndarray, p: np.ndarray) -> float:
        if len(p) == 0:
            return 0.5
        o = np.argsort(-p, kind="stable")
        tp, pred, gold = np.cumsum(w[o] * p[o]), np.cumsum(w[o]), (w * p).sum()
        k = int(np.argmax((1 + beta ** 2) * tp / (pred + beta ** 2 * gold + 1e-9)))
        return float(max(min(p[o][k], 0.99), 0.05))
    return thr


def line(name: str, res: pd.DataFrame) -> str:
    lc = res[res["kind"].isin(["listing", "collection"])]
    return (f"| {name} | {lc.f1.mean():.3f} | {lc[lc.kind == 'listing'].f1.mean():.3f} | "
            f"{lc[lc.kind == 'collection'].f1.mean():.3f} | {res.f1.mean():.3f} | {lc.p.mean():.3f} | {lc.r.mean():.3f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["cache", "run", "thresholds", "oracle", "subtree"])
    ap.add_argument("variants", nargs="*", default=["base"])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/hwnoise-general-variants"))
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.what == "cache":
        cache(args.data, args.work)
        return 0
    b = Bench(args.work)
    print("| variant | listing + collection | listing | collection | all pages | P (L+C) | R (L+C) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(line("trafilatura", b.trafilatura()))
    for v in args.variants:
        t0 = time.perf_counter()
        p = b.oof(v)
        print(f"{v}: out-of-fold probabilities in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if args.what == "run":
            print(line(f"{v}, threshold 0.2", b.score(p, 0.2)))
        elif args.what == "oracle":
            print(line(f"{v}, each page at its best threshold (a ceiling)", b.oracle(p)))
        elif args.what == "subtree":
            for t, t_in, t_out in [(0.2, 0.1, 0.5), (0.2, 0.15, 0.5), (0.2, 0.2, 0.5), (0.2, 0.1, 1.01),
                                   (0.3, 0.15, 0.3), (0.4, 0.2, 0.3), (0.5, 0.2, 0.3)]:
                print(line(f"{v}, main subtree t={t} inside {t_in} outside {t_out}",
                           b.score(p, labeller=b.main_subtree(t, t_in, t_out))))
        else:
            for t in (0.2, 0.3, 0.5):
                print(line(f"{v}, threshold {t}", b.score(p, t)))
            for beta in (1.0, 1.5, 2.0):
                print(line(f"{v}, page expected-F{beta:g}", b.score(p, page_thr=expected_f1_threshold(beta))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
