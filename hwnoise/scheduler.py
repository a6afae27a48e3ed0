"""Where the heavy stages run: ``--scheduler local|threads|sync|tcp://HOST:PORT``.

One place maps the option to an executor with one call, :meth:`Scheduler.map`: run a
module-level function over a list of small arguments (paths, page IDs, fold numbers) and
return the results in argument order, whatever order they finish in, so every stage gives
the same output on every scheduler.

- ``sync``: in this process, one task after the other (what tests and debuggers want).
- ``threads``: a thread pool in this process.
- ``local`` (the default): a pool of processes on this machine's cores (``workers`` of them),
  started by :func:`start_method` (fork where the platform has it and it is safe;
  ``HWNOISE_START_METHOD=forkserver|spawn|fork`` overrides).
- ``tcp://HOST:PORT``: a running Dask distributed scheduler (``pip install 'hwnoise[dask]'``;
  start it with ``dask scheduler`` and workers with ``dask worker tcp://HOST:PORT`` on machines
  that see the same dataset folders). Tasks are retried when they fail or their worker dies;
  an unreachable scheduler is an error, never a silent fallback to this machine.

Tasks should be few and large (a dataset, a batch of pages, a fold), and take and return
small things: workers read and write the dataset folders themselves.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hwnoise.errors import HwnoiseError
from hwnoise.progress import bar, info

NAMES = ("local", "threads", "sync")
#: seconds to wait for a distributed scheduler to answer (HWNOISE_DASK_TIMEOUT overrides)
CONNECT_TIMEOUT = 10.0
#: seconds between checks that the Dask client is still connected while its tasks run
DASK_POLL = 2.0
#: times a distributed task is retried when it raises (a dead worker's tasks are rerun anyway)
RETRIES = 2


class SchedulerError(HwnoiseError):
    """A --scheduler that is not understood or cannot be reached."""


def no_idle_threads() -> None:
    """Keep a command that forks the local pool free of threads it does not use (``features``,
    ``extract``), set before numpy and pyarrow load and unless the user chose otherwise:
    - OpenBLAS, loaded with numpy, starts a server thread per core that spins for a while after
      start-up; these commands make no BLAS call worth a thread (each worker is a process), so
      that is CPU for nothing (about 0.1 s, 3 % of ``hwnoise features`` on the bench corpus):
      one BLAS thread (as ``HWNOISE_THREADS`` does for the fits);
    - pyarrow's bundled jemalloc starts a background purging thread when pyarrow is imported,
      although Arrow allocates with mimalloc here: without it the process has one thread when the
      pool forks its workers (Python 3.12 and later warn of a fork from a process with threads,
      which may deadlock the child)."""
    import sys

    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:false")


def start_method() -> str:
    """How the local pool starts its processes, chosen here rather than left to multiprocessing's
    default (Python 3.14 makes that forkserver on Linux, where it was fork): ``HWNOISE_START_METHOD``
    when set (fork, forkserver or spawn, those the platform has), else fork where the platform has
    it and it is safe (not macOS, whose system libraries are not fork-safe: Python's default there
    is spawn), else the platform's default. Under fork the workers share what the parent loaded
    (``features.build._warm_for_workers``); under forkserver and spawn they start afresh, slower
    to start (2.1-2.4 s for features of 300 pages where fork took 0.7 s), with the same results,
    and Ctrl-C ends them as it ends forked ones."""
    import multiprocessing
    import sys

    methods = multiprocessing.get_all_start_methods()
    wanted = (os.environ.get("HWNOISE_START_METHOD") or "").strip().lower()
    if wanted:
        if wanted not in methods:
            raise SchedulerError(f"HWNOISE_START_METHOD={wanted!r}: use {', '.join(methods)} on this "
                                 "platform, or unset it (fork where the platform has it)")
        return wanted
    if "fork" in methods and sys.platform != "darwin":
        return "fork"
    return methods[0]  # the platform's default comes first


def pool_context():
    """The multiprocessing context of the local pool (``start_method``)."""
    import multiprocessing

    return multiprocessing.get_context(start_method())


def check_spec(spec: str) -> str:
    """``spec`` when it names a scheduler (for argparse), else SchedulerError."""
    spec = (spec or "local").strip()
    if spec in NAMES or spec.startswith(("tcp://", "tls://", "inproc://")):
        return spec
    raise SchedulerError(f"--scheduler {spec!r}: use local, threads, sync or the address of a Dask "
                         "scheduler such as tcp://10.0.0.5:8786")


def add_argument(parser: Any, what: str = "the work") -> None:
    """The ``--scheduler`` option, the same on every command that has it."""
    parser.add_argument("--scheduler", default="local", metavar="local|threads|sync|tcp://HOST:PORT",
                        help=f"where {what} runs: local (default: processes on this machine's cores, "
                             "started by fork where the platform has it; HWNOISE_START_METHOD=forkserver "
                             "or spawn to start them so), threads, sync (this process), or a Dask "
                             "scheduler's address")


class Scheduler:
    """An executor chosen by name; use as a context manager (it closes its pool or client)."""

    def __init__(self, spec: str = "local", workers: int | None = None, *, sees: Iterable = ()):
        """``sees``: the files and folders the tasks read (dataset folders, WARC files); on a
        Dask cluster every worker is asked whether it sees them before any task is sent."""
        self.spec = check_spec(spec)
        #: ``local`` without a worker count runs small work in this process (a pool costs ~1 s)
        self.auto = self.spec == "local" and not workers
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.distributed = self.spec not in NAMES
        self._pool: Any = None
        self._procs: dict = {}
        self.client: Any = None
        self.tasks = 0
        self.delivered: list[int] = []  # indices of the current map's tasks already delivered
        if self.distributed:
            self.client = _connect(self.spec)
            self.workers = max(1, sum(w.get("nthreads", 1) for w in
                                      self.client.scheduler_info().get("workers", {}).values()))
            try:
                _check_workers_see(self.client, self.spec, [str(p) for p in sees])
            except BaseException:
                self.close()
                raise

    # -- lifetime
    def __enter__(self) -> "Scheduler":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self.client is not None:
            self.client.close()
            self.client = None

    @property
    def inline(self) -> bool:
        """True when tasks run in this process, one after the other."""
        return self.spec == "sync" or (self.spec == "local" and self.workers == 1)

    def _executor(self):
        if self._pool is None:  # concurrent.futures imported here: 7 ms of every command's start-up
            from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

            if self.spec == "threads":
                self._pool = ThreadPoolExecutor(max_workers=self.workers)
            else:  # workers that leave Ctrl-C to this process, which ends them (_collect)
                self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=pool_context(),
                                                 initializer=_worker_start, initargs=(None, ()))
        return self._pool

    # -- work
    def share(self, obj: Any) -> Any:
        """A handle to pass ``obj`` (a fitted model...) to many tasks: on a cluster it is sent
        to the workers once instead of with every task."""
        if self.distributed:
            return self.client.scatter(obj, broadcast=False, hash=False)
        return obj

    def map(self, fn: Callable, items: Sequence | Iterable, *args: Any, desc: str = "",
            unit: str = "task", progress: bool = True, on_result: Callable | None = None,
            small: bool = False) -> list:
        """``[fn(item, *args) for item in items]``, run on this scheduler; the progress bar
        advances as tasks finish (on a cluster: as the cluster reports them done).
        ``on_result(index, result)`` is called as each result arrives (e.g. to write a part file).
        ``small``: the caller knows the work is too small to pay for starting a process pool;
        ``local`` without an explicit worker count then runs it here (same results)."""
        items = list(items)
        out: list[Any] = [None] * len(items)
        self.delivered = []
        pbar = bar(total=len(items), desc=desc, unit=unit) if progress and desc else None
        try:
            if self._runs_here(len(items), small):
                for i, item in enumerate(items):
                    self._deliver(i, fn(item, *args), out, on_result, pbar)
            else:
                self._run_all(fn, items, args, out, on_result, pbar, desc)
            return out
        finally:
            if pbar is not None:
                pbar.close()

    def _runs_here(self, n: int, small: bool) -> bool:
        """Plan: True when the ``n`` tasks run here, one after the other, instead of on the pool or cluster."""
        return self.inline or (n <= 1 or (small and self.auto)) and not self.distributed

    def _run_all(self, fn: Callable, items: list, args: tuple, out: list, on_result: Callable | None,
                 pbar: Any, desc: str) -> None:
        """Every task on the pool or the cluster. A local pool whose worker dies (the out-of-memory
        killer...) is replaced once and the unfinished tasks run again; a second death is an
        error (what finished was delivered)."""
        from concurrent.futures.process import BrokenProcessPool

        todo = list(range(len(items)))
        for attempt in (1, 2):
            futures, done = self._submit(fn, [items[i] for i in todo], args)
            try:
                self._collect(futures, ((todo[j], r) for j, r in done), out, on_result, pbar)
                return
            except BrokenProcessPool:
                procs = _processes(self._pool, self._procs)
                self._pool.shutdown(wait=True)
                self._pool = None
                why = _death(procs)
                delivered = set(self.delivered)
                todo = [i for i in todo if i not in delivered]
                what = f"{len(todo)} of {len(items)} task(s)" + (f" of '{desc}'" if desc else "")
                if attempt == 2:
                    raise SchedulerError(
                        f"a worker process of the local pool {why}, twice; {what} unfinished (what "
                        "finished is kept). Use fewer --workers if memory is short, or --scheduler "
                        "sync to run one task at a time") from None
                info(f"hwnoise: a worker process {why}; {what} run again on a new pool")

    def _submit(self, fn: Callable, items: list, args: tuple) -> tuple[list, Iterator[tuple[int, Any]]]:
        """Submit: every task to the cluster or the pool; the futures and their (index, result) as they finish."""
        if self.distributed:
            futures = [self.client.submit(fn, item, *args, pure=False, retries=RETRIES) for item in items]
            return futures, self._dask_finished(futures)
        from concurrent.futures import as_completed

        pool = self._executor()
        with _sigint_held():  # submit forks the workers: an interrupt then is delivered after it
            futures = [pool.submit(fn, item, *args) for item in items]
        self._procs = _processes(pool, {})  # to tell how a worker died (_run_all)
        index = {id(f): i for i, f in enumerate(futures)}
        return futures, ((index[id(f)], f.result()) for f in as_completed(futures))

    def _dask_finished(self, futures: list) -> Iterator[tuple[int, Any]]:
        """(index, result) of the Dask tasks as they finish. Waited for a few seconds at a time,
        the client's state checked in between: when the scheduler goes away mid-run, the client
        may close without cancelling the tasks, and Dask's ``as_completed`` then waits for ever
        (or gives a cancelled task's exception as if it were its result)."""
        from distributed import wait

        index = {f.key: i for i, f in enumerate(futures)}
        pending = set(futures)
        while pending:
            try:
                with self.client.as_current():  # wait() takes the current client (not made the default)
                    done, pending = wait(pending, timeout=DASK_POLL, return_when="FIRST_COMPLETED")
            except TimeoutError:
                if self.client.status not in ("running", "connecting"):
                    self._lost(f"its client is {self.client.status}")
                continue
            except Exception:  # noqa: BLE001 - FuturesCancelledError, or a closed client's
                cancelled = [f for f in pending if f.status == "cancelled"]
                if cancelled or self.client.status not in ("running", "connecting"):
                    self._lost(f"{len(cancelled)} task(s) cancelled" if cancelled else
                               f"its client is {self.client.status}")
                raise
            for f in sorted(done, key=lambda f: index[f.key]):
                yield index[f.key], self._dask_result(f)

    def _dask_result(self, future: Any) -> Any:
        """A finished Dask task's result; its own exception when it failed; a task cancelled
        because the scheduler went away is one clear error."""
        import asyncio

        if future.status == "error":
            return future.result()  # raises the task's exception, with its traceback
        if future.status == "finished":
            try:
                return future.result()
            except (OSError, asyncio.CancelledError) as exc:  # the task finished; fetching its result failed
                self._lost(f"fetching a result: {type(exc).__name__}")
        self._lost(f"its tasks were {future.status}")

    def _lost(self, why: str) -> None:
        raise SchedulerError(f"lost the Dask scheduler at {self.spec} mid-run ({why}); "
                             "start it again ('dask scheduler') with its workers and run the command again")

    def _collect(self, futures: list, done: Iterator[tuple[int, Any]], out: list,
                 on_result: Callable | None, pbar: Any) -> None:
        """Collect: each result as it arrives; on an error or an interrupt, cancel the rest and
        re-raise. On an interrupt (Ctrl-C, SIGTERM) the local pool's workers, which ignore Ctrl-C,
        are ended at once: the run stopped only when the tasks running had finished (minutes of a
        fit), and an idle worker printed its KeyboardInterrupt's traceback."""
        try:
            for i, result in done:
                self._deliver(i, result, out, on_result, pbar)
        except BaseException as exc:
            for f in futures:
                f.cancel()
            if isinstance(exc, KeyboardInterrupt) and self._pool is not None and self.spec == "local":
                _end_workers(self._procs, self._pool)
            raise

    def _deliver(self, i: int, result: Any, out: list, on_result: Callable | None, pbar: Any) -> None:
        """Deliver one result: stored at its index, counted, given to ``on_result``, shown on the bar."""
        out[i] = result
        self.delivered.append(i)
        self.tasks += 1
        if on_result is not None:
            on_result(i, result)
        if pbar is not None:
            pbar.update(1)


def _no_closed_connections(record: Any) -> bool:
    """A logging filter: False for a record of a connection the scheduler closed. Once it is
    gone, the client logs its tries to reconnect, with tracebacks, on stderr, above the one
    line that says what happened (``Scheduler._lost``)."""
    import asyncio

    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, (OSError, asyncio.CancelledError)):  # CommClosedError and tornado's are OSErrors
        return False
    return not str(record.msg).startswith("Failed to reconnect to scheduler")


