"""Peak RSS of ``hwnoise train`` phase by phase, in one process (Linux).

    python bench/train_phases.py /tmp/speed-bench/pages-1000 --out /tmp/train-phases [--trim] [--stop-after-assembly]

It imports the checkout it is in. At each boundary (reading
the table, assembling the pages, the labelled rows, each fit and matrix, predictions, the ARFF
copy) it prints the seconds so far, the RSS now and the peak RSS since the previous boundary
(VmHWM, reset through ``/proc/self/clear_refs``). ``--trim`` calls glibc's ``malloc_trim(0)``
after the assembly (what the heap holds free); ``--stop-after-assembly`` stops there and prints
the rows' frame size and Arrow's live allocation. ``ARROW_DEFAULT_MEMORY_POOL=system`` (or
jemalloc) in the environment picks Arrow's allocator.
"""
from __future__ import annotations

import argparse
import ctypes
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an installed hwnoise

T0 = time.time()


def _status() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            key, value = line.split(":")
            out[key] = int(value.split()[0]) // 1024
    return out


def mark(name: str) -> None:
    s = _status()
    print(f"{time.time() - T0:7.1f} s  {name:<22} RSS {s['VmRSS']:6d} MB  peak since last {s['VmHWM']:6d} MB",
          file=sys.stderr, flush=True)
    Path("/proc/self/clear_refs").write_text("5")


def _wrap(owner, name: str, label: str) -> None:
    f = getattr(owner, name)

    @functools.wraps(f)
    def g(*a, **k):
        mark(f"before {label}")
        result = f(*a, **k)
        mark(f"after {label}")
        return result

    setattr(owner, name, g)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("--out", required=True)
    ap.add_argument("--trim", action="store_true", help="malloc_trim(0) after the assembly")
    ap.add_argument("--stop-after-assembly", action="store_true")
    args = ap.parse_args(argv)

    import hwnoise.training.model as M
    import hwnoise.training.train as T
    from hwnoise.extractors.model import run_extractor

    for owner, name, label in [(T, "load_inputs", "read"), (T, "_assembled", "assembly"),
                               (M.NoiseModel, "fit", "fit"), (M.NoiseModel, "matrix", "matrix"),
                               (M.NoiseModel, "predict", "predict"), (T, "write_arff", "ARFF")]:
        _wrap(owner, name, label)
    labelled = T._labelled

    def after_assembly(df, what):
        if args.trim:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            mark("after malloc_trim")
        if args.stop_after_assembly:
            import pyarrow as pa

            print(f"rows {df.shape}: {df.memory_usage(deep=True).sum() / 2**20:.0f} MB; Arrow "
                  f"({pa.default_memory_pool().backend_name}) holds {pa.total_allocated_bytes() / 2**20:.0f} MB",
                  file=sys.stderr)
            raise SystemExit(0)
        return labelled(df, what)

    T._labelled = after_assembly
    mark("start")
    T.train(args.dataset, options=T.TrainOptions(out=args.out, stacker=run_extractor))
    mark("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
