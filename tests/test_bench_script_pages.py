"""bench/script_pages.py: the sweep that lists the pages walked with scripting off or with
streamed parts placed, and the pages whose text falls far short of trafilatura's."""
from __future__ import annotations

import gzip

from bench_scripts import bench_module
from script_fixtures import SCRIPT_SHELL, STREAMED


def test_the_sweep_counts_and_lists_the_pages_built_by_scripts(tmp_path, capsys):
    data = tmp_path / "datasets"
    (data / "forum" / "html").mkdir(parents=True)
    (data / "shop").mkdir()
    (data / "forum" / "html" / "thread.html").write_text(SCRIPT_SHELL, encoding="utf-8")
    (data / "shop" / "sofas.html.gz").write_bytes(gzip.compress(STREAMED.encode()))
    (data / "shop" / "notes.txt").write_text("not a page")
    mod = bench_module("script_pages")
    assert [p.name for p in mod.pages_below(data)] == ["thread.html", "sofas.html.gz"]
    assert mod.main(["--data", str(data), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "| forum | 1 | 1 | 0 |" in out and "| shop | 1 | 0 | 1 |" in out and "| all | 2 | 1 | 1 |" in out
    listed = {line.split(" | ")[0]: line for line in out.splitlines() if " | " in line and "/" in line}
    assert listed["forum/html/thread.html"].split(" | ")[1] == "yes"
    assert listed["shop/sofas.html.gz"].split(" | ")[2] == "2"