def _unseen(paths: list[str]) -> list[str]:
    """Of ``paths``, those this process cannot see (run on each Dask worker)."""
    return [p for p in paths if not os.path.exists(p)]


def _check_workers_see(client, address: str, paths: list[str]) -> None:
    """Every worker of ``client`` sees ``paths`` (they are absolute: ``for_workers``); else one
    error naming the worker and the first path it lacks. Without this, a worker on a machine
    without the folders failed every page as 'No such file or directory' of a file the user
    could see on their own machine."""
    if not paths:
        return
    try:
        unseen = client.run(_unseen, paths, on_error="return")
    except (OSError, TimeoutError) as exc:  # the scheduler went away between connect and now
        raise SchedulerError(f"the Dask scheduler at {address} stopped answering ({exc or type(exc).__name__})") from None
    for worker, missing in sorted(unseen.items()):
        if isinstance(missing, BaseException):
            raise SchedulerError(f"the Dask worker {worker} of {address} could not be asked whether it sees "
                                 f"the input ({type(missing).__name__}: {missing}); check that it runs "
                                 "the same hwnoise as this command") from None
        if missing:
            more = f" and {len(missing) - 1} more of the {len(paths)} inputs" if len(missing) > 1 else ""
            raise SchedulerError(
                f"the Dask worker {worker} of {address} does not see {missing[0]}{more}: the workers read "
                "the dataset folders themselves, so every worker must see them at the same path (a shared "
                "file system mounted alike on every machine); start the workers where they do, or copy "
                "the folders there")


