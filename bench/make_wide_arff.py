"""Write a wide ARFF file (default 100,000 numeric attributes x 20 rows, seeded) to time
``hwnoise train`` on it: ``python bench/make_wide_arff.py /tmp/wide.arff [ATTRIBUTES] [ROWS]``
then ``/usr/bin/time -v hwnoise train /tmp/wide.arff``."""
from __future__ import annotations

import sys

import numpy as np


def main(argv: list[str]) -> int:
    path = argv[0]
    d = int(argv[1]) if len(argv) > 1 else 100_000
    n = int(argv[2]) if len(argv) > 2 else 20
    rng = np.random.default_rng(0)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("@relation w\n" + "".join(f"@attribute a{i} numeric\n" for i in range(d)))
        fh.write("@attribute class {S,N}\n@data\n")
        for i in range(n):
            fh.write(",".join(map(str, rng.integers(0, 9, d))) + "," + ("S" if i % 2 else "N") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
