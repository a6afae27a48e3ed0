"""ARFF out and in: round trips, awkward values, malformed files, and real Weka reading them."""
from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hwnoise.errors import HwnoiseError
from hwnoise.training.arff import MAX_LINE_BYTES, ArffError, load_arff, read_arff, write_arff

WEKA_JAR = Path("/usr/share/java/weka.jar")
AWKWARD_PAGES = ["p1", "it's \"quoted\"", "{brace}", "?", "ünïcödé 中文 ☃", "a,b %c", "True", "",
                 "tab\there\nnewline", "back\\slash", "} trailing {", "x"]


def awkward_table() -> pd.DataFrame:
    n = len(AWKWARD_PAGES)
    return pd.DataFrame({
        "page": AWKWARD_PAGES,
        "ctd": [1.5, math.inf, -math.inf, math.nan, 0.1 + 0.2, 1e300, 5e-324, -2.25, 3.0, 4.0, 17.0, 6.0],
        "density_sum": [True, False] * (n // 2),
        "query_score": np.arange(n) * 0.5,
        "matches": np.arange(n, dtype=np.int64),
        "distance": np.arange(n) % 3,
        "label": ["S"] * (n - 3) + ["N", "N", None],
    })


def data_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().upper() == "@DATA")
    return [l for l in lines[start + 1:] if l.strip()]


# -- writing ------------------------------------------------------------------------------------

def test_round_trip_keeps_every_awkward_value(tmp_path):
    df = awkward_table()
    path = write_arff(df, tmp_path / "a.arff", page=True)
    back = read_arff(path)
    assert list(back.columns) == ["page", "ctd", "density_sum", "query_score", "matches", "distance", "label"]
    assert back["page"].tolist() == AWKWARD_PAGES
    np.testing.assert_array_equal(back["ctd"].to_numpy(), df["ctd"].to_numpy())  # bit-exact, inf and nan
    assert back["density_sum"].tolist() == [1.0, 0.0] * 6
    assert back["matches"].tolist() == list(range(12))
    assert back["label"].tolist()[:-1] == df["label"].tolist()[:-1]
    assert back["label"].isna().tolist()[-1]


def test_weka_spellings_of_inf_nan_and_quoting(tmp_path):
    path = write_arff(awkward_table(), tmp_path / "a.arff", page=True)
    rows = [l.split(",") for l in data_lines(path)]
    text = path.read_text(encoding="utf-8")
    assert "inf" not in text.replace("Infinity", "") and "nan" not in text.lower()
    line_inf = data_lines(path)[1]
    assert ",Infinity," in line_inf
    assert ",-Infinity," in data_lines(path)[2]
    assert data_lines(path)[3].startswith("'?',?,")        # the string "?" quoted, the NaN missing
    assert data_lines(path)[2].startswith("'{brace}',")    # braces quoted: Weka reads a bare { as sparse
    assert data_lines(path)[7].startswith("'',")            # empty string is not missing
    assert rows[-1][-1] == "?"                              # unlabelled row: missing class


def test_class_attribute_declares_both_values_even_for_all_noise(tmp_path):
    df = awkward_table().assign(label="S")
    path = write_arff(df, tmp_path / "noise.arff")
    header = path.read_text(encoding="utf-8").split("@DATA")[0]
    assert "@ATTRIBUTE result {S, N}" in header
    assert "page" not in header  # page is opt-in
    assert [l.split()[1] for l in header.splitlines() if l.startswith("@ATTRIBUTE")] == [
        "ctd", "density_sum", "query_score", "matches", "distance", "result"]


def test_nominal_feature_and_stdout(tmp_path, capsys):
    df = pd.DataFrame({"tag": ["div", "a", "my tag", "?"], "ctd": [1, 2, 3, 4], "label": ["S", "N", "S", "N"]})
    write_arff(df, "-", features=["tag", "ctd"], relation="tags")
    out = capsys.readouterr().out
    assert out.startswith("% written by hwnoise") and "\n@RELATION tags\n" in out
    assert "@ATTRIBUTE tag {'?', a, div, 'my tag'}" in out
    (tmp_path / "t.arff").write_text(out, encoding="utf-8")
    back = read_arff(tmp_path / "t.arff")
    assert isinstance(back["tag"].dtype, pd.CategoricalDtype)
    assert back["tag"].astype(str).tolist() == ["div", "a", "my tag", "?"]


def test_write_refuses_missing_columns_and_declares_other_labels(tmp_path):
    df = awkward_table()
    with pytest.raises(ArffError, match="no column"):
        write_arff(df.drop(columns="ctd"), tmp_path / "x.arff")
    assert not (tmp_path / "x.arff").exists()  # nothing half-written
    # a user's class set (from a Weka file) is declared as it is, not refused
    path = write_arff(df.assign(label=["yes", "no", "maybe"] * 4), tmp_path / "y.arff")
    assert "@ATTRIBUTE result {maybe, no, yes}" in path.read_text(encoding="utf-8")


