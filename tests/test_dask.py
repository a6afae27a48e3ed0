"""A real Dask cluster on 127.0.0.1 (a ``dask scheduler`` and two ``dask worker`` processes):
features, train and evaluate through it give what the serial run gives, the scheduler's task
counts show the work went there, a worker killed mid-run changes nothing, and an unreachable
scheduler is one clear error."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("distributed")
from distributed import Client  # noqa: E402

from hwnoise.cli import main  # noqa: E402
from hwnoise.features.build import build_features  # noqa: E402
from hwnoise.scheduler import Scheduler  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HWNOISE_PROGRESS": "0", "PYTHONPATH": str(REPO / "tests")}


def _start(args: list[str], log: Path) -> subprocess.Popen:
    # a session of its own, so that the nanny and its worker are stopped together
    return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, env=ENV, cwd=log.parent, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(3)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _worker(address: str, name: str, log: Path) -> subprocess.Popen:
    return _start(["worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                   "--name", name, "--memory-limit", "2GiB"], log)


def _wait_workers(client: Client, names: set[str], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        have = {w["name"] for w in client.scheduler_info()["workers"].values()}
        if names <= have:
            return
        time.sleep(0.1)
    raise AssertionError(f"workers {names} did not join")


def _scheduler(folder: Path) -> tuple[list[subprocess.Popen], str]:
    """A ``dask scheduler`` on a free port of 127.0.0.1, its log and scheduler file in ``folder``:
    ``([its process], its address)``."""
    sched_file = folder / "scheduler.json"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sched_file)], folder / "scheduler.log")]
    end, address = time.monotonic() + 60, None
    while address is None and time.monotonic() < end:  # the file appears before it is written
        time.sleep(0.1)
        try:
            address = json.loads(sched_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            pass
    if address is None:
        _stop(procs[0])
        raise AssertionError(f"the scheduler did not start: {(folder / 'scheduler.log').read_text()[-500:]}")
    return procs, address


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask")
    procs, address = _scheduler(root)
    try:
        procs += [_worker(address, f"w{i}", root / f"w{i}.log") for i in (1, 2)]
        client = Client(address, timeout=30, set_as_default=False)
        _wait_workers(client, {"w1", "w2"})
        yield address, client, root
        client.close()
    finally:
        for p in reversed(procs):
            _stop(p)


def task_counts(client: Client) -> dict[str, int]:
    """Tasks the scheduler has seen through to a worker, by function name."""
    def counts(dask_scheduler):
        return {name: tp.state_counts.get("processing", 0) for name, tp in dask_scheduler.task_prefixes.items()}
    return client.run_on_scheduler(counts)


def executed(client: Client) -> dict[str, int]:
    return {w["name"]: n for addr, n in client.run(lambda dask_worker: dask_worker.state.executed_count).items()
            for a, w in client.scheduler_info()["workers"].items() if a == addr}


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    from test_evaluate import LAYOUTS, make_dataset

    root = tmp_path_factory.mktemp("dask-data")
    return [make_dataset(root, site, pages=6) for site in LAYOUTS]


def results(path: Path) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in json.loads(path.read_text())["results"]]


def test_features_train_evaluate_on_the_cluster_equal_the_serial_run(cluster, datasets, tmp_path, monkeypatch,
                                                                      capsys):
    address, client, _ = cluster
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "key"))
    before, ran_before = task_counts(client), executed(client)

    # features: the same table, walked by the workers
    serial = {}
    for d in datasets:
        build_features(d, progress=False)
        serial[d] = pd.read_parquet(d / "features.parquet")
    with Scheduler(address) as sched:
        for d in datasets:
            build_features(d, progress=False, scheduler=sched)
            pd.testing.assert_frame_equal(pd.read_parquet(d / "features.parquet"), serial[d])

    # train: the same model and scores
    dirs = list(map(str, datasets))
    for name, sched in (("serial", "sync"), ("cluster", address)):
        assert main(["train", *dirs, "--preset", "thesis", "--protocol", "cv", "-k", "3", "--no-tree", "--out", str(tmp_path / name),
                     "--scheduler", sched]) == 0
    assert results(tmp_path / "serial" / "report.json") == results(tmp_path / "cluster" / "report.json")
    from hwnoise.training.model import NoiseModel

    assert NoiseModel.load(tmp_path / "serial").tree_text() == NoiseModel.load(tmp_path / "cluster").tree_text()

    # evaluate: the same report
    for name, sched in (("eval-serial", "sync"), ("eval-cluster", address)):
        assert main(["evaluate", *dirs, "--methods", "model,cetd,alltext", "--preset", "thesis", "--protocol", "cross-site", "-k", "3",
                     "--no-figures", "--out", str(tmp_path / name), "--scheduler", sched]) == 0
    got = results(tmp_path / "eval-cluster" / "report.json")
    assert got == results(tmp_path / "eval-serial" / "report.json")
    assert {r["method"] for r in got} == {"model", "cetd", "alltext"} and len(got) == 9
    assert not (tmp_path / "eval-cluster" / ".parts").exists()     # part files removed once reported

    after, ran_after = task_counts(client), executed(client)
    done = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    assert done.get("features_batch", 0) >= 3     # features: page batches of every dataset
    assert done.get("train_fit", 0) == 4           # train: all the data + 3 folds
    assert done.get("evaluate_fit", 0) == 3        # evaluate: 3 folds ...
    assert done.get("evaluate_score", 0) >= 3      # ... and their page batches
    assert all(ran_after[w] > ran_before.get(w, 0) for w in ("w1", "w2"))   # both workers worked


def test_a_worker_killed_mid_run_changes_nothing(cluster, datasets, tmp_path):
    address, client, root = cluster
    args = [*map(str, datasets), "--methods", "model,cetd", "--preset", "thesis", "--protocol", "cv", "-k", "3", "--no-figures"]
    assert main(["evaluate", *args, "--out", str(tmp_path / "serial"), "--scheduler", "sync"]) == 0
    victim = _worker(address, "victim", root / "victim.log")
    try:
        _wait_workers(client, {"victim"})
        addr = next(a for a, w in client.scheduler_info()["workers"].items() if w["name"] == "victim")
        run = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "evaluate", *args, "--out",
                                str(tmp_path / "cluster"), "--scheduler", address], env=ENV, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        killed = False
        while run.poll() is None and not killed:
            if client.processing(addr).get(addr):
                os.killpg(victim.pid, signal.SIGKILL)   # the worker process, mid-task
                killed = True
            else:
                time.sleep(0.005)
        _, err = run.communicate(timeout=120)
        assert killed, "the run ended before the victim got a task"
        assert run.returncode == 0, err.decode()
    finally:
        _stop(victim)
    assert results(tmp_path / "cluster" / "report.json") == results(tmp_path / "serial" / "report.json")


def test_relative_dataset_paths_name_the_same_folders_on_the_workers(cluster, datasets, tmp_path):
    """The workers run in a folder of their own: the paths a user types relative to the shell's
    folder reach them absolute (they said "not a dataset folder", or walked no page)."""
    address, _, root = cluster
    assert all(d.parent != root for d in datasets)
    names = [d.name for d in datasets]
    cwd = datasets[0].parent
    assert all(d.parent == cwd for d in datasets)

    def hw(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hwnoise.cli", *args, "--scheduler", address], env=ENV,
                              cwd=cwd, capture_output=True, text=True, timeout=300)

    features = hw("features", *names)
    assert features.returncode == 0 and " 0 failed" in features.stderr, features.stderr
    assert all(f"{d.name}: 6 pages" in features.stderr for d in datasets)
    train = hw("train", *names, "--preset", "thesis", "--protocol", "cv", "-k", "3", "--no-tree", "--out",
               str(tmp_path / "m"))
    assert train.returncode == 0, train.stderr
    evaluate = hw("evaluate", *names, "--methods", "cetd", "--protocol", "cv", "-k", "3", "--no-figures",
                  "--out", str(tmp_path / "e"))
    assert evaluate.returncode == 0, evaluate.stderr
    assert len(results(tmp_path / "e" / "report.json")) == len(datasets)


def _without_table(src: Path, dst: Path) -> Path:
    """A copy of the dataset ``src`` without its feature table."""
    import shutil

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("features.parquet"))
    assert not (dst / "features.parquet").exists()
    return dst


def test_train_builds_a_missing_table_on_the_cluster(cluster, datasets, tmp_path):
    """``train --scheduler tcp://`` on a dataset without a table walks its pages on the workers
    (it walked them here, on one core, before the cluster was reached), and the table is the
    one ``hwnoise features`` writes."""
    address, client, _ = cluster
    ds = _without_table(datasets[0], tmp_path / datasets[0].name)
    before = task_counts(client)
    assert main(["train", str(ds), "--preset", "thesis", "--protocol", "cv", "-k", "3", "--no-tree",
                 "--scheduler", address]) == 0
    after = task_counts(client)
    assert after.get("features_batch", 0) > before.get("features_batch", 0)
    assert after.get("train_fit", 0) - before.get("train_fit", 0) == 4   # the fits on the same cluster
    built = pd.read_parquet(ds / "features.parquet")
    build_features(datasets[0], progress=False)
    pd.testing.assert_frame_equal(built, pd.read_parquet(datasets[0] / "features.parquet"))


def _fails(x: int) -> int:
    raise ValueError(f"task {x} failed on its own")


def test_a_task_that_fails_on_the_cluster_raises_its_own_error(cluster):
    """Its own exception, not the scheduler-lost error (``Scheduler._dask_result``)."""
    address, _, _ = cluster
    with Scheduler(address) as sched, pytest.raises(ValueError, match=r"task \d failed on its own"):
        sched.map(_fails, [1, 2])


def test_losing_the_scheduler_mid_run_is_one_clear_error(tmp_path):
    from test_evaluate import make_dataset

    ds = make_dataset(tmp_path, "books.example", pages=1500)
    procs, address = _scheduler(tmp_path)
    try:
        procs.append(_worker(address, "only", tmp_path / "only.log"))
        watcher = Client(address, timeout=30, set_as_default=False)
        _wait_workers(watcher, {"only"})
        run = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "features", str(ds), "--scheduler", address],
                               env=ENV, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        killed = False
        while run.poll() is None and not killed:
            if any(watcher.processing().values()):
                os.killpg(procs[0].pid, signal.SIGKILL)   # the scheduler, mid-run
                killed = True
            else:
                time.sleep(0.005)
        watcher.close(timeout=5)
        _, err = run.communicate(timeout=180)
    finally:
        for p in reversed(procs):
            _stop(p)
    assert killed, "the run ended before the scheduler could be killed"
    err = err.decode()
    assert run.returncode == 1 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith(f"hwnoise: error: lost the Dask scheduler at {address} mid-run (")
    assert not (ds / "features.parquet").exists() and not list(ds.glob(".features.parquet.*"))


def test_an_unreachable_scheduler_is_one_clear_error(datasets, tmp_path):
    env = {**ENV, "HWNOISE_DASK_TIMEOUT": "1"}
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "evaluate", str(datasets[0]), "--out",
                          str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwnoise: error: cannot reach the Dask scheduler at "
                                                   "tcp://127.0.0.1:9")
    assert not (tmp_path / "o" / "report.json").exists()
    assert main(["features", str(datasets[0]), "--scheduler", "nowhere"]) == 1

    # train on a dataset without a table: the same one line, before any page is walked here
    bare = _without_table(datasets[0], tmp_path / "bare")
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "train", str(bare), "--scheduler",
                          "tcp://127.0.0.1:9"], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwnoise: error: cannot reach the Dask scheduler at "
                                                   "tcp://127.0.0.1:9"), res.stderr
    assert not (bare / "features.parquet").exists()


def test_a_killed_evaluation_resumes_from_its_part_files(datasets, tmp_path):
    args = [*map(str, datasets), "--methods", "cetd,alltext", "--protocol", "cv", "-k", "3", "--no-figures",
            "--scheduler", "sync"]
    assert main(["evaluate", *args, "--out", str(tmp_path / "clean")]) == 0
    out = tmp_path / "killed"
    run = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "evaluate", *args, "--out", str(out)], env=ENV,
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while run.poll() is None and not list(out.glob(".parts/*/*.json")):
        time.sleep(0.005)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert run.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    kept = len(list(out.glob(".parts/*/*.json")))
    assert 1 <= kept < 9 and not (out / "report.json").exists()
    res = subprocess.run([sys.executable, "-m", "hwnoise.cli", "evaluate", *args, "--out", str(out)], env=ENV,
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert f"resuming; {kept} of 9 page batches already scored" in res.stderr
    assert results(out / "report.json") == results(tmp_path / "clean" / "report.json")
    assert not (out / ".parts").exists()


def _can_hide_folders() -> bool:
    """Whether this machine lets a process mount over a folder in a mount namespace of its own
    (root, or a kernel that lets users do so), as a worker on another machine would lack it."""
    import shutil

    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs none /mnt 2>/dev/null || mount -t tmpfs none /tmp"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_hide_folders(), reason="needs unshare --mount (root) to hide a folder from a worker")
def test_a_worker_that_does_not_see_the_dataset_folders_is_one_error_before_any_task(datasets, tmp_path):
    """A worker on a machine without the dataset folders failed every page ('cannot read the
    page: No such file or directory' of a file the user sees) and features ended 'none of its
    pages could be walked'. Now each stage asks the workers first: one line naming the worker and
    the folder, exit 1, nothing written. The worker here runs in a mount namespace where the
    folder holding the dataset is an empty tmpfs, as on a machine that lacks it."""
    import shutil

    hidden = tmp_path / "hidden"
    ds = hidden / "site"
    shutil.copytree(datasets[0], ds)
    logs = tmp_path / "logs"
    logs.mkdir()
    procs, address = _scheduler(logs)
    try:
        worker = [sys.executable, "-m", "dask", "worker", address, "--nthreads", "1", "--no-nanny",
                  "--no-dashboard", "--host", "127.0.0.1", "--name", "blind"]
        script = f"mount -t tmpfs none '{hidden}' && exec \"$@\""
        procs.append(subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                                       *worker], stdout=open(logs / "blind.log", "wb"), stderr=subprocess.STDOUT,
                                      env=ENV, cwd=logs, start_new_session=True))
        with Client(address, timeout=30, set_as_default=False) as client:
            _wait_workers(client, {"blind"})
        assert main(["features", str(ds), "--scheduler", "sync", "--no-progress"]) == 0
        before = sorted((p.name, p.stat().st_mtime_ns) for p in ds.rglob("*"))
        for argv in (["features", str(ds)], ["train", str(ds), "--out", str(tmp_path / "m")],
                     ["evaluate", str(ds), "--out", str(tmp_path / "o"), "--methods", "cetd"]):
            res = subprocess.run([sys.executable, "-m", "hwnoise.cli", *argv, "--scheduler", address], env=ENV,
                                 cwd=REPO, capture_output=True, text=True, timeout=300)
            assert res.returncode == 1, (argv, res.stderr)
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1, (argv, res.stderr)
            assert lines[0].startswith(f"hwnoise: error: the Dask worker tcp://127.0.0.1:") and \
                f"does not see {ds}" in lines[0] and "same path" in lines[0], (argv, lines)
        assert sorted((p.name, p.stat().st_mtime_ns) for p in ds.rglob("*")) == before
        assert not (tmp_path / "m").exists() and not (tmp_path / "o" / "report.json").exists()
    finally:
        for p in reversed(procs):
            _stop(p)
