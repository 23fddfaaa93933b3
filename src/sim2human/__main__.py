"""``python -m sim2human``: the command, as ``sim2human`` (and ``python -m sim2human.cli``)."""

import sys

from sim2human.cli.app import main

sys.exit(main())
