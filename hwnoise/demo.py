"""``hwnoise demo``: the whole job on the built-in demo hidden-web site.

Starts the demo site on 127.0.0.1, submits its search form about 100 times
through the forms/ collector over real HTTP, writes the gold text the site
knows, builds the domain query and the feature table, exports ARFF, trains the
C4.5 tree with the ``pages`` and ``thesis`` protocols, prints the tree, the
confusion matrices and the weighted P/R/F1, and writes everything to ``out``.
"""
from __future__ import annotations

import time
from pathlib import Path

from hwnoise import __version__
from hwnoise.dataset import Dataset, now_iso, write_json
from hwnoise.progress import info

PROTOCOLS = ("pages", "thesis")

#: The extractors the demo compares with when installed (the ``extractors`` extra brings them).
COMPARED = ("trafilatura", "readability")


def left_out_note() -> str | None:
    """Which compared extractors are not installed and how to get them, or None."""
    from hwnoise.extractors.external import available

    missing = [m for m in COMPARED if m not in available()]
    if not missing:
        return None
    return (f"{' and '.join(missing)} not installed, so the comparison leaves "
            f"{'it' if len(missing) == 1 else 'them'} out: pip install 'hwnoise[extractors]' "
            "brings them")


def run_demo(out: str | Path = "hwnoise-demo", *, submissions: int = 100, seed: int = 0,
             classifier: str = "j48", progress: bool = True) -> dict:
    """Run the demo end to end; return the combined report (also written to ``out/report.json``)."""
    from hwnoise.demo_site import DemoSite
    from hwnoise.features.build import build_features
    from hwnoise.forms.collect import collect
    from hwnoise.forms.formpage import read_form, submissions_from_form
    from hwnoise.training.arff import write_arff
    from hwnoise.training.train import train

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with DemoSite(seed=seed) as site:
        info(f"demo site: {site.form_url}")
        form = read_form(site.form_url, allow_private=True)
        subs = submissions_from_form(form, site.value_sets(submissions, seed=seed))
        ds = Dataset.create(out / "dataset", name="demo", source="demo",
                            notes=f"hwnoise demo site, seed {seed}; {len(subs)} form submissions over HTTP")
        summary = collect(subs, ds, allow_private=True, delay=0, progress=progress)
        info(f"collected: {summary.get('fetched', 0)} fetched, {summary.get('failed', 0)} failed, "
             f"{summary.get('skipped', 0)} already there")
        n_gold = 0
        for page in ds.pages():
            ds.write_gold(page.id, site.gold_text(page.url))
            n_gold += 1
    info(f"gold text written for {n_gold} pages; domain query: {len(ds.query())} terms")

    build_features(ds, progress=progress)
    df = ds.read_features()
    write_arff(df, out / "demo.arff", relation="hwnoise-demo")
    info(f"features: {len(df)} rows -> {ds.features_path}; ARFF -> {out / 'demo.arff'}")

    results = []
    for protocol in PROTOCOLS:
        rep = train([ds.path], protocol=protocol, preset="thesis", classifier=classifier, seed=seed + 1,
                    out=out / ("model" if protocol == "pages" else f"model-{protocol}"),
                    verbose=protocol == "pages")
        results.extend(rep["results"])

    # Text level, on the same test pages as the pages protocol: the model beside CETD and
    # the external extractors that are installed.
    from hwnoise.evaluate import evaluate
    from hwnoise.extractors.external import available

    methods = ["model", "cetd"] + [m for m in COMPARED if m in available()]
    note = left_out_note()
    info(f"evaluating {', '.join(methods)} on the test pages (text level)"
         + (f"; {note}" if note else ""))
    ev = evaluate([ds.path], methods=methods, protocol="pages", seed=seed + 1,
                  out=out / "evaluation", method_options={"model": {"classifier": classifier}})
    by_key = {(r["dataset"], r["protocol"], r["method"]): r for r in results}
    for r in ev["results"]:
        key = (r["dataset"], r["protocol"], r["method"])
        by_key[key] = {**by_key.get(key, {}), **r}
    report = {"hwnoise": __version__, "created": now_iso(), "results": list(by_key.values()),
              "seconds": round(time.perf_counter() - t0, 1)}
    if note:
        report["notes"] = [note]
    write_json(out / "report.json", report)
    return report


def summary_lines(report: dict) -> list[str]:
    """One line per protocol: the figures a user looks at first."""
    lines = []
    for r in report["results"]:
        if r.get("method") != "model" or "RR" not in r:
            continue
        lines.append(
            f"{r['dataset']:<8} {r['protocol']:<7} nodes {r.get('nodes', 0):>6}  "
            f"weighted P {r['precision']:.3f} R {r['recall']:.3f} F1 {r['f1']:.3f}  "
            f"content F1 {r.get('content_f1', float('nan')):.3f}  "
            f"RR {r['RR']} RC {r['RC']} CC {r['CC']} CR {r['CR']}"
        )
    return lines
