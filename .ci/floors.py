"""Print pyproject.toml's dependencies pinned at their floors ("name>=X" -> "name==X"), one a line.

.ci/run installs these in a fresh venv and runs the tests against them, so that the floors the
package declares are versions it was tested with. A dependency without a plain ">=" floor fails.
"""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
pins = []
for spec in pyproject["project"]["dependencies"]:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*", spec.split(";")[0])
    if not m:
        sys.exit(f"floors: {spec!r} has no plain '>=' floor")
    pins.append(f"{m.group(1)}=={m.group(2)}")
print("\n".join(pins))
