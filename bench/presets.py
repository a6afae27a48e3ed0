"""Measure the model presets: scores, time to train, time to extract a page.

    python bench/presets.py [--work /tmp/hwnoise-bench] [--data ../shared/datasets]
                            [--presets thesis,site,general] [--only big9,wcxb] [--site-years N]

- big9, per site-year (36 dataset folders, pages protocol): for each preset, exactly what a user
  runs, `hwnoise train DIR --preset P --out M` (the saved model is fitted on the protocol's
  training pages) then `hwnoise evaluate DIR --model M --methods model,trafilatura` (which scores
  only the pages the model never saw: the protocol's test pages). Mean text F1 over the
  site-years beside trafilatura on the same pages; the summed training time over the 360 pages;
  the mean time to extract one page (`hwnoise extract`'s path, model loaded from disk).
- wcxb, across sites: every dev page, 5 folds grouped by site (`hwnoise evaluate wcxb/*
  --protocol cross-site --preset P --score-only wcxb-listing,wcxb-collection`): text F1 on the
  listing and collection pages of sites the fold's model never saw, beside trafilatura.

Datasets are imported and featurised into --work when missing (bench/compare.py's ``ensure``).
Prints one table; the figures in the README come from this script.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import DEFAULT_DATA, ensure  # noqa: E402

from hwnoise.dataset import Dataset  # noqa: E402
from hwnoise.evaluate import evaluate  # noqa: E402
from hwnoise.extractors.model import _TEXT_CACHE, extract_html, load_model  # noqa: E402
from hwnoise.api import train  # noqa: E402  (as 'hwnoise train' runs it: stacked extractors, region scorer)


def _mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def big9(dirs: list[Path], preset: str, tmp: Path) -> dict:
    f1, traf, train_s, extract_s, pages_timed = [], [], 0.0, 0.0, 0
    for d in dirs:
        out = tmp / f"{preset}-{d.name}"
        t0 = time.perf_counter()
        train([d], protocol="pages", preset=preset, out=out)
        train_s += time.perf_counter() - t0
        rep = evaluate([d], methods=["model", "trafilatura"], model=out, figures=False)
        by = {r["method"]: r for r in rep["results"]}
        f1.append(by["model"]["text_f1"])
        traf.append(by["trafilatura"]["text_f1"])
        model = load_model(out)
        seen = set((model.trained_on or {}).get(Dataset(d).name, ()))
        for page in [p for p in Dataset(d).pages() if p.id not in seen][:1]:
            html = page.read_html()
            _TEXT_CACHE.clear()  # evaluate ran the stacked extractors on this page: time them too
            t0 = time.perf_counter()
            extract_html(model, html, http_charset=page.http_charset)
            extract_s += time.perf_counter() - t0
            pages_timed += 1
    return {"text_f1": _mean(f1), "trafilatura": _mean(traf), "train_s": train_s,
            "extract_s": extract_s / max(pages_timed, 1), "units": len(dirs)}


def wcxb(dirs: list[Path], preset: str, tmp: Path) -> dict:
    scored = ["wcxb-listing", "wcxb-collection"]
    t0 = time.perf_counter()
    rep = evaluate(dirs, methods=["model", "trafilatura"], protocol="cross-site", k=5,
                   method_options={"model": {"preset": preset}}, figures=False,
                   out=tmp / f"wcxb-{preset}", score_only=[d for d in scored if any(x.name == d for x in dirs)])
    secs = time.perf_counter() - t0
    rows = [r for r in rep["results"] if r["dataset"] in scored]

    def pooled(method):
        rs = [r for r in rows if r["method"] == method]
        n = sum(r["pages"] for r in rs)
        return sum(r["text_f1"] * r["pages"] for r in rs) / max(n, 1), n, {r["dataset"]: r["text_f1"] for r in rs}

    m, n, per = pooled("model")
    t, _, _ = pooled("trafilatura")
    return {"text_f1": m, "trafilatura": t, "pages": n, "per": per, "seconds": secs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/hwnoise-bench", type=Path)
    ap.add_argument("--data", default=DEFAULT_DATA, type=Path)
    ap.add_argument("--presets", default="thesis,site,general")
    ap.add_argument("--only", default="big9,wcxb")
    ap.add_argument("--site-years", type=int, default=None, help="only the first N big9 site-years")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="hwnoise-presets-"))
    lines = []
    for preset in args.presets.split(","):
        if "big9" in only:
            dirs = ensure("big9", args.data, args.work, None)[: args.site_years]
            r = big9(dirs, preset, tmp)
            lines.append(f"big9 per site-year  {preset:8s} text F1 {r['text_f1']:.3f} (trafilatura "
                         f"{r['trafilatura']:.3f}), {r['units']} site-years; train {r['train_s']:.0f} s "
                         f"in all, extract {r['extract_s']:.2f} s/page")
            print(lines[-1], flush=True)
        if "wcxb" in only:
            dirs = ensure("wcxb", args.data, args.work, None)
            r = wcxb(dirs, preset, tmp)
            per = ", ".join(f"{k.split('-')[-1]} {v:.3f}" for k, v in r["per"].items())
            lines.append(f"wcxb cross-site     {preset:8s} text F1 {r['text_f1']:.3f} ({per}; trafilatura "
                         f"{r['trafilatura']:.3f}), {r['pages']} pages, {r['seconds']:.0f} s")
            print(lines[-1], flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
