"""The rendered mode: the same elements as the walker, real headless Chromium, apply_render."""
from __future__ import annotations

import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lxml import etree

from hwnoise.dataset import Dataset
from hwnoise.features.render import (RENDER_COLUMNS, Browser, RenderError, chromium_available,
                                     read_render, render_dataset, render_page, tagged_html)
from hwnoise.features.elements import shown_elements
from hwnoise.features.rendered import RENDER_FEATURES, apply_render, rendered_walk
from hwnoise.features.walk import walk_page
from script_fixtures import MARKO, SCRIPT_SHELL, STREAMED, words
from test_walk import CASCADE, CASCADE_SHOWN

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
needs_chromium = pytest.mark.skipif(not chromium_available(),
                                    reason="needs /usr/bin/chromium and playwright")

VARIED = {
    "plain": "<html><body><p>Hello <b>world</b></p><ul><li>a</li><li>b</li></ul></body></html>",
    "hidden": """<html><head><style>.ad{display:none} #side .promo{visibility:hidden}
        div > span.x {display:none} a[href^="http"] {display:none}</style></head>
        <body><div class=ad>ad</div><div id=side><p class=promo>promo</p><p>kept</p></div>
        <div><span class=x>x</span><span>y</span></div><a href="http://e.com">ext</a>
        <p hidden>h</p><p style="display: none">n</p><p style="color:red">r</p>
        <noscript><p>ns</p></noscript><script>var a=1;</script><iframe src=x></iframe>
        <template><p>t</p></template></body></html>""",
    "tables": "<body><table><tr><td>a<td>b<tr><td><p>c<p>d</table><dl><dt>x<dd>y</dl></body>",
    "no_body": "<p>just a fragment</p><div>two</div>",
    "stray_html": "<html><body><p>one</p></body></html><html><body><p>two</p><div>3</div></body></html>",
    "deep": "<html><body>" + "<div>" * 600 + "deep text" + "</div>" * 600 + "<p>after</p></body></html>",
    "empty": "",
    "comments": "<body><!-- c --><p>a<!-- b -->c</p><?pi x?><svg><rect/></svg></body>",
    "scripts": SCRIPT_SHELL,  # walked with scripting off: <noscript> shown
    "cascade": CASCADE,  # rules of different selectors weighed by importance, specificity, order
}


@pytest.mark.parametrize("name", sorted(VARIED))
def test_shown_elements_are_the_walkers_rows(name):
    html = VARIED[name]
    rows = walk_page(html).rows
    view = shown_elements(html)
    els, parents = view.elements, view.parents
    assert [e.tag for e in els] == rows["tag"].tolist()
    assert parents == rows["parent"].tolist()
    text, tags = tagged_html(html)
    assert tags == rows["tag"].tolist()
    assert text.count('data-hwnode="') == len(rows)


@pytest.mark.datasets
@pytest.mark.skipif(not (SHARED / "big9").is_dir(), reason="needs ../shared/datasets/big9")
def test_shown_elements_match_walk_on_real_pages():
    files = sorted((SHARED / "big9").glob("*/html/*"))[::23]
    assert files
    for f in files:
        data = f.read_bytes()
        rows = walk_page(data).rows
        els = shown_elements(data).elements
        assert [e.tag for e in els] == rows["tag"].tolist(), f


def _fake_render(rows: pd.DataFrame, hide: list[int]) -> pd.DataFrame:
    n = len(rows)
    r = pd.DataFrame({"page": "", "node": np.arange(n), "tag": rows["tag"].to_numpy(),
                      "display": "block", "visibility": "visible", "opacity": 1.0,
                      "font_size": 16.0, "font_weight": 400.0, "color": "rgb(0, 0, 0)",
                      "x": 8.0, "y": 8.0, "width": 100.0, "height": 20.0})
    r.loc[hide, "display"] = "none"
    return r


