"""Pages per second of the rendered mode against the unrendered features stage, in one run.

The same big9 pages (a seeded sample from ../shared/datasets/big9) go through:

- ``walk``: ``walk_page`` (decode, parse, drop hidden, every measure): the unrendered
  features stage without labels;
- ``render``: one warm headless Chromium (``features.render.Browser``), per page
  ``tagged_html`` (decode, parse, tag the walker's elements, serialise) + load + one
  JavaScript read of styles and boxes (the browser's start-up is timed apart);
- ``render_dataset``: the whole ``hwnoise render`` stage on a temporary dataset of those
  pages with ``--workers`` browsers (start-ups, walker check and parquet writes included);
- ``apply_render``: dropping hidden rows, re-measuring and adding the rendered features.

    python bench/bench_render.py --pages 12 --workers 2
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from hwnoise.dataset import Dataset
    from hwnoise.features.render import (Browser, chromium_available, read_render, render_dataset,
                                         tagged_html)
    from hwnoise.features.rendered import apply_render
    from hwnoise.features.walk import walk_page

    if not chromium_available():
        sys.exit("needs /usr/bin/chromium and playwright")
    files = sorted((DATASETS / "big9").glob("big5-*/html/*"))
    if not files:
        sys.exit(f"no big9 pages under {DATASETS}")
    pick = random.Random(args.seed).sample(files, min(args.pages, len(files)))
    pages = [p.read_bytes() for p in pick]
    n = len(pages)

    t = time.perf_counter()
    walks = [walk_page(data) for data in pages]
    t_walk = time.perf_counter() - t

    t = time.perf_counter()
    browser = Browser()
    browser._start()
    t_start = time.perf_counter() - t
    t = time.perf_counter()
    frames = []
    for data in pages:
        html, tags = tagged_html(data)
        rows, _ = browser.render(html, len(tags))
        frames.append(rows)
    t_render = time.perf_counter() - t
    browser.close()

    with tempfile.TemporaryDirectory() as tmp:
        ds = Dataset.create(Path(tmp) / "bench", name="bench", source="bench")
        for k, data in enumerate(pages):
            sub = ds.add_submission({"url": f"http://bench.test/{k}", "fields": []})
            ds.write_page(sub["id"], data)
        t = time.perf_counter()
        summary = render_dataset(ds, workers=args.workers, progress=False)
        t_stage = time.perf_counter() - t
        render = read_render(ds)
        ids = [p.id for p in ds.pages()]
        t = time.perf_counter()
        dropped = 0
        for pid, w in zip(ids, walks):
            out = apply_render(w.rows, render[render["page"] == pid])
            dropped += out.attrs["render_dropped"]
        t_apply = time.perf_counter() - t

    rows = sum(len(w.rows) for w in walks)
    print(f"{n} big9 pages, {rows} walker rows; {summary['rendered']} rendered, "
          f"{summary['failed']} failed; {dropped} rows hidden by the browser")
    print(f"{'stage':<34}{'pages/s':>10}{'× walk time':>14}")
    for name, secs in [("walk (unrendered features)", t_walk),
                       ("render, one warm browser", t_render),
                       (f"render_dataset, {args.workers} workers", t_stage),
                       ("apply_render", t_apply)]:
        print(f"{name:<34}{n / secs:>10.2f}{secs / t_walk:>14.1f}")
    print(f"browser start-up: {t_start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
