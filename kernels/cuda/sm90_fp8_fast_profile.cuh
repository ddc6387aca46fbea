// Profiling switches of the fast SM90 FP8 GEMM (sm90_fp8_fast_kernel.cuh), compiled in only by the profiling build:
// a backend library built with -DGO_FAST_PROFILING accepts GO_CUDA_FAST_CFG dbg=N and writes GO_FAST_PROFILING and
// GO_FAST_DBG N into the kernels it JIT-compiles; a normal library refuses dbg=, and a normal kernel that saw
// GO_FAST_DBG would not compile. Bits 0 and 2 give wrong results, for timing only:
//   1  the math warps wait for each stage and release it without wgmma or promotion (times the feed alone);
//   4  no epilogue (nothing is stored; with the results dead the compiler drops the promotion and the wgmmas too:
//      Nsight Compute counts no tensor-pipe cycle at 4096 x 7168 x 16384, so it times the feed and the waits);
//   8  no griddepcontrol.wait: a launch may read its inputs before the kernel ahead of it wrote them
//      (tests/gpu/pdl_check.cu --expect-hazard shows that its check sees this);
//  64  a cycle trace of CTA 0 (go_fast_trace below; bench/trace_table.ts reads what the launcher prints);
// 128  its light form: rows 4 and 5, and rows 0-3 for the first 4 pipeline iterations only, no phase rows. The full
//      trace's per-iteration stores slow what they watch (a 64 x 16 kernel with ktma=4 and three sets: 16.4 us traced
//      against 10.0), so the light form is for where a tile's time goes (setup, first data, K loop, epilogue).
#pragma once

#if defined(GO_FAST_PROFILING)
#ifndef GO_FAST_DBG
#define GO_FAST_DBG 0
#endif
#elif defined(GO_FAST_DBG)
#error "GO_FAST_DBG needs the profiling build (GO_FAST_PROFILING): a normal kernel never carries profiling switches"
#else
#define GO_FAST_DBG 0
#endif

namespace go_sm90 {

enum FastProfile : int {
  kProfNoMath = 1,
  kProfNoEpilogue = 4,
  kProfNoDependencyWait = 8,
  kProfTrace = 64,
  kProfTileTrace = 128
};
/// The profiling switches this kernel was compiled with (0 in every normal build).
constexpr int kFastProfile = GO_FAST_DBG;
/// The pipeline iterations whose rows 0-3 the light trace (dbg bit 7 alone) records: the first ones.
constexpr int kFastLightTraceIterations = 4;
static_assert((kFastProfile & ~(kProfNoMath | kProfNoEpilogue | kProfNoDependencyWait | kProfTrace |
                                kProfTileTrace)) == 0,
              "dbg=N: bits 1, 4, 8, 64 and 128 only");

}  // namespace go_sm90

// dbg bit 6 (64): clock64 of the producer's thread 0 once a stage is free and once its loads are issued, and of the
// first math thread once a stage is full and once it released it, per pipeline iteration (rows 0-3 of go_fast_trace,
// iteration i in slot i mod 256: past 256 iterations the last 256), with the producer's start clock, the iteration
// count and the end in row 4; and, in row 5, the first math thread's clock at 4 points of each of its first 64 tiles
// (slot 4 t + e: e = 0 the tile's top, 1 once fast_tile and the accumulators' zeroing are done, 2 after its K loop,
// 3 after its epilogue); in rows 6 and 7, the first thread of math warpgroup 0 and 1 at 4 points of pipeline
// iterations 64 .. 95 (slot 4 (i - 64) + e: e = 0 wave 0's wgmmas issued, 1 their wait returned, 2 and 3 the same for
// wave 1; recorded by the K loop of one accumulator set, fast_mainloop_one_set), which shows whether the two
// warpgroups' wgmmas alternate on the tensor cores, and at 4 more (slot 128 + 4 (i - 64) + e: e = 0 and 1 wave 0's and
// wave 1's promotion done, 2 the stage's full barrier waited for, 3 the stage released), which split a K block's turn
// into its segments (bench/trace_table.ts's turn table). Every launch overwrites it; the launcher reads it after a
// module's 30th launch and prints it on stderr (print_fast_trace in sm90_fp8_fast.cu), so the kernel needs no printf,
// which would serialise its wgmmas (C7510). C linkage keeps the symbol's name unmangled, so cuModuleGetGlobal finds
// "go_fast_trace" (with C++ linkage it is _ZN7go_sm9013go_fast_traceE, which the H200 answered with CUresult 500, not
// found). dbg bit 7 (128) without bit 6 records rows 0-3 for iterations 0-3 only, rows 4 and 5 as above, and no phase
// rows.
#if GO_FAST_DBG & (64 | 128)
extern "C" {
__device__ long long go_fast_trace[8][256];
}
#define GO_FAST_TRACE(ev, i)                                           \
  do {                                                                 \
    if (blockIdx.x == 0 && (threadIdx.x == 0 || threadIdx.x == 128) && \
        ((GO_FAST_DBG & 64) || (i) < kFastLightTraceIterations))       \
      go_fast_trace[ev][(i) & 255] = clock64();                        \
  } while (0)
