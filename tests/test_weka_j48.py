"""C45Classifier against real Weka J48 (3.6.14): the same tree, line for line, and the same accuracy.

The stored fixtures (data/arff/*.j48.txt, printed by real Weka) are compared without Java; the
tests marked ``weka`` run the jar and skip when it is absent.
"""
from __future__ import annotations

import csv
from pathlib import Path

import arff
import numpy as np
import pytest

from hwnoise.training.c45 import C45Classifier
from hwnoise.training.j48_text import diff_trees, export_j48, parse_j48
from hwnoise.training.weka import WekaError, run_j48, weka_available

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "arff"
DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"

#: fixture file suffix -> (J48 options, C45Classifier parameters)
SUFFIXES = {"": (("-C", "0.25", "-M", "2"), {}),
            ".S": (("-C", "0.25", "-M", "2", "-S"), {"subtree_raising": False}),
            ".U": (("-U", "-M", "2"), {"unpruned": True}),
            ".M10": (("-C", "0.25", "-M", "10"), {"min_num_obj": 10})}


def load_arff(path: Path):
    """Numeric attributes + nominal class, as Weka reads them ('?' becomes NaN)."""
    with open(path, encoding="utf-8") as fh:
        data = arff.load(fh)
    attrs = data["attributes"]
    X = np.array([[np.nan if v is None else v for v in row[:-1]] for row in data["data"]], dtype=float)
    y = np.array([row[-1] for row in data["data"]], dtype=object)
    return X, y, [a[0] for a in attrs[:-1]], list(attrs[-1][1])