def test_a_negative_zero_in_a_column_of_whole_numbers_keeps_its_sign(tmp_path):
    """A column of whole numbers is written as integers ("3", not "3.0"), and -0.0 was written
    "0": Weka (and read_arff) read +0.0. Such a column is written as floats; a column without
    -0.0 keeps its integers."""
    df = pd.DataFrame({"ctd": [-0.0, 1.0, 2.0], "matches": [0.0, 1.0, 2.0], "label": ["S", "N", "S"]})
    path = write_arff(df, tmp_path / "zero.arff", features=["ctd", "matches"])
    assert data_lines(path) == ["-0.0,0,S", "1.0,1,N", "2.0,2,S"]
    back = read_arff(path)["ctd"].to_numpy()
    assert np.signbit(back).tolist() == [True, False, False] and back.tolist() == [0.0, 1.0, 2.0]


# -- reading files users bring ------------------------------------------------------------------

USER_ARFF = """% made in Weka by hand
% with comments
@relation 'my data'

@attribute "text density" real
@attribute depth integer
@attribute kind {block, inline}
@attribute class {S,N}
@attribute extra numeric

@data
% a comment among the data
1.5, 3, block, S, 0
2.5, 4, inline, N, ?
{0 7.25, 2 inline, 3 N}
"""


def test_read_user_arff_with_comments_nominals_and_sparse_rows(tmp_path):
    path = tmp_path / "user.arff"
    path.write_text(USER_ARFF, encoding="utf-8")
    df = read_arff(path)
    assert list(df.columns) == ["text density", "depth", "kind", "label", "extra"]
    assert df["label"].tolist() == ["S", "N", "N"]
    assert df["text density"].tolist() == [1.5, 2.5, 7.25]
    assert df["depth"].tolist() == [3.0, 4.0, 0.0]          # sparse: absent means 0
    assert df["kind"].astype(str).tolist() == ["block", "inline", "inline"]
    assert math.isnan(df["extra"][1])


MALFORMED = {
    "bad number": ("@relation r\n@attribute a numeric\n@attribute result {S,N}\n@data\n1,S\n2,S\n"
                   "abc,N\n", 7),
    "too few values": ("@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute result {S,N}\n"
                       "@data\n1,2,S\n3,N\n", 7),
    "unknown class value": ("@relation r\n@attribute a numeric\n@attribute result {S,N}\n@data\n1,S\n1,X\n", 6),
    "bad type": ("@relation r\n@attribute a numeric\n@attribute b datetime\n@attribute result {S,N}\n@data\n", 3),
    "value not declared": ("@relation r\n@attribute a {x,y}\n@attribute result {S,N}\n@data\nx,S\nz,N\n", 6),
    "not a number": ("@relation r\n@attribute a numeric\n@attribute result {S,N}\n@data\n1,S\n\n2x,N\n", 7),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_arff_names_file_and_line(tmp_path, case):
    text, line = MALFORMED[case]
    path = tmp_path / "bad.arff"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ArffError) as info:
        read_arff(path)
    assert isinstance(info.value, HwnoiseError)
    assert f"{path}:{line}:" in str(info.value)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_arff_after_comment_and_blank_lines_names_the_files_line(tmp_path, case):
    """The lines were counted from the first that is not blank: in a file that opens with a
    comment (every ARFF file hwnoise writes) or blank lines, a row of too few values, a bad type
    or an undeclared value was named a line or more above where it is."""
    text, line = MALFORMED[case]
    path = tmp_path / "bad.arff"
    path.write_text("% written by hand\n\n% another comment\n" + text, encoding="utf-8")
    with pytest.raises(ArffError) as info:
        read_arff(path)
    assert f"{path}:{line + 3}:" in str(info.value)


def test_missing_file_and_no_data_section(tmp_path):
    with pytest.raises(ArffError, match="no such ARFF file"):
        read_arff(tmp_path / "absent.arff")
    path = tmp_path / "nodata.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute result {S,N}\n", encoding="utf-8")
    with pytest.raises(ArffError, match=str(path)):
        read_arff(path)


@pytest.mark.parametrize("text,what", [("", "an empty file"), ("\n  \n", "an empty file"),
                                       ("@relation r\n@attribute a numeric\n% @data\n1\n", "no @DATA line"),
                                       ("a,b,c\n1,2,3\n", "no @DATA line")])
