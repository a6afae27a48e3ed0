"""Text-level comparison with and without the rendered mode, through ``hwnoise.evaluate``.

Uses the methods the rendered mode brings (``mss``, ``wang``, ``cetd-render``: CETD run on the
rows the browser shows, its labels mapped back to the walker's rows, hidden rows labelled
noise) and adds to the registry, for this run only, ``model_render`` (the learned model with
``RENDER_FEATURES`` added to its features; the datasets' features.parquet get those
columns, rows kept, so both models score the same nodes). Every dataset must have been rendered
(``hwnoise render DATASET``) first.

    python bench/render_compare.py /tmp/hw8/big9/big9-bbc-2013 ... \\
        --methods model,cetd,cetd-render,mss,wang,trafilatura --out /tmp/hw8/eval
"""
from __future__ import annotations

import argparse
import shutil
import sys

import numpy as np



def add_render_features(dataset_dirs) -> None:
    """Give each dataset's features.parquet the rendered features, rows kept (``drop=False``),
    so that the learned model can be scored with and without them on the same nodes."""
    import pandas as pd

    from hwnoise.dataset import Dataset
    from hwnoise.features.build import build_features
    from hwnoise.features.render import read_render
    from hwnoise.features.rendered import RENDER_FEATURES, apply_render

    for path in dataset_dirs:
        ds = Dataset(path)
        if not ds.has_features():
            build_features(ds, progress=False)
        rows = ds.read_features()
        if set(RENDER_FEATURES) <= set(rows.columns):
            continue
        out = apply_render(rows, read_render(ds), drop=False)
        if ds.features_path.is_dir():
            shutil.rmtree(ds.features_path)
        pd.DataFrame(out).to_parquet(ds.features_path, index=False)


def register() -> None:
    from hwnoise.extractors import registry

    registry.METHODS.setdefault("model_render", registry.METHODS["model"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--methods", default="model,cetd,cetd-render,mss,wang,trafilatura")
    ap.add_argument("--out", default="render-compare")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model-features", default=None,
                    help="features of the learned model (e.g. extended); model_render gets the "
                         "same plus the rendered features")
    args = ap.parse_args(argv)
    register()
    from hwnoise.evaluate import evaluate
    from hwnoise.features.rendered import RENDER_FEATURES

    methods = args.methods.split(",")
    options: dict[str, dict] = {}
    if "model_render" in methods:
        from hwnoise.features.columns import ALL_FEATURES, EXTENDED_FEATURES, THESIS_FEATURES

        add_render_features(args.datasets)
        spec = args.model_features or "thesis"
        base = {"thesis": THESIS_FEATURES, "extended": THESIS_FEATURES + EXTENDED_FEATURES,
                "all": ALL_FEATURES}.get(spec, spec.split(","))
        options["model_render"] = {"features": ",".join(list(dict.fromkeys(base)) + RENDER_FEATURES)}
        if args.model_features:
            options["model"] = {"features": args.model_features}
    report = evaluate(args.datasets, methods=methods, protocol="pages", seed=args.seed,
                      out=args.out, figures=False, method_options=options)
    rows = report["results"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    print(f"{'dataset':<28}" + "".join(f"{m:>13}" for m in methods))
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        vals = {r["method"]: r.get("text_f1") for r in rows if r["dataset"] == ds}
        print(f"{ds:<28}" + "".join(f"{vals.get(m, float('nan')):>13.3f}" for m in methods))
    mean = {m: np.mean([r["text_f1"] for r in rows if r["method"] == m and "text_f1" in r]) for m in methods}
    print(f"{'mean text_f1':<28}" + "".join(f"{mean[m]:>13.3f}" for m in methods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
