// The global objectives view: log-loss against the objectives of Eban et al.

import { $, showError, clearError, escapeHtml } from "./dom.js";
import { saveToUrl, objectivesSection } from "./setup.js";
import { runObjectivesPool, chosenBackend, recover } from "./workers.js";
import { lineChart, dataset } from "./charts.js";
import { setRunning, busy } from "./compare.js";
import { state } from "./state.js";

// ---------------------------------------------------------------- global objectives

export const objectivesForm = $("objectives-setup");
export let aucChart, lambdaChart;
/// The last objectives run's setup and results, as `distillrank objectives` writes them in
/// results.json (Results JSON downloads them).
export let lastObjectives = null;

/// Draws the objectives view's empty charts.
export function initObjectiveCharts() {
  aucChart = lineChart($("objectives-auc-chart"), "validation AUC-PR");
  lambdaChart = lineChart($("objectives-lambda-chart"), "λ");
}

/// The objectives' section of the setup to run (setup.js, `objectivesSection`), on the
/// comparison's engine: WebGPU when chosen (or when auto measured it faster), else the CPU
/// engine. Files must have been uploaded.
export function objectivesSetup() {
  if (new FormData(objectivesForm).get("obj_source") !== "synthetic" && !state.uploads.length) {
    throw new Error("upload LETOR files above first, or choose the synthetic task");
  }
  return objectivesSection(chosenBackend() === "webgpu" ? "gpu" : "cpu");
}

export const OBJECTIVE_COLOURS = ["#6e7781", "#cf222e", "#0969da", "#bf8700", "#8250df", "#1a7f37", "#d4a72c"];

export function objectiveColour(name) {
  const order = ["logloss", "auc-pr", "recall-at-precision", "precision-at-recall", "tpr-at-fpr", "roc-auc", "f-beta"];
  return OBJECTIVE_COLOURS[Math.max(0, order.indexOf(name.split(":")[0]))];
}

export function constraintText(c) {
  if (!c) return "";
  const value = c.value === null ? "undefined" : c.value.toFixed(3);
  return `${c.quantity} ${value} ${c.at_least ? "≥" : "≤"} ${c.target}: ${c.holds ? "holds" : "not met"}`;
}

/// The first seed of the Run under way (the section's first_seed): the charts follow its models.
let chartedSeed = 0;

export function onObjectiveEpoch(ev) {
  const { objective, seed, log } = ev;
  $("objectives-status").textContent = `${objective}, seed ${seed}, epoch ${log.epoch}: validation AUC-PR ` +
    `${log.valid.auc_pr.toFixed(4)}${log.constraint ? "; " + constraintText(log.constraint) : ""}.`;
  if (seed !== chartedSeed) return;
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

export function meanStd(values) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  // One seed has no measurable spread: n/a, never a 0.
  if (values.length < 2) return `${mean.toFixed(4)} ± n/a`;
  const std = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1));
  return `${mean.toFixed(4)} ± ${std.toFixed(4)}`;
}

export function objectivesTable(result) {
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

export async function runObjectives() {
  if (busy()) return;
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
  $("objectives-export").disabled = true;
  for (const c of [aucChart, lambdaChart]) { c.data.datasets = []; c.update("none"); }
  chartedSeed = setup.first_seed ?? 0;
  $("objectives-status").textContent = "Generating the data…";
  $("objectives-warnings").innerHTML = "";
  const started = performance.now();
  try {
    const result = await runObjectivesPool(setup, onObjectiveEpoch);
    lastObjectives = { setup, ...result };
    $("objectives-export").disabled = false;
    $("objectives-results").innerHTML = objectivesTable(result);
    // What none of the objectives reads, as the CLI warns of it (`objectives.dual_rate_factor 2 is not used: ...`).
    $("objectives-warnings").innerHTML = (result.unused_settings ?? [])
      .map((w) => `<li>${escapeHtml(w)}.</li>`).join("");
    const pooled = ` on ${result.backend}` + (result.workers > 1 ? ` with ${result.workers} workers` : "");
    $("objectives-status").textContent = `Done in ${((performance.now() - started) / 1000).toFixed(1)} s${pooled}: ` +
      `${result.description}; ${(100 * result.positive_rate).toFixed(1)}% positives in training.`;
  } catch (e) {
    $("objectives-status").textContent = e.message === "stopped" ? "Stopped." : "Failed.";
    if (e.message !== "stopped") showError(await recover(e));
  } finally {
    setRunning(false);
  }
}