def test_apply_render_equals_the_walk_of_the_page_without_the_hidden_elements():
    html = """<html><body><div id=top><a href=/>Home</a> <a href=/n>News</a> menu text</div>
      <div class=main><h1>Big title about cats</h1><p>Cats sleep a lot. <a href=/c>More</a> tail</p>
      <p>Second <b>para</b> about cats and dogs</p><div class=rel><ul><li><a href=/1>cats 1</a></li>
      <li><a href=/2>two</a> dogs</li></ul></div></div><div id=foot>Footer (c) cats</div></body></html>"""
    view = shown_elements(html)
    root, els = view.root, view.elements
    hide = [i for i, e in enumerate(els) if e.get("id") == "top" or e.get("class") == "rel"]
    walk = walk_page(html, ["cats"], own_terms=["dogs"])
    base = walk.rows
    out = apply_render(base, _fake_render(base, hide), walk_node=True)
    assert out["walk_node"].tolist() == [i for i in range(len(base)) if i not in set(hide)
                                         and not any(base["xpath"][i].startswith(base["xpath"][h] + "/")
                                                     for h in hide)]
    out = out.drop(columns="walk_node")
    for i in hide:
        els[i].set("hidden", "")
    expected_walk = walk_page(etree.tostring(root, method="html", encoding="unicode"), ["cats"],
                              own_terms=["dogs"])
    expected = expected_walk.rows
    shown, kept = rendered_walk(walk, _fake_render(base, hide))
    assert shown.segments == expected_walk.segments
    assert base["tag"].to_numpy()[kept].tolist() == expected["tag"].tolist()
    assert np.allclose(shown.rows["ctd"], expected["ctd"]) and (shown.last == expected_walk.last).all()
    assert out.attrs["render_dropped"] == len(base) - len(expected) > 0
    for col in expected.columns:
        a, b = out[col].to_numpy(), expected[col].to_numpy()
        if a.dtype.kind in "fiu":
            np.testing.assert_allclose(a.astype(float), b.astype(float), atol=1e-9, err_msg=col)
        else:
            assert a.tolist() == b.tolist(), col
    assert set(RENDER_FEATURES) <= set(out.columns)


def test_apply_render_keeps_pages_without_render_and_rejects_a_misjoin():
    rows = walk_page(VARIED["plain"]).rows.assign(page="p1")
    kept_all = apply_render(rows, _fake_render(rows, [1]).assign(page="p1"), drop=False)
    assert len(kept_all) == len(rows) and kept_all.attrs["render_dropped"] == 0
    out = apply_render(rows, None)
    assert len(out) == len(rows) and (out["font_size_rel"] == 1).all()
    bad = _fake_render(rows, [1]).assign(page="p1")
    bad.loc[2, "tag"] = "table"  # a render of another tree: ignored, with a warning
    with pytest.warns(UserWarning, match="does not match"):
        out = apply_render(rows, bad)
    assert len(out) == len(rows)


# -- real Chromium --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    if not chromium_available():
        pytest.skip("needs /usr/bin/chromium and playwright")
    with Browser(timeout=20) as b:
        yield b


HIDDEN_PAGE = """<html><head><style>
  .ad { display: none }
  @supports (display: grid) { .promo { display: none } }
  .skip { position: absolute; left: -10000px }
</style></head><body>
<div class="ad">Buy cheap watches now</div>
<div class="promo">Subscribe to our newsletter today</div>
<a class="skip" href="#main">Skip to content</a>
<div style="visibility: hidden">Sponsored links here</div>
<div id="main"><h1>The article title</h1>
<p>The article body tells the reader about rendering pages in a browser.</p></div>
</body></html>"""


@needs_chromium
def test_noise_hidden_by_style_rules_and_inline_style_is_dropped(browser):
    base = walk_page(HIDDEN_PAGE).rows
    r = render_page(HIDDEN_PAGE, browser=browser)
    assert r["node"].tolist() == base["node"].tolist() and r["tag"].tolist() == base["tag"].tolist()
    promo = base.index[base["text"].str.contains("newsletter")][0]
    assert r.loc[promo, "display"] == "none"  # the @supports rule only the browser applies
    out = apply_render(base, r)
    text = " ".join(out["text"])
    for noise in ("watches", "newsletter", "Skip", "Sponsored"):
        assert noise not in text
    assert "article title" in text and "rendering pages in a browser" in text


@needs_chromium
def test_known_boxes_fonts_and_colours(browser):
    html = """<html><body style="margin:0">
      <div style="position:absolute; left:100px; top:50px; width:200px; height:30px">box</div>
      <p style="position:absolute; top:200px; left:10px; margin:0; font-size:24px;
                font-weight:bold; color:#ff0000">big red</p></body></html>"""
    r = render_page(html, browser=browser).set_index("tag")
    assert list(r.loc["div", ["x", "y", "width", "height"]]) == [100, 50, 200, 30]
    assert r.loc["p", "x"] == 10 and r.loc["p", "y"] == 200
    assert r.loc["p", "font_size"] == 24 and r.loc["p", "font_weight"] == 700
    assert r.loc["p", "color"] == "rgb(255, 0, 0)"
    assert r.loc["body", "width"] == 1366  # the 1366×768 viewport, no scroll bar
    feats = apply_render(walk_page(html).rows, render_page(html, browser=browser))
    p = feats[feats["tag"] == "p"].iloc[0]
    assert p["font_size_rel"] == pytest.approx(24 / 16) or p["font_size_rel"] == pytest.approx(1.0)
    assert p["color_luminance"] == pytest.approx(0.2126, abs=1e-4)
    assert feats[feats["tag"] == "div"].iloc[0]["box_x"] == pytest.approx(100 / 1366)


