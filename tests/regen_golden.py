"""Regenerate every golden file: `python tests/regen_golden.py` (same as `UPDATE_GOLDEN=1 pytest`)."""

import os
import subprocess
import sys
from pathlib import Path

if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "UPDATE_GOLDEN": "1"}
    sys.exit(subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                             cwd=root, env=env))
