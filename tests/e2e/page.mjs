// The page end to end in Debian's headless Chromium, driven by playwright-core (from web/'s npm
// packages; it never downloads a browser). `cargo xtask test` serves web/ and runs:
//
//   node tests/e2e/page.mjs http://127.0.0.1:PORT/
//
// Prints one line per check and a `test result:` line in cargo's format, which the test runner
// counts; exits non-zero when a check fails. `E2E_ONLY=TEXT` runs only the checks whose names hold
// TEXT (some checks read what earlier ones left on the page). Screenshots go to target/e2e/ (page.png, objectives.png);
// the README's two pictures (docs/page.png after the default Run, docs/page-objectives.png after
// the objectives' run) are taken here too, from the page as it is, so they cannot drift from it.

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import zlib from "node:zlib";
import { spawnSync } from "node:child_process";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(path.join(root, "web/package.json"));
const { chromium } = require("playwright-core");

const url = process.argv[2];
if (!url) {
  console.error("usage: node tests/e2e/page.mjs URL");
  process.exit(2);
}
const shots = path.join(root, "target/e2e");
fs.mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--enable-unsafe-webgpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 1300 }, acceptDownloads: true });
const page = await context.newPage();
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(String(e)));
page.on("console", (m) => { if (m.type() === "error") pageErrors.push(m.text()); });
// Main-thread tasks over 50 ms, as the browser reports them.
await page.addInitScript(() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
});

let passed = 0;
let failed = 0;
// E2E_ONLY=TEXT[,TEXT...] runs the checks whose names hold one of the TEXTs (the others are not
// counted).
const only = process.env.E2E_ONLY?.split(",");
async function check(name, body) {
  if (only && !only.some((o) => name.includes(o))) return;
  const started = Date.now();
  try {
    await body();
    passed++;
    console.log(`test e2e::${name} ... ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    console.log(`test e2e::${name} ... FAILED\n    ${String(e.stack ?? e).split("\n").join("\n    ")}`);
    await page.screenshot({ path: path.join(shots, `failed-${name}.png`), fullPage: true }).catch(() => {});
  }
}
function expect(cond, what) {
  if (!cond) throw new Error(what);
}

/// The results table as {method: [cells]} once it has one row per method.
async function resultsTable() {
  return page.$$eval("#results tbody tr", (rows) =>
    Object.fromEntries(rows.map((r) => {
      const cells = [...r.querySelectorAll("td")].map((td) => td.textContent.trim());
      return [cells[0], cells.slice(1)];
    })));
}

async function setField(name, value) {
  await page.locator(`[name=${name}]`).first().fill(String(value));
  await page.locator(`[name=${name}]`).first().dispatchEvent("change");
}

async function runAndWait(timeoutMs) {
  const before = await page.locator("#status").textContent();
  // The status of an earlier run must not count as this one's.
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.click("#run");
  await page.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: timeoutMs });
  const status = await page.locator("#status").textContent();
  const error = await page.locator("#error").isVisible() ? await page.locator("#error-text").textContent() : "";
  expect(status.startsWith("Done"), `the run failed: ${status} ${error} (before: ${before})`);
  return status;
}

// Requests in flight, named when the page fails to load.
const inFlight = new Set();
page.on("request", (r) => inFlight.add(r.url()));
page.on("requestfinished", (r) => inFlight.delete(r.url()));
page.on("requestfailed", (r) => inFlight.delete(r.url()));
try {
  await page.goto(url);
} catch (e) {
  console.log(`the page did not load: ${e.message.split("\n")[0]}; requests in flight: ${[...inFlight].join(", ") || "none"}`);
  throw e;
}

await check("page_starts_its_engine", async () => {
  await page.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 60_000 });
  const engine = await page.locator("#engine").textContent();
  expect(/WebGPU|CPU engine/.test(engine), `engine line: ${engine}`);
  console.log(`    engine: ${engine}`);
});

// Every control has an accessible name: an aria-label, a <label for>, or an enclosing <label>
// of which it is the first control (a label names only its first one, so a number field beside a
// checkbox in one label needs its own aria-label).
await check("every_control_has_an_accessible_name", async () => {
  const unnamed = await page.evaluate(() => {
    const controls = [...document.querySelectorAll("input, select, textarea")].filter((c) => c.type !== "hidden");
    return controls
      .filter((c) => {
        if (c.getAttribute("aria-label") || c.getAttribute("aria-labelledby")) return false;
        if (c.id && document.querySelector(`label[for="${c.id}"]`)) return false;
        const label = c.closest("label");
        return !(label && label.querySelector("input, select, textarea") === c);
      })
      .map((c) => c.id || c.name || c.outerHTML.slice(0, 60));
  });
  expect(unnamed.length === 0, `controls without an accessible name: ${unnamed.join(", ")}`);
});

await check("form_reads_the_table_of_settings", async () => {
  // Bounds, tooltips and starting values come from crate/settings.rs: the page's lighter start
  // where the table gives one (400 queries, 3 objective seeds), the library's default elsewhere.
  const form = await page.evaluate(() => {
    const at = (name) => document.querySelector(`[name=${name}]`);
    return {
      queries: [at("queries").value, at("queries").title, at("queries").min, at("queries").step],
      seeds: [at("seeds").value, at("seeds").max],
      lr: [at("lr").value, at("lr").step],
      batch: at("batch_docs").value,
      objSeeds: at("obj_seeds").value,
      objEpochs: at("obj_epochs").value,
      methods: [...document.querySelectorAll("input[name=method]:checked")].map((b) => b.value).join(","),
    };
  });
  expect(form.queries[0] === "400" && form.queries[1].startsWith("Query groups to generate") &&
    form.queries[1].includes("1..=10,000,000") && form.queries[2] === "1" && form.queries[3] === "1",
  `queries: ${JSON.stringify(form.queries)}`);
  expect(form.seeds[0] === "5" && form.seeds[1] === "10000", `seeds: ${JSON.stringify(form.seeds)}`);
  expect(form.lr[0] === "0.001" && form.lr[1] === "any", `lr: ${JSON.stringify(form.lr)}`);
  expect(form.batch === "512" && form.objSeeds === "3" && form.objEpochs === "30", JSON.stringify(form));
  expect(form.methods === "no-distillation,self-distillation,gend,pfd", `methods: ${form.methods}`);
});

await check("choices_come_from_the_librarys_entries", async () => {
  // A checkbox per method and an option per loss, in the entries' order, each with its help as
  // the tooltip and each method with its chart colour: the engine's own list, not the page's.
  await page.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 60_000 });
  const page_ = await page.evaluate(() => ({
    methods: [...document.querySelectorAll("input[name=method]")].map((b) => [b.value, b.title, b.parentElement.textContent.trim()]),
    losses: [...document.querySelectorAll("select[name=loss] option")].map((o) => [o.value, o.title, o.textContent]),
  }));
  const library = await page.evaluate(async () => {
    const { state } = await import("./js/state.js");
    return state.choices;
  });
  expect(library && library.methods.length >= 6 && library.losses.length >= 4, `choices: ${JSON.stringify(library)}`);
  expect(JSON.stringify(page_.methods) === JSON.stringify(library.methods.map((m) => [m.name, m.help, m.label])),
    `method checkboxes: ${JSON.stringify(page_.methods)}`);
  expect(JSON.stringify(page_.losses) === JSON.stringify(library.losses.map((l) => [l.name, l.help, `${l.label} (${l.family})`])),
    `loss options: ${JSON.stringify(page_.losses)}`);
  const colours = await page.evaluate(async () => (await import("./js/charts.js")).METHOD_COLOURS);
  for (const m of library.methods) expect(colours[m.name] === m.colour, `${m.name}'s colour: ${colours[m.name]}`);
  console.log(`    methods: ${page_.methods.map((m) => m[0]).join(", ")}; losses: ${page_.losses.map((l) => l[0]).join(", ")}`);
});

let pooledTable = null;
let pooledSeconds = null;
await check("default_comparison_fills_the_table", async () => {
  await page.evaluate(() => {
    window.__runStart = performance.now();
    // What the workers were doing, sampled while the run goes on.
    window.__activity = new Set();
    window.__activityTimer = setInterval(() => {
      const text = document.getElementById("workers-activity").textContent;
      if (text) window.__activity.add(text.split(":")[0]);
    }, 50);
  });
  const status = await runAndWait(600_000);
  const seen = await page.evaluate(() => {
    window.__runEnd = performance.now();
    clearInterval(window.__activityTimer);
    return [...window.__activity];
  });
  console.log(`    ${status}`);
  console.log(`    worker lines seen: ${seen.join(", ")}`);
  const cores = await page.evaluate(() => Math.min(navigator.hardwareConcurrency || 1, 8));
  const workers = cores > 1 ? `${cores} workers` : "1 worker";
  expect(seen.includes(workers), `the page did not show "${workers}" at work: ${seen}`);
  // auto timed both engines on this model and says which it took and why.
  const engine = await page.locator("#engine").textContent();
  expect(/auto chose (WebGPU|the CPU engine): CPU engine [\d,]+ docs\/s \(\d+ workers?\), WebGPU [\d,]+ docs\/s/.test(engine),
    `engine line after an auto run: ${engine}`);
  console.log(`    ${engine.slice(engine.indexOf("auto chose"))}`);
  const table = await resultsTable();
  pooledTable = table;
  pooledSeconds = parseFloat(status.match(/Done in ([\d.]+) s/)[1]);
  for (const m of ["no-distillation", "self-distillation", "gend", "pfd"]) {
    expect(table[m], `no row for ${m}: ${JSON.stringify(table)}`);
    const ndcg8 = parseFloat(table[m][3]);
    expect(Number.isFinite(ndcg8) && ndcg8 > 0 && ndcg8 <= 1, `${m} NDCG@8 = ${table[m][3]}`);
    console.log(`    ${m}: NDCG@8 ${table[m][3]}, gain ${table[m][5]}`);
  }
  const datasets = await page.evaluate(() => Chart.getChart("ndcg-chart").data.datasets.length);
  expect(datasets >= 4, `the NDCG chart has ${datasets} lines`);
  // After the run: each method's mean over the seeds with its band; the seeds' own curves on
  // request.
  const curves = () => page.evaluate(() => Chart.getChart("ndcg-chart").data.datasets
    .map((d) => ({ key: d.key, hidden: !!d.hidden, fill: d.fill ?? false })));
  let shown = await curves();
  for (const m of ["no-distillation", "self-distillation", "gend", "pfd"]) {
    expect(shown.some((d) => d.key === `${m}:mean` && !d.hidden), `no mean curve for ${m}: ${JSON.stringify(shown.map((d) => d.key))}`);
    expect(shown.some((d) => d.key === `${m}:high` && d.fill === "-1"), `no band for ${m}`);
  }
  expect(shown.filter((d) => d.key.includes("/")).every((d) => d.hidden), "the seeds' curves show without being asked for");
  await page.check("#show-seeds");
  shown = await curves();
  expect(shown.filter((d) => d.key.includes("/")).length >= 20 && shown.filter((d) => d.key.includes("/")).every((d) => !d.hidden),
    "the seeds' curves do not show when asked for");
  await page.uncheck("#show-seeds");
  // The verdict first: one line per tested pair, in plain words; colour and bold only where the
  // test separates the method from no distillation.
  const verdict = await page.$$eval("#verdict p", (ps) => ps.map((p) => ({
    a: p.dataset.a, b: p.dataset.b, separates: p.classList.contains("separates"), text: p.textContent })));
  expect(verdict.length >= 5, `verdict lines: ${JSON.stringify(verdict)}`);
  for (const v of verdict) {
    expect(v.separates === / (beats|does worse than) /.test(v.text), `a bold line is one the test separates: ${JSON.stringify(v)}`);
    console.log(`    verdict: ${v.text}`);
  }
  const marked = await page.$$eval("#results tbody tr", (trs) => trs.map((tr) => ({
    method: tr.dataset.method, bold: tr.classList.contains("best"),
    coloured: !!tr.querySelector(".gain-up, .gain-down") })));
  for (const row of marked) {
    const separated = verdict.some((v) => v.a === row.method && v.b === "no-distillation" && v.separates);
    expect(!(row.bold || row.coloured) || separated, `${row.method} is marked though its test does not separate it: ${JSON.stringify(row)}`);
  }
  await page.screenshot({ path: path.join(shots, "page.png"), fullPage: true });
  await page.screenshot({ path: path.join(root, "docs/page.png"), fullPage: true });
  // The page's figures are its command's: the CLI on the page's own setup.json, on the CPU engine
  // as auto chose here, gives the same means on this full default run (see expectSameFigures).
  if (/auto chose the CPU engine/.test(engine)) {
    const { onPage, byCli } = await pageAndCli(page, (setup) => { setup.backend = "cpu"; });
    expectSameFigures(onPage, byCli, "the default Run");
  }
});

/// Every method's figures (NDCG on y and graded, at every k, and its teacher's) of two
/// results.json: the same methods, and each mean over seeds within two standard errors of the
/// difference of the two means (a band of about 95%). Exact equality is not asked on a full run: the native build
/// multiplies with fused multiply-adds, WebAssembly has none, so one rounding differs at the
/// first step and a ranking flips now and then over 12 epochs. The log says how many per-seed
/// figures agree to the bit and the widest gap.
function expectSameFigures(onPage, byCli, what) {
  const methods = Object.keys(onPage.methods);
  expect(methods.length > 0 && methods.sort().join() === Object.keys(byCli.methods).sort().join(),
    `${what}: methods ${methods} on the page, ${Object.keys(byCli.methods)} from the CLI`);
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const std = (xs) => Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
  const seeds = onPage.methods[methods[0]]["ndcg@8"].per_seed.length;
  let [equal, all, widest] = [0, 0, { gap: 0 }];
  for (const m of methods) {
    for (const key of Object.keys(onPage.methods[m]).filter((k) => /ndcg@\d+$/.test(k))) {
      const [a, b] = [onPage.methods[m][key], byCli.methods[m][key]];
      const shown = `${what}: ${m} ${key}: page ${JSON.stringify(a)}, CLI ${JSON.stringify(b)}`;
      // A method's own figures carry every seed; its teacher's, the mean and spread over seeds.
      const summary = (x) => (x?.per_seed ? { mean: mean(x.per_seed), std: std(x.per_seed) } : x);
      const [sa, sb] = [summary(a), summary(b)];
      expect(Number.isFinite(sa?.mean) && Number.isFinite(sb?.mean), shown);
      if (a.per_seed) {
        expect(b.per_seed?.length === a.per_seed.length, shown);
        equal += a.per_seed.filter((x, i) => x === b.per_seed[i]).length;
        all += a.per_seed.length;
      }
      const gap = Math.abs(sa.mean - sb.mean);
      const stderr = Math.sqrt((sa.std ** 2 + sb.std ** 2) / seeds);
      expect(gap <= 2 * stderr, `${shown}: the means further apart than two standard errors (${(2 * stderr).toFixed(4)})`);
      if (gap > widest.gap) widest = { gap, m, key, stderr };
    }
  }
  console.log(`    ${what}, page against CLI: ${equal} of ${all} per-seed figures equal to the bit; ` +
    (widest.gap ? `widest gap of means ${widest.gap.toFixed(4)} (${widest.m} ${widest.key}, one standard error ${widest.stderr.toFixed(4)})` : "every mean equal"));
  for (const m of methods) {
    console.log(`    ${m}: ndcg@8 page ${mean(onPage.methods[m]["ndcg@8"].per_seed).toFixed(4)}, CLI ${mean(byCli.methods[m]["ndcg@8"].per_seed).toFixed(4)}`);
  }
}

await check("one_worker_gives_the_same_numbers", async () => {
  await setField("workers", 1);
  const status = await runAndWait(600_000);
  const table = await resultsTable();
  const seconds = parseFloat(status.match(/Done in ([\d.]+) s/)[1]);
  expect(!/workers/.test(status), `one worker: ${status}`);
  expect(JSON.stringify(table) === JSON.stringify(pooledTable),
    `one worker: ${JSON.stringify(table)}\n    the pool: ${JSON.stringify(pooledTable)}`);
  console.log(`    default Run: ${seconds.toFixed(1)} s with one worker, ${pooledSeconds.toFixed(1)} s with the pool ` +
    `(${(seconds / pooledSeconds).toFixed(2)}x); the same table`);
  await setField("workers", "auto");
});

// Training runs in the workers, so the main thread stays free while it goes on: the share of the
// run's wall time that main-thread tasks over 50 ms took. A share, not a duration: on a loaded
// machine the run and its main-thread tasks stretch alike (a bound of 100 ms on the longest task
// failed at load 6), while training on the main thread would hold it for most of the run. The
// longest task is printed for BENCHMARKS.md, not bounded.
await check("training_keeps_the_page_responsive", async () => {
  const { tasks, wall } = await page.evaluate(() => ({
    tasks: window.__longTasks.filter((t) => t.start >= window.__runStart && t.start < window.__runEnd),
    wall: window.__runEnd - window.__runStart,
  }));
  const busy = tasks.reduce((sum, t) => sum + t.duration, 0);
  const longest = Math.max(0, ...tasks.map((t) => t.duration));
  const share = busy / wall;
  console.log(`    ${tasks.length} main-thread tasks over 50 ms in the ${(wall / 1000).toFixed(1)} s run: ` +
    `${busy.toFixed(0)} ms, ${(100 * share).toFixed(1)}% of it; longest ${longest.toFixed(0)} ms`);
  expect(share <= 0.25, `main-thread tasks over 50 ms held the page for ${(100 * share).toFixed(1)}% of the run`);
});

await check("results_and_student_export", async () => {
  const [json] = await Promise.all([page.waitForEvent("download"), page.click("#export-json")]);
  const results = JSON.parse(fs.readFileSync(await json.path(), "utf8"));
  expect(Number.isFinite(results.methods.pfd["ndcg@8"].mean), "results.json has methods.pfd.ndcg@8.mean");
  const [csv] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
  const lines = fs.readFileSync(await csv.path(), "utf8").trim().split("\n");
  expect(lines[0].startsWith("method,seed") && lines.length > 4, `CSV: ${lines[0]} (${lines.length} lines)`);
  await page.selectOption("#student-method", "pfd");
  const downloads = [];
  page.on("download", (d) => downloads.push(d));
  await page.click("#export-student");
  await page.waitForFunction(() => true);
  for (let i = 0; i < 50 && downloads.length < 2; i++) await page.waitForTimeout(100);
  const names = downloads.map((d) => d.suggestedFilename()).sort();
  expect(names.join() === "pfd.json,pfd.safetensors", `student files: ${names}`);
  const config = JSON.parse(fs.readFileSync(await downloads.find((d) => d.suggestedFilename() === "pfd.json").path(), "utf8"));
  expect(config.format === "distillrank-model" && config.columns.length > 0, `student config: ${JSON.stringify(config)}`);
  const weights = fs.readFileSync(await downloads.find((d) => d.suggestedFilename() === "pfd.safetensors").path());
  expect(weights.length > 1000, `safetensors of ${weights.length} bytes`);
  // The paired tests under the table: one sentence per gain, as the CLI's report writes them.
  const sentences = await page.locator("#results-tests li").allTextContents();
  expect(sentences.some((s) => /^pfd − no-distillation: [+−]?\d\.\d{4} .*on \d+ queries × 5 seeds/.test(s)),
    `the tests' sentences: ${JSON.stringify(sentences)}`);
  expect(Array.isArray(results.tests) && results.tests.length >= 5 && Array.isArray(results.per_query.pfd),
    `results.json's tests and per_query: ${JSON.stringify(results.tests).slice(0, 200)}`);
  console.log(`    ${sentences.find((s) => s.startsWith("pfd − gend")) ?? sentences[0]}`);
  // The student as ONNX: a protobuf of the whole input path.
  const [onnx] = await Promise.all([page.waitForEvent("download"), page.click("#export-onnx")]);
  const onnxBytes = fs.readFileSync(await onnx.path());
  expect(onnx.suggestedFilename() === "pfd.onnx" && onnxBytes.length > 1000 && onnxBytes.includes("distillrank"),
    `ONNX download: ${onnx.suggestedFilename()}, ${onnxBytes.length} bytes`);
  // The downloaded student loads back into the page and scores the test split.
  const saved = path.join(os.tmpdir(), "distillrank-e2e-student");
  fs.mkdirSync(saved, { recursive: true });
  for (const d of downloads) await d.saveAs(path.join(saved, d.suggestedFilename()));
  await page.setInputFiles("#model-files", ["pfd.safetensors", "pfd.json"].map((f) => path.join(saved, f)));
  await page.waitForFunction(() => /NDCG@8 0\.\d{4}/.test(document.getElementById("model-score").textContent), null, { timeout: 30_000 });
  console.log(`    ${await page.locator("#model-score").textContent()}`);
  // The same files chosen again score again (a file input fires only when its files change; the
  // page empties it after reading).
  await page.evaluate(() => { document.getElementById("model-score").textContent = ""; });
  await page.setInputFiles("#model-files", ["pfd.safetensors", "pfd.json"].map((f) => path.join(saved, f)));
  await page.waitForFunction(() => /NDCG@8 0\.\d{4}/.test(document.getElementById("model-score").textContent), null, { timeout: 30_000 });
});

await check("setup_is_kept_in_the_url", async () => {
  await setField("alpha", "0.7");
  await page.uncheck("input[name=method][value=gend]");
  await setField("obj_dual", "300");
  const link = page.url();
  expect(link.includes("alpha=0.7"), `URL: ${link}`);
  const other = await context.newPage();
  await other.goto(link);
  const alpha = await other.locator("[name=alpha]").inputValue();
  const gend = await other.locator("input[name=method][value=gend]").isChecked();
  const pfd = await other.locator("input[name=method][value=pfd]").isChecked();
  const dual = await other.locator("[name=obj_dual]").inputValue();
  await other.close();
  expect(alpha === "0.7" && !gend && pfd && dual === "300", `after opening the link: alpha ${alpha}, gend ${gend}, pfd ${pfd}, dual rate ${dual}`);
  await setField("alpha", "0.5");
  await page.check("input[name=method][value=gend]");
  await setField("obj_dual", "1000");
});

await check("setup_shows_its_command_and_travels_as_json", async () => {
  await page.waitForFunction(() => document.getElementById("setup-command").textContent.startsWith("distillrank compare"),
    null, { timeout: 30_000 });
  const command = await page.locator("#setup-command").textContent();
  const epochs = await page.locator("[name=epochs]").inputValue();
  expect(command.includes(`--epochs ${epochs}`) && command.includes("--queries"), `command: ${command}`);
  const differences = await page.locator("#setup-differences").textContent();
  expect(/epochs/.test(differences) && /default 20/.test(differences), `differences: ${differences}`);
  console.log(`    ${command}`);
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#setup-download")]);
  const setup = JSON.parse(fs.readFileSync(await download.path(), "utf8"));
  expect(setup.epochs === Number(epochs) && setup.data.source.synthetic.options.queries > 0 && setup.note,
    `setup.json: ${JSON.stringify(setup).slice(0, 300)}`);
  // Open a setup: the form takes its values.
  const opened = path.join(os.tmpdir(), "distillrank-e2e-setup.json");
  fs.writeFileSync(opened, JSON.stringify({ ...setup, epochs: 7, loss: "softmax", methods: ["no-distillation", "pfd"] }));
  await page.setInputFiles("#setup-file", opened);
  await page.waitForFunction(() => document.querySelector("[name=epochs]").value === "7", null, { timeout: 10_000 });
  const loss = await page.locator("[name=loss]").inputValue();
  const gend = await page.locator("input[name=method][value=gend]").isChecked();
  const after = await page.locator("#setup-command").textContent();
  expect(loss === "softmax" && !gend && after.includes("--loss softmax"), `after opening: loss ${loss}, gend ${gend}, ${after}`);
  // Back to the page's own setup.
  fs.writeFileSync(opened, JSON.stringify(setup));
  await page.setInputFiles("#setup-file", opened);
  await page.waitForFunction((e) => document.querySelector("[name=epochs]").value === e, epochs, { timeout: 10_000 });
});

await check("small_comparison_on_webgpu", async () => {
  const hasGpu = await page.locator("select[name=backend] option[value=webgpu]").count();
  expect(hasGpu === 1, "no WebGPU option");
  await page.selectOption("select[name=backend]", "webgpu");
  for (const [k, v] of [["queries", 30], ["valid_queries", 10], ["test_queries", 10], ["epochs", 2], ["seeds", 1], ["widths", "16"]]) {
    await setField(k, v);
  }
  for (const m of ["self-distillation", "gend"]) await page.uncheck(`input[name=method][value=${m}]`);
  const engine = await page.locator("#engine").textContent();
  expect(engine.startsWith("Training on WebGPU"), `engine: ${engine}`);
  const status = await runAndWait(300_000);
  expect(/Gpu|gpu/.test(status), `not trained on the GPU: ${status}`);
  const table = await resultsTable();
  expect(Object.keys(table).sort().join() === "no-distillation,pfd", `rows: ${Object.keys(table)}`);
  for (const m of ["no-distillation", "pfd"]) {
    const ndcg8 = parseFloat(table[m][3]);
    expect(Number.isFinite(ndcg8) && ndcg8 > 0, `${m} NDCG@8 on WebGPU = ${table[m][3]}`);
  }
  console.log(`    ${status}`);
  // The listwise family trains on WebGPU too: its attention kernels in the browser.
  await setField("attention_heads", 2);
  const listwise = await runAndWait(300_000);
  expect(/Gpu|gpu/.test(listwise), `the listwise family not trained on the GPU: ${listwise}`);
  const rows = await resultsTable();
  for (const m of ["no-distillation", "pfd"]) {
    const ndcg8 = parseFloat(rows[m][3]);
    expect(Number.isFinite(ndcg8) && ndcg8 > 0, `${m} NDCG@8 of the listwise family on WebGPU = ${rows[m][3]}`);
  }
  console.log(`    listwise, 2 heads: ${listwise}`);
  await setField("attention_heads", 0);
});

await check("alpha_sweep_plots_pfd_at_five_alphas", async () => {
  await page.selectOption("select[name=backend]", "cpu");
  for (const [k, v] of [["queries", 60], ["valid_queries", 30], ["test_queries", 30], ["epochs", 3], ["seeds", 1]]) {
    await setField(k, v);
  }
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.click("#sweep");
  await page.waitForFunction(() => /^Alpha sweep done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 300_000 });
  const points = await page.evaluate(() => Chart.getChart("sweep-chart").data.datasets.map((d) => [d.key, d.data.map((p) => p.x), d.data.map((p) => p.y)]));
  const pfd = points.find(([k]) => k === "pfd");
  expect(pfd && pfd[1].join() === "0.1,0.3,0.5,0.7,0.9", `sweep points: ${JSON.stringify(points)}`);
  expect(pfd[2].every((y) => Number.isFinite(y) && y > 0), `sweep NDCG@8: ${pfd[2]}`);
  console.log(`    PFD NDCG@8 at alpha 0.1..0.9: ${pfd[2].map((y) => y.toFixed(4)).join(", ")}`);
  // Each alpha's paired test, in the library's words, under the chart.
  const summary = await page.locator("#sweep-summary").textContent();
  expect((summary.match(/alpha [\d.]+: pfd − no-distillation: [+−]?\d\.\d{4} \(95% CI/g) ?? []).length === 5, `sweep summary: ${summary}`);
  console.log(`    ${summary.slice(0, 200)}…`);
});

await check("real_data_pfd_against_gend_with_simulated_logs", async () => {
  await page.selectOption("select[name=backend]", "cpu");
  for (const [k, v] of [["epochs", 3], ["seeds", 2]]) await setField(k, v);
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.click("#real-logs");
  await page.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 300_000 });
  const status = await page.locator("#status").textContent();
  const error = await page.locator("#error").isVisible() ? await page.locator("#error-text").textContent() : "";
  expect(status.startsWith("Done"), `the run failed: ${status} ${error}`);
  expect(/MQ2008/.test(await page.locator("#stats").textContent()), "the bundled MQ2008 statistics are not shown");
  const notes = await page.locator("#run-notes").textContent();
  expect(/Simulated logs \(PBM/.test(notes), `no simulated-logs line: ${notes}`);
  expect(!/Simulated logs/.test(status), `the status keeps progress only: ${status}`);
  const table = await resultsTable();
  expect(Object.keys(table).sort().join() === "gend,no-distillation,pfd", `rows: ${Object.keys(table)}`);
  for (const m of ["no-distillation", "gend", "pfd"]) {
    const ndcg8 = parseFloat(table[m][3]);
    const graded8 = parseFloat(table[m][8]);
    expect(Number.isFinite(ndcg8) && ndcg8 > 0 && ndcg8 <= 1, `${m} NDCG@8 = ${table[m][3]}`);
    expect(Number.isFinite(graded8) && graded8 > 0 && graded8 <= 1, `${m} graded NDCG@8 = ${table[m][8]}`);
    console.log(`    ${m}: NDCG@8 on y ${table[m][3]}, on the grades ${table[m][8]}, teacher ${table[m][7]}, p (Holm) ${table[m][6]}`);
  }
  // The button's answer comes first, in plain words: PFD against GenD, from its paired test.
  const first = await page.locator("#verdict p").first();
  const [a, b, answer] = [await first.getAttribute("data-a"), await first.getAttribute("data-b"), await first.textContent()];
  expect(a === "pfd" && b === "gend" && /^PFD (beats|does worse than|against) GenD/.test(answer), `first verdict: ${a} ${b} ${answer}`);
  const tests = await page.locator("#results-tests").textContent();
  const sentence = tests.slice(tests.indexOf("pfd − gend"));
  expect(/^pfd − gend: [+−]?\d\.\d{4} .*p [=<] [\d.]+ \(Holm\), on \d+ queries × \d+ seeds/.test(sentence), `tests: ${tests}`);
  console.log(`    ${answer}`);
  await page.screenshot({ path: path.join(shots, "real-logs.png"), fullPage: true });
});

