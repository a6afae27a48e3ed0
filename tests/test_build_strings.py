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


def test_string_columns_are_the_same_compiled_or_not(monkeypatch):
    """``_str_array``'s compiled buffers (``features/_walk.c`` ``str_column``) equal its Python
    ones and Arrow's own, validity bitmap and offsets included; what the compiled code hands
    back (a lone surrogate, a value that is not a string) behaves as before."""
    import random

    import pytest

    from hwnoise.features import native
    from hwnoise.features.build import _str_array

    if native.ext is None:
        pytest.skip("the compiled walk is not built")
    rng = random.Random(6)
    alphabet = ["a", "é", "中", "😀", "\x00", "\u0800", " ", "\U00010000"]
    cases = [[], [""], [None], [None] * 9, ["x"] * 17, ["", None, "é"]]
    for _ in range(300):
        cases.append([None if rng.random() < 0.15 else "".join(rng.choice(alphabet)
                                                                for _ in range(rng.randrange(8)))
                      for _ in range(rng.randrange(1, 20))])
    compiled = [_str_array(v) for v in cases]
    for got, vals in zip(compiled, cases):
        got.validate(full=True)
        assert got.equals(pa.array(vals, pa.string())) and got.null_count == vals.count(None)
    monkeypatch.setattr(native, "ext", None)
    for got, vals in zip(compiled, cases):
        assert got.equals(_str_array(vals))
    monkeypatch.undo()
    assert native.ext.str_column(["a", "\ud800"]) is None and native.ext.str_column(["a", 3]) is None
    with pytest.raises(UnicodeEncodeError):
        _str_array(["a", "\ud800"])
