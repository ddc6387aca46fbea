/**
 * Test helpers: a headless Chromium (Debian's `chromium` package, installed with apt where it is missing and apt
 * works quickly, else the reason it cannot run), pages rendered to a DOM dump with the console captured, or to a
 * PNG screenshot, and a small PNG decoder to look at the screenshot's pixels.
 * @module
 * @private
 */

/** How long installing the browser may take before the browser tests are skipped. */
const INSTALL_TIMEOUT_MS = 240_000;

const CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

async function which(name: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("sh", { args: ["-c", `command -v ${name}`], stdout: "piped", stderr: "null" })
      .output();
    const path = new TextDecoder().decode(out.stdout).trim();
    return out.success && path ? path : undefined;
  } catch {
    return undefined;
  }
}

async function findBrowser(): Promise<string | undefined> {
  const explicit = Deno.env.get("GEMM_ORACLE_CHROMIUM");
  if (explicit) return explicit;
  for (const c of CANDIDATES) {
    const p = await which(c);
    if (p) return p;
  }
  return undefined;
}

/**
 * The browser's path, or why there is none: installs Debian's `chromium` with apt-get where it is missing (as root,
 * within 4 minutes; GEMM_ORACLE_NO_BROWSER_INSTALL=1 forbids it).
 */
export async function chromium(): Promise<{ path: string } | { reason: string }> {
  const found = await findBrowser();
  if (found) return { path: found };
  if (Deno.build.os !== "linux") return { reason: `no Chromium on PATH (${Deno.build.os})` };
  if (Deno.env.get("GEMM_ORACLE_NO_BROWSER_INSTALL") === "1") {
    return { reason: "no Chromium on PATH and GEMM_ORACLE_NO_BROWSER_INSTALL=1" };
  }
  const apt = await which("apt-get");
  if (!apt) return { reason: "no Chromium on PATH and no apt-get to install it" };
  const uid = Deno.uid?.();
  const sudo = uid === 0 ? [] : (await which("sudo")) ? ["sudo", "-n"] : null;
  if (sudo === null) return { reason: "no Chromium on PATH, and installing it needs root (no sudo)" };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), INSTALL_TIMEOUT_MS);
  try {
    const out = await new Deno.Command(sudo.length ? sudo[0] : apt, {
      args: [...sudo.slice(1), ...(sudo.length ? [apt] : []), "install", "-y", "--no-install-recommends", "chromium"],
      env: { DEBIAN_FRONTEND: "noninteractive" },
      stdout: "null",
      stderr: "piped",
      signal: controller.signal,
    }).output();
    if (!out.success) {
      const tail = new TextDecoder().decode(out.stderr).trim().split("\n").pop() ?? "";
      return { reason: `apt-get install chromium failed: ${tail}` };
    }
  } catch (e) {
    return {
      reason: controller.signal.aborted
        ? `apt-get install chromium took over ${INSTALL_TIMEOUT_MS / 1000} s`
        : `apt-get: ${(e as Error).message}`,
    };
  } finally {
    clearTimeout(timer);
  }
  const now = await findBrowser();
  return now ? { path: now } : { reason: "apt-get installed chromium but no browser is on PATH" };
}

/** What one headless run of a page gave. */
export interface PageRun {
  /** The DOM after the scripts ran (with `dumpDom`). */
  dom: string;
  /** The page's console messages (Chromium logs them to stderr as `CONSOLE` lines). */
  console: string[];
}

/**
 * Loads a local page in a fresh headless browser profile (no network services) and dumps its DOM, or saves a
 * screenshot.
 * @param browser the browser's path
 * @param page the HTML file
 * @param screenshot where to write a PNG (instead of dumping the DOM), with the window size
 */
export async function loadPage(
  browser: string,
  page: string,
  screenshot?: { file: string; width: number; height: number },
): Promise<PageRun> {
  const profile = await Deno.makeTempDir({ prefix: "oracle_chromium_" });
  try {
    const args = [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      "--enable-logging=stderr",
      "--v=0",
      ...(screenshot
        ? [`--screenshot=${screenshot.file}`, `--window-size=${screenshot.width},${screenshot.height}`]
        : ["--dump-dom"]),
      `file://${page}`,
    ];
    const out = await new Deno.Command(browser, {
      args,
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(45_000),
    }).output();
    const dec = new TextDecoder();
    const err = dec.decode(out.stderr);
    if (!out.success) throw new Error(`${browser} exited with ${out.code}: ${err.slice(-2000)}`);
    return { dom: dec.decode(out.stdout), console: err.split("\n").filter((l) => /:CONSOLE[:(]/.test(l)) };
  } finally {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/** A decoded PNG: width, height and RGBA pixels. */
export interface Image {
  width: number;
  height: number;
  rgba: Uint8Array;
}

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are).
 * @param bytes the file
 * @returns the pixels
 */
export async function decodePng(bytes: Uint8Array): Promise<Image> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0) !== 0x89504e47) throw new Error("not a PNG");
  let o = 8, width = 0, height = 0, colour = 0;
  const idat: Uint8Array[] = [];
  while (o < bytes.length) {
    const len = view.getUint32(o), type = String.fromCharCode(...bytes.subarray(o + 4, o + 8));
    const body = bytes.subarray(o + 8, o + 8 + len);
    if (type === "IHDR") {
      width = view.getUint32(o + 8);
      height = view.getUint32(o + 12);
      if (body[8] !== 8 || body[12] !== 0) throw new Error("only 8-bit non-interlaced PNGs are decoded here");
      colour = body[9];
    } else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    o += 12 + len;
  }
  const channels = colour === 6 ? 4 : colour === 2 ? 3 : 0;
  if (channels === 0) throw new Error(`PNG colour type ${colour} is not decoded here`);
  const joined = new Uint8Array(idat.reduce((n, c) => n + c.length, 0));
  idat.reduce((at, c) => (joined.set(c, at), at + c.length), 0);
  const raw = await inflate(joined);
  const stride = width * channels;
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = v & 0xff;
    }
  }
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba[i * 4] = px[i * channels];
    rgba[i * 4 + 1] = px[i * channels + 1];
    rgba[i * 4 + 2] = px[i * channels + 2];
    rgba[i * 4 + 3] = channels === 4 ? px[i * channels + 3] : 255;
  }
  return { width, height, rgba };
}

/** Pixels whose colour passes a test. */
export function countPixels(img: Image, test: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < img.width * img.height; i++) {
    if (test(img.rgba[i * 4], img.rgba[i * 4 + 1], img.rgba[i * 4 + 2])) n++;
  }
  return n;
}
