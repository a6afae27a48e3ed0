"""bench/build_general.py's seeded sample: the sample of N pages is the first N of any larger
sample with the same seed, which ``bench/general_heldout.py --score-pages`` relies on to score the
same pages while it trains on more."""
from __future__ import annotations

from bench_scripts import bench_module

from hwnoise.dataset import Dataset
from hwnoise.features.importers import import_dataset


def _dataset(root, n: int, gold_every: int = 3):
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    for i in range(n):
        (root / "html" / f"p{i:02d}.html").write_text(f"<html><body><p>page {i} text</p></body></html>")
        if i % gold_every:  # some pages without gold, which the sample never takes
            (root / "gold" / f"p{i:02d}.txt").write_text(f"page {i} text")
    return import_dataset("plain", root, root.parent / "out", progress=False)


def test_a_smaller_sample_is_the_head_of_a_larger_one(tmp_path):
    sample = bench_module("build_general").sample
    dirs = _dataset(tmp_path / "src", 30)
    with_gold = {p.id for p in Dataset(dirs[0]).pages() if p.gold_path.exists()}
    assert len(with_gold) == 20
    ids = {n: [p.id for p in sample(dirs, n, seed=1)] for n in (5, 12, 100)}
    assert set(ids[100]) == with_gold  # never a page without gold, never more than there are
    assert set(ids[5]) < set(ids[12]) < set(ids[100])
    assert len(ids[5]) == 5 and len(ids[12]) == 12
    assert set(ids[5]) != {p.id for p in sample(dirs, 5, seed=2)}  # the seed draws another sample