await check("learning_from_clicks_button_compares_debiasing_with_distilling", async () => {
  // The button sets MQ2008 with simulated clicks and the six methods of the question, runs them,
  // puts PFD against IPS first among the verdicts and draws the propensities.
  await page.selectOption("select[name=backend]", "cpu");
  for (const [k, v] of [["epochs", 3], ["seeds", 2]]) await setField(k, v);
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.click("#learn-clicks");
  await page.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 300_000 });
  const status = await page.locator("#status").textContent();
  const error = await page.locator("#error").isVisible() ? await page.locator("#error-text").textContent() : "";
  expect(status.startsWith("Done"), `the run failed: ${status} ${error}`);
  const table = await resultsTable();
  const methods = ["naive", "ips", "dla", "two-tower", "pfd", "full-information"];
  expect(Object.keys(table).sort().join() === [...methods].sort().join(), `rows: ${Object.keys(table)}`);
  const first = await page.locator("#verdict p").first();
  const [a, b, answer] = [await first.getAttribute("data-a"), await first.getAttribute("data-b"), await first.textContent()];
  expect(a === "pfd" && b === "ips" && /^PFD (beats|does worse than|against) IPS/.test(answer), `first verdict: ${a} ${b} ${answer}`);
  const tests = await page.locator("#results-tests").textContent();
  expect(/pfd − ips on graded NDCG@8: [+−]?\d\.\d{4} .*p [=<] [\d.]+ \(Holm\)/.test(tests), `tests: ${tests}`);
  expect(await page.locator("#propensity-box").isVisible(), "no propensity chart");
  const drawn = await page.evaluate(() => Chart.getChart("propensity-chart").data.datasets.map((d) => [d.label, d.data.length]));
  const labels = drawn.map(([l]) => l).join("; ");
  expect(drawn.length === 5 && drawn.every(([, n]) => n === 10) && /true/.test(labels) && /dla/.test(labels) && /two-tower/.test(labels),
    `propensity series: ${JSON.stringify(drawn)}`);
  // The link, the command and setup.json describe what the button ran, and its results are fresh.
  const command = await page.locator("#setup-command").textContent();
  expect(/--bundled mq2008/.test(command) && /two-tower/.test(command) && /--loss softmax/.test(command),
    `the command after the button: ${command}`);
  expect(/source=mq2008/.test(page.url()) && /loss=softmax/.test(page.url()), `the link after the button: ${page.url()}`);
  expect(!(await page.evaluate(() => document.getElementById("results-box").classList.contains("stale"))),
    "the button's own results are marked stale");
  console.log(`    ${answer}`);
  await page.screenshot({ path: path.join(shots, "learning-from-clicks.png"), fullPage: true });
});

await check("objectives_view_compares_log_loss_with_global_objectives", async () => {
  for (const [k, v] of [["obj_train", 3000], ["obj_valid", 2000], ["obj_test", 3000], ["obj_seeds", 2], ["obj_epochs", 6]]) {
    await page.locator(`[name=${k}]`).fill(String(v));
  }
  const status = await runObjectives(page);
  expect(status.startsWith("Done"), `objectives: ${status} ${await page.locator("#error-text").textContent()}`);
  const rows = await page.$$eval("#objectives-results tbody tr", (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim())));
  const names = rows.map((r) => r[0]);
  expect(names.join() === "logloss,auc-pr,recall-at-precision:0.8,roc-auc", `objectives: ${names}`);
  for (const r of rows) {
    const aucPr = parseFloat(r[1]);
    expect(Number.isFinite(aucPr) && aucPr > 0 && aucPr <= 1, `${r[0]} test AUC-PR ${r[1]}`);
    console.log(`    ${r[0]}: test AUC-PR ${r[1]}; constraint ${r[7]}`);
  }
  expect(/held on \d of 2 seeds/.test(rows[2][7]), `recall-at-precision constraint cell: ${rows[2][7]}`);
  const lambdas = await page.evaluate(() => Chart.getChart("objectives-lambda-chart").data.datasets.map((d) => d.key));
  expect(lambdas.includes("recall-at-precision:0.8") && lambdas.includes("auc-pr"), `λ lines: ${lambdas}`);
  await page.locator("#objectives-view").screenshot({ path: path.join(shots, "objectives.png") });
  await page.locator("#objectives-view").screenshot({ path: path.join(root, "docs/page-objectives.png") });
  // The same objectives on one worker: the same table.
  await setField("workers", 1);
  await runObjectives(page);
  const again = await page.$$eval("#objectives-results tbody tr", (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim())));
  expect(JSON.stringify(again) === JSON.stringify(rows), `one worker: ${JSON.stringify(again)}\n    the pool: ${JSON.stringify(rows)}`);
  await setField("workers", "auto");
  // The same view on WebGPU, small: every objective trains on the GPU engine too.
  await page.selectOption("select[name=backend]", "webgpu");
  for (const [k, v] of [["obj_train", 600], ["obj_valid", 400], ["obj_test", 600], ["obj_seeds", 1], ["obj_epochs", 2]]) {
    await page.locator(`[name=${k}]`).fill(String(v));
  }
  const onGpu = await runObjectives(page);
  expect(/^Done.* on gpu/.test(onGpu), `objectives on WebGPU: ${onGpu} ${await page.locator("#error-text").textContent()}`);
  console.log(`    ${onGpu.split(":")[0]}`);
  // The default run warned of nothing; a setting none of the objectives reads is named as the
  // CLI names it (log-loss and AUC-ROC hold no constraint, so no multiplier: the dual rate is unread).
  expect((await page.locator("#objectives-warnings").textContent()) === "", "the default objectives warn of nothing");
  const checked = await page.$$eval("input[name=objective]:checked", (boxes) => boxes.map((b) => b.value));
  for (const name of ["auc-pr", "recall-at-precision"]) await page.uncheck(`input[name=objective][value=${name}]`);
  const dual = await page.locator("[name=obj_dual]").inputValue();
  await page.locator("[name=obj_dual]").fill("2");
  await runObjectives(page);
  const unread = await page.locator("#objectives-warnings").textContent();
  expect(/^objectives\.dual_rate_factor 2 is not used: no objective of objectives\.objectives logloss,roc-auc has a constraint/.test(unread),
    `the unread dual rate: ${unread} (${await page.locator("#objectives-status").textContent()})`);
  await page.locator("[name=obj_dual]").fill(dual);
  for (const name of checked) await page.check(`input[name=objective][value=${name}]`);
  // A refusal of the objectives' own setting names their field, not the comparison's.
  const lr = await page.locator("[name=obj_lr]").inputValue();
  await page.locator("[name=obj_lr]").fill("0");
  await runObjectives(page);
  const refused = await page.locator("#error-text").textContent();
  expect(/Learning rate: setup field objectives\.lr = 0/.test(refused), `objectives at lr 0: ${refused}`);
  await page.locator("[name=obj_lr]").fill(lr);
  await page.evaluate(() => { document.getElementById("error").hidden = true; });
  await page.selectOption("select[name=backend]", "cpu");
});

