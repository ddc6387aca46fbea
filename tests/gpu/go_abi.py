"""Our backends' C ABI (kernels/gemm_oracle.h) through ctypes, for Python drivers such as tests/gpu/head_to_head.py.

No torch here: a tensor is anything with data_ptr(), dim(), size(i) and stride(i) in elements (a torch tensor, or
the numpy adapter of tests/gpu/go_abi_check.py, which runs these calls on the CPU backend in CI). tests/gpu/
go_abi_test.ts pins the numbers and argument counts below to gemm_oracle.h.
"""

import ctypes

# kernels/gemm_oracle.h
GO_F32, GO_BF16, GO_E4M3, GO_I32 = 0, 1, 3, 6
GO_MODEL_SM90_1D2D = 1
KIND_MODE = {"dense": 0, "contiguous": 1, "masked": 2}  # go_ext_fast_prepare's mode (CUDA backend)
MK_ALIGNMENT = 128  # the contiguous layout's row alignment (DeepGEMM's default, which the benchmarks set)


# An operand set's tensors in order (a, sfa, b, sfb, d): name, element type ("e4m3", "f32", "bf16"), shape, element
# strides. A [rows, K] (masked [G, Mmax, K]) and B [N, K] ([G, N, K]) e4m3 K-major; A's scales MN-major [rows, K / 128]
# (masked [G, Mmax, K / 128]; rows and Mmax multiples of 4 here, so each column is 16-byte aligned: the layout our
# kernel loads by TMA and DeepGEMM's required one); B's [N / 128, K / 128] ([G, ...]) row-major; D bf16 [rows, N]. Mmax
# is m rounded up to 128 (a_rows); contiguous rows are G * m. tests/gpu/bench.cpp lays its sets out the same way.
def a_rows(kind, g, m):
    """A's rows as the GEMM call sees them: dense m, contiguous G * m, masked Mmax (m rounded up to 128) a batch."""
    return m if kind == "dense" else g * m if kind == "contiguous" else (m + 127) // 128 * 128


def set_layout(kind, g, m, n, k):
    kb, nb = (k + 127) // 128, (n + 127) // 128
    if kind == "masked":
        mmax = a_rows(kind, g, m)
        a = ("a", "e4m3", (g, mmax, k), (mmax * k, k, 1))
        sfa = ("sfa", "f32", (g, mmax, kb), (mmax * kb, 1, mmax))
        d = ("d", "bf16", (g, mmax, n), (mmax * n, n, 1))
    else:
        rows = a_rows(kind, g, m)
        a = ("a", "e4m3", (rows, k), (k, 1))
        sfa = ("sfa", "f32", (rows, kb), (1, rows))
        d = ("d", "bf16", (rows, n), (n, 1))
    if kind == "dense":
        b = ("b", "e4m3", (n, k), (k, 1))
        sfb = ("sfb", "f32", (nb, kb), (kb, 1))
    else:
        b = ("b", "e4m3", (g, n, k), (n * k, k, 1))
        sfb = ("sfb", "f32", (g, nb, kb), (nb * kb, kb, 1))
    return [a, sfa, b, sfb, d]


ELEMENT_BYTES = {"e4m3": 1, "f32": 4, "bf16": 2, "i32": 4}
GO_DTYPE = {"e4m3": GO_E4M3, "f32": GO_F32, "bf16": GO_BF16, "i32": GO_I32}


def extent_bytes(element, shape, strides):
    """Bytes from a view's first element to one past its last."""
    return (1 + sum((n - 1) * s for n, s in zip(shape, strides))) * ELEMENT_BYTES[element]


def index_values(kind, g, m):
    """The index tensor of a grouped set: contiguous, the group of each of the G * m rows; masked, masked_m = m."""
    if kind == "contiguous":
        return [i // m for i in range(g * m)]
    return [m] * g if kind == "masked" else None


class GoTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4)]