@needs_chromium
def test_a_page_built_by_its_scripts_renders_as_the_walk_shows_it(browser):
    """Chromium without scripts (``hwnoise render``'s default) shows <noscript> content, as the
    walk does for a page that shows nothing else: the same rows, laid out."""
    base = walk_page(SCRIPT_SHELL).rows
    r = render_page(SCRIPT_SHELL, browser=browser)
    assert r["node"].tolist() == base["node"].tolist() and r["tag"].tolist() == base["tag"].tolist()
    h1 = base.index[base["tag"] == "h1"][0]
    assert r.loc[h1, "display"] != "none" and r.loc[h1, "height"] > 0 and r.loc[h1, "width"] > 0
    out = apply_render(base, r)
    assert "broke document reviews" in " ".join(out["text"])


@needs_chromium
def test_the_cascade_across_selectors_shows_what_chromium_shows():
    """The walk's words of ``test_walk.CASCADE`` (rules of different selectors on one element:
    importance, specificity, order; Bootstrap's and Tailwind's width classes) are the words
    Chromium shows (``innerText``, scripts off, the walk's 1,366 x 768 screen)."""
    with Browser(scripts=False, timeout=20) as chromium:
        shown = chromium.shown_text(CASCADE).split()
    assert shown == CASCADE_SHOWN.split() == words(walk_page(CASCADE))


@needs_chromium
def test_streamed_content_is_placed_as_chromium_places_it_by_running_the_scripts():
    """The walk's static placement of React's streamed segments (``features.streamed``) gives the
    words, in order, of the DOM Chromium builds by running the page's scripts."""
    with Browser(scripts=True, timeout=20) as chromium:
        dom = chromium.dom(STREAMED)
    assert 'id="S:0"' not in dom and "Orndorff" in dom  # the scripts ran
    assert words(walk_page(STREAMED)) == words(walk_page(dom))


@needs_chromium
def test_marko_fragments_are_placed_as_chromium_places_them_by_running_the_scripts():
    with Browser(scripts=True, timeout=20) as chromium:
        dom = chromium.dom(MARKO)
    assert 'id="afshop1"' in dom and "afshopph1" not in dom  # the scripts ran: placeholders gone
    assert words(walk_page(MARKO)) == words(walk_page(dom))


@needs_chromium
@pytest.mark.datasets
@pytest.mark.skipif(not (SHARED / "wcxb").is_dir(), reason="needs ../shared/datasets/wcxb")
@pytest.mark.parametrize("name, parts, least", [("0658", 43, 3_000), ("0614", 13, 1_400)])
def test_real_marko_pages_read_as_chromium_shows_them(name, parts, least):
    """WCXB's 0658 (eBay's browse page for collectibles, Marko's async fragments, runtime
    ``$afbrwweb``): without the scripts 43 fragments, the whole item list among them, stay
    ``display:none`` and the walk shows the header alone; 0614 (an eBay item page, runtime
    ``$afM_96613636``). Placed statically, every word comes where Chromium puts it."""
    import gzip

    raw = gzip.decompress((SHARED / "wcxb" / "dev" / "html" / f"{name}.html.gz").read_bytes())
    with Browser(scripts=True, timeout=60) as chromium:
        dom = chromium.dom(raw.decode("utf-8"))
    walk = walk_page(raw)
    ours = words(walk)
    assert walk.streamed == parts and len(ours) > least and ours == words(walk_page(dom))


@needs_chromium
@pytest.mark.datasets
@pytest.mark.skipif(not (SHARED / "wcxb").is_dir(), reason="needs ../shared/datasets/wcxb")
def test_a_real_streamed_shop_page_reads_as_chromium_shows_it():
    """WCXB's 2923 (a shop's sofas, React streaming): 21 segments, 50,000 characters that stay
    hidden without the scripts; placed statically, every word comes where Chromium puts it."""
    import gzip

    raw = gzip.decompress((SHARED / "wcxb" / "dev" / "html" / "2923.html.gz").read_bytes())
    with Browser(scripts=True, timeout=60) as chromium:
        dom = chromium.dom(raw.decode("utf-8"))
    ours = words(walk_page(raw))
    assert len(ours) > 10_000 and ours == words(walk_page(dom))


class _Counting(BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):  # noqa: N802
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"body { display: none }")

    def log_message(self, *a):
        pass


@needs_chromium
def test_no_request_leaves_the_machine():
    _Counting.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    html = f"""<html><head><link rel=stylesheet href="{base}/style.css">
      <script src="{base}/lib.js"></script></head><body>
      <img src="{base}/img.png"><iframe src="{base}/frame.html"></iframe>
      <p style="background:url({base}/bg.png)">text</p>
      <script>fetch("{base}/api"); new Image().src = "{base}/beacon.gif";</script></body></html>"""
    try:
        with Browser(scripts=True, timeout=20) as b:
            r = render_page(html, browser=b)
            refused = list(b.requests)
    finally:
        server.shutdown()
        server.server_close()
    assert _Counting.hits == []
    assert {f"{base}/style.css", f"{base}/img.png", f"{base}/lib.js"} <= set(refused)
    assert r.set_index("tag").loc["p", "display"] == "block"  # the remote style sheet never applied


