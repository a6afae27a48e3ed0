"""The package's docstrings can be encoded as UTF-8: Python 3.13 dedents docstrings when it
compiles a module and fails on a lone surrogate there (a docstring's example ``'caf\\udce9.html'``
written without a raw string made ``import hwnoise.outputs`` a UnicodeEncodeError on 3.13 while
3.11 imported it). Checked on the source, so that it fails on any Python."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hwnoise", "features", "training", "extractors", "forms")


def _docstrings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                yield body[0].value


def test_no_docstring_holds_a_lone_surrogate():
    bad = []
    files = [f for pkg in PACKAGES for f in sorted((ROOT / pkg).rglob("*.py"))]
    assert len(files) > 50
    for path in files:
        for doc in _docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            try:
                doc.value.encode("utf-8")
            except UnicodeEncodeError:
                bad.append(f"{path.relative_to(ROOT)}:{doc.lineno}")
    assert not bad, f"docstrings with a lone surrogate (write them as r-strings): {bad}"
