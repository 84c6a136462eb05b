// The setup box: the form's setup as the equivalent `distillrank compare` command and the
// settings where it departs from the library's defaults (the page's lighter ones among them),
// both from the engine (crate/setup.rs), as the CLI writes them.

import { $, escapeHtml } from "./dom.js";
import { readForm, compareSetup } from "./setup.js";
import { workers, request } from "./workers.js";
import { state } from "./state.js";

/// Asks the engine for the library's default setup.
export async function loadDefaults() {
  state.defaults = (await request({ type: "defaults" })).setup;
}

export async function describeSetup() {
  if (!state.defaults || !workers.length) return;
  let setup;
  try {
    setup = compareSetup(readForm(), readForm().backend);
  } catch (e) {
    $("setup-command").textContent = `(${e.message})`;
    return;
  }
  const d = await request({ type: "describe", setup });
  state.lastDescribed = d;
  $("setup-command").textContent = d.command;
  $("setup-differences").innerHTML = d.differences.length
    ? "Differs from the CLI's defaults: " + d.differences.map(([k, v, def]) =>
      `<b>${escapeHtml(k)}</b> ${escapeHtml(v)} <span class="hint">(default ${escapeHtml(def)})</span>`).join("; ") + "."
    : "The CLI's defaults.";
}