await check("mq2008_upload_shows_its_statistics", async () => {
  await page.check("input[name=source][value=upload]");
  await page.setInputFiles("#files", path.join(root, "target/data/mq2008/Fold1/train.txt"));
  await page.waitForFunction(() => /471 queries/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
  // The threshold is the library's for files (empty: the largest training grade + 0.8).
  const tau = await page.locator("[name=tau_target]").inputValue();
  expect(tau === "", `tau_target after an upload: ${tau}`);
});

await check("malformed_upload_names_its_line", async () => {
  const bad = path.join(os.tmpdir(), "distillrank-e2e-bad.txt");
  fs.writeFileSync(bad, "2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:0.3\n1 qid:2 1:zebra 2:0.4\n");
  await page.setInputFiles("#files", bad);
  await page.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
  const text = await page.locator("#error-text").textContent();
  expect(/distillrank-e2e-bad\.txt:3:/.test(text), `error: ${text}`);
  console.log(`    ${text}`);
  // A file uploaded before a failed one is gone from the setup shown and downloaded too.
  await page.evaluate(() => { document.getElementById("error").hidden = true; });
  await page.setInputFiles("#files", tempFile("kept-before.txt", letor(20, 6)));
  await page.waitForFunction(() => /kept-before\.txt/.test(document.getElementById("setup-command").textContent), null, { timeout: 30_000 });
  await page.setInputFiles("#files", bad);
  await page.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
  await page.waitForFunction(() => !/kept-before\.txt/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 })
    .catch(async () => expect(false, `the dropped upload is still in the setup: ${await page.locator("#setup-command").textContent()}`));
  // A data file and its .query file uploaded together, refused: the error shown.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-"));
  const refusedWithQuery = async (name, text, sizes) => {
    fs.writeFileSync(path.join(dir, name), text);
    fs.writeFileSync(path.join(dir, `${name}.query`), sizes);
    await page.evaluate(() => { document.getElementById("error").hidden = true; });
    await page.setInputFiles("#files", [path.join(dir, name), path.join(dir, `${name}.query`)]);
    await page.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
    return page.locator("#error-text").textContent();
  };
  // A .query file's refusal names that file: the data file's name and `.query`.
  const grouped = await refusedWithQuery("grouped.txt", "2 1:0.5\n0 1:0.2\n", "0\n2\n");
  expect(/grouped\.txt\.query:1:/.test(grouped), `the .query file's error: ${grouped}`);
  // Group sizes that do not add up to the file's documents name the .query file too (either
  // file may be the wrong one), as the command line names it.
  const summed = await refusedWithQuery("summed.txt", "2 1:0.5\n0 1:0.2\n1 1:0.4\n", "2\n2\n");
  expect(/the group sizes in summed\.txt\.query add up to 4 documents, but the file has 3/.test(summed),
    `the .query file's sum: ${summed}`);
  // A .query file named for no data file chosen with it is refused, not dropped; a file without
  // qids asks for its .query file as the page takes one, not by a command's flag.
  const noQid = "2 1:0.5\n0 1:0.2\n";
  fs.writeFileSync(path.join(dir, "stem.txt"), noQid);
  fs.writeFileSync(path.join(dir, "stem.query"), "2\n");
  await page.evaluate(() => { document.getElementById("error").hidden = true; });
  await page.setInputFiles("#files", [path.join(dir, "stem.txt"), path.join(dir, "stem.query")]);
  await page.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
  const stray = await page.locator("#error-text").textContent();
  expect(/stem\.query: no data file stem was chosen with it; .*train\.txt\.query for train\.txt/.test(stray), `a stray .query file: ${stray}`);
  await page.evaluate(() => { document.getElementById("error").hidden = true; });
  await page.setInputFiles("#files", path.join(dir, "stem.txt"));
  await page.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
  const unpaired = await page.locator("#error-text").textContent();
  expect(/no qid: .*named stem\.txt\.query \(chosen together with it\)/.test(unpaired) && !/--train-query|--query/.test(unpaired),
    `a file without qids: ${unpaired}`);
  // A filter that leaves a split nothing names the uploaded file, as the command line names it.
  await page.evaluate(() => { document.getElementById("error").hidden = true; });
  await page.setInputFiles("#files", tempFile("filtered.txt", letor(20, 6)));
  await page.waitForFunction(() => /filtered\.txt/.test(document.getElementById("setup-command").textContent), null, { timeout: 30_000 });
  const minimum = await page.locator("[name=min_group_size]").inputValue();
  await setField("min_group_size", 50);
  const status = await clickAndWait(page, "#run", 120_000);
  const filtered = await page.locator("#error-text").textContent();
  expect(/^Failed/.test(status) && /groups left in [^ ]*filtered\.txt after filtering/.test(filtered),
    `the filter's refusal: ${status} ${filtered}`);
  await setField("min_group_size", minimum);
});

await check("without_webgpu_the_cpu_engine_trains_and_says_so", async () => {
  // Chromium without --enable-unsafe-webgpu offers no adapter here, like Firefox on Linux.
  const plain = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    const p = await plain.newPage();
    await p.goto(new URL("#queries=40&valid_queries=20&test_queries=20&epochs=2&seeds=1&backend=auto", url).href);
    await p.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 60_000 });
    const engine = await p.locator("#engine").textContent();
    expect(/CPU engine/.test(engine) && /No WebGPU/.test(engine), `engine line without WebGPU: ${engine}`);
    await p.click("#run");
    await p.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 120_000 });
    const status = await p.locator("#status").textContent();
    expect(/^Done .* on cpu/.test(status), `status: ${status}`);
    console.log(`    ${engine}`);
  } finally {
    await plain.close();
  }
});

await check("stop_ends_every_worker", async () => {
  // The page afresh, with a comparison long enough to be stopped in the middle.
  await page.goto("about:blank");
  await page.goto(new URL("#epochs=60&backend=cpu", url).href);
  await page.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 60_000 });
  const cores = await page.evaluate(() => Math.min(navigator.hardwareConcurrency || 1, 8));
  for (let i = 0; i < 100 && page.workers().length < cores; i++) await page.waitForTimeout(100);
  const started = page.workers();
  expect(started.length >= cores, `${started.length} workers started for ${cores} cores`);
  const closed = new Set();
  for (const w of started) w.once("close", () => closed.add(w));
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.locator("#run").click();
  const busy = cores > 1 ? `${cores} workers:` : "1 worker:";
  await page.waitForFunction((b) => document.getElementById("workers-activity").textContent.startsWith(b), busy,
    { timeout: 60_000 });
  await page.locator("#stop").click();
  await page.waitForFunction(() => document.getElementById("status").textContent === "Stopped.", null, { timeout: 30_000 });
  for (let i = 0; i < 300 && closed.size < started.length; i++) await page.waitForTimeout(100);
  console.log(`    ${closed.size} of ${started.length} workers closed; page.workers() now ${page.workers().length}; same as before: ${started.filter((w) => page.workers().includes(w)).length}`);
  expect(closed.size === started.length, `${closed.size} of the ${started.length} workers ended`);
  expect(await page.locator("#workers-activity").textContent() === "", "worker activity still shown after Stop");
  // The page trains again: a small run on the restarted pool.
  await setField("epochs", 2);
  await setField("seeds", 1);
  const status = await runAndWait(120_000);
  console.log(`    ${started.length} workers ended on Stop; then: ${status.slice(0, 60)}`);
});

await check("class_36_stop_and_run_cannot_race", async () => {
  // Stop ends the run and starts the pool anew. Until the new workers hold the data nothing
  // trains, however it is asked (the form submitted, as Enter does, every 20 ms), and the status
  // of the first run after it is that run's own: Stop's "Stopped." never lands on it.
  const p = await freshPage("#epochs=60&backend=cpu&workers=1&seeds=1");
  try {
    await p.evaluate(() => {
      window.__statuses = [];
      new MutationObserver(() => window.__statuses.push(document.getElementById("status").textContent))
        .observe(document.getElementById("status"), { childList: true, characterData: true, subtree: true });
    });
    await p.click("#run");
    await p.waitForFunction(() => /epoch|^Training/.test(document.getElementById("status").textContent), null, { timeout: 60_000 });
    // The next run is short; the one under way keeps the setup it started with.
    await p.locator("[name=epochs]").fill("1");
    await p.evaluate(() => { window.__statuses = []; });
    await p.click("#stop");
    const statuses = await p.evaluate(async () => {
      const form = document.getElementById("setup");
      const started = () => window.__statuses.some((s) => s.startsWith("Preparing"));
      for (let i = 0; i < 3000 && !started(); i++) {
        form.requestSubmit();
        await new Promise((r) => setTimeout(r, 20));
      }
      const ended = () => /^Done|^Failed/.test(document.getElementById("status").textContent);
      for (let i = 0; i < 1200 && !ended(); i++) await new Promise((r) => setTimeout(r, 100));
      // Anything late (Stop's own status) has had its chance to land.
      await new Promise((r) => setTimeout(r, 1000));
      return window.__statuses;
    });
    const first = statuses.findIndex((s) => s.startsWith("Preparing"));
    expect(first > 0 && statuses.slice(0, first).includes("Stopped."), `Stop's status before the next run: ${JSON.stringify(statuses.slice(0, first + 1))}`);
    const after = statuses.slice(first);
    expect(!after.includes("Stopped.") && after[after.length - 1].startsWith("Done"),
      `the run after Stop: ${JSON.stringify(after.filter((s, i) => i === 0 || !s.startsWith("Training")))}`);
    console.log(`    after Stop: ${JSON.stringify(statuses.slice(0, first))}, then a run of its own: ${after[after.length - 1]}`);
  } finally {
    await p.close();
  }
});

await check("class_36_a_sweep_owns_the_data_it_starts_from", async () => {
  // Choosing other data while the alpha sweep runs ends it, saying why: its values so far stay,
  // said to be a part, and no value runs on the new data under "Alpha sweep done".
  const p = await freshPage("#source=synthetic&epochs=1&seeds=1&backend=cpu&workers=1");
  try {
    await p.click("#sweep");
    await p.waitForFunction(() => /alpha 0\.1:/.test(document.getElementById("sweep-summary").textContent), null, { timeout: 120_000 });
    await p.check("input[name=source][value=mq2008]");
    await p.waitForFunction(() => /^Alpha sweep done|^Failed|^Stopped/.test(document.getElementById("status").textContent),
      null, { timeout: 300_000 });
    const status = await p.locator("#status").textContent();
    const error = await errorText(p);
    expect(status === "Failed." && /the data changed while the alpha sweep ran/.test(error), `after the data changed: ${status} ${error}`);
    const summary = await p.locator("#sweep-summary").textContent();
    expect(/ended early/.test(summary) && !/alpha 0\.9:/.test(summary), `the sweep's line: ${summary}`);
    console.log(`    ${error.slice(0, 110)}`);
  } finally {
    await p.close();
  }
});

await check("an_alpha_sweep_is_marked_stale_when_the_form_changes_and_cleared_when_the_data_do", async () => {
  const p = await freshPage("#backend=cpu&epochs=1&seeds=1&widths=8&queries=40&valid_queries=20&test_queries=20&workers=1&alpha=0.7");
  try {
    const status = await clickAndWait(p, "#sweep", 300_000);
    expect(status.startsWith("Alpha sweep done"), `the sweep failed: ${status} ${await errorText(p)}`);
    // The form's alpha is not the sweep's: said as the CLI's sweep says it.
    const warned = await p.locator("#sweep-warnings").textContent();
    expect(/alpha 0\.7 is not used: the sweep of alpha sets it at each of its values\./.test(warned), `the sweep's warnings: ${warned}`);
    const stale = () => p.evaluate(() => [document.querySelector("figure.sweep").classList.contains("stale"), !document.getElementById("sweep-stale").hidden]);
    expect(JSON.stringify(await stale()) === "[false,false]", "a fresh sweep is marked stale");
    // The sweep sets its own methods and alpha: changing them leaves it fresh; the workers too.
    await p.locator("[name=alpha]").fill("0.2");
    await p.locator("[name=alpha]").dispatchEvent("change");
    await p.locator("[name=workers]").fill("2");
    await p.locator("[name=workers]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[false,false]", `the sweep marked stale by alpha or the workers: ${await stale()}`);
    await p.locator("[name=epochs]").fill("2");
    await p.locator("[name=epochs]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[true,true]", `the sweep not marked stale after a change: ${await stale()}`);
    await p.locator("[name=epochs]").fill("1");
    await p.locator("[name=epochs]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[false,false]", "the sweep still marked stale when the form is back");
    // New data: the sweep goes, saying why.
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", tempFile("other.txt", letor(30, 10)));
    await p.waitForFunction(() => /30 queries/.test(document.getElementById("stats").textContent), null, { timeout: 30_000 });
    const summary = await p.locator("#sweep-summary").textContent();
    const lines = await p.evaluate(() => Chart.getChart("sweep-chart").data.datasets.length);
    expect(/The data changed/.test(summary) && lines === 0, `after new data: ${summary}, ${lines} lines`);
  } finally {
    await p.close();
  }
});

// ---------------------------------------------------------------- bad input on the page
// Each on a page of its own (its errors counted with the main page's), closed after.

/// A new page at `hash`, started (its Run enabled); `init` runs in it before its scripts.
async function freshPage(hash = "", init = null) {
  const p = await context.newPage();
  p.on("pageerror", (e) => pageErrors.push(String(e)));
  p.on("console", (m) => { if (m.type() === "error") pageErrors.push(m.text()); });
  if (init) await p.addInitScript(init);
  await p.goto(new URL(hash, url).href);
  await p.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 60_000 });
  return p;
}

async function errorText(p) {
  return await p.locator("#error").isVisible() ? await p.locator("#error-text").textContent() : "";
}

/// Runs the objectives (its status cleared first) and waits for it to end; returns the status.
async function runObjectives(p, timeoutMs = 300_000) {
  await p.evaluate(() => { document.getElementById("objectives-status").textContent = ""; });
  await p.click("#objectives-run");
  await p.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("objectives-status").textContent),
    null, { timeout: timeoutMs });
  return p.locator("#objectives-status").textContent();
}

/// Clicks `button` and waits for the status to end (Done, Failed, Stopped or the sweep's end).
async function clickAndWait(p, button, timeoutMs) {
  await p.evaluate(() => { document.getElementById("status").textContent = ""; });
  await p.click(button);
  await p.waitForFunction(() => /^Done|^Failed|^Stopped|^Alpha sweep done/.test(document.getElementById("status").textContent),
    null, { timeout: timeoutMs });
  return p.locator("#status").textContent();
}

/// A LETOR file of `queries` queries of `docs` documents: columns 1-2 hold one value per query
/// (varying between queries only), columns 3-5 vary within each query, and the grade follows
/// the document's place in its query.
function letor(queries, docs) {
  const lines = [];
  for (let q = 1; q <= queries; q++) {
    for (let d = 0; d < docs; d++) {
      const grade = Math.max(0, 4 - d);
      const f = [(q * 0.37) % 1, (q * 0.61) % 1, grade + ((q * 7 + d * 3) % 5) / 10, (d * 13 + q) % 7, ((q + d) % 3) / 2];
      lines.push(`${grade} qid:${q} ${f.map((v, i) => `${i + 1}:${v.toFixed(3)}`).join(" ")}`);
    }
  }
  return lines.join("\n") + "\n";
}

/// Writes `text` to a file of that name in a folder of its own (a file input fires only when
/// its files change) and returns its path.
function tempFile(name, text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-"));
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
}

/// A LETOR file of `queries` queries of `docs` documents with `features` columns, to weigh on
/// memory: the grade is drawn from a hash, columns 1-3 follow it with noise, the rest are noise.
function wideLetor(queries, docs, features) {
  const lines = [];
  for (let q = 1; q <= queries; q++) {
    for (let d = 0; d < docs; d++) {
      const h = (k) => ((q * 7919 + d * 104729 + k * 1299709) % 1000) / 1000;
      const grade = Math.min(2, Math.floor(h(0) * 3.4));
      const f = Array.from({ length: features }, (_, k) => (k < 3 ? grade + h(k + 1) : h(k + 1)));
      lines.push(`${grade} qid:${q} ${f.map((v, i) => `${i + 1}:${v.toFixed(2)}`).join(" ")}`);
    }
  }
  return lines.join("\n") + "\n";
}

await check("a_gzip_upload_reads_as_its_text", async () => {
  // The worker reads an upload a piece at a time (8 MB a read): a file of several pieces, plain
  // and gzip-compressed, gives the same statistics.
  const text = wideLetor(800, 40, 80);
  const stats = async (name, contents) => {
    const p = await freshPage("#backend=cpu");
    try {
      await p.check("input[name=source][value=upload]");
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-"));
      fs.writeFileSync(path.join(dir, name), contents);
      await p.setInputFiles("#files", path.join(dir, name));
      await p.waitForFunction(() => /800 queries/.test(document.getElementById("stats").textContent), null, { timeout: 120_000 });
      return (await p.locator("#stats").textContent()).replace(name, "FILE");
    } finally {
      await p.close();
    }
  };
  expect(text.length > 2 * 8 * 2 ** 20, `${text.length} bytes: fewer than three pieces`);
  const plain = await stats("wide.txt", text);
  const gzip = await stats("wide.txt.gz", zlib.gzipSync(text));
  expect(plain === gzip, `plain: ${plain}\n    gzip: ${gzip}`);
  console.log(`    ${(text.length / 2 ** 20).toFixed(1)} MB of text: ${plain.slice(0, 100)}…`);
});

