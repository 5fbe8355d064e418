"""`python -m battlement.cli`: the same as the `battlement` command."""

import sys

from battlement.cli import main

sys.exit(main())
