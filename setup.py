"""The optional compiled walk (``features/_walk.c``); everything else is in pyproject.toml.

The extension is optional: without a C compiler (or lxml's headers) the install still
succeeds and ``hwnoise.features.walk`` runs its pure-Python visit (``walk.COMPILED`` says which).
"""
from setuptools import Extension, setup


def _lxml_include() -> list[str]:
    try:
        import lxml
    except ImportError:  # no lxml at build time: the extension is skipped (optional)
        return []
    return lxml.get_include()


setup(ext_modules=[Extension("hwnoise.features._walk", ["features/_walk.c"],
                             include_dirs=_lxml_include(), optional=True)])
