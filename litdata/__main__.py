"""``python -m litdata``: the ``litdata`` command line."""

import sys

if __name__ == "__main__":
    try:
        from litdata.cli import main
    except KeyboardInterrupt:  # Ctrl-C while the command starts: no traceback either
        sys.exit(130)
    sys.exit(main())
