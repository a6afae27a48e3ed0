"""What hwnoise says when a user gets something wrong: one line, the right exit code, nothing false.

The contract (README, "Commands"): a misuse of the command line prints one line
``hwnoise: error: ...`` and exits 2; a run that fails on its input or its output place prints one
line ``hwnoise: error: ...`` naming the file and what to do, and exits 1; nothing already
written is lost and nothing is announced that was not written.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset

PAGE = ("<html><head><title>Books</title></head><body>"
        "<div class='menu'><a href='/'>Home</a> <a href='/about'>About us</a> <a href='/help'>Help</a></div>"
        "<div class='record'><h2>Book {i}: the title of a record</h2>"
        "<p>An interesting record about books and authors, number {i}, with many words to read here.</p></div>"
        "<div class='foot'>Copyright 2024, the footer of every page of this site</div></body></html>")
GOLD = "Book {i}: the title of a record\nAn interesting record about books and authors, number {i}, with many words to read here.\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" + bytes(64)


def plain_source(root: Path, n: int = 4, gold: bool = True, png: bool = False) -> Path:
    """A plain source folder: html/pN.html (+ gold/pN.txt), and optionally a PNG named .html."""
    (root / "html").mkdir(parents=True)
    if gold:
        (root / "gold").mkdir()
    for i in range(n):
        (root / "html" / f"p{i}.html").write_text(PAGE.format(i=i), encoding="utf-8")
        if gold:
            (root / "gold" / f"p{i}.txt").write_text(GOLD.format(i=i), encoding="utf-8")
    if png:
        (root / "html" / "picture.html").write_bytes(PNG)
    return root


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``hwnoise ARGV`` in this process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("hwnoise: error: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def dataset(tmp_path, capsys) -> Path:
    src = plain_source(tmp_path / "src")
    code, out, _ = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds"), "-q")
    assert code == 0
    return Path(out.strip())


@pytest.fixture
def blocked(tmp_path) -> Path:
    """A path no one can write: its parent is a regular file (root ignores permissions)."""
    (tmp_path / "a-file").write_text("x")
    return tmp_path / "a-file" / "out"


# -- the command line ------------------------------------------------------------------------

@pytest.mark.parametrize("argv, names", [
    (["train", "x", "--protocol", "page"], ["train", "--protocol", "'page'"]),
    (["import", "foo", "src", "--into", "d"], ["import", "'foo'", "plain"]),
    (["frobnicate"], ["'frobnicate'"]),
    # a charset label no browser knows would be ignored as a browser ignores it: a typo passes unseen
    (["extract", "page.html", "--charset", "utf8x"], ["extract", "--charset", "'utf8x'", "utf-8"]),
    (["features", "page.html", "--charset", "utf-7"], ["features", "--charset", "'utf-7'"]),
    # no page, or one, could not be split into training and test pages
    (["demo", "--submissions", "0"], ["demo", "--submissions", "'0'", "2 or more"]),
    # a port past 65535 was a traceback (OverflowError from bind); negative workers ran on one
    (["label", "d", "--serve", "--port", "99999"], ["label", "--port", "'99999'", "0 (a free one) to 65535"]),
    (["train", "d", "--workers", "-1"], ["train", "--workers", "'-1'", "1 or more"]),
    (["evaluate", "d", "--workers", "0"], ["evaluate", "--workers", "'0'", "1 or more"]),
    (["features", "d", "--workers", "0"], ["features", "--workers", "'0'", "1 or more"]),
    (["import", "plain", "src", "--into", "d", "--limit", "0"], ["import", "--limit", "'0'", "1 or more"]),
])
def test_bad_option_values_print_one_line_and_exit_2(capsys, argv, names):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "usage:" not in err
    line = one_error_line(err)
    assert all(n in line for n in names) and "--help" in line


def _subcommands() -> list[str]:
    from hwnoise.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


@pytest.mark.parametrize("command", _subcommands())
def test_help_text_has_no_format_escapes_left(capsys, command):
    """Every subcommand's --help as a user reads it: train's said 'pooled random 66%% node split'
    (a description is %-formatted only when it holds %(prog)s, so its '%%' was printed as is)."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and f"usage: hwnoise {command}" in out
    assert "%%" not in out and "%(" not in out


@pytest.mark.parametrize("command", [c for c in _subcommands() if c != "help"])
def test_help_command_shows_a_commands_help_as_git_and_pip_do(capsys, command):
    """'hwnoise help train' (as 'git help', 'pip help install') was an unknown command."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    code, same, err = run(capsys, "help", command)
    assert (code, same, err) == (0, out, "")


def test_help_alone_lists_the_commands_and_an_unknown_one_is_a_usage_error(capsys):
    code, out, _ = run(capsys, "help")
    assert code == 0 and out.startswith("usage: hwnoise") and "evaluate" in out and "export-arff" in out
    code, _, err = run(capsys, "help", "trian")
    assert code == 2 and one_error_line(err).startswith("hwnoise: error: help: no command 'trian'; choose one of demo")


def test_evaluate_help_says_where_the_report_goes_by_default(capsys):
    """'--out OUT  output folder': a run without it wrote ./hwnoise-evaluation, which only the
    run's last line told."""
    code, out, _ = run(capsys, "evaluate", "--help")
    assert code == 0 and "(default: ./hwnoise-evaluation)" in " ".join(out.split())


@pytest.mark.parametrize("argv", [["train", "--preset", "thesis"], ["train", "--protocol", "thesis"],
                                  ["evaluate", "--methods", "cetd"], ["evaluate", "--protocol", "thesis"]])
