"""Kiln and PyTorch in one process through DLPack (examples/dlpack_torch).

    python3 examples/dlpack_torch/kiln_torch.py build/lib/libkiln_torch.so

Hands a PyTorch tensor (CUDA when there is a GPU) to a Kiln-compiled
function and its result back, without copies; checks the values against
PyTorch's own tanh-GELU, that no copy was made on the way in, and that the
compiled path ran. Exits nonzero on a mismatch."""
import ctypes
import os
import sys

import torch
import torch.utils.dlpack

lib = ctypes.CDLL(sys.argv[1])
lib.kiln_torch_gelu.restype = ctypes.c_void_p
lib.kiln_torch_gelu.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.kiln_torch_compiled_calls.restype = ctypes.c_ulonglong

api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def kiln_gelu(t):
    cap = torch.utils.dlpack.to_dlpack(t)
    ptr = api.PyCapsule_GetPointer(cap, b"dltensor")
    api.PyCapsule_SetName(cap, b"used_dltensor")  # Kiln owns it now
    stream = torch.cuda.current_stream().cuda_stream if t.is_cuda else 0
    out = lib.kiln_torch_gelu(ptr, ctypes.c_void_p(stream))
    if not out:
        raise RuntimeError("kiln_torch_gelu failed")
    return torch.utils.dlpack.from_dlpack(api.PyCapsule_New(out, b"dltensor", None))


device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(1 << 20, device=device)
before = lib.kiln_torch_compiled_calls()
y = kiln_gelu(x)
ref = torch.nn.functional.gelu(x, approximate="tanh")
err = (y - ref).abs().max().item()
calls = lib.kiln_torch_compiled_calls() - before
print(f"kiln_torch: {device} {x.numel()} floats, max|kiln - torch| = {err:.2e}, "
      f"compiled calls {calls}, result on {y.device}")
# With every guard made to fail (KILN_FORCE_GUARD_FAILURE=1, the forced
# GPU run) the original body runs instead: same values, no compiled call.
forced = os.environ.get("KILN_FORCE_GUARD_FAILURE", "0") not in ("", "0")
ok = err < 1e-5 and calls == (0 if forced else 1) and y.device == x.device
print("kiln_torch: OK" if ok else "kiln_torch: FAILED")
sys.exit(0 if ok else 1)
