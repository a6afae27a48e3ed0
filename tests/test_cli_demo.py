"""`hwnoise demo` as a new user meets it: a plain install without the extras, run in a checkout."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_demo_names_the_extra_that_brings_the_missing_extractors(monkeypatch):
    from hwnoise.demo import COMPARED, left_out_note

    for name in ("trafilatura", "readability"):
        monkeypatch.setitem(sys.modules, name, None)  # as after a plain `pip install .`
    note = left_out_note()
    assert note is not None
    assert all(m in note for m in COMPARED) and "pip install 'hwnoise[extractors]'" in note


def test_demo_says_nothing_when_the_extractors_are_there():
    from hwnoise.demo import left_out_note
    from hwnoise.extractors.external import available

    if not {"trafilatura", "readability"} <= set(available()):
        pytest.skip("the extractors extra is not installed")
    assert left_out_note() is None


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(),
                    reason="needs a git checkout")
@pytest.mark.parametrize("folder", ["hwnoise-demo", "hwnoise-evaluation"])
def test_default_output_folders_run_in_the_checkout_are_ignored(folder):
    # `hwnoise demo` and `hwnoise evaluate` without --out write these under the working folder
    res = subprocess.run(["git", "check-ignore", "-q", f"{folder}/report.json"], cwd=REPO)
    assert res.returncode == 0, f"{folder}/ would be left untracked in the checkout"
