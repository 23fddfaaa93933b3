"""``python -m sim2human.cli``: the command."""

import sys

from sim2human.cli.app import main

sys.exit(main())