// Row 4, by thread t of CTA 0: the producer's start clock (slot 0), the math's iteration count and end (slots 1, 2),
// how many units the first math thread walked (slot 3), and the prologue (slots 8-15, a `prologue` line: thread 0 at
// the kernel's top, once the barriers are set up, once the dependency was waited for, after setmaxnreg, once the
// producer computed its first tile; the first math thread at the kernel's top, after setmaxnreg, once FastMath is
// built) and its finer steps (slots 16-25, a `prologue2` line: thread 0 once the maps are prefetched, the barriers
// initialised and fenced; the first math thread at the barrier after them; warp 1's first thread and warp 11's last
// at the kernel's top; the producer's entry; its first tile computed again after its loop, before and after), and the
// first math thread's epilogue steps (slots 26-30, an `epilogue` line, each tile overwriting them, so the last tile's:
// fast_epilogue's entry, its warpgroup gathered at the named barrier, the chunk staged, fenced and gathered again, the
// TMA stores issued; slot 2, the math's end, is when its stores have drained).
#define GO_FAST_TRACE_AT(t, slot, value)                                         \
  do {                                                                           \
    if (blockIdx.x == 0 && threadIdx.x == (t)) go_fast_trace[4][slot] = (value); \
  } while (0)
// Every record reads its clock, then loads the buffer's address from the constant bank (LDC c[0x4][0x0]) and stores
// (the SASS of a dbg=128 kernel at 128 x 32): a warp's first such load, a constant-cache miss, fell inside the interval
// its record opened. At the kernel's top every thread of CTA 0 makes one store first (row 4, slot 255, never read),
// which waits for that load, so that no interval carries it (tests/kernels/sass_layout_test.ts pins the order).
#define GO_FAST_TRACE_WARM()                             \
  do {                                                   \
    if (blockIdx.x == 0) go_fast_trace[4][255] = 0;      \
  } while (0)
// Row 5: event e of the math thread's tile t (t counted from 0 by the thread, the first 64 kept).
#define GO_FAST_TILE_TRACE(t, e)                                                                     \
  do {                                                                                               \
    if (blockIdx.x == 0 && threadIdx.x == 128 && (t) < 64) go_fast_trace[5][4 * (t) + (e)] = clock64(); \
  } while (0)
#else
#define GO_FAST_TRACE_WARM() \
  do {                       \
  } while (0)
#define GO_FAST_TRACE(ev, i) \
  do {                       \
  } while (0)
#define GO_FAST_TRACE_AT(t, slot, value) \
  do {                                   \
  } while (0)
#define GO_FAST_TILE_TRACE(t, e) \
  do {                           \
  } while (0)
#endif
#if GO_FAST_DBG & 64
// Rows 6 and 7: event e of pipeline iteration i in math warpgroup w's first thread, for i in [64, 96).
#define GO_FAST_PHASE_TRACE(w, i, e)                                                    \
  do {                                                                                  \
    if (blockIdx.x == 0 && threadIdx.x % 128 == 0 && (i) >= 64 && (i) < 96)             \
      go_fast_trace[6 + (w)][4 * ((i) - 64) + (e)] = clock64();                         \
  } while (0)
#else
#define GO_FAST_PHASE_TRACE(w, i, e) \
  do {                               \
  } while (0)
#endif
// Rows 6 and 7, slots 128 + 4 (i - 64) + e for the same iterations and threads: e = 0 and 1 wave 0's and wave 1's
// promotion done, 2 the stage's full barrier waited for, 3 the stage released.
#define GO_FAST_PHASE_TRACE2(w, i, e) GO_FAST_PHASE_TRACE(w, i, 128 + (e))
