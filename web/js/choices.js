// The form's choices from the library's entries: a checkbox per method (crate/ranking/distill.rs,
// METHODS), an option per loss (crate/model/loss.rs, LOSSES) and per input transform
// (crate/data/transform.rs), each with its label and its
// help as the tooltip, and each method's chart colour. A new method or loss appears here without
// a line of the page changing.

import { $, escapeHtml } from "./dom.js";
import { METHOD_COLOURS } from "./charts.js";

/// Builds the choices from `choices` ({losses, methods}, as the engine gives them).
export function applyChoices(choices) {
  $("method-choices").innerHTML = choices.methods.map((m) =>
    `<label title="${escapeHtml(m.help)}"><input type="checkbox" name="method" data-field="methods" ` +
    `data-help="${escapeHtml(m.help)}" value="${escapeHtml(m.name)}"> ${escapeHtml(m.label)}</label>`).join("\n");
  $("loss-choices").innerHTML = choices.losses.map((l) =>
    `<option value="${escapeHtml(l.name)}" title="${escapeHtml(l.help)}">${escapeHtml(l.label)} (${escapeHtml(l.family)})</option>`).join("");
  $("transform-choices").innerHTML = choices.transforms.map((t) =>
    `<option value="${escapeHtml(t.name)}" title="${escapeHtml(t.help)}">${escapeHtml(t.name)}</option>`).join("");
  for (const m of choices.methods) METHOD_COLOURS[m.name] = m.colour;
}
