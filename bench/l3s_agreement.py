"""Agreement of labels from gold text with L3S-GN1's own markup, on the shared l3s dataset.

    python bench/l3s_agreement.py [L3S_FOLDER_OR_IMPORTED_DATASET] [--limit N]

Walks every original page with ``walk_page``, labels its elements from the gold text
(``label_page``) and from the annotated copy's x-nc-sel1/x-nc-sel2 spans, and prints
accuracy, Cohen's kappa and content-node precision/recall (markup as the reference).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hwnoise.features.l3s_agreement import label_agreement

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "l3s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", nargs="?", default=str(DEFAULT), help=f"default: {DEFAULT}")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = ap.parse_args(argv)
    if not Path(args.src).exists():
        print(f"l3s_agreement: {args.src} not found", file=sys.stderr)
        return 1
    start = time.perf_counter()
    r = label_agreement(args.src, limit=args.limit)
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps({**r, "seconds": round(seconds, 2)}, indent=2))
        return 0
    c = r["confusion"]
    print(f"L3S-GN1 label agreement ({args.src}): {r['pages']} pages, {r['nodes']} elements, {seconds:.1f} s")
    print(f"  page words aligned with the annotated copy: {r['words_aligned_with_annotated']:.4f} of {r['words']}")
    print(f"  accuracy            {r['accuracy']:.4f}   (mean per page {r['mean_page_accuracy']:.4f})")
    print(f"  Cohen's kappa       {r['kappa']:.4f}   (mean per page {r['mean_page_kappa']:.4f})")
    print(f"  content precision   {r['content_precision']:.4f}")
    print(f"  content recall      {r['content_recall']:.4f}")
    print(f"  content F1          {r['content_f1']:.4f}")
    print(f"  content share       markup {r['content_share_markup']:.4f}, gold {r['content_share_gold']:.4f}")
    print(f"  markup N: gold N {c['markup_N_gold_N']}, gold S {c['markup_N_gold_S']};  "
          f"markup S: gold N {c['markup_S_gold_N']}, gold S {c['markup_S_gold_S']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