def test_folds_given_to_a_protocol_without_folds_are_refused(dataset, tmp_path, capsys, argv):
    """-k with the pages or thesis protocol was dropped without a word, and the pages (or node)
    split scored as if the folds had been run."""
    command, *rest = argv
    out = tmp_path / "out"
    code, stdout, err = run(capsys, command, str(dataset), *rest, "-k", "3", "--out", str(out))
    assert code == 1 and stdout == ""
    protocol = rest[1] if rest[0] == "--protocol" else "pages"
    assert f"-k 3 is the number of folds of cv and cross-site; --protocol {protocol} has none" in one_error_line(err)
    assert not out.exists() or list(out.iterdir()) == []


def test_label_serve_on_a_port_in_use_is_one_line(dataset, capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run(capsys, "label", str(dataset), "--serve", "--port", str(port), "--no-open")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert f"--port {port} is in use" in line and "no --port for a free one" in line


def test_real_process_exit_codes(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "hwnoise.cli", "evaluate", "d", "--protocol", "page"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("hwnoise: error: evaluate: ")
    failed = subprocess.run([sys.executable, "-m", "hwnoise.cli", "features", str(tmp_path / "missing.html")],
                            capture_output=True, text=True)
    assert failed.returncode == 1 and failed.stderr.startswith("hwnoise: error: ")


# -- evaluate without gold -------------------------------------------------------------------

@pytest.mark.parametrize("methods", [["--methods", "cetd"], []])
def test_evaluate_without_gold_says_nothing_to_score_and_writes_nothing(tmp_path, capsys, methods):
    """With the default methods (model first) a crawl without gold was fitted first, and the
    line was the fit's 'model: the training pages have no labelled rows', naming no dataset."""
    src = plain_source(tmp_path / "src", gold=False)
    code, out, _ = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds"), "-q")
    assert code == 0
    report = tmp_path / "report"
    code, out, err = run(capsys, "evaluate", out.strip(), *methods, "--out", str(report))
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert "nothing to score" in line and "of src has" in line
    assert not report.exists() or list(report.iterdir()) == []


def test_evaluate_announces_and_links_only_what_it_wrote(dataset, tmp_path, capsys):
    report = tmp_path / "report"
    code, out, err = run(capsys, "evaluate", str(dataset), "--methods", "cetd", "--protocol", "cv",
                         "-k", "2", "--no-figures", "--out", str(report))
    assert code == 0, err
    written = sorted(p.name for p in report.iterdir())
    assert written == ["pages.csv", "report.json", "report.md"]
    assert "![" not in (report / "report.md").read_text(encoding="utf-8")
    assert json.loads((report / "report.json").read_text())["outputs"] == ["pages.csv", "report.md", "report.json"]
    assert "png" not in err.lower() and "figures" not in err


def test_a_dataset_folder_whose_name_is_not_utf8_is_one_line(dataset, tmp_path, capsys):
    """A folder named in latin-1 (b'caf\\xe9'): evaluate ended in a UnicodeEncodeError traceback
    from pandas, train said 'run hwnoise features again' (which failed the same way), and import
    --into such a folder left pages/ and gold/ without a dataset.json behind a traceback; each is
    one line naming the folder and the byte, and import writes nothing."""
    latin = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    os.rename(dataset, latin)
    for argv in (["evaluate", str(latin), "--methods", "alltext", "--out", str(tmp_path / "report")],
                 ["train", str(latin), "--preset", "thesis"],
                 ["import", "plain", str(tmp_path / "src"), "--into", str(latin / "more"), "-q"]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == ""
        line = one_error_line(err)
        assert "caf\\xe9" in line and "is not UTF-8 (byte 0xe9" in line and "rename it" in line
    assert not (tmp_path / "report").exists() and not (latin / "more").exists()


def test_output_places_inside_a_datasets_own_parts_are_refused(dataset, tmp_path, capsys):
    """evaluate --out DATASET/records wrote report.json there, and the dataset's gold then looked
    like data records (has_records: the auto preset picks 'records' for it); train, export-arff
    and import wrote into pages/, gold/ or features.parquet/ as well. Each is one line before any
    work; the dataset folder itself stays a place a report may go."""
    from hwnoise.dataset import Dataset

    for argv in (["evaluate", str(dataset), "--methods", "alltext", "--no-figures", "--out", str(dataset / "records")],
                 ["train", str(dataset), "--preset", "thesis", "--out", str(dataset / "gold" / "model")],
                 ["export-arff", str(dataset), "-o", str(dataset / "features.parquet" / "x.arff")],
                 ["import", "plain", str(tmp_path / "src"), "--into", str(dataset / "pages"), "-q"]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "", err
        assert f"of the dataset {dataset.resolve()}, which hwnoise reads as the dataset's own" in one_error_line(err)
    assert not Dataset(dataset).has_records() and not (dataset / "gold" / "model").exists()
    assert sorted(p.name for p in (dataset / "pages").iterdir()) == [f"{p.stem}.html" for p in
                                                                     sorted((dataset / "gold").iterdir())]
    code, _, err = run(capsys, "evaluate", str(dataset), "--methods", "alltext", "--no-figures", "--out", str(dataset))
    assert code == 0, err


@pytest.mark.parametrize("part", ["labels.parquet", "dataset.json", "query.json", "journal.jsonl", "submissions.jsonl"])
def test_an_out_file_that_is_one_of_a_datasets_own_files_is_refused(dataset, capsys, part):
    """export-arff -o DATASET/dataset.json (or extract -o DATASET/labels.parquet) replaced the
    dataset's own file with the ARFF or the text, exit 0: the dataset then opened nowhere, or its
    labels were unreadable. The file checked was the output's folder only, the dataset itself."""
    if part == "labels.parquet":
        assert run(capsys, "label", str(dataset), "--auto", "--no-general", "--extractors", "")[0] == 0
    target = dataset / part
    before = target.read_bytes() if target.exists() else None  # an imported dataset has no journal
    page = next((dataset / "pages").iterdir())
    for argv in (["export-arff", str(dataset), "-o", str(target)], ["extract", str(page), "-o", str(target)]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "", err
        line = one_error_line(err)
        assert f"-o/--out {target}: is the {part} of the dataset {dataset.resolve()}" in line, line
    assert (target.read_bytes() if target.exists() else None) == before
    assert run(capsys, "export-arff", str(dataset), "-o", str(dataset / "x.arff"))[0] == 0  # beside them: fine


# -- features and training on bad input ----------------------------------------------------------

def test_evaluate_with_a_folder_named_as_one_of_its_outputs_says_so_before_the_work(dataset, tmp_path, capsys):
    # found when report.json was written, after every fit and score: the results were lost and
    # the line named a temp file ('.report.json.PID@HOST.x.tmp: Is a directory')
    out = tmp_path / "ev"
    (out / "report.json").mkdir(parents=True)
    code, printed, err = run(capsys, "evaluate", str(dataset), "--methods", "alltext", "--no-figures", "--out", str(out))
    assert code == 1 and printed == ""
    line = one_error_line(err)
    assert f"-o/--out {out}: report.json is a folder there" in line and ".tmp" not in line, line
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]


def test_features_no_training_row_has_are_named_in_a_warning(dataset, tmp_path, capsys):
    # --features rendered on pages never rendered ('hwnoise render'): the box, font and colour
    # columns are missing on every row, and the model was trained without them without a word
    code, _, err = run(capsys, "train", str(dataset), "--features", "rendered", "--protocol", "thesis",
                       "--out", str(tmp_path / "r"))
    assert code == 0, err
    warning = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warning) == 1 and "box_x" in warning[0] and "'hwnoise render DATASET'" in warning[0]
    code, _, err = run(capsys, "train", str(dataset), "--protocol", "thesis", "--out", str(tmp_path / "d"))
    assert code == 0 and "warning" not in err, err


def test_train_features_must_be_numeric_columns(dataset, capsys):
    assert run(capsys, "features", str(dataset), "--no-progress")[0] == 0
    code, out, err = run(capsys, "train", str(dataset), "--preset", "thesis", "--features", "ctd,text")
    assert code == 1
    line = one_error_line(err)
    assert "text (not numeric)" in line
    listed = line.split("the numeric feature columns are: ")[1].split(", ")
    assert "ctd" in listed and "query_score" in listed
    assert not {"text", "xpath", "page", "site", "dataset", "tag", "label"} & set(listed)
    code, _, err = run(capsys, "export-arff", str(dataset), "--features", "ctd,nonesuch")
    assert code == 1 and "nonesuch (no such column)" in one_error_line(err)


def test_features_of_several_datasets_in_one_call(tmp_path, capsys):
    """``hwnoise features A B``: each dataset gets its features.parquet; a target that is no
    dataset folder among them stops the run before any page is walked, and says which."""
    made = []
    for name in ("a", "b"):
        src = plain_source(tmp_path / f"src-{name}", n=2 + len(made))
        code, out, _ = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / name), "-q")
        assert code == 0
        made.append(Path(out.strip()))
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>one page</p></body></html>", encoding="utf-8")
    code, _, err = run(capsys, "features", str(made[0]), str(page), "--no-progress")
    assert code == 1 and "page.html: not a dataset folder" in one_error_line(err)
    assert not (made[0] / "features.parquet").exists()
    code, _, err = run(capsys, "features", *map(str, made), "--no-progress")
    assert code == 0, err
    import pyarrow.parquet as pq

    pages = [set(pq.read_table(d / "features.parquet", columns=["page"]).column("page").to_pylist()) for d in made]
    assert [len(p) for p in pages] == [2, 3]


@pytest.mark.parametrize("option", [["--query", "oak chair"], ["--charset", "windows-1252"]])
def test_features_refuses_one_pages_options_with_a_dataset(dataset, capsys, option):
    """--query and --charset with a dataset folder were dropped without a word: the table was
    written with the dataset's query.json and each page's own charset."""
    code, out, err = run(capsys, "features", str(dataset), *option, "--no-progress")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert f"{option[0]} go with one page (PAGE.html)" in line and "query.json" in line
    assert not (dataset / "features.parquet").exists()


def test_features_of_a_folder_that_is_no_dataset_with_query_says_it_is_none(tmp_path, capsys):
    """A folder of pages (or one named page.html) given with --query was told that --query does
    not go 'with dataset folders', as if it were one."""
    folder = tmp_path / "page.html"
    folder.mkdir()
    code, out, err = run(capsys, "features", str(folder), "--query", "oak chair")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert f"{folder}: not a dataset folder (no dataset.json)" in line and "go with one page" not in line


@pytest.mark.parametrize("query", ['{"term": "x"}', '["book", "author"]', '[{"kind": "value"}]'])
def test_features_refuses_a_query_json_of_the_wrong_shape(dataset, capsys, query):
    (dataset / "query.json").write_text(query, encoding="utf-8")
    code, _, err = run(capsys, "features", str(dataset), "--no-progress")
    assert code == 1
    line = one_error_line(err)
    assert "query.json" in line and '"term"' in line
    assert not (dataset / "features.parquet").exists()


def test_a_query_json_saved_by_an_editor_in_utf16_reads_and_cp1252_is_one_line(dataset, capsys):
    """query.json is written by hand (README): an editor's UTF-16 ("Unicode") or UTF-8 with a BOM
    reads as UTF-8 does; a legacy encoding is one line that says to save it as UTF-8."""
    query = [{"term": "crème", "kind": "value"}, {"term": "author", "kind": "name"}]
    terms = None
    for enc in ("utf-8", "utf-8-sig", "utf-16"):
        (dataset / "query.json").write_bytes(json.dumps(query, ensure_ascii=False).encode(enc))
        from hwnoise.dataset import Dataset

        got = Dataset(dataset).query_terms()
        assert terms is None or got == terms, enc
        terms = got
    assert "crème" in " ".join(terms)
    (dataset / "query.json").write_bytes(json.dumps(query, ensure_ascii=False).encode("cp1252"))
    code, _, err = run(capsys, "features", str(dataset), "--no-progress")
    assert code == 1
    line = one_error_line(err)
    assert "query.json" in line and "save it as UTF-8" in line


def test_a_crawl_without_gold_is_told_how_to_get_labels(tmp_path, capsys):
    """No gold at all (a user's own crawl): features says there are no labelled rows (not a
    content share of nan), and train's one line names 'hwnoise label --auto'."""
    src = plain_source(tmp_path / "src", gold=False)
    code, out, _ = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds"), "-q")
    ds = out.strip()
    assert code == 0
    code, _, err = run(capsys, "features", ds, "--no-progress")
    assert code == 0 and "no labelled rows" in err and "nan" not in err
    code, out, err = run(capsys, "train", ds, "--preset", "thesis")
    assert code == 1 and out == ""
    assert "hwnoise label DATASET --auto" in one_error_line(err)
    # export-arff wrote a file of '?' classes only (Weka has nothing to train on) without a word
    code, out, err = run(capsys, "export-arff", ds)
    assert code == 0 and out.rstrip().endswith(",?")
    assert (f"hwnoise: export-arff: warning: none of the {out.count(',?')} rows has a class" in err
            and f"'hwnoise label {ds} --auto'" in err), err
    code, out, _ = run(capsys, "import", "plain", str(plain_source(tmp_path / "src2")), "--into", str(tmp_path / "ds2"), "-q")
    code, _, err = run(capsys, "export-arff", out.strip(), "-o", str(tmp_path / "x.arff"))
    assert code == 0 and "warning" not in err, err  # with gold: no warning


def test_corrupt_features_parquet_is_one_line(dataset, capsys, tmp_path):
    """A part file cut short (a run killed while writing it): every stage that reads the table
    says which file and what to do, in one line, before writing anything."""
    assert run(capsys, "features", str(dataset), "--no-progress")[0] == 0
    parts = sorted((dataset / "features.parquet").rglob("*.parquet")) or [dataset / "features.parquet"]
    for part in parts:
        part.write_bytes(part.read_bytes()[:100])
    for argv in (["export-arff", str(dataset)], ["train", str(dataset)],
                 ["evaluate", str(dataset), "--methods", "model", "--out", str(tmp_path / "ev")],
                 ["extract", str(dataset), "--jsonl"]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "", argv
        line = one_error_line(err)
        assert "features.parquet" in line and "hwnoise features" in line, argv
        if argv[0] != "export-arff":  # it reads the folder as one dataset: pyarrow names the part
            assert parts[0].name in line, argv
    assert not (tmp_path / "ev").exists() or not any((tmp_path / "ev").iterdir())


def test_unwritable_output_places_fail_first_with_one_line(dataset, blocked, capsys):
    assert run(capsys, "features", str(dataset), "--no-progress")[0] == 0
    cases = [
        ["export-arff", str(dataset), "-o", str(blocked / "x.arff")],
        ["train", str(dataset), "--out", str(blocked)],
        ["evaluate", str(dataset), "--methods", "cetd", "--out", str(blocked)],
        ["import", "plain", str(dataset.parent.parent / "src"), "--into", str(blocked), "-q"],
    ]
    for argv in cases:
        code, out, err = run(capsys, *argv)
        assert code == 1, argv
        assert str(blocked) in one_error_line(err)
    code, _, err = run(capsys, "export-arff", str(dataset), "-o", str(dataset))
    assert code == 1 and "is a folder" in one_error_line(err)


@pytest.mark.skipif(os.geteuid() != 0, reason="a read-only bind needs root; ENOTDIR covers the rest")
def test_features_into_a_read_only_dataset_is_one_line(dataset, capsys):
    ro = subprocess.run(["mount", "--bind", "-o", "ro", str(dataset), str(dataset)], capture_output=True)
    if ro.returncode != 0:
        pytest.skip("cannot bind-mount read-only here")
    try:
        code, _, err = run(capsys, "features", str(dataset), "--no-progress")
        assert code == 1 and str(dataset) in one_error_line(err)
    finally:
        if subprocess.run(["umount", str(dataset)]).returncode != 0:
            subprocess.run(["umount", "-l", str(dataset)])


# -- empty queries -------------------------------------------------------------------------

def test_empty_query_warns_that_query_features_are_zero(dataset, tmp_path, capsys):
    page = tmp_path / "page.html"
    page.write_text(PAGE.format(i=1), encoding="utf-8")
    code, out, err = run(capsys, "features", str(page), "--query", "")
    assert code == 0 and out.startswith("node,parent,")
    assert "hwnoise: warning:" in err and "QueryScore and matches will be zero" in err
    code, out, err = run(capsys, "features", str(page), "--query", "book authors")
    assert code == 0 and "warning" not in err


def test_import_plain_warns_about_its_empty_query(tmp_path, capsys):
    src = plain_source(tmp_path / "src")
    code, out, err = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds"), "-q")
    assert code == 0
    assert json.loads((Path(out.strip()) / "query.json").read_text()) == []
    assert "query.json has no terms" in err and "QueryScore and matches will be zero" in err
    code, _, err = run(capsys, "features", out.strip(), "--no-progress")
    assert code == 0 and "QueryScore and matches will be zero" in err


# -- import ---------------------------------------------------------------------------------

def test_import_wcxb_with_a_missing_truth_file(tmp_path, capsys):
    src = tmp_path / "wcxb"
    (src / "dev" / "html").mkdir(parents=True)
    (src / "dev" / "ground-truth").mkdir()
    for fid in ("0001", "0002"):
        (src / "dev" / "html" / f"{fid}.html.gz").write_bytes(gzip.compress(PAGE.format(i=fid).encode()))
    (src / "dev" / "ground-truth" / "0001.json").write_text(json.dumps(
        {"url": "https://a.example/1", "ground_truth": {"main_content": "Book 0001"},
         "_internal": {"page_type": {"primary": "article"}}}), encoding="utf-8")
    code, out, err = run(capsys, "import", "wcxb", str(src), "--into", str(tmp_path / "ds"), "-q")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert "0002.json" in line and "ground truth" in line


def test_import_progress_bar_has_a_total(tmp_path):
    src = plain_source(tmp_path / "src", n=3)
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "import", "plain", str(src), "--into",
                          str(tmp_path / "ds")], capture_output=True, text=True,
                         env={**os.environ, "HWNOISE_PROGRESS": "1"})
    assert res.returncode == 0, res.stderr
    import re

    assert re.search(r"import plain:.*\b[0-3]/3\b", res.stderr), res.stderr  # tqdm's n/total


