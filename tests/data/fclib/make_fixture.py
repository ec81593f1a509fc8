"""Writes slope_libhdf5.hdf5: an FCLIB global problem written by libhdf5 (through h5py), in the
forms signorini does not write itself: triplet storage (nz >= 0) for M and H, scalar 32-bit
integers and strings as H5LT writes them, no /fclib_global/M/block_sizes (so the reader must find
M's 6-DOF blocks), a stored solution and one guess.

The data come from `signorini fclib export --case slope --step 50 IN.hdf5` (a box resting on a
10-degree slope, 4 corner contacts). Not run by CI; rerun by hand with h5py installed:
    python3 make_fixture.py IN.hdf5
"""
import sys
import h5py
import numpy as np

src = h5py.File(sys.argv[1], "r")
out = h5py.File("slope_libhdf5.hdf5", "w")


def triplet(name, g):
    m, n = int(g["m"][0]), int(g["n"][0])
    p, i, x = g["p"][:], g["i"][:], g["x"][:]
    cols = np.repeat(np.arange(n), np.diff(p))
    d = out.create_group(name)
    for k, v in [("nzmax", len(x)), ("m", m), ("n", n), ("nz", len(x))]:
        d.create_dataset(k, data=np.array([v], dtype=np.int32))
    d.create_dataset("p", data=cols.astype(np.int32))  # triplet: p holds column indices
    d.create_dataset("i", data=i.astype(np.int32))
    d.create_dataset("x", data=x)


out.create_dataset("fclib_global/spacedim", data=np.array([3], dtype=np.int32))
triplet("fclib_global/M", src["fclib_global/M"])
triplet("fclib_global/H", src["fclib_global/H"])
for k in ["f", "w", "mu"]:
    out.create_dataset("fclib_global/vectors/" + k, data=src["fclib_global/vectors/" + k][:])
out.create_dataset("fclib_global/info/title", data=np.bytes_("slope step 50, written by libhdf5"))
for k in ["v", "u", "r"]:
    out.create_dataset("solution/" + k, data=src["solution/" + k][:])
out.create_dataset("guesses/number_of_guesses", data=np.array([1], dtype=np.int32))
out.create_dataset("guesses/1/r", data=np.zeros_like(src["solution/r"][:]))
out.close()
