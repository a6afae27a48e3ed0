"""The features stage over a dataset folder: parquet parts, labels, sitelevel, failures, CLI."""
from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.features.build import FEATURE_COLUMNS, build_features, own_terms, page_rows
from hwnoise.features.columns import EXTENDED_FEATURES, THESIS_FEATURES

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"

TEMPLATE = """<html><head><title>Books</title></head><body>
<div class="menu"><a href="/">Home</a> <a href="/about">About us</a></div>
<h2>Results for {q}</h2>
<ul class="results">{items}</ul>
<div class="foot">Copyright 2026 Bookshop</div>
</body></html>"""


def make_dataset(root: Path, n: int = 4) -> Dataset:
    ds = Dataset.create(root / "shop", name="shop", source="test")
    for k in range(n):
        q = ["tolkien", "austen", "orwell", "woolf", "dickens"][k % 5]
        items = "".join(f"<li><b>{q.title()} book {j}</b> paperback edition {j}</li>" for j in range(3))
        sub = ds.add_submission({"method": "GET", "url": f"http://shop.example/search?q={q}&p={k}",
                                 "fields": [{"name": "author", "value": q}]})
        ds.write_page(sub["id"], TEMPLATE.format(q=q.title(), items=items).encode("utf-8"))
        if k != n - 1:  # the last page has no gold
            gold = "\n".join(f"{q.title()} book {j} paperback edition {j}" for j in range(3))
            ds.write_gold(sub["id"], gold)
    ds.write_query([{"term": t, "kind": "value", "submissions": []}
                    for t in ["tolkien", "austen", "orwell", "woolf"]])
    return ds


def test_own_terms_are_field_names_and_values_tokenised():
    assert own_terms([{"name": "author", "value": "J. R. R. Tolkien"}, {"name": "q", "value": ""}]) == \
        ["author", "j", "r", "tolkien", "q"]


def test_build_writes_one_table_with_labels_and_sitelevel(tmp_path, capsys):
    ds = make_dataset(tmp_path)
    out = build_features(ds, progress=False)
    assert out == ds.features_path and out.is_dir()
    df = ds.read_features()
    assert list(df.columns) == FEATURE_COLUMNS
    assert set(THESIS_FEATURES + EXTENDED_FEATURES) <= set(df.columns)
    pages = list(ds.pages())
    assert df["page"].nunique() == 4 and set(df["dataset"]) == {"shop"}
    assert set(df["site"]) == {"shop.example"}
    # the page without gold has no labels, the others have S and N
    nogold = df[df["page"] == pages[-1].id]
    assert nogold["label"].isna().all()
    withgold = df[df["page"] != pages[-1].id]
    assert set(withgold["label"]) == {"S", "N"}
    li = withgold[withgold["tag"] == "li"]
    assert (li["label"] == "N").all()
    assert (withgold[withgold["tag"] == "a"]["label"] == "S").all()
    # sitelevel: the menu links hold the same text at the same path on every page
    assert (df[df["tag"] == "a"]["sitelevel"] == 1.0).all()
    assert (df[df["xpath"].str.endswith("/h2[1]")]["sitelevel"] == 0.25).all()
    # query and own terms
    first = df[df["page"] == pages[0].id].set_index("xpath")
    assert first.loc["/html/body/h2[1]", "matches"] == 1  # "Tolkien" in the query
    assert first.loc["/html/body/ul[1]", "own_query_score"] == pytest.approx(3 / 3)  # ul/li/b/text
    err = capsys.readouterr().err
    assert "4 pages" in err and "0 failed" in err and "content share" in err


def test_a_failing_page_is_reported_and_skipped(tmp_path, capsys):
    ds = make_dataset(tmp_path, n=3)
    bad = ds.add_submission({"method": "GET", "url": "http://shop.example/broken", "fields": []})
    (ds.path / "pages" / f"{bad['id']}.html").mkdir()  # unreadable as a file
    build_features(ds, progress=False)
    err = capsys.readouterr().err
    line = [ln for ln in err.splitlines() if "skipped" in ln]
    assert len(line) == 1 and f"{bad['id']}.html" in line[0] and "cannot read" in line[0]
    assert "1 failed" in err
    df = ds.read_features(columns=["page"])
    assert df["page"].nunique() == 3


