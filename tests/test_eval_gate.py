"""The evaluation gate: a change that loses accuracy on real pages fails here.

Scores the learned model, CETD and trafilatura on three big9 site-years (pages protocol,
seed 1, five thesis features) and compares each method's mean text F1 with the floor kept in
data/eval_floors.json. The digest of the gold and page bytes scored is pinned, so a changed
corpus is told apart from a changed method.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "datasets"
FLOORS = json.loads((REPO / "data" / "eval_floors.json").read_text())
#: sha256 over the sorted (name, sha256(html), sha256(gold)) of the pages scored.
CORPUS_DIGEST = "d5f672c6237494c03639103326f224ba1b9691d553bbeae121465ab25e0f4777"

pytestmark = [pytest.mark.datasets,
              pytest.mark.skipif(not (SHARED / "big9").is_dir(), reason="../shared/datasets/big9 is absent")]


def _digest(dirs: list[Path]) -> str:
    h = hashlib.sha256()
    for d in dirs:
        for p in sorted((d / "pages").glob("*.html")):
            gold = d / "gold" / f"{p.stem}.txt"
            h.update(f"{d.name}/{p.stem}".encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
            h.update(hashlib.sha256(gold.read_bytes() if gold.exists() else b"").digest())
    return h.hexdigest()


@pytest.fixture(scope="module")
def gate_report(tmp_path_factory):
    from hwnoise.evaluate import evaluate
    from hwnoise.extractors.external import available
    from hwnoise.features.importers import import_dataset

    root = tmp_path_factory.mktemp("gate")
    import_dataset("big9", SHARED / "big9", root, progress=False)
    dirs = [root / name for name in FLOORS["datasets"]]
    methods = [m for m in FLOORS["methods"] if m in ("model", "cetd") or m in available()]
    report = evaluate(dirs, methods=methods, protocol="pages", seed=1, out=None, figures=False)
    return dirs, report


def test_the_corpus_is_the_one_the_floors_were_measured_on(gate_report):
    dirs, _ = gate_report
    digest = _digest(dirs)
    assert digest == CORPUS_DIGEST, "the big9 pages or gold changed: remeasure the floors"
    assert sum(1 for d in dirs for _ in (d / "pages").glob("*.html")) == 30


@pytest.mark.parametrize("method", FLOORS["methods"])
def test_text_f1_stays_above_its_floor(gate_report, method):
    _, report = gate_report
    rows = [r for r in report["results"] if r["method"] == method and "text_f1" in r]
    if not rows:
        pytest.skip(f"{method} is not installed")
    assert len(rows) == len(FLOORS["datasets"])
    mean = sum(r["text_f1"] for r in rows) / len(rows)
    assert mean >= FLOORS["floors"][method], f"{method}: text F1 {mean:.3f} fell below its floor"
