"""`battlement` with the toy game added to the games it knows, and nothing else changed:
    python tests/toygame/run_bridge.py run --simulate --table tests/toygame/tic-tac-toe.toml
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import shared_rules

shared_rules.GAMES["tic-tac-toe"] = "tictactoe.rules"

from battlement.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