def test_a_file_without_a_data_section_says_so(tmp_path, text, what):
    """An empty file, or one without '@DATA' (a CSV, a header alone), was 'Invalid layout of the
    ARFF file' at its last line; it is named for what it lacks now."""
    path = tmp_path / "x.arff"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ArffError, match=re.escape(f"{path}: not an ARFF file ({what})")):
        read_arff(path)


# -- real Weka ----------------------------------------------------------------------------------

def weka(*args: str) -> str:
    """Run a Weka class; Weka exits 0 even on errors, so return stdout+stderr to be read."""
    proc = subprocess.run(["java", "-Xmx512m", "-cp", str(WEKA_JAR), *args],
                          capture_output=True, text=True, encoding="utf-8")
    return proc.stdout + proc.stderr


def assert_weka_ok(output: str) -> None:
    bad = [l for l in output.splitlines() if "Exception" in l or l.lower().startswith(("error", "weka.core"))
           or "read Token" in l or "not recognized" in l]
    assert not bad, output[:2000]


needs_weka = pytest.mark.skipif(not WEKA_JAR.exists(), reason="Weka not installed (/usr/share/java/weka.jar)")


@pytest.mark.weka
@needs_weka
def test_weka_reads_awkward_values_exactly(tmp_path):
    path = write_arff(awkward_table(), tmp_path / "awkward.arff", page=True)
    out = weka("weka.filters.AllFilter", "-i", str(path))
    assert_weka_ok(out)
    rows = data_lines_from_text(out)
    assert len(rows) == len(AWKWARD_PAGES)
    assert rows[1].split(",")[1] == "Infinity" and rows[2].split(",")[1] == "-Infinity"
    assert rows[3].startswith("'?',?,")  # Weka kept the string "?" and the missing number apart
    summary = weka("weka.core.Instances", str(path))
    assert_weka_ok(summary)
    page_line = next(l for l in summary.splitlines() if l.split()[1:2] == ["page"])
    assert page_line.split()[6:8] == ["0", "/"]  # no page value read as missing
    assert "Num Instances:  12" in summary


@pytest.mark.weka
@needs_weka
def test_weka_reads_the_relation_name_as_given(tmp_path):
    """``export-arff --relation`` (or a dataset's name) is written quoted as values are, so Weka
    reads the name given; it was made Weka-safe by replacing characters ("it's {x}, 50%" became
    it_s_x_50, "ü ☃" became ü)."""
    df = awkward_table().drop(columns="page")
    for name in ("ü ☃", "it's {x}, 50%", "plain-name"):
        path = write_arff(df, tmp_path / "r.arff", relation=name)
        summary = weka("weka.core.Instances", str(path))
        assert_weka_ok(summary)
        assert f"Relation Name:  {name}" in summary.splitlines(), (name, summary[:300])
        assert len(load_arff(path).y) == len(df)


@pytest.mark.weka
@needs_weka
def test_weka_j48_trains_on_an_all_noise_page(tmp_path):
    df = awkward_table().drop(columns="page").assign(label="S")
    path = write_arff(df, tmp_path / "noise.arff")
    out = weka("weka.classifiers.trees.J48", "-t", str(path), "-no-cv")
    assert_weka_ok(out)
    assert "J48 pruned tree" in out and ": S (12.0)" in out
    assert "Correctly Classified Instances          12" in out


@pytest.mark.weka
@needs_weka
def test_weka_reads_nominal_features_and_unicode_strings(tmp_path):
    df = pd.DataFrame({"page": ["é", "中", "'", '"'], "tag": ["div", "a b", "{x}", "?"],
                       "ctd": [1.0, 2.0, 3.0, 4.0], "label": ["S", "N", "S", "N"]})
    path = write_arff(df, tmp_path / "nominal.arff", features=["tag", "ctd"], page=True)
    out = weka("weka.filters.AllFilter", "-i", str(path))
    assert_weka_ok(out)
    assert "@attribute tag {'?',a b,div,{x}}".replace("a b", "'a b'").replace("{x}", "'{x}'") in out
    rows = data_lines_from_text(out)
    assert [r.split(",")[0] for r in rows] == ["é", "中", "'\\''", "'\\\"'"]


def data_lines_from_text(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().lower() == "@data")
    return [l for l in lines[start + 1:] if l.strip()]


