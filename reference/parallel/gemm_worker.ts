/**
 * Worker entry: evaluates the tiles it is sent and posts back D indices and values (transferred, not copied).
 * @module
 */
import { evaluateTiles, type Tile } from "../gemm/engine.ts";
import type { GemmJob } from "../gemm/job.ts";

// deno-lint-ignore no-explicit-any
const scope = self as any;
scope.onmessage = (e: MessageEvent<{ job: GemmJob; tiles: Tile[] }>) => {
  try {
    const res = evaluateTiles(e.data.job, e.data.tiles);
    scope.postMessage({ ok: true, res }, [res.index.buffer, res.value.buffer]);
  } catch (err) {
    scope.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
  }
};
