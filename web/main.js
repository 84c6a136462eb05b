// The page: reads the setup form (kept in the URL), talks to the worker (worker.js), draws the
// charts with Chart.js and fills the results table.

const $ = (id) => document.getElementById(id);
const form = $("setup");

// ---------------------------------------------------------------- the setup, kept in the URL

const FIELDS = [
  "source", "queries", "valid_queries", "test_queries", "min_docs", "max_docs", "regular", "noise", "query_spread",
  "privileged_strength", "privileged_correlation", "data_seed", "tau_target", "min_group_size", "privileged_kind",
  "privileged_value", "loss", "alpha", "epochs", "patience", "widths", "lr", "batch_docs",
  "seeds", "backend", "workers", "log_sessions", "log_click_model", "log_position_bias", "log_conversion_rate",
  "log_seed",
];

function readForm() {
  const f = new FormData(form);
  const out = {};
  for (const k of FIELDS) out[k] = f.get(k);
  out.methods = f.getAll("method");
  return out;
}

/// Sets fields of the methods' form by name.
function writeForm(values) {
  for (const [k, v] of Object.entries(values)) {
    const el = form.elements[k];
    if (el instanceof RadioNodeList) {
      for (const r of el) r.checked = r.value === v;
    } else if (el) {
      el.value = v;
    }
  }
  showSourceKnobs();
}

/// Every named field of both forms (the methods and the objectives), checkboxes as the list of
/// checked values, in the URL's hash: a link reproduces the setup.
function urlForms() {
  return [form, $("objectives-setup")];
}

function saveToUrl() {
  const p = new URLSearchParams();
  for (const f of urlForms()) {
    for (const el of f.elements) {
      if (!el.name || el.type === "file") continue;
      if (el.type === "checkbox") {
        const checked = [...f.querySelectorAll(`input[name=${el.name}]:checked`)].map((b) => b.value);
        p.set(el.name, checked.join(","));
      } else if (el.type !== "radio" || el.checked) {
        p.set(el.name, el.value);
      }
    }
  }
  history.replaceState(null, "", "#" + p.toString());
}

function loadFromUrl() {
  const p = new URLSearchParams(location.hash.slice(1));
  for (const f of urlForms()) {
    for (const el of f.elements) {
      if (!el.name || el.type === "file" || !p.has(el.name)) continue;
      const v = p.get(el.name);
      if (el.type === "checkbox") el.checked = v.split(",").includes(el.value);
      else if (el.type === "radio") el.checked = el.value === v;
      else el.value = v;
    }
  }
  showSourceKnobs();
}

function showSourceKnobs() {
  const { source, privileged_kind } = readForm();
  $("synthetic-knobs").hidden = source !== "synthetic";
  $("upload-box").hidden = source !== "upload";
  $("mq2008-box").hidden = source !== "mq2008";
  $("logs-knobs").hidden = privileged_kind !== "logs";
}

const number = (v, what) => {
  const x = Number(v);
  if (v === "" || !Number.isFinite(x)) throw new Error(`${what}: '${v}' is not a number`);
  return x;
};
const integer = (v, what) => {
  const x = number(v, what);
  if (!Number.isInteger(x) || x < 0) throw new Error(`${what}: '${v}' is not a whole number`);
  return x;
};

/// The library's default setup (crate/setup.rs, the CLI's defaults), asked of the engine at
/// start-up: the page's setups are it with the form's values on top.
let defaults = null;

/// What the JSON of a setup says about where it was made.
const PAGE_NOTE = "made on the page: its form starts lighter than the CLI's defaults for a browser " +
  "(less data, a smaller model, fewer epochs); the page lists every difference beside the form";

/// The setup's data source (crate/setup.rs, `DataSource`) from the form.
function dataSource(v) {
  if (v.source === "mq2008") return "mq2008";
  if (v.source === "upload") {
    const name = (role) => uploads.find((u) => u.role === role)?.name ?? null;
    return { files: { train: name("train") ?? "train.txt", valid: name("valid"), test: name("test") } };
  }
  const base = defaults.data.source.synthetic;
  return {
    synthetic: {
      options: {
        ...base.options,
        queries: integer(v.queries, "training queries"),
        min_docs: integer(v.min_docs, "docs per query, min"),
        max_docs: integer(v.max_docs, "docs per query, max"),
        regular: integer(v.regular, "regular features"),
        noise: number(v.noise, "relevance noise"),
        query_spread: number(v.query_spread, "query spread"),
        privileged_strength: number(v.privileged_strength, "privileged strength"),
        privileged_correlation: number(v.privileged_correlation, "z's correlation with x"),
        seed: integer(v.data_seed, "data seed"),
      },
      valid_queries: integer(v.valid_queries, "validation queries"),
      test_queries: integer(v.test_queries, "test queries"),
    },
  };
}

/// The setup of a comparison (crate/setup.rs, `Setup`): the defaults with the form's values.
/// `backend`: "webgpu", "cpu" or "auto".
function compareSetup(v, backend) {
  if (!defaults) throw new Error("the engine is still starting");
  const widths = String(v.widths).split(",").map((w) => integer(w.trim(), "hidden widths"));
  let privileged = null;
  if (v.privileged_kind === "top") {
    // A count (top:12) or a share of the informative features (top:30%).
    const k = String(v.privileged_value).trim();
    if (!/^\d+(\.\d+)?%$|^\d+$/.test(k)) throw new Error(`k: expected a count such as 12 or a share such as 30%, got '${k}'`);
    privileged = `top:${k}`;
  }
  if (v.privileged_kind === "cols") privileged = `cols:${v.privileged_value}`;
  if (v.privileged_kind === "generator" && v.source !== "synthetic") {
    throw new Error("real data have no generator: choose top k, columns or simulated logs for the privileged features");
  }
  let logs = defaults.data.logs;
  if (v.privileged_kind === "logs") {
    privileged = "logs";
    logs = {
      ...defaults.data.logs,
      sessions: integer(v.log_sessions, "sessions"),
      click_model: v.log_click_model,
      position_bias: number(v.log_position_bias, "position bias"),
      conversion_rate: number(v.log_conversion_rate, "conversion rate"),
      seed: integer(v.log_seed, "log seed"),
    };
  }
  if (v.methods.length === 0) throw new Error("choose at least one method");
  return {
    ...defaults,
    data: {
      ...defaults.data,
      source: dataSource(v),
      privileged,
      logs,
      tau_target: number(v.tau_target, "tau_target"),
      min_group_size: integer(v.min_group_size, "min group size"),
    },
    methods: v.methods,
    loss: v.loss,
    alpha: number(v.alpha, "alpha"),
    epochs: integer(v.epochs, "epochs"),
    patience: integer(v.patience, "patience"),
    widths,
    lr: number(v.lr, "learning rate"),
    batch_docs: integer(v.batch_docs, "batch"),
    seeds: integer(v.seeds, "seeds"),
    backend: backend === "webgpu" ? "gpu" : backend,
    note: PAGE_NOTE,
  };
}

