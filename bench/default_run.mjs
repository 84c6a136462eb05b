// Times the page's default Run (the form as it opens, Run pressed once: auto's timing, the data,
// every method over every seed, the summary) of two builds of the page in the same session, in
// alternation, each round on a fresh page, in Debian's headless Chromium with WebGPU:
//   node bench/default_run.mjs WEB_DIR_A WEB_DIR_B [ROUNDS]
// Each WEB_DIR is a built web/ folder (web/pkg present), served here with the cross-origin
// isolation the page's shared memory needs. Prints each run's seconds, the medians, B's median
// over A's, and the median of each round's B over its A. BUTTON=#learn-clicks times the Learning
// from clicks button instead of Run.

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import http from "node:http";
import path from "node:path";
import fs from "node:fs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { chromium } = createRequire(path.join(root, "web/package.json"))("playwright-core");
const [dirA, dirB, roundsArg = "3"] = process.argv.slice(2);
if (!dirA || !dirB) {
  console.error("usage: node bench/default_run.mjs WEB_DIR_A WEB_DIR_B [ROUNDS]");
  process.exit(2);
}
const rounds = Number(roundsArg);
const button = process.env.BUTTON ?? "#run";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
  ".css": "text/css", ".json": "application/json", ".png": "image/png", ".svg": "image/svg+xml", ".txt": "text/plain" };

/// Serves `dir` on a free port of 127.0.0.1; resolves to its URL.
function serve(dir) {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    const file = path.join(dir, rel);
    if (!file.startsWith(path.resolve(dir)) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream",
      "Cache-Control": "no-cache",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Embedder-Policy": "require-corp",
    });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}/`)));
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--enable-unsafe-webgpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

/// Seconds from pressing Run to "Done" on a fresh page at `url`.
async function defaultRun(url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`page error: ${e}`));
  await page.goto(url);
  await page.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 120_000 });
  // The page's own data load and worker start-up are done when Run is enabled; let the pool
  // settle as a user's first glance at the form would.
  await page.waitForTimeout(1000);
  const started = Date.now();
  await page.click(button);
  await page.waitForFunction(() => /^(Done|Failed)/.test(document.getElementById("status").textContent), null, { timeout: 600_000 });
  const seconds = (Date.now() - started) / 1000;
  const status = await page.locator("#status").textContent();
  await context.close();
  if (!status.startsWith("Done")) throw new Error(`${url}: ${status}`);
  return seconds;
}

const urls = [await serve(path.resolve(dirA)), await serve(path.resolve(dirB))];
const times = [[], []];
for (let r = 0; r < rounds; r++) {
  // A then B, then B then A: neither always goes first.
  const order = r % 2 === 0 ? [0, 1] : [1, 0];
  for (const k of order) {
    const s = await defaultRun(urls[k]);
    times[k].push(s);
    console.log(`round ${r + 1} ${k === 0 ? "A" : "B"}: ${s.toFixed(2)} s`);
  }
}
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const [a, b] = times.map(median);
// Each round's B over its A, run back to back: the machine's drift between rounds cancels.
const paired = times[1].map((t, r) => t / times[0][r]);
console.log(JSON.stringify({
  a: { dir: dirA, seconds: times[0], median: a },
  b: { dir: dirB, seconds: times[1], median: b },
  ratio_of_medians: b / a,
  paired_ratios: paired.map((x) => Number(x.toFixed(3))),
  median_paired_ratio: median(paired),
}, null, 2));
await browser.close();
process.exit(0);
