"""The optional C kernel of ``views_equal`` (``ort_layouts/reference/_equal.c``).

Everything else is in pyproject.toml. The extension is optional: where it cannot be built (no C
compiler, no Python headers) ``pip install`` goes on without it and the comparison runs in numpy.
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("ort_layouts.reference._equal", ["ort_layouts/reference/_equal.c"], optional=True),
])