/// The form's fields from a setup (one the CLI wrote, or the page exported).
function formFromSetup(setup) {
  const d = setup.data ?? {};
  const values = {};
  const source = d.source ?? defaults.data.source;
  if (source === "mq2008") values.source = "mq2008";
  else if (source.files) values.source = "upload";
  else if (source.synthetic) {
    const o = source.synthetic.options;
    Object.assign(values, {
      source: "synthetic", queries: o.queries, valid_queries: source.synthetic.valid_queries,
      test_queries: source.synthetic.test_queries, min_docs: o.min_docs, max_docs: o.max_docs,
      regular: o.regular, noise: o.noise, query_spread: o.query_spread,
      privileged_strength: o.privileged_strength, privileged_correlation: o.privileged_correlation, data_seed: o.seed,
    });
  }
  const p = d.privileged ?? null;
  if (p === null) values.privileged_kind = "generator";
  else if (p === "logs") {
    values.privileged_kind = "logs";
    const l = d.logs ?? {};
    Object.assign(values, {
      log_sessions: l.sessions, log_click_model: l.click_model, log_position_bias: l.position_bias,
      log_conversion_rate: l.conversion_rate, log_seed: l.seed,
    });
  } else if (p.startsWith("top:")) Object.assign(values, { privileged_kind: "top", privileged_value: p.slice(4) });
  else if (p.startsWith("cols:")) Object.assign(values, { privileged_kind: "cols", privileged_value: p.slice(5) });
  else throw new Error(`the page cannot show the privileged split '${p}'; run it with distillrank compare --setup`);
  if (d.tau_target != null) values.tau_target = d.tau_target;
  if (d.min_group_size != null) values.min_group_size = d.min_group_size;
  for (const k of ["loss", "alpha", "epochs", "patience", "lr", "batch_docs", "seeds"]) {
    if (setup[k] != null) values[k] = setup[k];
  }
  if (setup.widths) values.widths = setup.widths.join(",");
  if (setup.backend) values.backend = setup.backend === "gpu" ? "webgpu" : setup.backend;
  for (const [k, v] of Object.entries(values)) if (v === undefined) delete values[k];
  writeForm(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)])));
  if (setup.methods) {
    for (const box of form.querySelectorAll('input[name="method"]')) box.checked = setup.methods.includes(box.value);
  }
}

/// The setup box: the form's setup as the equivalent `distillrank compare` command and the
/// settings where it departs from the defaults (the page's lighter ones among them).
let lastDescribed = null;
async function describeSetup() {
  if (!defaults || !workers.length) return;
  let setup;
  try {
    setup = compareSetup(readForm(), readForm().backend);
  } catch (e) {
    $("setup-command").textContent = `(${e.message})`;
    return;
  }
  const d = await request({ type: "describe", setup });
  lastDescribed = d;
  $("setup-command").textContent = d.command;
  $("setup-differences").innerHTML = d.differences.length
    ? "Differs from the CLI's defaults: " + d.differences.map(([k, v, def]) =>
      `<b>${escapeHtml(k)}</b> ${escapeHtml(v)} <span class="hint">(default ${escapeHtml(def)})</span>`).join("; ") + "."
    : "The CLI's defaults.";
}

// ---------------------------------------------------------------- the workers

/// Most workers the pool starts, whatever the browser reports (each holds a copy of the data).
const MAX_WORKERS = 8;

let adapter = null;      // {name, backend, software, products, products_ms} or null
let noGpuWhy = null;
let uploads = [];        // [{role, name, file, query}] to send again after a restart
let nextId = 1;

/// One Web Worker running the wasm engine (worker.js). Requests are answered in order; training
/// requests ("job", "objectives") also send events as they go.
class EngineWorker {
  constructor(gpu) {
    this.worker = new Worker("worker.js", { type: "module" });
    this.pending = new Map();   // training request id -> {onEvent, resolve, reject}
    this.waiters = [];          // replies of other requests, in order
    this.dataKey = null;        // the data message it holds
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => showError(`The engine failed to start: ${e.message ?? "worker error"}`, true);
    this.ready = this.request({ type: "init", gpu });
  }

  request(msg) {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.worker.postMessage(msg);
    });
  }

  train(msg, onEvent) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { onEvent, resolve, reject });
      this.worker.postMessage({ ...msg, id });
    });
  }

  onMessage(m) {
    if (m.type === "event") {
      this.pending.get(m.id)?.onEvent(m.event);
      return;
    }
    if (m.id !== undefined && this.pending.has(m.id)) {
      const run = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.type === "error") run.reject(new Error(m.message));
      else run.resolve(m.result);
      return;
    }
    const w = this.waiters.shift();
    if (!w) return;
    if (m.type === "error") w.reject(new Error(m.message));
    else w.resolve(m);
  }

  terminate() {
    this.worker.terminate();
    for (const p of this.pending.values()) p.reject(new Error("stopped"));
    for (const w of this.waiters) w.reject(new Error("stopped"));
    this.pending.clear();
    this.waiters = [];
  }
}