@needs_chromium
def test_a_killed_browser_leaves_nothing_in_the_temp_folder(tmp_path, monkeypatch):
    """Chromium's singleton socket folder (org.chromium.Chromium.*) goes with the profile."""
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="hw-"))  # short: a socket path has at most 107 bytes
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    with Browser(timeout=20) as b:
        assert len(render_page(HIDDEN_PAGE, browser=b))
        assert any(p.name.startswith("org.chromium.Chromium.") for p in tmp.iterdir())  # its socket
    assert list(tmp.iterdir()) == []
    tmp.rmdir()


def _dataset(tmp_path: Path, pages: dict[str, str]) -> Dataset:
    ds = Dataset.create(tmp_path / "ds", name="ds", source="test")
    for name, html in pages.items():
        sub = ds.add_submission({"url": f"http://example.test/{name}", "fields": []})
        ds.write_page(sub["id"], html.encode("utf-8"))
    return ds


_WITHOUT_PLAYWRIGHT = ("import sys; sys.modules['playwright'] = None; "  # as if it were not installed
                       "from hwnoise.cli import main; sys.exit(main(sys.argv[1:]))")


@pytest.mark.parametrize("missing", ["chromium", "playwright"])
def test_render_without_a_browser_is_one_line_and_records_no_page_as_failed(tmp_path, missing):
    """Without Chromium or Playwright every page was 'failed' (one line each) and written to
    render_failed.jsonl, so that the rerun after the install rendered none: '0 rendered, 0 failed,
    2 already done'. It is one line before any page, and the rerun renders them."""
    import subprocess
    import sys

    ds = _dataset(tmp_path, {"plain": VARIED["plain"], "tables": VARIED["tables"]})
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    if missing == "chromium":
        env["HWNOISE_CHROMIUM"] = str(tmp_path / "no-chromium")
        argv = [sys.executable, "-m", "hwnoise.cli"]
    else:
        argv = [sys.executable, "-c", _WITHOUT_PLAYWRIGHT]
    res = subprocess.run([*argv, "render", str(ds.path), "--workers", "1"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("hwnoise: error: ")
    assert ("no-chromium: no Chromium there" if missing == "chromium" else "pip install 'hwnoise[render]'") in res.stderr
    assert not (ds.path / "render_failed.jsonl").exists() and not (ds.path / "render.parquet").exists()
    if chromium_available():  # installed now: the rerun renders every page
        assert render_dataset(ds, workers=1, progress=False)["rendered"] == 2


@needs_chromium
def test_a_page_that_never_finishes_is_recorded_and_the_run_goes_on(tmp_path):
    pages = {"a": VARIED["plain"],
             "loop": "<html><body><p>hang</p><script>while (true) {}</script></body></html>",
             "b": VARIED["tables"]}
    ds = _dataset(tmp_path, pages)
    summary = render_dataset(ds, workers=2, scripts=True, timeout=3, progress=False)
    assert summary["rendered"] == 2 and summary["failed"] == 1
    failed = [json.loads(line) for line in (ds.path / "render_failed.jsonl").read_text().splitlines()]
    loop_id = [p.id for p in ds.pages() if b"while" in p.read_html()][0]
    assert [f["page"] for f in failed] == [loop_id] and "time limit" in failed[0]["error"]
    r = read_render(ds)
    assert set(r["page"]) == {p.id for p in ds.pages()} - {loop_id}
    # a rerun leaves the failed page alone unless asked
    again = render_dataset(ds, workers=1, scripts=True, timeout=3, progress=False)
    assert again["rendered"] == 0 and again["skipped"] == 3


@needs_chromium
def test_the_render_pool_takes_the_local_pools_start_method(tmp_path, monkeypatch):
    """render's worker processes start as the local pool's (``scheduler.start_method``): under
    HWNOISE_START_METHOD=spawn they start afresh and render the same rows as forked ones."""
    pages = {"hidden": HIDDEN_PAGE, "tables": VARIED["tables"], "plain": VARIED["plain"]}
    forked, spawned = _dataset(tmp_path / "fork", pages), _dataset(tmp_path / "spawn", pages)
    assert render_dataset(forked, workers=2, progress=False)["rendered"] == 3
    monkeypatch.setenv("HWNOISE_START_METHOD", "spawn")
    import multiprocessing

    made = []
    real = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda method=None: made.append(method) or real(method))
    assert render_dataset(spawned, workers=2, progress=False)["rendered"] == 3
    assert made == ["spawn"]
    key = ["page", "node"]
    a = read_render(forked).sort_values(key).reset_index(drop=True)
    b = read_render(spawned).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


@needs_chromium
def test_rerun_renders_nothing_new_and_the_join_is_exact(tmp_path):
    ds = _dataset(tmp_path, {"hidden": HIDDEN_PAGE, "tables": VARIED["tables"],
                             "deep": VARIED["deep"]})
    from hwnoise.commands import render as command

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["render", str(ds.path), "--workers", "1", "--no-progress"])
    assert args.func(args) == 0
    first = read_render(ds)
    stamp = (ds.path / "render.parquet").stat().st_mtime_ns
    summary = render_dataset(ds, workers=1, progress=False)
    assert summary == {**summary, "rendered": 0, "failed": 0, "skipped": 3}
    assert (ds.path / "render.parquet").stat().st_mtime_ns == stamp
    assert list(first.columns) == RENDER_COLUMNS
    for page in ds.pages():
        rows = walk_page(page.read_html(), http_charset=page.http_charset).rows
        mine = first[first["page"] == page.id].sort_values("node")
        joined = rows.merge(mine, on="node", how="left", suffixes=("", "_r"))
        assert len(mine) == len(rows)
        assert (joined["tag"] == joined["tag_r"]).all()
        assert joined["display"].ne("").all()  # every element was found in the browser


