// The comparison view: loading data, running a comparison or a sweep, the results table and
// the exports.

import { $, form, showError, clearError, escapeHtml, download, formProblem } from "./dom.js";
import { readForm, writeForm, saveToUrl, dataSource, compareSetup, baseSetup } from "./setup.js";
import { adapter, workers, data, studentWorker, request, loadData, loadTeacher, isCurrentData, runPool, chosenBackend, autoChoice, measureAuto, autoLine, recover, restarting, dataNow } from "./workers.js";
import { describeSetup } from "./describe.js";
import { METHOD_COLOURS, sweepChart, dataset, resetCharts, onEpoch, summarizeNdcg, showPropensities } from "./charts.js";
import { state } from "./state.js";

// ---------------------------------------------------------------- data

/// 1-based column numbers as `data stats` writes them: runs as ranges (`6-10, 43`).
function columnRanges(columns) {
  const runs = [];
  for (const c of columns) {
    const last = runs[runs.length - 1];
    if (last && c === last[1] + 1) last[1] = c;
    else runs.push([c, c]);
  }
  return runs.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
}

/// One line per split: queries, documents, features, group sizes, the grade histogram and the
/// constant columns.
export function statsTable(rows) {
  return rows.map(([name, s]) => {
    const grades = Object.entries(s.grades).map(([g, n]) => `${g}: ${n.toLocaleString()}`).join(" · ");
    // Features that vary between queries only cannot order a query's documents.
    const within = s.varying_between_queries_only ?? [];
    const constant = s.constant_features ?? [];
    return `<p><b>${escapeHtml(name)}</b>: ${s.queries.toLocaleString("en")} queries, ${s.docs.toLocaleString()} documents, ` +
      `${s.features} features, ${s.docs_per_query_min}–${s.docs_per_query_max} per query; grades ${grades}` +
      (constant.length ? `; constant feature${constant.length > 1 ? "s" : ""} ${columnRanges(constant)}` : "") +
      (s.groups_without_positive ? `; ${s.groups_without_positive} queries without a relevant document` : "") +
      (within.length ? `; <span class="warning">feature${within.length > 1 ? "s" : ""} ${escapeHtml(within.join(", "))} ` +
        `constant within every query (varying between queries only: no information within a query)</span>` : "") + "</p>";
  }).join("");
}

export async function loadMq2008() {
  const r = await loadData({ type: "mq2008" });
  // Data chosen meanwhile (an upload) keep the statistics box.
  if (!isCurrentData(r)) return r;
  $("stats").innerHTML = `<p>${escapeHtml(r.stats.description)}</p>` +
    statsTable([["train", r.stats.train], ["valid", r.stats.valid], ["test", r.stats.test]]);
  return r;
}

/// Loads the data the form's source names into the worker.
export function loadSource(source) {
  if (source === "synthetic") return generateSynthetic();
  // The five folds are the bundled MQ2008's parts: its Fold1 is what the page shows of them.
  if (source === "mq2008" || source === "mq2008-folds") return loadMq2008();
  return null;
}

export async function generateSynthetic() {
  const r = await loadData({ type: "synthetic", source: dataSource(readForm()) });
  if (!isCurrentData(r)) return r;
  $("stats").innerHTML = statsTable([["train", r.stats.train], ["valid", r.stats.valid], ["test", r.stats.test]]);
  return r;
}

/// Files from the picker: roles from their names, `.query` files paired with their data file.
export function planUploads(fileList) {
  const files = [...fileList];
  const queries = new Map(files.filter((f) => f.name.endsWith(".query")).map((f) => [f.name.slice(0, -6), f]));
  const data = files.filter((f) => !f.name.endsWith(".query"));
  if (data.length === 0) throw new Error("choose a LETOR data file (the .query files alone hold no features)");
  // A .query file is its data file's name and .query, as the CLI looks for it: one that names
  // none of the data files would be dropped without a word.
  const names = new Set(data.map((f) => f.name));
  const stray = [...queries.keys()].filter((stem) => !names.has(stem));
  if (stray.length) {
    throw new Error(`${stray.map((stem) => `${stem}.query`).join(" and ")}: no data file ${stray.join(" or ")} was chosen with it; ` +
      `a .query file holds the group sizes of the data file whose name it ends (train.txt.query for train.txt): choose both together`);
  }
  const role = (name) => /test/i.test(name) ? "test" : /vali/i.test(name) ? "valid" : "train";
  const plan = data.map((f) => ({ role: role(f.name), name: f.name, file: f, query: queries.get(f.name) ?? null }));
  if (!plan.some((p) => p.role === "train")) plan[0].role = "train";
  // One file per split: two for one split would leave the setup naming one and the engine
  // training on the other.
  for (const split of ["train", "valid", "test"]) {
    const same = plan.filter((p) => p.role === split);
    if (same.length > 1) {
      const words = { train: "training", valid: "validation", test: "test" }[split];
      throw new Error(`${same.map((p) => p.name).join(" and ")} are all for the ${words} split: choose one file per split ` +
        `(a name with vali is the validation file, one with test the test file, the other the training file)`);
    }
  }
  return plan;
}