def test_fast_reader_agrees_with_liac_arff(tmp_path):
    """Plain dense data goes through the fast reader; a quoted value forces liac-arff: same table."""
    rng = np.random.RandomState(0)
    df = pd.DataFrame({"page": rng.choice(["a1", "b2", "c3"], 200), "ctd": rng.exponential(9, 200),
                       "density_sum": rng.randint(0, 5, 200), "query_score": rng.rand(200),
                       "matches": rng.poisson(1, 200), "distance": rng.randint(0, 9, 200),
                       "label": rng.choice(["S", "N", None], 200)})
    df.loc[3, "ctd"], df.loc[4, "ctd"], df.loc[5, "ctd"] = math.inf, -math.inf, math.nan
    fast = write_arff(df, tmp_path / "fast.arff", page=True)
    slow = tmp_path / "slow.arff"
    slow.write_text(fast.read_text(encoding="utf-8").replace(",S\n", ",'S'\n"), encoding="utf-8")
    a, b = read_arff(fast), read_arff(slow)
    pd.testing.assert_frame_equal(a, b)
    np.testing.assert_array_equal(a["ctd"].to_numpy(), df["ctd"].to_numpy())
    assert a["label"].tolist() == [None if pd.isna(v) else v for v in df["label"]]  # None, not NaN


def test_plain_rows_with_spaces_after_commas(tmp_path):
    """'1, x, S' (spaces around plain values, no comment) goes through the fast reader, whose
    stripped tokens were a read-only array under pandas 3: a traceback, not a table."""
    path = tmp_path / "spaced.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute class {S,N}\n@data\n"
                    "1, x, S\n 2 ,y , N\n?, ?, ?\n", encoding="utf-8")
    df = read_arff(path)
    assert df["a"].tolist()[:2] == [1.0, 2.0] and math.isnan(df["a"][2])
    assert df["b"].astype(object).tolist()[:2] == ["x", "y"] and df["label"].tolist() == ["S", "N", None]


def test_percent_in_a_malformed_row_is_an_error_not_a_traceback(tmp_path):
    """"1,'x%c'" (a row short of a value, a '%' in a quoted value): liac-arff's message carries
    the row, and its '%' broke liac-arff's own '... line %d' % line formatting (TypeError, a
    traceback)."""
    path = tmp_path / "pct.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute class {S,N}\n@data\n"
                    "1,'x%c'\n2,y,N\n", encoding="utf-8")
    with pytest.raises(ArffError, match=rf"{path}:6: .*1,'x%c'"):
        read_arff(path)


COMMENTED = ("@relation r % the relation\n@attribute a numeric % a number\n@attribute s string\n"
             "@attribute class {S,N}%no space\n@data % rows follow\n"
             "1,x,S % a note\n2,y,N%note\n% between\n  % indented\n3,'a % b',S\n4,\"c\\%d\",N  %tail\n")


def test_comments_after_values_are_cut_as_weka_cuts_them(tmp_path):
    """Weka reads a '%' outside quotes as a comment to the end of the line, after a row's values
    ('1,x,S % a note') as after a declaration; liac-arff refused both ("Invalid layout", "Bad
    @RELATION format"). A '%' in a quoted value stays; an error names its line after '@data % ...'
    (it was line 0)."""
    path = tmp_path / "commented.arff"
    path.write_text(COMMENTED, encoding="utf-8")
    df = read_arff(path)
    assert df["a"].tolist() == [1.0, 2.0, 3.0, 4.0] and df["s"].tolist() == ["x", "y", "a % b", "c%d"]
    assert df["label"].tolist() == ["S", "N", "S", "N"]
    path.write_text(COMMENTED.replace("2,y,N%note", "two,y,N%note"), encoding="utf-8")
    with pytest.raises(ArffError, match=f"{path}:7: 'two' is not a number"):
        read_arff(path)
    path.write_text(COMMENTED.replace("1,x,S % a note", "1,x % S"), encoding="utf-8")
    with pytest.raises(ArffError, match=f"{path}:6: "):   # Weka: "premature end of line"
        read_arff(path)


def test_empty_and_duplicate_nominal_declarations(tmp_path):
    """'{}' declares no values (Weka 3.6 reads the file, every value '?', and J48 trains on it);
    '{a,a,b}' Weka refuses ("cannot have duplicate labels"). Both were tracebacks (IndexError in
    liac-arff, InvalidIndexError in the value lookup)."""
    empty = tmp_path / "empty.arff"
    empty.write_text("@relation r\n@attribute v {}\n@attribute w { }\n@attribute a numeric\n"
                     "@attribute class {S,N}\n@data\n?,?,1,S\n?,?,2,N\n", encoding="utf-8")
    df = read_arff(empty)
    assert list(df["v"].cat.categories) == [] and df["v"].isna().all() and df["w"].isna().all()
    assert df["a"].tolist() == [1.0, 2.0] and df["label"].tolist() == ["S", "N"]
    bad = tmp_path / "empty_value_used.arff"
    bad.write_text("@relation r\n@attribute v {}\n@attribute class {S,N}\n@data\nx,S\n", encoding="utf-8")
    with pytest.raises(ArffError, match=f"{bad}:5:"):
        read_arff(bad)
    dup = tmp_path / "dup.arff"
    dup.write_text("@relation r\n@attribute a numeric\n@attribute v {a,'a',b}\n@attribute class {S,N}\n@data\n"
                   "1,a,S\n", encoding="utf-8")
    with pytest.raises(ArffError, match=f"{dup}:3: .*'a' twice"):
        read_arff(dup)


