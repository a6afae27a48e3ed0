"""Walk time and peak memory of pages built to blow up parsing (issue 14's cost blow-ups).

Writes three pages into a temp folder and walks each in a fresh process (``walk_page``),
printing the walk's seconds and the process's peak resident memory (``ru_maxrss``; about
115 MB of it is importing hwnoise)::

    python bench/bench_hostile_pages.py

- ``attrs100k``: one element with 100,000 attributes (1.6 MB);
- ``textnode20m``: one text node of 20 MB;
- ``page22m``: 22 MB of ordinary result markup.
"""
from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

WALK = """
import resource, sys, time
from hwnoise.features.walk import walk_page
data = open(sys.argv[1], "rb").read()
t = time.perf_counter()
walk_page(data, ["lorem", "word"])
print(f"{time.perf_counter() - t:.1f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}")
"""


def pages(folder: Path) -> dict[str, Path]:
    out = {}
    attrs = " ".join(f'a{i}="v{i}"' for i in range(100_000))
    out["attrs100k"] = f"<html><body><div {attrs}>x</div><p>hello world</p></body></html>"
    out["textnode20m"] = "<html><body><p>" + "word " * 4_000_000 + "</p></body></html>"
    rnd, parts, size = random.Random(1), ["<html><body>"], 0
    while size < 22_000_000:
        s = (f"<div class='c{rnd.randint(0, 50)}'><p>{'lorem ipsum dolor ' * rnd.randint(1, 10)}"
             f"<a href='/x{rnd.randint(0, 999)}'>link</a></p></div>\n")
        parts.append(s)
        size += len(s)
    out["page22m"] = "".join(parts) + "</body></html>"
    paths = {}
    for name, text in out.items():
        paths[name] = folder / f"{name}.html"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hwnoise-hostile-") as tmp:
        print(f"{'page':<12} {'MB':>6} {'walk s':>7} {'peak MB':>8}")
        for name, path in pages(Path(tmp)).items():
            res = subprocess.run([sys.executable, "-c", WALK, str(path)], capture_output=True, text=True,
                                 check=True)
            secs, peak = res.stdout.split()
            print(f"{name:<12} {path.stat().st_size / 1e6:>6.1f} {secs:>7} {peak:>8}")


if __name__ == "__main__":
    main()
