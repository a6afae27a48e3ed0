"""Argparse types shared by the subcommands: a wrong value is a one-line usage error (exit 2)
that says what is wrong, before any work starts."""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def number(kind: type, low: float, what: str) -> Callable[[str], float]:
    """A ``kind`` number of at least ``low`` (``what`` says the rule in the error)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value >= low or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r}: {what}")
        return value
    return parse


def charset_label(text: str) -> str:
    """A charset label a browser knows (WHATWG's, ``hwnoise.decode.normalize_label``): a label it
    does not know would be ignored as a browser ignores it, so a typo would pass unseen."""
    from hwnoise.decode import normalize_label

    if normalize_label(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is no charset label a browser knows "
                                         "(e.g. utf-8, windows-1252, iso-8859-2, shift_jis, gb18030)")
    return text


def port(text: str) -> int:
    """A TCP port to listen on, 0 (a free one) to 65535."""
    value = number(int, 0, "a port is 0 (a free one) to 65535")(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a port is 0 (a free one) to 65535")
    return value


#: ``--workers`` of the commands that run on a pool: 1 or more processes.
worker_count = number(int, 1, "give 1 or more processes")

