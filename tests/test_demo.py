"""The whole job: `hwnoise demo` on the built-in site, over real HTTP on 127.0.0.1."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "demo", "--out", str(out), "--quiet"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    return out, res


def test_demo_writes_every_stage_output(demo_run):
    out, _ = demo_run
    ds = out / "dataset"
    pages = list((ds / "pages").glob("*.html"))
    assert 90 <= len(pages) <= 110
    assert len(list((ds / "gold").glob("*.txt"))) == len(pages)
    journal = [json.loads(x) for x in (ds / "journal.jsonl").read_text().splitlines()]
    assert len(journal) == len(pages) and all(j["status"] == 200 for j in journal)
    query = json.loads((ds / "query.json").read_text())
    assert query and {"term", "kind", "submissions"} <= set(query[0])
    df = pd.read_parquet(ds / "features.parquet")
    assert set(df["page"]) == {p.stem for p in pages}
    assert set(df["label"].dropna()) == {"S", "N"}
    arff = (out / "demo.arff").read_text()
    assert re.search(r"^@attribute\s+'?result'?\s+\{\s*S\s*,\s*N\s*\}", arff, re.I | re.M)
    assert (out / "model" / "model.json").exists()


def test_demo_reaches_the_target_on_the_page_protocol(demo_run):
    out, res = demo_run
    report = json.loads((out / "report.json").read_text())
    by_protocol = {r["protocol"]: r for r in report["results"] if r["method"] == "model"}
    assert set(by_protocol) == {"pages", "thesis"}
    pages = by_protocol["pages"]
    assert pages["f1"] >= 0.95
    assert pages["RR"] + pages["RC"] + pages["CC"] + pages["CR"] == pages["nodes"]
    # the figures are printed, with the tree
    assert "pages" in res.stdout and f"{pages['f1']:.3f}" in res.stdout
    assert "Number of Leaves" in res.stdout + res.stderr


def test_demo_compares_methods_at_text_level_on_the_same_pages(demo_run):
    out, res = demo_run
    report = json.loads((out / "report.json").read_text())
    text = {r["method"]: r for r in report["results"] if "text_f1" in r}
    assert {"model", "cetd"} <= set(text)
    assert len({r["pages"] for r in text.values()}) == 1  # every method on the same test pages
    # per-site learning beats the page-level baseline on the site it was trained for
    assert text["model"]["text_f1"] > text["cetd"]["text_f1"]
    assert (out / "evaluation" / "report.md").exists()


@pytest.mark.parametrize("quiet", [[], ["--quiet"]])
def test_demo_says_once_what_it_collected(tmp_path, quiet):
    """Without --quiet the demo said it twice: collect's 'collect: 10 fetched, 0 failed, 0 skipped
    ...' and its own 'collected: 10 fetched, 0 failed, 0 already there'."""
    import os

    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "demo", "--submissions", "10", "--out",
                          str(tmp_path / "demo"), *quiet], capture_output=True, text=True,
                         env={**os.environ, "HWNOISE_PROGRESS": "0"})
    assert res.returncode == 0, res.stderr[-3000:]
    said = [ln for ln in res.stderr.splitlines() if re.match(r"collect(ed)?: \d+ fetched", ln)]
    assert len(said) == 1 and "10 fetched, 0 failed" in said[0], res.stderr


def test_demo_again_into_the_same_out_starts_a_fresh_dataset(tmp_path):
    """A second ``hwnoise demo`` into the same --out (its default, ./hwnoise-demo) kept the first
    run's pages and added the new run's: the site serves on a new port each run, so every page
    came again under a new ID, the dataset doubled with copies on both sides of the split, and
    another --seed rewrote the old pages' gold from another site. It starts afresh now; a folder
    ``dataset`` there that no demo wrote is refused, left as it was."""
    import os

    out = tmp_path / "demo"
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    for seed in ("0", "1"):
        res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "demo", "--submissions", "4", "--seed", seed,
                              "--out", str(out), "--quiet"], capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr[-3000:]
    subs = [json.loads(line) for line in (out / "dataset" / "submissions.jsonl").read_text().splitlines()]
    assert len(subs) == 4 and len({s["action"] for s in subs}) == 1      # the second run's pages only
    assert "removed the earlier demo's dataset" in res.stderr
    other = tmp_path / "mine"
    (other / "dataset").mkdir(parents=True)
    (other / "dataset" / "notes.txt").write_text("mine")
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "demo", "--submissions", "4", "--out", str(other),
                          "--quiet"], capture_output=True, text=True, env=env)
    assert res.returncode == 1 and "not a dataset an earlier 'hwnoise demo' wrote" in res.stderr, res.stderr
    assert (other / "dataset" / "notes.txt").read_text() == "mine"
