"""Luo et al.'s maximum scoring subsequence (``mss``): the scorer and a rendered page's body."""
from __future__ import annotations

import numpy as np
import pytest

from hwnoise.dataset import Dataset
from hwnoise.extractors.mss import (make, max_scoring_subsequence, mss_select, segment_scores,
                                    text_segments)
from hwnoise.features.render import chromium_available, render_dataset, render_page
from hwnoise.text import text_scores

needs_chromium = pytest.mark.skipif(not chromium_available(),
                                    reason="needs /usr/bin/chromium and playwright")


def _brute(x):
    best = None
    for i in range(len(x)):
        s = 0.0
        for j in range(i, len(x)):
            s += x[j]
            if best is None or s > best:
                best = s
    return best


@pytest.mark.parametrize("seed", range(40))
def test_max_scoring_subsequence_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    x = rng.integers(-50, 50, n).astype(float) if seed % 2 else rng.normal(0, 10, n)
    if seed % 5 == 0:
        x = -np.abs(x) - 1  # all negative: the best run is the largest single value
    start, end, total = max_scoring_subsequence(x)
    assert 0 <= start < end <= n
    assert total == pytest.approx(_brute(list(x)))
    assert x[start:end].sum() == pytest.approx(total)


def test_max_scoring_subsequence_edges():
    assert max_scoring_subsequence([]) == (0, 0, 0.0)
    assert max_scoring_subsequence([5, -10, 3, 4, -1, 2, -20, 6]) == (2, 6, 8.0)


def test_segments_keep_inline_pieces_together_and_split_at_blocks():
    html = ("<body><p>One <a href=/x>linked</a> and <b>bold</b> text.</p><div>Two</div>"
            "Tail<ul><li>a</li><li>b</li></ul></body>")
    segs = text_segments(html, None)
    assert [s["text"] for s in segs] == ["One linked and bold text.", "Two", "Tail", "a", "b"]
    assert segs[0]["link_chars"] == len("linked")


PAGE = """<html><head><style>
  body { font: 16px serif; color: #222; margin: 0 }
  .nav a { font-size: 13px; color: #06c; margin-right: 8px }
  h1 { font-size: 32px; color: #000 }
  .side { font-size: 12px; color: #888 }
  .foot { font-size: 11px; color: #555 }
  .ad { display: none }
</style></head><body>
<div class="nav"><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a>
  <a href="/weather">Weather</a></div>
<div class="ad">Cheap flights to everywhere, book now while the offer lasts.</div>
<h1>Rivers rise after a week of rain</h1>
<div class="article">
<p>Rivers across the valley rose sharply on Tuesday after a week of heavy rain, and the
   authorities opened the flood gates near the old mill for the first time since 2009.</p>
<p>Farmers said the water reached the lower fields by noon. <a href="/maps">Maps</a> of the
   area show the meadows that flood first, and the roads that close with them.</p>
<p>Forecasters expect drier weather from Friday, though the ground will stay wet for weeks
   and the rivers will take days to fall back to their usual level.</p>
</div>
<div class="side"><p>Most read: celebrity news and other stories you may like today</p>
  <p>Sign up for our newsletter to get the headlines every morning</p></div>
<div class="foot"><a href="/about">About</a> <a href="/contact">Contact</a> (c) 2024 News</div>
</body></html>"""


@needs_chromium
def test_a_rendered_pages_body_is_found(tmp_path):
    segs = text_segments(PAGE, render_page(PAGE))
    assert not any("Cheap flights" in s["text"] for s in segs)  # hidden by the browser
    scores = segment_scores(segs)
    chosen = " ".join(s["text"] for s in mss_select(segs))
    assert "Rivers across the valley" in chosen and "usual level" in chosen
    assert "Most read" not in chosen and "Contact" not in chosen and "Weather" not in chosen
    assert scores[[i for i, s in enumerate(segs) if "Most read" in s["text"]][0]] < 0  # colour, size
    # the method reads render.parquet of the page's dataset
    ds = Dataset.create(tmp_path / "ds", name="ds", source="test")
    sub = ds.add_submission({"url": "http://news.test/rivers", "fields": []})
    ds.write_page(sub["id"], PAGE.encode())
    gold = ("Rivers across the valley rose sharply on Tuesday after a week of heavy rain, and the "
            "authorities opened the flood gates near the old mill for the first time since 2009. "
            "Farmers said the water reached the lower fields by noon. Maps of the area show the "
            "meadows that flood first, and the roads that close with them. Forecasters expect drier "
            "weather from Friday, though the ground will stay wet for weeks and the rivers will take "
            "days to fall back to their usual level.")
    assert render_dataset(ds, workers=1, progress=False)["rendered"] == 1
    method = make(render_missing=False)
    text = method.extract(ds.page(sub["id"]))
    assert text_scores(text, gold)["f1"] == pytest.approx(1.0)


@pytest.mark.parametrize("method", ["mss", "wang"])
@pytest.mark.parametrize("missing", ["chromium", "playwright"])
def test_a_method_that_renders_stops_in_one_line_without_a_browser(tmp_path, method, missing):
    """Without Chromium or Playwright, mss read every page with default styles and its figures went
    into the report as mss's (exit 0, no word), and wang said 'no training page with gold text
    and a rendered body'; both stop naming what to install, as cetd-render does."""
    import os
    import subprocess
    import sys

    ds = Dataset.create(tmp_path / "ds", name="ds", source="test")
    for i in range(4):
        sub = ds.add_submission({"url": f"http://news.test/rivers{i}", "fields": []})
        ds.write_page(sub["id"], PAGE.replace("Tuesday", f"day {i}").encode())
        ds.write_gold(sub["id"], f"Rivers rise after a week of rain\nRivers across the valley rose on day {i}")
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    if missing == "chromium":
        env["HWNOISE_CHROMIUM"] = str(tmp_path / "no-chromium")
        argv = [sys.executable, "-m", "hwnoise.cli"]
    else:  # as if Playwright were not installed
        argv = [sys.executable, "-c", "import sys; sys.modules['playwright'] = None; "
                "from hwnoise.cli import main; sys.exit(main(sys.argv[1:]))"]
    res = subprocess.run([*argv, "evaluate", str(ds.path), "--methods", method, "--scheduler", "sync",
                          "--out", str(tmp_path / "report")], env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 1 and res.stdout == ""
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("hwnoise: error: ")]
    assert len(errors) == 1 and "Traceback" not in res.stderr, res.stderr
    assert ("no-chromium: no Chromium there" if missing == "chromium" else "pip install 'hwnoise[render]'") in errors[0]
    assert not (tmp_path / "report" / "report.json").exists()
