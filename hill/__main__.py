"""`python -m hill` is the `bfjoust` command."""

import sys

from hill.cli import main

sys.exit(main())
