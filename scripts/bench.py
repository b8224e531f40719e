"""Benchmarks of ort_layouts on this machine: ``python scripts/bench.py --help``
(the same as ``ort-layouts bench``)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ort_layouts.frontends.bench import main

if __name__ == "__main__":
    sys.exit(main())
