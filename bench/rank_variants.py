"""Learning to rank a page's nodes (issue 12): LightGBM's lambdarank / rank_xendcg with each
page a query group, against the ``general`` preset's pointwise gradient boosting, on
``bench/general_variants.py``'s cache and its folds (cross-site, 5 folds grouped by site, seed 1).

    python bench/general_variants.py cache --work W                   # ~6 min, once
    python bench/rank_variants.py run hgb lgb_bin lgb_lr lgb_xe lgb_lr_g lgb_xe_g hgb_pz --work W
    python bench/rank_variants.py oracle hgb lgb_xe --work W          # per-page best cut (a ceiling)

Scorers (``MODELS``), each on the preset's columns (``Bench.features("base")``), fitted on the
nodes that hold text of their own (as ``general_variants.py``'s variants):

- ``hgb``: the preset's learner (scikit-learn's HistGradientBoostingClassifier, random state 1);
- ``lgb_bin``: LightGBM's binary objective with the same tree sizes (31 leaves, leaves of at
  least 20, 100 trees of rate 0.1): the control for LightGBM itself;
- ``lgb_lr`` / ``lgb_xe``: ``lambdarank`` (the pairs of each of the page's top 300 nodes
  with the others: ``TRUNCATION``; ``lgb_lr30``: LightGBM's default 30) / ``rank_xendcg``, each page a query, labels 0/1;
- ``lgb_lr_g`` / ``lgb_xe_g``: the same, a content node's label graded by its share of its
  page's gold characters (1 + floor(10 x share), capped at 10; gain = label), noise 0;
- ``hgb_pz``: the preset's learner on the preset's columns standardised within each page (the
  node's value minus the page's median over the text-holding nodes, over their spread, q90 - q10).

A ranker's scores only order a page's nodes, so each outer fold chooses how to cut them by an
inner cross-validation on its training pages (3 folds grouped by site, as the preset's
threshold), by the preset's stand-in for text F1 (``training.threshold.page_char_f1``), among
the cut rules (``RULES``):

- ``global``: the score mapped to a probability by a logistic fit on the inner out-of-fold
  scores (Platt), cut at the preset's grid of thresholds (for ``hgb``: its probability as is,
  which is the preset's rule);
- ``maxdelta``: keep the nodes whose score is within delta of the page's maximum;
- ``z``: keep the nodes whose page-standardised score (score minus the page's median over the
  text-holding nodes, over their q90 - q10) reaches tau;
- ``ratio``: keep the nodes whose Platt probability reaches alpha times the page's maximum.

``run`` prints, for each scorer, the outer folds' text F1 at the rule the inner CV picked
(``best``), and at each rule family's own inner choice; ``--paired`` compares each with the
first scorer page by page (difference +- s.e., per fold). ``oracle`` scores each
listing/collection page at its best cut: on the Platt probability at ``Bench.oracle``'s grid
(``hgb``: the probability, the 0.777 of docs/models.md), and on the page's own ranking (the
top nodes holding 5%, 10%, ..., 100% of the page's text-holding characters).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from general_variants import Bench, line  # noqa: E402

MODELS = ("hgb", "lgb_bin", "lgb_lr", "lgb_lr30", "lgb_xe", "lgb_lr_g", "lgb_xe_g", "hgb_pz")
RULES = ("global", "maxdelta", "z", "ratio")
TREE = dict(n_estimators=100, learning_rate=0.1, num_leaves=31, min_child_samples=20,
            random_state=1, n_jobs=2, verbose=-1)
#: lambdarank's pairs: each of a page's top 300 nodes (by the current score) with every other
#: (a page's every pair, 2,643 nodes at most, took 88 s a fit against 37 s, and 17 s at the default 30)
TRUNCATION = 300


def _page_stats(v: np.ndarray, page: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row, its page's maximum, median and q90 - q10 of ``v`` (NaN ignored)."""
    s = pd.Series(v).groupby(page)
    q = s.quantile([0.1, 0.5, 0.9]).unstack()
    mx = s.max()
    return (mx.reindex(page).to_numpy(), q[0.5].reindex(page).to_numpy(),
            (q[0.9] - q[0.1]).reindex(page).to_numpy())