def write_arff(path: Path, X: np.ndarray, y, names, classes=("S", "N")) -> Path:
    lines = ["@relation generated"] + [f"@attribute {n} numeric" for n in names]
    lines += ["@attribute result {" + ",".join(classes) + "}", "@data"]
    lines += [",".join("?" if np.isnan(v) else repr(float(v)) for v in row) + "," + str(label)
              for row, label in zip(X, y)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fit_file(path: Path, **params):
    X, y, names, classes = load_arff(path)
    clf = C45Classifier(**params).fit(X, y, class_order=classes)
    return clf, names


def assert_same_tree(mine: str, weka: str) -> None:
    if mine != weka:
        diffs = diff_trees(parse_j48(mine), parse_j48(weka))
        pytest.fail("tree differs from Weka's: " + "; ".join(diffs[:5]) + f"\n--- ours\n{mine}\n--- weka\n{weka}")


def fixture_cases():
    for txt in sorted(FIXTURES.glob("*.j48.txt")):
        stem = txt.name[: -len(".j48.txt")]
        name, _, suffix = stem.partition(".")
        yield pytest.param(name, "." + suffix if suffix else "", id=stem)


# ------------------------------------------------------------------ stored Weka output

@pytest.mark.parametrize("name,suffix", list(fixture_cases()))
def test_fixture_tree_equals_stored_weka_tree(name, suffix):
    options, params = SUFFIXES[suffix]
    clf, names = fit_file(FIXTURES / f"{name}.arff", **params)
    weka_text = (FIXTURES / f"{name}{suffix}.j48.txt").read_text(encoding="utf-8")
    assert_same_tree(export_j48(clf, names), weka_text)
    parsed = parse_j48(weka_text)
    assert (clf.n_leaves_, clf.node_count_) == (parsed["n_leaves"], parsed["size"])


def test_fixtures_cover_pruning_raising_missing_and_ties():
    """The fixtures exercise what they claim: pruning and subtree raising change the tree,
    '?' values give fractional leaf weights, values closer than 1e-5 and -0.0 occur."""
    read = lambda s: (FIXTURES / s).read_text(encoding="utf-8")
    assert len({read("pruning.j48.txt"), read("pruning.S.j48.txt"), read("pruning.U.j48.txt")}) == 3
    weights = [leaf["weight"] for leaf in _leaves(parse_j48(read("missing.j48.txt"))["tree"])]
    assert any(w != int(w) for w in weights)
    ties = read("ties.arff")
    assert "?" in ties and "-0.0," in ties and "4e-06" in ties


def _leaves(node):
    if "children" not in node:
        return [node]
    return _leaves(node["children"][0]) + _leaves(node["children"][1])


# ------------------------------------------------------------------ real Weka

@pytest.mark.weka
@pytest.mark.skipif(not weka_available(), reason="Weka (java + weka.jar) not installed")
@pytest.mark.parametrize("name,suffix", list(fixture_cases()))
def test_stored_fixture_is_what_weka_prints(name, suffix):
    options, _ = SUFFIXES[suffix]
    result = run_j48(FIXTURES / f"{name}.arff", options=options)
    assert result.tree_text == (FIXTURES / f"{name}{suffix}.j48.txt").read_text(encoding="utf-8")


def random_set(seed: int, n: int | None = None):
    """Varied numeric data: scales, ties, exponentials, '?' values, label noise."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(60, 1200))
    d = int(rng.integers(1, 6))
    X = rng.normal(size=(n, d))
    kind = seed % 4
    if kind == 1:
        X = np.round(X * 3)
    elif kind == 2:
        X = np.round(X, 1) * 10
    elif kind == 3:
        X = np.exp(X * 3)
    score = X[:, 0] + (0.5 * X[:, 1] if d > 1 else 0) + rng.normal(size=n) * float(rng.uniform(0.2, 2))
    y = np.where(score > np.median(score) * 0.5, "N", "S")
    if seed % 3 == 0:
        X[rng.random((n, d)) < 0.1] = np.nan
    return X, y, [f"f{i}" for i in range(d)]


OPTION_SETS = [(("-C", "0.25", "-M", "2"), {}),
               (("-C", "0.1", "-M", "5"), {"confidence": 0.1, "min_num_obj": 5}),
               (("-U", "-M", "2"), {"unpruned": True}),
               (("-C", "0.25", "-M", "2", "-S"), {"subtree_raising": False}),
               (("-C", "0.5", "-M", "1"), {"confidence": 0.5, "min_num_obj": 1}),
               (("-C", "0.25", "-M", "2", "-B"), {"binary_splits": True}),
               (("-C", "0.35", "-M", "3"), {"confidence": 0.35, "min_num_obj": 3})]


@pytest.mark.weka
@pytest.mark.skipif(not weka_available(), reason="Weka (java + weka.jar) not installed")
@pytest.mark.parametrize("seed", range(14))
def test_random_set_tree_and_test_accuracy_equal_weka(seed, tmp_path):
    options, params = OPTION_SETS[seed % len(OPTION_SETS)]
    X, y, names = random_set(seed)
    cut = int(len(X) * 0.7)                  # 70 % train, the rest is the -T test file
    train = write_arff(tmp_path / "train.arff", X[:cut], y[:cut], names)
    test = write_arff(tmp_path / "test.arff", X[cut:], y[cut:], names)
    result = run_j48(train, test, options=options)
    clf, _ = fit_file(train, **params)
    assert_same_tree(export_j48(clf, names), result.tree_text)
    Xt2, yt2, _, _ = load_arff(test)
    ours = 100 * float(np.mean(clf.predict(Xt2) == yt2))
    assert result.test_accuracy is not None
    assert ours == pytest.approx(result.test_accuracy, abs=1e-4)


@pytest.mark.weka
@pytest.mark.skipif(not weka_available(), reason="Weka (java + weka.jar) not installed")
def test_run_j48_raises_on_what_weka_rejects(tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a numeric\n@attribute result {S,N}\n@data\n1,S\nxyz,N\n")
    with pytest.raises(WekaError, match="bad.arff"):
        run_j48(bad)
    with pytest.raises(WekaError, match="no such ARFF"):
        run_j48(tmp_path / "absent.arff")


# ------------------------------------------------------------------ a real feature table

def _big9_table(site: str, year: str):
    import pandas as pd
    from hwnoise.features.columns import THESIS_FEATURES
    from hwnoise.features.labels import label_page
    from hwnoise.features.walk import walk_page

    root = DATASETS / "big9"
    with open(root / "pages.tsv", encoding="utf-8") as fh:
        pages = [r for r in csv.DictReader(fh, delimiter="\t") if r["site"] == site and r["year"] == year]
    frames = []
    for i, r in enumerate(sorted(pages, key=lambda r: r["html_file"])):
        html = (root / r["folder"] / "html" / r["html_file"]).read_bytes()
        raw = (root / r["folder"] / "gold" / r["gold_file"]).read_bytes()
        try:
            gold = raw.decode("utf-8")
        except UnicodeDecodeError:
            gold = raw.decode("cp1252")
        walk = walk_page(html, [r["query"]])
        df = walk.rows[THESIS_FEATURES].astype(float).copy()
        df["label"] = label_page(walk, gold)
        df["page_no"] = i
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


@pytest.mark.weka
@pytest.mark.datasets
@pytest.mark.skipif(not weka_available(), reason="Weka (java + weka.jar) not installed")
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets/big9 absent")
@pytest.mark.parametrize("site,year", [("BBC", "2009"), ("Forbes", "2005"), ("CNN", "2013")])
def test_feature_table_accuracy_within_half_point_of_weka(site, year, tmp_path):
    """Node features of one big9 site-year, pages 0-6 train and 7-9 test, as ARFF files."""
    from hwnoise.features.columns import THESIS_FEATURES
    df = _big9_table(site, year)
    assert len(df) > 1000
    train_df, test_df = df[df.page_no < 7], df[df.page_no >= 7]
    train = write_arff(tmp_path / "train.arff", train_df[THESIS_FEATURES].to_numpy(),
                       train_df["label"].to_numpy(), THESIS_FEATURES)
    test = write_arff(tmp_path / "test.arff", test_df[THESIS_FEATURES].to_numpy(),
                      test_df["label"].to_numpy(), THESIS_FEATURES)
    result = run_j48(train, test)
    clf, names = fit_file(train)
    Xt, yt, _, _ = load_arff(test)
    ours = 100 * float(np.mean(clf.predict(Xt) == yt))
    assert abs(ours - result.test_accuracy) <= 0.5
    assert_same_tree(export_j48(clf, names), result.tree_text)


@pytest.mark.weka
@pytest.mark.skipif(not weka_available(), reason="Weka (java + weka.jar) not installed")
def test_forty_thousand_noisy_rows_give_weka_s_tree(tmp_path):
    """Many rows make the gain curves flat, so J48's 1e-6 tolerances decide between cuts."""
    rng = np.random.default_rng(42)
    n = 40_000
    X = np.column_stack([rng.gamma(1.5, 20, n) * (rng.random(n) < 0.7), rng.gamma(1.2, 50, n).round(3),
                         np.round(rng.exponential(0.5, n), 2), rng.poisson(0.3, n), rng.integers(1, 30, n)])
    score = 0.04 * X[:, 0] + 0.01 * X[:, 1] + X[:, 2] + 0.5 * X[:, 3] - 0.08 * X[:, 4] + rng.normal(size=n)
    y = np.where(score > 0.8, "N", "S")
    names = ["ctd", "density_sum", "query_score", "matches", "distance"]
    train = write_arff(tmp_path / "big.arff", X, y, names)
    result = run_j48(train)
    clf, _ = fit_file(train)
    assert_same_tree(export_j48(clf, names), result.tree_text)
