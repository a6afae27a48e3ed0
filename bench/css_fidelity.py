"""How close the walk's text is to what Chromium shows, with and without a change to its CSS rules.

    python bench/css_fidelity.py [--change cascade|media] [--data ../shared/datasets]
                                 [--datasets wcxb,big9,...] [--out FILE.csv] [--all]

Chromium (Debian's, through ``hwnoise.features.render.Browser``: scripts off, no network, a
1,366 x 768 window) loads each page and gives ``document.body.innerText``: the text a browser
shows with the page's own inline style sheets, the same ones the walk reads. The walk's words are
compared with it as bags of words (F1), twice:

- ``now``: the walk as it is;
- ``before``: the same walk with a change switched off (module attributes of ``features.css``
  replaced for that run), ``--change``:
  - ``cascade`` (session 20, the default): no cascade across selectors; a hiding rule hides
    whatever rule of another selector shows the element (``cascade_rows`` returns its rows);
  - ``media`` (session 19): every ``<style>`` applied whatever its ``media``, no ``@media`` block
    applied, no showing rule read at all (so neither the same selector's nor another's shows
    again what a rule hid).

Only the pages whose two walks differ are loaded in Chromium. Prints, per dataset, the pages that
differ and the mean F1 against Chromium before and now, and how many pages came closer or moved
away (by more than 0.005). With ``--all``, every page is loaded, and the table gives the F1 of
``now`` against Chromium over all of them too (median and mean) and lists the pages farthest off.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import sys
from pathlib import Path

from hwnoise.decode import decode_html  # noqa: E402
from hwnoise.features import css, walk  # noqa: E402
from hwnoise.features.render import Browser  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
PATTERNS = {  # the page files of each shared dataset
    "wcxb": ["wcxb/dev/html/*.html.gz"], "big9": ["big9/**/*.htm*"], "l3s": ["l3s/**/*.htm*"],
    "dragnet": ["dragnet/**/*.htm*"], "cleaneval": ["cleaneval/**/*.htm*"],
    "readability": ["readability/**/source.html"], "nexteval": ["nexteval/**/*.htm*"],
    "swde": ["swde/**/*.htm*"],
}
#: Each change's switch: the ``features.css`` attributes that turn it off.
CHANGES = {
    "cascade": {"cascade_rows": lambda sheets, rows, *a, **k: rows},
    "media": {"media_matches": lambda media: True, "_in_shown_media": lambda blocks, at: False,
              "_showing_rules": lambda *a: []},
}
NOW: dict = {}


def words(raw: bytes, off: dict) -> list[str]:
    """The walk's words with the attributes in ``off`` (a ``CHANGES`` entry, or ``NOW``: none)
    in place of ``features.css``'s own."""
    kept = {name: getattr(css, name) for name in off}
    for name, value in off.items():
        setattr(css, name, value)
    _clear()
    try:
        return " ".join(t for _, t in walk.walk_page(raw).segments).split()
    finally:
        for name, value in kept.items():
            setattr(css, name, value)
        _clear()


def _clear() -> None:
    for cached in (css._sheet_rules, css._sheet_display, css._sheet_cascade):
        cached.cache_clear()


def f1(a: list[str], b: list[str]) -> float:
    """F1 of two bags of words; 1 when both are empty (the two agree that nothing shows)."""
    if not a and not b:
        return 1.0
    x, y = collections.Counter(a), collections.Counter(b)
    both = sum((x & y).values())
    p, r = both / max(1, sum(x.values())), both / max(1, sum(y.values()))
    return 2 * p * r / (p + r) if p + r else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--change", choices=sorted(CHANGES), default="cascade",
                    help="the change switched off for 'before' (default: cascade, session 20's)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--datasets", default=",".join(PATTERNS))
    ap.add_argument("--out", type=Path, default=None, help="a CSV of every page that differs (with --all: every page)")
    ap.add_argument("--all", action="store_true", help="load every page in Chromium, not only those whose walk differs")
    args = ap.parse_args(argv)
    rows = []
    with Browser(scripts=False, timeout=60) as chromium:
        for ds in args.datasets.split(","):
            files = sorted({p for pat in PATTERNS[ds] for p in args.data.glob(pat)})
            for path in files:
                raw = path.read_bytes()
                if path.suffix == ".gz":
                    raw = gzip.decompress(raw)
                before, now = words(raw, CHANGES[args.change]), words(raw, NOW)
                if before == now and not args.all:
                    rows.append((ds, str(path), None, None, None))
                    continue
                text, _ = decode_html(raw, None)
                try:
                    shown = chromium.shown_text(text).split()
                except Exception as exc:  # noqa: BLE001 - a page Chromium cannot load is said, not fatal
                    print(f"{path}: Chromium: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                same = before == now
                rows.append((ds, str(path), None if same else f1(before, shown), None if same else f1(now, shown),
                             f1(now, shown)))
    print("| dataset | pages | walk differs | F1 against Chromium, before | now | closer | farther |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for ds in [*args.datasets.split(","), "all"]:
        mine = [r for r in rows if ds in ("all", r[0])]
        diff = [r for r in mine if r[2] is not None]
        if not diff:
            print(f"| {ds} | {len(mine)} | 0 | | | | |")
            continue
        b = sum(r[2] for r in diff) / len(diff)
        n = sum(r[3] for r in diff) / len(diff)
        closer = sum(r[3] > r[2] + 0.005 for r in diff)
        farther = sum(r[3] < r[2] - 0.005 for r in diff)
        print(f"| {ds} | {len(mine)} | {len(diff)} | {b:.3f} | {n:.3f} | {closer} | {farther} |")
    if args.all:
        print("\n| dataset | pages | word F1 of the walk against Chromium: median | mean |")
        print("|---|---:|---:|---:|")
        for ds in [*args.datasets.split(","), "all"]:
            got = sorted(r[4] for r in rows if ds in ("all", r[0]) and r[4] is not None)
            if got:
                print(f"| {ds} | {len(got)} | {got[len(got) // 2]:.3f} | {sum(got) / len(got):.3f} |")
        print("\nfarthest off:", ", ".join(f"{Path(r[1]).name} {r[4]:.3f}"
                                          for r in sorted((r for r in rows if r[4] is not None),
                                                          key=lambda r: r[4])[:10]))
    if args.out:
        with open(args.out, "w") as f:
            f.write("dataset,page,before,now,now_all\n")
            for r in rows:
                if r[2] is not None or r[4] is not None:
                    cells = ["" if v is None else f"{v:.4f}" for v in r[2:]]
                    f.write(f"{r[0]},{r[1]},{','.join(cells)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
