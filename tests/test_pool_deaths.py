"""A worker process that dies (the out-of-memory killer, a crash in native code on one page)
does not end a run on this machine's process pool: the features stage walks the pages it left
again, and a page that kills its process on its own is one failed page; ``Scheduler.map``
runs the unfinished tasks on a new pool once. Real processes, really killed."""
from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hwnoise.scheduler import Scheduler, SchedulerError, pool_imap

REPO = Path(__file__).resolve().parents[1]


def _doubled(items: list, marker: str | None) -> list:
    """Each item doubled; "poison" kills its process every time, "once" the first time only
    (``marker`` remembers it), as a page that crashes native code and a worker the system killed."""
    out = []
    for x in items:
        if x == "poison":
            faulthandler.disable()  # pytest's, inherited: no traceback dump for a death meant
            os.kill(os.getpid(), signal.SIGABRT)
        if x == "once" and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        out.append(x * 2)
    return out


def _alone(chunk: tuple) -> list[tuple]:
    return [([x], chunk[1]) for x in chunk[0]]


def _lost(piece: tuple, why: str) -> list:
    return [f"lost {piece[0][0]}: {why}"]


def test_pool_imap_survives_deaths_and_names_the_item_that_kills_alone(tmp_path, capfd):
    marker = str(tmp_path / "killed-once")
    chunks = [([1, 2], marker), ([3, "once", 4], marker), ([5, "poison", 6], marker), ([7], marker)]
    out = list(pool_imap(_doubled, chunks, workers=2, window=1, alone=_alone, lost=_lost))
    assert out == [[2, 4], [6, "onceonce", 8], [10, "lost poison: died of SIGABRT", 12], [14]]
    assert os.path.exists(marker)
    err = capfd.readouterr().err.splitlines()
    assert err == ["hwnoise: a worker process died of SIGKILL (what the out-of-memory killer sends); "
                   "the work it left is run again, one item at a time",
                   "hwnoise: a worker process died of SIGABRT; the work it left is run again, one item at a time"]


def test_pool_imap_keeps_the_order_with_many_chunks_in_flight(tmp_path):
    chunks = [(list(range(10 * k, 10 * k + 10)), None) for k in range(20)]
    chunks[7][0][3] = "poison"
    want = [[x * 2 for x in c] for c, _ in chunks]
    want[7][3] = "lost poison: died of SIGABRT"
    assert list(pool_imap(_doubled, chunks, workers=2, window=8, alone=_alone, lost=_lost)) == want


def _double_or_die(x, marker: str):
    if x == "always" or (x == "once" and not os.path.exists(marker)):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return x * 2


def test_scheduler_map_reruns_unfinished_tasks_once_then_fails_clearly(tmp_path, capfd):
    marker = str(tmp_path / "killed-once")
    with Scheduler("local", workers=2) as sched:
        assert sched.map(_double_or_die, [1, "once", 3, 4], marker) == [2, "onceonce", 6, 8]
    assert "run again on a new pool" in capfd.readouterr().err
    with Scheduler("local", workers=2) as sched, pytest.raises(SchedulerError) as exc:
        sched.map(_double_or_die, [1, "always", 3], marker, desc="folds")
    msg = str(exc.value)
    assert "died of SIGKILL" in msg and "twice" in msg and "of 'folds' unfinished" in msg


def _dataset(root: Path, pages: int) -> Path:
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from test_evaluate import make_dataset
    finally:
        sys.path.pop(0)
    return make_dataset(root, "books.example", pages=pages)


def _killing_a_worker(cmd: list[str], env: dict) -> tuple[bytes, bytes]:
    """Run ``cmd`` and kill the first worker of its pool as soon as it is there (stopped first, so
    that it holds its tasks); its stdout and stderr once it ended well, having said so."""
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    victim = None
    while run.poll() is None and victim is None:
        kids = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True).stdout.split()
        if kids:
            victim = int(kids[0])
            os.kill(victim, signal.SIGSTOP)
            os.kill(victim, signal.SIGKILL)
        else:
            time.sleep(0.01)
    out, err = run.communicate(timeout=300)
    assert victim is not None, "the run ended before its pool started"
    assert run.returncode == 0, err.decode()
    assert "a worker process died of SIGKILL" in err.decode()
    return out, err


def test_features_with_a_worker_killed_mid_run_writes_the_table_of_a_one_process_run(tmp_path):
    ds = _dataset(tmp_path, pages=600)
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "hwnoise.cli", "features", str(ds)]
    subprocess.run([*cmd, "--workers", "1"], env=env, check=True, capture_output=True)
    one = pq.read_table(ds / "features.parquet")
    _, err = _killing_a_worker([*cmd, "--workers", "2"], env)
    assert "600 pages" in err.decode() and " 0 failed" in err.decode()
    assert pq.read_table(ds / "features.parquet").equals(one)
    assert not list(ds.glob(".features.parquet.*"))
    assert sorted(p.name for p in (ds / "features.parquet").iterdir()) == \
        sorted(p.name for p in (ds / "features.parquet").glob("part-*.parquet"))


