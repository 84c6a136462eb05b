// The worker client: a pool of Web Workers running the wasm engine (worker.js), the jobs of a
// comparison spread over them, and the engine choice (auto by measurement).

import { $, integer, showError, field } from "./dom.js";

// ---------------------------------------------------------------- the workers

/// Most workers the pool starts, whatever the browser reports.
export const MAX_WORKERS = 8;

/// Whether the pool's workers can share one copy of a comparison's data: a SharedArrayBuffer,
/// which a browser gives a cross-origin isolated page (the demo server sends the headers, and
/// `cargo xtask dist` writes them in `_headers`). Otherwise each worker holds its own copy.
export function canShare() {
  return self.crossOriginIsolated === true && typeof SharedArrayBuffer === "function";
}

export let adapter = null;      // {name, backend, software, products, products_ms} or null
export let noGpuWhy = null;
export let nextId = 1;

/// Who hears the first worker's progress through a long step (`{label, unit, done, total}`).
let progressListener = null;
export function onProgress(listener) {
  progressListener = listener;
}

/// The engine's wasm, compiled once by the page and sent to every worker: a worker then starts
/// without compiling it again, and the code the browser optimises as one worker trains serves
/// them all. Null where it could not be compiled here; each worker then loads pkg/ itself.
let compiledEngine = null;
function engineModule() {
  const url = new URL("pkg/distillrank_bg.wasm", location.href);
  compiledEngine ??= WebAssembly.compileStreaming(fetch(url))
    .catch(() => fetch(url).then((r) => r.arrayBuffer()).then((bytes) => WebAssembly.compile(bytes)))
    .catch(() => null);
  return compiledEngine;
}

/// One Web Worker running the wasm engine (worker.js). Requests are answered in order; training
/// requests ("job", "objectives") also send events as they go.
export class EngineWorker {
  constructor(gpu) {
    this.worker = new Worker("worker.js", { type: "module" });
    this.pending = new Map();   // training request id -> {onEvent, resolve, reject}
    this.waiters = [];          // replies of other requests, in order
    this.dataKey = null;        // the data message it holds (or has been sent)
    this.dataReady = null;      // its reply to that message
    this.sharedKeys = {};       // the shared data it reads instead, by kind (see `useShared`)
    this.warmed = null;         // its warm-up (see warmUp)
    this.stopped = false;
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => showError(`The engine failed to start: ${e.message ?? "worker error"}`, true);
    this.ready = engineModule().then((module) => this.request({ type: "init", gpu, module }));
  }

  /// Answers come in the order of the messages: every message but "init" waits for the engine
  /// to start, so that a request made while it starts (an upload in the page's first second) is
  /// not taken for the answer to "init".
  request(msg) {
    if (this.stopped) return Promise.reject(new Error("stopped"));
    const send = () => new Promise((resolve, reject) => {
      if (this.stopped) throw new Error("stopped");
      this.waiters.push({ resolve, reject });
      this.worker.postMessage(msg);
    });
    return msg.type === "init" ? send() : this.ready.then(send);
  }

  train(msg, onEvent) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { onEvent, resolve, reject });
      this.worker.postMessage({ ...msg, id });
    });
  }

  onMessage(m) {
    if (m.type === "progress") {
      // The first worker prepares the data the pool shares: its steps are the page's.
      if (this === workers[0]) progressListener?.(m);
      return;
    }
    if (m.type === "event") {
      this.pending.get(m.id)?.onEvent(m.event);
      return;
    }
    // A failure that stopped the worker's engine (a panic, memory) is marked fatal: the page
    // ends what it was doing and starts new workers (`recover`).
    const error = () => Object.assign(new Error(m.message), { fatal: m.fatal === true });
    if (m.id !== undefined && this.pending.has(m.id)) {
      const run = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.type === "error") run.reject(error());
      else run.resolve(m.result);
      return;
    }
    const w = this.waiters.shift();
    if (!w) return;
    if (m.type === "error") w.reject(error());
    else w.resolve(m);
  }

  terminate() {
    this.stopped = true;
    this.worker.terminate();
    for (const p of this.pending.values()) p.reject(new Error("stopped"));
    for (const w of this.waiters) w.reject(new Error("stopped"));
    this.pending.clear();
    this.waiters = [];
  }
}

