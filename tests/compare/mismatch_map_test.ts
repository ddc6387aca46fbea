import assert from "node:assert/strict";
import { formatMismatchMap, mismatchMap } from "../../reference/compare/mismatch_map.ts";
import { Tensor } from "../../reference/tensor/tensor.ts";

/** Two bf16 tensors of a shape, equal (1.0 everywhere) until `flip` changes elements of the second. */
function pair(shape: number[], flip: (set: (idx: number[], bits?: number) => void) => void) {
  const n = shape.reduce((p, d) => p * d, 1);
  const want = Tensor.from("bf16", shape, new Uint16Array(n).fill(0x3f80));
  const got = Tensor.from("bf16", shape, new Uint16Array(n).fill(0x3f80));
  flip((idx, bits = 0x3f81) => {
    got.data[got.index(...idx)] = bits;
  });
  return { want, got };
}

function kindOf(shape: number[], flip: Parameters<typeof pair>[1], options = {}) {
  const { want, got } = pair(shape, flip);
  return mismatchMap(want, got, options).classification;
}

Deno.test("mismatchMap()", async (t) => {
  await t.step("counts mismatches per 128×128 tile with bounding box and worst element", () => {
    const { want, got } = pair([256, 384], (set) => {
      set([3, 5]);
      set([100, 7], 0x3f88); // 8 ULP: the worst of tile [0, 0]
      set([200, 300]);
    });
    const map = mismatchMap(want, got);
    assert.equal(map.mismatches, 3);
    assert.equal(map.compared, 256 * 384);
    assert.deepEqual([map.tileRows, map.tileCols], [2, 3]);
    assert.deepEqual(map.grid, [2, 0, 0, 0, 0, 1]);
    assert.deepEqual(map.tiles.map((x) => x.tile), [[0, 0], [1, 2]]);
    assert.deepEqual([map.tiles[0].rows, map.tiles[0].cols], [[3, 100], [5, 7]]);
    assert.equal(map.tiles[0].compared, 128 * 128);
    assert.deepEqual(map.tiles[0].worst, {
      coordinate: [100, 7],
      ulp: 8,
      expected: { value: 1, bits: "0x3f80" },
      actual: { value: 1.0625, bits: "0x3f88" },
    });
    assert.deepEqual(map.worst?.coordinate, [100, 7]);
  });

  await t.step("says no mismatches when the tensors are equal", () => {
    assert.deepEqual(kindOf([4, 4], () => {}), { kind: "none", text: "no mismatches (16 elements compared)" });
  });

  await t.step("names one tile with its rows and columns (an 8×128 fault)", () => {
    const c = kindOf([256, 256], (set) => {
      for (let i = 40; i < 48; i++) for (let j = 128; j < 256; j++) set([i, j]);
    });
    assert.equal(c.kind, "one_tile");
    assert.equal(
      c.text,
      "one tile: rows 40–47, cols 128–255 (tile [0, 1] of 2×2); 1024 of 65536 elements",
    );
  });

  await t.step("names the tail block when only the last, partial N or M block differs", () => {
    const n = kindOf([256, 264], (set) => {
      set([0, 260]);
      set([200, 256]);
    });
    assert.equal(n.kind, "tail_block");
    assert.match(n.text, /^tail block: only the last N block \(cols 256–263, N = 264/);
    const m = kindOf([136, 256], (set) => {
      set([130, 0]);
      set([135, 200]);
    });
    assert.equal(m.kind, "tail_block");
    assert.match(m.text, /last M block \(rows 128–135/);
    const one = kindOf([136, 256], (set) => set([130, 3]));
    assert.equal(one.kind, "one_tile");
    assert.match(one.text, /the tail block\)/);
  });

  await t.step("names a row band and a column band", () => {
    const row = kindOf([384, 384], (set) => {
      set([130, 0]);
      set([131, 300]);
    });
    assert.equal(row.kind, "row_band");
    assert.match(row.text, /^one row band: rows 130–131 \(tile row 1\), 2 of 3 tiles/);
    const col = kindOf([384, 384], (set) => {
      set([0, 140]);
      set([300, 141]);
    });
    assert.equal(col.kind, "column_band");
    assert.match(col.text, /^one column band: cols 140–141 \(tile column 1\), 2 of 3 tiles/);
  });

  await t.step("names every tile differing, and scattered tiles", () => {
    const all = kindOf([256, 256], (set) => {
      for (const [i, j] of [[0, 0], [0, 200], [200, 0], [200, 200]]) set([i, j]);
    });
    assert.equal(all.kind, "all_tiles");
    assert.match(all.text, /^all tiles: every one of the 4 tiles differs; 4 of 65536 elements/);
    const some = kindOf([384, 384], (set) => {
      set([0, 0]);
      set([200, 300]);
    });
    assert.equal(some.kind, "scattered");
    assert.match(some.text, /^scattered: 2 of 9 tiles differ/);
  });

  await t.step("names masked rows (rows past masked_m) before any tile pattern", () => {
    const maskedRows = new Uint8Array(2 * 8);
    for (let r = 3; r < 8; r++) maskedRows[8 + r] = 1; // group 1: masked_m = 3
    const c = kindOf([2, 8, 16], (set) => {
      set([1, 5, 0]);
      set([1, 7, 9]);
    }, { maskedRows, maskedRowsWhy: "past masked_m" });
    assert.equal(c.kind, "masked_rows");
    assert.equal(c.text, "masked rows: every mismatch is in rows past masked_m (group 1); 2 of 256 elements");
  });

  await t.step("names NaN/Inf handling when every mismatch has NaN or ±Inf on one side", () => {
    const c = kindOf([256, 256], (set) => {
      set([0, 0], 0x7fc0);
      set([200, 200], 0xff80);
    });
    assert.equal(c.kind, "nan_inf");
  });

  await t.step("treats any NaN as equal to any NaN in class mode", () => {
    const { want, got } = pair([2, 2], (set) => set([0, 0], 0x7fc0));
    want.data[0] = 0x7fff;
    assert.equal(mismatchMap(want, got).mismatches, 1);
    assert.equal(mismatchMap(want, got, { nan: "class" }).mismatches, 0);
  });

  await t.step("maps each group of a 3-D output and names one group", () => {
    const { want, got } = pair([3, 256, 128], (set) => {
      set([2, 0, 0]);
      set([2, 200, 5]);
    });
    const map = mismatchMap(want, got, { groupLabel: "split" });
    assert.deepEqual([map.groups, map.tileRows, map.tileCols], [3, 2, 1]);
    assert.deepEqual(map.perGroup, [0, 0, 2]);
    assert.deepEqual(map.tiles.map((x) => x.group), [2, 2]);
    assert.deepEqual(map.tiles[1].worst.coordinate, [2, 200, 5]);
    assert.equal(map.classification.kind, "one_group");
    assert.match(map.classification.text, /^one split: split 2 only, 2 tiles; 2 of 98304 elements/);
    const lines = formatMismatchMap("d", map);
    assert.match(lines.at(-1)!, /per split: 2: 2/);
  });

  await t.step("compares only the defined elements and marks the other tiles as not compared", () => {
    const { want, got } = pair([128, 256], (set) => {
      set([0, 0]);
      set([0, 200]);
    });
    const defined = new Uint8Array(128 * 256);
    for (let i = 0; i < 128; i++) defined.fill(1, i * 256, i * 256 + 128);
    const map = mismatchMap(want, got, { defined });
    assert.equal(map.compared, 128 * 128);
    assert.equal(map.mismatches, 1);
    assert.deepEqual(map.grid, [1, -1]);
    assert.equal(map.classification.kind, "one_tile");
  });

  await t.step("maps f32 and integer outputs (ULP for floats, |difference| for integers)", () => {
    const f = mismatchMap(
      Tensor.from("f32", [1, 2], new Float32Array([1, 2])),
      Tensor.from("f32", [1, 2], new Float32Array([1, Math.fround(2 + 2 ** -22)])),
    );
    assert.equal(f.worst?.ulp, 1);
    assert.equal(f.worst?.actual.bits, "0x40000001");
    const i = mismatchMap(
      Tensor.from("i32", [3], new Int32Array([1, 2, 3])),
      Tensor.from("i32", [3], new Int32Array([1, 7, 3])),
    );
    assert.deepEqual(i.worst?.coordinate, [1]);
    assert.equal(i.worst?.ulp, 5);
  });

  await t.step("refuses tensors of different dtypes or shapes, and masks of the wrong length", () => {
    assert.throws(() => mismatchMap(Tensor.zeros("bf16", [2]), Tensor.zeros("f32", [2])), /dtypes differ/);
    assert.throws(() => mismatchMap(Tensor.zeros("bf16", [2]), Tensor.zeros("bf16", [3])), /shapes differ/);
    assert.throws(
      () => mismatchMap(Tensor.zeros("bf16", [2]), Tensor.zeros("bf16", [2]), { defined: new Uint8Array(3) }),
      /"defined" has 3 entries for 2 elements/,
    );
  });

  await t.step("is JSON-safe: non-finite values and distances are strings", () => {
    const { want, got } = pair([1, 2], (set) => set([0, 1], 0x7fc0));
    const map = JSON.parse(JSON.stringify(mismatchMap(want, got)));
    assert.equal(map.worst.ulp, "Infinity");
    assert.equal(map.worst.actual.value, "NaN");
  });
});
