/** einsum and fp8_einsum (filled in below). @module */
import type { OpSpec } from "./op_spec.ts";
/** The einsum ops. */
export const EINSUM_OPS: OpSpec[] = [];
