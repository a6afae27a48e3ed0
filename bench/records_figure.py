"""A figure of one page with the records hwnoise found outlined, made in the rendered mode's
browser (Debian's Chromium driven by Playwright, no network: ``features.render.Browser``).

Usage::

    python bench/records_figure.py PAGE.html --model MODEL_DIR --out docs/figures/records.png
"""
from __future__ import annotations

import argparse
from pathlib import Path

from lxml import etree

from hwnoise.decode import decode_html
from hwnoise.extractors.model import label_with_model, load_model
from hwnoise.extractors.records import page_records
from hwnoise.features.render import Browser
from hwnoise.features.walk import parse_html

COLORS = ("#d62728", "#1f77b4")


def outlined(html: bytes, xpaths: list[list[str]]) -> str:
    """The page with an outline and a number on every record's elements."""
    root, _ = parse_html(decode_html(html)[0])
    body = root.find("body")
    for k, rec in enumerate(xpaths, 1):
        for x in rec:
            found = body.xpath("." + x[len("/body[1]"):]) if x.startswith("/body[1]") else []
            for el in found:
                color = COLORS[k % 2]
                el.set("style", (el.get("style") or "") + f";outline:3px solid {color};outline-offset:-2px")
                el.set("title", f"record {k}")
    return etree.tostring(root, method="html", encoding="unicode")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", type=Path)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--height", type=int, default=760)
    a = ap.parse_args()
    html = a.page.read_bytes()
    walk, labels = label_with_model(load_model(a.model), html)
    recs = page_records(html, walk, labels)
    with Browser() as b:
        b.screenshot(outlined(html, [r.xpaths for r in recs]), a.out, width=a.width, height=a.height)
    print(f"{len(recs)} records outlined -> {a.out}")


if __name__ == "__main__":
    main()
