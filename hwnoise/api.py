"""The Python API in one place: train a model, load one (or a shipped one), extract text or records.

    from hwnoise import train, load_model, extract, extract_records

    result = train(["data/big9-bbc-2009"], preset="site", out="model-bbc")  # fit, score, save
    model = load_model("model-bbc")          # or load_model("general"), the shipped model
    text = extract(model, open("page.html", "rb").read(), query="obama")
    records = extract_records("records", open("results.html", "rb").read())  # [{"xpath", "text", ...}]

``hwnoise/__init__.py`` exposes these names lazily (``__getattr__``), so ``import hwnoise``
imports no stage.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["train", "load_model", "extract", "extract_records", "ModelSpec"]


def train(inputs: str | Path | Sequence[str | Path], **options: Any) -> dict:
    """``hwnoise train`` as a function (``hwnoise.training.train.train`` with the stacked
    extractors wired in): model options (``preset``, ``classifier``, ``features``, ``stack``,
    ``context``, ``page_context``, ``threshold``, ``params``, ``content_from``, ``union``,
    ``union_gate``, ``regions``) and the run's (``TrainOptions``: ``protocol``, ``out``,
    ``all_pages``...). Returns the report with the fitted ``model``."""
    from hwnoise.extractors.model import run_extractor
    from hwnoise.extractors.region_fit import model_region_scorer
    from hwnoise.training.train import TrainOptions
    from hwnoise.training.train import train as _train

    options.setdefault("stacker", run_extractor)
    options.setdefault("region_fitter", model_region_scorer)
    return _train(inputs, *TrainOptions.split(options))


def load_model(path: str | Path = "general", *, allow_pickle: bool = False):
    """A saved model (the folder or model.json ``train`` wrote), or ``"general"`` /
    ``"records"`` (the shipped models)."""
    from hwnoise.extractors.model import load_model as _load

    return _load(path, allow_pickle=allow_pickle)


def extract(model: Any = "general", html: bytes | str = b"", *, query: str | None = None,
            http_charset: str | None = None) -> str:
    """The content text of one page (its bytes as received) by ``model`` (a NoiseModel, a
    saved model's path, or "general"); ``query`` is the search that found the page."""
    from hwnoise.extractors.model import extract_with_model

    return extract_with_model(_page_model(model), _html(html), http_charset=http_charset, query=query)


def extract_records(model: Any = "records", html: bytes | str = b"", *, query: str | None = None,
                    http_charset: str | None = None, page: str = "page", hidden: bool = True) -> list[dict]:
    """The data records of one page by ``model`` (a NoiseModel, a saved model's path, or
    "records", the shipped model for records), each ``{"page", "record", "xpath", "text",
    "fields"}`` as ``hwnoise extract --records`` writes it (``"hidden": true`` on a record the
    page hides; ``hidden=False`` leaves those out)."""
    from hwnoise.extractors.model import extract_records as _records

    return _records(_page_model(model), _html(html), http_charset=http_charset, query=query, page=page,
                    hidden=hidden)


def _page_model(model: Any):
    """``model`` loaded when it is a path or a shipped model's name; a ``ModelError`` when it
    cannot label a page's nodes (``extractors.model.check_page_model``)."""
    if not hasattr(model, "predict"):
        return load_model(model)
    from hwnoise.extractors.model import check_page_model

    check_page_model(model)
    return model


def _html(html: bytes | str) -> bytes | str:
    """``html``, or a ``HwnoiseError`` saying why it is no HTML page (an image, a PDF, an empty
    body: what ``hwnoise extract`` refuses too, rather than text made of its bytes)."""
    from hwnoise.decode import require_html

    require_html(html.encode("utf-8", "surrogatepass") if isinstance(html, str) else html, "the page")
    return html


def __getattr__(name: str):
    if name == "ModelSpec":
        from hwnoise.training.spec import ModelSpec

        return ModelSpec
    raise AttributeError(name)