# -- a page that is no HTML ------------------------------------------------------------------

def test_a_png_named_html_is_refused_as_a_page(tmp_path, capsys):
    png = tmp_path / "img.html"
    png.write_bytes(PNG)
    code, out, err = run(capsys, "features", str(png), "--query", "x")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert "not HTML" in line and "PNG" in line and str(png) in line
    text = tmp_path / "notes.html"
    text.write_text("Just some notes.\nNo markup at all.\n", encoding="utf-8")
    code, out, err = run(capsys, "features", str(text))
    assert code == 1 and out == "" and "not HTML (text without HTML markup" in one_error_line(err)
    # `hwnoise extract` on such a file: tests/test_spec.py


def test_extract_records_refuses_a_png_too(tmp_path, capsys):
    png = tmp_path / "img.html"
    png.write_bytes(PNG)
    code, out, err = run(capsys, "extract", "--records", str(png))
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert "not an HTML page" in line and "PNG" in line and str(png) in line

def test_a_page_that_is_a_device_or_a_pipe_is_read_within_the_cap(tmp_path):
    """``hwnoise extract /dev/zero`` read until the memory was full (a regular file's size bounds
    its read; a device's or a pipe's does not): it reads at most 64 MiB from one and stops with one
    line; a page given through a pipe is read as before. Run under a 1.5 GB address-space limit, so
    that the old read fails fast rather than filling the machine."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))

    cmd = [sys.executable, "-m", "hwnoise.cli", "extract"]
    out = subprocess.run([*cmd, "/dev/zero"], capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert out.returncode == 1 and out.stdout == "", out.stderr[-500:]
    line = one_error_line(out.stderr)
    assert "/dev/zero" in line and "more than 64 MiB" in line and "save the page to a file" in line
    piped = subprocess.run(["bash", "-c", f"{' '.join(cmd)} <(echo '<p>hello from a pipe</p>')"],
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and piped.stdout.strip() == "hello from a pipe", piped.stderr


def test_extract_warns_of_a_query_with_no_words(tmp_path, capsys):
    """``--query ""`` replaces the model's domain query with none (QueryScore and matches zero on
    every node): said, as ``features`` says it; a query with words is not warned of."""
    page = tmp_path / "p.html"
    page.write_bytes(b"<html><body><h1>Results</h1><p>Nome aprovado Julia</p></body></html>")
    for query, warned in (("", True), ("  -- ", True), ("nome", False)):
        code, out, err = run(capsys, "extract", str(page), "--query", query)
        assert code == 0 and "Julia" in out
        assert ("--query gives no words" in err) == warned, (query, err)


def test_dataset_mode_skips_and_counts_pages_that_are_not_html(tmp_path, capsys):
    # import skips a PNG saved as a page; a crawl's dataset can still hold one (a server that
    # answered an image), which is what features and extract meet here
    src = plain_source(tmp_path / "src", n=4)
    code, out, _ = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds"), "-q")
    assert code == 0
    ds = Path(out.strip())
    from hwnoise.dataset import Dataset

    next(iter(Dataset(ds).pages())).html_path.write_bytes(PNG)
    code, _, err = run(capsys, "features", str(ds), "--no-progress")
    assert code == 0
    assert "3 pages" in err and "1 failed (1 not HTML)" in err and "PNG" in err
    import pandas as pd

    assert pd.read_parquet(ds / "features.parquet")["page"].nunique() == 3
    # extract from the dataset folder: the PNG was "extracted" as a page with no text (exit 0,
    # and the hint that pages built by scripts give none)
    for argv in ([], ["--records"], ["--workers", "2"]):
        code, out, err = run(capsys, "extract", str(ds), *argv)
        assert code == 1 and "Traceback" not in err, err
        skipped = [ln for ln in err.splitlines() if ln.startswith("hwnoise: extract: skipped")]
        assert len(skipped) == 1 and ".html: not an HTML page (a PNG image" in skipped[0], err
        assert "1 skipped" in err and "built by its scripts" not in err
        extracted = {json.loads(ln)["page"] for ln in out.splitlines()}
        if not argv:  # a line a page: every page but the PNG
            (png,) = {p.id for p in Dataset(ds).pages()} - extracted
        assert f"/pages/{png}.html: not an HTML page" in skipped[0] and png not in extracted


def _weka_model(tmp_path, attributes: list[str], classes: str = "N,S"):
    """A model trained on a Weka user's ARFF file of ``attributes`` (two or more numbers a row)."""
    a, b = classes.split(",")
    rows = "".join(f"{i % 7},{(i * 3) % 5}," + "".join(f"{(i * k) % 3}," for k in range(2, len(attributes)))
                   + f"{a if i % 7 > 3 else b}\n" for i in range(40))
    arff = tmp_path / "weka.arff"
    arff.write_text("@relation w\n" + "".join(f"@attribute {n} numeric\n" for n in attributes)
                    + f"@attribute class {{{classes}}}\n@data\n" + rows)
    assert main(["train", str(arff), "--out", str(tmp_path / "m")]) == 0
    return tmp_path / "m"