def test_integer_attributes_keep_their_values_on_the_slow_reader(tmp_path):
    """Weka reads an 'integer' attribute as any number: 2.5 stays 2.5, 1e400 is Infinity.
    liac-arff (the reader of files with comments, quotes or braces) cut 2.5 to 2 and -0.5 to 0,
    silently, and raised OverflowError (a traceback) on 1e400 or Infinity."""
    path = tmp_path / "int.arff"
    path.write_text("@relation r\n@attribute a integer\n@attribute class {S,N}\n@data\n% a comment\n"
                    "2.5,S\n-0.5,N\n1e400,S\nInfinity,N\nNaN,S\n7,'N'\n", encoding="utf-8")
    a = read_arff(path)["a"].tolist()
    assert a[:4] == [2.5, -0.5, math.inf, math.inf] and math.isnan(a[4]) and a[5] == 7.0
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a integer\n@attribute class {S,N}\n@data\n% c\n1,S\nx,N\n",
                   encoding="utf-8")
    with pytest.raises(ArffError, match=f"{bad}:7: 'x' is not a number"):
        read_arff(bad)


@pytest.mark.parametrize("q", ["", "'"])  # a quoted class: the slow reader
def test_numbers_are_read_with_javas_grammar(tmp_path, q):
    """Weka reads numbers with Java's Double.valueOf: '1d', '2.5f' and '0x1p4' are numbers (hwnoise
    refused them), 'inf', 'nan', 'INF', '1_000' and fullwidth digits are not (hwnoise read them,
    through Python's float), and '-0' is -0.0 (pandas gave 0)."""
    head = "@relation r\n@attribute a numeric\n@attribute class {S,N}\n@data\n"
    path = tmp_path / "java.arff"
    path.write_text(head + f"1d,{q}S{q}\n2.5f,N\n0x1p4,S\n0x1.8p1D,N\n-0,S\n+3,N\n.5,S\nNaN,N\n-Infinity,S\n1e5,N\n",
                    encoding="utf-8")
    a = read_arff(path)["a"].to_numpy()
    np.testing.assert_array_equal(a, [1.0, 2.5, 16.0, 3.0, -0.0, 3.0, 0.5, np.nan, -np.inf, 1e5])
    assert math.copysign(1, a[4]) == -1
    for bad in ["inf", "nan", "INF", "infinity", "1_000", "\uff11\uff12", "0x10"]:
        path.write_text(head + f"1,{q}S{q}\n" + bad + ",N\n", encoding="utf-8")
        with pytest.raises(ArffError, match=f"{path}:6: .* is not a number"):
            read_arff(path)


def test_quoted_attribute_names_are_unescaped_as_weka_does(tmp_path):
    """Weka reads '@attribute 'it\\'s' numeric' as the name it's; liac-arff stripped the quotes
    and kept the backslash (it\\'s), so hwnoise's tree and columns named another attribute."""
    path = tmp_path / "names.arff"
    path.write_text("@relation r\n@attribute 'it\\'s' numeric\n@attribute \"say \\\"x\\\"\" numeric\n"
                    "@attribute 'a\\tb' numeric\n@attribute 'a\\\\b c' numeric\n@attribute plain numeric\n"
                    "@attribute class {S,N}\n@data\n1,2,3,4,5,S\n", encoding="utf-8")
    assert list(read_arff(path).columns) == ["it's", 'say "x"', "a\tb", "a\\b c", "plain", "label"]


AWKWARD_NAMES = ["it's", 'say "x"', "a\tb", "a\\b c", "'lead", '"both"', "a\nb", "größe 中"]


def test_awkward_attribute_names_are_written_quoted_and_escaped(tmp_path):
    """liac-arff wrote names in bare double quotes, unescaped, and only when they held ' %{},':
    @ATTRIBUTE it's NUMERIC, @ATTRIBUTE "say "x"" NUMERIC, a raw tab or newline, "a\\b c" (Weka
    reads \\b as a backspace). Weka refused or misread such a file (a Weka user's attribute names
    reach write_arff through train --out's train.arff)."""
    df = pd.DataFrame({n: [1.0, 2.0] for n in AWKWARD_NAMES} | {"label": ["S", "N"]})
    path = write_arff(df, tmp_path / "names.arff", features=AWKWARD_NAMES)
    text = path.read_text(encoding="utf-8")
    assert "@ATTRIBUTE 'it\\'s' NUMERIC\n" in text and "@ATTRIBUTE 'a\\\\b c' NUMERIC\n" in text
    assert "@ATTRIBUTE 'a\\tb' NUMERIC\n" in text and "@ATTRIBUTE 'a\\nb' NUMERIC\n" in text
    assert list(read_arff(path).columns) == AWKWARD_NAMES + ["label"]


