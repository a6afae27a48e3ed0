"""Build a demo-site dataset with gold records (``records/ID.json``) for the record level.

``hwnoise demo`` labels its nodes from gold text; this script collects the same kind of pages
from the built-in demo site over real HTTP (``forms.collect``) and also writes each page's gold
records (``DemoSite.gold_records``: the XPath of each record's element), so that
``hwnoise evaluate OUT/dataset --methods model,mdr`` scores records. Usage::

    python bench/records_demo.py OUT [--submissions 100] [--seed 0]
    hwnoise evaluate OUT/dataset --methods model,mdr,cetd --protocol cv -o OUT/eval
"""
from __future__ import annotations

import argparse
from pathlib import Path

from hwnoise.dataset import Dataset
from hwnoise.demo_site import DemoSite
from hwnoise.forms.collect import collect
from hwnoise.forms.formpage import read_form, submissions_from_form
from hwnoise.progress import info


def build(out: Path, submissions: int = 100, seed: int = 0) -> Path:
    with DemoSite(seed=seed) as site:
        form = read_form(site.form_url, allow_private=True)
        subs = submissions_from_form(form, site.value_sets(submissions, seed=seed))
        ds = Dataset.create(out / "dataset", name="demo-records", source="demo",
                            notes=f"hwnoise demo site, seed {seed}; gold text and gold records")
        collect(subs, ds, allow_private=True, delay=0, progress=False)
        n = 0
        for page in ds.pages():
            ds.write_gold(page.id, site.gold_text(page.url))
            ds.write_records(page.id, site.gold_records(page.url))
            n += 1
    info(f"{n} demo pages with gold text and gold records -> {ds.path}")
    return ds.path


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--submissions", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(build(a.out, a.submissions, a.seed))