/// workers[0] opens WebGPU and answers everything outside a comparison's jobs; the others join
/// when a comparison on the CPU engine asks for more.
export let workers = [];
/// The data every worker should hold: the last data message (synthetic, mq2008, upload), and the
/// first worker's reply to it.
export let data = { key: null, message: null, reply: null };
/// The files of a teacher trained elsewhere every worker should hold: the last "teacher" message
/// (none before the first), its key and the first worker's reply.
export let teacher = { key: null, message: null, reply: null };
/// Which worker holds each method's first-seed student (for the download).
export const studentWorker = new Map();

export async function startWorkers() {
  workers = [new EngineWorker(true)];
  const r = await workers[0].ready;
  warmUp(workers[0]);
  adapter = r.adapter;
  noGpuWhy = r.why;
  showEngine();
}

/// Enables the buttons that train, once the first worker has started and the page knows the
/// library's defaults.
export function enableRuns() {
  if (restarting) return;
  for (const id of ["run", "sweep", "real-logs", "learn-clicks", "objectives-run"]) $(id).disabled = false;
}

/// Sends a message whose reply is not a training run to the first worker.
export function request(msg) {
  return workers[0].request(msg);
}

/// Makes `msg` the data of the first worker, and of the others where they cannot share it
/// (`canShare`); returns the first worker's reply (its statistics).
export async function loadData(msg) {
  const key = msg.type === "upload"
    ? JSON.stringify(msg.files.map((f) => [f.role, f.name, f.file.size, f.file.lastModified, f.query?.size]))
    : JSON.stringify(msg);
  if (key !== data.key) data = { key, message: msg, reply: null };
  // This request's own entry: another data message (an upload while the synthetic data are
  // generated) may replace `data` before the answer comes.
  const entry = data;
  if (workers[0].dataKey !== key || !entry.reply) {
    // The first worker's data change: what the pool shared was prepared from its old data.
    shared = {};
    try {
      entry.reply = await workers[0].request(msg);
      workers[0].dataKey = key;
      workers[0].dataReady = Promise.resolve(entry.reply);
    } catch (e) {
      if (data === entry) data = { key: null, message: null, reply: null };
      throw e;
    }
  }
  // Where they cannot share it, the other workers load the same data in the background, so
  // that a Run finds them ready.
  if (data === entry && !canShare()) for (const w of workers.slice(1)) withData(w).catch(() => {});
  return entry.reply;
}

/// The files of the models trained elsewhere, by role ("teacher", "reference"): every worker
/// holds both sets, under their names, in one message.
const outsideFiles = { teacher: [], reference: [] };

/// Makes `files` (none: forget them) the files of the teacher trained elsewhere (`role`
/// "teacher") or of the reference model ("reference") of every worker: the first reads them now,
/// the others with their data (`withData`). Resolves to the first worker's reading of them:
/// [{name, kind, description}].
export async function loadTeacher(files, role = "teacher") {
  const other = role === "teacher" ? "reference" : "teacher";
  const clash = files.find((f) => outsideFiles[other].some((g) => g.name === f.name));
  if (clash) {
    throw new Error(`${clash.name} is the name of one of the ${other}'s files already: give the ${role}'s files other names`);
  }
  const before = outsideFiles[role];
  outsideFiles[role] = files;
  const all = [...outsideFiles.teacher, ...outsideFiles.reference];
  const key = JSON.stringify(all.map((f) => [f.name, f.size, f.lastModified]));
  const entry = { key, message: { type: "teacher", files: all.map((file) => ({ name: file.name, file })) }, reply: null };
  teacher = entry;
  // What the pool shared was prepared with the earlier files.
  shared = {};
  workers[0].teacherKey = key;
  try {
    entry.reply = await workers[0].request(entry.message);
  } catch (e) {
    // Nothing of these files is kept: every worker goes back to the files before.
    outsideFiles[role] = before;
    const kept = [...outsideFiles.teacher, ...outsideFiles.reference];
    if (teacher === entry) {
      teacher = {
        key: JSON.stringify(kept.map((f) => [f.name, f.size, f.lastModified])),
        message: { type: "teacher", files: kept.map((file) => ({ name: file.name, file })) },
        reply: null,
      };
    }
    workers[0].teacherKey = null;
    for (const w of workers) withData(w).catch(() => {});
    throw e;
  }
  if (!canShare()) for (const w of workers.slice(1)) withData(w).catch(() => {});
  const names = new Set(files.map((f) => f.name));
  return entry.reply.files.filter((f) => names.has(f.name));
}

