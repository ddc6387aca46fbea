// Exact powers of two built from bits (no Math.pow): 2^k for integer k in [-1074, 1023].
const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer); // [low, high] on little-endian hosts (every Deno target)

/** 2^k exactly, for an integer k in [-1074, 1023]; 0 below, Infinity above. */
export function pow2(k: number): number {
  if (k > 1023) return Infinity;
  if (k >= -1022) {
    U32[0] = 0;
    U32[1] = (k + 1023) << 20;
    return F64[0];
  }
  if (k < -1074) return 0;
  const t = k + 1074; // subnormal binary64: bit t of the 52-bit fraction
  U32[0] = t < 32 ? (1 << t) >>> 0 : 0;
  U32[1] = t < 32 ? 0 : 1 << (t - 32);
  return F64[0];
}