def test_extract_with_a_worker_killed_mid_run_writes_what_one_process_writes(tmp_path):
    ds = _dataset(tmp_path, pages=150)
    pages = sorted(str(p) for p in (ds / "pages").glob("*.html"))
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "hwnoise.cli", "extract", *pages, "--jsonl"]
    one = subprocess.run([*cmd, "--workers", "1"], env=env, check=True, capture_output=True).stdout
    out, _ = _killing_a_worker([*cmd, "--workers", "2"], env)
    assert out == one and len(out.splitlines()) == 150


def _sigint_handlers(items: list, _: object) -> list:
    return [signal.getsignal(signal.SIGINT) is signal.SIG_IGN for _ in items]


def test_pool_imap_workers_leave_ctrl_c_to_the_parent():
    """A terminal's Ctrl-C reaches the whole process group: a worker waiting for its next chunk
    printed the traceback of its KeyboardInterrupt ('Process ForkProcess-1: ... call_queue.get').
    The workers ignore SIGINT now; the parent, interrupted, ends them."""
    assert list(pool_imap(_sigint_handlers, [([1, 2], None), ([3], None)], workers=2, window=2,
                          alone=_alone, lost=_lost)) == [[True, True], [True]]


def test_ctrl_c_to_the_process_group_of_features_mid_run_is_one_line_and_no_traceback(tmp_path):
    """Ctrl-C as a terminal sends it (SIGINT to the command's process group) once the pool's
    workers are there: exit status 130, the one 'interrupted' line, no traceback of any process,
    no feature table nor work folder left, no worker left running."""
    ds = _dataset(tmp_path, pages=600)
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    run = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "features", str(ds), "--workers", "2"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    kids: list[str] = []
    while run.poll() is None and not kids:
        kids = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True).stdout.split()
    if not kids:  # say how it ended: a run that failed reads otherwise like a run that was too quick
        out, err = run.communicate()
        raise AssertionError(f"the run ended before its pool started: exit {run.returncode}, "
                             f"stderr {err.decode(errors='replace')[-1500:]!r}")
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=300)
    err = err.decode()
    assert run.returncode == 130, err
    assert "hwnoise: interrupted" in err and "Traceback" not in err and "KeyboardInterrupt" not in err
    assert not (ds / "features.parquet").exists() and not list(ds.glob(".features.parquet.*"))
    for pid in kids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


_MAP_UNTIL_INTERRUPTED = '''
import os, sys, time
from pathlib import Path
from hwnoise.scheduler import Scheduler

work = Path(sys.argv[1])

def task(i, _):
    (work / f"worker-{i}").write_text(str(os.getpid()))
    while i == 0:  # a fit that runs on (one in native code does not see Ctrl-C at all)
        time.sleep(0.05)
    return i

def ready(i, _):
    (work / "ready").write_text("one task done, its worker idle")

if __name__ == "__main__":  # spawn and forkserver import this script again in each worker
    try:
        with Scheduler("local", 2) as sched:
            sched.map(task, [0, 1], None, on_result=ready)
    except KeyboardInterrupt:  # as hwnoise.cli.main says it
        print("hwnoise: interrupted", file=sys.stderr)
        sys.exit(130)
'''


@pytest.mark.parametrize("method", ["", "spawn", "forkserver"], ids=["fork", "spawn", "forkserver"])
def test_ctrl_c_to_scheduler_map_ends_its_workers_with_one_line(tmp_path, method):
    """``Scheduler.map`` on the local pool (train's fits, evaluate's fits and scoring): Ctrl-C as
    a terminal sends it (SIGINT to the process group) printed the KeyboardInterrupt traceback of
    an idle worker ('call_queue.get'), and the run stopped only when the running tasks had
    finished (20-28 s of evaluate's fits). The workers ignore SIGINT now and the interrupted
    parent ends them: exit 130, the one 'interrupted' line, no traceback, no worker left."""
    script = tmp_path / "map.py"
    script.write_text(_MAP_UNTIL_INTERRUPTED)
    env = {**os.environ, "HWNOISE_PROGRESS": "0", "HWNOISE_START_METHOD": method}
    run = subprocess.Popen([sys.executable, str(script), str(tmp_path)], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while run.poll() is None and not (tmp_path / "ready").exists():
        time.sleep(0.02)
    assert run.poll() is None, run.communicate()
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=120)
    err = err.decode()
    assert run.returncode == 130, err
    assert err == "hwnoise: interrupted\n", err
    for i in (0, 1):
        pid = (tmp_path / f"worker-{i}").read_text()
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert _session_ends(run.pid) == []  # nor the forkserver nor the resource tracker


