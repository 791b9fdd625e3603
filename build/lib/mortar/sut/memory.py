"""Memory that a local model hands back as soon as it no longer needs it.

Keys and values live in anonymous mappings of their own: a page takes memory only once written, and a mapping
dropped is returned to the system at once (freed heap blocks would stay with the process). Pages can also be
handed back while the mapping stays: those of a weights file once their packed copy exists, and the slots of a
lane whose conversation got shorter.
"""

from __future__ import annotations

import ctypes
import functools
import math
import mmap
import sys

MADV_DONTNEED = 4


def zeros(shape: tuple[int, ...], dtype):
    """A zero tensor in an anonymous memory mapping of its own (zeros, not garbage: masked slots still enter the
    attention product, and NaN survives any mask)."""
    import torch

    size = math.prod(shape) * torch.finfo(dtype).bits // 8
    # private: a page never written reads as the kernel's one zero page (a shared mapping would allocate it)
    private = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if hasattr(mmap, "MAP_PRIVATE") else {}
    return torch.frombuffer(mmap.mmap(-1, size, **private), dtype=dtype).view(shape)


def drop_pages(start: int, end: int) -> None:
    """Hand back the whole pages between two addresses of a private mapping; reading them again gives zeros
    (anonymous memory) or the file's bytes (a file mapping). Anywhere but Linux this does nothing."""
    start, end = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE, end // mmap.PAGESIZE * mmap.PAGESIZE
    if end > start and _libc() is not None:
        _libc().madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_DONTNEED)


def drop_tail(rows, keep: int) -> None:
    """Hand back the slots past the first ``keep`` of each (heads, slots, dim) row of a buffer's lane."""
    for head in rows:
        drop_pages(head[keep:].data_ptr(), head.data_ptr() + head.nbytes)


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
