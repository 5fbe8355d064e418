"""Rules tests import `rtest` (this folder) and `shared_rules` (the repo root) as top-level modules."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
for p in (str(HERE), str(HERE.parent.parent)):
    if p not in sys.path:
        sys.path.insert(0, p)
