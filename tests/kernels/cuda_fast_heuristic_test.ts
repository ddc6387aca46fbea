// The fast SM90 FP8 GEMM's heuristic (kernels/cuda/sm90_fp8_fast.cu, choose_fast_config) picks the configurations
// that the H200 sweeps in bench/RESULTS.md found fastest, and GO_CUDA_FAST_CFG overrides are applied or refused with
// a reason. go_ext_fast_choose runs the heuristic alone (no GPU, no compile), so this runs wherever the CUDA backend
// builds (CI: nvcc, no GPU). The bits never depend on the choice: tests/gpu/run.sh checks every family on an H200.
import assert from "node:assert/strict";
import { hasNvcc } from "./_nvcc.ts";
import { cString, openCudaExt } from "./_cuda_ext.ts";
import { DEFAULT_KS } from "../../bench/k_sweep.ts";

const GO_ERR_INVALID_ARGUMENT = 1;
const H200_SMS = 132;
const enum Mode {
  Dense = 0,
  Contiguous = 1,
  Masked = 2,
  Psum = 3,
}

Deno.test({
  name: "fast FP8 GEMM heuristic",
  ignore: !(await hasNvcc()),
  async fn(t) {
    const { lib, lastError } = await openCudaExt({
      go_ext_fast_choose: {
        parameters: ["i32", "i64", "i64", "i64", "i64", "i32", "i32", "buffer", "buffer", "i64"],
        result: "i32",
      },
    });
    /** The configuration string, or the error (status and message). */
    const choose = (
      mode: Mode,
      m: number,
      n: number,
      k: number,
      g = 1,
      o: { override?: string; tiles256?: boolean } = {},
    ) => {
      const buf = new Uint8Array(512);
      const ov = o.override === undefined ? null : new TextEncoder().encode(o.override + "\0");
      const status = lib.symbols.go_ext_fast_choose(
        mode,
        BigInt(m),
        BigInt(n),
        BigInt(k),
        BigInt(g),
        H200_SMS,
        o.tiles256 ? 1 : 0,
        ov,
        buf,
        512n,
      );
      return { status, config: cString(buf), message: lastError(status) };
    };
    const config = (mode: Mode, m: number, n: number, k: number, g = 1, o = {}) => {
      const r = choose(mode, m, n, k, g, o);
      assert.equal(r.status, 0, r.message);
      return r.config;
    };
    try {
      await t.step("large dense shapes that save waves take BLOCK_M 256 with one accumulator set", () => {
        // 4096 x 7168: 1792 tiles of 128 x 128 (14 waves) against 896 of 256 x 128 (7 waves; 7 x 7/4 < 14).
        assert.match(
          config(Mode.Dense, 4096, 7168, 16384),
          /^bm=256 bn=128 stages=4 multicast=2 acc=single sfa=tma jit=shape$/,
        );
        assert.match(config(Mode.Dense, 4096, 4096, 7168), /^bm=256 bn=128 /);
      });
      await t.step(
        "BLOCK_M 256 takes the BLOCK_N whose waves cost least, or is not taken where they do not pay",
        () => {
          // 4096 x 576: one wave of 128 x 144 (128 tiles, cost 107) against one of 256 x 80 (128 tiles, cost 133).
          assert.match(config(Mode.Dense, 4096, 576, 7168), /^bm=128 bn=144 stages=5 multicast=1 acc=single /);
          // 4096 x 7168: 128 x 144 saves one of 128 x 128's 14 waves (not a quarter), so it is not a candidate; 7
          // waves of 256 x 128 (7 x 181) beat 14 of 128 x 128 (14 x 181 x 4 / 7).
          assert.match(config(Mode.Dense, 4096, 7168, 2048), /^bm=256 bn=128 /);
          // 6 x 1024 x 7168 masked: 11 waves of 256 x 128 against 12 of 256 x 112, within the 3 % margin; masked
          // tiles take no multicast (dense ones do).
          assert.match(config(Mode.Masked, 1024, 7168, 3072, 6), /^bm=256 bn=128 stages=3 multicast=1 /);
          // Masked Mmax 128: 256-row tiles would be half empty; 2 waves of 128 x 144 stay.
          assert.match(config(Mode.Masked, 128, 6144, 7168, 6), /^bm=128 bn=144 stages=5 multicast=1 acc=single /);
        },
      );
      await t.step("128 x 144 where BLOCK_M 256 beat 128 x 144's waves only at BLOCK_N 80 or 112 (cost 107)", () => {
        // The eight shapes timed against their old choice forced (docs/performance-history.md, "Issue 26, twelfth
        // round"): six that ran 256 x 80 (+22.0 %) and two that ran 256 x 112 (+4.9 %).
        const moved: [number, number, number, number][] = [
          [1024, 2112, 7168, 80],
          [1536, 1536, 7168, 80],
          [2048, 1152, 7168, 80],
          [8192, 576, 7168, 80],
          [768, 6144, 2048, 80],
          [2048, 2112, 2048, 80],
          [3072, 2304, 7168, 112],
          [6144, 1152, 7168, 112],
        ];
        for (const [m, n, k, old] of moved) {
          assert.match(
            config(Mode.Dense, m, n, k),
            /^bm=128 bn=144 stages=5 multicast=1 acc=single /,
            `${m}x${n}x${k}`,
          );
          // The old choice, still reachable by name, is what the timing forced.
          assert.match(
            config(Mode.Dense, m, n, k, 1, { override: `bm=256,bn=${old}` }),
            new RegExp(`^bm=256 bn=${old} `),
            `${m}x${n}x${k}`,
          );
        }
      });
      await t.step("BLOCK_M 256 multicasts A only where the N blocks pair up in clusters of 2", () => {
        // 4096 x 4224: 33 N blocks of 128; pairs would run a 34th tile per M block past N (5 waves, not 4).
        assert.match(config(Mode.Dense, 4096, 4224, 32768), /^bm=256 bn=128 stages=3 multicast=1 acc=single /);
        assert.match(config(Mode.Dense, 4096, 4224, 4096), /^bm=256 bn=128 stages=3 multicast=1 /);
        // 4096 x 4096: 32 N blocks, 16 pairs.
        assert.match(config(Mode.Dense, 4096, 4096, 32768), /^bm=256 bn=128 stages=4 multicast=2 /);
        // 4096 x 576 named at BLOCK_N 80: 8 N blocks (the last 16 columns wide) pair up.
        assert.match(
          config(Mode.Dense, 4096, 576, 7168, 1, { override: "bm=256,bn=80" }),
          /^bm=256 bn=80 stages=4 multicast=2 /,
        );
        // A named mc=2 still runs an odd count (the peer's tile past N stores nothing).
        assert.match(
          config(Mode.Dense, 4096, 4224, 4096, 1, { override: "mc=2" }),
          /^bm=256 bn=128 stages=4 multicast=2 /,
        );
      });
      await t.step("a dense GEMM takes 128 x 192 where its waves cost 3 % less than BLOCK_M 256's", () => {
        // 4096 x 2112: 3 waves of 128 x 192 (cost 3 x 134) against 3 of 256 x 96 (3 x 149), which beat 5 of 128 x 128
        // (5 x 181 x 4 / 7) and 3 of 256 x 128. One accumulator set, no multicast.
        assert.match(
          config(Mode.Dense, 4096, 2112, 7168),
          /^bm=128 bn=192 stages=4 multicast=1 acc=single sfa=tma jit=shape$/,
        );
        // 4096 x 24576: 32 waves of 128 x 192 (4096 tiles) against 24 of 256 x 128: 1.3 % less, under the margin.
        assert.match(config(Mode.Dense, 4096, 24576, 1536), /^bm=256 bn=128 /);
        // Grouped GEMMs keep BLOCK_M 256 (128 x 192 measured only dense).
        assert.match(config(Mode.Masked, 1024, 2112, 7168, 6), /^bm=256 bn=96 /);
      });
      await t.step("BLOCK_M 128 narrows BLOCK_N 128 to 112 or 96 where that needs no more waves", () => {
        // 128 x 24576: 192 tiles of 128 columns, 256 of 96: two waves each.
        assert.match(config(Mode.Dense, 128, 24576, 1536), /^bm=128 bn=96 stages=7 multicast=1 acc=double /);
        assert.match(config(Mode.Dense, 64, 24576, 1536), /^bm=64 bn=96 /);
        // 128 x 32768: 256 tiles (2 waves) against 342 of 96 and 293 of 112 (3 waves).
        assert.match(config(Mode.Dense, 128, 32768, 512), /^bm=128 bn=128 /);
        assert.match(config(Mode.Masked, 128, 7168, 3072, 6), /^bm=128 bn=112 /, "336 and 384 tiles: 3 waves");
      });
      await t.step(
        "M <= 64 takes BLOCK_M 64 with 12 stages; M = 128 keeps 128 x 64 tiles; both take BLOCK_N 32 or 16 for few tiles",
        () => {
          assert.match(config(Mode.Dense, 64, 7168, 8192), /^bm=64 bn=64 stages=12 multicast=1 acc=double /);
          assert.match(config(Mode.Dense, 1, 768, 512), /^bm=64 /);
          // 112 tiles of 64 x 64 against 128 of 64 x 56, from 96 K blocks on; not at M = 128 nor where 56 needs a
          // second wave (64 x 8448: 151 tiles).
          assert.match(
            config(Mode.Dense, 64, 7168, 16384),
            /^bm=64 bn=56 stages=13 multicast=1 acc=double .* spread=1$/,
          );
          assert.match(config(Mode.Dense, 64, 7168, 12288), /^bm=64 bn=56 /);
          assert.match(config(Mode.Dense, 64, 7168, 12160), /^bm=64 bn=64 /, "95 K blocks");
          assert.match(config(Mode.Dense, 64, 8448, 16384), /^bm=64 bn=64 /);
          assert.match(config(Mode.Dense, 65, 7168, 16384), /^bm=128 bn=64 /);
          // 112 tiles of 128 x 64, with boxes two K blocks deep where there are at least 64 K blocks.
          assert.match(config(Mode.Dense, 128, 7168, 16384), /^bm=128 bn=64 stages=\d+ .* spread=1 ktma=2$/);
          assert.match(config(Mode.Dense, 128, 7168, 2048), /^bm=128 bn=64 .* spread=1$/, "16 K blocks: ktma=1");
          // 64 tiles of 64 columns: 128 of 32, one wave; 33: 132 of 16, which become 132 of 64 x 32 (two row blocks),
          // and 128 x 576's 36 of 128 x 16 become 72 of 64 x 16; 128 x 4096 keeps 128 x 32 (64 x 32: two waves).
          assert.match(config(Mode.Dense, 128, 4096, 7168), /^bm=128 bn=32 /);
          assert.match(config(Mode.Dense, 128, 2112, 7168), /^bm=64 bn=32 .* spread=1 ktma=2$/);
          assert.match(config(Mode.Dense, 128, 576, 7168), /^bm=64 bn=16 .* acc=triple .* ktma=4$/);
          assert.match(config(Mode.Dense, 100, 2112, 7168), /^bm=64 bn=32 /, "M = 100: two row blocks of 64");
          assert.match(config(Mode.Dense, 128, 2112, 7168, 1, { override: "bm=128" }), /^bm=128 bn=32 /);
          assert.match(config(Mode.Dense, 64, 4096, 7168), /^bm=64 bn=32 stages=16 /, "BLOCK_M 64 alike");
          assert.match(config(Mode.Dense, 64, 2112, 7168), /^bm=64 bn=16 stages=20 /, "20 stages with ktma=4");
          assert.match(config(Mode.Dense, 64, 7168, 7168), /^bm=64 bn=64 /, "112 tiles of 64 columns");
          assert.match(config(Mode.Dense, 256, 4096, 7168), /^bm=128 bn=64 /, "two 128-row blocks keep 64");
          assert.match(config(Mode.Masked, 128, 512, 7168, 1), /^bm=128 bn=64 /, "dense only");
          assert.match(config(Mode.Masked, 20, 4096, 7168, 32), /^bm=64 /, "masked with Mmax <= 64");
          assert.match(config(Mode.Masked, 128, 6144, 7168, 32), /^bm=128 bn=128 /, "masked with Mmax 128 keeps 128");
        },
      );
      await t.step(
        "dense GEMMs whose tiles fill at most a third of the SMs split K, if the workspace stays in L2",
        () => {
          // 256 x 576 x 2048: 18 tiles of 128 x 64, 16 K blocks: 4 splits (132 / 18, 16 / 4), workspace
          // 16 x 256 x 576 x 4 = 9.4 MB. One row block would take 16-wide tiles instead (below).
          assert.match(config(Mode.Dense, 256, 576, 2048), /^bm=128 bn=64 .* split=4$/);
          assert.doesNotMatch(config(Mode.Dense, 256, 576, 7168), /split/, "18 tiles, but a 33 MB workspace");
          // 64 x 576 x 7168: 9 tiles of 64 x 64 would split 14 ways (8 MB); 36 tiles of 16 columns, unsplit, with
          // deep TMA boxes, beat them (H200: 34.6 against 54.1 TFLOPS). So does 64 x 2112 x 2048.
          assert.match(config(Mode.Dense, 64, 576, 7168), /^bm=64 bn=16 .* jit=shape spread=1 ktma=4$/);
          assert.match(config(Mode.Dense, 64, 576, 7168, 1, { override: "bn=64" }), /^bm=64 bn=64 .* split=14$/);
          assert.match(config(Mode.Dense, 64, 2112, 2048), /^bm=64 bn=16 .* spread=1 ktma=4$/);
          // 128 x 576: 72 tiles of 64 x 16 run unsplit (36 of 128 x 16 beat 18 of 128 x 32 split 7 ways, 16.5 MB).
          assert.match(config(Mode.Dense, 128, 576, 7168), /^bm=64 bn=16 .* jit=shape spread=1 ktma=4$/);
          assert.match(config(Mode.Dense, 128, 576, 7168, 1, { override: "bn=32" }), /^bm=64 bn=32 .* ktma=2$/);
          assert.match(
            config(Mode.Dense, 128, 576, 7168, 1, { override: "bn=32,ktma=1" }),
            /^bm=64 bn=32 .* spread=1 split=3$/, // 36 tiles of 64 x 32
          );
          assert.doesNotMatch(config(Mode.Dense, 128, 2112, 7168), /split/, "a 60 MB workspace would not stay in L2");
          assert.doesNotMatch(config(Mode.Dense, 64, 4096, 7168), /split/, "64 tiles fill half the SMs");
          assert.doesNotMatch(config(Mode.Dense, 64, 576, 896), /split/, "7 K blocks");
          assert.doesNotMatch(config(Mode.Masked, 20, 576, 7168, 2), /split/, "grouped calls do not split");
          assert.match(
            config(Mode.Dense, 64, 576, 384, 1, { override: "split=8" }),
            / split=3$/,
            "one split per K block",
          );
          assert.doesNotMatch(config(Mode.Dense, 64, 576, 7168, 1, { override: "split=1" }), /split/);
          // tests/gpu/check.cpp's dense cases that the heuristic splits (so its runs, and compute-sanitizer's --small
          // run, cover split K without an override): 257 x 384 x 1152, and 256 x 576 x 2048 (split=4 above, not in
          // --small). Its one-row-block cases take unsplit tiles of 16 columns (7 x 256 x 1152, 64 x 256 x 7168 and
          // 128 x 512).
          assert.match(config(Mode.Dense, 257, 384, 1152), / split=2$/);
          assert.match(config(Mode.Dense, 7, 256, 1152), /^bm=64 bn=16 .* jit=shape spread=1$/, "9 K blocks: ktma=1");
          assert.match(config(Mode.Dense, 64, 256, 7168), /^bm=64 bn=16 .* jit=shape spread=1 ktma=4$/);
          assert.match(config(Mode.Dense, 128, 512, 2048), /^bm=64 bn=16 .* jit=shape spread=1 ktma=4$/);
          // tests/gpu/pdl_check.cu's dense case runs unsplit (a split-K kernel waits at the top, so it would not test
          // the late wait); its earlier 256 x 512 x 1024 split 2 ways.
          assert.doesNotMatch(config(Mode.Dense, 256, 4096, 1024), /split/, "pdl_check's dense case");
          assert.match(config(Mode.Dense, 256, 512, 1024), / split=2$/);
        },
      );
      await t.step("contiguous layouts take BLOCK_M 256 only when their groups fit 256-row tiles", () => {
        assert.match(config(Mode.Contiguous, 32768, 6144, 7168, 4), /^bm=128 bn=128 /);
        assert.match(config(Mode.Contiguous, 32768, 6144, 7168, 4, { tiles256: true }), /^bm=256 bn=128 /);
        assert.match(config(Mode.Psum, 32768, 6144, 7168, 4, { tiles256: true }), /^bm=256 /);
        assert.match(config(Mode.Masked, 1024, 6144, 7168, 6), /^bm=256 /, "masked needs no alignment check");
      });
      await t.step("overrides set the fields they name and keep the heuristic's others", () => {
        assert.match(
          config(Mode.Dense, 4096, 7168, 16384, 1, { override: "mc=2,shape=0" }),
          /^bm=256 bn=128 stages=4 multicast=2 acc=single .* jit=generic$/,
        );
        assert.match(config(Mode.Dense, 4096, 7168, 16384, 1, { override: "sfa=copy" }), / sfa=copy jit=shape$/);
        assert.match(config(Mode.Dense, 64, 7168, 8192, 1, { override: "bm=128" }), /^bm=128 bn=64 stages=8 /);
      });
      await t.step(
        "256 x 128 takes a fourth stage with multicast from 24 K blocks, else the 3 beside a buffer a wave",
        () => {
          // 4 stages stage the epilogue by box (FastSmem::by_box); 3 fit beside one staging buffer per warpgroup and wave.
          assert.match(config(Mode.Dense, 4096, 7168, 3072), /^bm=256 bn=128 stages=4 multicast=2 /);
          assert.match(config(Mode.Dense, 4096, 7168, 2944), /^bm=256 bn=128 stages=3 multicast=2 /, "23 K blocks");
          assert.match(config(Mode.Dense, 4096, 7168, 2048), /^bm=256 bn=128 stages=3 /);
          assert.match(config(Mode.Dense, 4096, 4224, 32768), /^bm=256 bn=128 stages=3 multicast=1 /, "no multicast");
          assert.match(config(Mode.Masked, 1024, 7168, 7168, 6), /^bm=256 bn=128 stages=3 multicast=1 /, "masked");
          assert.match(
            config(Mode.Contiguous, 32768, 7168, 3072, 8, { tiles256: true }),
            /^bm=256 bn=128 stages=4 multicast=2 /,
          );
          assert.match(config(Mode.Dense, 64, 7168, 8192), /^bm=64 bn=64 stages=12 /);
        },
      );
      await t.step(
        "a named fourth stage of 256 x 128 stages the epilogue by box; other stage counts by box are refused",
        () => {
          // FastSmem::by_box: measured at 4 stages of 256 x 128 only; named where the heuristic keeps 3.
          assert.match(
            config(Mode.Dense, 4096, 7168, 2048, 1, { override: "stages=4" }),
            /^bm=256 bn=128 stages=4 multicast=2 acc=single sfa=tma jit=shape$/,
          );
          const bn80 = { override: "bm=256,bn=80" };
          assert.match(
            config(Mode.Dense, 4096, 576, 7168, 1, bn80),
            /^bm=256 bn=80 stages=4 /,
            "4 fit a buffer a wave",
          );
          const five = choose(Mode.Dense, 4096, 576, 7168, 1, { override: "bm=256,bn=80,stages=5" });
          assert.equal(five.status, GO_ERR_INVALID_ARGUMENT);
          assert.match(five.message, /5 stages of BLOCK_M 256 x BLOCK_N 80 stage the epilogue by box, measured at 4 /);
          const bn112 = choose(Mode.Dense, 4096, 7168, 16384, 1, { override: "bm=256,bn=112,stages=4" });
          assert.equal(bn112.status, GO_ERR_INVALID_ARGUMENT);
          assert.match(bn112.message, /4 stages of BLOCK_M 256 x BLOCK_N 112 stage the epilogue by box/);
        },
      );
      await t.step("BLOCK_M 256 and BLOCK_N past 128 exclude each other: the one an override names wins", () => {
        assert.match(
          config(Mode.Dense, 4096, 7168, 16384, 1, { override: "bn=192" }),
          /^bm=128 bn=192 stages=4 multicast=1 acc=single /,
        );
        assert.match(config(Mode.Contiguous, 32768, 6144, 7168, 4, { override: "bm=256" }), /^bm=128 /);
        // ... and a named BLOCK_M 256 takes the heuristic's BLOCK_N 144 back to 128 (a named 144 is refused below).
        assert.match(config(Mode.Masked, 128, 6144, 7168, 6), /^bm=128 bn=144 /);
        assert.match(config(Mode.Masked, 128, 6144, 7168, 6, { override: "bm=256" }), /^bm=256 bn=128 stages=3 /);
      });
      await t.step("options measured slower are gone: naming one is refused as a bad item", () => {
        // acc=halves, ahead=1, group=N, kalt=1, spread=2, acc=quad, prod=1, rel=warp, regs=40, epi=smem|direct and
        // pdl=0 lost to the defaults on the H200 (docs/performance-history.md keeps their numbers).
        for (
          const item of [
            "acc=halves",
            "ahead=1",
            "group=2",
            "kalt=1",
            "spread=2",
            "acc=quad",
            "prod=1",
            "rel=warp",
            "regs=40",
            "epi=smem",
            "epi=direct",
            "pdl=0",
          ]
        ) {
          const r = choose(Mode.Dense, 64, 4096, 7168, 1, { override: item });
          assert.equal(r.status, GO_ERR_INVALID_ARGUMENT, item);
          assert.match(r.message, new RegExp(`bad item "${item}"`), item);
        }
      });
      await t.step("spread=1 is the default for dense GEMMs of one row block with at least 8 K blocks", () => {
        // A trace of CTA 0 (dbg=64) showed the one issuing producer thread as the K loop's bound at small M.
        assert.match(config(Mode.Dense, 64, 4096, 7168), / jit=shape spread=1 ktma=2$/);
        assert.match(config(Mode.Dense, 128, 7168, 2048), / spread=1$/, "16 K blocks");
        assert.doesNotMatch(config(Mode.Dense, 64, 32768, 512), /spread/, "4 K blocks");
        assert.doesNotMatch(config(Mode.Dense, 129, 4096, 7168), /spread/, "two row blocks");
        assert.doesNotMatch(config(Mode.Dense, 4096, 7168, 16384), /spread/, "M = 4096");
        assert.doesNotMatch(config(Mode.Masked, 20, 4096, 7168, 8), /spread/, "grouped calls");
        assert.match(config(Mode.Dense, 4096, 7168, 16384, 1, { override: "spread=1" }), / jit=shape spread=1$/);
        assert.match(config(Mode.Dense, 64, 4096, 7168, 1, { override: "spread=0" }), / jit=shape ktma=2$/);
        assert.match(choose(Mode.Dense, 64, 4096, 7168, 1, { override: "spread=3" }).message, /spread=0\|1, sms=/);
      });
      await t.step("sms= caps the persistent grid and is described, the tile choice unchanged", () => {
        // A test knob (tests/gpu/run.sh's check configurations): check.cpp's small shapes walk several tiles a CTA and
        // split their last round in halves (fast_split_tail).
        const plain = config(Mode.Dense, 4096, 7168, 16384);
        assert.equal(config(Mode.Dense, 4096, 7168, 16384, 1, { override: "sms=8" }), `${plain} sms=8`);
        assert.match(choose(Mode.Dense, 4096, 7168, 16384, 1, { override: "sms=0" }).message, /sms=1\.\.1024\)/);
      });
      await t.step("the ring goes past 16 stages only with ktma=4: 20 at 64 x 16", () => {
        assert.match(config(Mode.Dense, 64, 576, 7168), /^bm=64 bn=16 stages=20 .* ktma=4$/);
        assert.match(config(Mode.Dense, 128, 576, 7168), /^bm=64 bn=16 stages=20 .* ktma=4$/, "two row blocks of 64");
        // ptxas spilled at ktma=2 from 18 stages: 58 K blocks take ktma=2 and 16 stages; ktma=1 (mc=2) 16 too, though
        // 21 fit. Named, 20 stages run with any ktma; past 20 is a bad item.
        assert.match(config(Mode.Dense, 64, 2112, 7424), /^bm=64 bn=16 stages=16 .* acc=double .* spread=1 ktma=2$/);
        assert.match(config(Mode.Dense, 64, 2112, 7168, 1, { override: "mc=2" }), /^bm=64 bn=16 stages=16 /);
        assert.match(config(Mode.Dense, 64, 4096, 7168), /^bm=64 bn=32 stages=16 .* ktma=2$/);
        assert.match(
          config(Mode.Dense, 64, 2112, 7168, 1, { override: "stages=20,ktma=1" }),
          / stages=20 .* spread=1$/,
        );
        assert.match(
          choose(Mode.Dense, 64, 2112, 7168, 1, { override: "stages=21" }).message,
          /bad item "stages=21" \(expected .* stages=2\.\.20, /,
        );
      });
      await t.step("ktma=2 is the default at BLOCK_N 16 and 32 where spread=1 is, and where K allows it", () => {
        // Boxes two K blocks deep halve the TMA instructions per K block (the issuing thread's bound at these tiles);
        // at BLOCK_M 64 and BLOCK_N 16 four deep, with three accumulator sets, where the K blocks are a multiple of 4.
        assert.match(
          config(Mode.Dense, 64, 2112, 7168),
          /^bm=64 bn=16 stages=20 multicast=1 acc=triple .* jit=shape spread=1 ktma=4$/,
        );
        assert.match(config(Mode.Dense, 64, 2112, 7424), / acc=double .* spread=1 ktma=2$/, "58 K blocks: ktma=2");
        assert.match(config(Mode.Dense, 64, 2112, 7168, 1, { override: "mc=2" }), / acc=double .* spread=1$/);
        assert.match(config(Mode.Dense, 64, 2112, 7168, 1, { override: "ktma=2" }), / acc=double .* ktma=2$/);
        assert.match(config(Mode.Dense, 64, 2112, 7168, 1, { override: "acc=double" }), / acc=double .* ktma=2$/);
        assert.match(config(Mode.Dense, 128, 2112, 7168), /^bm=64 bn=32 stages=16 .* jit=shape spread=1 ktma=2$/);
        assert.match(
          config(Mode.Dense, 128, 2112, 7168, 1, { override: "bm=128,bn=16" }),
          /^bm=128 bn=16 stages=10 .* jit=shape spread=1 ktma=2$/,
        );
        assert.match(config(Mode.Dense, 128, 4096, 7168), /^bm=128 bn=32 .* spread=1 ktma=2$/);
        assert.doesNotMatch(config(Mode.Dense, 64, 7168, 16384), /ktma/, "BLOCK_N 56");
        assert.doesNotMatch(config(Mode.Dense, 4096, 7168, 16384), /ktma/, "M = 4096");
        assert.doesNotMatch(config(Mode.Masked, 20, 4096, 7168, 8), /ktma/, "grouped calls");
        assert.doesNotMatch(config(Mode.Dense, 64, 2112, 1152), /ktma/, "9 K blocks: not a multiple of 2");
        assert.doesNotMatch(config(Mode.Dense, 64, 2112, 7100), /ktma/, "K not a multiple of 128");
        assert.doesNotMatch(config(Mode.Dense, 64, 2112, 7168, 1, { override: "mc=2" }), /ktma/, "gives way to mc=2");
        assert.doesNotMatch(config(Mode.Dense, 64, 2112, 7168, 1, { override: "split=2" }), /ktma/, "and to split=");
        // Named: on any shape whose K allows it, with a multiple of N stages, at least 2N.
        assert.match(
          config(Mode.Dense, 4096, 7168, 16384, 1, { override: "ktma=2,bm=128" }),
          /^bm=128 bn=128 stages=4 .* jit=shape ktma=2$/,
        );
        assert.match(config(Mode.Dense, 64, 7168, 16384, 1, { override: "ktma=4" }), /stages=12 .* ktma=4$/);
        assert.doesNotMatch(config(Mode.Dense, 64, 2112, 1152, 1, { override: "ktma=2" }), /ktma/, "runs ktma=1");
        const cases: [string, RegExp][] = [
          ["ktma=2,mc=2", /ktma=2 needs mc=1/],
          ["ktma=2,split=2", /ktma=2 is not combined with split=/],
          ["ktma=2,stages=5", /ktma=2 needs the stages to be a multiple of 2/],
          ["ktma=2,bm=256", /ktma=2 needs at least two groups of 2 stages .*\(BLOCK_M 256 x BLOCK_N 128: 2 stages\)/],
          ["ktma=3", /bad item "ktma=3" \(expected .*ktma=1\|2\|4/],
        ];
        for (const [override, want] of cases) {
          const r = choose(Mode.Dense, 4096, 7168, 16384, 1, { override });
          assert.equal(r.status, GO_ERR_INVALID_ARGUMENT, override);
          assert.match(r.message, want, override);
        }
      });
      await t.step("acc=triple is an option the configuration string shows, refused where it cannot run", () => {
        assert.match(config(Mode.Dense, 128, 2112, 7168), / acc=double /, "the default keeps two sets at 64 x 32");
        // Named, it keeps the heuristic's ktma=2 (ktma=4 goes with the heuristic's own three sets).
        assert.match(
          config(Mode.Dense, 64, 2112, 7168, 1, { override: "acc=triple" }),
          /^bm=64 bn=16 stages=16 multicast=1 acc=triple .* spread=1 ktma=2$/,
        );
        assert.match(
          config(Mode.Dense, 128, 4096, 7168, 1, { override: "acc=triple" }),
          /^bm=128 bn=32 .* acc=triple /,
        );
        // The heuristic's ktma=2 gives way where its stages would not hold the sets (3 < 2 + 3 - 1).
        assert.match(
          config(Mode.Dense, 64, 2112, 7168, 1, { override: "acc=triple,stages=3" }),
          /^bm=64 bn=16 stages=3 multicast=1 acc=triple .* spread=1$/,
        );
        // Fewer K blocks than sets: two sets, as the configuration string says.
        assert.match(config(Mode.Dense, 64, 2112, 256, 1, { override: "acc=triple" }), / acc=double /);
        assert.match(config(Mode.Dense, 64, 2112, 384, 1, { override: "acc=triple" }), / acc=triple /);
        // A named acc over the heuristic's BLOCK_M 256 takes BLOCK_M 128.
        assert.match(
          config(Mode.Dense, 4096, 7168, 16384, 1, { override: "acc=triple,bn=64" }),
          /^bm=128 bn=64 .* acc=triple /,
        );
        const cases: [string, RegExp][] = [
          ["acc=triple", /acc=triple needs bn <= 64 \(registers\)/],
          ["acc=triple,bn=64,split=2", /split= promotes in a second kernel: not with acc=triple/],
          ["acc=triple,bn=64,stages=2", /acc=triple holds two stages while it waits for the next: at least 3 stages/],
          ["acc=triple,bn=32,ktma=2,stages=2", /ktma=2 needs at least two groups of 2 stages/],
          ["acc=quintuple", /bad item "acc=quintuple" \(expected .*acc=single\|double\|triple,/],
        ];
        for (const [override, want] of cases) {
          const r = choose(Mode.Dense, 4096, 7168, 16384, 1, { override });
          assert.equal(r.status, GO_ERR_INVALID_ARGUMENT, override);
          assert.match(r.message, want, override);
        }
      });
      await t.step("the K sweep's groups keep one configuration at every K of their sweep", () => {
        // bench/k_sweep.ts fits a group's times over K as one line, which holds only where the kernel's configuration
        // stays (the one-row-block rules need 8 K blocks, ktma=4 a multiple of 4, the 4-stage rule 24 K blocks).
        const groups: [number, number, readonly number[]][] = [
          [128, 4096, DEFAULT_KS],
          [64, 576, DEFAULT_KS],
          [64, 7168, DEFAULT_KS],
          [128, 24576, DEFAULT_KS],
          [4096, 4096, [3072, 4096, 5120, 6144, 7168]],
        ];
        for (const [m, n, ks] of groups) {
          const configs = new Set(ks.map((k) => config(Mode.Dense, m, n, k)));
          assert.equal(configs.size, 1, `${m} x ${n}: ${[...configs].join(" / ")}`);
        }
      });
      await t.step("profiling switches need the profiling build", () => {
        const r = choose(Mode.Dense, 4096, 7168, 16384, 1, { override: "dbg=1" });
        assert.equal(r.status, GO_ERR_INVALID_ARGUMENT);
        assert.match(r.message, /dbg= needs the profiling build of the CUDA backend/);
      });
      await t.step("a bad override is refused with the reason", () => {
        const cases: [string, RegExp][] = [
          ["bm=256,acc=double", /bm=256 needs acc=single and bn <= 128 \(registers\)/],
          ["bm=256,bn=144", /bm=256 needs acc=single and bn <= 128/],
          ["bn=144,acc=double", /acc=double needs bn <= 128/],
          ["bn=208", /bn=208: past bn=200 the accumulators spill \(registers\)/],
          ["bn=256,stages=3", /bn=256: past bn=200 the accumulators spill/],
          [
            "bm=256,stages=5",
            /5 stages of BLOCK_M 256 x BLOCK_N 128 need more than 227 KB of shared memory \(at most 4\)/,
          ],
          ["bm=96", /bad item "bm=96"/],
          ["split=2,mc=2", /split= needs mc=1/],
          ["split=0", /bad item "split=0"/],
          ["pdl=2", /bad item "pdl=2"/],
          ["bn=100", /bad item "bn=100"/],
          ["epi=global", /bad item "epi=global"/],
          ["dbg=128", /dbg= needs the profiling build/],
        ];
        for (const [override, reason] of cases) {
          const r = choose(Mode.Dense, 4096, 7168, 16384, 1, { override });
          assert.equal(r.status, GO_ERR_INVALID_ARGUMENT, override);
          assert.match(r.message, reason, override);
        }
      });
      await t.step("bad arguments are refused", () => {
        assert.equal(choose(4 as Mode, 64, 64, 128).status, GO_ERR_INVALID_ARGUMENT);
        const r = choose(Mode.Dense, 0, 64, 128);
        assert.equal(r.status, GO_ERR_INVALID_ARGUMENT);
        assert.match(r.message, /out of range/);
      });
    } finally {
      lib.close();
    }
  },
});
