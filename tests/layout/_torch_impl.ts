// Independent re-implementation of DeepGEMM tests/test_layout.py's
// `get_mn_major_tma_aligned_packed_ue8m0_tensor_torch_impl` (uint8 exponent bytes, zero-padded to
// [align(mn, 4), align(k, 4)], viewed as int32, transposed), as plain loops.
import type { Tensor } from "../../reference/tensor/mod.ts";

export interface Strided {
  shape: number[];
  strides: number[];
  get(idx: number[]): number;
}

export function torchImplPacked(sfVals: Float32Array, g: number, mn: number, k: number, twoD: boolean): Strided {
  const u = new Uint32Array(sfVals.buffer, sfVals.byteOffset, sfVals.length);
  const amn = Math.ceil(mn / 4) * 4, ak = Math.ceil(k / 4) * 4;
  const padded = new Uint8Array(g * amn * ak);
  for (let b = 0; b < g; b++) {
    for (let i = 0; i < mn; i++) {
      for (let j = 0; j < k; j++) padded[(b * amn + i) * ak + j] = (u[(b * mn + i) * k + j] >> 23) & 0xff;
    }
  }
  const words = new Int32Array(padded.buffer); // [g, amn, ak/4]
  const p = ak / 4;
  const get = (idx: number[]) => {
    const [b, i, q] = twoD ? [0, idx[0], idx[1]] : idx;
    return words[(b * amn + i) * p + q];
  };
  return twoD ? { shape: [mn, p], strides: [1, amn], get } : { shape: [g, mn, p], strides: [amn * p, 1, amn], get };
}

export function assertSameTensor(got: Tensor, want: Strided, what: string): void {
  if (JSON.stringify(got.shape) !== JSON.stringify(want.shape)) {
    throw new Error(`${what}: shape ${got.shape} vs ${want.shape}`);
  }
  if (JSON.stringify(got.strides) !== JSON.stringify(want.strides)) {
    throw new Error(`${what}: strides ${got.strides} vs ${want.strides}`);
  }
  const s = want.shape;
  const d = got.data as Int32Array;
  if (s.length === 2) {
    for (let i = 0; i < s[0]; i++) {
      for (let q = 0; q < s[1]; q++) {
        if (d[got.offset + i * got.strides[0] + q * got.strides[1]] !== want.get([i, q])) {
          throw new Error(`${what}: [${i}, ${q}]`);
        }
      }
    }
  } else {
    for (let b = 0; b < s[0]; b++) {
      for (let i = 0; i < s[1]; i++) {
        for (let q = 0; q < s[2]; q++) {
          const at = got.offset + b * got.strides[0] + i * got.strides[1] + q * got.strides[2];
          if (d[at] !== want.get([b, i, q])) throw new Error(`${what}: [${b}, ${i}, ${q}]`);
        }
      }
    }
  }
}