def _oak_page(tmp_path: Path) -> Path:
    page = tmp_path / "p.html"
    page.write_text("<html><body><p>Oak chair, 40 euros, in stock</p></body></html>")
    return page


def test_extract_refuses_a_model_of_another_tools_features(tmp_path, capsys):
    # a model trained on a Weka user's ARFF: no attribute is a feature hwnoise computes, so every
    # node of a page was labelled from missing values alone (extract printed nothing, exit 0)
    model = _weka_model(tmp_path, ["petal", "sepal"])
    page = _oak_page(tmp_path)
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(model)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"{model}: this model cannot label the nodes of a page" in err
    assert "('petal', 'sepal') are none hwnoise computes" in err and "classes" not in err


def test_evaluate_refuses_a_model_whose_classes_are_not_node_labels(tmp_path, capsys, dataset):
    # 'yes'/'no' classes: evaluate ran the whole dataset, then failed in a worker with a traceback
    # ("y_pred holds labels other than S/N")
    model = _weka_model(tmp_path, ["ctd", "matches"], classes="yes,no")
    capsys.readouterr()
    assert main(["evaluate", str(dataset), "--model", str(model), "-o", str(tmp_path / "ev")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its classes are 'yes', 'no', not the node labels" in err
    assert "none hwnoise computes" not in err and not (tmp_path / "ev").exists()


def test_extract_warns_of_the_features_of_a_model_hwnoise_does_not_compute(tmp_path, capsys):
    # some features are hwnoise's (ctd), one is not: the page is labelled, the other is named
    model = _weka_model(tmp_path, ["ctd", "petal"])
    page = _oak_page(tmp_path)
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(model)]) == 0
    err = capsys.readouterr().err
    assert "'petal' are none hwnoise computes" in err and "need a dataset" not in err


