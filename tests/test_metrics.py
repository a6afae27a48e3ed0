"""Node-level scores against hand counts and against the numbers real Weka prints."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hwnoise.training.arff import write_arff
from hwnoise.training.metrics import node_scores, scores_from_confusion

WEKA_JAR = Path("/usr/share/java/weka.jar")


def test_hand_counted_confusion_and_weighted_scores():
    y_true = list("SSSSSSNNNN")
    y_pred = list("SSSSSNNNSS")
    s = node_scores(y_true, y_pred)
    assert (s["RR"], s["RC"], s["CC"], s["CR"], s["nodes"]) == (5, 1, 2, 2, 10)
    p_s, r_s, p_n, r_n = 5 / 7, 5 / 6, 2 / 3, 2 / 4
    f_s, f_n = 2 * p_s * r_s / (p_s + r_s), 2 * p_n * r_n / (p_n + r_n)
    assert s["precision"] == pytest.approx((6 * p_s + 4 * p_n) / 10)
    assert s["recall"] == pytest.approx((6 * r_s + 4 * r_n) / 10)
    assert s["f1"] == pytest.approx((6 * f_s + 4 * f_n) / 10)
    assert s["content_f1"] == pytest.approx(f_n)
    assert s["accuracy"] == pytest.approx(0.7)
    assert (s["precision_S"], s["recall_S"], s["precision_N"], s["recall_N"]) == pytest.approx((p_s, r_s, p_n, r_n))
    assert s["f1_N"] == s["content_f1"]


def test_all_noise_guess_flatters_weighted_f1_but_not_content_f1():
    # DESIGN.md: guessing noise for every node of a 97 % noise page scores 0.955 weighted F1
    s = node_scores(["S"] * 97 + ["N"] * 3, ["S"] * 100)
    assert s["precision_N"] == 0.0  # never predicted: 0, as Weka reports it
    assert s["f1"] == pytest.approx(0.955, abs=5e-4)
    assert s["content_f1"] == 0.0
    assert s["precision"] == pytest.approx(0.97 * 0.97)


def test_edge_cases():
    assert node_scores([], [])["nodes"] == 0
    perfect = node_scores(np.array(["N", "S"], dtype=object), np.array(["N", "S"], dtype=object))
    assert perfect["f1"] == 1.0 and perfect["content_f1"] == 1.0
    with pytest.raises(ValueError, match="other than S/N"):
        node_scores(["S", "X"], ["S", "S"])
    with pytest.raises(ValueError):
        node_scores(["S"], ["S", "N"])
    assert scores_from_confusion(RR=4, RC=0, CC=0, CR=0)["recall"] == 1.0


# -- Weka's own numbers ---------------------------------------------------------------------------

def _weka_test_stats(train: Path, test: Path) -> tuple[np.ndarray, dict[str, float]]:
    out = subprocess.run(["java", "-Xmx512m", "-cp", str(WEKA_JAR), "weka.classifiers.trees.J48",
                          "-t", str(train), "-T", str(test), "-i"],
                         capture_output=True, text=True).stdout
    section = out.split("=== Error on test data ===")[1]
    weighted = re.search(r"Weighted Avg\.\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", section)
    assert weighted, out
    # columns: TP rate, FP rate, precision, recall, F-measure
    stats = {"precision": float(weighted[3]), "recall": float(weighted[4]), "f1": float(weighted[5])}
    rows = re.findall(r"^\s*(\d+)\s+(\d+)\s+\|\s+[ab] = ([SN])", section, re.M)
    matrix = np.array([[int(a), int(b)] for a, b, _ in rows])
    return matrix, stats


def _labels_from_matrix(m: np.ndarray) -> tuple[list[str], list[str]]:
    (rr, rc), (cr, cc) = m
    return (["S"] * (rr + rc) + ["N"] * (cr + cc),
            ["S"] * rr + ["N"] * rc + ["S"] * cr + ["N"] * cc)


def _table(seed: int, n: int, learnable: bool) -> pd.DataFrame:
    rng = np.random.RandomState(seed)
    x = rng.uniform(0, 100, n)
    z = rng.uniform(0, 10, n)
    if learnable:
        label = np.where((x > 60) ^ (rng.rand(n) < 0.1), "N", "S")
    else:  # rare, unlearnable content: J48 predicts noise everywhere
        label = np.where(rng.rand(n) < 0.04, "N", "S")
    return pd.DataFrame({"ctd": x, "density_sum": z, "query_score": z * 2, "matches": np.zeros(n),
                         "distance": np.ones(n), "label": label})


@pytest.mark.weka
@pytest.mark.skipif(not WEKA_JAR.exists(), reason="Weka not installed (/usr/share/java/weka.jar)")
@pytest.mark.parametrize("learnable", [True, False])
def test_weighted_scores_match_weka(tmp_path, learnable):
    train = write_arff(_table(1, 300, learnable), tmp_path / "train.arff")
    test = write_arff(_table(2, 200, learnable), tmp_path / "test.arff")
    matrix, weka = _weka_test_stats(train, test)
    if not learnable:
        assert matrix[:, 1].sum() == 0  # the case of a class with no predictions
    s = node_scores(*_labels_from_matrix(matrix))
    for key in ("precision", "recall", "f1"):
        assert s[key] == pytest.approx(weka[key], abs=6e-4), key


def test_any_class_set_matches_scikit_learn_weighted_scores():
    """Three classes, one never predicted: Weka's weighted averages (0 for undefined)."""
    from sklearn.metrics import confusion_matrix as sk_confusion
    from sklearn.metrics import precision_recall_fscore_support

    from hwnoise.training.metrics import confusion_matrix, scores_from_matrix

    classes = ["yes", "no", "x y"]
    rng = np.random.default_rng(3)
    t = rng.choice(classes, 200)
    p = rng.choice(["yes", "no"], 200)
    m = confusion_matrix(t, p, classes)
    assert m.tolist() == sk_confusion(t, p, labels=classes).tolist()
    s = scores_from_matrix(m, classes)
    pr, rc, f1, _ = precision_recall_fscore_support(t, p, labels=classes, average="weighted", zero_division=0)
    assert (s["precision"], s["recall"], s["f1"]) == pytest.approx((pr, rc, f1))
    assert s["per_class"]["x y"]["precision"] == 0.0 and s["confusion"] == m.tolist()
    with pytest.raises(ValueError, match="outside"):
        confusion_matrix(["yes"], ["maybe"], classes)
