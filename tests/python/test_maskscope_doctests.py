"""The Examples sections of the package's docstrings (numpydoc) run as doctests: each call's example output is
what the call returns (ctest python_module; tools/test_wheel.sh runs them against the installed wheel)."""

import doctest
import importlib

import pytest

MODULES = ["maskscope._api", "maskscope._data", "maskscope._results", "maskscope._sweep", "maskscope._train"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    pytest.importorskip("pandas")  # the examples of to_dataframe() and to_xarray()
    pytest.importorskip("xarray")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


def test_public_functions_have_numpydoc_sections():
    import inspect

    import maskscope
    for f in (maskscope.run, maskscope.sweep, maskscope.analyze, maskscope.h_of_j_theory, maskscope.load,
              maskscope.train):
        for section in ("Parameters\n----------", "Returns\n-------", "Raises\n------", "Examples\n--------"):
            assert section in inspect.cleandoc(f.__doc__), (f.__name__, section)
