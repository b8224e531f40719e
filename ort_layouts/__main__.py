"""``python -m ort_layouts``: the ort-layouts command line."""

from ort_layouts.frontends.cli import command_line

if __name__ == "__main__":
    command_line()