class RankBench:
    def __init__(self, work: Path) -> None:
        self.b = Bench(work)
        self.work = work
        r = self.b.rows
        self.key = r["key"].to_numpy()
        self.site = r["site"].astype(str).to_numpy()
        self.y = (r["label"] == "N").to_numpy(int)
        self.fit = self.b._fit_mask()
        self.feats = self.b.features("base")
        self.X = r[self.feats].to_numpy(float)
        self.own = r["own_chars"].to_numpy(float)
        self._grade = None
        self._Xpz = None

    # -- features and labels ------------------------------------------------------------------
    def grade(self) -> np.ndarray:
        """0 for noise; a content node 1 + floor(10 x its share of its page's gold characters), <= 10."""
        if self._grade is None:
            gold = self.own * (self.y == 1) * self.fit
            tot = pd.Series(gold).groupby(self.key).transform("sum").to_numpy()
            share = np.where(tot > 0, gold / np.maximum(tot, 1), 0)
            self._grade = np.where(self.y == 1, 1 + np.minimum(np.floor(10 * share), 9), 0).astype(int)
        return self._grade

    def Xpz(self) -> np.ndarray:
        """The preset's columns standardised within each page over its text-holding nodes."""
        if self._Xpz is None:
            out = np.empty_like(self.X)
            txt = self.b.text
            for j in range(self.X.shape[1]):
                v = np.where(txt, self.X[:, j], np.nan)
                _, med, spread = _page_stats(v, self.key)
                spread = np.where(np.isfinite(spread) & (spread > 0), spread, 1.0)
                out[:, j] = (self.X[:, j] - np.nan_to_num(med)) / spread
            self._Xpz = out
        return self._Xpz

    # -- one scorer -----------------------------------------------------------------------------
    def fit_predict(self, model: str, tr: np.ndarray, te: np.ndarray) -> np.ndarray:
        """Scores of rows ``te`` from ``model`` fitted on rows ``tr`` (row positions)."""
        import lightgbm as lgb
        from sklearn.ensemble import HistGradientBoostingClassifier

        if model in ("hgb", "hgb_pz"):
            X = self.Xpz() if model == "hgb_pz" else self.X
            est = HistGradientBoostingClassifier(random_state=1).fit(X[tr], self.y[tr])
            return est.predict_proba(X[te])[:, 1]
        if model == "lgb_bin":
            est = lgb.LGBMClassifier(**TREE).fit(self.X[tr], self.y[tr])
            return est.predict_proba(self.X[te])[:, 1]
        tr = tr[np.argsort(self.key[tr], kind="stable")]  # a query's rows together
        _, sizes = np.unique(self.key[tr], return_counts=True)
        graded = model.endswith("_g")
        lab = self.grade()[tr] if graded else self.y[tr]
        obj = "lambdarank" if model.startswith("lgb_lr") else "rank_xendcg"
        extra = ({} if obj != "lambdarank" else dict(lambdarank_truncation_level=30) if model == "lgb_lr30"
                 else dict(lambdarank_truncation_level=TRUNCATION))
        if graded:
            extra["label_gain"] = list(range(11))
        est = lgb.LGBMRanker(objective=obj, **TREE, **extra)
        # the keys were sorted: np.unique's order is the rows' order
        est.fit(self.X[tr], lab, group=sizes)
        return est.predict(self.X[te])

    # -- cut rules ------------------------------------------------------------------------------
    def transforms(self, s: np.ndarray, rows: np.ndarray, platt) -> dict[str, np.ndarray]:
        """Each rule's transformed score of ``rows`` (a cut at a global value of it is the rule)."""
        page = self.key[rows]
        p = platt(s)
        mx, med, spread = _page_stats(s, page)
        pmx, _, _ = _page_stats(p, page)
        spread = np.where(spread > 0, spread, 1.0)
        return {"global": p, "maxdelta": s - mx, "z": (s - med) / spread, "ratio": p / np.maximum(pmx, 1e-9)}

    def grids(self, t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from hwnoise.training.threshold import THRESHOLDS

        md = t["maxdelta"]
        qs = np.unique(np.quantile(md[np.isfinite(md)], np.linspace(0.02, 0.98, 33)))
        return {"global": THRESHOLDS, "maxdelta": qs, "z": np.round(np.arange(-1.0, 2.01, 0.1), 2),
                "ratio": np.round(np.arange(0.05, 1.0, 0.05), 2)}

    def union_mask(self) -> np.ndarray:
        """The nodes the preset's union makes content whatever the score (trafilatura keeps them)."""
        return np.nan_to_num(self.b.rows["stack_trafilatura"].to_numpy(float)) >= 0.5

    def rule_values(self, s: np.ndarray, rows: np.ndarray, platt, union: bool) -> dict[str, np.ndarray]:
        """``transforms``, with the union's nodes at +inf (kept by every cut) when ``union``."""
        t = self.transforms(s, rows, platt)
        if union:
            u = self.union_mask()[rows]
            t = {k: np.where(u, np.inf, v) for k, v in t.items()}
        return t

    def cv(self, model: str) -> dict:
        """Out-of-fold scores of every text-holding row (``s``), and per outer fold the inner
        CV's out-of-fold scores of its training pages' text-holding rows (``s_in``) and Platt map."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold

        path = self.work / f"rank_{model}.npz"
        if path.exists():
            z = np.load(path, allow_pickle=True)["out"].item()
            if "s_in" in z:
                return z
            raise SystemExit(f"{path} is from a version without the inner scores: remove it and run again")
        b, r = self.b, self.b.rows
        s_out = np.full(len(r), np.nan)
        s_ins, coefs = [], []
        for f, (tr, te) in enumerate(b.folds):
            t0 = time.perf_counter()
            trk, tek = set(b.table["key"].iloc[tr]), set(b.table["key"].iloc[te])
            trm, tem = np.isin(self.key, list(trk)), np.isin(self.key, list(tek))
            trf = np.flatnonzero(trm & self.fit)
            inner = list(GroupKFold(n_splits=3).split(trf, groups=self.site[trf]))
            s_in = np.full(len(r), np.nan, dtype=np.float32)
            for a, bb in inner:
                rows = np.flatnonzero(np.isin(self.key, np.unique(self.key[trf[bb]])) & b.text)
                s_in[rows] = self.fit_predict(model, trf[a], rows)
            coef = None  # the pointwise scorers' score is already a probability
            if model not in ("hgb", "hgb_pz", "lgb_bin"):
                lr = LogisticRegression().fit(s_in[trf].astype(float).reshape(-1, 1), self.y[trf])
                coef = (float(lr.coef_[0, 0]), float(lr.intercept_[0]))
            tet = np.flatnonzero(tem & b.text)
            s_out[tet] = self.fit_predict(model, trf, tet)
            s_ins.append(s_in)
            coefs.append(coef)
            print(f"{model} fold {f + 1}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        out = {"s": s_out, "s_in": s_ins, "platt": coefs}
        np.savez(path, out=np.array(out, dtype=object))
        return out

    def choose(self, z: dict, union: bool = False) -> list[dict]:
        """Per outer fold, each rule's value that scores best on the inner CV's out-of-fold scores
        of the training pages (page character F1, the preset's stand-in), and that score."""
        from hwnoise.training.threshold import page_char_f1

        b = self.b
        frame = b.rows[["label", "own_chars", "dataset", "page"]]
        out = []
        for f, (tr, _) in enumerate(b.folds):
            trm = np.isin(self.key, list(set(b.table["key"].iloc[tr])))
            trt = np.flatnonzero(trm & b.text)
            s_in = z["s_in"][f].astype(float)
            tin = self.rule_values(s_in[trt], trt, self.platt(z, f), union)
            grid = self.grids(self.transforms(s_in[trt], trt, self.platt(z, f)))
            lab = self.fit[trt]
            sub = frame.iloc[trt[lab]]
            per_rule = {}
            for rule in RULES:
                sc = page_char_f1(sub, tin[rule][lab], grid[rule])
                best = np.flatnonzero(sc >= sc.max() - 1e-12)
                # ties: the preset's rule toward 0.5; the others toward the first (the loosest cut)
                k = int(best[np.argmin(np.abs(grid[rule][best] - 0.5))]) if rule == "global" else int(best[0])
                per_rule[rule] = (float(grid[rule][k]), float(sc[k]))
            out.append(per_rule)
        return out

    def cut(self, z: dict, chosen: list[dict], rule: str | None = None, union: bool = False) -> np.ndarray:
        """A 0/1 'probability' per text row: 1 where the outer fold's rule keeps the node
        (``chosen``: ``choose``'s values; ``rule`` None: the rule the inner CV scored best)."""
        b = self.b
        keep = np.zeros(len(b.rows))
        for f, (_, te) in enumerate(b.folds):
            tek = set(b.table["key"].iloc[te])
            tet = np.flatnonzero(np.isin(self.key, list(tek)) & b.text)
            pr = chosen[f]
            ru = rule or max(pr, key=lambda k: pr[k][1])
            t = self.rule_values(z["s"][tet], tet, self.platt(z, f), union)[ru]
            keep[tet] = np.nan_to_num(t, nan=-np.inf) >= pr[ru][0] - 1e-12
        return keep

    def platt(self, z: dict, f: int):
        c = z["platt"][f]
        if not c:
            return lambda v: v
        a, i = c
        return lambda v: 1 / (1 + np.exp(-(a * np.asarray(v) + i)))

    def prob(self, z: dict) -> np.ndarray:
        """The outer folds' Platt probabilities (the probability for the pointwise scorers)."""
        b, p = self.b, np.full(len(self.b.rows), np.nan)
        for f, (_, te) in enumerate(b.folds):
            tet = np.flatnonzero(np.isin(self.key, list(set(b.table["key"].iloc[te]))) & b.text)
            p[tet] = self.platt(z, f)(z["s"][tet])
        return p

    def rank_oracle(self, s: np.ndarray, shares=np.round(np.arange(0.05, 1.001, 0.05), 2)) -> pd.DataFrame:
        """Each listing/collection page at its best cut of its own ranking: the top nodes by
        score holding at least each share of the page's text-holding characters."""
        b = self.b
        lc = {k for k in b.groups if b.kind[k] in ("listing", "collection")}
        per = []
        for sh in shares:
            keep = np.zeros(len(b.rows))
            for k in lc:
                idx = b.groups[k]
                if not len(idx):
                    continue
                o = idx[np.argsort(-np.nan_to_num(s[idx], nan=-np.inf), kind="stable")]
                cum = np.cumsum(self.own[o]) / max(self.own[o].sum(), 1)
                n = int(np.searchsorted(cum, sh - 1e-9)) + 1
                keep[o[:n]] = 1
            per.append(b.score(keep, 0.5, keys=lc).set_index("key")["f1"])
        best = pd.concat(per, axis=1).max(axis=1)
        return pd.DataFrame({"key": best.index, "kind": [b.kind[k] for k in best.index], "f1": best.to_numpy(),
                             "p": np.nan, "r": np.nan})


def paired_line(b: Bench, name: str, first: pd.DataFrame, other: pd.DataFrame) -> str:
    m = first.merge(other, on=["key", "kind"], suffixes=("_a", "_b"))
    sel = m[m["kind"].isin(["listing", "collection"])]
    d = sel["f1_b"] - sel["f1_a"]
    folds = b.per_fold(other) - b.per_fold(first)
    return (f"| {name} | {sel.f1_b.mean():.3f} | {d.mean():+.4f} ± {d.std() / np.sqrt(len(d)):.4f} | "
            f"{int((d > 0.005).sum())} / {int((d < -0.005).sum())} | {' '.join(f'{x:+.3f}' for x in folds)} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["run", "oracle"])
    ap.add_argument("models", nargs="+", choices=MODELS)
    ap.add_argument("--work", type=Path, default=Path("/tmp/hwnoise-general-variants"))
    ap.add_argument("--union", action="store_true", help="run: trafilatura's nodes content whatever "
                    "the score, in the inner CV's choice and in the outer scoring (the preset's union)")
    args = ap.parse_args(argv)
    rb = RankBench(args.work)
    b = rb.b
    if args.what == "oracle":
        print("| scorer | oracle | listing | collection | all pages | P | R |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        got = {}
        for m in args.models:
            z = rb.cv(m)
            got[(m, "grid")] = b.oracle(rb.prob(z))
            print(line(f"{m}, best threshold of the grid, per page", got[(m, "grid")]), flush=True)
            got[(m, "rank")] = rb.rank_oracle(z["s"])
            print(line(f"{m}, best cut of the page's ranking (5%..100% of its characters)", got[(m, "rank")]),
                  flush=True)
        first = args.models[0]
        print(f"\npaired against {first}'s oracle of the same kind")
        print("| scorer, oracle | text F1 | difference ± s.e. | up / down | per fold |")
        print("|---|---:|---|---|---|")
        for (m, kind), sc in got.items():
            if m != first:
                print(paired_line(b, f"{m}, {kind}", got[(first, kind)], sc), flush=True)
        return 0
    tag = ", with the union" if args.union else ""
    print(f"| scorer, cut{tag} | listing + collection | listing | collection | all pages | P (L+C) | R (L+C) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    res = {}
    for m in args.models:
        z = rb.cv(m)
        ch = rb.choose(z, args.union)
        best = [max(pr, key=lambda k: pr[k][1]) for pr in ch]
        res[(m, "best")] = b.score(rb.cut(z, ch, None, args.union), 0.5)
        print(line(f"{m}, inner CV's rule ({', '.join(best)})", res[(m, "best")]), flush=True)
        for ru in RULES:
            vals = ", ".join(f"{pr[ru][0]:.3g}" for pr in ch)
            res[(m, ru)] = b.score(rb.cut(z, ch, ru, args.union), 0.5)
            print(line(f"{m}, {ru} ({vals})", res[(m, ru)]), flush=True)
    first = args.models[0]
    for ref in ("global", "ratio"):
        print(f"\npaired against {first}, {ref}{tag}; listing + collection")
        print("| scorer, cut | text F1 | difference ± s.e. | up / down | per fold |")
        print("|---|---:|---|---|---|")
        for (m, ru), sc in res.items():
            if (m, ru) != (first, ref) and (ref == "global" or ru == ref):
                print(paired_line(b, f"{m}, {ru}", res[(first, ref)], sc), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
