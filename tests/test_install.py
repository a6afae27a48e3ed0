"""The install layout: every stage imports as hwnoise.<stage>, from the repo root and elsewhere."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAGES = ["hwnoise.forms", "hwnoise.features", "hwnoise.training", "hwnoise.extractors"]
CODE = "import importlib,sys; [importlib.import_module(m) for m in sys.argv[1:]]; import hwnoise.features as f; print(f.__file__)"


def _run(cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *extra, "-c", CODE, *STAGES], cwd=cwd,
                          capture_output=True, text=True)


def test_stages_import_outside_the_repo(tmp_path):
    res = _run(tmp_path)
    assert res.returncode == 0, res.stderr


def test_stages_import_from_the_repo_root_with_cwd_first_on_path():
    # `python -c` puts the working directory first on sys.path, so `hwnoise` resolves to the
    # source folder: the mapped stages must still import (the trap DESIGN.md names).
    res = _run(REPO)
    assert res.returncode == 0, res.stderr
    assert "features" in res.stdout


def test_no_generic_top_level_packages_installed(tmp_path):
    # Outside the checkout, nothing named like a stage folder may be importable top-level.
    code = "import importlib.util as u; print([n for n in ('forms','features','training','extractors') if u.find_spec(n)])"
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_cli_lists_every_subcommand():
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "--help"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for cmd in ("demo", "collect", "import", "features", "export-arff", "train", "extract", "evaluate"):
        assert cmd in res.stdout, f"'{cmd}' missing from hwnoise --help"
