"""The Python API in one place: train a model, load one (or a shipped one), extract text or records.

    from hwnoise import train, load_model, extract, extract_records

    result = train(["data/big9-bbc-2009"], preset="site", out="model-bbc")  # fit, score, save
    model = load_model("model-bbc")          # or load_model("general"), the shipped model
    text = extract(model, open("page.html", "rb").read(), query="obama")  # markdown=True: Markdown
    records = extract_records("records", open("results.html", "rb").read())  # [{"xpath", "text", ...}]

``hwnoise/__init__.py`` exposes these names lazily (``__getattr__``), so ``import hwnoise``
imports no stage.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hwnoise.errors import ArgumentError, check_kinds, kind_of, path_list

__all__ = ["train", "load_model", "extract", "extract_records", "ModelSpec", "ArgumentError"]


def train(inputs: str | Path | Sequence[str | Path], **options: Any) -> dict:
    """``hwnoise train`` as a function (``hwnoise.training.train.train`` with the stacked
    extractors wired in): fit a model on ``inputs`` (dataset folders, one or a list, or one ARFF
    file), score it by the protocol, and with ``out`` save it. Model options (``preset``, or
    ``spec``: a whole ``ModelSpec``, as ``load_model(...).spec``; then ``classifier``,
    ``features``, ``stack``, ``context``, ``page_context``, ``threshold``, ``cut``, ``params``,
    ``content_from``, ``union``, ``union_gate``, ``regions`` over it) and the run's (``TrainOptions``: ``protocol``, ``out``,
    ``all_pages``...). Returns the report with the fitted ``model``."""
    from hwnoise.extractors.model import run_extractor
    from hwnoise.extractors.region_fit import model_region_scorer
    from hwnoise.training.train import TrainOptions
    from hwnoise.training.train import train as _train

    options.setdefault("stacker", run_extractor)
    options.setdefault("region_fitter", model_region_scorer)
    return _train(_inputs(inputs), *TrainOptions.split(options))


def load_model(path: str | Path = "general", *, allow_pickle: bool = False):
    """A saved model (the folder or model.json ``train`` wrote), or ``"general"`` /
    ``"records"`` (the shipped models). ``allow_pickle`` loads a model.joblib this installation
    did not sign (unpickling runs its code: only for a file from a source you trust)."""
    from hwnoise.extractors.model import load_model as _load

    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"load_model: path is {kind_of(path)}; give a saved model's folder or model.json "
                            "(a str or pathlib.Path), or 'general' / 'records'")
    return _load(path, allow_pickle=allow_pickle)


def extract(model: Any = "general", html: bytes | str = b"", *, query: str | Sequence[str] | None = None,
            http_charset: str | None = None, markdown: bool = False) -> str:
    """The content text of one page (its bytes as received) by ``model`` (a NoiseModel, a
    saved model's path, or "general"); ``query`` is the search that found the page. Plain text,
    laid out as a browser's ``innerText``, or with ``markdown`` Markdown (headings, lists, quotes,
    tables)."""
    from hwnoise.extractors.model import extract_with_model

    check_kinds("extract", {"markdown": markdown}, {"markdown": ((bool,), "True or False")})
    return extract_with_model(_page_model(model), _html(html), **_page_options(query, http_charset),
                              markdown=markdown)


def extract_records(model: Any = "records", html: bytes | str = b"", *, query: str | Sequence[str] | None = None,
                    http_charset: str | None = None, page: str = "page", hidden: bool = True) -> list[dict]:
    """The data records of one page by ``model`` (a NoiseModel, a saved model's path, or
    "records", the shipped model for records), each ``{"page", "record", "xpath", "text",
    "fields"}`` as ``hwnoise extract --records`` writes it (``"hidden": true`` on a record the
    page hides; ``hidden=False`` leaves those out)."""
    from hwnoise.extractors.model import extract_records as _records

    check_kinds("extract_records", {"page": page, "hidden": hidden},
                {"page": ((str,), "the page's name for the records' \"page\" (a str)"),
                 "hidden": ((bool,), "True or False")})
    return _records(_page_model(model), _html(html), **_page_options(query, http_charset), page=page,
                    hidden=hidden)


def _inputs(inputs: Any) -> list[str | os.PathLike]:
    """``train``'s dataset folders or ARFF file as a list of paths (``errors.path_list``)."""
    return path_list(inputs, "train: inputs", "dataset folders (a str or pathlib.Path, or a list of them) or "
                     "one ARFF file")