export async function onUpload() {
  clearError();
  const picked = $("files").files;
  if (!picked.length) return;
  // A large file reads for a while: its progress shows in the data's box, and Stop ends it.
  $("stop").disabled = false;
  try {
    const plan = planUploads(picked);
    $("stats").textContent = "Reading…";
    const r = await loadData({ type: "upload", files: plan });
    state.uploads = plan;
    state.uploadFailure = null;
    if (lastResult) clearResults("The data changed: Run again.");
    if (lastSweepSetup) clearSweep("The data changed: run the sweep again.");
    $("stats").innerHTML = statsTable(r.files.map((f) => [`${f.role}: ${f.name}`, f.stats]));
    // Settings that suit real LETOR data: z from the features most correlated with y, and the
    // library's threshold for files (empty: the largest training grade + 0.8, which gives the
    // first Run positive groups).
    writeForm({ privileged_kind: "top", privileged_value: "30%", tau_target: "" });
    saveToUrl();
    // The setup box names the uploads and the settings just written.
    await describeSetup();
  } catch (e) {
    state.uploads = [];
    if (e.message === "stopped") {
      state.uploadFailure = "its reading was stopped";
      $("stats").textContent = `Stopped: ${[...picked].map((f) => f.name).join(", ")} not read.`;
      await describeSetup();
      return;
    }
    state.uploadFailure = e.message;
    $("stats").textContent = "";
    showError(await recover(e));
    // The setup shown and downloaded no longer names the dropped files (described once the
    // workers are running again, after a failure that stopped them).
    await describeSetup();
  } finally {
    $("stop").disabled = !running;
  }
}

/// The files of a teacher trained elsewhere from their picker (none: forget them): the engine
/// reads them (a model checked as the CLI reads it), and every later setup names them.
export async function onTeacher(files) {
  clearError();
  const box = $("teacher-stats");
  try {
    box.textContent = files.length ? "Reading…" : "";
    state.teacher = await loadTeacher(files);
    if (lastResult) clearResults("The teacher changed: Run again.");
    if (lastSweepSetup) clearSweep("The teacher changed: run the sweep again.");
    // Forgotten: an opened setup's teacher goes too.
    if (!files.length && state.base?.data?.teacher) {
      state.base.data.teacher.model = null;
      state.base.data.teacher.scores = null;
    }
    box.textContent = state.teacher.map((f) => `${f.name}: ${f.description}`).join("; ");
    // A teacher in use shows, whoever uploaded it (a test, a restored page).
    if (state.teacher.length) $("teacher-box").open = true;
  } catch (e) {
    state.teacher = [];
    box.textContent = "";
    $("teacher-files").value = "";
    showError(await recover(e));
  }
  await describeSetup();
}

/// The reference model's files (none: forget it): the model a team runs today, a row of the
/// comparison with a paired test against every method. Read by the engine as a teacher's are.
export async function onReference(files) {
  clearError();
  const box = $("reference-stats");
  try {
    box.textContent = files.length ? "Reading…" : "";
    state.reference = await loadTeacher(files, "reference");
    if (lastResult) clearResults("The reference changed: Run again.");
    if (lastSweepSetup) clearSweep("The reference changed: run the sweep again.");
    if (!files.length && state.base?.data?.reference) {
      state.base.data.reference.model = null;
      state.base.data.reference.scores = null;
    }
    box.textContent = state.reference.map((f) => `${f.name}: ${f.description}`).join("; ");
    if (state.reference.length) $("reference-box").open = true;
  } catch (e) {
    state.reference = [];
    box.textContent = "";
    $("reference-files").value = "";
    showError(await recover(e));
  }
  await describeSetup();
}