def test_submissions_without_a_page_file_are_counted(tmp_path, capsys):
    """A submission whose page was never fetched (or whose file went missing) has no rows; the
    summary says how many, so that a crawl that lost pages does not pass for a complete one."""
    ds = make_dataset(tmp_path, n=3)
    gone = ds.add_submission({"method": "GET", "url": "http://shop.example/never", "fields": []})
    assert ds.unfetched() == [gone["id"]]
    build_features(ds, progress=False)
    err = capsys.readouterr().err
    assert "3 pages" in err and "1 submission(s) without a page file" in err
    assert ds.read_features(columns=["page"])["page"].nunique() == 3
    build_features(make_dataset(tmp_path / "full", n=2), progress=False)
    assert "without a page file" not in capsys.readouterr().err


def test_workers_give_the_same_table_and_a_rerun_replaces_it(tmp_path):
    ds = make_dataset(tmp_path, n=5)
    build_features(ds, workers=1, progress=False)
    one = ds.read_features()
    build_features(ds, workers=2, progress=False)
    two = ds.read_features()
    pd.testing.assert_frame_equal(one, two)
    assert not list(ds.path.glob(".features.parquet*"))  # no temp folders left behind


def test_a_run_killed_outright_leaves_a_work_folder_the_next_run_removes(tmp_path, capsys):
    """SIGKILL runs no ``finally``: the killed run's work folder (its spilled parts) stays. The
    next run removes it, and says so, but keeps a folder whose owner still runs or is another
    machine's process."""
    ds = make_dataset(tmp_path, n=3)
    stuck = ds.add_submission({"method": "GET", "url": "http://shop.example/stuck", "fields": []})
    fifo = ds.path / "pages" / f"{stuck['id']}.html"
    os.mkfifo(fifo)  # reading it blocks: the run is caught midway, its work folder made
    run = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "features", str(ds.path),
                            "--scheduler", "sync", "--no-progress"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list(ds.path.glob(".features.parquet.*.tmp/owner")) and time.monotonic() < deadline:
            time.sleep(0.05)
        (left,) = ds.path.glob(".features.parquet.*.tmp")
    finally:
        run.kill()
        run.wait()
    fifo.unlink()
    host = socket.gethostname()
    kept = [ds.path / ".features.parquet.live.tmp", ds.path / ".features.parquet.other.tmp"]
    for folder, owner in zip(kept, [f"{host} {os.getpid()}", f"not-{host} 1"]):
        folder.mkdir()
        (folder / "owner").write_text(owner)
    capsys.readouterr()
    build_features(ds, progress=False)
    err = capsys.readouterr().err
    assert not left.exists() and f"removed {left.name}, the work folder of a run that was killed" in err
    assert all(folder.exists() for folder in kept)
    assert ds.read_features(columns=["page"])["page"].nunique() == 3


def test_workers_files_give_the_same_part_files(tmp_path):
    """The local pool's workers hand the pages' columns over in Arrow files (``_spill_pages``)
    that become the parts: with a failing page the 200-page part boundary falls inside a
    worker's file; the part files are byte for byte those of one process, and no worker file
    is left behind."""
    ds = make_dataset(tmp_path, n=230)
    bad = ds.add_submission({"method": "GET", "url": "http://shop.example/broken", "fields": []})
    (ds.path / "pages" / f"{bad['id']}.html").mkdir()  # unreadable as a file
    files = {}
    for workers in (1, 2):
        build_features(ds, workers=workers, progress=False)
        files[workers] = {f.name: f.read_bytes() for f in sorted(ds.features_path.iterdir())}
        assert not list(ds.path.glob(".features.parquet*"))
    assert list(files[1]) == ["part-00000.parquet", "part-00001.parquet"]
    assert files[1] == files[2]
    assert ds.read_features(columns=["page"])["page"].nunique() == 230