/// workers[0] opens WebGPU and answers everything outside a comparison's jobs; the others join
/// when a comparison on the CPU engine asks for more.
let workers = [];
/// The data every worker should hold: the last data message (synthetic, mq2008, upload), and the
/// first worker's reply to it.
let data = { key: null, message: null, reply: null };
/// Which worker holds each method's first-seed student (for the download).
const studentWorker = new Map();

async function startWorkers() {
  workers = [new EngineWorker(true)];
  const r = await workers[0].ready;
  adapter = r.adapter;
  noGpuWhy = r.why;
  showEngine();
  $("run").disabled = false;
  $("sweep").disabled = false;
  $("real-logs").disabled = false;
  $("objectives-run").disabled = false;
}

/// Sends a message whose reply is not a training run to the first worker.
function request(msg) {
  return workers[0].request(msg);
}

/// Makes `msg` the data of every worker; returns the first worker's reply (its statistics).
async function loadData(msg) {
  const key = msg.type === "upload"
    ? JSON.stringify(msg.files.map((f) => [f.role, f.name, f.file.size, f.file.lastModified, f.query?.size]))
    : JSON.stringify(msg);
  if (key !== data.key) data = { key, message: msg, reply: null };
  if (workers[0].dataKey !== key || !data.reply) {
    try {
      data.reply = await workers[0].request(msg);
      workers[0].dataKey = key;
    } catch (e) {
      data = { key: null, message: null, reply: null };
      throw e;
    }
  }
  return data.reply;
}

/// Brings a worker's data up to date.
async function withData(w) {
  if (data.message && w.dataKey !== data.key) {
    await w.request(data.message);
    w.dataKey = data.key;
  }
}

/// How many workers a comparison on the CPU engine uses: the form's number, or "auto": one per
/// core the browser reports, at most MAX_WORKERS.
function poolSize() {
  const v = String(readForm().workers ?? "auto").trim();
  if (v === "" || v === "auto") return Math.max(1, Math.min(navigator.hardwareConcurrency || 1, MAX_WORKERS));
  const n = integer(v, "workers");
  if (n < 1 || n > MAX_WORKERS) throw new Error(`workers: expected auto or 1..${MAX_WORKERS}, got ${v}`);
  return n;
}

/// The first `n` workers, started as needed.
async function pool(n) {
  while (workers.length < n) {
    const w = new EngineWorker(false);
    workers.push(w);
    await w.ready;
  }
  return workers.slice(0, n);
}

/// What each worker of the running comparison is doing, on the page.
let activity = [];
function showActivity() {
  const box = $("workers-activity");
  if (!activity.length) {
    box.textContent = "";
    return;
  }
  box.textContent = `${activity.length} worker${activity.length > 1 ? "s" : ""}: ` +
    activity.map((label, i) => `${i + 1}. ${label ?? "done"}`).join(" · ");
}

/// Runs a comparison: its jobs (each method at each seed: teachers, then the student) go to a
/// pool of workers, the next job to the first free worker; every job is independent of the
/// others, so the results are those of one worker running them in turn. WebGPU runs use one
/// worker. Resolves to the results (`summarize_compare`) with the number of workers.
async function runPool(setup, onEvent) {
  const jobs = [];
  for (let seed = 0; seed < setup.seeds; seed++) {
    for (const method of setup.methods) jobs.push({ method, seed, label: `${method} seed ${seed}` });
  }
  const size = setup.backend === "gpu" ? 1 : poolSize();
  const { results, workers: used } = await inPool(size, jobs, async (w, job, onLabel) => {
    const r = await w.train(
      { type: "job", setup, method: job.method, seed: job.seed, keep_student: job.seed === 0 },
      (ev) => {
        const m = ev.model;
        onLabel(`${m.method} seed ${m.seed}, ${m.teacher === null ? "student" : `teacher ${m.teacher + 1}`}`);
        onEvent(ev);
      });
    if (job.seed === 0) studentWorker.set(job.method, w);
    return r;
  });
  const methods = setup.methods.map((m) => ({ method: null, runs: [] }));
  jobs.forEach((job, k) => {
    const i = setup.methods.indexOf(job.method);
    methods[i].method = results[k].method;
    methods[i].runs[job.seed] = results[k].run;
  });
  const { result } = await workers[0].request({ type: "summary", setup, methods });
  return { ...result, workers: used };
}

/// Runs `jobs` on a pool of `size` workers (the next job to the first free worker), showing
/// what each does; `start(worker, job, onModel)` runs one job and resolves to its result.
/// Resolves to the results in the order of `jobs`.
async function inPool(size, jobs, start) {
  const members = await pool(Math.min(size, jobs.length));
  await Promise.all(members.map(withData));
  const results = new Array(jobs.length);
  let next = 0;
  let failure = null;
  activity = members.map(() => null);
  showActivity();
  try {
    await Promise.all(members.map(async (w, i) => {
      while (next < jobs.length && !failure) {
        const k = next++;
        activity[i] = jobs[k].label;
        showActivity();
        try {
          results[k] = await start(w, jobs[k], (label) => {
            activity[i] = label;
            showActivity();
          });
        } catch (e) {
          failure ??= e;
        }
      }
      activity[i] = null;
      showActivity();
    }));
  } finally {
    activity = [];
    showActivity();
  }
  if (failure) throw failure;
  return { results, workers: members.length };
}

/// The global objectives over their seeds: one job per objective and seed, in the pool.
/// Resolves to `{description, positive_rate, runs}` as `run_objectives` gives it.
async function runObjectivesPool(setup, onEvent) {
  const jobs = [];
  for (let seed = 0; seed < setup.seeds; seed++) {
    setup.objectives.forEach((objective, index) => jobs.push({ index, seed, label: `${objective} seed ${seed}` }));
  }
  const { results, workers: used } = await inPool(poolSize(), jobs, (w, job, onLabel) =>
    w.train({ type: "objectives-job", setup, objective: job.index, seed: job.seed }, (ev) => {
      onLabel(job.label);
      onEvent(ev);
    }));
  const runs = setup.objectives.map((_, index) => ({ objective: null, runs: [] }));
  jobs.forEach((job, k) => {
    const only = results[k].runs[0];
    runs[job.index].objective = only.objective;
    runs[job.index].runs[job.seed] = only.runs[0];
  });
  return { description: results[0].description, positive_rate: results[0].positive_rate, runs, workers: used };
}

