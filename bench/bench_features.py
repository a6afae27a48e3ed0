"""The features stage against an lxml parse and trafilatura, and its cost as the work grows.

    python bench/bench_features.py --repeat 3 --out /tmp/bench-features

Corpus: the shared corpora big9, cleaneval, dragnet, l3s and readability
(../shared/datasets), imported with ``hwnoise import`` and pooled into one
plain dataset folder (``hwnoise import plain``) under ``--work`` (made once,
reused), with the query ``QUERY`` written as its domain query so that
QueryScore and matches are counted.

Side by side, the same pages, CPU time (user + system: the machine is shared,
wall time is not comparable), in ``--repeat`` rounds of one run of each, medians and
spreads printed; a ratio is the median of its rounds' ratios (``paired_ratio``), since a
slow spell of the machine slows both runs of a round and would move a ratio of medians
taken at different times (session 15's second run had the parse alone at 1.45x the first's):

- ``features``: one ``hwnoise features DATASET`` process on the whole corpus,
  start-up included (interpreter, imports, reading the pages, walk, labels
  from gold, sitelevel, writing Parquet), its CPU time from ``wait4`` (its
  worker processes included: by default one per core);
- ``features-sync``: the same with ``--scheduler sync``, every page in that one
  process (no workers): what the stage costs without the pool, whose processes
  also slow each other down on a machine with two cores;
- ``parse``: ``lxml.html.fromstring`` of each page's bytes, in this process
  (pages read into memory first);
- ``walk``: ``walk_page(bytes, query)`` alone (decode, parse, hiding rules,
  visit, every measure), in this process;
- ``trafilatura``: ``trafilatura.extract(bytes)``, in this process.

The commands are started by a small process that the bench starts first (``_Spawner``): Linux
keeps a process's peak memory across exec, so a command started from the bench itself would report
the bench's peak as its own. hwnoise's modules are byte-compiled first, as an installed package's
are (``_compile_package``).

The walk runs its compiled parts (``features/_walk.c``) when they were built
(``hwnoise.features.walk.COMPILED``, printed); then ``features-python`` and
``walk-python`` are the same with the pure-Python walk (``HWNOISE_WALK=python``),
side by side in the same run (``--no-python-walk`` skips them).

Then the cost curve: ``hwnoise features`` on datasets of ``--sizes`` pages
(100, 1,000, 10,000: the corpus repeated), seconds of CPU per page with and
without the start-up (a run on an empty dataset), medians of ``--curve-repeat``
runs and, for the small sizes, of enough runs to hold ~8,000 pages (80 of 100
pages, 80 of the empty dataset, 8 of 1,000: ``_curve_runs``), the sizes interleaved round by
round (``curve_plan``: a slow spell of the machine falls on every size alike), peak memory (max RSS), and
the peak memory of ``hwnoise evaluate --methods model`` on the largest. The
figure ``docs/figures/features_cost.png`` plots seconds per page against pages.

``--compare OLD NEW`` instead checks that two feature tables (``features.parquet`` folders or
files) are identical: same schema, same rows in the same order, every column equal (missing
values equal), as after a change that must not move the output:

    python bench/bench_features.py --compare /tmp/before/features.parquet DATASET/features.parquet

``--probe DATASET...`` instead asks which extended features help: per dataset
(with features.parquet), a seeded 66 % split of its pages, a CART tree with
entropy (scikit-learn; a quick stand-in for J48) on the thesis's five features
and on the five plus each group of extended features; it prints the mean
content F1 (class N, node level) over the datasets:

    python bench/bench_features.py --probe /tmp/imp/big9-*
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
CORPORA = ["big9", "cleaneval", "dragnet", "l3s", "readability"]
QUERY = ["news", "search", "price", "review", "2009", "amd"]
HWNOISE = [sys.executable, "-m", "hwnoise.cli"]


#: The source of the spawner (``_Spawner``): runs each command it reads (a JSON line ``[args,
#: env, quiet]``) and writes back ``[exit code, CPU seconds, wall seconds, max RSS in KB]``.
_SPAWNER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    args, env, quiet = json.loads(line)
    t = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if quiet else None,
                            env={**os.environ, **env} if env else None)
    _, status, ru = os.wait4(proc.pid, 0)
    out = [os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, time.perf_counter() - t, ru.ru_maxrss]
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""


class _Spawner:
    """A small process, started before this one grows, that starts the measured commands: Linux
    keeps ``ru_maxrss`` across exec, so a command started from here would begin at this
    process's peak (the corpus, trafilatura's runs: 139 MB and more) and its max RSS would be
    ours, not its own. From a process of a few MB it is the command's."""

    _proc: subprocess.Popen | None = None

    @classmethod
    def start(cls) -> None:
        if cls._proc is None:
            cls._proc = subprocess.Popen([sys.executable, "-c", _SPAWNER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True)

    @classmethod
    def run(cls, args: list[str], quiet: bool, env: dict | None) -> tuple[int, float, float, int]:
        cls.start()
        cls._proc.stdin.write(json.dumps([args, env, quiet]) + "\n")
        cls._proc.stdin.flush()
        return tuple(json.loads(cls._proc.stdout.readline()))


def _compile_package() -> None:
    """Byte-compile hwnoise's modules, as ``pip install`` does for an installed package: an
    editable install in an environment with ``PYTHONDONTWRITEBYTECODE`` set (this machine's)
    never writes them, and every measured command then compiles its imports from source
    (40-80 ms of each start-up)."""
    import compileall
    import importlib

    for name in ("hwnoise", "hwnoise.features", "hwnoise.extractors", "hwnoise.training", "hwnoise.forms"):
        for folder in importlib.import_module(name).__path__:
            compileall.compile_dir(folder, quiet=1)


def _run(args: list[str], quiet: bool = True, env: dict | None = None) -> tuple[float, float, int]:
    """Run a command (``env``: variables added to ours); ``(CPU seconds user + system, wall
    seconds, max RSS in MB)`` of it alone (``os.wait4`` on its pid, in ``_Spawner``)."""
    code, cpu, wall, rss = _Spawner.run(args, quiet, env)
    if code != 0:
        sys.exit(f"bench: {' '.join(args)} failed with exit code {code}")
    return cpu, wall, rss // 1024


def corpus(work: Path) -> Path:
    """The pooled plain dataset of the five corpora under ``work`` (made once)."""
    from hwnoise.dataset import Dataset

    ds_path = work / "corpus" / "src"  # hwnoise import plain names the dataset after its folder
    if (ds_path / "dataset.json").exists():
        return ds_path
    src = work / "src"
    shutil.rmtree(work / "corpus", ignore_errors=True)
    shutil.rmtree(src, ignore_errors=True)
    (src / "html").mkdir(parents=True)
    (src / "gold").mkdir()
    for name in CORPORA:
        into = work / "import" / name
        subprocess.run([*HWNOISE, "import", name, str(DATASETS / name), "--into", str(into), "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        for d in sorted(p.parent for p in into.glob("**/dataset.json")):
            sub = Dataset(d)
            for page in sub.pages():
                stem = f"{d.name}-{page.id}"
                shutil.copyfile(page.html_path, src / "html" / f"{stem}.html")
                if page.gold_path.exists():
                    shutil.copyfile(page.gold_path, src / "gold" / f"{stem}.txt")
    subprocess.run([*HWNOISE, "import", "plain", str(src), "--into", str(work / "corpus"), "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    Dataset(ds_path).write_query([{"term": t, "kind": "value", "submissions": []} for t in QUERY])
    return ds_path


def repeated(base: Path, n: int, work: Path) -> Path:
    """A dataset of ``n`` pages: the corpus's pages repeated (new ids), gold and query kept."""
    from hwnoise.dataset import Dataset

    path = work / f"pages-{n}"
    if (path / "dataset.json").exists() and sum(1 for _ in Dataset(path).pages()) == n:
        return path
    shutil.rmtree(path, ignore_errors=True)
    src = Dataset(base)
    pages = list(src.pages())
    ds = Dataset.create(path, name=f"pages-{n}", source="bench")
    for k in range(n):
        page = pages[k % len(pages)]
        pid = f"r{k // len(pages)}-{page.id}"
        ds.write_page(pid, page.html_path.read_bytes())
        gold = page.read_gold()
        if gold is not None:
            ds.write_gold(pid, gold)
    ds.write_query(src.query())
    return path


def in_process(pages: list[tuple[bytes, str | None]], trafilatura: bool, python_walk: bool = False) -> dict:
    """CPU seconds of one run each of parse, walk and (with ``trafilatura``) trafilatura over
    ``pages``, one after the other (a round of the side-by-side figures); with ``python_walk``
    also the walk with the pure-Python walk (``walk-python``)."""
    import lxml.html

    from hwnoise.features.walk import TermMatcher, walk_page

    query = TermMatcher(QUERY)
    fns = {"parse": lambda d: lxml.html.fromstring(d), "walk": lambda d: walk_page(d, query)}
    if python_walk:
        from hwnoise.features import native

        def walk_python(d):
            ext, native.ext = native.ext, None
            try:
                return walk_page(d, query)
            finally:
                native.ext = ext

        fns["walk-python"] = walk_python
    if trafilatura:
        import trafilatura as tr

        fns["trafilatura"] = lambda d: tr.extract(d)
    for fn in fns.values():
        fn(pages[0][0])  # warm up imports and caches
    out: dict[str, float] = {}
    for name, fn in fns.items():
        t = time.process_time()
        for data, _gold in pages:
            if data.strip():
                fn(data)
        out[name] = time.process_time() - t
    return out


def paired_ratio(a: list[float], b: list[float]) -> float:
    """The median over rounds of ``a[k] / b[k]``, each round's two runs made one after the other
    (a slow spell of the machine slows both); rounds beyond the shorter list are left out."""
    return statistics.median(x / y for x, y in zip(a, b))


def _spread(v: list[float]) -> str:
    m = statistics.median(v)
    return f"{m:7.2f} s (min {min(v):.2f}, max {max(v):.2f}, ±{100 * (max(v) - min(v)) / 2 / m:.0f} %)"


def cost_figure(curve: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    xs = [c["pages"] for c in curve]
    ax.plot(xs, [1000 * c["per_page"] for c in curve], "o-", label="hwnoise features (start-up included)")
    ax.plot(xs, [1000 * c["per_page_no_startup"] for c in curve], "s--", label="start-up subtracted")
    ax.set_xscale("log")
    ax.set_xlabel("pages")
    ax.set_ylabel("CPU ms per page")
    ax.set_ylim(bottom=0)
    ax.set_title("Cost per page of the features stage")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


PROBE_GROUPS = {
    "thesis five": [],
    "+ link_density, chars, own_chars": ["link_density", "chars", "own_chars"],
    "+ tag_code": ["tag_code"],
    "+ position, chars_before": ["position", "chars_before"],
    "+ own_query_score": ["own_query_score"],
    "+ parent_ctd, children, sibling_same_tag": ["parent_ctd", "children", "sibling_same_tag"],
    "+ sitelevel": ["sitelevel"],
}


def probe(datasets: list[str], seed: int = 1) -> dict[str, float]:
    """Mean content F1 per feature group over the datasets (pages split 66/34, seeded)."""
    import numpy as np
    import pandas as pd
    from sklearn.metrics import f1_score
    from sklearn.tree import DecisionTreeClassifier

    from hwnoise.features.columns import EXTENDED_FEATURES, THESIS_FEATURES

    groups = dict(PROBE_GROUPS)
    groups["+ all extended"] = list(EXTENDED_FEATURES)
    scores: dict[str, list[float]] = {g: [] for g in groups}
    for d in datasets:
        path = Path(d) / "features.parquet"
        if not path.exists():
            print(f"skipping {d}: no features.parquet", file=sys.stderr)
            continue
        df = pd.read_parquet(path)
        df = df[df["label"].notna()]
        pages = np.random.default_rng(seed).permutation(sorted(df["page"].unique()))
        train = df["page"].isin(set(pages[:int(round(0.66 * len(pages)))])).to_numpy()
        y = (df["label"] == "N").to_numpy()
        if train.all() or not train.any():
            continue
        for g, extra in groups.items():
            x = df[THESIS_FEATURES + extra].to_numpy(dtype=float)
            tree = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=0)
            tree.fit(x[train], y[train])
            scores[g].append(f1_score(y[~train], tree.predict(x[~train]), zero_division=0))
    return {g: float(np.mean(v)) for g, v in scores.items() if v}


def compare(old: str, new: str) -> list[str]:
    """Lines describing how two feature tables differ (empty when identical)."""
    import pyarrow.parquet as pq

    a, b = pq.read_table(old), pq.read_table(new)
    out = []
    if not a.schema.remove_metadata().equals(b.schema.remove_metadata()):
        out.append(f"schemas differ:\n{a.schema}\n---\n{b.schema}")
    if a.num_rows != b.num_rows:
        out.append(f"rows differ: {a.num_rows} against {b.num_rows}")
    if out:
        return out
    for name in a.column_names:
        if not a.column(name).equals(b.column(name)):
            out.append(f"column {name} differs")
    return out


def _curve_runs(r: int, pages: int) -> int:
    """Runs of a curve point: at least ``r``, and for small runs enough to hold about 8,000 pages
    in all (at most 80 runs; 80 of the empty dataset), since the per-page cost without start-up
    is the difference of two medians, and one 100-page run (about 0.65 s, 0.2 s of it start-up)
    moves by ±10-20 %: the median of 21 such runs still has a standard error of about 0.2 ms a
    page, 5 % of the figure (session 15's runs, bootstrapped), too close to the 10 % the target
    allows; 80 runs halve it."""
    return max(r, 80 if pages == 0 else min(80, -(-8000 // pages)))


def curve_plan(sizes: list[int], rounds: int, big_rounds: int | None = None) -> list[int]:
    """The order of the cost curve's runs (dataset sizes, 0 the empty one): ``rounds`` rounds, each
    running every size once and the small ones (and the empty dataset) their share of
    ``_curve_runs``, so that a slow spell of a shared machine falls on every size alike rather
    than on whichever size ran then (sessions 12 and 13 ran the sizes one after another: their
    curves moved by 28 % where session 11's moved by 2.5 %). Sizes over 5,000 pages run in the
    first ``big_rounds`` rounds only (default: all)."""
    rounds = max(1, rounds)
    per_round = {size: max(1, -(-_curve_runs(rounds, size) // rounds)) for size in [0, *sizes]}
    plan: list[int] = []
    for k in range(rounds):
        for j in range(max(per_round.values())):  # the small sizes alternate: 0, 100, 0, 100, ...
            plan += [size for size in [0, *sizes] if size <= 5000 and j < per_round[size]]
        if big_rounds is None or k < big_rounds:
            plan += [size for size in sizes if size > 5000]
    return plan


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Step: the options, which travel through the other steps."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/hwnoise-bench-features",
                    help="folder for the corpus and the repeated datasets (made once, reused)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement (medians count)")
    ap.add_argument("--sizes", default="100,1000,10000", help="pages of the cost curve ('' for none)")
    ap.add_argument("--curve-repeat", type=int, default=None, help="runs per curve size (default --repeat)")
    ap.add_argument("--big-repeat", type=int, default=None,
                    help="runs of the curve's sizes over 5,000 pages (default --curve-repeat)")
    ap.add_argument("--no-trafilatura", action="store_true")
    ap.add_argument("--trafilatura-repeat", type=int, default=None,
                    help="runs of trafilatura (default --repeat; it takes ~4x the features stage)")
    ap.add_argument("--no-evaluate", action="store_true", help="skip hwnoise evaluate's memory")
    ap.add_argument("--no-python-walk", action="store_true",
                    help="do not also run the pure-Python walk (HWNOISE_WALK=python) side by side")
    ap.add_argument("--evaluate-pages", type=int, default=None,
                    help="pages of the dataset hwnoise evaluate's memory is measured on (default: the "
                         "curve's largest)")
    ap.add_argument("--figure", default=str(ROOT / "docs" / "figures" / "features_cost.png"))
    ap.add_argument("--out", help="also write the figures as JSON here")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"),
                    help="instead: check that two feature tables are identical (exit 1 if not)")
    ap.add_argument("--probe", nargs="+", metavar="DATASET",
                    help="instead: which extended features help (datasets with features.parquet)")
    return ap.parse_args(argv)


def _compare_mode(args: argparse.Namespace) -> int:
    """Step (--compare): print how the two feature tables differ, or that they are identical; 1 if they differ."""
    diffs = compare(*args.compare)
    print("\n".join(diffs) if diffs else f"identical: {args.compare[0]} and {args.compare[1]}")
    return 1 if diffs else 0


def _probe_mode(args: argparse.Namespace) -> int:
    """Step (--probe): print each feature group's mean content F1 over the datasets."""
    for group, f1 in probe(args.probe).items():
        print(f"{group:45s} content F1 {f1:.3f}")
    return 0


def _python_walk_side(args: argparse.Namespace) -> bool:
    """Whether the pure-Python walk runs side by side: the compiled walk was built, and not --no-python-walk."""
    from hwnoise.features.walk import COMPILED

    return COMPILED and not args.no_python_walk


def _setup_corpus(args: argparse.Namespace) -> tuple[Path, list[tuple[bytes, None]], dict]:
    """Step: the corpus under --work (made once) and its pages' bytes; prints what is measured and
    starts the JSON's figures (``pages``, ``mb``, ``repeat``, ``compiled``)."""
    from hwnoise.dataset import Dataset

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    base = corpus(work)
    ds = Dataset(base)
    pages = [(p.html_path.read_bytes(), None) for p in ds.pages()]
    n = len(pages)
    mb = sum(len(d) for d, _ in pages) / 1e6
    from hwnoise.features.walk import COMPILED

    side = _python_walk_side(args)
    print(f"corpus: {n} pages ({mb:.1f} MB) of {', '.join(CORPORA)}; query {QUERY}; "
          f"CPU time, {args.repeat} runs each, load average {os.getloadavg()[0]:.1f}; walk: "
          f"{'compiled (features/_walk.c)' if COMPILED else 'pure Python'}"
          f"{', and the pure-Python walk side by side' if side else ''}", flush=True)
    return base, pages, {"pages": n, "mb": mb, "repeat": args.repeat, "compiled": COMPILED, "runs": {}}


def _side_by_side_rounds(args: argparse.Namespace, base: Path,
                         pages: list[tuple[bytes, None]]) -> tuple[dict[str, list[float]], dict[str, list]]:
    """Step: --repeat rounds, each the commands then the same pages in this process; CPU seconds by
    run, and the hwnoise features command's max RSS (``rss``) and wall seconds (``wall``, ``wall_sync``)."""
    side = _python_walk_side(args)
    feats, feats_py, feats_sync, walls, walls_sync, rss = [], [], [], [], [], []
    runs: dict[str, list[float]] = {}
    traf_runs = 0 if args.no_trafilatura else (args.trafilatura_repeat or args.repeat)
    for k in range(args.repeat):  # a round: the commands, then the same pages in this process
        cpu, wall, mem = _run([*HWNOISE, "features", str(base), "--no-progress"])
        feats.append(cpu), walls.append(wall), rss.append(mem)
        cpu, wall, _ = _run([*HWNOISE, "features", str(base), "--no-progress", "--scheduler", "sync"])
        feats_sync.append(cpu), walls_sync.append(wall)
        if side:
            feats_py.append(_run([*HWNOISE, "features", str(base), "--no-progress"],
                                 env={"HWNOISE_WALK": "python"})[0])
        for name, cpu in in_process(pages, k < traf_runs, side).items():
            runs.setdefault(name, []).append(cpu)
    runs["features"] = feats
    runs["features-sync"] = feats_sync
    if side:
        runs["features-python"] = feats_py
    return runs, {"rss": rss, "wall": walls, "wall_sync": walls_sync}


def _print_runs(runs: dict[str, list[float]], command: dict[str, list], n: int) -> None:
    """Step: each run's median and spread, ms a page and paired ratio to the parse; the features
    command's memory and wall time; features/parse round by round."""
    med = {k: statistics.median(v) for k, v in runs.items()}
    for name in ("parse", "walk", "walk-python", "features", "features-sync", "features-python", "trafilatura"):
        if name in runs:
            print(f"  {name:15s} {_spread(runs[name])}  {1000 * med[name] / n:6.2f} ms/page  "
                  f"{paired_ratio(runs[name], runs['parse']):5.2f}x parse")
    print(f"  hwnoise features: max RSS {max(command['rss'])} MB, wall {statistics.median(command['wall']):.1f} s "
          f"(--scheduler sync: {statistics.median(command['wall_sync']):.1f} s)")
    print("  features/parse round by round: "
          + ", ".join(f"{f / p:.2f}" for f, p in zip(runs["features"], runs["parse"]))
          + " (--scheduler sync: " + ", ".join(f"{f / p:.2f}" for f, p in zip(runs["features-sync"], runs["parse"]))
          + ")")


def _print_ratios(runs: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Step: the paired ratios against their targets (the features command, then in one process, then
    with the pure-Python walk when it ran); the JSON's ``ratios`` and ``ratios_sync``."""
    ratios = {"features/parse": paired_ratio(runs["features"], runs["parse"]),
              "walk/parse": paired_ratio(runs["walk"], runs["parse"])}
    if "trafilatura" in runs:
        ratios["features/trafilatura"] = paired_ratio(runs["features"], runs["trafilatura"])
    sync = {"features/parse": paired_ratio(runs["features-sync"], runs["parse"])}
    if "trafilatura" in runs:
        sync["features/trafilatura"] = paired_ratio(runs["features-sync"], runs["trafilatura"])
    targets = {"features/parse": 3.0, "walk/parse": 2.0, "features/trafilatura": 0.3}
    for k, v in ratios.items():
        print(f"{k} = {v:.2f} (target {'<=' if k != 'features/trafilatura' else '<'} {targets[k]}: "
              f"{'met' if v <= targets[k] else 'NOT met'})")
    print("in one process (hwnoise features --scheduler sync): "
          + ", ".join(f"{k} = {v:.2f} ({'met' if v <= targets[k] else 'NOT met'})" for k, v in sync.items()))
    if "features-python" in runs:  # the pure-Python walk ran side by side
        print(f"with the pure-Python walk: features/parse = "
              f"{paired_ratio(runs['features-python'], runs['parse']):.2f}, "
              f"walk/parse = {paired_ratio(runs['walk-python'], runs['parse']):.2f}"
              + (f", features/trafilatura = {paired_ratio(runs['features-python'], runs['trafilatura']):.2f}"
                 if "trafilatura" in runs else ""))
    return {"ratios": ratios, "ratios_sync": sync}


def _curve_measure(args: argparse.Namespace, base: Path, sizes: list[int]) -> dict[int, list[tuple[float, int]]]:
    """Step: the cost curve's runs of hwnoise features in ``curve_plan``'s order (0: the empty
    dataset); ``(CPU seconds, max RSS in MB)`` of each, by size."""
    from hwnoise.dataset import Dataset

    work = Path(args.work)
    empty = work / "pages-0"
    if not (empty / "dataset.json").exists():
        Dataset.create(empty, name="pages-0", source="bench")
    r = args.curve_repeat or args.repeat
    paths = {0: empty, **{size: repeated(base, size, work) for size in sizes}}
    plan = curve_plan(sizes, r, args.big_repeat)
    print(f"cost curve: {len(plan)} runs of hwnoise features, the sizes interleaved round by round "
          f"({', '.join(f'{n} x {size}' for size, n in sorted(Counter(plan).items()))} pages)", flush=True)
    by_size: dict[int, list[tuple[float, int]]] = {size: [] for size in paths}  # (CPU, max RSS)
    for size in plan:
        cpu, _, mem = _run([*HWNOISE, "features", str(paths[size]), "--no-progress"])
        by_size[size].append((cpu, mem))
    return by_size


def _cost_curve(args: argparse.Namespace, base: Path, sizes: list[int]) -> dict:
    """Step: the cost curve, printed: the start-up, each size's CPU a page with and without it, and
    how flat that is; the JSON's ``startup``, ``curve`` and ``flatness``."""
    by_size = _curve_measure(args, base, sizes)
    startup = statistics.median(c for c, _ in by_size[0])
    print(f"  start-up (an empty dataset): {_spread([c for c, _ in by_size[0]])}", flush=True)
    curve = []
    for size in sizes:
        cpus, mems = [c for c, _ in by_size[size]], [m for _, m in by_size[size]]
        cpu = statistics.median(cpus)
        row = {"pages": size, "cpu": cpu, "cpus": cpus, "per_page": cpu / size,
               "per_page_no_startup": (cpu - startup) / size, "max_rss_mb": max(mems)}
        curve.append(row)
        print(f"  {size:6d} pages: {_spread(cpus)}  {1000 * row['per_page']:6.2f} ms/page, "
              f"{1000 * row['per_page_no_startup']:6.2f} without start-up, max RSS {max(mems)} MB",
              flush=True)
    per = [c["per_page_no_startup"] for c in curve]
    flat = max(per) / min(per) - 1
    print(f"per-page cost without start-up varies by {100 * flat:.1f} % over {sizes} (target 10 %)")
    return {"startup": startup, "curve": curve, "flatness": flat}


def _write_figure(args: argparse.Namespace, curve: list[dict]) -> None:
    """Step: the cost curve's figure into --figure."""
    cost_figure(curve, Path(args.figure))
    print(f"figure -> {args.figure}")


def _evaluate_memory(args: argparse.Namespace, base: Path, sizes: list[int]) -> dict:
    """Step: hwnoise evaluate --methods model's max RSS and CPU on --evaluate-pages pages (default the
    curve's largest), features made first if missing; the JSON's ``evaluate``."""
    from hwnoise.dataset import Dataset

    work = Path(args.work)
    n_eval = args.evaluate_pages or max(sizes)
    big = repeated(base, n_eval, work)
    if not Dataset(big).has_features():
        _run([*HWNOISE, "features", str(big), "--no-progress"])
    cpu, _, mem = _run([*HWNOISE, "evaluate", str(big), "--methods", "model",
                        "--no-figures", "--out", str(work / "evaluate")])
    print(f"hwnoise evaluate --methods model on {n_eval} pages: max RSS {mem} MB, "
          f"{cpu:.0f} s CPU")
    return {"pages": n_eval, "max_rss_mb": mem, "cpu": cpu}


def _write_json(args: argparse.Namespace, results: dict) -> None:
    """Step: the figures as JSON into --out, if given."""
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


def main(argv: list[str] | None = None) -> int:
    """The bench (or --compare, or --probe): each step below prints its figures; 0 when done."""
    args = _parse_args(argv)
    if args.compare:
        return _compare_mode(args)
    if args.probe:
        return _probe_mode(args)
    _Spawner.start()  # while this process is small: the measured commands start from it
    _compile_package()
    base, pages, results = _setup_corpus(args)
    runs, command = _side_by_side_rounds(args, base, pages)
    results["runs"] = runs
    _print_runs(runs, command, len(pages))
    results.update(_print_ratios(runs))
    results["features_max_rss_mb"] = max(command["rss"])
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    if sizes:
        results.update(_cost_curve(args, base, sizes))
        _write_figure(args, results["curve"])
        if not args.no_evaluate:
            results["evaluate"] = _evaluate_memory(args, base, sizes)
    _write_json(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