/// Whether `reply` (from `loadData`) is still the data of the page: not replaced by a later
/// data message while it loaded.
export function isCurrentData(reply) {
  return data.reply === reply;
}

/// Brings a worker's data up to date: sends the data message once (a worker answers messages in
/// order, so whatever it is sent next sees the data) and resolves when the worker has it.
export function withData(w) {
  if (data.message && w.dataKey !== data.key) {
    const key = data.key;
    w.dataKey = key;
    w.sharedKeys = {};
    w.dataReady = w.request(data.message).catch((e) => {
      if (w.dataKey === key) w.dataKey = null;
      throw e;
    });
  }
  // The teacher's files travel beside the data: a worker that prepares its own copy of the
  // data scores them with the same teacher.
  if (teacher.message && w.teacherKey !== teacher.key) {
    const key = teacher.key;
    w.teacherKey = key;
    w.teacherReady = w.request(teacher.message).catch((e) => {
      if (w.teacherKey === key) w.teacherKey = null;
      throw e;
    });
  }
  const ready = w.dataReady ?? Promise.resolve();
  return w.teacherReady ? Promise.all([ready, w.teacherReady]).then(([reply]) => reply) : ready;
}

/// What the pool shares, by kind (a comparison's prepared data, "data", or the global
/// objectives' examples, "examples"): `{key, buffer, kind}`, the key naming the page's data, the
/// kind and the setup's data fields. Forgotten when the page's data change.
let shared = {};

/// The data of `setup` prepared by the first worker (which holds the page's data) in a
/// SharedArrayBuffer, once per data and data fields and kind. The first worker then reads them
/// from the buffer too, and gives the same buffer again when asked again.
async function sharedData(setup, kind) {
  const key = JSON.stringify([data.key, teacher.key, kind, setup.data]);
  if (shared[kind]?.key !== key) {
    await withData(workers[0]);
    const { buffer } = await workers[0].request({ type: kind === "data" ? "share" : "share-examples", setup });
    shared[kind] = { key, buffer, kind };
  }
  return shared[kind];
}

/// Makes the shared data (`sharedData`) a worker's data for `setup`'s jobs: it reads the
/// matrices from the one buffer, and drops any copy of its own (and what it read of the other
/// kind). The first worker holds the page's data and shares them: it needs nothing.
async function useShared(w, entry, setup) {
  if (w === workers[0] || w.sharedKeys?.[entry.kind] === entry.key) return;
  w.sharedKeys = { [entry.kind]: entry.key };
  w.dataKey = null;
  w.dataReady = null;
  try {
    const type = entry.kind === "data" ? "use-shared" : "use-shared-examples";
    await w.request({ type, setup, buffer: entry.buffer });
  } catch (e) {
    w.sharedKeys = {};
    throw e;
  }
}

/// Each worker's WebAssembly memory, after a pooled run, with the shared buffer's size (0
/// without one): on the page (`showPoolMemory`), and returned.
async function measurePool(used, entry, box) {
  const members = workers.slice(0, used);
  const memory = await Promise.all(members.map((w) => w.request({ type: "memory" }).then((r) => r.bytes)));
  poolMemory = { shared: entry ? entry.buffer.byteLength : 0, workers: memory };
  showPoolMemory(box);
  return poolMemory;
}

/// What a pooled comparison held, measured after it: the shared buffer's bytes (0 without one)
/// and each worker's WebAssembly memory, in pool order.
export let poolMemory = null;

/// Starts the pool's workers in the background (after the page has loaded its data), so that the
/// first Run does not wait for them. Where they cannot share the data, each loads its own copy.
export function startPool() {
  // A pool size the form gets wrong is reported when Run asks for it.
  Promise.resolve()
    .then(() => pool(poolSize()))
    .then((members) => { if (!canShare()) members.forEach((w) => withData(w).catch(() => {})); })
    .catch(() => {});
}

