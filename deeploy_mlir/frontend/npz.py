"""Reading .npz files that may be hostile: no pickles, and every array's
header checked before its data is read."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from deeploy_mlir.errors import DeeployError

#: the largest array: a 32-bit target addresses 4 GiB
MAX_ARRAY_BYTES = (1 << 32) - 1


def read_npz(p: Path) -> dict[str, np.ndarray]:
    """Every array of a .npz file (no pickles), each checked from its header
    before it is read: no Python objects, at most 4 GiB (a compressed member
    can claim far more than the file's size), and nothing but arrays."""
    if not p.is_file():
        why = "not a regular file" if p.exists() else "no such file"
        raise DeeployError(f"{p}: {why}")
    try:
        z = np.load(p, allow_pickle=False)
    except Exception as e:
        raise DeeployError(f"{p}: not a .npz file ({type(e).__name__})") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise DeeployError(f"{p}: not a .npz file (one .npy array, not a zip of named arrays)")
    try:
        with z:
            for info in z.zip.infolist():
                _check_member(p, z.zip, info)
            return {k: np.array(z[k]) for k in z.files}
    except DeeployError:
        raise
    except Exception as e:
        raise DeeployError(f"{p}: not a .npz file ({type(e).__name__})") from None


def _check_member(p: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    if not info.filename.endswith(".npy"):
        raise DeeployError(f"{p}: member '{info.filename}' is not a .npy array")
    name = info.filename[:-4]
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        shape, _, dtype = np.lib.format._read_array_header(f, version)  # pyright: ignore
    if dtype.hasobject:
        raise DeeployError(f"{p}: array '{name}' holds Python objects")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if nbytes > MAX_ARRAY_BYTES:
        raise DeeployError(
            f"{p}: array '{name}' of shape {list(shape)} needs {nbytes} bytes: more than the "
            "4 GiB a 32-bit target addresses"
        )