def _session(sid: int) -> list[str]:
    """The processes still running in session ``sid`` (zombies aside), as ``pid args`` lines."""
    out = subprocess.run(["ps", "-s", str(sid), "-o", "pid=,stat=,args="], capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip() and "Z" not in line.split()[1]]


def _session_ends(sid: int) -> list[str]:
    """What is left of session ``sid`` once its helpers have seen their parent go (the forkserver
    and the resource tracker of spawn and forkserver end when the pipe from it closes): [] when
    nothing is; polled, with 30 s as a safety net only."""
    for _ in range(300):
        left = _session(sid)
        if not left:
            return []
        time.sleep(0.1)
    return left


_START_METHOD = '''
import multiprocessing, sys
from hwnoise.scheduler import Scheduler, start_method

def name(x, _):
    return x * 2, multiprocessing.current_process().name.split("-")[0]

if __name__ == "__main__":
    multiprocessing.set_start_method("forkserver")  # Python 3.14's default on Linux
    with Scheduler("local", 2) as sched:
        print(start_method(), *sched.map(name, [1, 2, 3], None))
'''


def test_the_local_pool_starts_by_fork_whatever_python_defaults_to_unless_told_otherwise(tmp_path):
    """The pool took multiprocessing's default start method: fork on Linux up to Python 3.13,
    forkserver from 3.14, which would start every worker afresh (slower) and skip the warm-up
    the workers share through fork. hwnoise chooses now: fork where the platform has it, or
    ``HWNOISE_START_METHOD``; one a platform lacks, or none, is one error line."""
    script = tmp_path / "method.py"
    script.write_text(_START_METHOD)
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    want = {"": "fork (2, 'ForkProcess') (4, 'ForkProcess') (6, 'ForkProcess')",
            "spawn": "spawn (2, 'SpawnProcess') (4, 'SpawnProcess') (6, 'SpawnProcess')",
            "forkserver": "forkserver (2, 'ForkServerProcess') (4, 'ForkServerProcess') (6, 'ForkServerProcess')"}
    for method, line in want.items():
        out = subprocess.run([sys.executable, str(script)], env={**env, "HWNOISE_START_METHOD": method},
                             capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout == line + "\n", out.stderr
    ds = _dataset(tmp_path, pages=80)
    out = subprocess.run([sys.executable, "-m", "hwnoise.cli", "features", str(ds), "--workers", "2"],
                         env={**env, "HWNOISE_START_METHOD": "vfork"}, capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr == (
        "hwnoise: error: HWNOISE_START_METHOD='vfork': use fork, spawn, forkserver on this platform, "
        "or unset it (fork where the platform has it)\n")
    assert not (ds / "features.parquet").exists() and not list(ds.glob(".features.parquet.*"))


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_features_on_a_pool_started_by_spawn_or_forkserver_equal_a_sync_run(tmp_path, method):
    ds = _dataset(tmp_path, pages=120)
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "hwnoise.cli", "features", str(ds)]
    subprocess.run([*cmd, "--scheduler", "sync"], env=env, check=True, capture_output=True)
    one = pq.read_table(ds / "features.parquet")
    out = subprocess.run([*cmd, "--workers", "2"], env={**env, "HWNOISE_START_METHOD": method},
                         capture_output=True, text=True)
    assert out.returncode == 0 and "120 pages" in out.stderr and " 0 failed" in out.stderr, out.stderr
    assert pq.read_table(ds / "features.parquet").equals(one)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_ctrl_c_to_features_on_a_pool_started_by_spawn_or_forkserver(tmp_path, method):
    """As under fork (test above): exit 130, the one line, no traceback, no table nor work folder,
    and no process of the run left: not a worker, nor the forkserver, nor the resource tracker."""
    ds = _dataset(tmp_path, pages=600)
    env = {**os.environ, "HWNOISE_PROGRESS": "0", "HWNOISE_START_METHOD": method}
    run = subprocess.Popen([sys.executable, "-m", "hwnoise.cli", "features", str(ds), "--workers", "2"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    want = 4 if method == "spawn" else 5  # the command, the resource tracker, (the forkserver,) 2 workers
    while run.poll() is None and not (len(_session(run.pid)) >= want and list(ds.glob(".features.parquet.*/task-*"))):
        time.sleep(0.01)
    assert run.poll() is None, "the run ended before its pool started"
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=300)
    err = err.decode()
    assert run.returncode == 130, err
    assert err == "hwnoise: interrupted; what was written so far is kept.\n", err
    assert not (ds / "features.parquet").exists() and not list(ds.glob(".features.parquet.*"))
    assert _session_ends(run.pid) == []
