# ptxbench's Triton launch probe (docs/triton.md, "What the timing means for a Triton candidate").
# Not a candidate: ours, trusted. The evaluator builds it and times it like a Triton candidate (the
# build pass, the shim in a sandboxed runner, the timing stage's per-call preparation and clock),
# on the same GPU, Python, torch and Triton, to measure what Triton's own launch path costs a call:
# the shim's call into Python, `run`, Triton's dispatch and its launcher. The kernel writes one
# element, so nearly all the host time a call takes beyond its device span is that path; the host
# bound does not charge it to Triton candidates (IntegrityPolicy::triton_launch_allowance_max_us).
import triton
import triton.language as tl


@triton.jit
def launch_probe_kernel(first_ptr, last_ptr):
    # One element: read from the first tensor (an input), written to the last one (an output).
    tl.store(last_ptr, tl.load(first_ptr))


def run(*tensors):
    # As a candidate's run is called: the definition's inputs then outputs, by position; one launch
    # on torch's current stream (the runner's).
    launch_probe_kernel[(1,)](tensors[0], tensors[-1])