/// A fifth of a second of untimed training steps, sent to a worker as it starts (so never between
/// a comparison's jobs): the browser optimises the engine's code as it runs, so that auto's first
/// measurement times the code Run will train with. On the page's default model.
function warmUp(w) {
  const shape = { features: 24, groups: 16, docs_per_group: 32, widths: [64, 32] };
  w.warmed = w.request({ type: "measure", backend: "cpu", shape, steps: 1, warmup: 0, min_seconds: 0.2 })
    .catch(() => {});
}

/// How many workers a comparison on the CPU engine uses: the form's number, or "auto": one per
/// core the browser reports; at most MAX_WORKERS (a setup of the command line's `--jobs 16` runs
/// on 8, which the results do not depend on, and the status line says how many ran).
export function poolSize() {
  const v = String(field("workers") ?? "auto").trim();
  if (v === "" || v === "auto") return Math.max(1, Math.min(navigator.hardwareConcurrency || 1, MAX_WORKERS));
  const n = integer(v, "workers");
  if (n < 1) throw new Error(`workers: expected auto or 1 or more, got ${v}`);
  return Math.min(n, MAX_WORKERS);
}

/// The first `n` workers, started as needed (together: they share the compiled engine).
export async function pool(n) {
  while (workers.length < n) {
    const w = new EngineWorker(false);
    warmUp(w);
    workers.push(w);
  }
  const members = workers.slice(0, n);
  await Promise.all(members.map((w) => w.ready));
  return members;
}

/// What each worker of the running comparison is doing, on the page.
export let activity = [];
export function showActivity() {
  const box = $("workers-activity");
  if (!activity.length) {
    box.textContent = "";
    return;
  }
  box.textContent = `${activity.length} worker${activity.length > 1 ? "s" : ""}: ` +
    activity.map((label, i) => `${i + 1}. ${label ?? "done"}`).join(" · ");
}

/// The page's data as they are now: the data message and the teacher's files. A run keeps this
/// from its start, and its results are of those data only (`keepsData`).
export function dataNow() {
  return JSON.stringify([data.key, teacher.key]);
}

/// Throws when the page's data are no longer those a run (`what`) started from (`at`, from
/// `dataNow`): a worker given the new data would train the rest of the run on them, mixing two
/// data sets in one result.
export function keepsData(at, what) {
  if (dataNow() !== at) {
    throw new Error(`the data changed while ${what} ran: its results would mix two data sets, so it stopped; run it again on the data now chosen`);
  }
}

/// Runs a comparison: its jobs (the library's: each method at each seed, its teachers then its
/// student, methods that share a teacher in one job) go to a pool of workers, the next job to the
/// first free worker; every job is independent of the others, so the results are those of one
/// worker running them in turn. WebGPU runs use one worker. Resolves to the results
/// (`summarize_compare`) with the number of workers and the pool's memory. `at`: the data the
/// run started from (`dataNow`; a sweep's for each of its values), which every job must still
/// have.
export async function runPool(setup, onEvent, at = dataNow(), what = "the comparison") {
  await withData(workers[0]);
  keepsData(at, what);
  const { jobs } = await workers[0].request({ type: "jobs", setup });
  const wanted = Math.min(setup.backend === "gpu" ? 1 : poolSize(), jobs.length);
  // Several workers read one copy of the prepared data where the browser allows it.
  const entry = wanted > 1 && canShare() ? await sharedData(setup, "data") : null;
  jobs.forEach((job) => { job.label = `${job.methods.join(" + ")} seed ${job.seed}`; });
  // Longest first (the jobs with more models to train), so that the last jobs are short and the
  // workers finish together.
  const order = jobs.map((job, k) => k).sort((a, b) => jobs[b].models - jobs[a].models || a - b);
  const load = entry ? (w) => useShared(w, entry, setup) : withData;
  const { results, workers: used } = await inPool(wanted, jobs, order, load, async (w, job, onLabel) => {
    keepsData(at, what);
    const { label, ...plain } = job;
    const keep = job.seed === jobs[0].seed;   // the first seed's students, for the download
    const r = await w.train({ type: "job", setup, job: plain, keep_student: keep }, (ev) => {
      const m = ev.model;
      onLabel(`${m.method} seed ${m.seed}, ${m.teacher === null ? "student" : `teacher ${m.teacher + 1}`}`);
      onEvent(ev);
    });
    if (keep) for (const method of job.methods) studentWorker.set(method, w);
    return r;
  });
  keepsData(at, what);
  const methods = setup.methods.map((m) => ({ method: null, runs: [] }));
  jobs.forEach((job, k) => {
    for (const { method, run } of results[k]) {
      const i = setup.methods.indexOf(method);
      methods[i].method = method;
      methods[i].runs.push(run);
    }
  });
  const { result } = await workers[0].request({ type: "summary", setup, methods });
  const out = { ...result, workers: used, memory: await measurePool(used, entry, "pool-memory") };
  // The runs themselves, for a sweep's summary (not part of the results a Run exports).
  Object.defineProperty(out, "runs", { value: methods, enumerable: false });
  return out;
}

