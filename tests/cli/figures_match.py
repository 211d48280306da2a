"""Every figure in COMMITTED_DIR has the pixels of the one of that name in
RENDERED_DIR (notebooks/render_figures.sh renders them). PNG metadata aside,
the same binary draws the same pixels, so any difference is a figure that no
longer shows what the notebooks draw now.

usage: figures_match.py COMMITTED_DIR RENDERED_DIR
Runs with /usr/bin/python3 (Debian's numpy and matplotlib)."""
import os
import sys

import matplotlib.image as mpimg
import numpy as np

committed, rendered = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(committed) if f.endswith(".png"))
stale = []
for name in names:
    there = os.path.join(rendered, name)
    if not os.path.exists(there):
        stale.append(f"{name}: not rendered (notebooks/render_figures.sh draws none of that name)")
        continue
    a, b = mpimg.imread(os.path.join(committed, name)), mpimg.imread(there)
    if a.shape != b.shape:
        stale.append(f"{name}: {a.shape[1]}x{a.shape[0]} committed, {b.shape[1]}x{b.shape[0]} drawn now")
    elif not np.array_equal(a, b):
        stale.append(f"{name}: {np.count_nonzero(np.any(a != b, axis=-1))} pixels differ from what is drawn now")
for s in stale:
    print("stale figure:", s)
if stale:
    print("refresh them with: bash notebooks/render_figures.sh build/cli/april notebooks/figures")
    sys.exit(1)
print(f"{len(names)} figures match what the notebooks draw")
