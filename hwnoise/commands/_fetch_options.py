"""The HTTP options of the commands that fetch pages (``collect``; ``extract`` of a URL), defined
once: the same names, defaults and checks in both, read into one ``FetchSettings``."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hwnoise.commands._types import number

if TYPE_CHECKING:  # pragma: no cover
    from hwnoise.forms.fetch import FetchSettings


def add_fetch_arguments(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Addresses allowed, politeness, timeouts, retries, size and robots.txt."""
    p.add_argument("--allow-private", action="store_true",
                   help="allow private, loopback and link-local addresses (e.g. a site on 127.0.0.1)")
    p.add_argument("--allow-network", action="append", default=[], metavar="CIDR",
                   help="allow this private network or address only (repeatable), e.g. 10.1.0.0/16")
    p.add_argument("--delay", type=number(float, 0, "must be 0 or more seconds"), default=1.0,
                   help="seconds between requests to one host (default 1)")
    p.add_argument("--user-agent", metavar="UA", help="User-Agent header (default names hwnoise)")
    p.add_argument("--timeout", type=number(float, 0.001, "must be more than 0 seconds"), nargs=2,
                   default=[5.0, 30.0], metavar=("CONNECT", "READ"),
                   help="connect and read timeouts in seconds (default 5 30)")
    p.add_argument("--page-timeout", type=number(float, 0.001, "must be more than 0 seconds"),
                   default=120.0, metavar="SECONDS",
                   help="most seconds one response may take in all, however slowly it comes (default 120)")
    p.add_argument("--retries", type=number(int, 0, "must be 0 or more"), default=3,
                   help="retries on connection errors, 429 and 5xx (default 3)")
    p.add_argument("--max-retry-after", type=number(float, 0, "must be 0 or more seconds"), default=120.0,
                   metavar="SECONDS", help="longest Retry-After (of a 429 or 5xx) waited for before a retry; "
                   "an answer asking longer is a failure (default 120)")
    p.add_argument("--max-bytes", type=number(int, 1, "must be 1 or more bytes"), default=10 * 1024 * 1024,
                   help="largest page body kept, in bytes (default 10 MiB)")
    p.add_argument("--no-robots", action="store_true", help="ignore robots.txt (only for sites you run)")


def allowed_networks(args: argparse.Namespace) -> bool | list[str]:
    """``--allow-private`` (True) or the ``--allow-network`` ranges (a list, maybe empty)."""
    return True if args.allow_private else list(args.allow_network)


def fetch_settings(args: argparse.Namespace) -> FetchSettings:
    """The options as the fetcher's settings."""
    from hwnoise.forms.fetch import FetchSettings

    return FetchSettings(user_agent=args.user_agent, delay=args.delay, timeout=tuple(args.timeout),
                         page_timeout=args.page_timeout, max_bytes=args.max_bytes, retries=args.retries,
                         max_retry_after=args.max_retry_after, allow_private=allowed_networks(args) or False,
                         robots=not args.no_robots)
