import os

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture
def repo() -> str:
    return REPO
