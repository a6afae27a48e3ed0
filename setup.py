"""The optional compiled helpers; everything else is in pyproject.toml.

Both extensions are optional: without a C compiler (or lxml's headers) the install still
succeeds and hwnoise runs their Python code (``hwnoise.native``; ``walk.COMPILED`` and
``hwnoise.native.tokens`` say what was built).
- ``hwnoise._tokens`` (``hwnoise/_tokens.c``): the tokeniser and word ids of ``hwnoise.text``;
- ``hwnoise.features._walk`` (``features/_walk.c``): the walk's visit over libxml2's nodes and
  the features stage's loops (lxml's headers);
- ``hwnoise.training._trees`` (``training/_trees.c``): the descent of a saved gradient-boosted
  ensemble (``TreeEnsemble``), what extraction with a ``gb`` model spent a fifth of its time on,
  and its logistic link (scipy's ``expit``, without importing scipy).
"""
import sys

from setuptools import Extension, setup


def _lxml_include() -> list[str]:
    try:
        import lxml
    except ImportError:  # no lxml at build time: the walk's extension is skipped (optional)
        return []
    return lxml.get_include()


#: The measures' floating operations compiled one IEEE operation each (no fused multiply-add,
#: which a -march with FMA would allow): the same doubles as numpy's (tree_sums, tree_tail).
_NO_FMA = [] if sys.platform == "win32" else ["-ffp-contract=off"]

setup(ext_modules=[
    Extension("hwnoise._tokens", ["hwnoise/_tokens.c"], include_dirs=["hwnoise"],
              depends=["hwnoise/_buffers.h"], optional=True),
    Extension("hwnoise.features._walk", ["features/_walk.c"], include_dirs=["hwnoise", *_lxml_include()],
              depends=["hwnoise/_buffers.h"], optional=True, extra_compile_args=_NO_FMA),
    Extension("hwnoise.training._trees", ["training/_trees.c"], optional=True),
])
