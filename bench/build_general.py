"""Build the shipped model ``general`` (``data/models/general.json``): the general preset trained
on pages of every shared dataset with gold; with ``--preset records``, the shipped ``records``
(``data/models/records.json``): the records preset trained on every page of the sources whose
gold is data records (NEXT-EVAL's 100 pages).

    python bench/build_general.py [--work /tmp/hwnoise-bench] [--data ../shared/datasets]
                                  [--pages-per-dataset 60] [--all-pages SOURCES]
                                  [--preset general|records] [--cut absolute|page]
                                  [--cross-site-json FILE] [--out data/models/PRESET.json]

Each dataset is imported (``hwnoise import``, first ``--import-limit`` pages of the larger
ones) and featurised into --work when missing; from each, a seeded sample of at most
``--pages-per-dataset`` pages with gold is taken (big9's sample spans its 36 site-years) so that
no dataset's many pages outweigh the others; of the ``--all-pages`` sources every page with gold
is taken (``--all-pages wcxb``: every WCXB dev page, as issue 12 words it; measured and not
shipped, README "Models"). The rows are assembled
by ``hwnoise.features.assembly`` exactly as extraction assembles them, the general preset is
fitted (threshold by inner 3-fold CV grouped by site), and the model is written as one JSON file
(no pickle) with the data hash, the pages per dataset, this command, and the cross-site scores
measured by ``bench/presets.py`` (passed with --cross-site-json).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import DEFAULT_DATA, ensure  # noqa: E402

from hwnoise.dataset import Dataset, atomic_write_text  # noqa: E402
from hwnoise.extractors.model import training_rows  # noqa: E402
from hwnoise.features.assembly import FeatureCache  # noqa: E402
from hwnoise.progress import info  # noqa: E402
from hwnoise.training.spec import CUTS, fit_spec, preset_spec, with_overrides  # noqa: E402

SOURCES = ("big9", "cleaneval", "dragnet", "l3s", "readability", "wcxb", "swde", "nexteval")
#: the sources whose gold is data records (``records/ID.json``), which the records model learns from
RECORD_SOURCES = ("nexteval",)


def sample(dirs: list[Path], n: int, seed: int) -> list:
    pages = [p for d in dirs for p in Dataset(d).pages() if p.gold_path.exists()]
    rng = random.Random(seed)
    rng.shuffle(pages)
    return sorted(pages[:n], key=lambda p: (p.dataset.name, p.id))


def gather(sources: list[str], data: Path, work: Path, n: int, all_pages: str = "",
           import_limit: int = 150, seed: int = 1) -> tuple[list, dict]:
    """The training pages: each source imported and featurised into ``work`` when missing (the
    first ``import_limit`` pages of the sources other than big9 and wcxb, into ``work``-g), and a
    seeded sample of ``n`` pages with gold of each (every page of the ``all_pages`` sources)."""
    pages, per = [], {}
    whole_sources = {s.strip() for s in all_pages.split(",") if s.strip()}
    for src in sources:
        limit = None if src in ("big9", "wcxb") else import_limit
        into = work if limit is None else Path(f"{work}-g")
        try:
            dirs = ensure(src, data, into, limit)
        except Exception as exc:  # noqa: BLE001 - a source that is absent or fails is said, not fatal
            info(f"build_general: {src}: skipped ({type(exc).__name__}: {exc})")
            continue
        got = sample(dirs, 10**9 if src in whole_sources else n, seed)
        per[src] = len(got)
        pages += got
    return pages, per


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/hwnoise-bench", type=Path)
    ap.add_argument("--data", default=DEFAULT_DATA, type=Path)
    ap.add_argument("--sources", default=None,
                    help="comma-separated sources (default: all of them; with --preset records, the "
                         "sources whose gold is data records, every page: nexteval)")
    ap.add_argument("--pages-per-dataset", type=int, default=60)
    ap.add_argument("--all-pages", default="",
                    help="sources of which every page with gold is taken, comma-separated (e.g. wcxb: "
                         "tried, not shipped; README 'Models')")
    ap.add_argument("--import-limit", type=int, default=150,
                    help="import only the first N pages of sources other than big9 and wcxb")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cross-site-json", type=Path, default=None,
                    help="a JSON object of cross-site scores (bench/presets.py) to record in the file")
    ap.add_argument("--preset", default="general", choices=["general", "records"],
                    help="the preset to fit (records: general + the record-structure features)")
    ap.add_argument("--out", default=None, type=Path,
                    help="the model file (default data/models/PRESET.json)")
    ap.add_argument("--cut", default=None, choices=CUTS,
                    help="the spec's cut (what the inner-CV threshold is compared with; the presets': absolute)")
    args = ap.parse_args(argv)
    args.out = args.out or HERE.parent / "data" / "models" / f"{args.preset}.json"
    if args.sources is None:
        args.sources = ",".join(RECORD_SOURCES if args.preset == "records" else SOURCES)
        if args.preset == "records":
            args.all_pages = args.all_pages or ",".join(RECORD_SOURCES)
    spec = preset_spec(args.preset)
    if args.cut:
        spec = with_overrides(spec, {"cut": args.cut})
    feats = spec.columns()
    pages, per = gather(args.sources.split(","), args.data, args.work, args.pages_per_dataset,
                        args.all_pages, args.import_limit, args.seed)
    info(f"build_general: {len(pages)} pages: {per}")
    t0 = time.perf_counter()
    rows = training_rows(pages, FeatureCache(), feats, progress=True)
    info(f"build_general: {len(rows)} labelled rows assembled in {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    model = fit_spec(spec, rows, seed=args.seed)
    info(f"build_general: fitted in {time.perf_counter() - t0:.0f} s (threshold {model.threshold})")
    model.protocol = "all-pages"
    digest = hashlib.sha256()
    for p in pages:
        digest.update(f"{p.dataset.name}\0{p.id}\0".encode())
        digest.update(hashlib.sha256(p.html_path.read_bytes()).digest())
        digest.update(hashlib.sha256(p.gold_path.read_bytes()).digest())
    doc = model.json_document(require_tree=True)
    doc["query"] = []  # the general model has no domain: a page's query comes with the page
    doc["data_hash"] = "sha256:" + digest.hexdigest()
    doc["pages_per_source"] = per
    doc["command"] = ("python bench/build_general.py " + " ".join(sys.argv[1:] if argv is None else argv)).strip()
    doc["cross_site"] = json.loads(args.cross_site_json.read_text()) if args.cross_site_json else None
    doc["trained_on"] = {}
    for p in pages:
        doc["trained_on"].setdefault(p.dataset.name, []).append(p.id)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    info(f"build_general: wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