await check("a_parquet_upload_reads_as_its_text", async () => {
  // The CLI converts MQ2008's Fold1 training file to Parquet; the page reads either upload into
  // the same statistics. A Parquet file without a qid column is refused by what it lacks.
  const bin = process.env.DISTILLRANK_BIN ?? path.join(root, "target/debug/distillrank");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-"));
  const text = path.join(root, "target/data/mq2008/Fold1/train.txt");
  const parquet = path.join(dir, "train.parquet");
  const converted = spawnSync(bin, ["data", "convert", text, "--out", parquet], { encoding: "utf8" });
  expect(converted.status === 0, `data convert: ${converted.stderr}`);
  const stats = async (file) => {
    const p = await freshPage("#backend=cpu");
    try {
      await p.check("input[name=source][value=upload]");
      await p.setInputFiles("#files", file);
      await p.waitForFunction(() => /471 queries/.test(document.getElementById("stats").textContent) ||
        !document.getElementById("error").hidden, null, { timeout: 60_000 });
      expect(await p.locator("#error").isHidden(), `${file}: ${await p.locator("#error-text").textContent()}`);
      return (await p.locator("#stats").textContent()).replace(path.basename(file), "FILE");
    } finally {
      await p.close();
    }
  };
  const fromText = await stats(text);
  const fromParquet = await stats(parquet);
  expect(fromText === fromParquet, `text: ${fromText}\n    parquet: ${fromParquet}`);
  // The same bytes with the qid column renamed (same length, so the file stays readable).
  const bytes = fs.readFileSync(parquet);
  const renamed = Buffer.from(bytes.toString("latin1").replaceAll("qid", "qix"), "latin1");
  const bad = path.join(dir, "noqid.parquet");
  fs.writeFileSync(bad, renamed);
  const p = await freshPage("#backend=cpu");
  try {
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", bad);
    await p.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
    const message = await p.locator("#error-text").textContent();
    expect(/noqid\.parquet: no 'qid' column/.test(message), `error: ${message}`);
    console.log(`    ${message.slice(0, 120)}`);
  } finally {
    await p.close();
  }
  // Columns are read by position: a test file whose columns f12 and f13 trade places (the same
  // bytes, the names swapped) is refused by name, as the CLI refuses it.
  const test = path.join(dir, "test.parquet");
  const convertedTest = spawnSync(bin, ["data", "convert", path.join(root, "target/data/mq2008/Fold1/test.txt"), "--out", test], { encoding: "utf8" });
  expect(convertedTest.status === 0, `data convert: ${convertedTest.stderr}`);
  const swapped = fs.readFileSync(test).toString("latin1").replaceAll("f12", "f~~").replaceAll("f13", "f12").replaceAll("f~~", "f13");
  fs.writeFileSync(test, Buffer.from(swapped, "latin1"));
  const q = await freshPage("#source=upload&backend=cpu&epochs=1&seeds=1&widths=8&method=no-distillation");
  try {
    await q.setInputFiles("#files", [parquet, test]);
    await q.waitForFunction(() => /test\.parquet/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    const status = await clickAndWait(q, "#run", 60_000);
    const message = await errorText(q);
    expect(status === "Failed." && /test\.parquet: feature column 12 is "f13", which is column 13 in the training file train\.parquet/.test(message),
      `columns in another order: ${status} ${message}`);
    console.log(`    ${message.slice(0, 120)}`);
  } finally {
    await q.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

await check("the_pool_shares_one_copy_of_the_data", async () => {
  // 1,500 queries x 40 documents x 80 features: 18 MB of prepared x and z. With the data shared,
  // each worker but the first (which read the upload and prepared it) holds only its jobs'
  // buffers; without (a page that is not cross-origin isolated), each holds a copy of its own.
  // The same for the global objectives' pool on the same upload (its examples shared).
  const file = tempFile("wide.txt", wideLetor(1500, 40, 80));
  const hash = "#backend=cpu&epochs=1&seeds=2&widths=16&method=no-distillation,pfd&workers=4";
  const memory = async (isolated) => {
    const p = await freshPage(hash, isolated ? null : () => {
      Object.defineProperty(window, "crossOriginIsolated", { value: false });
    });
    try {
      expect(await p.evaluate(() => window.crossOriginIsolated) === isolated, "cross-origin isolation");
      await p.check("input[name=source][value=upload]");
      await p.setInputFiles("#files", file);
      await p.waitForFunction(() => /1,?500 queries/.test(document.getElementById("stats").textContent), null, { timeout: 120_000 });
      const status = await clickAndWait(p, "#run", 300_000);
      expect(status.startsWith("Done") && /with 4 workers/.test(status), `the run: ${status} ${await errorText(p)}`);
      const held = async (id) => {
        const box = p.locator(id);
        return {
          words: await box.textContent(),
          shared: Number(await box.getAttribute("data-shared")),
          workers: (await box.getAttribute("data-workers")).split(",").map(Number),
        };
      };
      const comparison = await held("#pool-memory");
      // The global objectives on the same upload, one example a document, in the same pool.
      await p.check("input[name=obj_source][value=upload]");
      for (const [k, v] of [["obj_seeds", 2], ["obj_epochs", 1]]) await p.locator(`[name=${k}]`).fill(String(v));
      const objectives = await runObjectives(p);
      expect(objectives.startsWith("Done"), `objectives: ${objectives} ${await errorText(p)}`);
      return {
        ...comparison,
        table: await p.$$eval("#results tbody tr", (rows) => rows.map((r) => r.textContent)),
        objectives: await held("#objectives-pool-memory"),
        objectivesTable: await p.$$eval("#objectives-results tbody tr", (rows) => rows.map((r) => r.textContent)),
      };
    } finally {
      await p.close();
    }
  };
  const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
  const shared = await memory(true);
  const own = await memory(false);
  console.log(`    shared: ${mb(shared.shared)} MB buffer; workers ${shared.workers.map(mb).join(", ")} MB`);
  console.log(`    own copies: workers ${own.workers.map(mb).join(", ")} MB`);
  expect(/one shared copy/.test(shared.words) && shared.shared > 15 * 2 ** 20, `shared: ${shared.words}`);
  expect(/its own copy/.test(own.words) && own.shared === 0, `own copies: ${own.words}`);
  // The pool's other workers hold no copy: less than the buffer each (their own buffers and
  // the engine), against more than the whole of it each when they read the upload themselves.
  for (const [k, bytes] of shared.workers.slice(1).entries()) {
    expect(bytes < shared.shared, `worker ${k + 2} holds ${mb(bytes)} MB beside a ${mb(shared.shared)} MB shared buffer`);
  }
  for (const [k, bytes] of [...own.workers.slice(1), ...own.objectives.workers.slice(1)].entries()) {
    expect(bytes > shared.shared, `worker ${k % 3 + 2} without sharing holds only ${mb(bytes)} MB`);
  }
  // The global objectives' pool likewise: the examples (x of every document) shared.
  console.log(`    objectives, shared: ${mb(shared.objectives.shared)} MB buffer; workers ${shared.objectives.workers.map(mb).join(", ")} MB`);
  console.log(`    objectives, own copies: workers ${own.objectives.workers.map(mb).join(", ")} MB`);
  expect(shared.objectives.shared > 15 * 2 ** 20 && own.objectives.shared === 0,
    `objectives: ${shared.objectives.words} / ${own.objectives.words}`);
  for (const [k, bytes] of shared.objectives.workers.slice(1).entries()) {
    expect(bytes < shared.objectives.shared,
      `objectives: worker ${k + 2} holds ${mb(bytes)} MB beside a ${mb(shared.objectives.shared)} MB shared buffer`);
  }
  // The same numbers either way.
  expect(JSON.stringify(shared.table) === JSON.stringify(own.table),
    `shared: ${JSON.stringify(shared.table)}\n    own: ${JSON.stringify(own.table)}`);
  expect(JSON.stringify(shared.objectivesTable) === JSON.stringify(own.objectivesTable),
    `objectives, shared: ${JSON.stringify(shared.objectivesTable)}\n    own: ${JSON.stringify(own.objectivesTable)}`);
});

await check("class_12_auto_checks_the_model_size_before_timing", async () => {
  // auto (the default) timed a 20000-20000 model before any check: the worker trapped, Run stayed
  // at "auto: timing…" with Stop disabled.
  const p = await freshPage("#widths=20000,20000&queries=40&valid_queries=20&test_queries=20&seeds=1&epochs=1");
  try {
    const status = await clickAndWait(p, "#run", 60_000);
    const error = await errorText(p);
    expect(status === "Failed." && /does not fit in memory/.test(error) && /20000 -> 20000/.test(error),
      `status ${status}; error: ${error}`);
    const [run, stop] = [await p.locator("#run").isDisabled(), await p.locator("#stop").isDisabled()];
    expect(!run && stop, `after the refusal: Run disabled ${run}, Stop disabled ${stop}`);
    console.log(`    ${error.slice(0, 120)}…`);
  } finally {
    await p.close();
  }
});

await check("class_12_every_button_checks_the_form_bounds", async () => {
  // A billion seeds through "PFD against GenD" or "Alpha sweep" froze the tab: those buttons
  // skipped the bounds the form's own submit checks.
  const p = await freshPage("#queries=40&valid_queries=20&test_queries=20&epochs=1&backend=cpu");
  try {
    await p.locator("[name=seeds]").fill("1000000000");
    for (const button of ["#real-logs", "#sweep"]) {
      await p.evaluate(() => { document.getElementById("error").hidden = true; });
      const status = await clickAndWait(p, button, 20_000);
      const error = await errorText(p);
      expect(status === "Failed." && /^Seeds: 1000000000/.test(error), `${button}: status ${status}; error: ${error}`);
      expect(!(await p.locator("#run").isDisabled()), `${button}: Run stays disabled`);
    }
    console.log(`    ${await errorText(p)}`);
  } finally {
    await p.close();
  }
});

await check("class_12_opening_a_setup_is_strict_and_round_trips", async () => {
  const p = await freshPage();
  try {
    const download = async () => {
      const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
      return JSON.parse(fs.readFileSync(await d.path(), "utf8"));
    };
    const open = async (name, text) => {
      await p.evaluate(() => { document.getElementById("error").hidden = true; });
      await p.setInputFiles("#setup-file", tempFile(name, text));
    };
    const original = await download();
    const epochs = await p.locator("[name=epochs]").inputValue();
    // Refused, with the library's words, and the form left as it was.
    const refused = [
      ["top.json", { ...original, epochs: 3, activation: "swish" }, /unknown field `activation`/],
      ["nested.json", { ...original, epochs: 3, data: { ...original.data, logs: { ...original.data.logs, sesions: 5 } } }, /unknown field `sesions`/],
      ["null.json", null, /the setup is null: expected a JSON object/],
      ["list.json", [], /the setup is a list: expected a JSON object/],
      ["empty.json", {}, /the setup is an empty object/],
      ["hello.json", "hello", /the setup is the string "hello": expected a JSON object/],
      // Checked together as compare --setup checks them: the form's boxes would make one of two.
      ["twice.json", { ...original, epochs: 3, methods: ["pfd", "pfd"] }, /method pfd is listed twice/],
      // A seed past JavaScript's exact whole numbers would change on its way: named, not rounded.
      ["seed.json", JSON.stringify({ ...original, epochs: 3, first_seed: 7 }).replace('"first_seed":7', '"first_seed":18446744073709551615'),
        /first_seed = 18446744073709551615: the page holds whole numbers up to 9007199254740991/],
    ];
    for (const [name, value, words] of refused) {
      await open(name, typeof value === "string" && name !== "hello.json" ? value : JSON.stringify(value));
      await p.waitForSelector("#error:not([hidden])", { timeout: 10_000 });
      const error = await errorText(p);
      expect(words.test(error) && error.startsWith(name) && !/Cannot read/.test(error), `${name}: ${error}`);
      const now = await p.locator("[name=epochs]").inputValue();
      expect(now === epochs, `${name} changed the form: epochs ${now}`);
    }
    // Settings the form has no control for survive open -> download, and the command shows them.
    const options = original.data.source.synthetic.options;
    const opened = {
      ...original, epochs: 4, teacher_widths: [24, 12], teachers: 3, first_seed: 5,
      data: { ...original.data, source: { synthetic: { ...original.data.source.synthetic, options: { ...options, kind: "linear", privileged: 4 } } } },
    };
    await open("opened.json", JSON.stringify(opened));
    await p.waitForFunction(() => document.querySelector("[name=epochs]").value === "4", null, { timeout: 10_000 });
    await p.waitForFunction(() => /--first-seed 5/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
    const command = await p.locator("#setup-command").textContent();
    for (const part of ["--epochs 4", "--teacher-widths 24,12", "--teachers 3", "--first-seed 5", "--kind linear", "--privileged-count 4"]) {
      expect(command.includes(part), `the command after opening lacks ${part}: ${command}`);
    }
    const kept = await p.locator("#setup-kept").textContent();
    expect(/teacher-widths 24,12/.test(kept) && /kind linear/.test(kept), `kept settings: ${kept}`);
    const canonical = (v) => JSON.stringify(v, (k, x) => x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x);
    const again = await download();
    expect(canonical(again) === canonical(opened), `downloaded after opening:\n    ${canonical(again)}\n    opened:\n    ${canonical(opened)}`);
    console.log(`    ${kept}`);
  } finally {
    await p.close();
  }
});

await check("a_teacher_two_methods_share_is_trained_once", async () => {
  // At --rd-teacher-factor 1, Ranking Distillation's teacher is self-distillation's: the library
  // puts both methods of a seed in one job, which trains the teacher once, and the page says so.
  const p = await freshPage("#backend=cpu");
  try {
    const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    const original = JSON.parse(fs.readFileSync(await d.path(), "utf8"));
    const setup = {
      ...original, methods: ["self-distillation", "ranking-distillation"], rd_teacher_factor: 1,
      epochs: 2, seeds: 2, first_seed: 3, widths: [16, 8],
    };
    const teachers = new Set();
    await p.setInputFiles("#setup-file", tempFile("shared-teacher.json", JSON.stringify(setup)));
    await p.waitForFunction(() => document.querySelector("[name=epochs]").value === "2", null, { timeout: 10_000 });
    // What each worker trains, as the page shows it while the Run goes.
    const watching = setInterval(() => {
      p.locator("#workers-activity").textContent().then((t) => {
        for (const m of t.matchAll(/([a-z-]+) seed (\d+), teacher/g)) teachers.add(`${m[1]} ${m[2]}`);
      }).catch(() => {});
    }, 20);
    const status = await clickAndWait(p, "#run", 120_000);
    clearInterval(watching);
    expect(status.startsWith("Done"), `the run failed: ${status} ${await errorText(p)}`);
    const said = await p.locator("#results-tests .shared-teacher").allTextContents();
    expect(said.length === 1 && /^Trained once: ranking-distillation's teacher is self-distillation's/.test(said[0]),
      `the page says: ${JSON.stringify(said)}`);
    expect(![...teachers].some((t) => t.startsWith("ranking-distillation")), `teachers seen training: ${[...teachers]}`);
    const rows = await p.$$eval("#results tbody tr", (r) => r.length);
    expect(rows === 2, `${rows} rows`);
    // The seeds start at 3: seed 3's students are the bold curves among the seeds' (drawn on
    // request after the run, beside the means) and fill the loss chart.
    const charts = await p.evaluate(() => ({
      losses: Chart.getChart("loss-chart").data.datasets.map((d) => d.key),
      bold: Chart.getChart("ndcg-chart").data.datasets
        .filter((d) => d.key.includes("/") && d.borderWidth === 2).map((d) => d.key),
    }));
    expect(charts.losses.length >= 2 && charts.bold.join() === "self-distillation/3,ranking-distillation/3",
      `charts: ${JSON.stringify(charts)}`);
    console.log(`    ${said[0].slice(0, 120)}…; teachers seen training: ${[...teachers].join(", ") || "none caught"}`);
  } finally {
    await p.close();
  }
});

await check("a_folds_failure_names_its_fold", async () => {
  // The page's default threshold leaves fold 1's validation split of the bundled MQ2008 without
  // a positive query: the refusal names the fold, as the CLI's does.
  const p = await freshPage("#source=mq2008-folds&privileged_kind=top&privileged_value=30%25" +
    "&method=no-distillation&seeds=1&epochs=1&widths=8&backend=cpu&workers=1");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    const status = await clickAndWait(p, "#run", 120_000);
    const error = await errorText(p);
    expect(status === "Failed." && /^fold 1 of 5: the validation split has no group with a y = 1/.test(error),
      `a fold's failure: ${status} ${error}`);
  } finally {
    await p.close();
  }
});

await check("a_setups_folds_directory_gets_the_pages_own_refusal", async () => {
  // A setup from the CLI naming a folds directory: the page runs the bundled MQ2008's folds
  // only, and says so, where the one-split path told it to use compare.
  const p = await freshPage("#backend=cpu");
  try {
    const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    const setup = JSON.parse(fs.readFileSync(await d.path(), "utf8"));
    // The folds are the data: the setup's source left at its default, as `compare --folds` writes it.
    delete setup.data.source;
    setup.data.folds = "letor/MQ2008";
    await p.setInputFiles("#setup-file", tempFile("folds.json", JSON.stringify(setup)));
    await p.waitForFunction(() => /--folds/.test(document.getElementById("setup-command").textContent)
      || !document.getElementById("error").hidden, null, { timeout: 10_000 });
    const opened = await errorText(p);
    const status = opened ? "" : await clickAndWait(p, "#run", 60_000);
    const error = opened || await errorText(p);
    expect(/letor\/MQ2008: the page runs the folds of the bundled MQ2008/.test(error) && !/compare \(and Python/.test(error),
      `a folds directory: ${status} ${error}`);
    console.log(`    ${error.slice(0, 140)}`);
  } finally {
    await p.close();
  }
});

await check("class_12_setup_number_out_of_range_names_the_field", async () => {
  const p = await freshPage();
  try {
    const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    const setup = JSON.parse(fs.readFileSync(await d.path(), "utf8"));
    setup.data.source.synthetic.options.queries = -5;
    await p.setInputFiles("#setup-file", tempFile("negative.json", JSON.stringify(setup)));
    await p.waitForSelector("#error:not([hidden])", { timeout: 10_000 });
    const error = await errorText(p);
    expect(/Training queries: setup field data\.source\.synthetic\.options\.queries: -5 is out of range, expected a whole number in 1\.\.=10,000,000/.test(error),
      `error: ${error}`);
    console.log(`    ${error}`);
  } finally {
    await p.close();
  }
});

await check("class_12_a_saved_model_with_an_unknown_activation_is_refused", async () => {
  // A config whose recorded setup says `activation: swish` (weights and JSON alike) scored as if
  // nothing were said.
  const saved = path.join(os.tmpdir(), "distillrank-e2e-student");
  const weights = fs.readFileSync(path.join(saved, "pfd.safetensors"));
  const config = JSON.parse(fs.readFileSync(path.join(saved, "pfd.json"), "utf8"));
  expect(config.setup, "the saved student records no setup");
  const swish = { ...config, setup: { ...config.setup, activation: "swish" } };
  // The weights' header carries the config too: the same one there.
  const size = Number(weights.readBigUInt64LE(0));
  const header = JSON.parse(weights.subarray(8, 8 + size).toString("utf8"));
  header.__metadata__.distillrank_config = JSON.stringify(swish);
  let text = JSON.stringify(header);
  text += " ".repeat((8 - (text.length % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-swish-"));
  fs.writeFileSync(path.join(dir, "swish.safetensors"), Buffer.concat([length, Buffer.from(text), weights.subarray(8 + size)]));
  fs.writeFileSync(path.join(dir, "swish.json"), JSON.stringify(swish));
  const p = await freshPage();
  try {
    await p.setInputFiles("#model-files", [path.join(dir, "swish.safetensors"), path.join(dir, "swish.json")]);
    await p.waitForFunction(() => !document.getElementById("error").hidden || /NDCG@8/.test(document.getElementById("model-score").textContent),
      null, { timeout: 30_000 });
    const error = await errorText(p);
    expect(/swish\.json: .*unknown field `activation`/.test(error), `error: ${error}; score: ${await p.locator("#model-score").textContent()}`);
    console.log(`    ${error.slice(0, 140)}…`);
  } finally {
    await p.close();
  }
});

await check("class_12_double_click_runs_one_comparison", async () => {
  // With auto (the default), Run times the engines first: a second click came while it did.
  const p = await freshPage("#queries=40&valid_queries=20&test_queries=20&epochs=1&seeds=1", () => {
    // Every job and summary the page asks of its workers.
    window.__asked = { job: 0, summary: 0 };
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      if (m && m.type in window.__asked) window.__asked[m.type]++;
      return post.call(this, m, ...rest);
    };
  });
  try {
    await p.evaluate(() => { document.getElementById("status").textContent = ""; });
    await p.dblclick("#run");
    await p.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 120_000 });
    await p.waitForTimeout(1000);
    const asked = await p.evaluate(() => window.__asked);
    const status = await p.locator("#status").textContent();
    expect(status.startsWith("Done") && asked.job === 4 && asked.summary === 1,
      `a double-click asked ${asked.job} jobs and ${asked.summary} summaries (one comparison: 4 and 1); ${status}`);
  } finally {
    await p.close();
  }
});

await check("class_12_gain_is_na_when_no_distillation_scores_0", async () => {
  const cells = await page.evaluate(async () => {
    const { resultsTable } = await import("./js/compare.js");
    const stat = (mean) => ({ mean, std: 0 });
    const row = (m) => Object.fromEntries([1, 3, 5, 8, 10].map((k) => [`ndcg@${k}`, stat(m)]));
    const result = { methods: { "no-distillation": row(0), gend: row(0), pfd: row(0.25) }, tests: [] };
    const table = document.createElement("table");
    table.innerHTML = resultsTable(result, ["no-distillation", "gend", "pfd"]);
    return Object.fromEntries([...table.querySelectorAll("tbody tr")].map((r) => [r.dataset.method, r.cells[6].textContent]));
  });
  expect(cells.gend === "n/a" && cells.pfd === "n/a", `gain cells with no distillation at 0: ${JSON.stringify(cells)}`);
});

await check("class_12_regular_features_constant_within_queries_are_named", async () => {
  // Regular columns with one value per query: every student scores a query's documents alike.
  const p = await freshPage("#backend=cpu&epochs=1&seeds=1&widths=8&method=no-distillation,pfd");
  try {
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", tempFile("perquery.txt", letor(60, 12)));
    await p.waitForFunction(() => /60 queries/.test(document.getElementById("stats").textContent), null, { timeout: 30_000 });
    // The statistics name the columns, per split, before any Run.
    const stats = await p.locator("#stats").textContent();
    expect(/^train: perquery\.txt: .*features 1, 2 constant within every query/.test(stats), `stats: ${stats}`);
    await p.selectOption("select[name=privileged_kind]", "cols");
    await p.locator("[name=privileged_value]").fill("3,4,5");
    await p.locator("[name=tau_target]").fill("2");
    const status = await clickAndWait(p, "#run", 120_000);
    expect(status.startsWith("Done"), `the run failed: ${status} ${await errorText(p)}`);
    // Warnings have their own place, once each, apart from the progress line.
    const warnings = await p.locator("#run-warnings").textContent();
    expect(/Warning: .*train split's regular features .* constant within every query/.test(warnings), `warnings: ${warnings}`);
    // And the students that cannot rank are named as the CLI and Python name them.
    expect(/Does not rank: No distillation's student \(every seed\) gives every document of each test query the same score/.test(warnings), `warnings: ${warnings}`);
    expect(!/Warning/.test(status), `the status keeps progress only: ${status}`);
    console.log(`    ${warnings.slice(0, 150)}…`);
  } finally {
    await p.close();
  }
});

await check("class_a_test_upload_holding_training_queries_is_warned_of", async () => {
  // The same queries uploaded as the training and the test file: warned of, as the CLI and
  // Python warn, since the test figures would measure queries the model trained on.
  const p = await freshPage("#backend=cpu&epochs=1&seeds=1&widths=8&method=no-distillation");
  try {
    const text = letor(40, 10);
    const dir = path.dirname(tempFile("train.txt", text));
    fs.writeFileSync(path.join(dir, "test.txt"), text);
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", [path.join(dir, "train.txt"), path.join(dir, "test.txt")]);
    await p.waitForFunction(() => /test: test\.txt/.test(document.getElementById("stats").textContent), null, { timeout: 30_000 });
    await p.locator("[name=tau_target]").fill("2");
    const status = await clickAndWait(p, "#run", 120_000);
    expect(status.startsWith("Done"), `the run failed: ${status} ${await errorText(p)}`);
    const warnings = await p.locator("#run-warnings").textContent();
    expect(/the test split test\.txt holds \d+ of its 40 queries \(qid \d+ first\) with the same documents as the (training|validation) split/.test(warnings),
      `warnings: ${warnings}`);
  } finally {
    await p.close();
  }
});

await check("class_12_run_after_a_failed_upload_says_the_upload_failed", async () => {
  const p = await freshPage();
  try {
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", tempFile("broken.txt", "2 qid:1 1:0.5\n1 qid:1 1:zebra\n"));
    await p.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
    await clickAndWait(p, "#run", 20_000);
    const error = await errorText(p);
    expect(/the upload failed \(broken\.txt:2:/.test(error) && /Upload LETOR files/.test(error) && !/generator/.test(error), `error: ${error}`);
    console.log(`    ${error}`);
  } finally {
    await p.close();
  }
});

await check("class_12_an_upload_while_the_page_loads_its_data", async () => {
  // Larger synthetic data, so that their generation is under way when the upload comes.
  const p = await freshPage("#queries=20000&valid_queries=5000&test_queries=5000");
  try {
    await p.waitForFunction(() => document.getElementById("setup-command").textContent.startsWith("distillrank"), null, { timeout: 30_000 });
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", tempFile("early.txt", letor(30, 6)));
    await p.waitForFunction(() => /early\.txt/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    // The synthetic data finish after the upload began: the upload stays the page's data.
    await p.waitForTimeout(3000);
    const stats = await p.locator("#stats").textContent();
    const error = await errorText(p);
    expect(!error && /train: early\.txt: 30 queries/.test(stats), `error: ${error}; stats: ${stats}`);
  } finally {
    await p.close();
  }
});

await check("class_12_url_values_within_the_form_limits_give_words", async () => {
  // Values each within the form's limits, too large together: a bare "unreachable" before.
  for (const hash of ["#min_docs=2000&max_docs=2000&regular=2000&backend=cpu",
    "#queries=100000&valid_queries=100000&test_queries=100000&backend=cpu"]) {
    const p = await freshPage(hash);
    try {
      await p.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
      const error = await errorText(p);
      expect(/synthetic data of \d+ queries of up to \d+ documents .* need up to [\d.]+ [GTP]B/.test(error), `${hash}: ${error}`);
      const status = await clickAndWait(p, "#run", 30_000);
      expect(status === "Failed." && /synthetic data of/.test(await errorText(p)) && !(await p.locator("#run").isDisabled()),
        `${hash} after Run: ${status}; ${await errorText(p)}`);
      console.log(`    ${error}`);
    } finally {
      await p.close();
    }
  }
});

await check("every_field_control_reads_and_writes_its_setup_path", async () => {
  // Every control with a data-field, each set to another valid value, lands at its path in the
  // setup the form makes; the setup written back into a form moved elsewhere gives every control
  // its value again. No list of controls: the form is the table.
  const p = await freshPage("#source=synthetic&privileged_kind=logs");
  try {
    const result = await p.evaluate(async () => {
      const { compareSetup, formFromSetup, readForm, valueAt, rowOf } = await import("./js/setup.js");
      const form = document.getElementById("setup");
      const controls = [...form.querySelectorAll("[data-field]")].filter((el) =>
        !["methods", "backend"].includes(el.dataset.field));
      const moved = (el, by) => {
        const row = rowOf(el.dataset.field);
        if (el.tagName === "SELECT") {
          const options = [...el.options].map((o) => o.value);
          return options[(options.indexOf(el.value) + by) % options.length];
        }
        // A list of numbers (the widths), or a word where the library decides (the workers' auto).
        if (el.type === "text") return /\d/.test(el.value) ? el.value.split(",").map((w) => Number(w) + by).join(",") : String(1 + by);
        const v = Number(el.value === "" ? (row.fields[0].page ?? 1) : el.value);
        return String(row.range.integer ? v + by : Math.round((v + 0.01 * by) * 1e6) / 1e6);
      };
      const expected = {};
      // A yes-or-no box reads as its state.
      const value = (el) => (el.type === "checkbox" ? String(el.checked) : el.value);
      const move = (el, by) => {
        if (el.type === "checkbox") el.checked = by % 2 === 1 ? !el.checked : el.checked;
        else el.value = moved(el, by);
      };
      for (const el of controls) {
        move(el, 1);
        expected[el.dataset.field] = value(el);
      }
      const setup = compareSetup(readForm(), "cpu");
      const shown = (v) => (Array.isArray(v) ? v.join(",") : String(v));
      const wrong = controls
        .filter((el) => shown(valueAt(setup, el.dataset.field)) !== expected[el.dataset.field])
        .map((el) => `${el.dataset.field}: ${shown(valueAt(setup, el.dataset.field))}, set ${expected[el.dataset.field]}`);
      for (const el of controls) move(el, 1);
      formFromSetup(setup);
      const back = controls
        .filter((el) => value(el) !== expected[el.dataset.field])
        .map((el) => `${el.dataset.field}: ${value(el)} after writing back, set ${expected[el.dataset.field]}`);
      return { count: controls.length, wrong, back };
    });
    expect(result.count >= 20, `only ${result.count} field controls`);
    expect(result.wrong.length === 0, `read: ${result.wrong.join("; ")}`);
    expect(result.back.length === 0, `written back: ${result.back.join("; ")}`);
    console.log(`    ${result.count} controls, each at its path and back`);
  } finally {
    await p.close();
  }
});

await check("class_a_typed_number_is_read_as_the_command_line_reads_it", async () => {
  // Decimals in any notation the command line takes (`1e3`); not JavaScript's `0x10`, and not a
  // whole number past those JavaScript holds exactly, which would change on its way.
  const p = await freshPage();
  try {
    const result = await p.evaluate(async () => {
      const { compareSetup, readForm } = await import("./js/setup.js");
      const refusal = (selector, value) => {
        const el = document.querySelector(selector);
        const kept = el.value;
        el.value = value;
        try {
          compareSetup(readForm(), "cpu");
          return null;
        } catch (e) {
          return String(e.message ?? e);
        } finally {
          el.value = kept;
        }
      };
      return {
        hex: refusal('#setup [data-field="widths"]', "0x10"),
        seed: refusal("[name=data_seed]", "9007199254740993"),
        notation: refusal("[name=data_seed]", "1e3"),
      };
    });
    expect(/^Hidden widths: '0x10' is not a number/.test(result.hex), `0x10: ${result.hex}`);
    expect(/^Data seed: 9007199254740993 is past the whole numbers the page holds exactly \(up to 9007199254740991\)/.test(result.seed),
      `a seed past 2^53: ${result.seed}`);
    expect(result.notation === null, `1e3: ${result.notation}`);
  } finally {
    await p.close();
  }
});

await check("hidden_widths_none_is_a_linear_model_as_on_the_cli", async () => {
  // The form's hidden widths take the CLI's word for no hidden layer: `none` is widths [] in the
  // setup, a setup with widths [] opens as `none`, and the word beside a width is refused by the
  // control's name.
  const p = await freshPage();
  try {
    const result = await p.evaluate(async () => {
      const { compareSetup, formFromSetup, readForm } = await import("./js/setup.js");
      const widths = document.querySelector('#setup [data-field="widths"]');
      widths.value = "none";
      const setup = compareSetup(readForm(), "cpu");
      widths.value = "64,32";
      formFromSetup(setup);
      const shown = widths.value;
      widths.value = "none,64";
      let refused = "";
      try {
        compareSetup(readForm(), "cpu");
      } catch (e) {
        refused = String(e.message ?? e);
      }
      return { widths: setup.widths, shown, refused };
    });
    expect(JSON.stringify(result.widths) === "[]", `widths none read as ${JSON.stringify(result.widths)}`);
    expect(result.shown === "none", `widths [] opened as '${result.shown}'`);
    expect(/idden widths/.test(result.refused), `none,64: ${result.refused || "accepted"}`);
  } finally {
    await p.close();
  }
});

await check("class_one_setup_document_one_meaning_a_section_left_partly_out_opens_with_the_tables_defaults", async () => {
  // The page opens a setup through the library's reader, as the CLI's --setup and Python do:
  // the fields a section leaves out take the table of settings' defaults.
  const p = await freshPage();
  try {
    const partial = { data: { source: { synthetic: { options: { queries: 41, regular: 13 } } } }, rd: { k: 3 }, epochs: 2 };
    await p.setInputFiles("#setup-file", tempFile("partial-setup.json", JSON.stringify(partial)));
    await p.waitForFunction(() => document.querySelector("[name=queries]").value === "41", null, { timeout: 30_000 });
    const form = await p.evaluate(() => Object.fromEntries(["queries", "regular", "min_docs", "max_docs", "epochs", "query_spread"]
      .map((n) => [n, document.querySelector(`[name=${n}]`).value])));
    const error = await errorText(p);
    expect(!error, `error: ${error}`);
    expect(form.queries === "41" && form.regular === "13" && form.epochs === "2" && form.min_docs === "10" &&
      form.max_docs === "40" && form.query_spread === "1", `form: ${JSON.stringify(form)}`);
  } finally {
    await p.close();
  }
});

await check("the_page_fits_a_laptop_and_a_phone_after_a_run", async () => {
  // No horizontal scrolling at 1366x768, nor on a 390 px or a 320 px phone, with results on the
  // page, with the boxes of a teacher and a reference trained elsewhere closed and open.
  const p = await freshPage("#backend=cpu&epochs=1&seeds=2&widths=8&queries=60&valid_queries=40&test_queries=40");
  try {
    const status = await clickAndWait(p, "#run", 120_000);
    expect(status.startsWith("Done"), `the run failed: ${status} ${await errorText(p)}`);
    for (const [width, height, open] of [[1366, 768, false], [390, 844, false], [390, 844, true], [320, 640, false], [320, 640, true]]) {
      await p.setViewportSize({ width, height });
      await p.evaluate((open) => {
        for (const id of ["teacher-box", "reference-box"]) document.getElementById(id).open = open;
      }, open);
      await p.waitForTimeout(300);
      const [scroll, inner, widest] = await p.evaluate(() => {
        // The outermost elements past the window's edge: their parents end within it.
        const past = (el) => el.getBoundingClientRect().right > window.innerWidth + 1;
        const wide = [...document.querySelectorAll("body *")]
          .filter((el) => past(el) && !(el.parentElement && past(el.parentElement)))
          .map((el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className ? "." + String(el.className).split(" ")[0] : ""} in ${el.parentElement?.id || el.parentElement?.className || el.parentElement?.tagName.toLowerCase()} ("${el.textContent.trim().slice(0, 30)}")`);
        return [document.documentElement.scrollWidth, window.innerWidth, wide.slice(0, 6)];
      });
      expect(scroll <= inner + 1, `${width}x${height}${open ? ", boxes open" : ""}: the page is ${scroll} px wide in a ${inner} px window (${widest.join(", ")})`);
    }
  } finally {
    await p.close();
  }
});

await check("controls_that_do_not_apply_are_hidden", async () => {
  // "k / columns" only for a split that takes them; tau_target not where y is the logs'
  // conversion; the logs' knobs only with simulated logs.
  const p = await freshPage("#backend=cpu");
  try {
    const visible = (name) => p.locator(`[name=${name}]`).first().isVisible();
    for (const [kind, k, tau, logs] of [
      ["generator", false, true, false],
      ["top", true, true, false],
      ["cols", true, true, false],
      ["logs", false, false, true],
    ]) {
      await p.selectOption("select[name=privileged_kind]", kind);
      const shown = [await visible("privileged_value"), await visible("tau_target"), await visible("log_sessions")];
      expect(JSON.stringify(shown) === JSON.stringify([k, tau, logs]),
        `${kind}: k / columns, tau_target, sessions shown ${JSON.stringify(shown)}, expected ${JSON.stringify([k, tau, logs])}`);
    }
  } finally {
    await p.close();
  }
});

await check("new_data_start_from_the_librarys_threshold_for_them", async () => {
  // The synthetic form's tau_target (3.5) carried over to MQ2008, whose grades top out at 2, and
  // the first Run found no positive validation group. Choosing data empties it: the library's
  // own threshold for those data (the largest training grade + 0.8 on files).
  const p = await freshPage("#backend=cpu&tau_target=3.5");
  try {
    expect((await p.locator("[name=tau_target]").inputValue()) === "3.5", "the link's tau_target is taken");
    await p.check("input[name=source][value=mq2008]");
    await p.selectOption("select[name=privileged_kind]", "top");
    const tau = await p.locator("[name=tau_target]").inputValue();
    expect(tau === "", `tau_target after choosing MQ2008: "${tau}"`);
  } finally {
    await p.close();
  }
});

await check("results_are_marked_stale_when_the_form_changes_and_cleared_when_the_data_do", async () => {
  const p = await freshPage("#backend=cpu&epochs=1&seeds=2&widths=8&queries=60&valid_queries=40&test_queries=40");
  try {
    const status = await clickAndWait(p, "#run", 120_000);
    expect(status.startsWith("Done"), `the run failed: ${status} ${await errorText(p)}`);
    const stale = () => p.evaluate(() => [document.getElementById("results-box").classList.contains("stale"), !document.getElementById("stale").hidden]);
    expect(JSON.stringify(await stale()) === "[false,false]", "fresh results are marked stale");
    // Another setting: the results are of the setup before.
    await p.locator("[name=epochs]").fill("2");
    await p.locator("[name=epochs]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[true,true]", `results not marked stale after a change: ${await stale()}`);
    // Back to the setting that made them: fresh again.
    await p.locator("[name=epochs]").fill("1");
    await p.locator("[name=epochs]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[false,false]", "results still marked stale when the form is back");
    // The workers change no result: the results stay fresh.
    await p.locator("[name=workers]").fill("1");
    await p.locator("[name=workers]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[false,false]", `results marked stale by the workers: ${await stale()}`);
    // A setting changed while a run trains: its results land marked as another setup's.
    await p.locator("[name=seeds]").fill("3");
    await p.locator("[name=seeds]").dispatchEvent("change");
    await p.evaluate(() => { document.getElementById("status").textContent = ""; });
    await p.click("#run");
    await p.locator("[name=epochs]").fill("2");
    await p.locator("[name=epochs]").dispatchEvent("change");
    const during = await p.locator("#status").textContent();
    expect(!during.startsWith("Done"), `the run ended before the setting changed: ${during}`);
    await p.waitForFunction(() => document.getElementById("status").textContent.startsWith("Done"), null, { timeout: 120_000 });
    expect(JSON.stringify(await stale()) === "[true,true]", `results of the setup before the change landed fresh: ${await stale()}`);
    await p.locator("[name=epochs]").fill("1");
    await p.locator("[name=epochs]").dispatchEvent("change");
    expect(JSON.stringify(await stale()) === "[false,false]", "the run's own setup back, its results still stale");
    // New data: the results go.
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", tempFile("other.txt", letor(30, 10)));
    await p.waitForFunction(() => /30 queries/.test(document.getElementById("stats").textContent), null, { timeout: 30_000 });
    const table = await p.locator("#results").textContent();
    expect(/The data changed/.test(table) && (await p.locator("#verdict p").count()) === 0, `after new data: ${table}`);
  } finally {
    await p.close();
  }
});

await check("link_values_the_page_cannot_take_are_named_not_dropped", async () => {
  // A choice the page does not offer, in the link, was dropped or blanked its control, and Run
  // then trained on something else without a word. Each is named, and the form keeps its value.
  for (const [hash, words, control, kept] of [
    ["#backend=tpu", /Backend "tpu" is none of this page's choices \(auto, webgpu, cpu\): the form keeps auto/, "backend", "auto"],
    ["#privileged_kind=bogus", /Privileged features "bogus" is none of this page's choices/, "privileged_kind", "generator"],
    ["#method=pfd,bogus", /method "bogus" is none of this page's choices \(no-distillation, /, null, null],
    // The same reader as an opened setup.json: a value out of range, named by its control.
    ["#epochs=0", /Epochs \(most\): setup field epochs = 0: expected a whole number in 1\.\.=100,000/, null, null],
    // A key no control takes, and values a number field would blank: named, never dropped.
    ["#epoch=5", /"epoch" is no setting of this page \(did you mean epochs\?\): the link's value for it is not used/, null, null],
    ["#foo=bar", /"foo" is no setting of this page: the link's value for it is not used/, null, null],
    ["#epochs=NaN", /Epochs \(most\) "NaN" is not a number: the form keeps/, null, null],
    ["#tau_target=Infinity", /tau_target "Infinity" is not a number: the form keeps/, null, null],
    [`#epochs=${encodeURIComponent("\u0665")}`, /Epochs \(most\) "\u0665" is not a number: the form keeps/, null, null],
    // The settings without a control, read strictly as a setup.json is.
    ["#setup=%7Bnot", /its setup= \(the settings the form has no control for\) is not JSON/, null, null],
    [`#setup=${encodeURIComponent(JSON.stringify({ activation: "swish" }))}`, /unknown field `activation`/, null, null],
    [`#setup=${encodeURIComponent(JSON.stringify({ rd: { k: 0 } }))}`, /setup field rd\.k = 0: expected a whole number in 1\.\.=100,000/, null, null],
  ]) {
    const p = await freshPage(hash);
    try {
      await p.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
      const error = await errorText(p);
      expect(words.test(error), `${hash}: ${error}`);
      if (control) {
        const value = await p.locator(`select[name=${control}]`).inputValue();
        expect(value === kept, `${hash}: ${control} is "${value}", expected the form's ${kept}`);
      }
      console.log(`    ${error.slice(0, 140)}`);
    } finally {
      await p.close();
    }
  }
});

/// The page's results.json and the CLI's on the page's own setup.json (`edit` changes that
/// setup first: a file's path for its upload's name); both parsed.
async function pageAndCli(p, edit = () => {}) {
  const [json] = await Promise.all([p.waitForEvent("download"), p.click("#export-json")]);
  const onPage = JSON.parse(fs.readFileSync(await json.path(), "utf8"));
  const [setupFile] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
  const setup = JSON.parse(fs.readFileSync(await setupFile.path(), "utf8"));
  edit(setup);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-cli-"));
  fs.writeFileSync(path.join(dir, "setup.json"), JSON.stringify(setup));
  const bin = process.env.DISTILLRANK_BIN ?? path.join(root, "target/debug/distillrank");
  const cli = spawnSync(bin, ["compare", "--setup", path.join(dir, "setup.json"), "--out", path.join(dir, "out"), "--quiet"],
    { encoding: "utf8", env: { ...process.env, XDG_RUNTIME_DIR: os.tmpdir() } });
  expect(cli.status === 0, `distillrank compare: ${cli.stderr}`);
  return { onPage, byCli: JSON.parse(fs.readFileSync(path.join(dir, "out/results.json"), "utf8")), setup, out: path.join(dir, "out") };
}

await check("the_five_folds_of_mq2008_run_on_the_page_as_the_cli_runs_them", async () => {
  // LETOR 4.0's five folds of the bundled MQ2008 on a pool of two workers: each fold's
  // comparison, the mean over the folds and the paired tests on the pooled test queries, equal
  // to the CLI's on the page's own setup.json (`--bundled mq2008-folds`), and each fold's
  // warnings (fold 2's validation split holds 4 queries with a y = 1 at the files' tau_target)
  // where the CLI has them.
  const p = await freshPage("#source=mq2008-folds&privileged_kind=top&privileged_value=30%25&tau_target=" +
    "&method=no-distillation,pfd&seeds=2&epochs=2&widths=16&backend=cpu&workers=2");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.waitForFunction(() => / --bundled mq2008-folds/.test(document.getElementById("setup-command").textContent),
      null, { timeout: 30_000 });
    const status = await clickAndWait(p, "#run", 600_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const head = await p.locator("#results thead").textContent();
    expect(/NDCG@8 fold 1/.test(head) && /NDCG@8 fold 5/.test(head), `the table's head: ${head}`);
    const notes = await p.locator("#run-notes").textContent();
    expect(/five folds of MQ2008: 293 test queries pooled/.test(notes), `the notes: ${notes}`);
    const { onPage, byCli, setup, out } = await pageAndCli(p);
    expect(setup.data.source === "mq2008_folds", `the page's setup: ${JSON.stringify(setup.data.source)}`);
    const shown = await p.locator("#run-warnings").textContent();
    for (let k = 1; k <= 5; k++) {
      const cli = JSON.parse(fs.readFileSync(path.join(out, `fold${k}/results.json`), "utf8")).warnings ?? [];
      const page = onPage.warnings.filter((w) => w.startsWith(`fold ${k}: `));
      expect(page.length === cli.length, `fold ${k}'s warnings: page ${JSON.stringify(page)}, CLI ${JSON.stringify(cli)}`);
    }
    expect(/Warning: fold 2: the validation split has 4 groups with a y = 1 .*lower tau_target/.test(shown),
      `fold 2's warning on the page: ${shown}`);
    expect(onPage.pooled_test_queries === 293 && byCli.pooled_test_queries === 293,
      `pooled queries: page ${onPage.pooled_test_queries}, CLI ${byCli.pooled_test_queries}`);
    for (const m of ["no-distillation", "pfd"]) {
      for (const key of ["ndcg@8", "graded_ndcg@8"]) {
        const [a, b] = [onPage.methods[m][key], byCli.methods[m][key]];
        expect(JSON.stringify(a) === JSON.stringify(b), `${m} ${key}: page ${JSON.stringify(a)}, CLI ${JSON.stringify(b)}`);
      }
    }
    const test = (r) => JSON.stringify(r.tests.map((t) => [t.a, t.b, t.metric, t.mean_diff, t.n_queries]));
    expect(test(onPage) === test(byCli), `tests: page ${test(onPage)}, CLI ${test(byCli)}`);
    expect(await p.locator("#export-onnx").isDisabled(), "a folds run has no one student to export");
    console.log(`    five folds: PFD ${onPage.methods.pfd["ndcg@8"].mean.toFixed(4)}, alone ` +
      `${onPage.methods["no-distillation"]["ndcg@8"].mean.toFixed(4)} on the page and the CLI`);
  } finally {
    await p.close();
  }
});

await check("a_setups_seeds_reach_every_view", async () => {
  // The seeds an opened setup names are the ones the page runs: the objectives from their
  // first_seed (charted from it), and a saved student scored on the queries its Run held out
  // with data.data_seed, where no test file was uploaded: its NDCG@8 is the Run's own.
  const p = await freshPage("#backend=cpu");
  try {
    await p.check("input[name=source][value=upload]");
    await p.setInputFiles("#files", path.join(root, "target/data/mq2008/Fold1/train.txt"));
    await p.waitForFunction(() => /471 queries/.test(document.getElementById("stats").textContent)
      && / --train train\.txt/.test(document.getElementById("setup-command").textContent), null, { timeout: 60_000 });
    const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    const original = JSON.parse(fs.readFileSync(await d.path(), "utf8"));
    expect(original.data.source.files?.train === "train.txt", `the setup's data: ${JSON.stringify(original.data.source)}`);
    const setup = {
      ...original, methods: ["no-distillation"], epochs: 2, seeds: 1, widths: [16],
      // Every query kept (no group-size filter), so that the Run's test split is the held-out
      // queries a saved model is scored on.
      data: { ...original.data, data_seed: 3, labels: "grades", tau_target: null, min_group_size: 1 },
      objectives: { ...original.objectives, first_seed: 5, seeds: 2, epochs: 1 },
    };
    await p.setInputFiles("#setup-file", tempFile("seeds.json", JSON.stringify(setup)));
    await p.waitForFunction(() => document.querySelector("[name=epochs]").value === "2", null, { timeout: 10_000 });
    // The objectives, on the synthetic task.
    await p.check("input[name=obj_source][value=synthetic]");
    for (const [k, v] of [["obj_train", 600], ["obj_valid", 400], ["obj_test", 600]]) await p.locator(`[name=${k}]`).fill(String(v));
    const done = await runObjectives(p);
    expect(done.startsWith("Done"), `objectives: ${done} ${await errorText(p)}`);
    const [o] = await Promise.all([p.waitForEvent("download"), p.click("#objectives-export")]);
    const objectives = JSON.parse(fs.readFileSync(await o.path(), "utf8"));
    const seeds = objectives.runs.map((r) => r.runs.map((run) => run.seed).join(","));
    expect(seeds.every((s) => s === "5,6"), `the objectives' seeds: ${JSON.stringify(seeds)}`);
    const charted = await p.evaluate(() => Chart.getChart("objectives-auc-chart").data.datasets.length);
    expect(charted === objectives.runs.length, `${charted} lines on the AUC-PR chart for ${objectives.runs.length} objectives`);
    // The Run on the upload, then its student scored on the test split it held out.
    const status = await clickAndWait(p, "#run", 300_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const [json] = await Promise.all([p.waitForEvent("download"), p.click("#export-json")]);
    const results = JSON.parse(fs.readFileSync(await json.path(), "utf8"));
    expect(results.setup.data.data_seed === 3, `the Run's data seed: ${JSON.stringify(results.setup.data)}`);
    const run = results.methods["no-distillation"]["graded_ndcg@8"].per_seed[0];
    await p.selectOption("#student-method", "no-distillation");
    const downloads = [];
    p.on("download", (x) => downloads.push(x));
    await p.click("#export-student");
    for (let i = 0; i < 50 && downloads.length < 2; i++) await p.waitForTimeout(100);
    const saved = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-seeds-"));
    for (const x of downloads) await x.saveAs(path.join(saved, x.suggestedFilename()));
    await p.setInputFiles("#model-files", ["no-distillation.safetensors", "no-distillation.json"].map((f) => path.join(saved, f)));
    await p.waitForFunction(() => /NDCG@8 0\.\d{4}/.test(document.getElementById("model-score").textContent), null, { timeout: 30_000 });
    const score = await p.locator("#model-score").textContent();
    const scored = Number(score.match(/NDCG@8 (0\.\d{4})/)[1]);
    expect(Math.abs(scored - run) < 6e-5, `the saved student scores NDCG@8 ${scored}, its Run ${run.toFixed(6)}: ${score}`);
    console.log(`    objectives' seeds 5,6; the saved student's NDCG@8 ${scored} on the Run's held-out queries (data seed 3)`);
  } finally {
    await p.close();
  }
});

await check("an_external_teacher_gives_the_clis_student", async () => {
  // A LightGBM ranker trained on all 46 columns of MQ2008 Fold1's training file
  // (tests/data/mq2008-lightgbm.txt: lightgbm 4.7's LGBMRanker, 30 trees of 7 leaves, on the
  // arrays of sklearn's load_svmlight_file), uploaded beside the bundled data. PFD learns from it
  // on a pool of two workers, which share the prepared data with the teacher's scores; the CLI,
  // given the page's own setup.json, trains the same student.
  const fixture = path.join(root, "tests/data/mq2008-lightgbm.txt");
  const p = await freshPage("#source=mq2008&privileged_kind=top&privileged_value=30%25&tau_target=&method=no-distillation,pfd" +
    "&seeds=2&epochs=2&widths=16&backend=cpu&workers=2");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.setInputFiles("#teacher-files", fixture);
    await p.waitForFunction(() => /LightGBM model of 30 trees/.test(document.getElementById("teacher-stats").textContent),
      null, { timeout: 30_000 });
    await p.waitForFunction(() => / --teacher-model mq2008-lightgbm\.txt/.test(document.getElementById("setup-command").textContent),
      null, { timeout: 30_000 });
    const status = await clickAndWait(p, "#run", 600_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    // The CLI on the page's setup, the teacher's file named by its path.
    const { onPage, byCli, setup } = await pageAndCli(p, (setup) => {
      expect(setup.data.teacher?.model === "mq2008-lightgbm.txt", `the page's setup: ${JSON.stringify(setup.data)}`);
      setup.data.teacher.model = fixture;
    });
    const teacher = onPage.external_teacher;
    expect(teacher && /LightGBM/.test(teacher.description) && teacher.reads === "x and z" && teacher.privileged_features.length > 0,
      `results.json's external_teacher: ${JSON.stringify(teacher)}`);
    const line = await p.locator("#results-tests li.external-teacher").textContent();
    expect(/^Teacher trained elsewhere: mq2008-lightgbm\.txt .* privileged/.test(line), `the teacher's line: ${line}`);
    expect(setup.data.teacher.model === fixture, "the CLI's setup names the file");
    expect(byCli.external_teacher.description === teacher.description.replace("mq2008-lightgbm.txt", fixture),
      `the CLI's teacher: ${byCli.external_teacher.description}; the page's: ${teacher.description}`);
    // The teacher's own figures: the same scores of the same documents.
    const figures = (r, m, key) => r.methods[m][key].mean;
    expect(figures(onPage, "pfd", "teacher_ndcg@8") === figures(byCli, "pfd", "teacher_ndcg@8"),
      `teacher NDCG@8: page ${figures(onPage, "pfd", "teacher_ndcg@8")}, CLI ${figures(byCli, "pfd", "teacher_ndcg@8")}`);
    for (const m of ["no-distillation", "pfd"]) {
      for (const key of ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@8", "ndcg@10", "graded_ndcg@8"]) {
        const [a, b] = [figures(onPage, m, key), figures(byCli, m, key)];
        expect(a === b, `${m} ${key}: page ${a}, CLI ${b}`);
      }
    }
    // The student learnt from the teacher: it is not the student trained alone.
    expect(figures(onPage, "pfd", "graded_ndcg@8") !== figures(onPage, "no-distillation", "graded_ndcg@8"),
      "PFD's student is the student trained alone");
    console.log(`    pfd from the LightGBM teacher: NDCG@8 ${figures(byCli, "pfd", "ndcg@8").toFixed(4)} on the page and the CLI ` +
      `(teacher ${figures(byCli, "pfd", "teacher_ndcg@8").toFixed(4)}, alone ${figures(byCli, "no-distillation", "ndcg@8").toFixed(4)})`);
    // The student leaves as ONNX.
    await p.selectOption("#student-method", "pfd");
    const [onnx] = await Promise.all([p.waitForEvent("download"), p.click("#export-onnx")]);
    expect(onnx.suggestedFilename() === "pfd.onnx" && fs.readFileSync(await onnx.path()).length > 1000, "the student's ONNX");
    // Forgotten, the teacher leaves the setup.
    await p.click("#teacher-clear");
    await p.waitForFunction(() => !/--teacher-model/.test(document.getElementById("setup-command").textContent)
      && document.getElementById("setup-command").textContent.startsWith("distillrank"), null, { timeout: 30_000 });
  } finally {
    await p.close();
  }
});

await check("a_teacher_given_as_score_files_trains_on_uploaded_files", async () => {
  // Fold1's three files uploaded with the teacher's scores of each (a LightGBM model's, written
  // by distillrank predict), as the CLI's --teacher-scores TRAIN,VALID,TEST takes them.
  const fixture = path.join(root, "tests/data/mq2008-lightgbm.txt");
  const bin = process.env.DISTILLRANK_BIN ?? path.join(root, "target/debug/distillrank");
  const fold = path.join(root, "target/data/mq2008/Fold1");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-scores-"));
  const scores = [];
  for (const [file, name] of [["train.txt", "train.scores"], ["vali.txt", "vali.scores"], ["test.txt", "test.scores"]]) {
    const out = spawnSync(bin, ["predict", path.join(fold, file), "--model", fixture], { encoding: "utf8", maxBuffer: 1 << 26 });
    expect(out.status === 0, `distillrank predict: ${out.stderr}`);
    fs.writeFileSync(path.join(dir, name), out.stdout);
    scores.push(path.join(dir, name));
  }
  const p = await freshPage("#source=upload&privileged_kind=top&privileged_value=30%25&tau_target=&method=no-distillation,pfd" +
    "&seeds=1&epochs=1&widths=8&backend=cpu&workers=1");
  try {
    await p.setInputFiles("#files", ["train.txt", "vali.txt", "test.txt"].map((f) => path.join(fold, f)));
    await p.waitForFunction(() => /471 queries/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.setInputFiles("#teacher-files", scores);
    await p.waitForFunction(() => /lines of scores/.test(document.getElementById("teacher-stats").textContent),
      null, { timeout: 30_000 });
    const status = await clickAndWait(p, "#run", 300_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const line = await p.locator("#results-tests li.external-teacher").textContent();
    expect(/train\.scores/.test(line), `the teacher's line: ${line}`);
  } finally {
    await p.close();
  }
});

await check("a_reference_model_uploaded_on_the_page_is_a_row_with_its_tests", async () => {
  // The model a team runs today, uploaded beside the bundled data: a row of the table, and its
  // paired test against every method in words, as compare --reference-model gives them.
  const fixture = path.join(root, "tests/data/mq2008-lightgbm.txt");
  const p = await freshPage("#source=mq2008&privileged_kind=top&privileged_value=30%25&tau_target=&method=no-distillation" +
    "&seeds=1&epochs=1&widths=8&backend=cpu&workers=1");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.setInputFiles("#reference-files", fixture);
    await p.waitForFunction(() => /LightGBM model of 30 trees/.test(document.getElementById("reference-stats").textContent),
      null, { timeout: 30_000 });
    await p.waitForFunction(() => / --reference-model mq2008-lightgbm\.txt/.test(document.getElementById("setup-command").textContent),
      null, { timeout: 30_000 });
    const status = await clickAndWait(p, "#run", 300_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const row = await p.locator("#results tr.reference").textContent();
    expect(/LightGBM/.test(row), `the reference's row: ${row}`);
    const verdicts = await p.locator("#verdict").textContent();
    expect(/LightGBM on x and z/.test(verdicts), `the verdicts name the reference: ${verdicts}`);
    // The teacher's files and the reference's cannot share a name.
    await p.setInputFiles("#teacher-files", fixture);
    await p.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 30_000 });
    const clash = await errorText(p);
    expect(/mq2008-lightgbm\.txt is the name of one of the reference's files/.test(clash), `a clash of names: ${clash}`);
    console.log(`    ${row.replace(/\s+/g, " ").slice(0, 140)}`);
  } finally {
    await p.close();
  }
});

await check("learning_from_clicks_gives_the_clis_numbers", async () => {
  // Clicks simulated on MQ2008 (PBM, eta = 1) and the methods that learn from them, on a pool of
  // two workers that share the prepared data with the clicks by rank: the page's table is the
  // CLI's on the page's setup.json, its verdicts are on the graded NDCG, and results.json holds
  // the propensities, true and estimated.
  const methods = ["naive", "ips", "ips-estimated", "dla", "two-tower", "full-information"];
  const p = await freshPage(`#source=mq2008&privileged_kind=logs&loss=softmax&method=${methods.join(",")}` +
    "&seeds=2&epochs=2&widths=16&backend=cpu&workers=2");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    const status = await clickAndWait(p, "#run", 600_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const { onPage, byCli } = await pageAndCli(p);
    for (const m of methods) {
      for (const key of ["ndcg@8", "graded_ndcg@8"]) {
        expect(onPage.methods[m][key].mean === byCli.methods[m][key].mean,
          `${m} ${key}: page ${onPage.methods[m][key].mean}, CLI ${byCli.methods[m][key].mean}`);
      }
    }
    // The clicks' table and EM's estimate are the CLI's to the bit; the propensities DLA and
    // two-tower learn come from each engine's f32 scores (wasm's CPU kernels against native's),
    // so they agree to 1e-5.
    const { learned_propensities: learnedOnPage, ...clicksOnPage } = onPage.clicks;
    const { learned_propensities: learnedByCli, ...clicksByCli } = byCli.clicks;
    expect(JSON.stringify(clicksOnPage) === JSON.stringify(clicksByCli) && clicksOnPage.estimated_propensities.length === 10,
      `the clicks: ${JSON.stringify(clicksOnPage)} against ${JSON.stringify(clicksByCli)}`);
    for (const m of ["dla", "two-tower"]) {
      const [a, b] = [learnedOnPage[m], learnedByCli[m]];
      expect(a.length === 10 && a.every((v, k) => Math.abs(v - b[k]) < 1e-5), `${m} learned: page ${a}, CLI ${b}`);
    }
    expect(onPage.verdict_metric === "graded_ndcg@8", `verdict metric: ${onPage.verdict_metric}`);
    const verdict = await p.locator("#verdict").textContent();
    expect(/IPS against naive clicks|IPS beats naive clicks|IPS does worse than naive clicks/.test(verdict), `the verdict: ${verdict}`);
    // The verdicts test graded NDCG@8 and say so; the table's marks come from the test beside
    // them, its p column's (NDCG@8 on y against no distillation).
    expect(/naive clicks on graded NDCG@8/.test(verdict), `the verdict names its metric: ${verdict}`);
    const sentences = await p.locator("#results-tests").textContent();
    expect(/ on graded NDCG@8: /.test(sentences), `the sentences name their metric: ${sentences}`);
    const rows = await p.$$eval("#results tbody tr", (trs) => trs.map((tr) => ({
      method: tr.dataset.method, coloured: !!tr.querySelector(".gain-up, .gain-down"),
      p: tr.querySelectorAll("td")[7]?.textContent })));
    for (const row of rows) {
      const p = row.p === "< 0.001" ? 0 : Number(row.p);
      expect(!row.coloured || p < 0.05, `${row.method} is coloured beside its p ${row.p}`);
    }
    console.log(`    graded NDCG@8, page = CLI: ${methods.map((m) => `${m} ${onPage.methods[m]["graded_ndcg@8"].mean.toFixed(4)}`).join(", ")}`);
  } finally {
    await p.close();
  }
});

await check("training_labels_grades_give_the_clis_numbers", async () => {
  // y = the grades (as LightGBM trains), LambdaRank with gains 2^y - 1: the page's table is
  // the CLI's on the page's setup.json, and NDCG on y is the graded NDCG.
  const p = await freshPage("#source=mq2008&privileged_kind=top&privileged_value=30%25&labels=grades&loss=lambdarank" +
    "&method=no-distillation,pfd&seeds=2&epochs=2&widths=16&backend=cpu&workers=2");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    expect(await p.locator("[name=tau_target]").isHidden(), "tau_target shows with the grades as labels");
    const status = await clickAndWait(p, "#run", 600_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const { onPage, byCli, setup } = await pageAndCli(p);
    expect(setup.data.labels === "grades" && setup.loss === "lambdarank", `the page's setup: ${JSON.stringify(setup.data)}`);
    for (const m of ["no-distillation", "pfd"]) {
      for (const key of ["ndcg@1", "ndcg@5", "ndcg@8", "ndcg@10", "graded_ndcg@8"]) {
        expect(onPage.methods[m][key].mean === byCli.methods[m][key].mean,
          `${m} ${key}: page ${onPage.methods[m][key].mean}, CLI ${byCli.methods[m][key].mean}`);
      }
      expect(onPage.methods[m]["ndcg@8"].mean === onPage.methods[m]["graded_ndcg@8"].mean, `${m}: NDCG on y is not the graded NDCG`);
    }
    console.log(`    NDCG@8 on the grades, page = CLI: no distillation ${onPage.methods["no-distillation"]["ndcg@8"].mean.toFixed(4)}, ` +
      `PFD ${onPage.methods.pfd["ndcg@8"].mean.toFixed(4)}`);
    // RankBCE cannot learn grades: refused by name before anything trains.
    await p.selectOption("[name=loss]", "rankbce");
    const refused = await clickAndWait(p, "#run", 60_000);
    const error = await errorText(p);
    expect(refused === "Failed." && /rankbce/.test(error) && /grades/.test(error), `RankBCE on grades: ${refused} ${error}`);
  } finally {
    await p.close();
  }
});

await check("the_listwise_family_on_the_page_gives_the_clis_numbers", async () => {
  // Attention over each query's documents (two heads) on MQ2008: the page's comparison is the
  // CLI's on the page's setup.json, and the student it exports scores as the CLI's. Heads that do
  // not divide the last width are refused by name before anything trains.
  const p = await freshPage("#source=mq2008&privileged_kind=top&privileged_value=30%25&labels=grades" +
    "&method=no-distillation,pfd&seeds=2&epochs=2&widths=16&attention_heads=2&backend=cpu&workers=2");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.waitForFunction(() => / --attention-heads 2/.test(document.getElementById("setup-command").textContent),
      null, { timeout: 30_000 });
    const status = await clickAndWait(p, "#run", 600_000);
    expect(status.startsWith("Done"), `the run: ${status} ${await errorText(p)}`);
    const { onPage, byCli, setup } = await pageAndCli(p);
    expect(setup.attention_heads === 2, `the page's setup: attention_heads ${setup.attention_heads}`);
    for (const m of ["no-distillation", "pfd"]) {
      for (const key of ["ndcg@8", "graded_ndcg@8"]) {
        const [a, b] = [onPage.methods[m][key].mean, byCli.methods[m][key].mean];
        expect(Math.abs(a - b) < 1e-4, `${m} ${key}: page ${a}, CLI ${b}`);
      }
    }
    console.log(`    listwise, 2 heads: PFD ${onPage.methods.pfd["ndcg@8"].mean.toFixed(4)} on the page, ` +
      `${byCli.methods.pfd["ndcg@8"].mean.toFixed(4)} by the CLI`);
    await p.fill("[name=attention_heads]", "3");
    const refused = await clickAndWait(p, "#run", 60_000);
    const error = await errorText(p);
    expect(refused === "Failed." && /attention.heads/.test(error) && /divide/.test(error), `3 heads of 16: ${refused} ${error}`);
  } finally {
    await p.close();
  }
});

await check("class_34_a_bad_teacher_file_is_named_on_the_page", async () => {
  // A truncated model, and scores whose count does not match the data: each refused by name,
  // the model when it is uploaded, the scores when the comparison is prepared.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-bad-teacher-"));
  const model = fs.readFileSync(path.join(root, "tests/data/mq2008-lightgbm.txt"), "utf8");
  const truncated = path.join(dir, "truncated.txt");
  fs.writeFileSync(truncated, model.slice(0, Math.floor(model.length / 2)));
  const scores = path.join(dir, "scores.txt");
  fs.writeFileSync(scores, "0.5\n0.25\n");
  const p = await freshPage("#source=mq2008&privileged_kind=top&privileged_value=30%25&tau_target=&method=no-distillation,pfd&seeds=1&epochs=1&widths=8&backend=cpu&workers=1");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.setInputFiles("#teacher-files", truncated);
    await p.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 30_000 });
    const error = await errorText(p);
    expect(/truncated\.txt/.test(error), `a truncated model: ${error}`);
    // A file that is neither a model nor text (a saved student's weights) is refused when uploaded.
    const binary = path.join(dir, "student.safetensors");
    fs.writeFileSync(binary, Buffer.from([0x48, 0, 0, 0, 0, 0, 0, 0, 0x7b, 0xff, 0xfe, 0x00]));
    await p.evaluate(() => { document.getElementById("error").hidden = true; });
    await p.setInputFiles("#teacher-files", binary);
    await p.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 30_000 });
    const notText = await errorText(p);
    expect(/student\.safetensors: not UTF-8 text: expected a LightGBM or XGBoost model/.test(notText), `a binary file: ${notText}`);
    // A saved distillrank model's config is named for what it is, as the CLI's --teacher-model names it.
    const config = path.join(dir, "student.json");
    fs.writeFileSync(config, JSON.stringify({ format: "distillrank-model", format_version: 1, n_in: 46 }));
    await p.evaluate(() => { document.getElementById("error").hidden = true; });
    await p.setInputFiles("#teacher-files", config);
    await p.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 30_000 });
    const saved = await errorText(p);
    expect(/student\.json: .*a saved distillrank model's config, not a tree model/.test(saved), `a saved model's config: ${saved}`);
    // Gzipped scores (as `predict --run run.txt.gz` writes them) are read as their text.
    const gzipped = path.join(dir, "scores.txt.gz");
    fs.writeFileSync(gzipped, zlib.gzipSync("0.5\n0.25\n0.125\n"));
    await p.setInputFiles("#teacher-files", gzipped);
    await p.waitForFunction(() => /scores\.txt\.gz: 3 lines of scores/.test(document.getElementById("teacher-stats").textContent),
      null, { timeout: 30_000 });
    await p.setInputFiles("#teacher-files", scores);
    await p.waitForFunction(() => /scores\.txt: 2 lines of scores/.test(document.getElementById("teacher-stats").textContent),
      null, { timeout: 30_000 });
    const status = await clickAndWait(p, "#run", 120_000);
    const failure = await errorText(p);
    expect(!status.startsWith("Done") && /scores\.txt/.test(failure) && /2 scores/.test(failure),
      `scores for 2 of MQ2008's documents: ${status} ${failure}`);
    console.log(`    ${error.slice(0, 120)}`);
    console.log(`    ${failure.slice(0, 160)}`);
  } finally {
    await p.close();
  }
});

/// Every named control of the page's two forms: checkboxes as the sorted list of those checked,
/// a radio group as its choice, anything else as its value.
async function formValues(p) {
  return p.evaluate(() => {
    const out = {};
    for (const f of [document.getElementById("setup"), document.getElementById("objectives-setup")]) {
      for (const el of f.elements) {
        if (!el.name || el.type === "file") continue;
        if (el.type === "checkbox") out[el.name] = [...f.querySelectorAll(`input[name=${el.name}]:checked`)].map((b) => b.value).sort().join(",");
        else if (el.type !== "radio" || el.checked) out[el.name] = el.value;
      }
    }
    return out;
  });
}

/// The paths where two JSON values differ (`objectives.seeds: 3 -> 4`).
function jsonDiff(a, b, at = "") {
  const isObject = (v) => v && typeof v === "object" && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])]
      .flatMap((k) => jsonDiff(a[k], b[k], at ? `${at}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${at}: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`];
}

/// A JSON value with every object's fields in order, to compare two setups.
const canonicalJson = (v) => JSON.stringify(v, (k, x) => x && typeof x === "object" && !Array.isArray(x)
  ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x);

await check("class_36_every_setting_survives_link_reload_setup_json_and_open", async () => {
  // The link dropped what an opened setup held without a control (teacher_widths, first_seed,
  // teachers, idcg_zero, t, shown, rd.k, ...), and setup.json held neither the objectives' form
  // nor the workers. Here every control of both forms is walked to another value, over states
  // that make each apply, after opening a setup with settings no control shows; then link ->
  // reload, and setup.json -> open on a fresh page, must give the same controls and the same
  // setup.json.
  const states = [
    { source: "synthetic", privileged_kind: "logs", labels: "gumbel", obj_source: "synthetic", flipObjectives: true },
    { source: "synthetic", privileged_kind: "cols", privileged_value: "1,3", labels: "gumbel", obj_source: "upload", flipObjectives: false },
    { source: "mq2008", privileged_kind: "top", privileged_value: "5", labels: "grades", obj_source: "synthetic", flipObjectives: false },
  ];
  const walked = new Set();
  const download = async (p) => {
    const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    return JSON.parse(fs.readFileSync(await d.path(), "utf8"));
  };
  // The setup box describes the form's setup (a refusal shows in brackets).
  const settled = async (p, what) => {
    await p.waitForTimeout(500);
    const ok = await p.waitForFunction(() => !/^\(/.test(document.getElementById("setup-command").textContent) &&
      document.getElementById("setup-command").textContent !== "", null, { timeout: 10_000 }).then(() => true, () => false);
    expect(ok, `${what}: the form holds no valid setup: ${await p.locator("#setup-command").textContent()}`);
  };
  for (const st of states) {
    const p = await freshPage();
    let hash, values, written;
    try {
      // A setup with settings the form has no control for, opened first.
      const base = await download(p);
      const options = base.data.source.synthetic.options;
      const objectives = base.objectives;
      const opened = {
        ...base, teacher_widths: [24, 12], first_seed: 5, teachers: 3, idcg_zero: "zero",
        rd: { ...base.rd, k: 5 },
        data: {
          ...base.data, t: 6, logs: { ...base.data.logs, shown: 7 },
          source: { synthetic: { ...base.data.source.synthetic, options: { ...options, kind: "linear", privileged: 4 } } },
        },
        objectives: { ...objectives, patience: 7, widths: [16], objectives: objectives.objectives.map((o) => (o === "auc-pr" ? "auc-pr:10" : o)) },
      };
      await p.setInputFiles("#setup-file", tempFile("opened.json", JSON.stringify(opened)));
      await p.waitForFunction(() => /--first-seed 5/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
      // The state, then every control that applies in it to another value.
      const changed = await p.evaluate((st) => {
        const forms = [document.getElementById("setup"), document.getElementById("objectives-setup")];
        const fire = (el) => el.dispatchEvent(new Event("change", { bubbles: true }));
        const set = (name, value) => {
          for (const f of forms) {
            const el = f.elements[name];
            if (el instanceof RadioNodeList) {
              for (const r of el) if (r.value === value) { r.checked = true; fire(r); }
            } else if (el) { el.value = value; fire(el); }
          }
        };
        for (const name of ["source", "privileged_kind", "privileged_value", "labels", "obj_source"]) if (st[name] !== undefined) set(name, st[name]);
        const stateNames = new Set(["source", "privileged_kind", "privileged_value", "labels", "obj_source"]);
        const objSource = st.obj_source;
        const applies = (el) => {
          if (el.closest("[hidden]")) return false;
          // An objective's target, with its box checked (the boxes come first: flipped already).
          const box = el.type === "number" && el.closest("label")?.querySelector("input[type=checkbox]");
          if (box) return box.checked;
          const field = el.dataset.field ?? "";
          if (field.startsWith("objectives.data.synthetic.")) return objSource === "synthetic";
          if (field.startsWith("objectives.data.files.")) return objSource === "upload";
          return true;
        };
        const texts = { widths: "48,24", workers: "3" };
        const changed = [];
        for (const f of forms) {
          for (const el of f.elements) {
            if (!el.name || el.type === "file" || stateNames.has(el.name) || !applies(el)) continue;
            if (el.type === "checkbox") {
              if (el.name === "objective" && !st.flipObjectives) continue;
              el.checked = !el.checked;
            } else if (el.tagName === "SELECT") {
              el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
            } else if (el.type === "number") {
              const v = Number(el.value);
              if (el.step === "1") el.value = String(el.max !== "" && v + 1 > Number(el.max) ? v - 1 : v + 1);
              else el.value = String(v > 0 ? v / 2 : 0.25);
            } else if (texts[el.name] !== undefined) {
              el.value = texts[el.name];
            } else {
              continue;
            }
            fire(el);
            changed.push(el.name);
          }
        }
        return changed;
      }, st);
      for (const name of changed) walked.add(name);
      for (const name of ["source", "privileged_kind", "privileged_value", "labels", "obj_source"]) walked.add(name);
      if (st.source === "mq2008") {
        await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
      }
      await settled(p, `${st.privileged_kind}: after the walk`);
      expect(!(await p.locator("#error").isVisible()), `${st.privileged_kind}: the walk's form is refused: ${await errorText(p)}`);
      values = await formValues(p);
      hash = await p.evaluate(() => location.hash);
      written = await download(p);
      // What no control shows, kept from the opened setup.
      expect(canonicalJson(written.teacher_widths) === "[24,12]" && written.first_seed === 5 && written.teachers === 3 &&
        written.idcg_zero === "zero" && written.rd.k === 5 && written.data.t === 6 && written.data.logs.shown === 7 &&
        written.objectives.patience === 7 && canonicalJson(written.objectives.widths) === "[16]" && written.jobs === 3,
        `${st.privileged_kind}: setup.json after the walk: ${canonicalJson(written)}`);
      if (!st.flipObjectives) expect(written.objectives.objectives.includes("auc-pr:10"), `auc-pr's anchors: ${written.objectives.objectives}`);
    } finally {
      await p.close();
    }
    // The link, on a fresh page.
    const linked = await freshPage(hash);
    try {
      if (st.source === "mq2008") {
        await linked.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
      }
      await settled(linked, `${st.privileged_kind}: the link`);
      expect(!(await linked.locator("#error").isVisible()), `${st.privileged_kind}: the link is refused: ${await errorText(linked)}`);
      const again = await formValues(linked);
      const differ = Object.keys(values).filter((k) => values[k] !== again[k]).map((k) => `${k} ${values[k]} -> ${again[k]}`);
      expect(differ.length === 0, `${st.privileged_kind}: after link -> reload: ${differ.join("; ")}`);
      const rewritten = await download(linked);
      expect(canonicalJson(rewritten) === canonicalJson(written), `${st.privileged_kind}: setup.json after the link: ${jsonDiff(written, rewritten).join("; ")}`);
    } finally {
      await linked.close();
    }
    // setup.json, opened on a fresh page.
    const reopened = await freshPage();
    try {
      await reopened.setInputFiles("#setup-file", tempFile("walked.json", JSON.stringify(written)));
      await reopened.waitForFunction(() => /--first-seed 5/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
      if (st.source === "mq2008") {
        await reopened.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
      }
      await settled(reopened, `${st.privileged_kind}: the opened setup.json`);
      const again = await formValues(reopened);
      // "k / columns" with the top k or columns only: the logs' split has no value of its own.
      const differ = Object.keys(values).filter((k) => values[k] !== again[k] && !(k === "privileged_value" && st.privileged_kind === "logs"))
        .map((k) => `${k} ${values[k]} -> ${again[k]}`);
      expect(differ.length === 0, `${st.privileged_kind}: after setup.json -> open: ${differ.join("; ")}`);
      const rewritten = await download(reopened);
      expect(canonicalJson(rewritten) === canonicalJson(written), `${st.privileged_kind}: setup.json after opening it: ${jsonDiff(written, rewritten).join("; ")}`);
    } finally {
      await reopened.close();
    }
  }
  // Every control of both forms was walked in some state.
  const all = await page.evaluate(() => [...document.getElementById("setup").elements, ...document.getElementById("objectives-setup").elements]
    .filter((el) => el.name && el.type !== "file").map((el) => el.name));
  const missed = [...new Set(all)].filter((name) => !walked.has(name));
  expect(missed.length === 0, `controls no state walked: ${missed.join(", ")}`);
  console.log(`    ${walked.size} controls walked over ${states.length} states`);
});

await check("the_clicks_button_and_the_objectives_give_their_commands_figures_on_full_default_runs", async () => {
  // The page as it opens, on the CPU engine, with nothing changed: the Learning from clicks
  // button and the global objectives' Run, each against the CLI on the page's setup.json (the
  // same comparison on MQ2008 with simulated clicks; `distillrank objectives --setup`).
  const p = await freshPage("#backend=cpu");
  try {
    await p.click("#learn-clicks");
    await p.waitForFunction(() => /^Done|^Failed/.test(document.getElementById("status").textContent), null, { timeout: 900_000 });
    const status = await p.locator("#status").textContent();
    expect(status.startsWith("Done"), `the button's run: ${status} ${await errorText(p)}`);
    console.log(`    Learning from clicks: ${status.split(";")[0]}`);
    const { onPage, byCli } = await pageAndCli(p);
    expectSameFigures(onPage, byCli, "the Learning from clicks button");

    const done = await runObjectives(p, 900_000);
    expect(done.startsWith("Done") && / on cpu/.test(done), `the objectives' run: ${done} ${await errorText(p)}`);
    console.log(`    the objectives: ${done.split(":")[0]}`);
    const [json] = await Promise.all([p.waitForEvent("download"), p.click("#objectives-export")]);
    const page = JSON.parse(fs.readFileSync(await json.path(), "utf8"));
    const [setupFile] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-objectives-"));
    fs.copyFileSync(await setupFile.path(), path.join(dir, "setup.json"));
    const bin = process.env.DISTILLRANK_BIN ?? path.join(root, "target/debug/distillrank");
    const cli = spawnSync(bin, ["objectives", "--setup", path.join(dir, "setup.json"), "--out", path.join(dir, "out"), "--quiet"],
      { encoding: "utf8", env: { ...process.env, XDG_RUNTIME_DIR: os.tmpdir() } });
    expect(cli.status === 0, `distillrank objectives: ${cli.stderr}`);
    const byCommand = JSON.parse(fs.readFileSync(path.join(dir, "out/results.json"), "utf8"));
    expectSameObjectives(page, byCommand);
  } finally {
    await p.close();
  }
});

/// Every objective's per-seed test figures of the page's objectives run and its command's: the
/// same objectives and seeds, each mean within two standard errors of the difference (the
/// products round differently natively and in WebAssembly; see expectSameFigures). The
/// multipliers of the constrained objectives carry a difference further than a comparison's
/// losses do: fewer figures agree to the bit here.
function expectSameObjectives(onPage, byCli) {
  // The page keeps each run (objective, seed); results.json, each objective's figures by seed.
  const names = [onPage.runs.map((o) => o.objective).sort().join(), Object.keys(byCli.objectives).sort().join()];
  expect(names[0] === names[1] && onPage.runs.length > 0, `objectives: page ${names[0]}, CLI ${names[1]}`);
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const variance = (xs) => xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1);
  let [equal, all, widest] = [0, 0, { gap: 0 }];
  for (const o of onPage.runs) {
    for (const key of ["auc_pr", "auc_roc", "recall_at_precision", "precision_at_recall", "f1", "accuracy"]) {
      const [a, b] = [o.runs.map((r) => r.test[key]), byCli.objectives[o.objective][key].per_seed];
      const shown = `${o.objective} test ${key}: page ${JSON.stringify(a)}, CLI ${JSON.stringify(b)}`;
      expect(a.length === b.length && a.length > 1 && [...a, ...b].every(Number.isFinite), shown);
      equal += a.filter((x, i) => x === b[i]).length;
      all += a.length;
      const gap = Math.abs(mean(a) - mean(b));
      const stderr = Math.sqrt((variance(a) + variance(b)) / a.length);
      expect(gap <= 2 * stderr, `${shown}: the means further apart than two standard errors (${(2 * stderr).toFixed(4)})`);
      if (gap > widest.gap) widest = { gap, what: `${o.objective} ${key}`, stderr };
    }
  }
  console.log(`    the objectives, page against CLI: ${equal} of ${all} per-seed figures equal to the bit; ` +
    (widest.gap ? `widest gap of means ${widest.gap.toFixed(4)} (${widest.what}, one standard error ${widest.stderr.toFixed(4)})` : "every mean equal"));
}

await check("class_36_auto_takes_the_cpu_engine_when_webgpu_cannot_train_the_model", async () => {
  // Hidden widths 4200,4200 pass the size check, but a 4200 x 4200 layer needs 68,907 workgroups
  // in one dispatch, past WebGPU's 65,535 per dimension. Auto's WebGPU timing used to fail with
  // the raw dispatch error and never fall back; now auto takes the CPU engine, says why in one
  // line, and the run ends as it would on the CPU engine. Small data and one model keep the CPU
  // engine's run short.
  const p = await freshPage("#backend=auto&workers=1&widths=4200,4200&batch_docs=32&queries=40&valid_queries=20&test_queries=20" +
    "&min_docs=10&max_docs=10&epochs=1&seeds=1&method=no-distillation");
  try {
    const status = await clickAndWait(p, "#run", 600_000);
    const engine = await p.locator("#engine").textContent();
    expect(status.startsWith("Done"), `auto with a model WebGPU cannot train: ${status}; ${await errorText(p)}`);
    expect(/Training on the CPU engine/.test(engine) && /auto chose the CPU engine: CPU engine [\d,]+ docs\/s \(1 worker\); WebGPU cannot train this model \(.*(workgroups|WebGPU)/.test(engine),
      `the engine line: ${engine}`);
    expect(!(await p.locator("#error").isVisible()), `an error beside the fallback: ${await errorText(p)}`);
    console.log(`    ${engine.slice(0, 240)}`);
  } finally {
    await p.close();
  }
});

await check("class_36_a_long_preparation_shows_its_progress_and_stops", async () => {
  // Simulating a million sessions of every MQ2008 query takes the worker far longer than anyone
  // waits: the status line said "Starting…" throughout. It now counts the queries simulated, and
  // Stop ends the step and gives Run back.
  const p = await freshPage("#source=mq2008&privileged_kind=logs&log_sessions=1000000&backend=cpu&workers=1&seeds=1&epochs=1" +
    "&method=no-distillation,pfd");
  try {
    await p.waitForFunction(() => /MQ2008/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.click("#run");
    const counted = /^Preparing the data: simulating logs, ([\d,]+) of ([\d,]+) queries…$/;
    await p.waitForFunction((re) => new RegExp(re).test(document.getElementById("status").textContent), counted.source, { timeout: 180_000 });
    const first = await p.locator("#status").textContent();
    // It moves.
    await p.waitForFunction(([re, first]) => {
      const text = document.getElementById("status").textContent;
      return new RegExp(re).test(text) && text !== first;
    }, [counted.source, first], { timeout: 180_000 });
    const later = await p.locator("#status").textContent();
    const [, done, total] = later.match(counted);
    expect(Number(done.replace(/,/g, "")) < Number(total.replace(/,/g, "")), `progress: ${first} then ${later}`);
    expect(!(await p.locator("#stop").isDisabled()), "Stop is disabled during the preparation");
    const stopped = Date.now();
    await p.click("#stop");
    await p.waitForFunction(() => document.getElementById("status").textContent === "Stopped.", null, { timeout: 60_000 });
    await p.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 120_000 });
    console.log(`    ${first} … ${later}; stopped, Run back after ${((Date.now() - stopped) / 1000).toFixed(1)} s`);
  } finally {
    await p.close();
  }
});

await check("class_36_a_large_upload_shows_its_progress_and_stops", async () => {
  // A large file read without a word ("Reading…") and could not be stopped. Its bytes now count
  // in the data's box, and Stop ends the reading, leaving no half-read data behind.
  const big = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-")), "big.txt");
  const out = fs.openSync(big, "w");
  for (let chunk = 0; chunk < 300; chunk++) {
    const lines = [];
    for (let q = 0; q < 100; q++) {
      for (let d = 0; d < 20; d++) {
        const qid = chunk * 100 + q + 1;
        lines.push(`${d % 3} qid:${qid} ${Array.from({ length: 20 }, (_, j) => `${j + 1}:${((qid * 7 + d * 13 + j) % 97) / 97}`).join(" ")}`);
      }
    }
    fs.writeSync(out, lines.join("\n") + "\n");
  }
  fs.closeSync(out);
  const size = fs.statSync(big).size;
  const p = await freshPage("#source=upload&backend=cpu");
  try {
    await p.setInputFiles("#files", big);
    const counted = /^Reading… reading big\.txt, (\d+) of (\d+) MB…$/;
    await p.waitForFunction((re) => new RegExp(re).test(document.getElementById("stats").textContent), counted.source, { timeout: 60_000 });
    const shown = await p.locator("#stats").textContent();
    const [, done, total] = shown.match(counted);
    expect(Number(total) === Math.round(size / 1e6) && Number(done) < Number(total), `${shown} of a ${size}-byte file`);
    expect(!(await p.locator("#stop").isDisabled()), "Stop is disabled while the upload reads");
    await p.click("#stop");
    await p.waitForFunction(() => /^Stopped: big\.txt not read\.$/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.waitForFunction(() => !document.getElementById("run").disabled, null, { timeout: 60_000 });
    // Nothing half-read stays: Run says the upload was stopped.
    const status = await clickAndWait(p, "#run", 30_000);
    expect(status === "Failed." && /the upload failed \(its reading was stopped\)/.test(await errorText(p)), `Run after Stop: ${status} ${await errorText(p)}`);
    console.log(`    ${shown} (${(size / 1e6).toFixed(0)} MB file); Stop: ${await p.locator("#stats").textContent()}`);
  } finally {
    await p.close();
    fs.rmSync(path.dirname(big), { recursive: true, force: true });
  }
});

await check("class_36_uploads_follow_one_rule_for_their_files_and_columns", async () => {
  // Two files for one split: the command named one and the engine trained on the other. A test
  // file with fewer columns than the training file was padded with zeros here while a saved
  // model's scoring refused it. After an upload the setup box kept the generator's text.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "distillrank-e2e-"));
  const write = (name, queries, features) => {
    const lines = [];
    for (let q = 1; q <= queries; q++) {
      for (let d = 0; d < 12; d++) {
        const grade = Math.max(0, 2 - (d % 4));
        lines.push(`${grade} qid:${q} ${Array.from({ length: features }, (_, j) => `${j + 1}:${(((q * 7 + d * 13 + j) % 17) / 17 + grade * 0.2).toFixed(3)}`).join(" ")}`);
      }
    }
    fs.writeFileSync(path.join(dir, name), lines.join("\n") + "\n");
    return path.join(dir, name);
  };
  const train = write("mytrain.txt", 60, 6);
  const other = write("other.txt", 60, 6);
  const test = write("mytest.txt", 20, 4);
  const p = await freshPage("#source=upload&backend=cpu&epochs=1&seeds=1&widths=8&method=no-distillation,pfd");
  try {
    await p.setInputFiles("#files", [train, other]);
    await p.waitForSelector("#error:not([hidden])", { timeout: 30_000 });
    const two = await errorText(p);
    expect(/mytrain\.txt and other\.txt are all for the training split: choose one file per split/.test(two), `two training files: ${two}`);
    await p.evaluate(() => { document.getElementById("error").hidden = true; });
    await p.setInputFiles("#files", [train, test]);
    await p.waitForFunction(() => /mytrain\.txt/.test(document.getElementById("stats").textContent), null, { timeout: 30_000 });
    // The setup box names the uploads.
    await p.waitForFunction(() => /--train mytrain\.txt --test mytest\.txt/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
    const status = await clickAndWait(p, "#run", 60_000);
    const fewer = await errorText(p);
    expect(status === "Failed." && /mytest\.txt: the data have 4 feature columns \(highest index\), the training file mytrain\.txt has 6/.test(fewer) &&
      /allow_missing_features true/.test(fewer), `a test file with fewer columns: ${status} ${fewer}`);
    await p.check("input[name=allow_missing_features]");
    await p.waitForFunction(() => /--allow-missing-features true/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
    const allowed = await clickAndWait(p, "#run", 120_000);
    expect(allowed.startsWith("Done"), `with its last columns read as 0: ${allowed} ${await errorText(p)}`);
    console.log(`    ${two.slice(0, 120)}`);
    console.log(`    ${fewer.slice(0, 160)}`);
  } finally {
    await p.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

await check("class_every_file_a_setup_names_survives_upload_download_and_open", async () => {
  // The LightGBM rank example's files take their groups from .query files. A setup downloaded
  // after their upload names each split's .query file (the CLI's --train-query), in the
  // comparison's files and the objectives'; opened on a page without the uploads, the setup
  // keeps them. The form rebuilt a setup's files from the uploads' names and dropped them.
  const dir = path.join(root, "target/data/lightgbm_rank");
  const files = ["rank.train", "rank.train.query", "rank.test", "rank.test.query"].map((f) => path.join(dir, f));
  const download = async (p) => {
    const [d] = await Promise.all([p.waitForEvent("download"), p.click("#setup-download")]);
    return JSON.parse(fs.readFileSync(await d.path(), "utf8"));
  };
  const want = { train: "rank.train", train_query: "rank.train.query", test: "rank.test", test_query: "rank.test.query" };
  const named = (files, where) => {
    for (const [k, v] of Object.entries(want)) expect(files?.[k] === v, `${where}.${k}: ${JSON.stringify(files)}`);
    expect(files.valid == null && files.valid_query == null, `${where}: no validation file: ${JSON.stringify(files)}`);
  };
  const p = await freshPage("#source=upload&backend=cpu&epochs=1&seeds=1&widths=8&method=no-distillation,pfd");
  let saved;
  try {
    await p.setInputFiles("#files", files);
    await p.waitForFunction(() => /rank\.train/.test(document.getElementById("stats").textContent), null, { timeout: 60_000 });
    await p.check("input[name=obj_source][value=upload]");
    await p.waitForFunction(() => /--train-query rank\.train\.query/.test(document.getElementById("setup-command").textContent) &&
      /--test-query rank\.test\.query/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
    // The uploads' .query files are the form's, not settings kept from an opened setup.
    const kept = await p.locator("#setup-kept").textContent();
    expect(!/query/.test(kept), `kept from an opened setup: ${kept}`);
    saved = await download(p);
    named(saved.data.source.files, "data.source.files");
    named(saved.objectives.data.files, "objectives.data.files");
  } finally {
    await p.close();
  }
  const q = await freshPage();
  try {
    await q.setInputFiles("#setup-file", tempFile("ranked.json", JSON.stringify(saved)));
    await q.waitForFunction(() => /--train-query rank\.train\.query/.test(document.getElementById("setup-command").textContent), null, { timeout: 10_000 });
    const again = await download(q);
    named(again.data.source.files, "opened: data.source.files");
    named(again.objectives.data.files, "opened: objectives.data.files");
  } finally {
    await q.close();
  }
});

await check("no_uncaught_errors", async () => {
  const real = pageErrors.filter((e) => !/favicon/.test(e));
  expect(real.length === 0, `page errors: ${real.join(" | ")}`);
});

await browser.close();
console.log(`\ntest result: ${failed ? "FAILED" : "ok"}. ${passed} passed; ${failed} failed; 0 ignored`);
process.exit(failed ? 1 : 0);
