"""The ``hwnoise`` command: a thin shell that parses arguments and calls the stages.

Each subcommand lives in its own module of ``hwnoise.commands`` with a
``register(subparsers)`` function that adds its parser and sets ``func``
(``func(args) -> int`` exit code). Data goes to stdout; progress and summaries
go to stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading

from hwnoise import __version__

#: Subcommand modules in the order ``--help`` lists them.
COMMANDS = [
    "demo", "collect", "import_", "features", "render", "label", "export_arff", "train", "extract", "evaluate",
]

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse with hwnoise's error contract: a misuse of the command line prints one line,
    ``hwnoise: error: COMMAND: what is wrong (see 'hwnoise COMMAND --help')``, and exits 2.

    ``add_subparsers`` builds the subcommands' parsers with this class too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        where = self.prog.split(None, 1)[1] + ": " if " " in self.prog else ""
        line = " ".join(f"{where}{message}".split())
        self.exit(EXIT_USAGE, f"hwnoise: error: {line} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="hwnoise",
        description=(
            "Tell the noise from the records in the result pages of hidden-web search forms.\n"
            "Pipeline: collect -> features -> train -> extract/evaluate; 'hwnoise demo' runs it all."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"hwnoise {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"hwnoise.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("hwnoise.commands"):
                continue  # a command not built yet
            raise
        mod.register(sub)
    _register_help(sub, parser)
    return parser


def _register_help(sub, parser: argparse.ArgumentParser) -> None:
    """``hwnoise help [COMMAND]``, as ``git help`` and ``pip help``: a command's ``--help``
    (or the overview), on stdout."""
    commands = dict(sub.choices)
    p = sub.add_parser("help", help="show the help of a command ('hwnoise help train')",
                       description="Show the help of COMMAND, as 'hwnoise COMMAND --help' does, or "
                                   "the list of commands.")
    p.add_argument("topic", nargs="?", metavar="COMMAND", help=f"one of: {', '.join(commands)}")

    def show(args) -> int:
        if args.topic is None:
            parser.print_help(sys.stdout)
            return EXIT_OK
        if args.topic not in commands:
            p.error(f"no command {args.topic!r}; choose one of {', '.join(commands)}")
        commands[args.topic].print_help(sys.stdout)
        return EXIT_OK

    p.set_defaults(func=show)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, stopping the command as Ctrl-C does (every ``except KeyboardInterrupt`` and
    ``finally`` on the way runs)."""


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """While the command runs, SIGTERM (kill, timeout, a batch system ending the job) stops this
    process as Ctrl-C does: without it the process died at once, and what it had started lived on
    (render's Chromium, in a session of its own, and its workers) while the rows it held were lost.
    A process forked meanwhile keeps the default (it dies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    me = os.getpid()

    def stop(signum, frame) -> None:
        if os.getpid() != me:  # a forked worker: die as it would have
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise _Terminated()

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with _sigterm_as_interrupt():
            code = int(args.func(args) or 0)
    except KeyboardInterrupt as exc:
        how = "terminated (SIGTERM)" if isinstance(exc, _Terminated) else "interrupted"
        print(f"hwnoise: {how}; what was written so far is kept.", file=sys.stderr)
        return 128 + signal.SIGTERM if isinstance(exc, _Terminated) else 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the CLI turns every known failure into one line
        from hwnoise.errors import HwnoiseError

        if isinstance(exc, HwnoiseError):
            print(f"hwnoise: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        if isinstance(exc, OSError) and exc.filename:  # the machine said no (disk full, a read-only place)
            print(f"hwnoise: error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_ERROR
        raise
    if argv is None and code == EXIT_OK and getattr(args, "quick_exit", False):
        _quick_exit()
    return code


def _quick_exit() -> None:
    """End the process here, as the command line's own entry (``main()`` reading ``sys.argv``)
    after a command that left nothing to close (``args.quick_exit``: ``hwnoise features`` of a
    dataset, its pool shut down and its files written): stdout and stderr flushed, then
    ``os._exit``, without the interpreter's teardown, which frees every object and module of
    numpy, pyarrow and lxml one at a time for memory the kernel takes back at once: 30-37 ms
    of CPU a run, 8 % of a 100-page dataset's. A caller of ``main(argv)`` gets its return, and
    so does a profiler or tracer (cProfile, coverage), which writes its output at exit."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the interpreter's own exit reports it
    os._exit(EXIT_OK)


if __name__ == "__main__":
    sys.exit(main())
