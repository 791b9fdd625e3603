"""A local model's linear layers with their weights laid out once for the CPU's matrix kernels, for answering.

Batched decoding multiplies a handful of rows (one token per lane) by every weight matrix. MKL's sgemm copies
the weight into its own blocked layout on every such call, and for a few rows that copy costs as much as the
product itself. oneDNN takes a weight reordered into its layout once (the reorder PyTorch's compiler uses for
CPU linear layers) and multiplies a few rows about twice as fast; a whole prompt of rows runs as fast as before.
The output head stays a plain matrix (its weight is the input embedding), multiplied as W·xᵀ, which MKL runs
without the copy.

Packed weights hold no gradient: white-box guidance (GRI's gradients, WALI's attention) reads the model as
loaded, unpacked (``load_model(..., packed=False)``).
"""

from __future__ import annotations

import functools
import logging
import sys

import torch  # this module is imported only where a local model is loaded

from mortar.sut.memory import drop_pages

log = logging.getLogger(__name__)

ROWS_HINT = 8  # the rows oneDNN lays the weights out for: a decoding batch


@functools.cache
def available() -> bool:
    """Whether this PyTorch has oneDNN's linear kernels (x86 and most ARM builds do)."""
    try:
        weight = torch.ops.mkldnn._reorder_linear_weight(torch.ones(2, 2), ROWS_HINT)
        out = torch.ops.mkldnn._linear_pointwise(torch.ones(1, 2), weight, None, "none", [], "")
    except (AttributeError, RuntimeError, NotImplementedError) as e:
        log.info("oneDNN linear kernels unavailable (%s): the model's linear layers stay as loaded", e)
        return False
    return bool(torch.allclose(out, torch.full((1, 2), 2.0)))


def pack(model) -> bool:
    """Replace every linear layer of ``model`` in place by its packed form; True when they were packed.

    Every other weight (the embedding tied to the output head, the norms) is copied out of the weights file, so
    that no tensor keeps the file mapped and the packed copies replace the loaded weights in memory instead of
    adding to them.
    """
    if not available():
        return False
    head = model.get_output_embeddings()
    embeddings = model.get_input_embeddings()
    files = _file_mappings()
    with torch.no_grad():
        tied = head is not None and head.weight is embeddings.weight
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if child is head:
                    setattr(parent, name, RowsHead(embeddings.weight if tied else child.weight, child.bias))
                elif isinstance(child, torch.nn.Linear):
                    setattr(parent, name, PackedLinear(child))
                    _drop_file_pages(child.weight, files)
        for parameter in model.parameters():  # the norms and the embedding (the head's weight too, when tied)
            parameter.data = parameter.data.clone()
    return True


def _drop_file_pages(weight, files: list[tuple[int, int]]) -> None:
    """Hand back the pages of a weights-file mapping that ``weight`` (about to be dropped) was read from.

    The file stays mapped until its last tensor goes, so without this the file's pages and their packed copies
    would both be resident while the model is packed. Only pages wholly inside a file mapping are dropped (a later
    read would fetch them from the file again).
    """
    start, end = weight.data_ptr(), weight.data_ptr() + weight.nbytes
    if any(low <= start and end <= high for low, high in files):
        drop_pages(start, end)


def _file_mappings() -> list[tuple[int, int]]:
    """Address ranges of this process's private mappings of weights files (none known outside Linux)."""
    ranges = []
    if not sys.platform.startswith("linux"):
        return ranges
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[1].startswith("r") and fields[5].endswith((".safetensors", ".bin")):
                low, high = fields[0].split("-")
                ranges.append((int(low, 16), int(high, 16)))
    return ranges


class PackedLinear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.register_buffer("weight", torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), ROWS_HINT))
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().clone())

    def forward(self, x):
        return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")


class RowsHead(torch.nn.Module):
    """x·Wᵀ computed as (W·xᵀ)ᵀ: with a few rows of x, MKL multiplies this way without copying W first."""

    def __init__(self, weight, bias):
        super().__init__()
        self.weight, self.bias = weight, bias

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        out = (self.weight @ rows.T).T
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*x.shape[:-1], self.weight.shape[0])