def _connect(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError(f"--scheduler {address} needs Dask distributed: pip install 'hwnoise[dask]'") from None
    import logging

    for name in ("tornado.application", "distributed.client"):
        logging.getLogger(name).addFilter(_no_closed_connections)
    try:
        timeout = float(os.environ.get("HWNOISE_DASK_TIMEOUT") or CONNECT_TIMEOUT)
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise SchedulerError(f"cannot reach the Dask scheduler at {address} ({reason}); start one with "
                             f"'dask scheduler' and workers with 'dask worker {address}', or use "
                             "--scheduler local") from None


def pool_imap(fn: Callable[..., list], chunks: Sequence[tuple], *, workers: int, window: int,
              alone: Callable[[tuple], list[tuple]], lost: Callable[[tuple, str], list],
              initializer: Callable | None = None, initargs: tuple = ()) -> Iterator[list]:
    """``fn(*chunk)`` for each chunk, in order, on a pool of ``workers`` processes with at most
    ``window`` chunks in flight; ``fn`` returns a list (a result per item of the chunk).

    A worker that dies (the out-of-memory killer, a crash in native code on one page) does not
    end the run: the chunks it left unfinished are cut by ``alone`` into chunks of one item
    each and run one at a time in a process of their own, so that an item that kills its
    process on its own is known; its result is ``lost(piece, why)`` and the run goes on."""
    from concurrent.futures.process import BrokenProcessPool

    queue = list(chunks)[::-1]
    pending: list[tuple[tuple, Any]] = []
    pool = _process_pool(workers, initializer, initargs)
    procs: dict = {}
    try:
        while queue or pending:
            try:
                while queue and len(pending) < window:
                    with _sigint_held():  # a broken pool raises here: the chunk stays queued
                        fut = pool.submit(fn, *queue[-1])
                    pending.append((queue.pop(), fut))
                    procs = _processes(pool, procs)
                result = pending[0][1].result()
            except BrokenProcessPool:
                pool.shutdown(wait=True)  # its processes ended and reaped: their exit codes known
                info(f"hwnoise: a worker process {_death(procs)}; the work it left is run again, "
                     "one item at a time")
                yield from _rerun(fn, pending, alone, lost, initializer, initargs)
                pending.clear()
                pool, procs = _process_pool(workers, initializer, initargs), {}
                continue
            pending.pop(0)
            yield result
    except BaseException:  # Ctrl-C (the workers ignore it), or the caller gave up: end them now
        _end_workers(procs, pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _rerun(fn: Callable[..., list], pending: list[tuple[tuple, Any]], alone: Callable[[tuple], list[tuple]],
           lost: Callable[[tuple, str], list], initializer: Callable | None, initargs: tuple) -> Iterator[list]:
    """The results of a broken pool's chunks in order: each one that finished as it is, the
    others again item by item in a pool of one process (a new one after each death)."""
    from concurrent.futures.process import BrokenProcessPool

    solo = None
    try:
        for chunk, fut in pending:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                yield fut.result()
                continue
            out: list = []
            for piece in alone(chunk):
                solo = solo or _process_pool(1, initializer, initargs)
                try:
                    with _sigint_held():
                        fut = solo.submit(fn, *piece)
                    procs = _processes(solo, {})
                    out.extend(fut.result())
                except BrokenProcessPool:
                    solo.shutdown(wait=True)
                    solo = None
                    out.extend(lost(piece, _death(procs)))
            yield out
    except BaseException:
        if solo is not None:
            _end_workers(_processes(solo, {}), solo)
        raise
    finally:
        if solo is not None:
            solo.shutdown(wait=True, cancel_futures=True)


def _process_pool(workers: int, initializer: Callable | None, initargs: tuple):
    """A pool of ``workers`` processes (concurrent.futures imported here, not at start-up) that
    ignore Ctrl-C: a terminal sends SIGINT to the whole process group, and a worker waiting for
    work printed its KeyboardInterrupt's traceback; the parent, interrupted, ends them itself."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=pool_context(), initializer=_worker_start,
                               initargs=(initializer, initargs))


def _worker_start(initializer: Callable | None, initargs: tuple) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def _sigint_held():
    """SIGINT held back while the pool may fork a worker (``submit`` starts them): an interrupt
    that came while the child was made was lost in CPython's after-fork hooks ('Exception
    ignored in _releaseLock'), the run going on to its end with exit status 0. It is delivered
    as the block ends."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _end_workers(procs: dict, pool: Any) -> None:
    """Terminate the pool's processes (those known and those it has now)."""
    for proc in _processes(pool, procs).values():
        try:
            if proc.is_alive():
                proc.terminate()
        except (OSError, ValueError, AssertionError):  # gone, or closed already
            pass


def _processes(pool: Any, known: dict) -> dict:
    """``known`` and the pool's processes now (pid: ``multiprocessing.Process``), kept to tell how
    one died: the pool forgets them when it breaks (a private attribute, read with care)."""
    return {**known, **(getattr(pool, "_processes", None) or {})}


def _death(procs: dict) -> str:
    """How one of a broken pool's processes (``_processes``, read after the pool's shutdown)
    died: "died of SIGKILL"... The pool ends the others with SIGTERM: another cause comes first."""
    import signal

    codes = [getattr(p, "exitcode", None) for p in procs.values()]
    codes = sorted((c for c in codes if isinstance(c, int) and c != 0), key=lambda c: c == -signal.SIGTERM)
    if not codes:
        return "died"
    if codes[0] > 0:
        return f"exited with status {codes[0]}"
    try:
        name = signal.Signals(-codes[0]).name
    except ValueError:
        name = f"signal {-codes[0]}"
    return f"died of {name}" + (" (what the out-of-memory killer sends)" if name == "SIGKILL" else "")


def for_workers(scheduler: "str | Scheduler | None", paths: Iterable) -> list:
    """``paths`` as the workers of ``scheduler`` need them: absolute on a Dask cluster, whose
    workers run in folders of their own (a relative dataset path named nothing there, or
    another folder); as they are on this machine, where messages show them as given."""
    spec = scheduler.spec if isinstance(scheduler, Scheduler) else (scheduler or "local")
    if spec in NAMES:
        return list(paths)
    return [Path(p).absolute() if isinstance(p, Path) else os.path.abspath(p) for p in paths]


def batches(items: Sequence, size: int) -> list[list]:
    """``items`` cut into consecutive lists of at most ``size``."""
    size = max(1, int(size))
    return [list(items[i:i + size]) for i in range(0, len(items), size)]