@pytest.mark.weka
@needs_weka
def test_weka_reads_comments_after_values_as_hwnoise_does(tmp_path):
    path = tmp_path / "commented.arff"
    path.write_text(COMMENTED, encoding="utf-8")
    out = weka("weka.filters.AllFilter", "-i", str(path))
    assert_weka_ok(out)
    assert data_lines_from_text(out) == ["1,x,S", "2,y,N", "3,'a \\% b',S", "4,'c\\%d',N"]


@pytest.mark.weka
@needs_weka
def test_weka_reads_awkward_attribute_names(tmp_path):
    df = pd.DataFrame({n: [1.0, 2.0] for n in AWKWARD_NAMES} | {"label": ["S", "N"]})
    path = write_arff(df, tmp_path / "names.arff", features=AWKWARD_NAMES)
    out = weka("weka.core.Instances", str(path))
    assert_weka_ok(out)
    assert "Num Instances:  2" in out and "Num Attributes: 9" in out
    out = weka("weka.filters.AllFilter", "-i", str(path))
    assert "@attribute 'it\\'s' numeric" in out and "@attribute 'a\\\\b c' numeric" in out


def test_a_row_on_the_data_line_is_refused_not_dropped(tmp_path):
    """'@data 1,S': Weka reads 1,S as the first row; liac-arff dropped it without a word (the
    file read as one row short). A comment after @data stays fine."""
    path = tmp_path / "same_line.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute class {S,N}\n@data 1,S\n2,N\n",
                    encoding="utf-8")
    with pytest.raises(ArffError, match=rf"{path}:4: values on the @data line \('1,S'\)"):
        read_arff(path)
    ok = tmp_path / "comment.arff"
    ok.write_text("@relation r\n@attribute a numeric\n@attribute class {S,N}\n@DATA % rows\n1,S\n2,N\n",
                  encoding="utf-8")
    assert read_arff(ok)["label"].tolist() == ["S", "N"]


def test_a_tab_after_the_declaration_keywords_is_read_as_weka_reads_it(tmp_path):
    """'@attribute<TAB>a<TAB>numeric' (Weka reads it): liac-arff split the keyword off at a space
    only, and the file was refused as "not enough values to unpack"."""
    path = tmp_path / "tabs.arff"
    path.write_text("@relation\tr\n@attribute\ta\tnumeric\n@ATTRIBUTE \t 'b c'\t{x,y}\n@attribute\tclass\t{S,N}\n"
                    "@data\n1,x,S\n2,y,N\n", encoding="utf-8")
    df = read_arff(path)
    assert list(df.columns) == ["a", "b c", "label"] and df["a"].tolist() == [1.0, 2.0]
    assert df["label"].tolist() == ["S", "N"]


def test_a_gigantic_line_is_refused_naming_it(tmp_path):
    """A line without end (a 1 GB line, no newline) was read whole, then split and matched, and
    a line of 64 MiB of digits was read as a row (Infinity): refused now once the line passes
    MAX_LINE_BYTES, naming it (CRLF line ends counted as one)."""
    path = tmp_path / "huge.arff"
    with open(path, "wb") as fh:
        fh.write(b"@relation r\r\n@attribute a numeric\r\n@attribute class {S,N}\r\n@data\r\n1,S\r\n")
        block = b"1" * (1 << 20)
        for _ in range(MAX_LINE_BYTES >> 20):
            fh.write(block)
        fh.write(b",S")
    try:
        with pytest.raises(ArffError, match=rf"{path}:6: a line longer than {MAX_LINE_BYTES >> 20} MiB"):
            read_arff(path)
    finally:
        path.unlink()


def test_a_latin1_file_with_cr_line_ends_is_read(tmp_path):
    """Line ends are made '\\n' on both decodings: a latin-1 file with CR line ends (read as Weka
    reads it) was one line, "Bad @RELATION format", where the same file in UTF-8 was read."""
    path = tmp_path / "mac.arff"
    path.write_bytes("@relation r\r@attribute 'caf\xe9' numeric\r@attribute class {S,N}\r@data\r1,S\r2,N\r"
                     .encode("latin-1"))
    df = read_arff(path)
    assert list(df.columns) == ["caf\xe9", "label"] and df["label"].tolist() == ["S", "N"]


