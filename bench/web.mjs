// Runs web/bench.html in Debian's headless Chromium with WebGPU and prints its JSON result:
//   node bench/web.mjs http://127.0.0.1:PORT/ [QUERY]     (`cargo xtask bench-web` does it all)

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { chromium } = createRequire(path.join(root, "web/package.json"))("playwright-core");
const [url, query = ""] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--enable-unsafe-webgpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage();
page.on("pageerror", (e) => console.error(`page error: ${e}`));
await page.goto(new URL(`bench.html${query ? "?" + query : ""}`, url).href);
await page.waitForFunction(() => window.benchResult, null, { timeout: 1_800_000 });
const result = await page.evaluate(() => window.benchResult);
console.log(JSON.stringify(result, null, 2));
await browser.close();
process.exit(result.error ? 1 : 0);