def test_extract_refuses_charset_with_a_dataset_folder(dataset, capsys):
    """--charset with a dataset folder was dropped without a word: its pages were read with the
    charset each was sent with, and the text printed as if the option had applied."""
    code, out, err = run(capsys, "extract", str(dataset), "--charset", "windows-1252")
    assert code == 1 and out == ""
    assert f"--charset goes with page files, '-' and --warc, not with dataset folders ({dataset})" in one_error_line(err)


def _warc_of(page: Path, tmp_path: Path) -> Path:
    """A WARC file holding ``page`` as one 200 HTML response."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / "crawl.warc.gz"
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://example.test/p", "response",
                                                      payload=io.BytesIO(page.read_bytes()), http_headers=http))
    return path


@pytest.mark.parametrize("mode", [[], ["--records"], ["--warc"], ["--warc", "--records"]])
def test_extract_names_the_features_pages_cannot_give_in_every_mode(tmp_path, capsys, mode):
    """The warning came with the text of page files only: --records and --warc labelled every page
    with sitelevel (a dataset's feature) and 'petal' missing without a word."""
    model = _weka_model(tmp_path, ["ctd", "sitelevel", "petal"])
    page = _oak_page(tmp_path)
    pages = ["--warc", str(_warc_of(page, tmp_path))] if "--warc" in mode else [str(page)]
    capsys.readouterr()
    code = main(["extract", "--model", str(model), *[a for a in mode if a != "--warc"], *pages])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "hwnoise: extract: warning: the model's feature(s) sitelevel need a dataset" in err
    assert "hwnoise: extract: warning: the model's feature(s) 'petal' are none hwnoise computes" in err


def test_evaluate_names_the_features_of_a_model_hwnoise_does_not_compute(tmp_path, capsys, dataset):
    # evaluate scored such a model with the feature missing on every page, without a word
    model = _weka_model(tmp_path, ["ctd", "petal"])
    capsys.readouterr()
    assert main(["evaluate", str(dataset), "--model", str(model), "--methods", "model",
                 "-o", str(tmp_path / "ev")]) == 0
    err = capsys.readouterr().err
    assert "evaluate: the model's feature(s) 'petal' are none hwnoise computes" in err
    assert (tmp_path / "ev" / "report.json").exists()


@pytest.mark.parametrize("records", [False, True])
def test_extract_of_a_dataset_with_no_pages_is_one_line_not_silence(tmp_path, capsys, records):
    # a dataset whose collect found nothing yet: the run wrote nothing, said nothing and exited 0,
    # where a plain folder without page files is one error line
    empty = tmp_path / "crawl"
    empty.mkdir()
    (empty / "dataset.json").write_text('{"name": "crawl"}', encoding="utf-8")
    page = plain_source(tmp_path / "src", n=1) / "html" / "p0.html"
    code, out, err = run(capsys, "extract", str(page), str(empty), *(["--records"] if records else []))
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert str(empty) in line and "no pages" in line and "hwnoise collect" in line


def test_extract_names_a_page_file_whose_name_is_not_utf8_in_valid_json(tmp_path):
    # a folder holding caf\xe9.html (saved under a Latin-1 system): its name, which Python gives
    # with a lone surrogate, was a UnicodeEncodeError traceback writing -o FILE (and writing a
    # strict UTF-8 stdout), with the lines before it lost; it is now the JSON escape \udce9
    pages = tmp_path / "pages"
    pages.mkdir()
    name = os.fsdecode(b"caf\xe9.html")
    records = "".join(f"<li><h3><a href='/b/{i}'>Book {i}: a long title of a record</a></h3>"
                      f"<p>By Author {i}, published 19{50 + i}, 23{i} pages</p></li>" for i in range(8))
    (pages / name).write_text(f"<html><body><h1>Results</h1><ol>{records}</ol></body></html>", encoding="utf-8")
    (pages / "ok.html").write_text(PAGE.format(i=1), encoding="utf-8")
    out = tmp_path / "text.jsonl"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}  # stdout strict UTF-8, as under en_US.UTF-8
    for argv in (["-o", str(out)], ["--records", "-o", str(out)], []):
        res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "extract", str(pages), *argv],
                             capture_output=True, env=env)
        assert res.returncode == 0 and b"Traceback" not in res.stderr, res.stderr
        lines = out.read_bytes().decode("utf-8") if argv else res.stdout.decode("utf-8")
        rows = [json.loads(x) for x in lines.splitlines()]
        if "--records" not in argv:
            assert [r["page"] for r in rows] == [name, "ok.html"]
            assert (pages / rows[0]["page"]).exists()
        assert "\\udce9" in lines


