"""``python -m litdata.cli``: the ``litdata`` command."""

import sys

from litdata.cli import main

sys.exit(main())