async function restartWorker() {
  for (const w of workers) w.terminate();
  workers = [];
  studentWorker.clear();
  activity = [];
  showActivity();
  $("run").disabled = true;
  $("sweep").disabled = true;
  $("real-logs").disabled = true;
  await startWorkers();
  await withData(workers[0]);
}

// ---------------------------------------------------------------- engine and errors

/// The backend the form asks for: cpu, webgpu, or auto (decided by measurement when Run is
/// pressed, see `measureAuto`; until then the last decision, or the CPU engine).
function chosenBackend() {
  const want = readForm().backend;
  if (want === "cpu") return "cpu";
  if (want === "webgpu") {
    if (!adapter) throw new Error(`WebGPU is not available here: ${noGpuWhy}`);
    return "webgpu";
  }
  return autoChoice?.backend ?? "cpu";
}

/// auto's last decision: {key, backend, cpu, gpu} with the two measured throughputs (docs/s).
let autoChoice = null;

/// auto: times a few training steps of the setup's model on WebGPU (one worker) and on the CPU
/// engine (every worker of the pool at once, their throughputs summed), and takes the faster.
/// Software and hardware adapters alike. Measured once per model shape and pool size.
async function measureAuto(setup, features) {
  const workersWanted = poolSize();
  const docsPerGroup = 32;
  const shape = {
    features,
    groups: Math.max(1, Math.round(setup.batch_docs / docsPerGroup)),
    docs_per_group: docsPerGroup,
    widths: setup.widths,
  };
  const key = JSON.stringify([shape, workersWanted]);
  if (autoChoice?.key === key) return autoChoice;
  $("status").textContent = "auto: timing the CPU engine and WebGPU on this model…";
  const members = await pool(workersWanted);
  const cpu = (await Promise.all(members.map((w) =>
    w.request({ type: "measure", backend: "cpu", shape, steps: 6, warmup: 2 }))))
    .reduce((sum, r) => sum + r.throughput.docs_per_s, 0);
  const gpu = (await workers[0].request({ type: "measure", backend: "webgpu", shape, steps: 4, warmup: 1 }))
    .throughput.docs_per_s;
  autoChoice = { key, backend: gpu > cpu ? "webgpu" : "cpu", cpu, gpu, workers: members.length };
  showEngine();
  return autoChoice;
}

function showEngine() {
  const box = $("engine");
  let backend;
  try { backend = chosenBackend(); } catch { backend = "cpu"; }
  if (backend === "webgpu") {
    box.className = "engine gpu";
    // On software adapters the device timed both kinds of product kernels and kept the faster.
    const measured = adapter.products_ms.length
      ? ` (measured: ${adapter.products_ms.map(([k, ms]) => `${k.toLowerCase()} ${ms.toFixed(0)} ms`).join(", ")})`
      : "";
    box.textContent = `Training on WebGPU: ${adapter.name} (${adapter.backend}), ` +
      `${adapter.products.toLowerCase()} product kernels${measured}`;
  } else {
    box.className = "engine cpu";
    const why = !adapter
      ? `No WebGPU: ${noGpuWhy}.`
      : readForm().backend === "auto"
        ? (autoChoice ? "" : `auto times WebGPU (${adapter.name}${adapter.software ? ", a software rasteriser" : ""}) against it when Run is pressed.`)
        : "Chosen.";
    let threads;
    try {
      const n = poolSize();
      threads = n > 1 ? `${n} workers, one thread each` : "one thread";
    } catch {
      threads = "one thread";
    }
    box.textContent = `Training on the CPU engine (WebAssembly, ${threads}). ${why}`;
  }
  if (readForm().backend === "auto" && autoChoice) box.textContent += ` ${autoLine(autoChoice)}.`;
}

function autoLine(c) {
  const rate = (v) => `${Math.round(v).toLocaleString("en")} docs/s`;
  const chose = c.backend === "webgpu" ? "WebGPU" : "the CPU engine";
  return `auto chose ${chose}: CPU engine ${rate(c.cpu)} (${c.workers} worker${c.workers > 1 ? "s" : ""}), ` +
    `WebGPU ${rate(c.gpu)}, measured on this model`;
}

function showError(text, offerRestart = false) {
  $("error-text").textContent = text;
  $("restart").hidden = !offerRestart;
  $("error").hidden = false;
}

function clearError() {
  $("error").hidden = true;
}

// ---------------------------------------------------------------- data

