"""The rendered mode end to end, as a user runs it: demo pages → `hwnoise render` →
`hwnoise features` → `hwnoise evaluate` with every method that needs or uses rendering."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

pytestmark = pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")


def _hw(*args: str, cwd=None) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", *args], capture_output=True, text=True, cwd=cwd)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


@pytest.fixture(scope="module")
def rendered_demo(tmp_path_factory):
    pytest.importorskip("playwright")
    out = tmp_path_factory.mktemp("rdemo")
    _hw("demo", "--out", str(out), "--submissions", "24", "--quiet")
    ds = out / "dataset"
    plain = pd.read_parquet(ds / "features.parquet")
    _hw("render", str(ds), "--workers", "1", "--no-progress")
    _hw("features", str(ds), "--no-progress")
    return ds, plain


def test_render_then_features_drops_what_the_browser_hides(rendered_demo):
    ds, plain = rendered_demo
    render = pd.read_parquet(ds / "render.parquet")
    assert set(render["page"]) == set(plain["page"])
    rows = pd.read_parquet(ds / "features.parquet")
    from hwnoise.features.rendered import RENDER_FEATURES

    assert set(RENDER_FEATURES) <= set(rows.columns) and "walk_node" in rows.columns
    # the demo's navigation carries a `hidden` mobile copy and the rendered mode drops no more
    # than a browser hides: fewer rows, never more, and every row maps back to the plain walk
    assert len(rows) <= len(plain)
    merged = rows.merge(plain, left_on=["page", "walk_node"], right_on=["page", "node"], suffixes=("", "_plain"))
    assert len(merged) == len(rows)
    assert (merged["tag"] == merged["tag_plain"]).all()


def test_evaluate_runs_every_rendered_method_on_the_same_pages(rendered_demo, tmp_path):
    ds, _ = rendered_demo
    methods = "model,cetd,cetd-render,mss,wang"
    from hwnoise.extractors.external import available

    if "trafilatura" in available():
        methods += ",trafilatura"
    _hw("evaluate", str(ds), "--methods", methods, "--preset", "thesis", "--features", "rendered", "--out", str(tmp_path), "--no-figures")
    report = json.loads((tmp_path / "report.json").read_text())
    got = {r["method"]: r for r in report["results"]}
    assert set(methods.split(",")) <= set(got)
    assert len({r["pages"] for r in got.values()}) == 1
    assert all(0.0 <= r["text_f1"] <= 1.0 for r in got.values())
    # the learned model beats the page-level baselines on the site it was trained for
    assert got["model"]["text_f1"] > got["cetd-render"]["text_f1"]
    assert got["model"]["nodes"] == got["cetd"]["nodes"]  # node scores on the same walker rows
