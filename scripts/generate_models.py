"""Regenerate models/: the standard suite's ONNX graphs, one per op x data type (x opset).

    python scripts/generate_models.py [OUT_DIR]

The files are reproducible byte for byte (tests/test_models_dir.py regenerates them into a
temporary directory and compares). models/MANIFEST.json lists the case ids of each file: case i
of a file has graph input ``x{i}``, output ``y{i}`` and node ``n{i}_{op}``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ort_layouts.models.testdata import write_suite_models


def main(out_dir: str = str(Path(__file__).resolve().parent.parent / "models")) -> None:
    manifest = write_suite_models(out_dir)
    size = sum(p.stat().st_size for p in Path(out_dir).iterdir())
    cases = sum(map(len, manifest.values()))
    print(f"wrote {len(manifest)} models ({cases} cases, {size} bytes) to {out_dir}")


if __name__ == "__main__":
    main(*sys.argv[1:])
