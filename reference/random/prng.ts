/**
 * A seeded pseudo-random generator using 32-bit integer operations only (xoshiro128** seeded by splitmix32),
 * so that the same seed gives the same bits on every platform and Deno version. No `Math.random`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "./prng.ts";
 * const a = new Prng(42), b = new Prng(42);
 * assert.equal(a.nextU32(), b.nextU32());
 * ```
 * @module
 */

/**
 * xoshiro128** (Blackman & Vigna, 2018) with a splitmix32 seeding step.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "./prng.ts";
 * const a = new Prng(42), b = new Prng(42);
 * assert.equal(a.nextU32(), b.nextU32()); // same seed, same stream
 * const u = a.uniform();
 * assert.ok(u >= 0 && u < 1);
 * assert.ok(a.int(10) < 10);
 * ```
 */
export class Prng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /**
   * A generator seeded with `seed`.
   * @param seed any integer; it is reduced to 32 bits.
   */
  constructor(seed: number) {
    let x = seed >>> 0;
    const split = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#s0 = split();
    this.#s1 = split();
    this.#s2 = split();
    this.#s3 = split();
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** The next uniformly distributed unsigned 32-bit integer. */
  nextU32(): number {
    const s1 = this.#s1;
    const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    return r;
  }

  /** A uniform fp32 value in [0, 1) with 24 random bits (exact in fp32). */
  uniform(): number {
    return (this.nextU32() >>> 8) * 2 ** -24;
  }

  /** A uniform integer in [0, n) for 0 < n ≤ 2^32 (multiply-shift; the tiny bias is irrelevant for test data). */
  int(n: number): number {
    return Math.floor((this.nextU32() / 4294967296) * n);
  }

  /**
   * An approximately standard-normal fp32 value: the Irwin–Hall sum of 12 uniforms minus 6 (mean 0, variance 1,
   * support ±6). Chosen because it needs no transcendental function, so its bits are the same everywhere.
   */
  normal(): number {
    let s = 0;
    for (let i = 0; i < 12; i++) s += this.nextU32() >>> 8; // exact integer sum < 2^28
    return Math.fround(s * 2 ** -24 - 6);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