def test_extract_out_writes_the_file_whole_and_nothing_on_stdout(tmp_path, capsys):
    pages = plain_source(tmp_path / "src", n=3) / "html"
    out = tmp_path / "new" / "text.jsonl"
    code, printed, _ = run(capsys, "extract", str(pages), "-o", str(out))
    assert code == 0 and printed == ""
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x["page"] for x in lines] == ["p0.html", "p1.html", "p2.html"]
    assert all(f"Book {i}: the title" in x["text"] for i, x in enumerate(lines))
    assert not out.with_name("text.jsonl.part").exists()


def test_extract_out_naming_one_of_its_inputs_is_refused_and_the_input_kept(tmp_path, capsys):
    # '-o page.html' (a slip for page.txt), or -o into the folder being read: the text was
    # renamed over the page it came from, exit 0, and the page was gone
    pages = plain_source(tmp_path / "src", n=2) / "html"
    (tmp_path / "link.html").symlink_to(pages / "p1.html")
    warc = _warc_of(pages / "p0.html", tmp_path)
    before = {p: p.read_bytes() for p in (pages / "p0.html", pages / "p1.html", warc)}
    for inputs, out, named in [([str(pages / "p0.html")], pages / "p0.html", "p0.html"),
                               ([str(pages)], pages / "p1.html", "p1.html"),
                               ([str(tmp_path / "link.html")], pages / "p1.html", "link.html"),
                               (["--warc", str(warc)], warc, str(warc))]:
        code, printed, err = run(capsys, "extract", *inputs, "-o", str(out))
        assert code == 1 and printed == ""
        line = one_error_line(err)
        assert f"-o/--out {out}: is one of the files to extract from ({named})" in line, line
        assert not out.with_name(out.name + ".part").exists()
    assert {p: p.read_bytes() for p in before} == before
    code, _, _ = run(capsys, "extract", str(pages), "-o", str(tmp_path / "text.jsonl"))
    assert code == 0 and (tmp_path / "text.jsonl").exists()


