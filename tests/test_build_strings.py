"""``build._repeated_str`` (the dataset, site and page columns) equals Arrow's own strings."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from hwnoise.features.build import _repeated_str


def test_repeated_strings_equal_arrow_of_the_repeated_values():
    rng = np.random.default_rng(2)
    pool = ["", "a", "página-1", "site.example", "\u4e2d\u6587", "\U0001f600x", "r0-abc"]
    for _ in range(200):
        k = int(rng.integers(0, 6))
        values = [pool[i] for i in rng.integers(0, len(pool), k)]
        counts = rng.integers(0, 5, k)
        got = _repeated_str(values, counts)
        want = pa.array([v for v, c in zip(values, counts) for _ in range(c)], pa.string())
        got.validate(full=True)
        assert got.type == pa.string() and got.null_count == 0
        assert got.equals(want)