WEIGHTED = ("@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute class {S,N}\n@data\n"
            "1,x,S,{2}\n2,y,N {0.5} % a note\n\n{0 3,2 N},{3}\n{0 4, 1 y, 2 S}\n5,x,S{NaN}\n6,'y',N, { 0x1p1 }\n")


def test_instance_weights_are_read_as_weka_reads_them(tmp_path):
    """Weka 3.6 reads '{w}' after a row's values (dense or sparse, after a comma, a space or
    nothing) as its instance weight, with Double.parseDouble ({NaN} is no weight); hwnoise refused
    such a row as malformed. The J48 path takes the weights; read_arff (the path of the other
    classifiers and protocols, which would train as if every row weighed 1) refuses them naming
    the first weighted line."""
    path = tmp_path / "weighted.arff"
    path.write_text(WEIGHTED, encoding="utf-8")
    t = load_arff(path)
    assert t.X.tolist() == [[1, 0], [2, 1], [3, 0], [4, 1], [5, 0], [6, 1]] and t.y.tolist() == [0, 1, 1, 0, 0, 1]
    assert t.weights.tolist() == [2, 0.5, 3, 1, 1, 2] and t.weighted_line == 6
    with pytest.raises(ArffError, match=f"{path}:6: instance weights"):
        read_arff(path)
    plain = tmp_path / "ones.arff"
    plain.write_text(WEIGHTED.replace("{2}", "{1}").replace("{0.5}", "").replace(",{3}", "")
                     .replace("{ 0x1p1 }", "{1.0}"), encoding="utf-8")
    assert load_arff(plain).weights is None and read_arff(plain)["a"].tolist() == [1, 2, 3, 4, 5, 6]
    path.write_text(WEIGHTED.replace("{0.5}", "{0}"), encoding="utf-8")  # refused before: Weka takes it
    assert load_arff(path).weights.tolist() == [2, 0, 3, 1, 1, 2]
    for bad, why in [("{abc}", "is not a number"), ("{-1}", "negative"), ("{Infinity}", "infinite"),
                     ("{}", "is not a number")]:
        path.write_text(WEIGHTED.replace("{0.5}", bad), encoding="utf-8")
        with pytest.raises(ArffError, match=f"{path}:7: instance weight .*{why}"):
            load_arff(path)


@pytest.mark.weka
@needs_weka
def test_weka_reads_instance_weights_as_hwnoise_does(tmp_path):
    path = tmp_path / "weighted.arff"
    path.write_text(WEIGHTED, encoding="utf-8")
    out = weka("weka.filters.AllFilter", "-i", str(path))
    assert_weka_ok(out)
    assert data_lines_from_text(out) == ["1,x,S,{2}", "2,y,N,{0.5}", "{0 3,2 N},{3}", "{0 4,1 y}", "5,x,S",
                                         "6,y,N,{2}"]


DATED = ("@relation r\n@attribute iso date\n@attribute day date 'dd.MM.yyyy HH:mm'\n"
         "@attribute packed DATE yyyyMMdd % a bare pattern\n@attribute class {S,N}\n@data\n"
         "2020-01-05T10:20:30,'05.01.2020 23:59',20200105,S\n"
         "'2020-10-25T02:30:00 and more',' 25.10.2020  1:30',2020015,N\n"
         "?,'31.12.1999 00:00',19000101,S\n")


