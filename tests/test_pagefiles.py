"""Page files: names, gzip by magic number, a bound on inflating, errors that name the file."""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.pagefiles import (MAX_INFLATED, PageFileError, is_page_file, page_files, page_name,
                               read_page_file)

PAGE = b"<html><body><h1>Title</h1><p>Some words of the page.</p></body></html>"


def test_names_and_listing(tmp_path):
    for name in ("a.html", "b.HTM", "c.xhtml.gz", "d.txt", "e.html.gz", "f.gz"):
        (tmp_path / name).write_bytes(b"x")
    assert [p.name for p in page_files(tmp_path)] == ["a.html", "b.HTM", "c.xhtml.gz", "e.html.gz"]
    assert [page_name(p) for p in page_files(tmp_path)] == ["a", "b", "c", "e"]
    assert not is_page_file(Path("f.gz")) and not is_page_file(Path("html"))


def test_compressed_pages_are_known_by_their_bytes(tmp_path):
    (tmp_path / "plain.html").write_bytes(PAGE)
    (tmp_path / "named_plain.html").write_bytes(gzip.compress(PAGE))  # gzip without .gz
    (tmp_path / "two.html.gz").write_bytes(gzip.compress(PAGE[:20]) + gzip.compress(PAGE[20:]))
    for name in ("plain.html", "named_plain.html", "two.html.gz"):
        assert read_page_file(tmp_path / name) == PAGE, name


def test_bad_files_name_the_file_and_the_problem(tmp_path):
    bad = tmp_path / "bad.html.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00" + b"garbage" * 10)
    with pytest.raises(PageFileError, match=r"bad\.html\.gz: not a readable gzip file"):
        read_page_file(bad)
    cut = tmp_path / "cut.html.gz"
    cut.write_bytes(gzip.compress(PAGE * 50)[:60])
    with pytest.raises(PageFileError, match=r"cut\.html\.gz: the gzip data is cut short"):
        read_page_file(cut)
    with pytest.raises(PageFileError, match=r"missing\.html: cannot read the page"):
        read_page_file(tmp_path / "missing.html")


def test_a_small_file_that_inflates_past_the_bound_is_refused(tmp_path):
    bomb = tmp_path / "bomb.html.gz"
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    parts = [c.compress(block) for _ in range((MAX_INFLATED >> 20) + 2)]
    bomb.write_bytes(b"".join(parts) + c.flush())
    assert bomb.stat().st_size < MAX_INFLATED // 100
    with pytest.raises(PageFileError, match="inflates to more than"):
        read_page_file(bomb)


def test_import_plain_and_features_read_compressed_pages(tmp_path, capsys):
    src = tmp_path / "src"
    (src / "html").mkdir(parents=True)
    (src / "gold").mkdir()
    (src / "html" / "one.html.gz").write_bytes(gzip.compress(PAGE))
    (src / "gold" / "one.txt").write_text("Title Some words of the page.")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 0
    ds = Dataset(tmp_path / "out" / "src")
    (page,) = list(ds.pages())
    assert page.read_html() == PAGE and page.read_gold().startswith("Title")
    capsys.readouterr()
    assert main(["features", str(src / "html" / "one.html.gz"), "--query", "words"]) == 0
    assert "Some words of the page." in capsys.readouterr().out
