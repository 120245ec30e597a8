"""``python -m pytest_ragproof`` is the ``ragproof`` command."""

from __future__ import annotations

import sys

from pytest_ragproof.cli import main

if __name__ == "__main__":
    sys.exit(main())
