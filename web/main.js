// The page: wires the form, the buttons and the worker pool together (web/js/: the setup and
// its URL, the worker client, the charts, the comparison view and the global objectives view).

import { $, form, showError, clearError, download } from "./js/dom.js";
import { readForm, writeForm, saveToUrl, loadFromUrl, showSourceKnobs, urlForms, linkedSetupText, formFromSetup, compareSetup } from "./js/setup.js";
import { applySettings } from "./js/settings.js";
import { applyChoices } from "./js/choices.js";
import { loadDefaults, describeSetup, openSetupFile } from "./js/describe.js";
import { state } from "./js/state.js";
import { startWorkers, startPool, enableRuns, restartWorker, showEngine, recover, request, onProgress } from "./js/workers.js";
import { initCharts, showSeedCurves } from "./js/charts.js";
import { loadMq2008, loadSource, onUpload, onTeacher, onReference, busy, lastResult, lastSetup, resultsCsv, running, run, sweep, downloadStudent, downloadOnnx, scoreSavedModel, markStale } from "./js/compare.js";
import { objectivesForm, initObjectiveCharts, runObjectives, lastObjectives } from "./js/objectives.js";

/// The library's defaults, table of settings and choices, asked of the engine; the form's
/// choices from the library's entries, its values from the table, then the link's own values on
/// top.
async function startForm() {
  await loadDefaults();
  applyChoices(state.choices);
  applySettings(state.settings, urlForms());
  const problems = [];
  // The settings without a control, read by the library as an opened setup.json is; then the
  // controls' own values on top.
  try {
    const text = linkedSetupText();
    if (text !== null) {
      const opened = await request({ type: "open", text });
      formFromSetup(opened.setup);
      state.base = opened.setup;
    }
  } catch (e) {
    problems.push(e.message);
  }
  problems.push(...loadFromUrl());
  // The whole setup the link makes, read by the library as Run would read it.
  if (!problems.length) {
    try {
      await request({ type: "describe", setup: compareSetup(readForm(), readForm().backend) });
    } catch (e) {
      problems.push(e.message);
    }
  }
  if (problems.length) showError(`The link's values the page cannot take: ${problems.join("; ")}.`);
}