/// What the last pooled run held, on the page (in `#id`, its numbers in `data-*` attributes).
export function showPoolMemory(id) {
  const box = $(id);
  if (!poolMemory || poolMemory.workers.length < 2) {
    box.textContent = "";
    return;
  }
  const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
  const held = `each worker's WebAssembly memory: ${poolMemory.workers.map(mb).join(", ")} MB`;
  box.textContent = poolMemory.shared
    ? `The ${poolMemory.workers.length} workers read one shared copy of the data (${mb(poolMemory.shared)} MB); ${held}.`
    : `Each of the ${poolMemory.workers.length} workers holds its own copy of the data (this page is not cross-origin isolated, so it cannot share one); ${held}.`;
  box.dataset.shared = String(poolMemory.shared);
  box.dataset.workers = poolMemory.workers.join(",");
}

/// Runs `jobs` on a pool of `size` workers (the next job in `order`, a permutation of the jobs'
/// indices, to the first free worker), showing what each does; `load(worker)` gives a worker its
/// data, `start(worker, job, onModel)` runs one job and resolves to its result. Resolves to the
/// results in the order of `jobs`.
export async function inPool(size, jobs, order, load, start) {
  const members = await pool(Math.min(size, jobs.length));
  await Promise.all(members.map(load));
  const results = new Array(jobs.length);
  let next = 0;
  let failure = null;
  activity = members.map(() => null);
  showActivity();
  try {
    await Promise.all(members.map(async (w, i) => {
      while (next < jobs.length && !failure) {
        const k = order[next++];
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

/// The global objectives over their seeds: one job per objective and seed, in the pool (one
/// worker on WebGPU). Resolves to `{backend, description, positive_rate, unused_settings, runs}` as
/// `run_objectives` gives it.
export async function runObjectivesPool(setup, onEvent) {
  const at = dataNow();
  const what = "the global objectives";
  const jobs = [];
  // Each job is the setup's k-th seed (first_seed + k), as the library runs it.
  for (let k = 0; k < setup.seeds; k++) {
    const seed = (setup.first_seed ?? 0) + k;
    setup.objectives.forEach((objective, index) => jobs.push({ index, k, label: `${objective} seed ${seed}` }));
  }
  const size = Math.min(setup.backend === "gpu" ? 1 : poolSize(), jobs.length);
  // Several workers read one copy of the examples where the browser allows it.
  const entry = size > 1 && canShare() ? await sharedData(setup, "examples") : null;
  const load = entry ? (w) => useShared(w, entry, setup) : withData;
  const { results, workers: used } = await inPool(size, jobs, jobs.map((_, k) => k), load, (w, job, onLabel) => {
    keepsData(at, what);
    return w.train({ type: "objectives-job", setup, objective: job.index, seed_index: job.k }, (ev) => {
      onLabel(job.label);
      onEvent(ev);
    });
  });
  keepsData(at, what);
  const runs = setup.objectives.map((_, index) => ({ objective: null, runs: [] }));
  jobs.forEach((job, k) => {
    const only = results[k].runs[0];
    runs[job.index].objective = only.objective;
    runs[job.index].runs[job.k] = only.runs[0];
  });
  return {
    backend: results[0].backend, description: results[0].description,
    positive_rate: results[0].positive_rate, unused_settings: results[0].unused_settings, runs, workers: used,
    memory: await measurePool(used, entry, "objectives-pool-memory"),
  };
}

/// After a failure: when it stopped a worker's engine (`fatal`), starts every worker anew so that
/// the next Run finds a working pool, and says so. Returns the words to show.
export async function recover(e) {
  if (!e?.fatal) return String(e?.message ?? e);
  try {
    await restartWorker();
  } catch (again) {
    return `${e.message}; starting new workers failed too: ${again.message}`;
  }
  return `${e.message}. The page started its workers anew.`;
}

/// The restart under way (`restartWorker`), or null: nothing trains until it ends.
export let restarting = null;

/// Ends every worker (and what it was doing) and starts the pool anew with the page's data. The
/// buttons that train stay disabled until the new workers hold the data, so that a Run cannot
/// start on a pool half started, nor be taken for the run that was stopped. Calls made while one
/// restart is under way share it.
export function restartWorker() {
  restarting ??= (async () => {
    for (const w of workers) w.terminate();
    workers = [];
    shared = {};
    studentWorker.clear();
    activity = [];
    showActivity();
    for (const id of ["run", "sweep", "real-logs", "learn-clicks", "objectives-run"]) $(id).disabled = true;
    try {
      await startWorkers();
      await withData(workers[0]);
    } finally {
      restarting = null;
    }
    enableRuns();
    startPool();
  })();
  return restarting;
}

// ---------------------------------------------------------------- engine and errors

/// The backend the form asks for: cpu, webgpu, or auto (decided by measurement when Run is
/// pressed, see `measureAuto`; until then the last decision, or the CPU engine).
export function chosenBackend() {
  const want = field("backend");
  if (want === "cpu") return "cpu";
  if (want === "webgpu") {
    if (!adapter) throw new Error(`WebGPU is not available here: ${noGpuWhy}`);
    return "webgpu";
  }
  return autoChoice?.backend ?? "cpu";
}

/// auto's last decision: {key, backend, cpu, gpu} with the two measured throughputs (docs/s).
export let autoChoice = null;

/// auto: times a few training steps of the setup's model on WebGPU (one worker) and on the CPU
/// engine (every worker of the pool at once, their throughputs summed), and takes the faster.
/// Software and hardware adapters alike. Measured once per model shape and pool size.
export async function measureAuto(setup, features) {
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
  // Every worker idle first (its data, where it loads its own, and warm-up done), so that all
  // of them time at once.
  const idle = (w) => (canShare() && w !== workers[0] ? w.ready : withData(w));
  await Promise.all(members.map((w) => Promise.all([idle(w), w.warmed])));
  // Each for at least 50 ms after a warm-up: tens of steps where a step is fast, one or two on a
  // software adapter.
  const cpu = (await Promise.all(members.map((w) =>
    w.request({ type: "measure", backend: "cpu", shape, steps: 4, warmup: 2, min_seconds: 0.05 }))))
    .reduce((sum, r) => sum + r.throughput.docs_per_s, 0);
  // WebGPU may refuse the model (a dispatch or a binding past the adapter's limits): then auto
  // takes the CPU engine and says why, never failing worse than the CPU engine would.
  let gpu = null;
  let gpuFailed = null;
  try {
    gpu = (await workers[0].request({ type: "measure", backend: "webgpu", shape, steps: 1, warmup: 1, min_seconds: 0.05 }))
      .throughput.docs_per_s;
  } catch (e) {
    gpuFailed = e.message;
  }
  // The library decides (crate/engine.rs, `faster`).
  const { backend } = await workers[0].request({ type: "decide", cpu, gpu: gpu ?? undefined });
  autoChoice = { key, backend, cpu, gpu, gpuFailed, workers: members.length };
  showEngine();
  return autoChoice;
}

export function showEngine() {
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
      : field("backend") === "auto"
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
  if (field("backend") === "auto" && autoChoice) box.textContent += ` ${autoLine(autoChoice)}.`;
}

export function autoLine(c) {
  const rate = (v) => `${Math.round(v).toLocaleString("en")} docs/s`;
  const chose = c.backend === "webgpu" ? "WebGPU" : "the CPU engine";
  const cpu = `CPU engine ${rate(c.cpu)} (${c.workers} worker${c.workers > 1 ? "s" : ""})`;
  if (c.gpuFailed) return `auto chose ${chose}: ${cpu}; WebGPU cannot train this model (${c.gpuFailed})`;
  return `auto chose ${chose}: ${cpu}, WebGPU ${rate(c.gpu)}, measured on this model`;
}
