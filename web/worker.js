// The page's Web Worker: owns an instance of the wasm module (the distillrank crate), the data
// and the WebGPU device, so that training never blocks the page. Messages in, one at a time:
//   {type: "init", gpu, module}           -> {type: "ready", adapter, why}  (gpu: false skips WebGPU;
//                                            module: the page's compiled WebAssembly.Module)
//   {type: "defaults"}                    -> {type: "defaults", setup, settings}  (the library's default
//                                            setup and its table of settings)
//   {type: "describe", setup}             -> {type: "described", setup, command, differences}
//   {type: "open", text}                  -> {type: "described", ...}  (a setup file, read strictly)
//   {type: "check", setup, inputs}        -> {type: "checked"}  (the setup's settings and sizes)
//   {type: "synthetic", source}           -> {type: "stats", stats}   (a setup's synthetic source)
//   {type: "mq2008"}                      -> {type: "stats", stats}   (the bundled real data)
//   {type: "upload", files: [{role, name, file, query}]}
//                                         -> {type: "uploaded", files: [{role, name, stats}]}
//   {type: "teacher", files: [{name, file}]} -> {type: "teacher", files: [{name, kind, description}]}
//                                            (the files of a teacher trained elsewhere: a tree model, or
//                                            scores of the data files; none forgets them)
//   {type: "share", setup}                -> {type: "shared", buffer}  (the data prepared for the setup,
//                                            laid out in a SharedArrayBuffer for the pool; this worker
//                                            reads them from there too)
//   {type: "use-shared", setup, buffer}   -> {type: "using-shared"}  (another worker's shared data, for
//                                            the setup's jobs; this worker's own data are dropped)
//   {type: "share-examples", setup}       -> {type: "shared", buffer}  (the same for the global
//                                            objectives' examples of an objectives' setup)
//   {type: "use-shared-examples", setup, buffer} -> {type: "using-shared"}
//   {type: "memory"}                      -> {type: "memory", bytes}  (the size of its wasm memory)
//   {type: "jobs", setup}                 -> {type: "jobs", jobs}  (the comparison's jobs: [{seed, methods, models}])
//   {type: "job", id, setup, job, keep_student}
//                                         -> {type: "event", id, event}*, then {type: "result", id, result}
//                                            (result: [{method, run}], one per method of the job)
//   {type: "summary", setup, methods}     -> {type: "summary", result}
//   {type: "fold-setups", setup}          -> {type: "fold-setups", setups}  (each fold's comparison of a
//                                            folds setup: the bundled MQ2008's five folds)
//   {type: "folds-summary", setup, folds} -> {type: "folds-summary", result}  (folds[k]: fold k + 1's
//                                            methods, as "summary" takes them)
//   {type: "measure", backend, shape, steps, warmup, min_seconds} -> {type: "measured", throughput}
//   {type: "decide", cpu, gpu}            -> {type: "decided", backend}  (auto's choice from both throughputs)
//   {type: "objectives-job", id, setup, objective, seed_index} (the setup's seed first_seed + seed_index)
//                                         -> {type: "event", id, event}*, then {type: "result", id, result}
//   {type: "student", method}             -> {type: "student", method, safetensors, config}
//   {type: "onnx", method}                -> {type: "onnx", method, onnx}  (the student as ONNX bytes)
//   {type: "evaluate", safetensors, config, data_seed} (Files) -> {type: "evaluated", result}
// Any failure answers {type: "error", id, message}; a failure that stopped the engine (a Rust
// panic or running out of memory: a WebAssembly trap) also says `fatal: true`, with the panic's
// words, and the worker answers every later message with that failure.

import init, {
  start_gpu,
  load_synthetic,
  load_mq2008,
  load_letor,
  clear_uploads,
  load_teacher_file,
  clear_teacher_files,
  run_compare_job,
  compare_jobs,
  summarize_compare,
  fold_setups,
  summarize_folds,
  sweep_setup,
  summarize_sweep,
  run_objectives_job,
  student_files,
  student_onnx,
  evaluate_model,
  bench_train,
  default_setup,
  settings_table,
  choices,
  describe_setup,
  open_setup,
  check_setup,
  choose_backend,
  install_panic_hook,
  take_panic,
  share_data,
  use_shared_data,
  share_examples,
  use_shared_examples,
  memory_bytes,
  on_progress,
} from "./pkg/distillrank.js";

// The engine starts with the "init" message, from the module the page compiled once for every
// worker (or, without one, from pkg/); messages that come first wait for it.
let startEngine;
const ready = new Promise((resolve) => { startEngine = resolve; });

