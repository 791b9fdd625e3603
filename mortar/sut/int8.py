"""A local model's linear layers with int8 weights, for answering faster on a CPU.

Decoding a few lanes at a time is bound by reading the weights: every step reads each weight matrix once. With
int8 weights (one scale per output channel) a step reads a quarter of float32's bytes. The products run through
PyTorch's dynamic quantization kernel (``torch.ops.quantized.linear_dynamic``, FBGEMM on x86), which quantizes its
input with one range for the whole batch. That would make a lane's answer depend on what the other lanes hold, so
each row is first scaled to the range [-1, 1] and a calibration row holding -1 and 1 fixes the batch's range: every
row is then quantized alone (per token), products are summed in integers, and a row's result is the same in any
batch, alone or beside others. The rest of the model still sees float noise from padded attention, which int8
rounding can magnify: greedy answers in lanes are not always those of ``generate`` alone, and they are the int8
model's own answers (another fingerprint).

The output head gets an int8 copy of its own; the input embedding it is tied to stays float32.
"""

from __future__ import annotations

import logging
import warnings

import torch  # this module is imported only where a local model is loaded

log = logging.getLogger(__name__)

# FBGEMM accumulates 8-bit products in 16 bits on CPUs without VNNI: a 7-bit input range keeps that from overflowing
REDUCE_RANGE = True


def available() -> bool:
    """Whether this PyTorch has the dynamic int8 kernels (x86 builds and most Arm builds do)."""
    try:
        layer = Int8Linear(torch.nn.Linear(2, 2, bias=False))
        layer(torch.ones(1, 2))
    except (AttributeError, RuntimeError, NotImplementedError) as e:
        log.info("int8 linear kernels unavailable: %s", e)
        return False
    return True


def quantize(model) -> None:
    """Replace every linear layer of ``model``, and its output head, by an :class:`Int8Linear` in place."""
    head = model.get_output_embeddings()
    with torch.no_grad():
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if isinstance(child, torch.nn.Linear) or child is head:
                    setattr(parent, name, Int8Linear(child))


class Int8Linear(torch.nn.Module):
    """x·Wᵀ (+ b) with W in int8, one scale per output channel, each input row quantized on its own."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float()
        scales = (weight.abs().amax(dim=1) / 127).clamp_min(1e-12).double()
        with warnings.catch_warnings():  # quantized tensors are deprecated in favour of torchao; the kernel is not
            warnings.simplefilter("ignore", UserWarning)
            qweight = torch.quantize_per_channel(weight, scales, torch.zeros_like(scales, dtype=torch.long), 0,
                                                 torch.qint8)
        self._packed = torch.ops.quantized.linear_prepack(qweight, None)
        self.bias = None if linear.bias is None else linear.bias.detach().float().clone()
        calibration = torch.zeros(1, self.in_features)
        calibration[0, 0] = 1.0
        calibration[0, -1] = -1.0
        self._calibration = calibration

    def forward(self, x):
        rows = x.reshape(-1, self.in_features)
        peak = torch.linalg.vector_norm(rows, ord=float("inf"), dim=1, keepdim=True).clamp_min(1e-12)
        batch = torch.cat([rows / peak, self._calibration])
        out = torch.ops.quantized.linear_dynamic(batch, self._packed, REDUCE_RANGE)[:-1] * peak
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*x.shape[:-1], self.out_features)