// ---------------------------------------------------------------- results

export const CUTOFFS = [1, 3, 5, 8, 10];
export let lastResult = null;
export let lastSetup = null;
/// The setup the alpha sweep on show ran (its alpha aside), or null when none is shown.
let lastSweepSetup = null;

/// mean ± std, or n/a (with the reason on hover) where nothing could be measured.
export function fmt(stat) {
  if (stat.mean === null || stat.mean === undefined) return `<span title="${stat.unmeasured ?? ""}">n/a</span>`;
  // One seed has no measurable spread: the library sends a null std.
  const std = stat.std === null || stat.std === undefined ? "n/a" : stat.std.toFixed(4);
  return `${stat.mean.toFixed(4)} ± ${std}`;
}

export function resultsTable(result, order) {
  const methods = order.filter((m) => result.methods[m]).map((m) => [m, result.methods[m]]);
  const base = result.methods["no-distillation"]?.["ndcg@8"].mean;
  const best = Math.max(...methods.map(([, r]) => r["ndcg@8"].mean ?? -Infinity));
  // The paired test of each gain over no distillation (the library's, results.json's `tests`).
  const test = (name) => (result.tests ?? []).find((t) => t.metric === "ndcg@8" && t.a === name && t.b === "no-distillation");
  const pOf = (t) => {
    const p = t?.p_holm ?? t?.p;
    if (p === null || p === undefined) return t ? "n/a" : "—";
    return p < 0.001 ? "&lt; 0.001" : p.toFixed(3);
  };
  const head = `<tr><th>method</th>${CUTOFFS.map((k) => `<th>NDCG@${k}</th>`).join("")}<th>gain @8</th>` +
    `<th title="Paired randomization test of the gain over no distillation, over the test queries, Holm-corrected">p (Holm)</th><th>teacher NDCG@8</th>` +
    `<th title="NDCG@8 on the graded relevance, the ground truth behind y">graded NDCG@8</th></tr>`;
  let note = "";
  // Colour and bold only where the paired test beside them (the p column's: NDCG@8 on y against
  // no distillation) separates the method from no distillation; the verdicts may test another
  // metric (graded NDCG@8 when methods learn from clicks), and name it.
  const separated = (name) => {
    const t = test(name);
    const p = t?.p_holm ?? t?.p;
    return p !== null && p !== undefined && p < 0.05 && t.mean_diff !== 0;
  };
  const rows = methods.map(([name, r]) => {
    const mean8 = r["ndcg@8"].mean;
    let gain = "—";
    if (mean8 === null) {
      gain = "n/a";
    } else if (base !== undefined && base !== null && name !== "no-distillation") {
      const g = (100 * (mean8 - base)) / base;
      // No distillation at 0: no relative gain (not NaN% or +Infinity%).
      const marked = separated(name) ? (g >= 0 ? "gain-up" : "gain-down") : "";
      gain = Number.isFinite(g)
        ? `<span class="${marked}">${g >= 0 ? "+" : ""}${g.toFixed(2)}%</span>`
        : `<span title="no distillation's NDCG@8 is ${base}: a gain relative to it is undefined">n/a</span>`;
    }
    const teacher = r["teacher_ndcg@8"] ? fmt(r["teacher_ndcg@8"]) : "—";
    if (mean8 === null) note = ` <small>n/a: ${r["ndcg@8"].unmeasured}</small>`;
    const isBest = mean8 !== null && mean8 === best && name !== "no-distillation" && separated(name);
    return `<tr class="${isBest ? "best" : ""}" data-method="${name}"><td>${name}</td>` +
      CUTOFFS.map((k) => `<td>${fmt(r[`ndcg@${k}`])}</td>`).join("") + `<td>${gain}</td><td>${pOf(test(name))}</td><td>${teacher}</td>` +
      `<td>${r["graded_ndcg@8"] ? fmt(r["graded_ndcg@8"]) : "—"}</td></tr>`;
  });
  // A reference model trained elsewhere (`data.reference`): its figures, scored once.
  if (result.reference) {
    const run = result.reference.run;
    const at = (list, k) => list.find(([c]) => c === k)?.[1];
    const cell = (v) => (v === null || v === undefined ? "n/a" : v.toFixed(4));
    rows.push(`<tr class="reference" data-method="reference"><td>reference: ${escapeHtml(result.reference.label)}</td>` +
      CUTOFFS.map((k) => `<td>${cell(at(run.test.ndcg, k))}</td>`).join("") +
      `<td>—</td><td>—</td><td>—</td><td>${cell(at(run.test_graded_ndcg, 8))}</td></tr>`);
  }
  return `<thead>${head}</thead><tbody>${rows.join("")}</tbody>` +
    (note ? `<caption class="unmeasured">${note}</caption>` : "");
}

