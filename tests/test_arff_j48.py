"""J48 on any ARFF a Weka user brings: nominal attributes, several classes, missing values and
missing classes, and ``hwnoise train FILE.arff`` printing what ``J48 -t FILE.arff`` prints.

Generated files are compared with real Weka 3.6.14 (tests marked ``weka``, skipped without the
jar); a stored file with Weka's own output (data/arff/mixed.*) is compared without Java.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hwnoise.cli import main
from hwnoise.training.arff import load_arff
from hwnoise.training.arff_train import run_arff
from hwnoise.training.protocols import weka_cv_folds, weka_randomize
from hwnoise.training.weka import WEKA_JAR, weka_available

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "arff"
needs_weka = pytest.mark.skipif(not weka_available(), reason="Weka (java + weka.jar) not installed")


def mixed_arff(seed: int, path: Path, n: int | None = None) -> Path:
    """Nominal attributes of 2-5 values, 0-2 numeric ones, 2-4 classes (one with a space in
    its name), some '?' values and '?' classes (none, 5 % or 20 %), seeded."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(15, 400))
    k = int(rng.integers(2, 5))
    classes = ["c%d" % i for i in range(k)] if seed % 2 else ["yes", "no", "maybe", "x y"][:k]
    attrs, cols = [], []
    score = rng.normal(size=n)
    for j in range(int(rng.integers(1, 4))):
        nv = int(rng.integers(2, 6))
        vals = ["v%d" % i for i in range(nv)]
        c = rng.integers(0, nv, n)
        score += (c % 2) * rng.normal()
        attrs.append(("n%d" % j, "{" + ",".join(vals) + "}"))
        cols.append([vals[i] for i in c])
    for j in range(int(rng.integers(0, 3))):
        x = np.round(rng.normal(size=n) * 3, 1) if j % 2 else rng.integers(0, 6, n).astype(float)
        score += x * rng.normal() * 0.3
        attrs.append(("x%d" % j, "numeric"))
        cols.append([repr(float(v)) if v != int(v) else str(int(v)) for v in x])
    q = np.quantile(score, np.linspace(0, 1, k + 1)[1:-1])
    y = [classes[i] for i in np.searchsorted(q, score + rng.normal(size=n) * 0.5)]
    miss = [0, 0.05, 0.2][seed % 3]
    lines = ["@relation gen%d" % seed] + ["@attribute %s %s" % a for a in attrs]
    lines.append("@attribute class {" + ",".join("'%s'" % c if " " in c else c for c in classes) + "}")
    lines.append("@data")
    for i in range(n):
        row = [("?" if rng.random() < miss else c[i]) for c in cols]
        lab = y[i] if rng.random() >= miss else "?"
        row.append("'%s'" % lab if " " in lab else lab)
        lines.append(",".join(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def weighted_arff(seed: int, path: Path) -> Path:
    """mixed_arff's file, each row given an instance weight of 0.1 to 3 (two decimals, or a
    whole number on odd seeds) after a comma, a space or nothing, seeded."""
    lines = mixed_arff(seed, path).read_text(encoding="utf-8").split("\n")
    rng = np.random.default_rng(seed + 1000)
    start = lines.index("@data") + 1
    for i in range(start, len(lines)):
        if lines[i]:
            w = int(rng.integers(1, 4)) if seed % 2 else round(float(rng.uniform(0.1, 3)), 2)
            lines[i] += [",", " ", ""][int(rng.integers(0, 3))] + "{%s}" % w
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def weka_j48(path: Path, *options: str) -> str:
    out = subprocess.run(["java", "-cp", str(WEKA_JAR), "weka.classifiers.trees.J48", "-t", str(path),
                          *options], capture_output=True, text=True, check=True).stdout
    assert "J48" in out, out[:500]
    return out


def weka_tree(out: str) -> str:
    return out[out.index("J48 "):out.index("\n\n\nTime taken")]


def weka_cv(out: str) -> str:
    return out[out.index("=== Stratified cross-validation ==="):].rstrip("\n")


# ------------------------------------------------------------------ without Java

def test_stored_weka_output_is_what_train_prints(capsys):
    """data/arff/mixed.arff: 3 nominal and 2 numeric attributes, 4 classes, '?' values and
    classes; mixed.weka.txt is the tree and cross-validation Weka 3.6.14 printed for it."""
    assert main(["train", str(FIXTURES / "mixed.arff")]) == 0
    out = capsys.readouterr().out
    expected = (FIXTURES / "mixed.weka.txt").read_text(encoding="utf-8")
    assert weka_tree(expected) in out
    assert weka_cv(expected) in out


def test_missing_class_rows_place_the_split_point_as_weka():
    """J48 drops rows of missing class before growing but places a numeric cut at the largest
    value <= the midpoint among every row: 2.45 (an unlabelled row) here, not 2."""
    run = run_arff(FIXTURES / "split_point.arff", cv=False)
    assert "a <= 2.45" in run.tree
    assert (FIXTURES / "split_point.tree.txt").read_text(encoding="utf-8").rstrip("\n") == run.tree


def test_weka_cv_folds_are_stratified_and_cover_every_row():
    y = np.array([0, 1, 2, -1, 0, 0, 1, 2, 2, 0, 1, -1, 0, 1, 0, 2, 0, 0, 1, 1, 2, 0, 0])
    folds = weka_cv_folds(y, 10, 1)
    tests = np.concatenate([t for _, t in folds])
    assert sorted(tests.tolist()) == list(range(len(y)))
    for train, test in folds:
        assert not set(train) & set(test) and len(train) + len(test) == len(y)
    assert [len(t) for _, t in folds] == [3, 3, 3, 2, 2, 2, 2, 2, 2, 2]
    assert weka_randomize(5, 1).tolist() != list(range(5))


def test_three_classes_and_any_names_are_trained_and_scored(tmp_path, capsys):
    path = mixed_arff(4, tmp_path / "m.arff")
    classes = load_arff(path).classes
    assert classes == ["yes", "no", "maybe", "x y"]
    assert main(["train", str(path), "--out", str(tmp_path / "model")]) == 0
    out = capsys.readouterr().out
    assert "=== Confusion Matrix ===" in out and " = maybe" in out
    import json
    report = json.loads((tmp_path / "model" / "report.json").read_text())
    rec = report["results"][0]
    assert rec["protocol"] == "weka-cv" and rec["classes"] == classes
    assert len(rec["confusion"]) == 4 and 0 <= rec["f1"] <= 1
    from hwnoise.training.model import NoiseModel
    model = NoiseModel.load(tmp_path / "model")
    assert [str(c) for c in model.estimator.classes_] == classes
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    assert meta["classes"] == classes


# ------------------------------------------------------------------ against real Weka

@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed", [1, 5, 13])
@pytest.mark.parametrize("options,params", [((), {}), (("-B",), {"binary_splits": True})])
def test_generated_nominal_files_give_weka_s_tree(seed, options, params, tmp_path):
    path = mixed_arff(seed, tmp_path / f"g{seed}.arff")
    expected = weka_tree(weka_j48(path, "-no-cv", *options))
    run = run_arff(path, params=params, cv=False)
    assert run.tree == expected.rstrip("\n")


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed", [3, 10, 12, 7, 11, 14, 26, 38])
def test_train_prints_weka_s_cross_validation(seed, tmp_path, capsys):
    """Seeds 7, 11, 14, 26, 38 have rows whose class probabilities tie on paper: Weka's
    confusion matrix needs its fold shuffles and its left-to-right sums of fractional weights."""
    path = mixed_arff(seed, tmp_path / f"cv{seed}.arff")
    expected = weka_j48(path)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out
    assert weka_tree(expected) in out
    assert weka_cv(expected) in out          # summary lines and confusion matrix, character for character


def test_wide_arff_is_read_into_one_matrix_in_bounded_memory(tmp_path):
    """20,000 attributes (the issue: 100k took 270 s and 759 MB, 1M passed 4 GB, one column
    assigned at a time): read into one float matrix and trained, in a fresh process whose peak
    memory is measured."""
    import sys

    d, n = 20_000, 8
    rng = np.random.default_rng(0)
    X = rng.integers(0, 9, size=(n, d))
    X[:, 123] = np.arange(n) % 2 * 5
    head = "@relation wide\n" + "".join(f"@attribute a{i} numeric\n" for i in range(d))
    rows = "\n".join(",".join(map(str, r)) + ("," + ("S" if i % 2 else "N")) for i, r in enumerate(X))
    path = tmp_path / "wide.arff"
    path.write_text(head + "@attribute class {S,N}\n@data\n" + rows + "\n", encoding="utf-8")
    from peak_memory import PEAK_KB

    code = (PEAK_KB + "import sys\n"
            "from hwnoise.training.arff import load_arff, read_arff\n"
            "from hwnoise.training.arff_train import run_arff\n"
            "t = load_arff(sys.argv[1])\n"
            "assert t.X.shape == (8, 20000) and t.X.flags.c_contiguous, t.X.shape\n"
            "print(run_arff(t, cv=False).tree.splitlines()[3])\n"
            "assert read_arff(sys.argv[1]).shape == (8, 20001)\n"
            "print(peak_kb())\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    first_rule, peak_kb = out.stdout.split("\n")[:2]
    assert first_rule.startswith("a123 <= 0")
    assert int(peak_kb) < 400_000, f"peak memory {int(peak_kb) // 1024} MB"


def test_node_protocols_say_what_takes_a_user_s_class_set(capsys):
    assert main(["train", str(FIXTURES / "mixed.arff"), "--protocol", "thesis"]) == 1
    err = capsys.readouterr().err
    assert "are not hwnoise's S/N" in err and "--protocol weka-cv" in err


def test_export_keeps_a_user_s_class_set(tmp_path):
    from hwnoise.training.arff import read_arff, write_arff

    df = read_arff(FIXTURES / "mixed.arff")
    feats = [c for c in df.columns if c != "label"]
    back = load_arff(write_arff(df, tmp_path / "out.arff", features=feats))
    assert back.classes == load_arff(FIXTURES / "mixed.arff").classes
    assert back.names == feats and (back.y == load_arff(FIXTURES / "mixed.arff").y).all()


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed,options", [(83, ()), (83, ("-U",)), (83, ("-M", "5")), (83, ("-B",)),
                                          (101, ("-B",)), (44, ())])
def test_trees_where_fractional_weights_round_as_in_java(seed, options, tmp_path):
    """Leaf weights like 9.875 print 9.88 or 9.87 depending on the order Java added them
    (rows sorted by Weka's quicksort, per-class sums left to right); seed 44's root is
    pruned to a leaf that prints its merged total."""
    params = {"-U": {"unpruned": True}, "-B": {"binary_splits": True}, "-M": {"min_num_obj": 5}}
    path = mixed_arff(seed, tmp_path / f"f{seed}.arff")
    expected = weka_tree(weka_j48(path, "-no-cv", *options))
    run = run_arff(path, params=params.get(options[0], {}) if options else {}, cv=False)
    assert run.tree == expected.rstrip("\n")


# ------------------------------------------------------------------ Weka's own code, compiled

JAVA_HELPER = r"""
import weka.core.*;
import weka.classifiers.trees.J48;
import java.io.*;
import java.util.*;

public class WekaProbe {
  public static void main(String[] a) throws Exception {
    if (a[0].equals("sort")) {            // stdin: one array per line, '?' missing
      BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
      String line;
      while ((line = r.readLine()) != null) {
        String[] t = line.trim().split(" ");
        double[] v = new double[t.length];
        for (int i = 0; i < t.length; i++)
          v[i] = t[i].equals("?") ? Double.MAX_VALUE : Double.parseDouble(t[i]);
        StringBuilder sb = new StringBuilder();
        for (int i : Utils.sortWithNoMissingValues(v)) sb.append(i).append(' ');
        System.out.println(sb.toString().trim());
      }
      return;
    }
    // "cv FILE": Evaluation.crossValidateModel's steps, each test row's distribution
    Instances data = new Instances(new BufferedReader(new FileReader(a[1])));
    data.setClassIndex(data.numAttributes() - 1);
    IdentityHashMap<Instance, Integer> id = new IdentityHashMap<Instance, Integer>();
    for (int i = 0; i < data.numInstances(); i++) id.put(data.instance(i), i);
    int k = 10, n = data.numInstances();
    Random random = new Random(1);
    data.randomize(random);
    data.stratify(k);
    for (int f = 0; f < k; f++) {
      J48 j48 = new J48();
      j48.buildClassifier(data.trainCV(k, f, random));
      int num = n / k + (f < n % k ? 1 : 0);
      int first = f * (n / k) + Math.min(f, n % k);
      for (int i = first; i < first + num; i++) {
        StringBuilder sb = new StringBuilder().append(id.get(data.instance(i)));
        for (double v : j48.distributionForInstance(data.instance(i))) sb.append(' ').append(v);
        System.out.println(sb);
      }
    }
  }
}
"""


@pytest.fixture(scope="module")
def weka_probe(tmp_path_factory):
    """A small Java class calling Weka's own sort and J48 (compiled here; skipped without javac)."""
    import shutil
    if not weka_available() or shutil.which("javac") is None:
        pytest.skip("Weka and a JDK (javac) are needed")
    folder = tmp_path_factory.mktemp("probe")
    (folder / "WekaProbe.java").write_text(JAVA_HELPER, encoding="utf-8")
    subprocess.run(["javac", "-cp", str(WEKA_JAR), "WekaProbe.java"], cwd=folder, check=True,
                   capture_output=True)

    def run(*args: str, stdin: str | None = None) -> list[str]:
        out = subprocess.run(["java", "-cp", f"{WEKA_JAR}:{folder}", "WekaProbe", *args], input=stdin,
                             capture_output=True, text=True, check=True).stdout
        return out.splitlines()
    return run


@pytest.mark.weka
def test_java_quicksort_is_weka_s_sort(weka_probe):
    """Weka's quicksort is not stable: ties (and missing values, sorted last) come out in its
    own order, which J48's sums follow."""
    from hwnoise.training.c45 import java_quicksort

    rng = np.random.default_rng(0)
    arrays = []
    for t in range(200):
        n = int(rng.integers(1, 500))
        v = rng.integers(0, int(rng.integers(1, 30)), n).astype(float)
        v[rng.random(n) < 0.15] = np.nan
        arrays.append(rng.normal(size=n) if t % 5 == 0 else v)
    stdin = "\n".join(" ".join("?" if np.isnan(x) else repr(float(x)) for x in v) for v in arrays) + "\n"
    weka = weka_probe("sort", stdin=stdin)
    assert len(weka) == len(arrays)
    unstable = 0
    for v, line in zip(arrays, weka):
        order = [int(i) for i in line.split()]
        assert java_quicksort(v).tolist() == order
        stable = np.argsort(np.where(np.isnan(v), np.inf, v), kind="stable").tolist()
        unstable += order != stable
    assert unstable > 100                 # most arrays with ties: Weka's order is not a stable sort's


@pytest.mark.weka
@pytest.mark.parametrize("seed", [7, 38])
def test_cross_validation_distributions_are_weka_s_to_the_last_bit(seed, weka_probe, tmp_path):
    """Every test row of every fold gets the class distribution J48 gives it, float for float."""
    from hwnoise.training.arff_train import _fit, j48_params

    path = mixed_arff(seed, tmp_path / f"d{seed}.arff")
    weka = {}
    for line in weka_probe("cv", str(path)):
        row, *probs = line.split()
        weka[int(row)] = [float(p) for p in probs]
    t = load_arff(path)
    ours = {}
    for train, test in weka_cv_folds(t.y, 10, 1):
        for r, p in zip(test.tolist(), _fit(t, train, j48_params()).predict_proba(t.X[test]).tolist()):
            ours[r] = p
    assert ours == weka


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("declared", ["{a,b,}", "{,a,b}", "{a,?,b}", "{?,a,b}"])
def test_odd_nominal_declarations_give_weka_s_tree(declared, tmp_path):
    """A bare '?' in a nominal declaration is a value named '?' for Weka, an empty one is no
    value; liac-arff made both a value named 'None', a branch of the J48 tree Weka's has not (or
    has under another name)."""
    path = tmp_path / "odd.arff"
    path.write_text(f"@relation r\n@attribute v {declared}\n@attribute class {{S,N}}\n@data\n"
                    + "a,S\nb,N\n" * 4 + "b,N\n", encoding="utf-8")
    expected = weka_tree(weka_j48(path, "-no-cv", "-M", "1"))
    assert "v = a: S (4.0)" in expected
    assert run_arff(path, params={"min_num_obj": 1}, cv=False).tree == expected.rstrip("\n")


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed", [3, 7, 10, 13])
def test_instance_weights_give_weka_s_tree_and_cross_validation(seed, tmp_path, capsys):
    """Rows weighted '{w}' (Weka 3.6 reads them; hwnoise refused the file as malformed): J48's
    tree sums the weights (leaf counts such as '(7.35/2.1)') and its cross-validation counts
    them, here as Weka prints both."""
    path = weighted_arff(seed, tmp_path / f"w{seed}.arff")
    expected = weka_j48(path)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out
    assert weka_tree(expected) in out
    assert weka_cv(expected) in out


def zero_weighted_arff(seed: int, path: Path, share: float) -> Path:
    """Numeric attributes (values to 0-2 decimals, 5 % '?'), two classes, and about ``share`` of
    the rows weighing 0 (written '{0}' or '{0.0}'), the others 0.1 to 3 or 1, seeded."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(20, 300)), int(rng.integers(1, 5))
    X = np.round(rng.normal(size=(n, m)) * 5, int(rng.integers(0, 3)))
    y = np.where(X @ rng.normal(size=m) + rng.normal(size=n) > 0, "a", "b")
    lines = ["@relation z"] + [f"@attribute x{j} numeric" for j in range(m)] + ["@attribute class {a,b}", "@data"]
    for i in range(n):
        vals = ["?" if rng.random() < 0.05 else repr(float(v)) for v in X[i]]
        r = rng.random()
        w = "0" if r < share else "0.0" if r < share * 1.1 else str(round(float(rng.uniform(0.1, 3)), 2)) \
            if r < 0.7 else "1"
        lines.append(",".join([*vals, y[i]]) + ",{%s}" % w)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed,share", [(1, 0.3), (2, 0.6), (11, 0.9), (43, 0.9)])
def test_rows_of_weight_0_give_weka_s_tree_and_cross_validation(seed, share, tmp_path, capsys):
    """'{0}' was refused; Weka 3.6 keeps such a row among J48's split points and counts (the
    MDL correction counts its cuts), and weighs it 0 in the cross-validation. Seed 11: every row
    weighs 0 (Weka prints only 'Total Number of Instances 0'); seed 43: a fold trained on no
    weight leaves its test row unclassified (mean errors NaN, over the classified rows)."""
    path = zero_weighted_arff(seed, tmp_path / f"z{seed}.arff", share)
    expected = weka_j48(path)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out
    assert weka_tree(expected) in out
    assert weka_cv(expected) in out


def huge_arff(seed: int, path: Path, scale: float, divide: int = 1) -> Path:
    """Numeric attributes of normal values times ``scale`` (kept within +-1.7e308), then divided
    by ``divide``, two classes a linear cut gives or takes noise, seeded."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(30, 200)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, m))
    y = np.where(X @ rng.normal(size=m) + 0.5 * rng.normal(size=n) > 0, "a", "b")
    with np.errstate(over="ignore"):
        V = np.clip(X * scale, -1.7e308, 1.7e308) / divide
    lines = ["@relation h"] + [f"@attribute x{j} numeric" for j in range(m)] + ["@attribute class {a,b}", "@data"]
    lines += [",".join([*map(repr, V[i].tolist()), y[i]]) for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed,scale", [(0, 1e300), (1, 6e307), (3, 1.5e308), (7, 1.5e308)])
def test_numbers_near_the_double_limit_give_weka_s_tree(seed, scale, tmp_path, capsys):
    """Values near 1.8e308: where J48's midpoint (a + b) / 2 of two neighbours overflows to
    infinity (seeds 3 and 7), Weka 3.6 moves the cut to the largest value, sends every row left and
    recurses until a StackOverflowError, and hwnoise until a RecursionError traceback; the
    midpoint is now taken without the overflow, which gives the tree (cuts 16 times as large) and
    the cross-validation Weka gives for the same file divided by 16 (exact in binary)."""
    path = huge_arff(seed, tmp_path / f"h{seed}.arff", scale)
    small = huge_arff(seed, tmp_path / f"s{seed}.arff", scale, divide=16)
    expected = weka_j48(small)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out
    cut = re.compile(r"(<=|>) (-?[0-9.]+(?:E-?[0-9]+)?)")
    scaled = cut.sub(lambda m: f"{m.group(1)} {16 * float(m.group(2))!r}", weka_tree(expected))
    assert cut.sub(lambda m: f"{m.group(1)} {float(m.group(2))!r}", out).count(scaled) == 1
    assert weka_cv(expected) in out


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_infinite_values_give_weka_s_tree_and_cross_validation(seed, tmp_path, capsys):
    """'Infinity' (or 1e400, which Java reads as infinity) in a J48 file ended train in a
    ValueError traceback ('Input X contains infinity'); J48 takes it as a value above every
    other, and so does hwnoise now."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(30, 200)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, m))
    y = np.where(X @ rng.normal(size=m) + 0.5 * rng.normal(size=n) > 0, "a", "b")
    lines = ["@relation h"] + [f"@attribute x{j} numeric" for j in range(m)] + ["@attribute class {a,b}", "@data"]
    lines += [",".join([*("Infinity" if rng.random() < 0.05 else repr(float(v)) for v in X[i]), y[i]])
              for i in range(n)]
    path = tmp_path / f"inf{seed}.arff"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = weka_j48(path)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out
    assert weka_tree(expected) in out
    assert weka_cv(expected) in out


def dated_arff(seed: int, path: Path, n: int = 150) -> Path:
    """Two date attributes (a pattern with minutes, a bare day pattern) and a number, the class
    a cut on each date give or take noise, seeded."""
    from datetime import datetime, timedelta

    rng = np.random.default_rng(seed)
    start = datetime(2019, 6, 1)
    when = [start + timedelta(minutes=int(m)) for m in rng.integers(0, 600 * 24 * 60, n)]
    day = [start + timedelta(days=int(d)) for d in rng.integers(0, 900, n)]
    x = rng.normal(size=n)
    lines = ["@relation dates", "@attribute when date 'yyyy-MM-dd HH:mm'", "@attribute day date yyyy-MM-dd",
             "@attribute x numeric", "@attribute class {S,N}", "@data"]
    for w, d, v in zip(when, day, x):
        noise = rng.random() < 0.1
        y = "S" if ((w < datetime(2020, 3, 29, 2)) ^ noise) or (d > datetime(2021, 6, 1) and v > 0) else "N"
        lines.append(f"'{w:%Y-%m-%d %H:%M}',{d:%Y-%m-%d},{v:.3f},{y}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.weka
@needs_weka
@pytest.mark.parametrize("seed", [0, 2])
def test_date_attributes_give_weka_s_tree(seed, tmp_path, berlin):
    """Date attributes (hwnoise refused them) split as Weka splits them: on their milliseconds
    since the epoch in the local time zone, here Europe/Berlin for Java and hwnoise alike."""
    path = dated_arff(seed, tmp_path / f"d{seed}.arff")
    expected = weka_tree(weka_j48(path, "-no-cv"))
    assert "when <= 15" in expected and "day <= 16" in expected
    assert run_arff(path, cv=False).tree == expected.rstrip("\n")
