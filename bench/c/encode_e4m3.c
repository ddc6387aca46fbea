/*
 * The C side of bench/formats_bench.ts: fp32 → E4M3 batch encode and E4M3 → fp32 decode, single thread, -O2.
 * Same algorithms as reference/formats/batch.ts:
 *   - "table": code = table[(top 16 bits) * 2 + (low 16 bits != 0)], the 2^17-byte table written by the TS side;
 *   - "bits": the direct integer RNE encoder of numerics.md §2 with satfinite overflow (for context);
 *   - decode: out[i] = values[code[i]] (256-entry float table).
 * Usage: encode_e4m3 INPUT.f32 TABLE.u8 REPS OUT.u8  → one JSON line on stdout; the codes go to OUT.u8. Never aborts: errors go to stderr, exit 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = n > 0 ? malloc((size_t)n) : NULL;
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(buf);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* numerics.md §2: exact RNE to E4M3 (bias 7, M = 3), satfinite overflow, NaN → 0x7F. */
static uint8_t encode_bits(uint32_t u) {
  uint32_t s = (u >> 31) << 7, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;
  if (a == 0) return (uint8_t)s;
  if (a == 0x7f800000u) return (uint8_t)(s | 0x7e);
  uint32_t sig;
  int e0;
  if (a >= 0x00800000u) {
    sig = (a & 0x7fffffu) | 0x800000u;
    e0 = (int)(a >> 23) - 150;
  } else {
    sig = a;
    e0 = -149;
  }
  int msb = 31 - __builtin_clz(sig) + e0;
  int lsb = (msb > -6 ? msb : -6) - 3;
  int shift = lsb - e0;
  uint32_t q;
  if (shift > 25) {
    q = 0;
  } else {
    q = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
  }
  if (q == 16) {
    q = 8;
    lsb++;
  }
  uint32_t code = q < 8 ? q : ((uint32_t)(lsb + 3 + 7) << 3) | (q - 8);
  if (code > 0x7e) code = 0x7e;
  return (uint8_t)(s | code);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s INPUT.f32 TABLE.u8 REPS OUT.u8\n", argv[0]);
    return 1;
  }
  size_t in_size = 0, t_size = 0;
  uint32_t *in = (uint32_t *)read_file(argv[1], &in_size);
  uint8_t *table = (uint8_t *)read_file(argv[2], &t_size);
  int reps = atoi(argv[3]);
  if (!in || !table || t_size != (1u << 17) || reps < 1) {
    fprintf(stderr, "encode_e4m3: cannot read input or table (table must be 131072 bytes), or bad REPS\n");
    return 1;
  }
  size_t n = in_size / 4;
  uint8_t *out = (uint8_t *)malloc(n), *out2 = (uint8_t *)malloc(n);
  float *dec = (float *)malloc(n * sizeof(float));
  float values[256];
  if (!out || !out2 || !dec) {
    fprintf(stderr, "encode_e4m3: out of memory\n");
    return 1;
  }
  for (int c = 0; c < 256; c++) {
    int e = (c >> 3) & 15, m = c & 7;
    float v = e == 0 ? (float)m * (1.0f / 512.0f) : (float)(8 + m) / 8.0f * (e >= 7 ? (float)(1 << (e - 7)) : 1.0f / (float)(1 << (7 - e)));
    if ((c & 0x7f) == 0x7f) v = __builtin_nanf("");
    values[c] = (c & 0x80) ? -v : v;
  }
  double best_t = 1e30, best_b = 1e30, best_d = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
      uint32_t u = in[i];
      out[i] = table[((u >> 15) & 0x1fffeu) | (((u & 0xffffu) + 0xffffu) >> 16)];
    }
    double t1 = now_s();
    for (size_t i = 0; i < n; i++) out2[i] = encode_bits(in[i]);
    double t2 = now_s();
    for (size_t i = 0; i < n; i++) dec[i] = values[out[i]];
    double t3 = now_s();
    if (t1 - t0 < best_t) best_t = t1 - t0;
    if (t2 - t1 < best_b) best_b = t2 - t1;
    if (t3 - t2 < best_d) best_d = t3 - t2;
  }
  uint64_t diff = 0;
  double dsum = 0;
  for (size_t i = 0; i < n; i++) {
    diff += out[i] != out2[i];
    if (dec[i] == dec[i]) dsum += dec[i];
  }
  FILE *fo = fopen(argv[4], "wb");
  if (!fo || fwrite(out, 1, n, fo) != n) {
    fprintf(stderr, "encode_e4m3: cannot write %s\n", argv[4]);
    return 1;
  }
  fclose(fo);
  printf("{\"n\":%zu,\"encode_table_eps\":%.6g,\"encode_bits_eps\":%.6g,\"decode_eps\":%.6g,\"table_vs_bits_diff\":%llu,\"decode_sum\":%.17g}\n",
         n, n / best_t, n / best_b, n / best_d, (unsigned long long)diff, dsum);
  free(in);
  free(table);
  free(out);
  free(out2);
  free(dec);
  return 0;
}