@needs_chromium
def test_render_takes_several_datasets_as_features_does_and_checks_them_all_first(tmp_path, capsys):
    """``hwnoise features DIR/*`` took every dataset and ``hwnoise render DIR/*`` refused all but
    one ("unrecognized arguments"). It takes them all, each into its own render.parquet; a target
    that is no dataset is named before any page of the others is rendered."""
    from hwnoise.cli import main

    one = _dataset(tmp_path / "one", {"plain": VARIED["plain"]})
    two = _dataset(tmp_path / "two", {"hidden": HIDDEN_PAGE, "tables": VARIED["tables"]})
    notes = tmp_path / "notes"
    notes.mkdir()
    assert main(["render", str(one.path), str(notes), str(two.path), "--workers", "1", "--no-progress"]) == 1
    assert "notes: not a dataset folder" in capsys.readouterr().err
    assert not (one.path / "render.parquet").exists() and not (two.path / "render.parquet").exists()
    assert main(["render", str(one.path), str(two.path), "--workers", "1", "--no-progress"]) == 0
    assert set(read_render(one)["page"]) == {p.id for p in one.pages()}
    assert set(read_render(two)["page"]) == {p.id for p in two.pages()}


def test_apply_render_on_a_feature_table_of_several_pages():
    one = walk_page(VARIED["hidden"]).rows.assign(page="a")
    two = walk_page(VARIED["tables"]).rows.assign(page="b")
    render = pd.concat([_fake_render(one, [2]).assign(page="a"), _fake_render(two, [1]).assign(page="b")])
    both = apply_render(pd.concat([one, two], ignore_index=True), render)
    for rows, page, hide in ((one, "a", [2]), (two, "b", [1])):
        alone = apply_render(rows, _fake_render(rows, hide).assign(page=page))
        got = both[both["page"] == page].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, alone, check_dtype=False)
    assert both.attrs["render_dropped"] > 0 and list(both.columns[:len(one.columns)]) == list(one.columns)


@needs_chromium
def test_a_page_taken_by_a_worker_killed_before_it_said_so_is_recorded_and_the_run_ends(tmp_path):
    """A worker killed between taking a page and saying so (its message still in its buffer): the
    run waited for that page for ever. The page is taken out of the queue here as such a worker
    would, the real workers render the others, and the run records it as failed and ends."""
    from hwnoise.features.render import _Workers

    ds = _dataset(tmp_path, {"a": VARIED["plain"], "b": VARIED["tables"], "c": HIDDEN_PAGE})
    jobs = [(p.id, str(p.html_path), None) for p in ds.pages()]
    taken = []
    pool = _Workers(jobs, 1, False, 20, True, lambda *a: taken.append(a))
    lost = pool.tasks.get(timeout=30)  # the killed worker's page
    try:
        while pool.busy():
            pool.receive()
    finally:
        pool.shutdown()
    assert sorted(t[0] for t in taken) == sorted(j[0] for j in jobs)
    failed = [t for t in taken if t[2] is not None]
    assert [t[0] for t in failed] == [lost[0]] and "killed before it said so" in failed[0][2]
    assert all(t[1] is not None and len(t[1]) for t in taken if t[0] != lost[0])


