"""The one platform key that both sides of a Triton candidate give Triton (docs/triton.md, "The platform key").

Triton names the cache entries of its C modules (cuda_utils, the kernels' launchers) by
platform.architecture(sys.executable), which runs `file` on the interpreter: a venv's symlink in
the build pass (triton_build.py), the system's binary in the runner's embedded interpreter
(shim_driver.py). Both pin this key instead, so the runner finds what the build pass built.
"""

import importlib
import platform
import struct


def platform_key():
    """machine,system,<bits>bit,ELF: what Triton computes, without asking `file`."""
    return ",".join([platform.machine(), platform.system(), "%dbit" % (struct.calcsize("P") * 8), "ELF"])


def pin_platform_key():
    """Makes Triton's platform_key functions (where this Triton has them) return platform_key()."""
    key = platform_key()
    for name in ("triton.runtime.build", "triton.backends.nvidia.driver"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if callable(getattr(module, "platform_key", None)):
            module.platform_key = lambda: key
