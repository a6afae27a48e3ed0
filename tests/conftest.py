"""Fixtures shared by the collector's test files."""
from __future__ import annotations

import pytest
from misbehaving_server import MisbehavingServer


@pytest.fixture(scope="module")
def srv():
    """A misbehaving HTTP server on 127.0.0.1, one per test module."""
    with MisbehavingServer() as server:
        yield server