function main() {
  loadFromUrl();
  initCharts();
  initObjectiveCharts();
  objectivesForm.addEventListener("submit", (e) => { e.preventDefault(); runObjectives(); });
  // The objectives' form is the setup's objectives section: the link and setup.json follow it.
  objectivesForm.addEventListener("change", () => {
    saveToUrl();
    describeSetup().catch((err) => showError(err.message));
  });
  form.addEventListener("submit", (e) => { e.preventDefault(); run(); });
  form.addEventListener("change", (e) => {
    if (e.target.name === "source") {
      // A labelling threshold belongs to its data's grades: new data start from the library's
      // own for them (empty: 3.5 on generated data, the largest training grade + 0.8 on files).
      writeForm({ tau_target: "" });
      showSourceKnobs();
      if (e.target.value.startsWith("mq2008")) {
        // Real data: z from the simulated logs unless the user picks otherwise.
        if (readForm().privileged_kind === "generator") writeForm({ privileged_kind: "logs" });
        loadMq2008().catch((err) => showError(err.message));
      }
    }
    if (e.target.name === "privileged_kind" || e.target.name === "labels") showSourceKnobs();
    if (e.target.id !== "files" && e.target.id !== "setup-file") saveToUrl();
    markStale();
    showEngine();
    describeSetup().catch((err) => showError(err.message));
  });
  $("files").addEventListener("change", onUpload);
  $("teacher-files").addEventListener("change", (e) => onTeacher([...e.target.files]));
  $("teacher-clear").addEventListener("click", () => {
    $("teacher-files").value = "";
    onTeacher([]);
  });
  $("reference-files").addEventListener("change", (e) => onReference([...e.target.files]));
  $("reference-clear").addEventListener("click", () => {
    $("reference-files").value = "";
    onReference([]);
  });
  $("show-seeds").addEventListener("change", (e) => showSeedCurves(e.target.checked));
  $("stop").addEventListener("click", async () => {
    await restartWorker();
    // No run can have started meanwhile (the restart holds the buttons); a later one's status
    // is its own.
    if (!running) $("status").textContent = "Stopped.";
  });
  $("sweep").addEventListener("click", () => sweep());
  /// A one-click comparison: the form set to it as a user would set it (new data start from
  /// their own labelling threshold), its link, command and setup.json then describing it, and Run.
  const oneClick = (fields, methods, focus) => {
    if (busy()) return;
    const tau = readForm().source === fields.source ? {} : { tau_target: "" };
    writeForm({ ...fields, ...tau });
    for (const box of form.querySelectorAll('input[name="method"]')) box.checked = methods.includes(box.value);
    showSourceKnobs();
    saveToUrl();
    markStale();
    describeSetup().catch((err) => showError(err.message));
    run(focus);
  };
  $("real-logs").addEventListener("click", () =>
    oneClick({ source: "mq2008", privileged_kind: "logs" }, ["no-distillation", "gend", "pfd"], ["pfd", "gend"]));
  $("learn-clicks").addEventListener("click", () =>
    oneClick({ source: "mq2008", privileged_kind: "logs", loss: "softmax" },
      ["naive", "ips", "dla", "two-tower", "pfd", "full-information"], ["pfd", "ips"]));
  $("restart").addEventListener("click", async () => {
    clearError();
    await restartWorker();
    // An engine that failed at start-up never filled the form.
    if (!state.settings) await startForm();
  });
  $("export-json").addEventListener("click", () =>
    download("results.json", JSON.stringify({ setup: lastSetup, ...lastResult }, null, 2), "application/json"));
  $("export-csv").addEventListener("click", () => download("results.csv", resultsCsv(lastResult), "text/csv"));
  $("objectives-export").addEventListener("click", () =>
    download("results.json", JSON.stringify(lastObjectives, null, 2), "application/json"));
  $("setup-download").addEventListener("click", () => {
    if (state.lastDescribed) download("setup.json", JSON.stringify(state.lastDescribed.setup, null, 2) + "\n", "application/json");
    else showError(`the form holds no valid setup to download: ${$("setup-command").textContent}`);
  });
  $("setup-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    e.target.value = "";
    try {
      await openSetupFile(file);
    } catch (err) {
      showError(`${file.name}: ${err.message}`);
      return;
    }
    // The data the opened setup names, shown as a link's are at start-up.
    markStale();
    await Promise.resolve(loadSource(readForm().source)).catch(async (e) => showError(await recover(e)));
  });
  $("export-student").addEventListener("click", downloadStudent);
  $("export-onnx").addEventListener("click", downloadOnnx);
  $("model-files").addEventListener("change", scoreSavedModel);
  // A long step (preparing the data, simulating logs) in the status line, beside Stop.
  // An upload's reading in the data's box.
  onProgress((p) => {
    if (p.done >= p.total) return;
    const [done, total, unit] = p.unit === "bytes"
      ? [(p.done / 1e6).toFixed(0), (p.total / 1e6).toFixed(0), "MB"]
      : [p.done.toLocaleString("en"), p.total.toLocaleString("en"), p.unit];
    const line = `${p.label}, ${done} of ${total} ${unit}…`;
    if (running) $("status").textContent = `Preparing the data: ${line}`;
    else if (/^Reading/.test($("stats").textContent)) $("stats").textContent = `Reading… ${line}`;
  });
  startWorkers()
    .then(async () => {
      await startForm();
      enableRuns();
      await describeSetup();
      // Data the form cannot have (sizes past memory) are the form's problem, said as such; the
      // pool starts all the same.
      await Promise.resolve(loadSource(readForm().source)).catch(async (e) => showError(await recover(e)));
      startPool();
    })
    .catch((e) => showError(e.message, true));
}

main();
