#!/usr/bin/env python3
"""Executes the Python examples' notebooks headless (nbclient), as CI does: every code cell from
the top, in a fresh kernel started in the notebook's folder; a cell's exception fails the run.
The executed copy is not written back (the committed notebooks carry no outputs).

    python ci/notebooks.py python/examples/*.ipynb
"""

import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient


def main(paths):
    for path in map(pathlib.Path, paths):
        nb = nbformat.read(path, as_version=4)
        start = time.monotonic()
        client = NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        client.execute()
        print(f"-- {path}: {sum(c.cell_type == 'code' for c in nb.cells)} cells in {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: notebooks.py NOTEBOOK.ipynb ...")
    main(sys.argv[1:])
