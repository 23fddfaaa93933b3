"""``python -m sim2human.cli``: the command."""

import sys

from sim2human.cli.working_dir import not_importable

not_importable()  # `python -m` put the working directory first on sys.path; the command does not

from sim2human.cli.app import main  # noqa: E402

sys.exit(main())
