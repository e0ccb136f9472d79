"""``python -m litdata``: the ``litdata`` command line."""

import sys

from litdata.cli import main

if __name__ == "__main__":
    sys.exit(main())
