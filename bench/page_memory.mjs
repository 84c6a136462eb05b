// The page's pool and its memory, on an upload: the default Run on the CPU engine with N workers,
// once with the data shared (the page cross-origin isolated, as the demo server serves it) and once
// with a copy in every worker (isolation hidden from the page). Prints, for each: the upload's and
// the Run's seconds, each worker's WebAssembly memory, the shared buffer, and the browser's peak
// resident memory (every Chromium process, sampled every 200 ms).
//
//   cargo xtask serve --port 8123 &
//   distillrank data synth --queries 20000 --out /tmp/synth20k.txt
//   node bench/page_memory.mjs http://127.0.0.1:8123/ /tmp/synth20k.txt 4

import { createRequire } from "node:module";
import { execSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(root, "web/package.json"));
const { chromium } = require("playwright-core");

const [url, file, workers = "4"] = process.argv.slice(2);
if (!url || !file) {
  console.error("usage: node bench/page_memory.mjs URL LETOR_FILE [WORKERS]");
  process.exit(2);
}

/// Resident memory of every Chromium process, in bytes.
function browserRss() {
  const out = execSync("ps -eo rss=,comm=", { encoding: "utf8" });
  return out.split("\n").filter((l) => /chrom/i.test(l))
    .reduce((sum, l) => sum + 1024 * Number(l.trim().split(/\s+/)[0]), 0);
}

const gb = (bytes) => (bytes / 2 ** 30).toFixed(2);
const mb = (bytes) => (bytes / 2 ** 20).toFixed(0);

for (const shared of [true, false]) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  let peak = 0;
  const sampler = setInterval(() => { peak = Math.max(peak, browserRss()); }, 200);
  try {
    const page = await (await browser.newContext()).newPage();
    if (!shared) await page.addInitScript(() => Object.defineProperty(window, "crossOriginIsolated", { value: false }));
    await page.goto(new URL(`#backend=cpu&workers=${workers}`, url).href);
    await page.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 120_000 });
    const idle = browserRss();
    let t = performance.now();
    await page.check("input[name=source][value=upload]");
    await page.setInputFiles("#files", file);
    await page.waitForFunction(() => /queries/.test(document.getElementById("stats").textContent), null, { timeout: 600_000 });
    const upload = (performance.now() - t) / 1000;
    t = performance.now();
    await page.click("#run");
    await page.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 1_800_000 });
    const run = (performance.now() - t) / 1000;
    const status = await page.locator("#status").textContent();
    const box = page.locator("#pool-memory");
    const buffer = Number(await box.getAttribute("data-shared") ?? 0);
    const held = ((await box.getAttribute("data-workers")) ?? "").split(",").map(Number);
    console.log(`${shared ? "shared" : "a copy per worker"}: upload ${upload.toFixed(1)} s, Run ${run.toFixed(1)} s ` +
      `(${status.slice(0, 60)}...)`);
    console.log(`  workers' wasm memory ${held.map(mb).join(", ")} MB; shared buffer ${mb(buffer)} MB; ` +
      `browser RSS ${gb(idle)} GB idle, peak ${gb(peak)} GB`);
  } finally {
    clearInterval(sampler);
    await browser.close();
  }
}
