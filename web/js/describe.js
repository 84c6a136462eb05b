// The setup box: the form's setup as the equivalent `distillrank compare` command and the
// settings where it departs from the library's defaults (the page's lighter ones among them),
// both from the engine (crate/setup.rs), as the CLI writes them; and opening a setup file.

import { $, form, escapeHtml, clearError, inPageWords } from "./dom.js";
import { readForm, compareSetup, formFromSetup, saveToUrl, rowOf } from "./setup.js";
import { workers, request } from "./workers.js";
import { state } from "./state.js";

/// The command line's settings that have a control on the form: the row of every control that
/// fills a field (`data-field`), the data source's flags and the privileged split's. A setup's
/// other settings (teacher widths, multi-teacher PFD's teachers, the first seed, the generator's
/// kind and privileged count, ...) come from the last opened setup and are listed as kept.
function formFlags() {
  // The teacher's files come from its own upload box, the `.query` files with their data's.
  const flags = new Set(["bundled", "train", "valid", "test", "train-query", "valid-query", "test-query",
    "privileged", "teacher-model", "teacher-scores"]);
  for (const el of form.querySelectorAll("[data-field]")) {
    const row = rowOf(el.dataset.field);
    if (row) flags.add(row.name);
  }
  return flags;
}

/// Asks the engine for the library's default setup and its table of settings.
export async function loadDefaults() {
  const answer = await request({ type: "defaults" });
  state.defaults = answer.setup;
  state.settings = answer.settings;
  state.choices = answer.choices;
}

// Each description numbered: only the latest one is shown (an earlier one may answer later).
let described = 0;

export async function describeSetup() {
  if (!state.defaults || !workers.length) return;
  const mine = ++described;
  let d;
  try {
    d = await request({ type: "describe", setup: compareSetup(readForm(), readForm().backend) });
  } catch (e) {
    if (mine !== described) return;
    // No valid setup: nothing to download until the form holds one.
    state.lastDescribed = null;
    $("setup-command").textContent = `(${inPageWords(e.message)})`;
    $("setup-differences").textContent = "";
    $("setup-kept").textContent = "";
    return;
  }
  if (mine !== described) return;
  state.lastDescribed = d;
  $("setup-command").textContent = d.command;
  $("setup-differences").innerHTML = d.differences.length
    ? "Differs from the CLI's defaults: " + d.differences.map(([k, v, def]) =>
      `<b>${escapeHtml(k)}</b> ${escapeHtml(v)} <span class="hint">(default ${escapeHtml(def)})</span>`).join("; ") + "."
    : "The CLI's defaults.";
  const onForm = formFlags();
  const kept = d.differences.filter(([k]) => !onForm.has(k));
  $("setup-kept").textContent = kept.length
    ? "Kept from the opened setup (the form has no control for them; Run and Download setup.json use them): " +
      kept.map(([k, v]) => `${k} ${v}`).join("; ") + "."
    : "";
}

/// Opens a setup file: the library reads it as `distillrank compare --setup` does (every field
/// checked, unknown ones refused) before the form changes; then the form shows it, and the
/// settings the form has no control for are kept for Run and Download setup.json.
export async function openSetupFile(file) {
  clearError();
  const opened = await request({ type: "open", text: await file.text() });
  formFromSetup(opened.setup);
  state.base = opened.setup;
  saveToUrl();
  await describeSetup();
}