/// One line per split: queries, documents, features, group sizes and the grade histogram.
function statsTable(rows) {
  return rows.map(([name, s]) => {
    const grades = Object.entries(s.grades).map(([g, n]) => `${g}: ${n.toLocaleString()}`).join(" · ");
    return `<p><b>${escapeHtml(name)}</b>: ${s.queries.toLocaleString("en")} queries, ${s.docs.toLocaleString()} documents, ` +
      `${s.features} features, ${s.docs_per_query_min}–${s.docs_per_query_max} per query; grades ${grades}` +
      (s.groups_without_positive ? `; ${s.groups_without_positive} queries without a relevant document` : "") + "</p>";
  }).join("");
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function loadMq2008() {
  const r = await loadData({ type: "mq2008" });
  $("stats").innerHTML = `<p>${escapeHtml(r.stats.description)}</p>` +
    statsTable([["train", r.stats.train], ["valid", r.stats.valid], ["test", r.stats.test]]);
  return r;
}

/// Loads the data the form's source names into the worker.
function loadSource(source) {
  if (source === "synthetic") return generateSynthetic();
  if (source === "mq2008") return loadMq2008();
  return null;
}

async function generateSynthetic() {
  const r = await loadData({ type: "synthetic", source: dataSource(readForm()) });
  $("stats").innerHTML = statsTable([["train", r.stats.train], ["valid", r.stats.valid], ["test", r.stats.test]]);
  return r;
}

/// Files from the picker: roles from their names, `.query` files paired with their data file.
function planUploads(fileList) {
  const files = [...fileList];
  const queries = new Map(files.filter((f) => f.name.endsWith(".query")).map((f) => [f.name.slice(0, -6), f]));
  const data = files.filter((f) => !f.name.endsWith(".query"));
  if (data.length === 0) throw new Error("choose a LETOR data file (the .query files alone hold no features)");
  const role = (name) => /test/i.test(name) ? "test" : /vali/i.test(name) ? "valid" : "train";
  const plan = data.map((f) => ({ role: role(f.name), name: f.name, file: f, query: queries.get(f.name) ?? null }));
  if (!plan.some((p) => p.role === "train")) plan[0].role = "train";
  return plan;
}

async function onUpload() {
  clearError();
  const picked = $("files").files;
  if (!picked.length) return;
  try {
    const plan = planUploads(picked);
    $("stats").textContent = "Reading…";
    const r = await loadData({ type: "upload", files: plan });
    uploads = plan;
    $("stats").innerHTML = statsTable(r.files.map((f) => [`${f.role}: ${f.name}`, f.stats]));
    // Defaults that suit real LETOR data: z from the features most correlated with y, and a
    // label threshold for the grade range (MQ2008: 0..2, MSLR and Yahoo: 0..4).
    const maxGrade = Math.max(...r.files.flatMap((f) => Object.keys(f.stats.grades).map(Number)));
    writeForm({ privileged_kind: "top", privileged_value: "30%", tau_target: maxGrade <= 2 ? "2.8" : "4.8" });
    saveToUrl();
  } catch (e) {
    uploads = [];
    $("stats").textContent = "";
    showError(e.message);
  }
}

// ---------------------------------------------------------------- charts

const METHOD_COLOURS = {
  "no-distillation": "#6e7781",
  "self-distillation": "#0969da",
  "gend": "#bf8700",
  "pfd": "#cf222e",
  "multi-teacher-pfd": "#8250df",
  "ranking-distillation": "#1a7f37",
};

function lineChart(canvas, yTitle, xTitle = "epoch") {
  return new Chart(canvas, {
    type: "line",
    data: { datasets: [] },
    options: {
      animation: false,
      maintainAspectRatio: false,
      parsing: false,
      interaction: { mode: "nearest", intersect: false },
      scales: {
        x: { type: "linear", title: { display: true, text: xTitle } },
        y: { title: { display: true, text: yTitle } },
      },
      plugins: {
        legend: { labels: { boxWidth: 12, filter: (item, data) => !data.datasets[item.datasetIndex].hideInLegend } },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.parsed.y.toFixed(4)}` } },
      },
    },
  });
}

let ndcgChart, lossChart, sweepChart;

function dataset(chart, key, make) {
  let d = chart.data.datasets.find((d) => d.key === key);
  if (!d) {
    d = { key, data: [], pointRadius: 2, borderWidth: 2, ...make() };
    chart.data.datasets.push(d);
  }
  return d;
}

function resetCharts() {
  for (const c of [ndcgChart, lossChart]) {
    c.data.datasets = [];
    c.update("none");
  }
}

let firstSeed = 0;

function onEpoch(model, log) {
  if (model.teacher !== null) return;
  const m = model.method;
  const colour = METHOD_COLOURS[m];
  const later = model.seed !== firstSeed;
  dataset(ndcgChart, `${m}/${model.seed}`, () => ({
    label: later ? `${m} (seed ${model.seed})` : m,
    hideInLegend: later,
    borderColor: colour + (later ? "66" : ""),
    backgroundColor: colour,
    borderWidth: later ? 1 : 2,
  })).data.push({ x: log.epoch, y: log.test_ndcg ?? NaN });
  if (!later) {
    dataset(lossChart, `${m}/data`, () => ({ label: `${m} data`, borderColor: colour, backgroundColor: colour }))
      .data.push({ x: log.epoch, y: log.data_loss });
    if (log.teacher_loss > 0) {
      dataset(lossChart, `${m}/teacher`, () => ({
        label: `${m} teacher`, borderColor: colour, backgroundColor: colour, borderDash: [5, 4],
      })).data.push({ x: log.epoch, y: log.teacher_loss });
    }
  }
  scheduleChartUpdate();
}

/// Redraws the charts at most four times a second: with every core training, a redraw per
/// epoch of every model would take the workers' time.
let chartUpdate = null;
function scheduleChartUpdate() {
  chartUpdate ??= setTimeout(() => {
    chartUpdate = null;
    ndcgChart.update("none");
    lossChart.update("none");
  }, 250);
}

// ---------------------------------------------------------------- results

const CUTOFFS = [1, 3, 5, 8, 10];
let lastResult = null;
let lastSetup = null;

/// mean ± std, or n/a (with the reason on hover) where nothing could be measured.
function fmt(stat) {
  if (stat.mean === null || stat.mean === undefined) return `<span title="${stat.unmeasured ?? ""}">n/a</span>`;
  return `${stat.mean.toFixed(4)} ± ${stat.std.toFixed(4)}`;
}

function resultsTable(result, order) {
  const methods = order.filter((m) => result.methods[m]).map((m) => [m, result.methods[m]]);
  const base = result.methods["no-distillation"]?.["ndcg@8"].mean;
  const best = Math.max(...methods.map(([, r]) => r["ndcg@8"].mean ?? -Infinity));
  const head = `<tr><th>method</th>${CUTOFFS.map((k) => `<th>NDCG@${k}</th>`).join("")}<th>gain @8</th><th>teacher NDCG@8</th>` +
    `<th title="NDCG@8 on the graded relevance, the ground truth behind y">graded NDCG@8</th></tr>`;
  let note = "";
  const rows = methods.map(([name, r]) => {
    const mean8 = r["ndcg@8"].mean;
    let gain = "—";
    if (mean8 === null) {
      gain = "n/a";
    } else if (base !== undefined && base !== null && name !== "no-distillation") {
      const g = (100 * (mean8 - base)) / base;
      gain = `<span class="${g >= 0 ? "gain-up" : "gain-down"}">${g >= 0 ? "+" : ""}${g.toFixed(2)}%</span>`;
    }
    const teacher = r["teacher_ndcg@8"] ? fmt(r["teacher_ndcg@8"]) : "—";
    if (mean8 === null) note = ` <small>n/a: ${r["ndcg@8"].unmeasured}</small>`;
    return `<tr class="${mean8 !== null && mean8 === best ? "best" : ""}" data-method="${name}"><td>${name}</td>` +
      CUTOFFS.map((k) => `<td>${fmt(r[`ndcg@${k}`])}</td>`).join("") + `<td>${gain}</td><td>${teacher}</td>` +
      `<td>${r["graded_ndcg@8"] ? fmt(r["graded_ndcg@8"]) : "—"}</td></tr>`;
  });
  return `<thead>${head}</thead><tbody>${rows.join("")}</tbody>` +
    (note ? `<caption class="unmeasured">${note}</caption>` : "");
}

function resultsCsv(result) {
  const lines = [["method", "seed", "best_epoch", "valid_ndcg@8", ...CUTOFFS.map((k) => `test_ndcg@${k}`), "teacher_test_ndcg@8"].join(",")];
  for (const [name, r] of Object.entries(result.methods)) {
    for (const run of r.runs) {
      const ndcg = (m, k) => m.test.ndcg.find(([cut]) => cut === k)?.[1] ?? "";
      const teacher = run.teachers[0] ? ndcg(run.teachers[0], 8) : "";
      lines.push([name, run.seed, run.student.best_epoch, run.student.best_valid_ndcg,
        ...CUTOFFS.map((k) => ndcg(run.student, k)), teacher].join(","));
    }
  }
  return lines.join("\n") + "\n";
}

function download(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// ---------------------------------------------------------------- running

let running = false;

function setRunning(on) {
  running = on;
  $("run").disabled = on;
  $("sweep").disabled = on;
  $("real-logs").disabled = on;
  $("objectives-run").disabled = on;
  $("stop").disabled = !on;
}

/// Brings the worker's data up to date with the form, then returns the setup for `run_compare`.
async function prepareRun(overrides = {}) {
  const v = { ...readForm(), ...overrides };
  const setup = compareSetup(v, chosenBackend());
  if (v.source === "upload" && !uploads.length) throw new Error("upload a LETOR training file first");
  const stats = await loadSource(v.source) ?? data.reply;
  if (v.backend === "auto" && adapter) {
    // The students' input width: the data's features less the privileged ones (close enough
    // to time a step).
    const features = Math.max(1, stats?.stats?.train?.features
      ?? stats?.files?.find((f) => f.role === "train")?.stats.features ?? 24);
    setup.backend = (await measureAuto(setup, features)).backend === "webgpu" ? "gpu" : "cpu";
  }
  return setup;
}

function progressLine(model, docs, seconds) {
  const role = model.teacher === null ? "student" : `teacher ${model.teacher + 1}`;
  return `Training ${model.method} ${role}, seed ${model.seed}: ${docs.toLocaleString()} documents in ${seconds.toFixed(0)} s.`;
}

async function run() {
  clearError();
  saveToUrl();
  $("status").textContent = "Preparing the data…";
  // The whole Run: data, auto's measurement, training and the summary.
  const started = performance.now();
  let setup;
  try {
    setup = await prepareRun();
  } catch (e) {
    showError(e.message);
    return;
  }
  setRunning(true);
  resetCharts();
  firstSeed = 0;
  let throughput = "";
  $("status").textContent = "Starting…";
  try {
    const result = await runPool(setup, (ev) => {
      if (ev.type === "epoch") {
        onEpoch(ev.model, ev.log);
        throughput = `${Math.round(ev.log.docs_per_s).toLocaleString()} docs/s`;
        $("status").textContent = `${ev.model.method} ${ev.model.teacher === null ? "student" : "teacher"}, seed ${ev.model.seed}, epoch ${ev.log.epoch}: validation NDCG@8 ${ev.log.valid_ndcg.toFixed(4)}; ${throughput}.`;
      } else {
        $("status").textContent = progressLine(ev.model, ev.docs, ev.seconds) + (throughput ? ` Last epoch: ${throughput}.` : "");
      }
    });
    lastResult = result;
    lastSetup = setup;
    $("results").innerHTML = resultsTable(result, setup.methods);
    const seconds = (performance.now() - started) / 1000;
    const pooled = (result.workers > 1 ? ` with ${result.workers} workers` : "") +
      (readForm().backend === "auto" && autoChoice ? ` (${autoLine(autoChoice)})` : "");
    $("status").textContent = `Done in ${seconds.toFixed(1)} s on ${result.backend}${pooled}; last epoch ${throughput}. ` +
      `${result.prepared.train.positive_groups} of ${result.prepared.train.groups} training queries have a positive document. ` +
      `x: ${result.prepared.regular_columns} features (${result.prepared.constant_regular} constant), ` +
      `z: ${result.prepared.privileged_columns.length} features (${result.prepared.constant_privileged} constant).` +
      (result.prepared.warnings.length ? ` Warning: ${result.prepared.warnings.join(" ")}` : "") +
      (result.logs ? ` Simulated logs (${result.logs.click_model}): ${result.logs.train.clicks.toLocaleString("en")} clicks, ` +
        `${result.logs.train.conversions.toLocaleString("en")} conversions in the training split; ` +
        `CTR at rank 1 ${result.logs.train.ctr_by_rank[0].toFixed(3)}.` : "");
    const select = $("student-method");
    select.innerHTML = setup.methods.map((m) => `<option>${m}</option>`).join("");
    for (const id of ["export-csv", "export-json", "export-student", "student-method"]) $(id).disabled = false;
  } catch (e) {
    if (e.message !== "stopped") {
      const lost = /lost/i.test(e.message);
      showError(e.message, lost);
    }
    $("status").textContent = e.message === "stopped" ? "Stopped." : "Failed.";
  } finally {
    setRunning(false);
  }
}

async function sweep() {
  clearError();
  saveToUrl();
  const alphas = [0.1, 0.3, 0.5, 0.7, 0.9];
  setRunning(true);
  sweepChart.data.datasets = [];
  const pfd = dataset(sweepChart, "pfd", () => ({ label: "PFD", borderColor: METHOD_COLOURS.pfd, backgroundColor: METHOD_COLOURS.pfd }));
  const none = dataset(sweepChart, "none", () => ({
    label: "no distillation", borderColor: METHOD_COLOURS["no-distillation"], borderDash: [5, 4], pointRadius: 0,
  }));
  try {
    const base = await runPool({ ...(await prepareRun()), methods: ["no-distillation"] }, () => {});
    const baseline = base.methods["no-distillation"]["ndcg@8"].mean;
    none.data = [{ x: 0.1, y: baseline ?? NaN }, { x: 0.9, y: baseline ?? NaN }];
    for (const alpha of alphas) {
      $("status").textContent = `Alpha sweep: PFD at alpha = ${alpha}…`;
      const setup = { ...(await prepareRun()), methods: ["pfd"], alpha };
      const r = await runPool(setup, () => {});
      pfd.data.push({ x: alpha, y: r.methods.pfd["ndcg@8"].mean ?? NaN });
      sweepChart.update("none");
    }
    $("status").textContent = "Alpha sweep done.";
  } catch (e) {
    if (e.message !== "stopped") showError(e.message);
    $("status").textContent = e.message === "stopped" ? "Stopped." : "Failed.";
  } finally {
    setRunning(false);
  }
}

async function downloadStudent() {
  const method = $("student-method").value;
  try {
    const r = await (studentWorker.get(method) ?? workers[0]).request({ type: "student", method });
    download(`${method}.safetensors`, r.safetensors, "application/octet-stream");
    download(`${method}.json`, r.config, "application/json");
  } catch (e) {
    showError(e.message);
  }
}


/// Scores the current data's test split with a saved model (its .safetensors and .json files).
async function scoreSavedModel() {
  clearError();
  const files = [...$("model-files").files];
  const weights = files.find((f) => f.name.endsWith(".safetensors"));
  const config = files.find((f) => f.name.endsWith(".json"));
  if (!weights || !config) {
    showError("choose the model's .safetensors file and its .json config together");
    return;
  }
  try {
    await loadSource(readForm().source);
    const { result } = await request({ type: "evaluate", safetensors: weights, config });
    const ndcg = result.metrics.ndcg.map(([k, v]) => `NDCG@${k} ${v === null ? "—" : v.toFixed(4)}`).join(", ");
    $("model-score").textContent = `${weights.name} (${result.model.inputs} inputs, widths ${result.model.widths.join("-")}) on ` +
      `${result.test_queries} test queries, graded relevance: ${ndcg}; MAP ${result.metrics.map.toFixed(4)}.`;
  } catch (e) {
    showError(e.message);
  }
}

// ---------------------------------------------------------------- global objectives

const objectivesForm = $("objectives-setup");
let aucChart, lambdaChart;

/// The objective strings of the checked boxes, with their targets (`recall-at-precision:0.8`).
function chosenObjectives(f) {
  const target = { "recall-at-precision": "obj_rap", "precision-at-recall": "obj_par", "tpr-at-fpr": "obj_taf", "f-beta": "obj_beta" };
  return f.getAll("objective").map((o) => target[o] ? `${o}:${number(f.get(target[o]), o)}` : o);
}

function objectivesSetup() {
  const f = new FormData(objectivesForm);
  const objectives = chosenObjectives(f);
  if (objectives.length === 0) throw new Error("choose at least one objective");
  const synthetic = f.get("obj_source") === "synthetic" ? {
    train: integer(f.get("obj_train"), "training examples"),
    valid: integer(f.get("obj_valid"), "validation examples"),
    test: integer(f.get("obj_test"), "test examples"),
    features: integer(f.get("obj_features"), "features"),
    positive_rate: number(f.get("obj_positive_rate"), "positive rate"),
    noise: number(f.get("obj_noise"), "noise"),
    seed: integer(f.get("obj_seed"), "data seed"),
  } : null;
  if (!synthetic && !uploads.length) throw new Error("upload LETOR files above first, or choose the synthetic task");
  return {
    synthetic,
    threshold: integer(f.get("obj_threshold"), "positive grade"),
    objectives,
    seeds: integer(f.get("obj_seeds"), "seeds"),
    epochs: integer(f.get("obj_epochs"), "epochs"),
    lr: number(f.get("obj_lr"), "learning rate"),
    dual_rate_factor: number(f.get("obj_dual"), "dual rate factor"),
  };
}

const OBJECTIVE_COLOURS = ["#6e7781", "#cf222e", "#0969da", "#bf8700", "#8250df", "#1a7f37", "#d4a72c"];

function objectiveColour(name) {
  const order = ["logloss", "auc-pr", "recall-at-precision", "precision-at-recall", "tpr-at-fpr", "roc-auc", "f-beta"];
  return OBJECTIVE_COLOURS[Math.max(0, order.indexOf(name.split(":")[0]))];
}

function constraintText(c) {
  if (!c) return "";
  const value = c.value === null ? "undefined" : c.value.toFixed(3);
  return `${c.quantity} ${value} ${c.at_least ? "≥" : "≤"} ${c.target}: ${c.holds ? "holds" : "not met"}`;
}

function onObjectiveEpoch(ev) {
  const { objective, seed, log } = ev;
  $("objectives-status").textContent = `${objective}, seed ${seed}, epoch ${log.epoch}: validation AUC-PR ` +
    `${log.valid.auc_pr.toFixed(4)}${log.constraint ? "; " + constraintText(log.constraint) : ""}.`;
  if (seed !== 0) return;
  const colour = objectiveColour(objective);
  dataset(aucChart, objective, () => ({ label: objective, borderColor: colour, backgroundColor: colour }))
    .data.push({ x: log.epoch, y: log.valid.auc_pr });
  if (log.lambdas.length) {
    const mean = log.lambdas.reduce((a, b) => a + b, 0) / log.lambdas.length;
    dataset(lambdaChart, objective, () => ({ label: objective, borderColor: colour, backgroundColor: colour }))
      .data.push({ x: log.epoch, y: mean });
  }
  aucChart.update("none");
  lambdaChart.update("none");
}

function meanStd(values) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const std = values.length > 1 ? Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1)) : 0;
  return `${mean.toFixed(4)} ± ${std.toFixed(4)}`;
}

function objectivesTable(result) {
  const cols = [["test AUC-PR", "auc_pr"], ["AUC-ROC", "auc_roc"], ["recall at precision", "recall_at_precision"],
    ["precision at recall", "precision_at_recall"], ["F1", "f1"], ["accuracy", "accuracy"]];
  const head = `<tr><th>objective</th>${cols.map(([n]) => `<th>${n}</th>`).join("")}<th>constraint on validation</th></tr>`;
  const rows = result.runs.map((r) => {
    const checks = r.runs.map((run) => run.valid_constraint).filter(Boolean);
    const held = checks.filter((c) => c.holds).length;
    const constraint = checks.length
      ? `<span class="${held === checks.length ? "held" : "missed"}">held on ${held} of ${checks.length} seeds</span> ` +
        `(${checks[0].quantity} ${checks.map((c) => c.value === null ? "—" : c.value.toFixed(3)).join(", ")}; target ${checks[0].target})`
      : "—";
    return `<tr data-objective="${escapeHtml(r.objective)}"><td>${escapeHtml(r.objective)}</td>` +
      cols.map(([, k]) => `<td>${meanStd(r.runs.map((run) => run.test[k]))}</td>`).join("") + `<td>${constraint}</td></tr>`;
  });
  return `<thead>${head}</thead><tbody>${rows.join("")}</tbody>`;
}

async function runObjectives() {
  clearError();
  saveToUrl();
  let setup;
  try {
    setup = objectivesSetup();
  } catch (e) {
    showError(e.message);
    return;
  }
  setRunning(true);
  for (const c of [aucChart, lambdaChart]) { c.data.datasets = []; c.update("none"); }
  $("objectives-status").textContent = "Generating the data…";
  const started = performance.now();
  try {
    const result = await runObjectivesPool(setup, onObjectiveEpoch);
    $("objectives-results").innerHTML = objectivesTable(result);
    const pooled = result.workers > 1 ? ` with ${result.workers} workers` : "";
    $("objectives-status").textContent = `Done in ${((performance.now() - started) / 1000).toFixed(1)} s${pooled}: ` +
      `${result.description}; ${(100 * result.positive_rate).toFixed(1)}% positives in training.`;
  } catch (e) {
    if (e.message !== "stopped") showError(e.message);
    $("objectives-status").textContent = e.message === "stopped" ? "Stopped." : "Failed.";
  } finally {
    setRunning(false);
  }
}

// ---------------------------------------------------------------- wiring

function main() {
  loadFromUrl();
  ndcgChart = lineChart($("ndcg-chart"), "test NDCG@8");
  lossChart = lineChart($("loss-chart"), "loss");
  sweepChart = lineChart($("sweep-chart"), "test NDCG@8", "alpha");
  aucChart = lineChart($("objectives-auc-chart"), "validation AUC-PR");
  lambdaChart = lineChart($("objectives-lambda-chart"), "λ");
  objectivesForm.addEventListener("submit", (e) => { e.preventDefault(); if (!running) runObjectives(); });
  objectivesForm.addEventListener("change", saveToUrl);
  form.addEventListener("submit", (e) => { e.preventDefault(); if (!running) run(); });
  form.addEventListener("change", (e) => {
    if (e.target.name === "source") {
      showSourceKnobs();
      if (e.target.value === "mq2008") {
        // Real data: z from the simulated logs unless the user picks otherwise.
        if (readForm().privileged_kind === "generator") writeForm({ privileged_kind: "logs" });
        loadMq2008().catch((err) => showError(err.message));
      }
    }
    if (e.target.name === "privileged_kind") showSourceKnobs();
    if (e.target.id !== "files" && e.target.id !== "setup-file") saveToUrl();
    showEngine();
    describeSetup().catch((err) => showError(err.message));
  });
  $("files").addEventListener("change", onUpload);
  $("stop").addEventListener("click", async () => {
    await restartWorker();
    $("status").textContent = "Stopped.";
  });
  $("sweep").addEventListener("click", () => { if (!running) sweep(); });
  $("real-logs").addEventListener("click", () => {
    if (running) return;
    writeForm({ source: "mq2008", privileged_kind: "logs" });
    for (const box of form.querySelectorAll('input[name="method"]')) {
      box.checked = ["no-distillation", "gend", "pfd"].includes(box.value);
    }
    showSourceKnobs();
    run();
  });
  $("restart").addEventListener("click", async () => { clearError(); await restartWorker(); });
  $("export-json").addEventListener("click", () =>
    download("results.json", JSON.stringify({ setup: lastSetup, ...lastResult }, null, 2), "application/json"));
  $("export-csv").addEventListener("click", () => download("results.csv", resultsCsv(lastResult), "text/csv"));
  $("setup-download").addEventListener("click", () => {
    if (lastDescribed) download("setup.json", JSON.stringify(lastDescribed.setup, null, 2) + "\n", "application/json");
  });
  $("setup-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    try {
      formFromSetup(JSON.parse(await file.text()));
      saveToUrl();
      await describeSetup();
    } catch (err) {
      showError(`${file.name}: ${err.message}`);
    }
    e.target.value = "";
  });
  $("export-student").addEventListener("click", downloadStudent);
  $("model-files").addEventListener("change", scoreSavedModel);
  startWorkers()
    .then(async () => {
      defaults = (await request({ type: "defaults" })).setup;
      await describeSetup();
      return loadSource(readForm().source);
    })
    .catch((e) => showError(e.message, true));
}

main();
