"""``python -m litdata``: the ``litdata`` command line."""

import sys

from litdata.cli import main

sys.exit(main())
