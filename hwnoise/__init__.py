"""hwnoise: tell the noise from the records in hidden-web result pages.

This package holds the base every stage may import (``hwnoise.text``,
``hwnoise.dataset``) and, above the stages, the CLI, ``evaluate`` and the demo
site. It imports no stage itself, so no import cycle can form.

The stage folders (forms/, features/, training/, extractors/, data/) become hwnoise.<stage>
through pyproject.toml's package-dir mapping, so a checkout is used through an install:
``pip install -e .`` for development (the editable install maps them to the checkout).
"""
from __future__ import annotations

__version__ = "0.1.0"