/// The answers first: one line per question the comparison asks (each method against no
/// distillation, PFD against GenD and self-distillation), in the library's plain words
/// (`stats::verdict`); a line the test separates is bold.
export function verdictLines(result, focus = null) {
  // The question a button asked (PFD against GenD on real data) comes first.
  const first = (v) => (focus && v.a === focus[0] && v.b === focus[1] ? 0 : 1);
  return [...(result.verdicts ?? [])]
    .sort((x, y) => first(x) - first(y))
    .map((v) => `<p class="${v.separates ? "separates" : ""}" data-a="${escapeHtml(v.a)}" data-b="${escapeHtml(v.b)}">${escapeHtml(v.text)}.</p>`)
    .join("");
}

/// The sentences of the paired tests under the table: each gain with its interval and p, or that
/// the run cannot tell the methods apart, with the difference it could have detected.
/// Then the teachers trained once for two methods, if any.
export function testSentences(result) {
  const lines = [
    ...(result.sentences ?? []).map((s) => `<li>${escapeHtml(s)}.</li>`),
    ...(result.shared_teachers ?? []).map((s) => `<li class="shared-teacher">Trained once: ${escapeHtml(s)}.</li>`),
    ...(result.external_teacher ? [externalTeacher(result.external_teacher)] : []),
  ];
  return lines.length ? `<ul>${lines.join("")}</ul>` : "";
}

/// The teacher trained elsewhere in a line: what it is, what it reads, what its scores mean.
function externalTeacher(t) {
  const split = t.split_features ? `; it splits on ${t.split_features.length} features, ${t.privileged_features.length} of them privileged` : "";
  const time = t.ms_per_1k_docs === null ? "" : `; scored here at ${t.ms_per_1k_docs.toFixed(2)} ms per 1,000 documents`;
  const note = t.note ? `; ${t.note}` : "";
  return `<li class="external-teacher">Teacher trained elsewhere: ${escapeHtml(t.description)}; it reads ${escapeHtml(t.reads)}${escapeHtml(split + time + note)}.</li>`;
}

/// The sentence of the test of `a` against `b`, if the run has it.
export function sentenceOf(result, a, b) {
  const i = (result.tests ?? []).filter((t) => t.metric === "ndcg@8").findIndex((t) => t.a === a && t.b === b);
  return i >= 0 ? result.sentences[i] : null;
}