def test_a_workers_task_is_one_batch_and_its_pages_join_a_part_as_walked_here(tmp_path):
    """``_spill_pages`` writes a task's pages as one record batch; a page whose columns are not
    ``SCHEMA``'s (here one column too many) and a failed page stay in their results. The part
    made from the file's slices and that page (``_Batcher._part_batch``) equals the part made
    from every page's own columns, and the file is gone once its pages were taken."""
    import pyarrow as pa

    import hwnoise.features.build as build

    ds = make_dataset(tmp_path, n=5)
    jobs, _sites, _ = build._page_plan(ds, arrow=True)
    build._init_worker(ds.query_terms())
    results = [build._page_job(job) for job in jobs]
    results[3] = (results[3][0], None, "a failed page")
    odd = dict(results[1][1][0], extra=results[1][1][0]["node"])
    results[1] = (results[1][0], (odd, *results[1][1][1:]), None)
    path = tmp_path / "task.arrow"
    spilled = build._spill_pages(list(results), str(path))
    with pa.memory_map(str(path)) as source:
        assert pa.ipc.open_file(source).num_record_batches == 1
    refs = [r[1][0] for r in spilled if r[2] is None]
    assert [type(x).__name__ for x in refs] == ["_Spilled", "dict", "_Spilled", "_Spilled"]
    assert [x.offset for x in refs if not isinstance(x, dict)] == [0, len(results[0][1][1]),
                                                                   len(results[0][1][1]) + len(results[2][1][1])]

    def part(items):
        b = build._Batcher(tmp_path, build.FEATURE_COLUMNS, build.SCHEMA, "shop")
        pages = []
        for pid, res, err in items:
            if err is not None:
                continue
            cols, keys = res[0], res[1]
            if isinstance(cols, dict):
                cols = build.page_columns({k: v for k, v in cols.items() if k != "extra"}, build.SCHEMA)
            pages.append((pid, "site", cols, None if keys is None else keys,
                          cols.rows if keys is None else len(keys)))
        return b._part_batch(pages)

    assert part(spilled).equals(part(results))
    assert not path.exists()


def test_the_features_command_runs_on_one_blas_thread_unless_told(tmp_path):
    """``hwnoise features`` makes no BLAS call: OpenBLAS's spinning server threads are CPU for
    nothing, so the command loads numpy with one BLAS thread; a user's OPENBLAS_NUM_THREADS
    stands."""
    ds = make_dataset(tmp_path, n=1)
    code = ("import os, sys; from hwnoise.cli import main; "
            f"main(['features', {str(ds.path)!r}, '--no-progress']); "
            "from threadpoolctl import threadpool_info; "
            "print([d['num_threads'] for d in threadpool_info() if d['internal_api'] == 'openblas'])")
    for env, want in (({}, "1"), ({"OPENBLAS_NUM_THREADS": "2"}, "2")):
        base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**base, **env})
        assert out.returncode == 0, out.stderr
        threads = out.stdout.strip().splitlines()[-1]
        assert threads in ("[]", f"[{want}]"), threads  # [] when numpy uses another BLAS


@pytest.mark.parametrize("command", ["features", "extract"])
def test_the_pool_forks_a_process_without_threads(tmp_path, command):
    """The local pool forks its workers: a parent with other threads (pyarrow's jemalloc starts a
    background thread when imported, OpenBLAS its server threads) may deadlock a child, which
    Python 3.12 and later warn of. ``hwnoise features`` and ``extract`` start pyarrow without
    that thread and numpy with one BLAS thread, so each fork sees one thread; a user's own
    JE_ARROW_MALLOC_CONF stands."""
    ds = make_dataset(tmp_path, n=40)
    if command == "features":
        argv = ["features", str(ds.path), "--no-progress"]
    else:
        argv = ["extract", *map(str, sorted((ds.path / "pages").iterdir())), "--jsonl",
                "-o", str(tmp_path / "out.jsonl")]
    code = ("import os, sys\n"
            "seen = []\n"
            "os.register_at_fork(before=lambda: seen.append(len(os.listdir('/proc/self/task'))))\n"
            "from hwnoise.cli import main\n"
            f"code = main({argv + ['--workers', '2']!r})\n"
            "print(code, seen)\n")
    for env, one in (({}, True), ({"JE_ARROW_MALLOC_CONF": "background_thread:true"}, False)):
        base = {k: v for k, v in os.environ.items() if k != "JE_ARROW_MALLOC_CONF"}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**base, **env})
        assert out.returncode == 0, out.stderr
        code_, seen = out.stdout.strip().splitlines()[-1].split(" ", 1)
        threads = [int(t) for t in seen.strip("[]").split(",") if t.strip()]
        assert code_ == "0" and threads, out.stdout  # the pool forked at least once
        assert all(t == 1 for t in threads) == one, (env, threads)


def test_page_rows_for_one_page():
    rows = page_rows(b"<body><p>Nome aprovado</p></body>", ["nome"])
    assert rows.loc[1, "matches"] == 1 and rows.loc[0, "query_score"] == 0.5


