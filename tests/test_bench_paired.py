"""bench/paired.py: two evaluate runs compared page by page (the tool that says whether a change
is more than page-level noise)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bench_scripts import bench_module


def _paired():
    return bench_module("paired")


def _run(path: Path, scores: dict[str, float], method: str = "model") -> Path:
    path.mkdir()
    pd.DataFrame({"dataset": "d", "method": method, "page": list(scores), "record_f1": list(scores.values())}) \
        .to_csv(path / "pages.csv", index=False)
    return path


def test_paired_difference_standard_error_and_counts(tmp_path, capsys):
    mod = _paired()
    before = _run(tmp_path / "a", {"p1": 0.5, "p2": 0.2, "p3": 1.0, "p4": 0.0})
    after = _run(tmp_path / "b", {"p1": 0.7, "p2": 0.2, "p3": 0.9, "p4": 0.4, "p5": 1.0})  # p5: only after
    out = mod.paired(mod.read_pages(before), mod.read_pages(after), "record_f1").iloc[0]
    d = np.array([0.2, 0.0, -0.1, 0.4])
    assert out["pages"] == 4 and out["diff"] == pytest.approx(d.mean())
    assert out["se"] == pytest.approx(d.std(ddof=1) / 2)
    assert out["ci_low"] == pytest.approx(d.mean() - 1.96 * d.std(ddof=1) / 2)
    assert (out["up"], out["down"], out["same"]) == (2, 1, 1)
    assert mod.main([str(before), str(after), "--metric", "record_f1"]) == 0
    assert "record_f1" in capsys.readouterr().out


def test_paired_names_what_is_missing(tmp_path):
    mod = _paired()
    with pytest.raises(SystemExit, match="pages.csv"):
        mod.read_pages(tmp_path / "nowhere")
    a = _run(tmp_path / "a", {"p1": 0.5})
    with pytest.raises(SystemExit, match="text_f1"):
        mod.paired(mod.read_pages(a), mod.read_pages(a), "text_f1")


def test_paired_main_says_which_metrics_no_run_has(tmp_path, capsys):
    a = _run(tmp_path / "a", {"p1": 0.5})
    b = _run(tmp_path / "b", {"p1": 0.7})
    assert _paired().main([str(a), str(b), "--metric", "content_f1"]) == 1
    err = capsys.readouterr().err
    assert "content_f1" in err and "record_f1" in err  # what was asked, and what the runs have
    assert _paired().main([str(a), str(b), "--metric", "content_f1", "record_f1"]) == 0
    assert "0.2000" in capsys.readouterr().out


def test_paired_dataset_keeps_only_those_pages_and_names_an_unknown_one(tmp_path, capsys):
    rows = {"dataset": ["wl", "wl", "wa"], "method": "model", "page": ["p1", "p2", "p3"]}
    pd.DataFrame({**rows, "text_f1": [0.5, 0.5, 0.5]}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({**rows, "text_f1": [0.7, 0.5, 0.0]}).to_csv(tmp_path / "b.csv", index=False)
    args = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--metric", "text_f1"]
    assert _paired().main(args + ["--dataset", "wl"]) == 0
    out = capsys.readouterr().out
    assert "0.1000" in out and "-0.5000" not in out  # p1 +0.2 and p2 0, p3 left out
    assert _paired().main(args + ["--dataset", "wl", "nope"]) == 1
    assert "nope" in capsys.readouterr().err
