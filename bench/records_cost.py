"""Extraction cost per page: hwnoise on a CPU beside the input an LLM call would need.

For every page of a dataset folder: the size of the page as the flat JSON an LLM is given in
NEXT-EVAL's best setting (``{XPath: text}`` for every element holding text, XPaths in the
browser's form), counted as characters, as whitespace-separated words, and as estimated tokens
(characters / 4, the usual rule of thumb for English text with GPT-style tokenisers; no
tokeniser is downloaded and no network is used); and the wall time hwnoise needs for the page
with a model (walk, features, prediction, records: ``extract_records``, what ``hwnoise extract
--records`` runs per page, with the model's region scorer if it has one), on this machine's CPU,
beside ``trafilatura.extract`` timed on the same page right after it (the ratio of the two, page
by page, is what a loaded machine moves least; the model's stacked extractors include
trafilatura, so the ratio is above 1 by construction). Usage::

    python bench/records_cost.py DATASET [--model records|MODEL_DIR] [--limit N]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from hwnoise.dataset import Dataset
from hwnoise.extractors.model import extract_records, load_model
from hwnoise.extractors.records import row_xpaths
from hwnoise.features.walk import walk_page


def flat_json(html: bytes) -> str:
    """The page as NEXT-EVAL's flat JSON: each text-holding element's XPath -> its own text."""
    walk = walk_page(html)
    xp = row_xpaths(html, len(walk.rows))
    flat: dict[str, str] = {}
    for node, text in walk.segments:
        key = xp[node]
        flat[key] = f"{flat[key]} {text}" if key in flat else text
    return json.dumps(flat, ensure_ascii=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--model", default="records", help="a saved model or a shipped one (default: records)")
    ap.add_argument("--limit", type=int, default=None)
    a = ap.parse_args()
    import trafilatura

    model = load_model(a.model)
    chars, words, secs, traf = [], [], [], []
    for k, page in enumerate(Dataset(a.dataset).pages()):
        if a.limit is not None and k >= a.limit:
            break
        html = page.read_html()
        js = flat_json(html)
        chars.append(len(js))
        words.append(len(js.split()))
        t0 = time.perf_counter()
        extract_records(model, html, http_charset=page.http_charset, page=page.id)
        secs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        trafilatura.extract(html)
        traf.append(time.perf_counter() - t0)
    c, w, s, t = map(np.asarray, (chars, words, secs, traf))
    print(json.dumps({"pages": len(c), "flat_json_chars_median": float(np.median(c)),
                      "flat_json_chars_mean": float(c.mean()),
                      "est_tokens_median": float(np.median(c) / 4), "est_tokens_mean": float(c.mean() / 4),
                      "words_median": float(np.median(w)), "words_mean": float(w.mean()),
                      "hwnoise_seconds_median": float(np.median(s)), "hwnoise_seconds_mean": float(s.mean()),
                      "trafilatura_seconds_median": float(np.median(t)), "trafilatura_seconds_mean": float(t.mean()),
                      "hwnoise_over_trafilatura_median": float(np.median(s / np.maximum(t, 1e-9)))},
                     indent=1))


if __name__ == "__main__":
    main()