def go_tensor(t, dtype):
    """The C ABI's descriptor of a tensor view (element strides)."""
    g = GoTensor()
    g.data = t.data_ptr()
    g.dtype = dtype
    g.ndim = t.dim()
    for i in range(t.dim()):
        g.shape[i] = t.size(i)
        g.strides[i] = t.stride(i)
    return g


class Backend:
    """One backend library (libgo_cuda.so, or the CPU backend) through its C ABI."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        p, i32, i64 = ctypes.POINTER(GoTensor), ctypes.c_int32, ctypes.c_int64
        lib.go_last_error.restype = ctypes.c_char_p
        lib.go_alloc.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p)]
        lib.go_free.argtypes = [ctypes.c_void_p]
        lib.go_synchronize.argtypes = []
        lib.go_fp8_gemm.argtypes = [p, p, p, p, p, p, i32, i32, i32, i32, i32]
        lib.go_m_grouped_fp8_gemm_contiguous.argtypes = [p, p, p, p, p, p, i32, i32, i32, i32, i32, i32, i32]
        lib.go_m_grouped_fp8_gemm_masked.argtypes = [p, p, p, p, p, p, i32, i32, i32, i32, i32]
        self.prepare = getattr(lib, "go_ext_fast_prepare", None)
        if self.prepare is not None:
            self.prepare.argtypes = [i32, i64, i64, i64, i64]
        self.last_config_fn = getattr(lib, "go_ext_fast_last_config", None)
        if self.last_config_fn is not None:
            self.last_config_fn.argtypes = [ctypes.c_char_p, i64]
        self.lib = lib

    def error(self):
        return self.lib.go_last_error().decode(errors="replace")

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: status {status}: {self.error()}")

    def alloc(self, nbytes):
        ptr = ctypes.c_void_p()
        self.check(self.lib.go_alloc(max(1, nbytes), ctypes.byref(ptr)), f"go_alloc({nbytes})")
        return ptr.value

    def free(self, ptr):
        self.lib.go_free(ptr)

    def synchronize(self):
        self.check(self.lib.go_synchronize(), "go_synchronize")

    def last_config(self):
        """The fast kernel's configuration of the last call ("" where the library does not say)."""
        if self.last_config_fn is None:
            return ""
        buf = ctypes.create_string_buffer(512)
        return buf.value.decode() if self.last_config_fn(buf, 512) == 0 else f"? ({self.error()})"


def gemm_call(backend, kind, model=GO_MODEL_SM90_1D2D):
    """fn(desc) running one FP8 GEMM of `kind` on one set's descriptors [a, sfa, b, sfb, d(, index)]: 1 x 128 scales
    for A, 128 x 128 for B; contiguous: the classic layout (the group of each row), MK_ALIGNMENT; masked: masked_m."""
    lib, ref = backend.lib, ctypes.byref
    if kind == "dense":
        def fn(t):
            backend.check(lib.go_fp8_gemm(ref(t[0]), ref(t[1]), ref(t[2]), ref(t[3]), None, ref(t[4]), 1, 128, 128,
                                          128, model), "go_fp8_gemm")
    elif kind == "contiguous":
        def fn(t):
            backend.check(lib.go_m_grouped_fp8_gemm_contiguous(ref(t[0]), ref(t[1]), ref(t[2]), ref(t[3]), ref(t[4]),
                                                               ref(t[5]), 1, 128, 128, 128, 0, MK_ALIGNMENT, model),
                          "go_m_grouped_fp8_gemm_contiguous")
    elif kind == "masked":
        def fn(t):
            backend.check(lib.go_m_grouped_fp8_gemm_masked(ref(t[0]), ref(t[1]), ref(t[2]), ref(t[3]), ref(t[4]),
                                                           ref(t[5]), 1, 128, 128, 128, model),
                          "go_m_grouped_fp8_gemm_masked")
    else:
        raise ValueError(f"kind {kind!r}: dense, contiguous or masked")
    return fn
