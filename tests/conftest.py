"""Fixtures shared by the test files: the collector's server, the local time zone."""
from __future__ import annotations

import time

import pytest
from misbehaving_server import MisbehavingServer


@pytest.fixture(scope="module")
def srv():
    """A misbehaving HTTP server on 127.0.0.1, one per test module."""
    with MisbehavingServer() as server:
        yield server


@pytest.fixture
def berlin(monkeypatch):
    """The local time zone Europe/Berlin (which moves its clocks) for this process and the Java
    it starts (both read TZ), the machine's own zone again afterwards."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