export function resultsCsv(result) {
  if (result.folds) return foldsCsv(result);
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

/// A folds run's table (`summarize_folds`, the CLI's `compare --folds`): per method, NDCG@k as
/// the mean over the folds of each fold's mean over seeds, ± its spread over the folds, and each
/// fold's NDCG@8; the reference model the same, when there is one.
export function foldsTable(result, order) {
  const rows = order.filter((m) => result.methods[m]).map((m) => [m, result.methods[m], ""]);
  if (result.reference) rows.push([`reference: ${result.reference.label}`, result.reference, "reference"]);
  const folds = result.folds.map((f) => f.fold);
  const cell = (v) => (v === null || v === undefined ? "n/a" : v.toFixed(4));
  const stat = (s) => (s?.mean === null || s?.mean === undefined ? "n/a"
    : `${s.mean.toFixed(4)} ± ${s.std_over_folds === null || s.std_over_folds === undefined ? "n/a" : s.std_over_folds.toFixed(4)}`);
  const head = `<tr><th>method</th>${CUTOFFS.map((k) => `<th title="mean over the folds ± their spread">NDCG@${k}</th>`).join("")}` +
    `<th title="NDCG@8 on the graded relevance">graded NDCG@8</th>${folds.map((f) => `<th>NDCG@8 fold ${f}</th>`).join("")}</tr>`;
  const body = rows.map(([name, r, cls]) => `<tr class="${cls}" data-method="${escapeHtml(cls || name)}"><td>${escapeHtml(name)}</td>` +
    CUTOFFS.map((k) => `<td>${stat(r[`ndcg@${k}`])}</td>`).join("") + `<td>${stat(r["graded_ndcg@8"])}</td>` +
    folds.map((_, i) => `<td>${cell(r["ndcg@8"]?.per_fold?.[i])}</td>`).join("") + "</tr>");
  return `<thead>${head}</thead><tbody>${body.join("")}</tbody>`;
}

/// A folds run's CSV: each method's NDCG@k on each fold (the mean over its seeds).
function foldsCsv(result) {
  const lines = [["method", "fold", ...CUTOFFS.map((k) => `test_ndcg@${k}`), "test_graded_ndcg@8"].join(",")];
  for (const [name, r] of Object.entries(result.methods)) {
    result.folds.forEach((f, i) => {
      const at = (key) => r[key]?.per_fold?.[i] ?? "";
      lines.push([name, f.fold, ...CUTOFFS.map((k) => at(`ndcg@${k}`)), at("graded_ndcg@8")].join(","));
    });
  }
  return lines.join("\n") + "\n";
}

/// LETOR 4.0's five folds of the bundled MQ2008: each fold's comparison in the pool, one after
/// the other, then the library's summary of the folds (the mean over them, the paired tests on
/// the pooled test queries), as `compare --folds` gives it.
async function runFolds(setup, onEvent) {
  const { setups } = await request({ type: "fold-setups", setup });
  const perFold = [];
  let used = 1;
  // Each fold's warnings, named by their fold as the CLI prints them under its fold's line;
  // the settings no method reads are the same on every fold: said once.
  const warnings = [], notRanking = [];
  let unused = [];
  for (const [k, foldSetup] of setups.entries()) {
    let r;
    try {
      r = await runPool(foldSetup, (ev) => {
        onEvent(ev);
        $("status").textContent = `Fold ${k + 1} of ${setups.length}: ${$("status").textContent}`;
      }, dataNow(), `fold ${k + 1}`);
    } catch (e) {
      // Named by its fold, as the CLI names it; Stop is no failure of a fold.
      if (e?.message === undefined || e.message === "stopped") throw e;
      throw Object.assign(new Error(`fold ${k + 1} of ${setups.length}: ${e.message}`), { fatal: e.fatal, cause: e });
    }
    perFold.push(r.runs);
    used = Math.max(used, r.workers);
    warnings.push(...(r.prepared?.warnings ?? []).map((w) => `fold ${k + 1}: ${w}`));
    notRanking.push(...(r.not_ranking ?? []).map((w) => `fold ${k + 1}: ${w}`));
    unused = r.unused_settings ?? unused;
  }
  const { result } = await request({ type: "folds-summary", setup, folds: perFold });
  return {
    ...result, workers: used, warnings: [...(result.warnings ?? []), ...warnings],
    not_ranking: notRanking, unused_settings: unused,
  };
}

// ---------------------------------------------------------------- running

export let running = false;

/// Whether a button that trains must wait: a run is under way, or the pool is starting anew
/// after Stop or a failure (`restartWorker`).
export function busy() {
  return running || restarting !== null;
}

export function setRunning(on) {
  running = on;
  // A run that ends while the pool restarts (the one Stop ended) leaves the buttons to the
  // restart, which enables them once the new workers hold the data.
  const disabled = on || restarting !== null;
  for (const id of ["run", "sweep", "real-logs", "learn-clicks", "objectives-run"]) $(id).disabled = disabled;
  $("stop").disabled = !on;
}

/// Brings the worker's data up to date with the form, then returns the setup for `run_compare`.
/// Every button that trains goes through it: the form's bounds, then the library's checks of
/// the setup (crate/setup.rs, `Setup::check`: the settings, the seeds, the data's and the
/// models' sizes) before any data are generated or any engine is timed.
export async function prepareRun(overrides = {}) {
  const problem = formProblem(form);
  if (problem) throw new Error(problem);
  const v = { ...readForm(), ...overrides };
  if (v.source === "upload" && !state.uploads.length) {
    // The training file an opened setup names, which the page reads only as an upload.
    const named = state.base?.data?.source?.files?.train;
    throw new Error(state.uploadFailure
      ? `the upload failed (${state.uploadFailure}), so there are no data to run on: choose a valid LETOR training file under "Upload LETOR files", or another data source`
      : named
        ? `${named}: the opened setup names it as the training file, and it was not uploaded: upload it under "Upload LETOR files", or choose another data source`
        : `no data uploaded yet: choose a LETOR training file under "Upload LETOR files", or another data source`);
  }
  const setup = compareSetup(v, chosenBackend());
  await request({ type: "check", setup });
  const stats = await loadSource(v.source) ?? data.reply;
  // The data's features: the widest input a model of the comparison reads (the PFD teacher's).
  const features = Math.max(1, stats?.stats?.train?.features
    ?? stats?.files?.find((f) => f.role === "train")?.stats.features ?? 24);
  await request({ type: "check", setup, inputs: features });
  if (v.backend === "auto" && adapter) {
    setup.backend = (await measureAuto(setup, features)).backend === "webgpu" ? "gpu" : "cpu";
  }
  return setup;
}

export function progressLine(model, docs, seconds) {
  const role = model.teacher === null ? "student" : `teacher ${model.teacher + 1}`;
  return `Training ${model.method} ${role}, seed ${model.seed}: ${docs.toLocaleString()} documents in ${seconds.toFixed(0)} s.`;
}

/// `focus`: [a, b], the test whose verdict comes first (the "PFD against GenD" button).
export async function run(focus = null) {
  // Running from the first moment: a second click (a double-click on Run) finds the page busy
  // and the buttons disabled.
  if (busy()) return;
  setRunning(true);
  clearError();
  saveToUrl();
  $("status").textContent = "Preparing the data…";
  // The last run's answers go with it: a table is shown only beside the run that made it.
  clearResults("Running…");
  // The whole Run: data, auto's measurement, training and the summary.
  const started = performance.now();
  let throughput = "";
  try {
    const setup = await prepareRun();
    resetCharts(setup.first_seed ?? 0);
    $("status").textContent = "Starting…";
    // A setup's folds directory (from the CLI) goes the folds' way too, where the library says
    // what the page runs instead.
    const folds = setup.data.source === "mq2008_folds" || setup.data.folds != null;
    const result = await (folds ? runFolds : runPool)(setup, (ev) => {
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
    // Fresh only if the form still makes the setup the run started from: a setting changed
    // while it trained leaves the results marked as another setup's.
    markStale();
    $("verdict").innerHTML = verdictLines(result, focus);
    if (!folds) summarizeNdcg(result, $("show-seeds").checked);
    $("results").innerHTML = folds ? foldsTable(result, setup.methods) : resultsTable(result, setup.methods);
    $("results-tests").innerHTML = testSentences(result);
    showPropensities(result.clicks);
    const seconds = (performance.now() - started) / 1000;
    // Each thing once, in its place: progress in the status line (auto's choice is the engine
    // line's), what the data are in the notes, what to beware of in the warnings, and the
    // answers in the verdict above the table.
    const pooled = result.workers > 1 ? ` with ${result.workers} workers` : "";
    $("status").textContent = `Done in ${seconds.toFixed(1)} s on ${result.backend}${pooled}; last epoch ${throughput}.`;
    $("run-notes").textContent = folds
      ? `LETOR 4.0's five folds of MQ2008: ${result.pooled_test_queries} test queries pooled over the folds; ` +
        result.folds.map((f) => `fold ${f.fold} tests on ${f.test.split("/").pop()} (${f.test_queries} queries)`).join(", ") + "."
      : `${result.prepared.train.positive_groups} of ${result.prepared.train.groups} training queries have a positive document. ` +
      `x: ${result.prepared.regular_columns} features (${result.prepared.constant_regular} constant), ` +
      `z: ${result.prepared.privileged_columns.length} features (${result.prepared.constant_privileged} constant).` +
      (result.logs ? ` Simulated logs (${result.logs.click_model}): ${result.logs.train.clicks.toLocaleString("en")} clicks, ` +
        `${result.logs.train.conversions.toLocaleString("en")} conversions in the training split; ` +
        `CTR at rank 1 ${result.logs.train.ctr_by_rank[0].toFixed(3)}.` : "");
    $("run-warnings").innerHTML = [
      ...(result.prepared?.warnings ?? result.warnings ?? []).map((w) => `Warning: ${w}`),
      ...(result.not_ranking ?? []).map((w) => `Does not rank: ${w}.`),
      // Each begins with its setting's field (`tau_target 2.7 is not used: ...`), kept as written.
      ...(result.unused_settings ?? []).map((w) => `${w}.`),
    ].map((w) => `<li>${escapeHtml(w)}</li>`).join("");
    const select = $("student-method");
    select.innerHTML = setup.methods.map((m) => `<option>${m}</option>`).join("");
    // A folds run trains a student per fold and seed: none of them is the run's student.
    const exports = folds ? ["export-csv", "export-json"] : ["export-csv", "export-json", "export-student", "export-onnx", "student-method"];
    for (const id of exports) $(id).disabled = false;
  } catch (e) {
    $("status").textContent = e.message === "stopped" ? "Stopped." : "Failed.";
    clearResults(e.message === "stopped" ? "Stopped: no results." : "Failed: no results.");
    if (e.message !== "stopped") {
      const lost = /lost/i.test(e.message);
      showError(await recover(e), lost);
    }
  } finally {
    setRunning(false);
  }
}

/// Marks the shown results stale when the setup the form makes now is not the one they came
/// from (or the form makes none): their verdict, table and tests stay, greyed, under a line that
/// says so, and their downloads still carry the setup that made them. A Run replaces them.
export function markStale() {
  if ((!lastResult || !lastSetup) && !lastSweepSetup) return;
  // The engine and the workers aside: neither changes a result (both engines give the same
  // results, and auto resolves to one of them; jobs are the same on any number of workers).
  const what = (setup) => JSON.stringify({ ...setup, note: null, backend: null, jobs: null });
  let now = null;
  try {
    now = compareSetup(readForm(), "cpu");
  } catch {
    now = null;
  }
  if (lastResult && lastSetup) {
    const same = now !== null && what(now) === what(lastSetup);
    document.querySelector("#results-box").classList.toggle("stale", !same);
    $("stale").hidden = same;
  }
  if (lastSweepSetup) {
    // The sweep chooses its methods and alpha itself: the rest of the form is its setup.
    const swept = (setup) => what({ ...setup, methods: null, alpha: null });
    const same = now !== null && swept(now) === swept(lastSweepSetup);
    document.querySelector("figure.sweep").classList.toggle("stale", !same);
    $("sweep-stale").hidden = same;
  }
}

/// Takes the alpha sweep off the page, leaving `why` under its chart.
function clearSweep(why) {
  lastSweepSetup = null;
  sweepChart.data.datasets = [];
  sweepChart.update("none");
  $("sweep-summary").textContent = why;
  $("sweep-warnings").innerHTML = "";
  document.querySelector("figure.sweep").classList.remove("stale");
  $("sweep-stale").hidden = true;
}

/// Takes the last run's results off the page (its verdict, table, tests, notes, warnings and
/// downloads), leaving `why` in the table.
function clearResults(why) {
  lastResult = null;
  document.querySelector("#results-box").classList.remove("stale");
  $("stale").hidden = true;
  $("verdict").innerHTML = "";
  $("results").innerHTML = `<tbody><tr><td>${escapeHtml(why)}</td></tr></tbody>`;
  $("results-tests").innerHTML = "";
  showPropensities(null);
  $("run-notes").textContent = "";
  $("run-warnings").innerHTML = "";
  for (const id of ["export-csv", "export-json", "export-student", "export-onnx", "student-method"]) $(id).disabled = true;
}

/// The alpha sweep: no distillation and PFD at each alpha, each value's comparison run by the
/// pool and the sweep summarised by the library (crate/pipeline/sweep.rs), as `distillrank sweep
/// --param alpha` does: the chart draws each method's test NDCG@8 (mean over the seeds), and the
/// line below it each value's gain with its paired test.
export async function sweep() {
  if (busy()) return;
  setRunning(true);
  clearError();
  saveToUrl();
  const alphas = [0.1, 0.3, 0.5, 0.7, 0.9];
  clearSweep("");
  try {
    const base = { ...(await prepareRun()), methods: ["no-distillation", "pfd"] };
    // The sweep owns its setup (above) and the data it starts from: every value runs on them.
    const at = dataNow();
    const points = [];
    for (const alpha of alphas) {
      $("status").textContent = `Alpha sweep: no distillation and PFD at alpha = ${alpha}…`;
      const { setup } = await workers[0].request({ type: "sweep-setup", setup: base, param: "alpha", value: alpha });
      const r = await runPool(setup, () => {}, at, "the alpha sweep");
      points.push({ value: alpha, methods: r.runs });
      const { sweep: summary } = await workers[0].request({ type: "sweep-summary", setup: base, param: "alpha", points });
      drawSweep(summary);
      lastSweepSetup = base;
      // A setting changed while the sweep runs marks what it has drawn as another setup's.
      markStale();
    }
    $("status").textContent = "Alpha sweep done.";
  } catch (e) {
    $("status").textContent = e.message === "stopped" ? "Stopped." : "Failed.";
    // The values drawn so far stay, said to be a part.
    if ($("sweep-summary").textContent) $("sweep-summary").textContent += ` (The sweep ended early: ${e.message === "stopped" ? "stopped" : "it failed"}; the values above are all it ran.)`;
    if (e.message !== "stopped") showError(await recover(e));
  } finally {
    setRunning(false);
  }
}

/// Draws the library's sweep summary: a line per method (no distillation dashed), and each
/// value's paired test of PFD against no distillation as the library words it.
function drawSweep(summary) {
  for (const method of Object.keys(summary.points[0]?.methods ?? {})) {
    const baseline = method === "no-distillation";
    const line = dataset(sweepChart, method, () => ({
      label: state.choices?.methods.find((m) => m.name === method)?.label ?? method,
      borderColor: METHOD_COLOURS[method], backgroundColor: METHOD_COLOURS[method],
      ...(baseline ? { borderDash: [5, 4] } : {}),
    }));
    line.data = summary.points.map((p) => ({ x: p.value, y: p.methods[method]["ndcg@8"].mean ?? NaN }));
  }
  sweepChart.update("none");
  // What the CLI's sweep warns of, as a Run's warnings show: what the data hold, then the
  // settings it does not read (`alpha 0.5 is not used: ...`).
  $("sweep-warnings").innerHTML = [
    ...(summary.warnings ?? []).map((w) => `Warning: ${w}`),
    ...(summary.unused_settings ?? []).map((w) => `${w}.`),
  ].map((w) => `<li>${escapeHtml(w)}</li>`).join("");
  // Each value's test of PFD against no distillation, in the library's words (crate/stats.rs).
  $("sweep-summary").textContent = summary.points.map((p) => {
    const sentence = p.sentences.find((t) => t.startsWith("pfd − no-distillation"));
    return `alpha ${p.value}: ${sentence ?? "PFD against no distillation was not tested"}.`;
  }).join(" ");
}

export async function downloadStudent() {
  const method = $("student-method").value;
  try {
    const r = await (studentWorker.get(method) ?? workers[0]).request({ type: "student", method });
    download(`${method}.safetensors`, r.safetensors, "application/octet-stream");
    download(`${method}.json`, r.config, "application/json");
  } catch (e) {
    showError(await recover(e));
  }
}

/// The chosen student as an ONNX model: raw LETOR features in, `distillrank predict`'s scores out.
export async function downloadOnnx() {
  const method = $("student-method").value;
  try {
    const r = await (studentWorker.get(method) ?? workers[0]).request({ type: "onnx", method });
    download(`${method}.onnx`, r.onnx, "application/octet-stream");
  } catch (e) {
    showError(await recover(e));
  }
}

/// Scores the current data's test split with a saved model (its .safetensors and .json files).
export async function scoreSavedModel() {
  clearError();
  const files = [...$("model-files").files];
  // Choosing the same files again (the data changed since) scores them again: a file input
  // fires only when its files change.
  $("model-files").value = "";
  const weights = files.find((f) => f.name.endsWith(".safetensors"));
  const config = files.find((f) => f.name.endsWith(".json"));
  if (!weights || !config) {
    showError("choose the model's .safetensors file and its .json config together");
    return;
  }
  try {
    await loadSource(readForm().source);
    // The test split a Run on these data holds out (with the setup's data seed) when none was uploaded.
    const data_seed = baseSetup().data?.data_seed ?? 0;
    const { result } = await request({ type: "evaluate", safetensors: weights, config, data_seed });
    const ndcg = result.metrics.ndcg.map(([k, v]) => `NDCG@${k} ${v === null ? "—" : v.toFixed(4)}`).join(", ");
    $("model-score").textContent = `${weights.name} (${result.model.inputs} inputs, widths ${result.model.widths.join("-") || "none"}) on ` +
      `${result.test_queries} test queries, graded relevance: ${ndcg}; MAP ${result.metrics.map === null ? "n/a (no relevant document)" : result.metrics.map.toFixed(4)}.` +
      (result.warning ? ` Warning: ${result.warning}.` : "");
  } catch (e) {
    showError(await recover(e));
  }
}