async function handle(msg) {
  switch (msg.type) {
    case "init": {
      if (msg.gpu === false) return { type: "ready", adapter: null, why: "a CPU worker of the pool" };
      if (!("gpu" in navigator)) {
        return { type: "ready", adapter: null, why: "this browser has no WebGPU (navigator.gpu is missing)" };
      }
      try {
        return { type: "ready", adapter: await start_gpu(), why: null };
      } catch (e) {
        const message = String(e.message ?? e);
        const why = /no GPU adapter/.test(message) ? "the browser offers no WebGPU adapter" : message;
        return { type: "ready", adapter: null, why };
      }
    }
    case "defaults":
      return { type: "defaults", setup: default_setup(), settings: settings_table(), choices: choices() };
    case "describe":
      return { type: "described", ...describe_setup(JSON.stringify(msg.setup)) };
    case "open":
      return { type: "described", ...open_setup(msg.text) };
    case "check":
      check_setup(msg.setup, msg.inputs ?? undefined);
      return { type: "checked" };
    case "synthetic":
      return { type: "stats", stats: load_synthetic(msg.source) };
    case "mq2008":
      return { type: "stats", stats: load_mq2008() };
    case "upload": {
      clear_uploads();
      const files = [];
      for (const f of msg.files) {
        // The files themselves: the engine reads them a piece at a time, never whole.
        files.push({ role: f.role, name: f.name, stats: load_letor(f.role, f.name, f.file, f.query ?? undefined) });
      }
      return { type: "uploaded", files };
    }
    case "teacher": {
      clear_teacher_files();
      try {
        // Each file is read by the engine, its size checked first.
        return { type: "teacher", files: msg.files.map((f) => load_teacher_file(f.name, f.file)) };
      } catch (e) {
        clear_teacher_files();
        throw e;
      }
    }
    case "share":
      return { type: "shared", buffer: share_data(msg.setup) };
    case "use-shared":
      use_shared_data(msg.setup, msg.buffer);
      return { type: "using-shared" };
    case "share-examples":
      return { type: "shared", buffer: share_examples(msg.setup) };
    case "use-shared-examples":
      use_shared_examples(msg.setup, msg.buffer);
      return { type: "using-shared" };
    case "memory":
      return { type: "memory", bytes: memory_bytes() };
    case "jobs":
      return { type: "jobs", jobs: compare_jobs(msg.setup) };
    case "job": {
      const result = await run_compare_job(msg.setup, msg.job, msg.keep_student, (event) =>
        postMessage({ type: "event", id: msg.id, event }));
      return { type: "result", id: msg.id, result };
    }
    case "measure":
      return {
        type: "measured",
        throughput: await bench_train(msg.backend, msg.shape, msg.steps, msg.warmup, msg.min_seconds),
      };
    case "decide":
      return { type: "decided", backend: choose_backend(msg.cpu, msg.gpu) };
    case "summary":
      return { type: "summary", result: summarize_compare(msg.setup, msg.methods) };
    case "fold-setups":
      return { type: "fold-setups", setups: fold_setups(msg.setup) };
    case "folds-summary":
      return { type: "folds-summary", result: summarize_folds(msg.setup, msg.folds) };
    case "sweep-setup":
      return { type: "sweep-setup", setup: sweep_setup(msg.setup, msg.param, msg.value) };
    case "sweep-summary":
      return { type: "sweep-summary", sweep: summarize_sweep(msg.setup, msg.param, msg.points) };
    case "objectives-job": {
      const result = await run_objectives_job(msg.setup, msg.objective, msg.seed_index, (event) =>
        postMessage({ type: "event", id: msg.id, event }));
      return { type: "result", id: msg.id, result };
    }
    case "evaluate": {
      const weights = new Uint8Array(await msg.safetensors.arrayBuffer());
      const config = await msg.config.text();
      return { type: "evaluated", result: evaluate_model(msg.safetensors.name, weights, msg.config.name, config, msg.data_seed) };
    }
    case "student": {
      const files = student_files(msg.method);
      return { type: "student", method: msg.method, safetensors: files.safetensors, config: files.config };
    }
    case "onnx":
      return { type: "onnx", method: msg.method, onnx: student_onnx(msg.method) };
    default:
      throw new Error(`unknown message ${msg.type}`);
  }
}

/// What the engine was doing for each message, for the words of a failure that stopped it.
const DOING = {
  synthetic: "generating the synthetic data", mq2008: "loading MQ2008", upload: "reading the uploaded files",
  teacher: "reading the teacher's files",
  job: "training", jobs: "planning the jobs", "objectives-job": "training the global objectives", measure: "timing the engine",
  summary: "summarising the results", "fold-setups": "planning the folds", "folds-summary": "summarising the folds", evaluate: "scoring the saved model", student: "exporting the student",
  onnx: "exporting the student", check: "checking the setup", share: "sharing the prepared data",
  "use-shared": "reading the shared data", "share-examples": "sharing the objectives' examples",
  "use-shared-examples": "reading the shared examples", describe: "describing the setup", open: "opening the setup",
};

// The failure that stopped the engine: after a trap its state cannot be trusted, so every later
// message gets this answer and the page starts a new worker.
let stopped = null;

/// The words of a failure: a trap becomes the panic's message (or, without one, what a trap
/// without a panic is: memory that could not be had) and stops the engine.
function failure(err, msg) {
  if (!(err instanceof WebAssembly.RuntimeError)) return { message: String(err?.message ?? err), fatal: false };
  let panic = null;
  try { panic = take_panic(); } catch { /* the engine cannot even say */ }
  const doing = DOING[msg.type] ?? msg.type;
  stopped = panic
    ? `the engine failed while ${doing}: ${panic}`
    : `the engine stopped while ${doing} (WebAssembly: ${err.message}): most likely it ran out of memory; try smaller data or a smaller model`;
  return { message: stopped, fatal: true };
}

// Messages are handled in order: each waits for the previous one.
let queue = Promise.resolve();
self.onmessage = (e) => {
  const msg = e.data;
  if (msg.type === "init") {
    startEngine(init(msg.module ? { module_or_path: msg.module } : undefined).then(() => {
      install_panic_hook();
      // Long steps (preparing the data, simulating logs) say how far they are, between replies.
      on_progress((p) => postMessage({ type: "progress", ...p }));
    }));
  }
  queue = queue.then(async () => {
    try {
      await ready;
      if (stopped) {
        postMessage({ type: "error", id: msg.id, request: msg.type, message: stopped, fatal: true });
        return;
      }
      postMessage(await handle(msg));
    } catch (err) {
      postMessage({ type: "error", id: msg.id, request: msg.type, ...failure(err, msg) });
    }
  });
};
