"""Make the plugin's source importable when its tests run from litdata's checkout."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
