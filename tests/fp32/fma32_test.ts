import assert from "node:assert/strict";
import { fma32 } from "../../reference/fp32.ts";
import { Prng } from "../../reference/random/prng.ts";

// Independent exact reference: a·b + c as a BigInt multiple of 2^-298, rounded once to fp32 (RNE) in BigInt.
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const bitsOf = (x: number) => ((F32[0] = x), U32[0]);
const fromBits = (u: number) => ((U32[0] = u >>> 0), F32[0]);

/** x = n·2^-149 exactly for a finite fp32 x (n a signed BigInt). */
function scaled149(x: number): bigint {
  const u = bitsOf(x);
  const e = (u >>> 23) & 0xff;
  const m = BigInt(u & 0x7fffff);
  const n = e === 0 ? m : (m | 0x800000n) << BigInt(e - 1);
  return u >>> 31 ? -n : n;
}

function refFma(a: number, b: number, c: number): number {
  const p = scaled149(a) * scaled149(b); // multiple of 2^-298
  const s = p + (scaled149(c) << 149n);
  if (s === 0n) {
    // exact zero: −0 only when both the product and c are −0 (or negative zeros), else +0 (IEEE 754 §6.3)
    const pNeg = (Object.is(a, -0) || a < 0) !== (Object.is(b, -0) || b < 0);
    const pZero = a === 0 || b === 0;
    return pZero && pNeg && Object.is(c, -0) ? -0 : 0;
  }
  const neg = s < 0n;
  const mag = neg ? -s : s;
  const len = mag.toString(2).length;
  const msb = len - 1 - 298; // exponent of the leading bit
  const lsb = Math.max(msb, -126) - 23;
  const shift = BigInt(lsb + 298);
  let q = mag >> shift;
  const rem = mag - (q << shift);
  const half = 1n << (shift - 1n);
  if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
  let e = lsb;
  if (q === 1n << 24n) {
    q >>= 1n;
    e += 1;
  }
  if (e + 23 > 127) return neg ? -Infinity : Infinity;
  const v = Number(q) * 2 ** e; // exact: q < 2^24, 2^e a power of two in binary64 range
  return neg ? -v : v;
}

function randomFinite(rng: Prng): number {
  for (;;) {
    const x = fromBits(rng.nextU32());
    if (Number.isFinite(x)) return x;
  }
}

/** Seeded triples: random, subnormal, overflow, cancellation and exact ties. */
function* triples(n: number, seed: number): Generator<[number, number, number]> {
  const rng = new Prng(seed);
  for (let i = 0; i < n; i++) {
    const kind = i % 6;
    if (kind === 0) {
      yield [randomFinite(rng), randomFinite(rng), randomFinite(rng)];
    } else if (kind === 1) {
      // small magnitudes: products and sums in the subnormal range
      const a = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(40) + 40) << 23));
      const b = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(40) + 40) << 23));
      const c = fromBits(rng.nextU32() & 0x80ffffff);
      yield [a, b, c];
    } else if (kind === 2) {
      // near overflow
      const a = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(10) + 190) << 23));
      const b = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(10) + 190) << 23));
      const c = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(4) + 250) << 23));
      yield [a, b, c];
    } else if (kind === 3) {
      // cancellation: c ≈ −a·b
      const a = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(60) + 97) << 23));
      const b = fromBits((rng.nextU32() & 0x807fffff) | ((rng.int(60) + 97) << 23));
      const p = Math.fround(a * b);
      const c = fromBits((bitsOf(-p) + rng.int(5) - 2) >>> 0);
      yield [a, b, Number.isFinite(c) ? c : 0];
    } else if (kind === 4) {
      // near-ties: a·b = ±(half an ulp of c)·(1 − m²·2^-46), so a·b + c lies a hair off an fp32 midpoint, closer than a
      // binary64 ulp: rounding to double first would land on the midpoint (the double-rounding trap)
      const ec = rng.int(200) - 100;
      const c = fromBits(((rng.int(2) << 31) | ((ec + 127) << 23) | (rng.nextU32() & 0x7fffff)) >>> 0);
      const m = rng.int(2047) + 1;
      const ea = rng.int(60) - 30, eb = ec - 24 - ea;
      const a = (1 + m * 2 ** -23) * 2 ** ea * (rng.int(2) ? -1 : 1);
      const b = (1 - m * 2 ** -23) * 2 ** eb;
      yield [Math.fround(a), Math.fround(b), c];
    } else {
      // products that are exact ties relative to c: a = 1 + 2^-k style
      const k = rng.int(23) + 1;
      const a = 1 + 2 ** -k, b = fromBits(((rng.int(2) << 31) | ((rng.int(20) + 117) << 23)) >>> 0);
      const c = Math.fround(b * 2 ** -(rng.int(30)) * (rng.int(2) ? -1 : 1));
      yield [Math.fround(a), b, c];
    }
  }
}

const FULL = (() => {
  try {
    return Deno.env.get("GEMM_ORACLE_FULL") === "1";
  } catch {
    return false;
  }
})();

Deno.test("fma32()", async (t) => {
  const n = FULL ? 1_000_000 : 50_000;
  await t.step(`matches the exact BigInt reference on ${n} seeded triples`, () => {
    for (const [a, b, c] of triples(n, 20261129)) {
      const got = fma32(a, b, c), want = refFma(a, b, c);
      if (!Object.is(got, want)) assert.fail(`fma32(${a}, ${b}, ${c}) = ${got}, exact rounding gives ${want}`);
    }
  });

  await t.step("rounds a product tie only once", () => {
    const a = Math.fround(1 + 2 ** -12);
    assert.equal(fma32(a, a, -1), 2 ** -11 + 2 ** -24);
  });

  await t.step("follows IEEE 754 for Inf, NaN and signed zeros", () => {
    assert.ok(Number.isNaN(fma32(Infinity, 0, 1)));
    assert.ok(Number.isNaN(fma32(Infinity, 1, -Infinity)));
    assert.equal(fma32(Infinity, 1, 5), Infinity);
    assert.ok(Object.is(fma32(-0, 1, -0), -0));
    assert.ok(Object.is(fma32(1, 1, -1), 0));
    assert.equal(fma32(3.4e38, 2, 0), Infinity);
  });

  await t.step("reference self-check: agrees with Math.fround(a*b+c) when a*b+c is exact in binary64", () => {
    assert.equal(refFma(3, 5, 1), 16);
    assert.equal(refFma(2 ** -149, 0.5, 0), 0); // tie to even at the subnormal bottom
    assert.equal(refFma(2 ** -149, 1.5, 0), 2 ** -148);
  });
});
