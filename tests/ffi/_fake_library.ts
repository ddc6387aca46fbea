// Tiny fake kernel libraries, compiled by the tests with g++: another ABI version, a missing symbol, a backend with
// no operations.
import { fileURLToPath } from "node:url";

const HEADER_DIR = fileURLToPath(new URL("../../kernels/", import.meta.url));

/** Library functions every fake needs, with `abi` as its go_abi_version. */
function base(abi: number, omit: readonly string[]): string {
  const fns: Record<string, string> = {
    go_abi_version: `int32_t go_abi_version(void) { return ${abi}; }`,
    go_last_error: `const char* go_last_error(void) { return "fake"; }`,
    go_backend_info: `int32_t go_backend_info(char* buf, uint64_t cap, uint64_t* needed) {
      static const char j[] = "{\\"name\\":\\"fake\\",\\"abi\\":${abi},\\"device\\":\\"none\\",\\"arch\\":\\"none\\",\\"models\\":{}}";
      *needed = sizeof j; if (buf && cap >= sizeof j) { for (unsigned i = 0; i < sizeof j; i++) buf[i] = j[i]; } return 0; }`,
    go_device_count: `int32_t go_device_count(int32_t* c) { *c = 0; return 6; }`,
    go_set_device: `int32_t go_set_device(int32_t d) { (void)d; return 0; }`,
    go_alloc: `int32_t go_alloc(uint64_t b, void** o) { (void)b; *o = 0; return 4; }`,
    go_free: `int32_t go_free(void* p) { (void)p; return 0; }`,
    go_copy_in: `int32_t go_copy_in(void* d, const void* s, uint64_t b) { (void)d; (void)s; (void)b; return 2; }`,
    go_copy_out: `int32_t go_copy_out(void* d, const void* s, uint64_t b) { (void)d; (void)s; (void)b; return 2; }`,
    go_synchronize: `int32_t go_synchronize(void) { return 0; }`,
  };
  return `#include "gemm_oracle.h"\nextern "C" {\n${
    Object.entries(fns).filter(([k]) => !omit.includes(k)).map(([, v]) => v).join("\n")
  }\n}\n`;
}

/**
 * Compiles a fake library into `dir` and returns its absolute path.
 * @param abi the ABI version it reports
 * @param omit required symbols to leave out
 */
export async function buildFake(dir: string, name: string, abi: number, omit: readonly string[] = []): Promise<string> {
  const src = `${dir}/${name}.cpp`, lib = `${dir}/lib${name}.so`;
  await Deno.writeTextFile(src, base(abi, omit));
  const out = await new Deno.Command("g++", {
    args: ["-shared", "-fPIC", "-I", HEADER_DIR, "-o", lib, src],
    stderr: "piped",
  })
    .output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return lib;
}
