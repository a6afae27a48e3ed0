"""Run real Weka J48 (Debian's 3.6.14 jar) from Python, to compare hwnoise's tree with it.

Why: Weka is the reference for ``C45Classifier``. Weka's command line exits 0 even when it
fails, so its output is read and a failure becomes a :class:`WekaError` naming the file.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from hwnoise.errors import HwnoiseError

WEKA_JAR = os.environ.get("HWNOISE_WEKA_JAR", "/usr/share/java/weka.jar")


class WekaError(HwnoiseError):
    """Weka could not run or rejected its input (the message carries Weka's own words)."""


@dataclass
class WekaResult:
    """What J48 printed: the tree text, its counts, and the accuracy figures it reported."""
    tree_text: str
    n_leaves: int
    size: int
    output: str
    train_accuracy: float | None = None
    test_accuracy: float | None = None
    seconds: float = 0.0
    options: tuple[str, ...] = field(default_factory=tuple)


def weka_available(jar: str | os.PathLike | None = None) -> bool:
    """True when java and the Weka jar are both present."""
    return shutil.which("java") is not None and Path(jar or WEKA_JAR).is_file()


_ERROR_MARKERS = ("Exception", "Error", "Problem reading", "not found", "Illegal options",
                  "Weka exception")


def _accuracy(section: str) -> float | None:
    m = re.search(r"Correctly Classified Instances\s+\d+\s+([\d.]+)\s*%", section)
    return float(m.group(1)) if m else None


def run_j48(train_arff: str | os.PathLike, test_arff: str | os.PathLike | None = None,
            options: Sequence[str] = ("-C", "0.25", "-M", "2"), *,
            jar: str | os.PathLike | None = None, java_options: Sequence[str] = ("-Xmx2g",),
            timeout: float | None = 3600) -> WekaResult:
    """Train J48 on ``train_arff`` (``-t``), score ``test_arff`` (``-T``) when given.

    Without a test file no cross-validation is run (``-no-cv``), as hwnoise prints the tree
    trained on all the data. Raises :class:`WekaError` when Weka is missing or complains."""
    from hwnoise.training.j48_text import extract_tree_text, parse_j48

    jar = str(jar or WEKA_JAR)
    if not weka_available(jar):
        raise WekaError(f"Weka is not available (need java on PATH and {jar}); install "
                        "Debian's 'weka' package or set HWNOISE_WEKA_JAR")
    for p in (train_arff, test_arff):
        if p is not None and not Path(p).is_file():
            raise WekaError(f"{p}: no such ARFF file")
    cmd = ["java", *java_options, "-cp", jar, "weka.classifiers.trees.J48", "-t", str(train_arff)]
    if test_arff is not None:
        cmd += ["-T", str(test_arff)]
    else:
        cmd += ["-no-cv"]
    cmd += [str(o) for o in options]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WekaError(f"{train_arff}: Weka J48 did not finish within {timeout} s") from None
    seconds = time.perf_counter() - start
    out, err = proc.stdout, proc.stderr
    try:
        tree = extract_tree_text(out)
    except Exception:
        lines = [ln.strip() for ln in (err + "\n" + out).splitlines() if ln.strip()]
        reason = next((ln for ln in lines if any(k in ln for k in _ERROR_MARKERS)),
                      lines[0] if lines else f"no output (exit code {proc.returncode})")
        raise WekaError(f"{train_arff}: Weka J48 failed: {reason}") from None
    parsed = parse_j48(tree)
    train_acc = test_acc = None
    m = re.search(r"=== Error on training data ===(.*?)(?:===|\Z)", out, re.S)
    if m:
        train_acc = _accuracy(m.group(1))
    m = re.search(r"=== Error on test data ===(.*?)(?:=== Confusion|\Z)", out, re.S)
    if m:
        test_acc = _accuracy(m.group(1))
    return WekaResult(tree_text=tree, n_leaves=parsed["n_leaves"], size=parsed["size"],
                      output=out, train_accuracy=train_acc, test_accuracy=test_acc,
                      seconds=seconds, options=tuple(str(o) for o in options))
