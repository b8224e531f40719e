"""``python -m ort_layouts``: the ort-layouts command line."""

import sys

from ort_layouts.frontends.cli import main

if __name__ == "__main__":
    sys.exit(main())
