/**
 * A lookup accelerator over any conversion profile's encoder (no rounding logic of its own).
 *
 * For each of the 65536 values of the top 16 bits of an fp32 pattern it asks the encoder for the codes of the
 * smallest and the largest pattern with those top bits. Every encoder of `reference/formats` is monotone in the
 * input magnitude for a fixed sign (a rounding is monotone, overflow codes sit above the largest finite code), so
 * equal end codes mean every pattern in between gets that code; those slots hold the code, the others −1 and fall
 * back to the encoder. Exponent-255 slots (Inf/NaN) always fall back, because NaN outputs may depend on the payload.
 * @module
 */
import { getConverter } from "../formats/profiles.ts";
import type { Encoder } from "../formats/codec.ts";

/** An encoder plus its top-16-bit table. */
export interface FastEncoder {
  /** The profile's encoder (fp32 bits → code). */
  readonly encode: Encoder;
  /** Code per top-16-bit slot, or −1 where the low 16 bits matter. */
  readonly table: Int32Array;
}

const CACHE = new Map<string, FastEncoder>();

/**
 * The cached fast encoder of `profile` for `format` (throws H1's RangeError for unknown names).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { f32Bits } from "../fp32.ts";
 * import { encodeBits, fastEncoder } from "./_fast_encode.ts";
 * const f = fastEncoder("torch_2_11", "e4m3");
 * assert.equal(fastEncoder("torch_2_11", "e4m3"), f); // cached
 * assert.equal(encodeBits(f, f32Bits(1)), 0x38);
 * assert.equal(encodeBits(f, f32Bits(448)), 0x7e);
 * ```
 */
export function fastEncoder(profile: string, format: string): FastEncoder {
  const key = `${profile}\u0000${format}`;
  let f = CACHE.get(key);
  if (f === undefined) {
    const encode = getConverter(profile, format);
    const table = new Int32Array(65536);
    for (let h = 0; h < 65536; h++) {
      if (((h >>> 7) & 0xff) === 0xff) {
        table[h] = -1;
        continue;
      }
      const lo = encode((h << 16) >>> 0);
      const hi = encode(((h << 16) | 0xffff) >>> 0);
      table[h] = lo === hi ? lo : -1;
    }
    f = { encode, table };
    CACHE.set(key, f);
  }
  return f;
}

/**
 * Encodes one fp32 pattern through the table (falling back to the encoder).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { f32Bits } from "../fp32.ts";
 * import { encodeBits, fastEncoder } from "./_fast_encode.ts";
 * const f = fastEncoder("torch_2_11", "e4m3");
 * assert.equal(encodeBits(f, f32Bits(464.1)), 0x7f); // torch: (464, 480) carries into NaN
 * ```
 */
export function encodeBits(f: FastEncoder, bits: number): number {
  const c = f.table[bits >>> 16];
  return c >= 0 ? c : f.encode(bits >>> 0);
}
