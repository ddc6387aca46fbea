/**
 * Worker entry of the GEMM references' parallel evaluation ({@link ./evaluate_parallel.ts}): evaluates the tile
 * chunks of the jobs it is sent (operands in SharedArrayBuffers) and posts back D indices and values (transferred,
 * not copied).
 * @module
 */
import { serveWorker } from "../parallel/serve_worker.ts";
import { evaluateTiles, type Tile, type TileResults } from "./engine.ts";
import type { GemmJob } from "./job.ts";

serveWorker<GemmJob, Tile[], TileResults>(
  evaluateTiles,
  (res) => [res.index.buffer as ArrayBuffer, res.value.buffer as ArrayBuffer],
);
