import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from battlement.sim import firmware as fwsim


@pytest.fixture(scope="session")
def fw_code(tmp_path_factory):
    """The firmware as a board holds it (firmware/*.py + wire.py), staged once per worker.

    BATTLEMENT_FW_CODE names a folder staged another way (an older firmware, to see a test fail on it)."""
    other = os.getenv("BATTLEMENT_FW_CODE")
    if other:
        return pathlib.Path(other)
    return fwsim.stage(tmp_path_factory.mktemp("fw-code"))