def test_date_attributes_are_read_as_weka_reads_them(tmp_path, berlin):
    """Weka reads a date attribute (default format yyyy-MM-dd'T'HH:mm:ss, or a SimpleDateFormat
    pattern) as milliseconds since the epoch, the date in the local time zone; hwnoise refused
    the file ('Bad @ATTRIBUTE type'). The figures are Weka 3.6.14's with TZ=Europe/Berlin: an
    hour the clocks repeat is its later instant, text after the date is ignored, spaces before a
    number skipped, and 'yyyyMMdd' reads four digits, two, then the rest ('2020015')."""
    path = tmp_path / "dated.arff"
    path.write_text(DATED, encoding="utf-8")
    t = load_arff(path)
    assert t.names == ["iso", "day", "packed"]
    X = t.X.tolist()
    assert X[0] == [1578216030000, 1578265140000, 1578178800000]
    assert X[1] == [1603589400000, 1603582200000, 1578178800000]
    assert math.isnan(X[2][0]) and X[2][1:] == [946594800000, -2208992400000]
    assert read_arff(path)["day"].tolist()[0] == 1578265140000
    for row, why in [("2020-02-30T00:00:00,'05.01.2020 23:59',20200105,S", "'2020-02-30T00:00:00' .* no such date"),
                     ("2020-03-29T02:30:00,'05.01.2020 23:59',20200105,S", "clocks skip"),  # Weka refuses it
                     ("2020-01-05T10:20:30,'05.01.20 23:59',20200105,S", "'05.01.20 23:59' .* year outside"),
                     ("2020-01-05T10:20:30,'05.01.1850 23:59',20200105,S", "year outside 1900"),
                     ("2020-01-05T10:20:30,'5 Jan 2020',20200105,S", "'5 Jan 2020' is not a date of attribute 'day' "
                      "\\(format 'dd.MM.yyyy HH:mm'\\): not in that format")]:
        path.write_text(DATED.replace("?,'31.12.1999 00:00',19000101,S", row), encoding="utf-8")
        with pytest.raises(ArffError, match=f"{path}:9: .*{why}"):
            load_arff(path)
    path.write_text(DATED.replace("dd.MM.yyyy", "dd.MM.yy").replace("31.12.1999", "31.12.99"), encoding="utf-8")
    with pytest.raises(ArffError, match=f"{path}:9: '31.12.99 00:00' .* two-digit year"):
        load_arff(path)                      # 'yy' reads '2020' as 2020, '99' by today's date
    for pattern, what in [("'EEE, d MMM yyyy'", "'EEE' \\(day name\\)"), ("'dd MMM yyyy'", "'MMM' \\(month name\\)"),
                          ("'yyyy-MM-dd Z'", "'Z' \\(time zone\\)")]:
        path.write_text(DATED.replace("'dd.MM.yyyy HH:mm'", pattern), encoding="utf-8")
        with pytest.raises(ArffError, match=f"{path}:3: date attribute 'day': pattern .*{what} is not read"):
            load_arff(path)


_HEAD = "% a comment first\n\n@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute class {S,N}\n"
_ROWS = "@data\n1,2,S\n3,4,N\n"
#: Files Weka's ArffLoader refuses that hwnoise read (every one trained a model without a word,
#: but the two marked "layout", called "Invalid layout", and "no name", a Python unpacking error),
#: with the line Weka names, what Weka says and what hwnoise says
WEKA_REFUSES = {
    "a note without % in the header": (_HEAD.replace("@attribute b", "a note\n@attribute b") + _ROWS, 5,
                                       "keyword @data expected", "keyword @attribute or @data expected, read 'a'"),
    "@attributes": (_HEAD.replace("@attribute b", "@attributes b") + _ROWS, 5, "keyword @data expected",
                    "read '@attributes'"),
    "@relations": (_HEAD.replace("@relation r", "@relations r") + _ROWS, 3, "keyword @relation expected",
                   "keyword @relation expected, read '@relations'"),
    "layout: no @relation": (_HEAD.replace("@relation r\n", "") + _ROWS, 3, "keyword @relation expected",
                             "keyword @relation expected, read '@attribute'"),
    "layout: @relation twice": (_HEAD.replace("@relation r\n", "@relation r\n@relation s\n") + _ROWS, 4,
                                "keyword @data expected", "a second @relation"),
    "no name": (_HEAD.replace("@relation r", "@relation") + _ROWS, 3, "premature end of line",
                "@relation without a name"),
    "sparse indices out of order": (_HEAD + _ROWS + "{2 S, 0 1}\n", 10, "indices have to be ordered",
                                    "indices must be in increasing order, as Weka reads them (0 after 2)"),
    "a sparse index twice": (_HEAD + _ROWS + "{0 1, 0 2, 2 S}\n", 10, "indices have to be ordered", "(0 after 0)"),
}


@pytest.mark.parametrize("case", sorted(WEKA_REFUSES))
def test_a_file_weka_refuses_for_its_layout_is_refused_naming_its_line(tmp_path, case):
    text, line, _weka_says, says = WEKA_REFUSES[case]
    path = tmp_path / "bad.arff"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ArffError) as info:
        load_arff(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and says in str(info.value), str(info.value)


@pytest.mark.weka
@needs_weka
def test_weka_refuses_those_files_at_those_lines(tmp_path):
    for case, (text, line, weka_says, _) in WEKA_REFUSES.items():
        path = tmp_path / "bad.arff"
        path.write_text(text, encoding="utf-8")
        out = weka("weka.core.Instances", str(path))
        weka_line = line + 1 if case == "no name" else line  # Weka names the line after the EOL it read
        assert weka_says in out and f"line {weka_line}" in out, (case, out[:500])
    path.write_text(_HEAD + _ROWS + "{0 1, 2 S}\n", encoding="utf-8")  # the same files, made right, read
    assert "Num Instances:  3" in weka("weka.core.Instances", str(path))
    assert load_arff(path).X.tolist() == [[1, 2], [3, 4], [1, 0]]