def test_cli_dataset_and_single_page(tmp_path, capsys):
    ds = make_dataset(tmp_path, n=2)
    assert main(["features", str(ds.path), "--no-progress"]) == 0
    assert ds.read_features(columns=["page"])["page"].nunique() == 2
    page = tmp_path / "q.html"
    page.write_text("<body><p>Nome do candidato aprovado</p><table><tr><td>Julia</td>"
                    "<td>Marcelo</td></tr></table></body>", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "hwnoise.cli", "features", str(page),
                          "--query", "nome Marcelo aprovado S"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    header = lines[0].split(",")
    assert header[2:14] == ["xpath", "tag", "chars", "tags", "link_chars", "link_tags", "td", "ctd",
                            "density_sum", "query_score", "matches", "distance"]
    body = dict(zip(header, lines[1].split(",")))
    assert body["xpath"] == "/html/body" and float(body["query_score"]) == 1.25
    missing = subprocess.run([sys.executable, "-m", "hwnoise.cli", "features", str(tmp_path / "no.html")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "no.html" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.datasets
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets not present")
def test_build_on_real_big9_and_wcxb_pages(tmp_path):
    """A plain dataset of a few big9 and WCXB pages with their gold: every page walks and labels."""
    ds = Dataset.create(tmp_path / "real", name="real", source="test")
    n = 0
    for html in sorted((DATASETS / "big9" / "big5-09" / "html").glob("*"))[:5]:
        gold = html.parent.parent / "gold" / (html.stem + ".txt")
        sub = ds.add_submission({"method": "GET", "url": f"http://big9/{html.name}",
                                 "fields": [{"name": "q", "value": html.stem.split(" ")[0]}]})
        ds.write_page(sub["id"], html.read_bytes())
        raw = gold.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("cp1252", "replace")
        ds.write_gold(sub["id"], text)
        n += 1
    for html in sorted((DATASETS / "wcxb" / "dev" / "html").glob("*.html.gz"))[:3]:
        sub = ds.add_submission({"method": "GET", "url": f"http://wcxb/{html.name}", "fields": []})
        ds.write_page(sub["id"], gzip.decompress(html.read_bytes()))
        n += 1
    build_features(ds, workers=2, progress=False)
    df = ds.read_features()
    assert df["page"].nunique() == n
    labelled = df[df["label"].notna()]
    share = (labelled["label"] == "N").mean()
    assert 0.01 < share < 0.9


def test_read_features_takes_only_the_columns_and_pages_asked(tmp_path):
    """Projection and page filters: only the asked columns and pages come back, and a column the
    table lacks is left out rather than failing."""
    ds = Dataset.create(tmp_path / "ds", name="ds", source="test")
    for k in range(3):
        ds.write_page(f"p{k}", f"<html><body><div><p>page {k} text</p><a href=#>menu</a></div>"
                      "</body></html>".encode())
        ds.write_gold(f"p{k}", f"page {k} text")
    build_features(ds, progress=False)
    full = ds.read_features()
    part = ds.read_features(["page", "ctd", "no_such_column"], pages=["p1", "p2"])
    assert list(part.columns) == ["page", "ctd"]
    assert sorted(part["page"].unique()) == ["p1", "p2"]
    want = full[full["page"].isin(["p1", "p2"])]
    assert part["ctd"].tolist() == want["ctd"].tolist()
    lab = ds.read_features(["page", "label"], filters=[("label", "==", "N")])
    assert len(lab) == int((full["label"] == "N").sum()) > 0


def test_part_files_do_not_change_the_table(tmp_path, monkeypatch):
    """Pages batched into several part files give the same table (sitelevel included) as one part."""
    import hwnoise.features.build as build

    def make(name):
        ds = Dataset.create(tmp_path / name, name="same", source="test")
        for k in range(5):
            ds.write_page(f"p{k}", (f"<html><body><ul><li>home</li><li>news</li></ul><p>story {k} "
                                    f"{'long ' * k}</p></body></html>").encode())
            ds.write_gold(f"p{k}", f"story {k}")
        return ds

    one = make("one")
    build_features(one, progress=False)
    monkeypatch.setattr(build, "_PART_PAGES", 2)
    many = make("many")
    build_features(many, progress=False)
    assert len(list(many.features_path.glob("part-*.parquet"))) == 3
    assert not list(many.features_path.glob("*.arrow"))
    a, b = one.read_features(), many.read_features()
    pd.testing.assert_frame_equal(a, b)
    assert sorted(b["sitelevel"].unique().tolist()) == [0.2, 1.0]
    # each part says which pages it holds (min/max of the keys), so a page filter skips the others
    import pyarrow.parquet as pq

    spans = []
    for part in sorted(many.features_path.glob("part-*.parquet")):
        meta = pq.ParquetFile(part).metadata.row_group(0)
        cols = {meta.column(i).path_in_schema: meta.column(i) for i in range(meta.num_columns)}
        page = cols["page"].statistics
        assert page is not None and page.has_min_max and cols["ctd"].statistics is None
        spans.append((page.min, page.max))
    assert spans == [("p0", "p1"), ("p2", "p3"), ("p4", "p4")]


def test_feature_cache_gives_each_page_its_rows_and_holds_few_tables(tmp_path):
    """The cache hands out each page's rows exactly as the whole table split by page gives them
    (non-ASCII text and pages without gold included), keeping at most ``datasets`` tables."""
    from hwnoise.features.assembly import FeatureCache

    sets = []
    for name in ("a", "b", "c"):
        ds = Dataset.create(tmp_path / name, name=name, source="test")
        for k in range(3):
            ds.write_page(f"p{k}", f"<html><body><div><p>café {name} {k} ünïcode</p>"
                          f"<a href=#>menu</a></div></body></html>".encode())
            if k:
                ds.write_gold(f"p{k}", f"café {name} {k}")
        build_features(ds, progress=False)
        sets.append(ds)
    cache = FeatureCache(datasets=2)
    for ds in sets:
        whole = ds.read_features()
        for page in ds.pages():
            want = whole[whole["page"] == page.id].sort_values("node").reset_index(drop=True)
            pd.testing.assert_frame_equal(cache.page_rows(page), want)
        assert len(cache._by_dataset) <= 2
    assert list(cache._by_dataset) == [sets[1].path, sets[2].path]
    none = Dataset.create(tmp_path / "none", name="none", source="test")
    none.write_page("x", b"<html><body><p>x</p></body></html>")
    assert cache.page_rows(next(none.pages())) is None


def test_feature_cache_reads_a_part_at_a_time(tmp_path, monkeypatch):
    """On a table of several part files the cache gives every page its rows (asked out of
    order) and holds at most ``parts`` parts, never the whole table."""
    import hwnoise.features.build as build
    from hwnoise.features.assembly import FeatureCache

    monkeypatch.setattr(build, "_PART_PAGES", 2)
    ds = Dataset.create(tmp_path / "d", name="d", source="test")
    for k in range(7):
        ds.write_page(f"p{k}", f"<html><body><div><p>café {k} {'word ' * k}</p><a href=#>menu</a>"
                      f"</div></body></html>".encode())
        ds.write_gold(f"p{k}", f"café {k}")
    build_features(ds, progress=False)
    assert len(list(ds.features_path.glob("part-*.parquet"))) == 4
    whole = ds.read_features()
    cache = FeatureCache(parts=2)
    pages = {p.id: p for p in ds.pages()}
    for pid in ["p6", "p0", "p3", "p1", "p6", "p4"]:
        want = whole[whole["page"] == pid].sort_values("node").reset_index(drop=True)
        pd.testing.assert_frame_equal(cache.page_rows(pages[pid]), want)
        assert len(cache._units) <= 2
        assert sum(t.num_rows for t, _ in cache._units.values()) < len(whole)


def test_sitelevel_keys_are_stable_across_processes():
    """The site keys hash (tag path, own text) the same way in another interpreter (no salt)."""
    from hwnoise.features.walk import stable_hashes, walk_page

    html = "<html><body><ul><li>Home</li><li>Ünïcode — news</li></ul><p></p></body></html>"
    here = walk_page(html.encode()).site_keys.tolist()
    code = ("import sys; from hwnoise.features.walk import walk_page; "
            f"print(walk_page({html!r}.encode()).site_keys.tolist())")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert str(here) == there.stdout.strip()
    assert len(set(here)) == len(here)  # different (path, text) pairs, different keys
    h = stable_hashes(["", "a", "a\x00b", "ab", "é", "a"])
    assert h[1] == h[5] and len(set(h.tolist())) == 5


def test_features_command_does_not_load_pandas(tmp_path):
    """hwnoise features writes its table without importing pandas (a second of start-up)."""
    ds = make_dataset(tmp_path)
    code = ("import sys, numpy, pyarrow; eager = 'numpy.ma' in sys.modules; from hwnoise.cli import main; "
            f"main(['features', {str(ds.path)!r}, '--no-progress', '--workers', '1']); "
            "print('pandas' in sys.modules, 'numpy.ma' in sys.modules and not eager)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # numpy.ma neither (unless numpy or pyarrow import it themselves, as older versions do):
    # np.unique would import it on the first page of every process (6.5 ms)
    assert out.stdout.strip().splitlines()[-1] == "False False"
    assert ds.read_features()["label"].isna().sum() > 0  # the page without gold: null labels


def test_features_in_one_process_does_not_load_the_pool_nor_hashlib(tmp_path):
    """hwnoise features in one process imports neither concurrent.futures (7 ms: only a pool
    needs it) nor hashlib (3 ms: only page ids made from submissions do), unless numpy,
    pyarrow or lxml import them themselves; with two workers the pool is loaded."""
    ds = make_dataset(tmp_path)
    names = ("concurrent.futures", "multiprocessing", "hashlib")
    code = ("import sys, numpy, pyarrow, pyarrow.parquet, lxml.etree; "
            f"eager = {{m for m in {names!r} if m in sys.modules}}; from hwnoise.cli import main; "
            f"main(['features', {str(ds.path)!r}, '--no-progress', '--workers', 'WORKERS']); "
            f"print(','.join(sorted(eager))); "
            f"print(','.join(sorted(m for m in {names!r} if m in sys.modules and m not in eager)))")
    for workers in (1, 2):
        out = subprocess.run([sys.executable, "-c", code.replace("WORKERS", str(workers))],
                             capture_output=True, text=True, check=True)
        eager, loaded = (set(filter(None, x.split(","))) for x in out.stdout.splitlines()[-2:])
        if workers == 1:
            assert loaded == set(), (workers, out.stderr)
        else:  # the pool's modules: loaded now, unless a library had loaded them already
            assert loaded | eager >= {"concurrent.futures", "multiprocessing"}, (workers, out.stderr)


def test_string_columns_equal_arrow_own_conversion():
    """``_str_array`` makes its buffers itself (UTF-8 byte offsets from code points in numpy):
    the array equals ``pa.array`` of the same values, byte for byte, for ASCII, 2-, 3- and
    4-byte characters, empty strings and None."""
    import random

    import pyarrow as pa

    from hwnoise.features.build import _str_array

    rng = random.Random(15)
    alphabet = ["a", " ", "é", "ß", "€", "中", "\u2019", "😀", "\U0010fffd", "\x7f", "\x80", "\u07ff",
                "\u0800", "\uffff", "\U00010000"]
    cases = [[], [""], ["", None], ["ascii", "only"], [None, "é", None]]
    for _ in range(300):
        cases.append([None if rng.random() < 0.1 else
                      "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
                      for _ in range(rng.randrange(1, 12))])
    for vals in cases:
        got = _str_array(vals)
        want = pa.array(vals, pa.string())
        assert got.equals(want), vals
        assert got.to_pylist() == vals
        assert got.null_count == want.null_count


def test_unique_keys_equal_numpy_unique():
    """``build.unique_keys`` (a sort, no numpy.ma) gives ``np.unique``'s sorted distinct keys."""
    import numpy as np

    from hwnoise.features.build import unique_keys

    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 5, 500):
        for high in (3, 2**64 - 1):
            keys = rng.integers(0, high, size=n, dtype=np.uint64, endpoint=True)
            got = unique_keys(keys)
            assert got.dtype == np.uint64 and np.array_equal(got, np.unique(keys))


def test_page_job_file_helpers_equal_the_path_calls(tmp_path):
    """``_records_file``, ``_read_gold`` and ``labels.label_counts`` (str paths, no Path objects, no
    object ufunc) give what ``records_path_for``, ``Path.exists`` + ``read_text`` and the
    numpy counts gave."""
    import numpy as np

    from hwnoise.features.build import _read_gold, _records_file
    from hwnoise.features.labels import label_counts
    from hwnoise.features.record_gold import records_path_for

    for p in ("/d/ds/pages/a.html", "ds/pages/a.b.htm", "pages/x", "x.html", "/x.html", "a/.html"):
        assert _records_file(p) == str(records_path_for(p)), p
    gold = tmp_path / "g.txt"
    gold.write_bytes(b"line one\r\nline two\rthree \xff\xfe end\n")
    assert _read_gold(str(gold)) == gold.read_text(encoding="utf-8", errors="replace")
    assert _read_gold(str(tmp_path / "missing.txt")) is None
    assert _read_gold(str(gold / "below-a-file.txt")) is None  # Path.exists: False
    with pytest.raises(IsADirectoryError):  # exists, and read_text raised: still an error
        _read_gold(str(tmp_path))
    for labels in ([], [None], ["N", "S", None, "N"], ["S"] * 3):
        arr = np.array(labels, dtype=object)
        assert label_counts(arr) == (int(np.count_nonzero(arr != None)),  # noqa: E711
                                     int(np.count_nonzero(arr == "N")))


@pytest.mark.parametrize("workers", [1, 2])
def test_parts_read_back_every_page_row_in_order(tmp_path, monkeypatch, workers):
    """The parts as written (``write_parquet``): spilled parts, the last one from memory, and
    with two workers the pages' batches from the workers' buffered files (``_spill_pages``).
    Read back with a projection and filters, every page holds exactly its walk's rows, in
    order (a lost, doubled or moved page or row fails)."""
    import hwnoise.features.build as build

    monkeypatch.setattr(build, "_PART_PAGES", 7)
    ds = make_dataset(tmp_path, n=23)
    build_features(ds, workers=workers, progress=False)
    assert len(list(ds.features_path.glob("part-*.parquet"))) == 4
    assert not list(ds.features_path.glob("*.arrow")) and not list(ds.path.glob(".features.parquet*"))
    pages = list(ds.pages())
    terms = ds.query_terms()
    walks = {p.id: page_rows(p.html_path.read_bytes(), terms, p.http_charset, own=own_terms(p.fields))
             for p in pages}
    cols = ["page", "node", "xpath", "text", "ctd", "sitelevel"]
    full = ds.read_features(cols)
    assert full["page"].drop_duplicates().tolist() == [p.id for p in pages]
    assert len(full) == sum(len(w) for w in walks.values())
    asked = [p.id for p in pages[5:17:3]]  # across the parts' boundaries
    got = ds.read_features(cols, pages=asked, filters=[("node", ">=", 2)])
    assert list(got.columns) == cols and got["page"].drop_duplicates().tolist() == asked
    for pid in asked:
        rows, want = got[got["page"] == pid], walks[pid]
        want = want[want["node"] >= 2]
        assert len(rows) == len(want) > 0
        for c in ("node", "xpath", "text", "ctd"):
            assert rows[c].tolist() == want[c].tolist(), (pid, c)
    assert full["sitelevel"].notna().all() and full["sitelevel"].between(0, 1).all()


def test_write_parquet_gives_the_bytes_of_write_table(tmp_path):
    """``write_parquet`` (pyarrow's writer class, no ``pyarrow.parquet`` import) writes the
    bytes ``pq.write_table`` writes with the same options: the features' options on a table of
    ``SCHEMA`` with missing values and non-ASCII text, and pyarrow's defaults; an option only
    ``write_table`` takes goes to ``write_table``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hwnoise.features.build import SCHEMA, parquet_options, write_parquet

    rng = np.random.default_rng(5)
    n = 3000
    cols = []
    for f in SCHEMA:
        if f.type == pa.string():
            vals = [None if k % 7 == 0 else f"{f.name} é {k % 13} 文" for k in range(n)]
        elif f.type == pa.float64():
            vals = [None if k % 11 == 0 else float(x) for k, x in enumerate(rng.random(n))]
        else:
            vals = rng.integers(-5, 10**6, n).tolist()
        cols.append(pa.array(vals, f.type))
    table = pa.Table.from_arrays(cols, schema=SCHEMA)
    for options in (parquet_options(SCHEMA), {}, {"row_group_size": 1000}):
        mine, theirs = tmp_path / "mine.parquet", tmp_path / "theirs.parquet"
        write_parquet(table, mine, options)
        pq.write_table(table, theirs, **options)
        assert mine.read_bytes() == theirs.read_bytes(), options
        assert pq.read_table(mine).equals(table)
    assert pq.ParquetFile(mine).metadata.num_row_groups == 3  # row_group_size was used


def test_features_in_one_process_does_not_load_pyarrow_parquet(tmp_path):
    """hwnoise features writes its parts without importing ``pyarrow.parquet``, which imports
    ``pyarrow.fs`` (11 ms of start-up), unless pyarrow imports them itself."""
    ds = make_dataset(tmp_path)
    names = ("pyarrow.parquet", "pyarrow.fs")
    code = ("import sys, numpy, pyarrow, lxml.etree; "
            f"eager = {{m for m in {names!r} if m in sys.modules}}; from hwnoise.cli import main; "
            f"main(['features', {str(ds.path)!r}, '--no-progress', '--workers', '1']); "
            f"print('loaded:' + ','.join(sorted(m for m in {names!r} if m in sys.modules and m not in eager)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "loaded:", out.stderr
    assert ds.read_features()["page"].nunique() == 4


def test_the_features_command_ends_without_teardown_and_keeps_its_output(tmp_path):
    """As the command line's entry (``main()`` reading ``sys.argv``), ``hwnoise features`` of
    a dataset ends the process once its table is written, without the interpreter's teardown
    (no exit handler runs), its summary on stderr and its table whole, with one process and
    with the pool; one page's CSV and ``main(argv)`` return as before."""
    ds = make_dataset(tmp_path, n=6)
    page = tmp_path / "one.html"
    page.write_bytes(b"<html><body><p>one page</p></body></html>")

    def run(*args):
        code = ("import atexit, sys; atexit.register(lambda: print('teardown', file=sys.stderr)); "
                f"sys.argv = ['hwnoise', *{list(args)!r}]; from hwnoise.cli import main; sys.exit(main())")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    for workers in ("1", "2"):
        out = run("features", str(ds.path), "--no-progress", "--workers", workers)
        assert out.returncode == 0, out.stderr
        assert "teardown" not in out.stderr and "features shop: 6 pages" in out.stderr, out.stderr
        assert ds.read_features(["page"])["page"].nunique() == 6
        assert not list(ds.path.glob(".features.parquet*"))
    out = run("features", str(page))
    assert out.returncode == 0 and "teardown" in out.stderr and out.stdout.startswith("node,parent")
    assert main(["features", str(ds.path), "--no-progress", "--workers", "1"]) == 0  # returns


def test_a_dataset_none_of_whose_pages_walk_is_an_error_and_keeps_its_table(tmp_path, capsys):
    ds = make_dataset(tmp_path)
    assert main(["features", str(ds.path), "--no-progress"]) == 0
    before = pd.read_parquet(ds.features_path)
    for page in ds.path.glob("pages/*.html"):
        page.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)  # a crawl that fetched images
    capsys.readouterr()
    assert main(["features", str(ds.path), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"hwnoise: error: features {ds.name}: none of its 4 page(s) could be walked (the first: " in err
    assert "not HTML (a PNG image)" in err and "features.parquet left as it was" in err
    pd.testing.assert_frame_equal(pd.read_parquet(ds.features_path), before)
    assert not list(ds.path.glob(".features.parquet.*"))


def test_a_page_journaled_from_an_answer_without_a_whole_page_is_reported_and_skipped(tmp_path, capsys):
    # a run before 204, 205, 304 and 206 were failures journaled them successes with their bodies:
    # a 206's part of a page was walked and labelled as a whole page without a word (a 204's empty
    # file was skipped as 'an empty file', not saying why)
    ds = make_dataset(tmp_path, n=2)
    part = TEMPLATE.format(q="Part", items="<li>first</li>").encode()[:120]
    for status, body in ((206, part), (204, b"")):
        sub = ds.add_submission({"method": "GET", "url": f"http://shop.example/s{status}", "fields": []})
        ds.write_page(sub["id"], body)
        ds.append_journal({"submission": sub["id"], "url": sub["url"], "status": status, "bytes": len(body),
                           "sha256": "0" * 64, "error": None})
    build_features(ds, progress=False)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "skipped" in ln]
    assert len(lines) == 2 and "2 failed" in err
    for ln, status in zip(lines, (206, 204)):
        assert f"HTTP {status}" in ln and "no whole page" in ln and "hwnoise collect" in ln
    assert ds.read_features(columns=["page"])["page"].nunique() == 2


def test_the_parent_loads_what_every_worker_would_before_the_pool_forks():
    """``_warm_for_workers`` (before the local pool forks) loads cssselect and charset-normalizer
    with the codecs its first guess imports, so that the workers share them through fork."""
    code = ("import sys; import hwnoise.features.build as b; "
            "before = {m for m in ('cssselect', 'charset_normalizer') if m in sys.modules}; "
            "b._warm_for_workers(); "
            "print(sorted(before), 'cssselect' in sys.modules, 'charset_normalizer' in sys.modules, "
            "sum(m.startswith('encodings.cp') for m in sys.modules) > 5)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "True", "True", "True"]


def test_one_column_page_or_query_kind_given_as_a_str_is_one_name(tmp_path, capsys):
    """read_features("page") read no column and pages="ID" no row, query_terms("value") no
    term, without a word: a str was iterated letter by letter."""
    ds = make_dataset(tmp_path, n=3)
    build_features(ds, progress=False)
    one = ds.page_ids()[0]
    assert list(ds.read_features("page").columns) == ["page"]
    assert ds.read_features(["page"], pages=one)["page"].unique().tolist() == [one]
    ds.write_query([{"term": "tea", "kind": "value"}, {"term": "Search", "kind": "label"}])
    assert ds.query_terms("value") == ds.query_terms(["value"]) == ["tea"]
