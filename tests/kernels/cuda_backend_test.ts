// The CUDA backend on a GPU: the edge suite, bit for bit against the reference. Where no NVIDIA GPU or driver is
// present the test is reported as ignored, with the reason in its name; it never passes silently.
import assert from "node:assert/strict";
import { gpuPresent, openBackend } from "../../ffi/backend.ts";
import { runCase } from "../../cli/verify/runner.ts";
import { inProcessExecutor } from "../../cli/verify/executors.ts";
import { edgeSuite } from "../../cli/verify/suites.ts";

const gpu = gpuPresent();

Deno.test({
  name: gpu
    ? "cuda backend: edge suite"
    : "cuda backend: edge suite (ignored: no NVIDIA GPU or driver, /dev/nvidiactl absent)",
  ignore: !gpu,
  async fn(t) {
    using backend = await openBackend("cuda");
    let passed = 0;
    for (const c of edgeSuite()) {
      await t.step(`${c.id} equals the reference bit for bit`, async () => {
        const [r] = await runCase(c, [{ name: "cuda", exec: inProcessExecutor(backend) }]);
        assert.ok(r.status === "pass" || r.status === "skip", `${r.status}: ${r.message ?? ""}`);
        if (r.status === "pass") {
          assert.equal(r.mismatches, 0);
          assert.ok(r.elements > 0);
          passed++;
        }
      });
    }
    // every edge case has an SM90 entry in the ABI: a run that skipped them all would prove nothing
    assert.equal(passed, edgeSuite().length);
  },
});
