"""Pages built by their scripts in the shared datasets: which ones the walk shows as a browser with
scripting off, which ones had content streamed out of order, and where hwnoise's text still falls
far short of trafilatura's (README "Decoding and what a browser shows").

    python bench/script_pages.py [--data ../shared/datasets] [--workers 2] [--short 0.2]

Every HTML page below ``--data`` (``.gz`` too) is walked (``walk_page``), and its text is extracted
by the shipped ``general`` model (``hwnoise.extract``) and by ``trafilatura.extract``. The script
prints, per dataset, the pages, how many were walked with scripting off (``PageWalk.scripting_off``)
and how many had parts streamed out of order placed (React, Marko: ``PageWalk.streamed``). It then lists those pages, and
the pages where hwnoise's text is under ``--short`` times trafilatura's while trafilatura has 500
characters or more: the check that found both kinds in session 18. About 3 minutes on 2 cores.
"""
from __future__ import annotations

import argparse
import gzip
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"


def pages_below(data: Path) -> list[Path]:
    """The HTML pages below ``data`` (``.html``, ``.htm``, either gzipped), sorted."""
    suffixes = (".html", ".htm", ".html.gz", ".htm.gz")
    return sorted(p for p in data.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes))


@lru_cache(maxsize=1)
def _general():
    from hwnoise.extractors.model import load_model

    return load_model("general")


def measure(path: Path) -> tuple[str, bool, int, int, int]:
    """``(page, scripting off, streamed parts placed, hwnoise's characters, trafilatura's)``."""
    import trafilatura

    from hwnoise import extract
    from hwnoise.features.walk import walk_page

    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    walk = walk_page(raw)
    ours = extract(_general(), raw)
    theirs = trafilatura.extract(raw) or ""
    return str(path), walk.scripting_off, walk.streamed, len(ours), len(theirs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--workers", type=int, default=2, help="processes (1: this one)")
    ap.add_argument("--short", type=float, default=0.2,
                    help="list pages whose text is under this share of trafilatura's (default 0.2)")
    args = ap.parse_args(argv)
    files = pages_below(args.data)
    if not files:
        raise SystemExit(f"script_pages: no HTML pages below {args.data}")
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            rows = list(pool.map(measure, files, chunksize=8))
    else:  # in this process
        rows = [measure(f) for f in files]
    name = {str(p): p.relative_to(args.data).parts[0] for p in files}
    pages, off, streamed = Counter(), Counter(), Counter()
    for page, is_off, placed, _, _ in rows:
        pages[name[page]] += 1
        off[name[page]] += is_off
        streamed[name[page]] += placed > 0
    print("| dataset | pages | walked with scripting off | streamed parts placed |")
    print("|---|---:|---:|---:|")
    for ds in sorted(pages):
        print(f"| {ds} | {pages[ds]} | {off[ds]} | {streamed[ds]} |")
    print(f"| all | {sum(pages.values())} | {sum(off.values())} | {sum(streamed.values())} |")
    print("\npage | scripting off | parts placed | hwnoise chars | trafilatura chars")
    for page, is_off, placed, ours, theirs in rows:
        short = theirs >= 500 and ours < args.short * theirs
        if is_off or placed or short:
            rel = Path(page).relative_to(args.data)
            print(f"{rel} | {'yes' if is_off else ''} | {placed or ''} | {ours} | {theirs}"
                  + ("  <- short" if short else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
