import assert from "node:assert/strict";
import { calcDiff } from "../../reference/compare/mod.ts";

Deno.test("calcDiff()", async (t) => {
  await t.step(
    "returns 0 for identical inputs",
    () => assert.equal(calcDiff(new Float32Array([1, -2, 3]), [1, -2, 3]), 0),
  );
  await t.step("returns 0 when both inputs are all zero", () => assert.equal(calcDiff([0, 0, 0], [0, -0, 0]), 0));
  await t.step(
    "returns 1 when one input is all zero and the other is not",
    () => assert.equal(calcDiff([0, 0], [1, 2]), 1),
  );
  await t.step("computes 1 − 2Σxy/Σ(x²+y²) in float64", () => {
    // x = [1, 2], y = [1, 3]: Σxy = 7, Σ(x²+y²) = 15 → 1 − 14/15
    assert.equal(calcDiff([1, 2], [1, 3]), 1 - 14 / 15);
    assert.equal(calcDiff([3], [-3]), 2);
  });
  await t.step("equals Σ(x−y)²/Σ(x²+y²) to float64 precision", () => {
    const n = 4096;
    const x = new Float32Array(n).fill(1);
    const y = new Float32Array(n).fill(1);
    y[0] = 1 + 2 ** -10;
    const want = 2 ** -20 / (2 * n + 2 ** -9 + 2 ** -20); // exact identity: 1 − 2Σxy/Σ(x²+y²) = Σ(x−y)²/Σ(x²+y²)
    assert.ok(Math.abs(calcDiff(x, y) - want) <= 4e-16, String(calcDiff(x, y)));
    assert.ok(calcDiff(x, y) > 1e-10);
  });
  await t.step("returns NaN when an input is NaN", () => assert.ok(Number.isNaN(calcDiff([NaN], [1]))));
  await t.step("throws RangeError for different lengths", () => assert.throws(() => calcDiff([1], [1, 2]), RangeError));
  await t.step("throws TypeError for non-arrays", () => assert.throws(() => calcDiff(3 as never, [1]), TypeError));
});
