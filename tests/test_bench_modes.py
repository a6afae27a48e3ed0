"""bench/general_variants.py's extra verdicts of other extractor modes (``MODES``, ``modes``)."""
from __future__ import annotations

import numpy as np
import pytest
from bench_scripts import bench_module

from hwnoise.extractors import external
from hwnoise.features.assembly import stack_share
from hwnoise.features.walk import walk_page

PAGE = ("<html><head><title>t</title></head><body><nav><a href='/'>Home</a> <a href='/b'>Blog</a></nav>"
        "<article><h1>The river</h1>" + "".join(
            f"<p>The river runs past the old mill number {i} and turns the wheel all day long, "
            f"while the miller counts the sacks of flour he sends to the town.</p>" for i in range(8))
        + "</article><footer>Copyright the mill company</footer></body></html>")


def test_the_default_mode_is_the_stacked_trafilatura_and_other_modes_give_shares():
    if "trafilatura" not in external.available():
        pytest.skip("trafilatura is not installed")
    from hwnoise.extractors.model import run_extractor

    gv = bench_module("general_variants")
    walk = walk_page(PAGE)
    ours = stack_share(walk, gv._mode_runner("traf_default")(PAGE) or "")
    assert np.array_equal(ours, stack_share(walk, run_extractor("trafilatura", PAGE)))
    for mode in ("traf_prec", "traf_rec"):
        share = stack_share(walk, gv._mode_runner(mode)(PAGE) or "")
        assert share.shape == ours.shape and ((share >= 0) & (share <= 1)).all()


def test_readabilitys_best_candidates_keep_the_article():
    if "readability" not in external.available():
        pytest.skip("readability-lxml is not installed")
    gv = bench_module("general_variants")
    best = gv._readability_top(1, PAGE)  # the article, scored highest
    assert "old mill number 7" in best and "Copyright" not in best and "Blog" not in best
    top3 = gv._readability_top(3, PAGE)  # its parent (the body) is among the three: the whole page
    assert "old mill number 7" in top3 and "Copyright" in top3
