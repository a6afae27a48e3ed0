"""How often hwnoise's J48 prints exactly what real Weka 3.6.14 prints, on generated ARFF files.

    python bench/weka_agreement.py trees 0 200    # mixed files x (default, -B, -U, -M 5): the tree
    python bench/weka_agreement.py cv 0 120       # mixed files: J48 -t's tree and cross-validation
    python bench/weka_agreement.py numeric 0 60   # numeric files with '?' (an option set each): both

The files come from the tests' generators (``tests/test_arff_j48.mixed_arff``: 2-5 nominal
values, 2-4 classes, 0/5/20 % '?' values and classes, numeric attributes mixed in;
``tests/test_weka_j48.random_set``: numeric scales, ties, '?' values). Weka's output is cached
beside them (``--cache``, default a folder under the system's temp dir), so a rerun needs no Java.
Prints the count of identical outputs and the seeds (and options) that differ.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_arff_j48 import mixed_arff, weka_cv, weka_j48, weka_tree  # noqa: E402
from tests.test_weka_j48 import OPTION_SETS, random_set, write_arff  # noqa: E402

from hwnoise.training.arff_train import run_arff  # noqa: E402

TREE_OPTIONS = {"default": ((), {}), "-B": (("-B",), {"binary_splits": True}),
                "-U": (("-U",), {"unpruned": True}), "-M 5": (("-M", "5"), {"min_num_obj": 5})}


def weka_output(path: Path, key: str, options) -> str:
    cache = path.with_suffix(f".{key.replace(' ', '')}.weka.txt")
    if not cache.exists():
        cache.write_text(weka_j48(path, *options), encoding="utf-8")
    return cache.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["trees", "cv", "numeric"])
    ap.add_argument("first", type=int)
    ap.add_argument("end", type=int)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hwnoise-weka-agreement")
    a = ap.parse_args(argv)
    a.cache.mkdir(parents=True, exist_ok=True)
    same, total, differ = 0, 0, []
    for seed in range(a.first, a.end):
        if a.mode == "numeric":
            X, y, names = random_set(seed)
            path = write_arff(a.cache / f"numeric{seed}.arff", X, y, names)
            options, params = OPTION_SETS[seed % len(OPTION_SETS)]
            out = weka_output(path, "cv", options)
            run = run_arff(path, params=params)
            ok = run.tree == weka_tree(out).rstrip("\n") and weka_cv(out) in run.text()
            total, same = total + 1, same + ok
            differ += [] if ok else [seed]
            continue
        path = mixed_arff(seed, a.cache / f"mixed{seed}.arff")
        if a.mode == "cv":
            out = weka_output(path, "cv", ())
            run = run_arff(path)
            ok = run.tree == weka_tree(out).rstrip("\n") and weka_cv(out) in run.text()
            total, same = total + 1, same + ok
            differ += [] if ok else [seed]
            continue
        for key, (options, params) in TREE_OPTIONS.items():
            out = weka_output(path, key, ("-no-cv", *options))
            ok = run_arff(path, params=params, cv=False).tree == weka_tree(out).rstrip("\n")
            total, same = total + 1, same + ok
            differ += [] if ok else [f"{seed} {key}"]
    print(f"{a.mode} {a.first}-{a.end - 1}: identical to Weka on {same} of {total}; differ: {differ or 'none'}")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
