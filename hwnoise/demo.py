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
from typing import TYPE_CHECKING

from hwnoise import __version__
from hwnoise.dataset import Dataset, now_iso, write_json
from hwnoise.errors import HwnoiseError
from hwnoise.progress import info

if TYPE_CHECKING:
    from hwnoise.demo_site import DemoSite

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
    from hwnoise.training.classifiers import make_classifier

    make_classifier(classifier)  # an unknown name refused before the site is crawled, not after
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _clear_earlier_demo(out / "dataset")
    t0 = time.perf_counter()
    ds = _collect_from_site(out, submissions, seed, progress)
    _features_and_arff(ds, out, progress)
    results = _train_protocols(ds, out, classifier, seed)
    ev_results, note = _evaluate_text_level(ds, out, classifier, seed)
    return _write_report(out, _merge_results(results, ev_results), note, t0)


def _clear_earlier_demo(folder: Path) -> None:
    """Remove the dataset an earlier demo wrote at ``folder``, refusing anything else there. Its
    pages were kept and the new run's added beside them: the site serves on a new port each run,
    so every page came again under a new ID (URL), each rerun doubled the dataset with copies
    that the pages protocol put on both sides of its split, and its gold was rewritten from the
    new run's site (another ``--seed``: another site's records)."""
    import shutil

    if not folder.exists() and not folder.is_symlink():
        return
    try:
        meta = Dataset(folder).meta if folder.is_dir() and not folder.is_symlink() else {}
    except HwnoiseError:
        meta = {}
    if meta.get("source") != "demo":
        raise HwnoiseError(f"{folder}: exists and is not a dataset an earlier 'hwnoise demo' wrote; the "
                           "demo writes its dataset there: give another --out, or move it away")
    shutil.rmtree(folder)
    info(f"demo: removed the earlier demo's dataset in {folder} (the site's pages come again under new IDs)")


def _collect_from_site(out: Path, submissions: int, seed: int, progress: bool) -> Dataset:
    """Start the demo site, collect its form's result pages and write their gold text."""
    from hwnoise.demo_site import DemoSite

    with DemoSite(seed=seed) as site:
        info(f"demo site: {site.form_url}")
        ds = _submit_form(site, out, submissions, seed, progress)
        n_gold = _write_gold(ds, site)
    info(f"gold text written for {n_gold} pages; domain query: {len(ds.query())} terms")
    return ds


def _submit_form(site: DemoSite, out: Path, submissions: int, seed: int, progress: bool) -> Dataset:
    """Submit the site's search form over HTTP into a new dataset under ``out``."""
    from hwnoise.forms.collect import collect
    from hwnoise.forms.formpage import read_form, submissions_from_form

    form = read_form(site.form_url, allow_private=True)
    subs = submissions_from_form(form, site.value_sets(submissions, seed=seed))
    ds = Dataset.create(out / "dataset", name="demo", source="demo",
                        notes=f"hwnoise demo site, seed {seed}; {len(subs)} form submissions over HTTP")
    summary = collect(subs, ds, allow_private=True, delay=0, progress=progress)
    if not progress:  # else collect said it, in its own line
        info(f"collected: {summary.get('fetched', 0)} fetched, {summary.get('failed', 0)} failed, "
             f"{summary.get('skipped', 0)} already there")
    return ds


def _write_gold(ds: Dataset, site: DemoSite) -> int:
    """Write the gold text the site knows for every collected page; return how many."""
    n_gold = 0
    for page in ds.pages():
        ds.write_gold(page.id, site.gold_text(page.url))
        n_gold += 1
    return n_gold


def _features_and_arff(ds: Dataset, out: Path, progress: bool) -> None:
    """Build the feature table and export it as ARFF."""
    from hwnoise.features.build import build_features
    from hwnoise.training.arff import write_arff

    build_features(ds, progress=progress)
    df = ds.read_features()
    write_arff(df, out / "demo.arff", relation="hwnoise-demo")
    info(f"features: {len(df)} rows -> {ds.features_path}; ARFF -> {out / 'demo.arff'}")


def _train_protocols(ds: Dataset, out: Path, classifier: str, seed: int) -> list[dict]:
    """Train and test the classifier with each protocol; return their node-level results."""
    from hwnoise.training.train import TrainOptions, train

    results = []
    for protocol in PROTOCOLS:
        rep = train([ds.path], {"preset": "thesis", "classifier": classifier},
                    TrainOptions(protocol=protocol, seed=seed + 1, verbose=protocol == "pages",
                                 out=out / ("model" if protocol == "pages" else f"model-{protocol}")))
        results.extend(rep["results"])
    return results


def _evaluate_text_level(ds: Dataset, out: Path, classifier: str,
                         seed: int) -> tuple[list[dict], str | None]:
    """Score the model beside CETD and the installed external extractors at text level, on
    the same test pages as the pages protocol; return the results and the left-out note."""
    from hwnoise.evaluate import evaluate
    from hwnoise.extractors.external import available

    methods = ["model", "cetd"] + [m for m in COMPARED if m in available()]
    note = left_out_note()
    info(f"evaluating {', '.join(methods)} on the test pages (text level)"
         + (f"; {note}" if note else ""))
    ev = evaluate([ds.path], methods=methods, protocol="pages", seed=seed + 1,
                  out=out / "evaluation", method_options={"model": {"classifier": classifier}})
    return ev["results"], note


def _merge_results(results: list[dict], ev_results: list[dict]) -> list[dict]:
    """Merge the text-level results into the node-level ones by (dataset, protocol, method)."""
    by_key = {(r["dataset"], r["protocol"], r["method"]): r for r in results}
    for r in ev_results:
        key = (r["dataset"], r["protocol"], r["method"])
        by_key[key] = {**by_key.get(key, {}), **r}
    return list(by_key.values())


def _write_report(out: Path, results: list[dict], note: str | None, t0: float) -> dict:
    """Write the combined report to ``out/report.json`` and return it."""
    report = {"hwnoise": __version__, "created": now_iso(), "results": results,
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
