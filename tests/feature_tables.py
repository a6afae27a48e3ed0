"""Synthetic feature tables for the train and memory tests: a dataset folder whose
``features.parquet`` holds the thesis features and labels that follow a learnable rule."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hwnoise.dataset import Dataset


def table_dataset(path: Path, name: str, seed: int, sites: list[str], n_pages: int = 12, *,
                  unlabelled_first: bool = False, spare_columns: bool = False) -> Dataset:
    """Pages of 40 rows; content when ``ctd > 25 and query_score > 1.5`` (3 % flipped). With
    ``unlabelled_first`` the first page has no gold; with ``spare_columns`` the table also
    holds columns no thesis fit reads (``spare``, ``text``, ``xpath``)."""
    ds = Dataset.create(path, name=name, source="test")
    rng = np.random.RandomState(seed)
    frames = []
    for i in range(n_pages):
        n = 40
        ctd = rng.exponential(20, n)
        qs = rng.exponential(2, n)
        label = np.where(((ctd > 25) & (qs > 1.5)) ^ (rng.rand(n) < 0.03), "N", "S").astype(object)
        if unlabelled_first and i == 0:
            label[:] = None
        cols = {"dataset": name, "site": sites[i % len(sites)], "page": f"page{i:02d}", "node": np.arange(n),
                "ctd": ctd, "density_sum": ctd * rng.uniform(0.5, 2, n), "query_score": qs,
                "matches": rng.poisson(1, n), "distance": rng.randint(0, 12, n)}
        if spare_columns:
            cols.update(spare=rng.rand(n), text=["some words here"] * n,
                        xpath=[f"/html/body/div[{k}]" for k in range(n)])
        frames.append(pd.DataFrame({**cols, "label": label}))
    pd.concat(frames, ignore_index=True).to_parquet(ds.features_path)
    ds.write_query([{"term": "book", "kind": "value", "submissions": ["x"]}])
    return ds
