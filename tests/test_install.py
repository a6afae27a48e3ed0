"""The install layout: every stage imports as hwnoise.<stage>, from the repo root and elsewhere."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STAGES = ["hwnoise.forms", "hwnoise.features", "hwnoise.training", "hwnoise.extractors"]
CODE = "import importlib,sys; [importlib.import_module(m) for m in sys.argv[1:]]; import hwnoise.features as f; print(f.__file__)"


def _run(cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *extra, "-c", CODE, *STAGES], cwd=cwd,
                          capture_output=True, text=True)


def test_stages_import_outside_the_repo(tmp_path):
    res = _run(tmp_path)
    assert res.returncode == 0, res.stderr


def _editable() -> bool:
    """True when hwnoise is installed with `pip install -e` (how a checkout is developed)."""
    from importlib.metadata import distributions

    # every hwnoise found (a stale hwnoise.egg-info in the checkout may come first)
    texts = [d.read_text("direct_url.json") or "{}" for d in distributions(name="hwnoise")]
    return any(json.loads(t).get("dir_info", {}).get("editable") for t in texts)


def test_stages_import_from_the_repo_root_with_cwd_first_on_path():
    # `python -c` puts the working directory first on sys.path, so `hwnoise` resolves to the
    # source folder: with the editable install a checkout is developed with, the mapped stages
    # must still import (the trap DESIGN.md names), and from this checkout.
    if not _editable():
        pytest.skip("a checkout is developed with `pip install -e .`; this install is not editable")
    res = _run(REPO)
    assert res.returncode == 0, res.stderr
    assert Path(res.stdout.strip()) == REPO / "features" / "__init__.py"


def test_hwnoise_does_not_extend_its_own_path():
    import hwnoise

    assert len(hwnoise.__path__) == 1 and "__path__" not in Path(hwnoise.__file__).read_text()


def test_the_api_is_in_star_imports_and_dir_and_still_loads_on_first_use():
    """``from hwnoise import *`` gave nothing and ``dir(hwnoise)`` no API name (they load on first
    use, through the module's ``__getattr__``): a notebook's completion offered none of them."""
    import subprocess
    import sys

    code = ("import sys, hwnoise; lazy = 'hwnoise.api' not in sys.modules; names = dir(hwnoise); "
            "ns = {}; exec('from hwnoise import *', ns); "
            "print(lazy, [n for n in ('train', 'load_model', 'extract', 'extract_records', 'ModelSpec') "
            "if n not in names or n not in ns], 'annotations' in names)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert res.stdout.split() == ["True", "[]", "False"], res.stderr


# -- packaging -------------------------------------------------------------------------------

def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _names(specs: list[str]) -> set[str]:
    """The distribution names ``specs`` bring: each named one, and for ``name[extra]`` what that
    extra of the installed ``name`` requires (``dask[distributed]`` brings ``distributed``)."""
    from importlib.metadata import PackageNotFoundError, requires

    names = set()
    for spec in specs:
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(?:\[([^\]]*)\])?", spec)
        names.add(m.group(1).lower().replace("_", "-"))
        for extra in filter(None, (m.group(2) or "").split(",")):
            try:
                reqs = requires(m.group(1)) or []
            except PackageNotFoundError:
                continue
            names |= {re.split(r"[<>=!~\[; (]", r, maxsplit=1)[0].lower().replace("_", "-")
                      for r in reqs if re.search(rf"extra\s*==\s*['\"]{extra.strip()}['\"]", r)}
    return names


def test_every_third_party_import_is_declared():
    from importlib.metadata import packages_distributions

    project = _pyproject()["project"]
    declared = _names(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared |= _names(extra)
    dists = packages_distributions()
    undeclared = {}
    for folder in ("hwnoise", "forms", "features", "training", "extractors"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    tops = [a.name.split(".")[0] for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    tops = [node.module.split(".")[0]]
                else:
                    continue
                for top in tops:
                    if top in sys.stdlib_module_names or top in ("hwnoise", "__future__"):
                        continue
                    if top not in dists:  # not installed here (an extra): its name cannot be mapped
                        continue
                    names = {d.lower().replace("_", "-") for d in dists[top]}
                    if not names & declared:
                        undeclared.setdefault(top, str(path.relative_to(REPO)))
    assert undeclared == {}, f"imported but not declared in pyproject.toml: {undeclared}"


def test_every_dependency_has_a_floor_that_ci_installs():
    # .ci/run installs exactly these floors in a fresh venv and runs the tests there
    res = subprocess.run([sys.executable, str(REPO / ".ci" / "floors.py")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    pins = dict(line.split("==") for line in res.stdout.split())
    assert pins["scikit-learn"] >= "1.6"  # validate_data (training/c45.py) is new in 1.6
    assert "cssselect" in pins
    assert "floors.py" in (REPO / ".ci" / "run").read_text()


def test_packaging_metadata():
    pyproject = _pyproject()
    project = pyproject["project"]
    assert isinstance(project["license"], str)  # an SPDX expression, not the deprecated table
    test_extra = project["optional-dependencies"]["test"]
    assert any(s.replace(" ", "").startswith("hwnoise[extractors,render") for s in test_extra)
    packages = set(pyproject["tool"]["setuptools"]["packages"])
    # every data subfolder with files ships as a package (else setuptools warns and may drop it)
    for folder in (REPO / "data").rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__" and any(f.is_file() for f in folder.iterdir()):
            name = "hwnoise.data." + ".".join(folder.relative_to(REPO / "data").parts)
            assert name in packages, f"{name} is missing from [tool.setuptools] packages"


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