def _page_model(model: Any):
    """``model`` loaded when it is a path or a shipped model's name; a ``ModelError`` when it
    cannot label a page's nodes (``extractors.model.check_page_model``), an ``ArgumentError``
    when it is no hwnoise model (another library's classifier, None, bytes)."""
    from hwnoise.training.model import NoiseModel

    if isinstance(model, (str, os.PathLike)):
        return load_model(model)
    if not isinstance(model, NoiseModel):
        raise ArgumentError(f"model is {kind_of(model)}, not an hwnoise model; give one from load_model() or "
                            "train()['model'], a saved model's folder, or 'general' / 'records'")
    from hwnoise.extractors.model import check_page_model

    check_page_model(model)
    return model


def _html(html: Any) -> bytes | str:
    """``html``, or a ``HwnoiseError`` saying why it is no HTML page (an image, a PDF, an empty
    body: what ``hwnoise extract`` refuses too, rather than text made of its bytes); an
    ``ArgumentError`` for what is not one page's bytes or text (a path, a list of pages, None)."""
    from hwnoise.decode import require_html
    from hwnoise.pagefiles import names_a_file

    if isinstance(html, (bytearray, memoryview)):
        html = bytes(html)
    if isinstance(html, os.PathLike) or (isinstance(html, str) and names_a_file(html)):
        raise ArgumentError(f"html is the path {os.fspath(html)!r}, not a page; give the page's bytes: "
                            f"pathlib.Path({os.fspath(html)!r}).read_bytes()")
    if isinstance(html, str) and _one_url(html):
        raise ArgumentError(f"html is the URL {html.strip()!r:.200}, not a page; give the page's bytes as "
                            "fetched (hwnoise extract URL fetches and extracts it)")
    if not isinstance(html, (bytes, str)):
        raise ArgumentError(f"html is {kind_of(html)}{_instead(html)}")
    require_html(html.encode("utf-8", "surrogatepass") if isinstance(html, str) else html, "the page")
    return html


def _one_url(text: str) -> bool:
    """Whether ``text`` is one http(s) URL and nothing else (no markup, no space)."""
    from hwnoise.pagefiles import is_url

    text = text.strip()
    return is_url(text) and len(text) < 8192 and not any(c in text for c in "<> \t\n")


def _instead(html: Any) -> str:
    """What to pass instead, for ``_html``'s message: an open file's bytes, a parsed tree's
    markup (lxml), one page a call, else one page's bytes or text."""
    if callable(getattr(html, "read", None)):
        return " (an open file); give its bytes: f.read() of the file opened 'rb'"
    if type(html).__module__.startswith("lxml"):
        return " (a parsed tree); give the page's bytes as received, or lxml.html.tostring(tree)"
    many = " (one page a call)" if isinstance(html, (list, tuple)) else ""
    return f"{many}; give one page's HTML as bytes (as received) or str"


def _page_options(query: Any, http_charset: Any) -> dict[str, Any]:
    """``query`` (a str, or search terms as a list of str) and ``http_charset`` (a str) checked,
    as ``extract_html``'s keywords: a number was a TypeError or AttributeError from inside."""
    terms_ok = isinstance(query, (list, tuple)) and all(isinstance(t, str) for t in query)
    if query is not None and not isinstance(query, str) and not terms_ok:
        raise ArgumentError(f"query is {kind_of(query)}; give the search that found the page as a str "
                            "(or its terms as a list of str)")
    if http_charset is not None and not isinstance(http_charset, str):
        raise ArgumentError(f"http_charset is {kind_of(http_charset)}; give the charset of the page's "
                            "Content-Type header as a str (e.g. 'utf-8'), or None")
    return {"query": query, "http_charset": http_charset}


def __getattr__(name: str):
    if name == "ModelSpec":
        from hwnoise.training.spec import ModelSpec

        return ModelSpec
    raise AttributeError(name)
