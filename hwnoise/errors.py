"""The base of every error hwnoise reports to a user as one line (no traceback)."""
from __future__ import annotations


class HwnoiseError(Exception):
    """An error with a message that names the problem (file, line, URL) and what to do."""
