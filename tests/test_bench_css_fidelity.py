"""bench/css_fidelity.py switches a change to the CSS rules off and back on for one walk."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import css_fidelity  # noqa: E402
from hwnoise.features import css  # noqa: E402
from test_walk import PER_WIDTH  # noqa: E402


def test_before_and_now_differ_and_the_rules_come_back():
    kept = (css.media_matches, css._in_shown_media, css._showing_rules, css.cascade_rows)
    now = css_fidelity.words(PER_WIDTH.encode(), css_fidelity.NOW)
    before = css_fidelity.words(PER_WIDTH.encode(), css_fidelity.CHANGES["media"])
    assert now == "Skip to toolbar Stories Topics Scaling global storytelling Share this Grid".split()
    # before: every <style> applied whatever its media (both copies hidden), no @media block
    assert before == "Menu Stories Topics Share this Grid Buy".split()
    assert (css.media_matches, css._in_shown_media, css._showing_rules, css.cascade_rows) == kept


def test_the_cascade_switched_off():
    page = (b"<html><head><style>.d-none{display:none!important}"
            b"@media (min-width:992px){.d-lg-block{display:block!important}}</style></head>"
            b"<body><p>one</p><div class='d-none d-lg-block'>two</div></body></html>")
    assert css_fidelity.words(page, css_fidelity.NOW) == ["one", "two"]
    assert css_fidelity.words(page, css_fidelity.CHANGES["cascade"]) == ["one"]
    assert css_fidelity.words(page, css_fidelity.NOW) == ["one", "two"]


def test_f1_of_bags_of_words():
    assert css_fidelity.f1(["a", "b"], ["a", "b"]) == 1.0
    assert css_fidelity.f1(["a", "a"], ["a"]) == pytest.approx(2 / 3)
    assert css_fidelity.f1([], ["a"]) == 0.0
    assert css_fidelity.f1([], []) == 1.0  # both show nothing: they agree
