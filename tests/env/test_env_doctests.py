"""The environment contracts' examples (docstrings) run as written."""

import doctest

import pytest

from stocker_core.env import environment, gym_env


@pytest.mark.parametrize("module", [environment, gym_env])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
