"""How the benchmarks launch DeepGEMM, without torch (tests/gpu/go_abi_test.ts runs this file's doctests).

DeepGEMM launches without programmatic dependent launch (PDL) unless `deep_gemm.set_pdl(True)` is called: its
runtime's flag defaults to false and each launch reads it (csrc/jit/device_runtime.hpp, csrc/jit/kernel_runtime.hpp
in its source). Our kernels launch with it. bench_torch.py and head_to_head.py time DeepGEMM both ways, each batch
wholly with one setting, so that the comparison holds ours to the faster.
"""


def dg_launch(dg, fn, pdl):
    """fn(*args) with DeepGEMM's PDL set to `pdl` for the launches it makes, then set back, also on an error.

    >>> class Dg:
    ...     def __init__(self): self.pdl, self.seen = False, []
    ...     def get_pdl(self): return self.pdl
    ...     def set_pdl(self, on): self.pdl = on
    >>> dg = Dg()
    >>> call = dg_launch(dg, lambda x: dg.seen.append((x, dg.pdl)), True)
    >>> call(1); dg.seen, dg.pdl
    ([(1, True)], False)
    >>> def boom(): raise RuntimeError("launch failed")
    >>> dg.pdl = True
    >>> dg_launch(dg, boom, False)()
    Traceback (most recent call last):
    RuntimeError: launch failed
    >>> dg.pdl
    True
    """
    def call(*args):
        before = dg.get_pdl()
        dg.set_pdl(pdl)
        try:
            return fn(*args)
        finally:
            dg.set_pdl(before)
    return call


def has_pdl_setting(dg):
    """Whether this deep_gemm can launch with PDL (set_pdl and get_pdl; older builds have neither).

    >>> has_pdl_setting(object())
    False
    """
    return hasattr(dg, "set_pdl") and hasattr(dg, "get_pdl")


def rotation(names, r):
    """The order of round r's sides: the list rotated by r, so that each side goes first in turn.

    >>> [rotation(["ours", "deepgemm", "deepgemm_pdl"], r) for r in range(3)]
    [['ours', 'deepgemm', 'deepgemm_pdl'], ['deepgemm', 'deepgemm_pdl', 'ours'], ['deepgemm_pdl', 'ours', 'deepgemm']]
    >>> rotation(["ours", "deepgemm"], 3)
    ['deepgemm', 'ours']
    """
    k = r % len(names)
    return list(names[k:]) + list(names[:k])


if __name__ == "__main__":
    import doctest
    import sys
    failed = doctest.testmod().failed
    print("deepgemm_launch: ok" if failed == 0 else f"deepgemm_launch: {failed} doctest failures")
    sys.exit(1 if failed else 0)
