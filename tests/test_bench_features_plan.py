"""bench/bench_features.py's cost curve plan: the sizes interleaved round by round, so that a slow
spell of a shared machine falls on every size alike (sessions 12 and 13 ran them one after another
and their curves moved by 28 %)."""
from __future__ import annotations

from bench_scripts import bench_module


def test_every_round_runs_every_size_and_the_small_ones_alternate():
    mod = bench_module("bench_features")
    plan = mod.curve_plan([100, 1000, 10000], 3)
    counts = {size: plan.count(size) for size in set(plan)}
    # the small sizes hold about 8,000 pages each (as _curve_runs asks), the others one run a round
    assert counts == {0: 81, 100: 81, 1000: 9, 10000: 3}
    per = len(plan) // 3  # 58 runs a round
    rounds = [plan[k * per:(k + 1) * per] for k in range(3)]
    assert all(r == rounds[0] for r in rounds) and rounds[0][-1] == 10000
    assert rounds[0][:4] == [0, 100, 1000, 0]  # the empty dataset and 100 pages alternate
    # the big sizes in the first ``big_rounds`` rounds only
    assert mod.curve_plan([100, 10000], 3, big_rounds=1).count(10000) == 1
    assert mod.curve_plan([], 2) == [0] * 80