def _wait_until(done, bound: float = 120.0, what=lambda: "") -> None:
    """Wait for ``done()``; ``bound`` seconds only stop a hang (``what()`` then says what is left)."""
    import time

    deadline = time.monotonic() + bound
    while not done():
        assert time.monotonic() < deadline, f"waited too long {what()}"
        time.sleep(0.05)


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is alive (zombies are not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


@needs_chromium
def test_a_render_worker_killed_midway_leaves_no_chromium_running(tmp_path):
    """A worker killed by a signal (the OOM killer's SIGKILL) ran no exit handler, and its Chromium,
    in a session of its own, went on running: the run ends it and removes its profile."""
    import signal

    from hwnoise.features.render import _Workers

    loop = "<html><body><p>hang</p><script>while (true) {}</script></body></html>"
    ds = _dataset(tmp_path, {"a": loop, "b": VARIED["plain"]})
    jobs = [(p.id, str(p.html_path), None) for p in ds.pages()]
    loop_id = [p.id for p in ds.pages() if b"while" in p.read_html()][0]
    jobs.sort(key=lambda j: j[0] != loop_id)  # the page that hangs first
    taken = []
    pool = _Workers(jobs, 1, True, 120, True, lambda *a: taken.append(a))
    try:
        while not pool.current or not pool.browsers:  # the worker is on the page, its browser known
            pool.receive()
        (worker, (chromium, profile)), = pool.browsers.items()
        assert _group_alive(chromium) and Path(profile).is_dir()
        os.kill(worker, signal.SIGKILL)
        while pool.busy():
            pool.receive()
    finally:
        pool.shutdown()
    assert not _group_alive(chromium) and not Path(profile).exists()
    failed = [t for t in taken if t[2] is not None]
    assert [t[0] for t in failed] == [loop_id] and "render worker died" in failed[0][2]
    assert [t[0] for t in taken if t[2] is None] == [j[0] for j in jobs if j[0] != loop_id]
    assert pool.browsers == {}  # the second worker ended its own browser


@needs_chromium
def test_a_pages_scripts_end_with_it_and_never_touch_the_next_page():
    """With scripts on, one browser renders page after page: a page's timers, and what it changed
    in the window (a patched ``getBoundingClientRect``), went on in the next pages' documents and
    hid their paragraphs (rows recorded display none, dropped as hidden) or moved their boxes."""
    hostile = """<html><body><p>first</p><script>
      setInterval(() => { for (const e of document.querySelectorAll('p')) e.style.display = 'none' }, 1);
      Element.prototype.getBoundingClientRect = () => ({left: 5, top: 5, width: 0, height: 0});
    </script></body></html>"""
    plain = "<html><body><p>second page</p></body></html>"
    with Browser(scripts=True, timeout=30) as b:
        alone = render_page(plain, browser=b)
        assert render_page(hostile, browser=b).set_index("tag").loc["p", "display"] == "none"
        after = render_page(plain, browser=b)
    pd.testing.assert_frame_equal(after, alone)
    assert after.set_index("tag").loc["p", "display"] == "block" and after["width"].gt(0).all()


#: a page whose scripts make the browser report, for #odd, the numbers JSON cannot carry
ODD_NUMBERS = """<html><body><p id="odd">odd</p><p>plain</p><script>
  const style = getComputedStyle, box = Element.prototype.getBoundingClientRect;
  window.getComputedStyle = e => e.id !== 'odd' ? style(e) : {display: 'block', visibility: 'visible',
    opacity: '-0', fontSize: 'large', fontWeight: '700', color: 'rgb(1, 2, 3)'};
  Element.prototype.getBoundingClientRect = function () {
    return this.id !== 'odd' ? box.call(this) : {left: -Infinity, top: Infinity, width: -0, height: NaN};
  };
</script></body></html>"""


@needs_chromium
def test_numbers_json_cannot_carry_reach_the_rows_as_the_browser_gave_them():
    """The rows come from the browser as one JSON string; NaN, +-Infinity and -0 stay what they
    were (JSON.stringify alone makes them null and 0: a lost box, an opacity of 0)."""
    with Browser(scripts=True, timeout=30) as b:
        r = render_page(ODD_NUMBERS, browser=b)
    rows = walk_page(ODD_NUMBERS).rows
    assert r["node"].tolist() == rows["node"].tolist() and r["tag"].tolist() == rows["tag"].tolist()
    odd = r.loc[rows.index[rows["text"].str.strip() == "odd"][0]]
    assert odd["display"] == "block" and odd["color"] == "rgb(1, 2, 3)" and odd["font_weight"] == 700
    assert odd["opacity"] == 0 and np.signbit(odd["opacity"])
    assert np.isnan(odd["font_size"]) and np.isnan(odd["height"])
    assert odd["x"] == -np.inf and odd["y"] == np.inf
    assert odd["width"] == 0 and np.signbit(odd["width"])
    plain = r[(r["tag"] == "p") & (r.index != odd.name)].iloc[0]
    assert plain["opacity"] == 1 and plain["font_size"] == 16 and plain["height"] > 0
    assert not np.signbit(plain["x"]) and plain["width"] > 0
    assert list(r.dtypes) == [object, np.int64, object, object, object] + [np.float64] * 3 + [object] + [np.float64] * 4


@needs_chromium
def test_a_page_whose_scripts_remove_every_element_keeps_its_rows_as_lost():
    """A node the browser lost keeps its row (display "", no box); a page whose scripts removed
    its whole document ended in 'UnboundLocalError: cannot access local variable k'."""
    wipe = "<html><body><p>gone</p><script>document.documentElement.remove()</script></body></html>"
    with Browser(scripts=True, timeout=30) as b:
        r = render_page(wipe, browser=b)
    rows = walk_page(wipe).rows
    assert r["node"].tolist() == rows["node"].tolist() and r["tag"].tolist() == rows["tag"].tolist()
    assert r["display"].eq("").all() and r["width"].isna().all()


@needs_chromium
@pytest.mark.parametrize("script", ["location.reload()", "addEventListener('load', () => location.reload())"])
def test_a_page_that_reloads_itself_is_refused_as_navigated_and_the_browser_goes_on(script):
    """A reload stays at about:blank, so the URL check missed it: the page was stored with every
    row lost (or ended in a cryptic error); it is a navigation, and the next page renders."""
    html = f"<html><body><p>once</p><script>{script}</script></body></html>"
    with Browser(scripts=True, timeout=30) as b:
        with pytest.raises(RenderError, match=r"^the page navigated away \(it reloaded itself\)$"):
            render_page(html, browser=b)
        assert render_page(VARIED["plain"], browser=b)["display"].ne("").all()


@needs_chromium
def test_a_browser_killed_between_pages_is_replaced_for_the_next_page(tmp_path):
    """Chromium killed after a page was read (the OOM killer, or the time limit's kill landing as the
    read returned): the next page went to the dead browser and was recorded as failed ('browser
    failed: TargetClosedError'); a fresh browser renders it."""
    import signal

    starts = []
    with Browser(timeout=30, on_start=lambda pid, profile: starts.append((pid, profile))) as b:
        first = render_page(VARIED["plain"], browser=b)
        os.killpg(starts[0][0], signal.SIGKILL)
        _wait_until(lambda: b._proc.poll() is not None)  # dead, its threads too (then it is reaped)
        assert render_page(VARIED["plain"], browser=b).equals(first)
        assert len(starts) == 2 and not _group_alive(starts[0][0]) and not Path(starts[0][1]).exists()


def _processes_naming(folder: Path) -> list[int]:
    """The live processes whose command line names ``folder``: a run's own, its workers (forked,
    the same command line) and its Chromium processes (their profile is in it)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            state = (cmdline.parent / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and any(str(folder).encode() in a for a in argv):
            found.append(int(cmdline.parent.name))
    return found


@needs_chromium
@pytest.mark.parametrize("sig, workers, group", [("SIGINT", 1, False), ("SIGTERM", 1, False), ("SIGTERM", 2, False),
                                                 ("SIGINT", 2, True), ("SIGTERM", 2, True)])
def test_a_render_stopped_by_a_signal_ends_its_browsers_and_keeps_its_rows(sig, workers, group):
    """``hwnoise render`` stopped mid-run: Ctrl-C ended its browsers and kept the rows rendered;
    SIGTERM (kill, timeout, a batch system) killed it at once: its Chromium (a session of its own)
    went on running the page's endless script, its profile stayed, the rows rendered were lost, and
    with --workers 2 the workers went on rendering without it. Ctrl-C in a terminal (SIGINT to the
    process group, ``group``) printed each worker's KeyboardInterrupt traceback. SIGTERM to the
    process group left a ``playwright-artifacts-*`` folder in TMPDIR (Playwright's driver, ended by
    it, never removed its folder)."""
    import shutil
    import signal
    import subprocess
    import sys
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="hw-", dir="/tmp"))  # short: a socket path has at most 107 bytes
    pages = {f"p{i}": (VARIED["plain"] if i % 3 != 2 else
                       "<html><body><p>hang</p><script>while (true) {}</script></body></html>")
             for i in range(9)}
    ds = _dataset(home, pages)
    order = [p.id for p in ds.pages()]
    loops = {p.id for p in ds.pages() if b"while" in p.read_html()}
    with (home / "stderr").open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "render", str(ds.path), "--scripts",
                                 "--timeout", "3", "--workers", str(workers), "--no-progress"],
                                env={**os.environ, "TMPDIR": str(home)}, stderr=stderr, start_new_session=group,
                                # SIGINT as a terminal gives it, even when this run ignores it (nohup, CI)
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    failed_log = ds.path / "render_failed.jsonl"
    try:
        _wait_until(lambda: failed_log.exists() and failed_log.read_text().strip() or proc.poll() is not None)
        failed = [json.loads(line)["page"] for line in failed_log.read_text().splitlines()]
        assert proc.poll() is None  # mid-run
        if group:
            os.killpg(proc.pid, getattr(signal, sig))
        else:
            proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=300)
        _wait_until(lambda: not _processes_naming(home), bound=60,
                    what=lambda: [Path(f"/proc/{pid}/cmdline").read_bytes()[:300] for pid in _processes_naming(home)])
    finally:
        for pid in _processes_naming(home):  # what the run left, when the test fails
            os.kill(pid, 9)
        proc.kill()
    err = (home / "stderr").read_text()
    assert proc.returncode == (130 if sig == "SIGINT" else 143), err[-2000:]
    how = "interrupted" if sig == "SIGINT" else "terminated (SIGTERM)"
    assert f"hwnoise: {how}; what was written so far is kept." in err and "Traceback" not in err
    assert sorted(p.name for p in home.iterdir()) == ["ds", "stderr"]
    done = set(read_render(ds)["page"])
    if workers == 1:  # every page before the first one that failed was rendered, and is kept
        assert set(order[:order.index(failed[0])]) - loops <= done and done.isdisjoint(loops)
    assert done
    shutil.rmtree(home)


@needs_chromium
def test_cetd_render_renders_the_pages_render_parquet_lacks_in_one_browser_of_its_options(tmp_path):
    """cetd-render took no options: a page missing from render.parquet was rendered in a Chromium
    started for it alone, under a fixed 15 s limit; it takes render_missing, scripts and timeout
    as mss does, and one browser renders every page it lacks."""
    from hwnoise.extractors.cetd import make_rendered
    from hwnoise.features.columns import NOISE

    ds = _dataset(tmp_path, {"hidden": HIDDEN_PAGE, "plain": VARIED["plain"], "tables": VARIED["tables"]})
    method = make_rendered(timeout=60)
    try:
        for page in ds.pages():
            walk = walk_page(page.read_html(), http_charset=page.http_charset, keep_tree=True)
            labels = method.node_labels(page, walk)
            assert len(labels) == len(walk.rows)
            if b"newsletter" in page.read_html():  # what only the browser hides is noise
                promo = walk.rows.index[walk.rows["text"].str.contains("newsletter")][0]
                assert labels[promo] == NOISE
        assert method._browser.started == 1 and method._browser.timeout == 60
    finally:
        method.close()
    assert make_rendered(render_missing=False).node_labels(page, walk) is not None


@needs_chromium
def test_a_page_over_the_time_limit_is_said_to_be_so_not_to_have_navigated():
    """A limit reached while the blank document before the page loaded: the late news of that
    load was taken for the page reloading itself ('the page navigated away (it reloaded itself)')."""
    with Browser(timeout=0.001) as b:
        for _ in range(2):
            with pytest.raises(RenderError, match=r"^over the 0.001 s time limit$"):
                render_page(VARIED["plain"], browser=b)


@pytest.mark.parametrize("command", [["render"], ["render", "--force"], ["features"]])
def test_a_render_parquet_that_cannot_be_read_is_one_line_naming_it(tmp_path, capsys, command):
    """A render.parquet cut short or not Parquet ended 'hwnoise render' and 'hwnoise features' in a
    pyarrow traceback ('Parquet magic bytes not found in footer'); 'render --force' would only have
    said so when merging, its pages rendered and lost. One line names the file, before any work."""
    from hwnoise.cli import main

    ds = _dataset(tmp_path, {"a": VARIED["plain"]})
    (ds.path / "render.parquet").write_bytes(b"PAR1 cut short")
    before = sorted(p.name for p in ds.path.iterdir())
    assert main([command[0], str(ds.path), *command[1:], "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()  # features warns of the query first
    assert [line for line in err if "error" in line] == err[-1:]
    assert err[-1].startswith(f"hwnoise: error: {ds.path / 'render.parquet'}: cannot read the rendered rows (")
    assert err[-1].endswith(f"remove it and run 'hwnoise render {ds.path}' again")
    assert sorted(p.name for p in ds.path.iterdir()) == before


@needs_chromium
def test_a_browser_started_but_never_held_is_ended_with_its_profile():
    """Ctrl-C inside ``subprocess.Popen`` (a render worker starting a fresh browser as Ctrl-C
    reached the terminal's process group): Chromium ran, its process never held, so closing the
    browser left it running, in a session of its own, and its profile stayed. Seen in about one
    run of four of the SIGINT-to-the-group case above; here the handle is dropped as that Ctrl-C
    drops it."""
    with Browser(timeout=30) as b:
        render_page(VARIED["plain"], browser=b)
        chromium, profile = b._proc.pid, b._profile
        b._proc = None  # as Popen interrupted before it returned
    try:
        _wait_until(lambda: not _group_alive(chromium), bound=60)
        assert not Path(profile).exists()
    finally:
        _kill_group_if_alive(chromium)


def _kill_group_if_alive(pgid: int) -> None:
    """Clean up after a failed test: the Chromium group it started (zombies reaped by exit)."""
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