def test_extract_out_of_a_stopped_run_keeps_what_it_wrote_in_a_part_file(tmp_path):
    """Stopped midway (Ctrl-C), a run leaves no file that looks whole: what it wrote is in
    FILE.part, and it says so."""
    import signal
    import time

    src = plain_source(tmp_path / "src", n=1) / "html"
    os.mkfifo(src / "p9.html")  # reading it blocks: the run is caught after p0.html
    out = tmp_path / "text.jsonl"
    part = tmp_path / "text.jsonl.part"
    # Ctrl-C as in a terminal: a run started in the background (CI under nohup ... &) inherits
    # SIGINT ignored, and Python then installs no KeyboardInterrupt for it
    proc = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "extract", str(src / "p0.html"),
                             str(src / "p9.html"), "-o", str(out)], stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (part.exists() and part.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and not out.exists()
    assert json.loads(part.read_text())["page"] == "p0.html"
    assert f"kept in {part}" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_features_hwnoise_does_not_compute_are_one_line_before_the_work(dataset, tmp_path, capsys, command):
    # with a preset whose rows are rebuilt page by page (site: stacked extractors), a misspelt
    # feature was a column of missing values: the model trained on the others without a word,
    # and evaluate said to run 'hwnoise features' for it
    code, out, err = run(capsys, command, str(dataset), "--features", "ctd,matchs", "-o", str(tmp_path / "o"))
    line = one_error_line(err)
    assert code == 1 and ("--features matchs (no such column)" in line or "--features matchs: no feature" in line)
    assert not (tmp_path / "o").exists()


def test_import_without_a_query_says_how_to_give_one(tmp_path, capsys):
    # a source that gives no query: the warning names import's own --query, not only query.json
    src = plain_source(tmp_path / "src", n=2)
    code, _, err = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds"), "-q")
    assert code == 0 and "has no terms" in err and "--query" in err
    code, _, err = run(capsys, "import", "plain", str(src), "--into", str(tmp_path / "ds2"), "-q",
                       "--query", "oak chair")
    assert code == 0 and "has no terms" not in err


def _drop_stored_column(dataset: Path, column: str) -> None:
    """``dataset``'s features.parquet as an older hwnoise wrote it: without ``column``."""
    import pandas as pd

    for part in (dataset / "features.parquet").glob("part-*.parquet"):
        pd.read_parquet(part).drop(columns=[column]).to_parquet(part)


@pytest.mark.parametrize("argv", [
    ["train", "DATASET", "--preset", "thesis", "--protocol", "thesis"],
    ["train", "DATASET", "--preset", "site", "--protocol", "thesis"],
    ["train", "DATASET", "--preset", "thesis", "--features", "ctd,distance"],
    ["train", "GOOD", "--preset", "thesis", "--test", "DATASET"],
    ["export-arff", "DATASET", "-o", "OUT"],
    ["evaluate", "DATASET", "--methods", "model", "-o", "OUT"],
    ["evaluate", "DATASET", "--methods", "model", "--model", "MODEL", "-o", "OUT"],
    ["extract", "DATASET", "--model", "MODEL", "-o", "OUT"],
])
def test_a_feature_table_without_a_column_the_model_needs_says_to_build_it_again(dataset, tmp_path, capsys, argv):
    # a features.parquet from an older hwnoise, without 'distance': train --preset thesis and
    # export-arff named an option never given ('--features distance (no such column)'), train
    # --preset site and evaluate took it as missing on every row and went on, train --test named
    # it only after the fit, extract from the dataset took it as missing
    import shutil

    assert run(capsys, "features", str(dataset), "--no-progress")[0] == 0
    model, good, out = tmp_path / "m", tmp_path / "good", tmp_path / "o"
    assert run(capsys, "train", str(dataset), "--preset", "thesis", "--out", str(model))[0] == 0
    shutil.copytree(dataset, good)
    _drop_stored_column(dataset, "distance")
    names = {"DATASET": dataset, "GOOD": good, "MODEL": model, "OUT": out}
    code, _, err = run(capsys, *[str(names.get(a, a)) for a in argv])
    line = one_error_line(err)
    assert code == 1 and f"{dataset / 'features.parquet'}: no column distance," in line
    assert f"run 'hwnoise features {dataset}' again" in line and "--features" not in line
    assert not out.exists() and "fitted" not in err


@pytest.mark.parametrize("command", ["train", "export-arff"])
def test_a_features_name_no_hwnoise_computes_is_the_features_error_on_an_old_table_too(dataset, capsys, command):
    assert run(capsys, "features", str(dataset), "--no-progress")[0] == 0
    _drop_stored_column(dataset, "distance")
    code, _, err = run(capsys, command, str(dataset), "--features", "nonesuch,distance")
    assert code == 1 and "--features nonesuch (no such column)" in one_error_line(err)


def test_evaluate_names_an_old_feature_table_before_fitting_on_the_datasets_before_it(dataset, tmp_path, capsys,
                                                                                   monkeypatch):
    # the stale table of the second dataset was found once the first dataset's model was fitted
    import shutil

    from hwnoise.training.model import NoiseModel

    assert run(capsys, "features", str(dataset), "--no-progress")[0] == 0
    good = tmp_path / "good"
    shutil.copytree(dataset, good)
    (good / "dataset.json").write_text(json.dumps({**json.loads((good / "dataset.json").read_text()), "name": "good"}))
    _drop_stored_column(dataset, "distance")
    fits = []
    real_fit = NoiseModel.fit
    monkeypatch.setattr(NoiseModel, "fit", lambda self, *a, **k: fits.append(1) or real_fit(self, *a, **k))
    code, _, err = run(capsys, "evaluate", str(good), str(dataset), "--methods", "model", "--preset", "thesis",
                       "-o", str(tmp_path / "o"))
    assert code == 1 and "no column distance" in one_error_line(err) and not fits


def test_a_dataset_json_saved_by_an_editor_reads_or_is_one_line(dataset, capsys):
    """dataset.json saved in cp1252 (an editor on Windows, a note with an accent) ended 'hwnoise
    features' in a UnicodeDecodeError traceback; saved with a byte-order mark, it and
    submissions.jsonl were refused as 'Unexpected UTF-8 BOM (decode using utf-8-sig)'."""
    meta = json.loads((dataset / "dataset.json").read_text(encoding="utf-8"))
    meta["notes"] = "café crème"
    text = json.dumps(meta, ensure_ascii=False)
    (dataset / "dataset.json").write_bytes(text.encode("cp1252"))
    code, out, err = run(capsys, "features", str(dataset), "--no-progress")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert f"{dataset / 'dataset.json'}: not JSON text in UTF-8, UTF-16 or UTF-32" in line and "save it as UTF-8" in line
    (dataset / "dataset.json").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    subs = dataset / "submissions.jsonl"
    subs.write_bytes(b"\xef\xbb\xbf" + subs.read_bytes())
    code, _, err = run(capsys, "features", str(dataset), "--no-progress")
    assert code == 0, err
    assert Dataset(dataset).meta["notes"] == "café crème" and len(Dataset(dataset).submissions()) == 4
