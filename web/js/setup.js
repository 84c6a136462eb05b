// The setup (crate/setup.rs) from the form and back, and kept in the URL. The setup box (its
// command and differences) is describe.js's.

import { $, form, number, integer, controlName } from "./dom.js";
import { state } from "./state.js";

// ---------------------------------------------------------------- the setup, kept in the URL

/// Every named control of the comparison's form by its name (the method checkboxes as the list
/// of those checked, `methods`).
export function readForm() {
  const f = new FormData(form);
  const out = {};
  for (const el of form.elements) {
    if (el.name && el.type !== "file" && el.name !== "method") out[el.name] = f.get(el.name);
  }
  out.methods = f.getAll("method");
  return out;
}

/// Sets fields of the page's forms (the methods' and the objectives') by name.
export function writeForm(values) {
  for (const [k, v] of Object.entries(values)) {
    const el = urlForms().map((f) => f.elements[k]).find((e) => e);
    if (el instanceof RadioNodeList) {
      for (const r of el) r.checked = r.value === v;
    } else if (el?.type === "checkbox") {
      el.checked = v === el.value;
    } else if (el) {
      el.value = v;
    }
  }
  showSourceKnobs();
}

/// Every named field of both forms (the methods and the objectives), checkboxes as the list of
/// checked values, in the URL's hash: a link reproduces the setup.
export function urlForms() {
  return [form, $("objectives-setup")];
}

export function saveToUrl() {
  // Until the table of settings has filled the form, its controls are empty: nothing to keep.
  if (!state.settings) return;
  const p = new URLSearchParams();
  // An opened setup's settings that no control shows, as JSON, read back through the library.
  const kept = keptSettings();
  if (kept) p.set(KEPT, JSON.stringify(kept));
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

/// The link's parameter that carries an opened setup's settings without a control.
const KEPT = "setup";

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/// The setup fields a control of the page fills: every `data-field` of both forms, and those the
/// page reads its own way (the methods' boxes, the backend, the privileged split's two
/// controls). The objectives' list stays with the kept settings: its boxes cannot show an
/// objective's own parameters (auc-pr:10's anchors).
function shownFields() {
  const shown = new Set(["methods", "backend", "note", "data.privileged", "objectives.backend"]);
  for (const f of urlForms()) for (const el of f.querySelectorAll("[data-field]")) shown.add(el.dataset.field);
  return shown;
}

/// Where `value` departs from `defaults`, as a sparse copy: objects of the same fields compared
/// field by field, anything else whole; fields in `shown` (a control carries them) left out.
/// Undefined when nothing departs.
function departures(value, defaults, path, shown) {
  if (shown.has(path)) return undefined;
  const sameFields = isObject(value) && isObject(defaults) &&
    Object.keys(value).length === Object.keys(defaults).length && Object.keys(value).every((k) => k in defaults);
  if (sameFields) {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      const d = departures(v, defaults[k], path ? `${path}.${k}` : k, shown);
      if (d !== undefined) out[k] = d;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return JSON.stringify(value) === JSON.stringify(defaults) ? undefined : value;
}

/// The opened setup's settings that no control shows, where they depart from the library's
/// defaults (`{teacher_widths: [64], rd: {k: 5}}`), or null: what the link carries beside the
/// controls, so that a reload keeps them.
export function keptSettings() {
  if (!state.base || !state.defaults) return null;
  return departures(state.base, state.defaults, "", shownFields()) ?? null;
}

/// `patch` over `setup`: an object's fields one by one, but where the two are different
/// choices of one enum (`{files: ...}` over `{synthetic: ...}`), which the patch replaces.
export function overlay(setup, patch) {
  const oneOf = (v) => isObject(v) && Object.keys(v).length === 1;
  const otherChoice = oneOf(setup) && oneOf(patch) && Object.keys(setup)[0] !== Object.keys(patch)[0];
  if (!isObject(setup) || !isObject(patch) || otherChoice) return patch;
  const out = { ...setup };
  for (const [k, v] of Object.entries(patch)) out[k] = k in setup ? overlay(setup[k], v) : v;
  return out;
}

/// The settings without a control that the link carries (`setup=JSON`) over the library's
/// defaults, as the text of a setup for the library's reader; null when the link carries none.
/// A value that is not JSON is refused here, in the link's words.
export function linkedSetupText() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (!p.has(KEPT)) return null;
  let kept;
  try {
    kept = JSON.parse(p.get(KEPT));
  } catch (e) {
    throw new Error(`its ${KEPT}= (the settings the form has no control for) is not JSON: ${e.message}`);
  }
  if (!isObject(kept)) throw new Error(`its ${KEPT}= (the settings the form has no control for) is not a JSON object of settings`);
  return JSON.stringify(overlay(state.defaults, kept));
}

/// Puts the link's values into the forms. Returns what the forms could not take, each in the
/// page's words (a choice the page does not offer: `backend=tpu`, a method or a privileged kind
/// it does not know): the form keeps its own value there, and the caller says so rather than
/// run something else without a word.
export function loadFromUrl() {
  const p = new URLSearchParams(location.hash.slice(1));
  const problems = [];
  const offered = (choices) => choices.map((c) => c.value).join(", ");
  for (const f of urlForms()) {
    const groups = new Set();
    for (const el of f.elements) {
      if (!el.name || el.type === "file" || el.name === KEPT || !p.has(el.name)) continue;
      const v = p.get(el.name);
      if (el.type === "checkbox" || el.type === "radio") {
        el.checked = el.type === "checkbox" ? v.split(",").includes(el.value) : el.value === v;
        groups.add(el.name);
      } else if (el.tagName === "SELECT") {
        const before = el.value;
        el.value = v;
        if (el.value !== v) {
          el.value = before;
          problems.push(`${controlName(el)} "${v}" is none of this page's choices (${offered([...el.options])}): the form keeps ${before}`);
        }
      } else {
        const before = el.value;
        el.value = v;
        // A number field blanks what is no number ("NaN", "Infinity", other scripts' digits),
        // and Run would take the default in its place: named instead, the form's value kept.
        if (el.type === "number" && v.trim() !== "" && el.value === "") {
          el.value = before;
          problems.push(`${controlName(el)} "${v}" is not a number: the form keeps ${before === "" ? "its default" : before}`);
        }
      }
    }
    // A checkbox list or a radio choice: each value the link names must be one the page offers.
    for (const name of groups) {
      const boxes = [...f.querySelectorAll(`input[name=${name}]`)];
      const unknown = p.get(name).split(",").filter((v) => v !== "" && !boxes.some((b) => b.value === v));
      if (unknown.length) {
        problems.push(`${name} "${unknown.join(", ")}" is none of this page's choices (${offered(boxes)})`);
      }
    }
  }
  // A key no control of the page takes (a typo such as `epoch=5`) would be dropped without a
  // word: named, with the closest key the page knows.
  const known = new Set([KEPT]);
  for (const f of urlForms()) for (const el of f.elements) if (el.name) known.add(el.name);
  for (const key of p.keys()) {
    if (known.has(key)) continue;
    const near = [...known].find((k) => k.startsWith(key) || key.startsWith(k));
    problems.push(`"${key}" is no setting of this page${near ? ` (did you mean ${near}?)` : ""}: the link's value for it is not used`);
  }
  showSourceKnobs();
  return problems;
}

/// Shows the controls that apply to the chosen data and privileged kind, and hides the others:
/// the generator's knobs for synthetic data, the logs' for simulated logs, "k / columns" for a
/// split that takes them, and tau_target where the labels are drawn from grades (the simulated
/// logs' y is the conversion; the grades as labels have no threshold).
export function showSourceKnobs() {
  const { source, privileged_kind, labels } = readForm();
  $("synthetic-knobs").hidden = source !== "synthetic";
  $("upload-box").hidden = source !== "upload";
  $("mq2008-box").hidden = !source.startsWith("mq2008");
  $("mq2008-folds-note").hidden = source !== "mq2008-folds";
  $("logs-knobs").hidden = privileged_kind !== "logs";
  const label = (name) => form.elements[name].closest("label");
  label("privileged_value").hidden = !["top", "cols"].includes(privileged_kind);
  label("tau_target").hidden = privileged_kind === "logs" || labels === "grades";
  // Generated data have every column in every split.
  label("allow_missing_features").hidden = source === "synthetic";
}

/// What the JSON of a setup says about where it was made.
export const PAGE_NOTE = "made on the page: its form starts lighter than the CLI's defaults for a browser " +
  "(less data, a smaller model, fewer epochs); the page lists every difference beside the form";

/// The setup the form's values go on top of: the last opened setup, else the library's defaults.
export function baseSetup() {
  return state.base ?? state.defaults;
}

/// The value at `path` (`data.logs.sessions`) of `object`; undefined where the path stops.
export function valueAt(object, path) {
  return path.split(".").reduce((at, key) => (at == null ? undefined : at[key]), object);
}

/// Sets `value` at `path` of `object`, making the objects on the way.
function setAt(object, path, value) {
  const keys = path.split(".");
  const last = keys.pop();
  let at = object;
  for (const key of keys) {
    if (at[key] == null || typeof at[key] !== "object") at[key] = {};
    at = at[key];
  }
  at[last] = value;
}

/// The row of the library's table of settings that fills `path`, or null.
export function rowOf(path) {
  return (state.settings ?? []).find((row) => row.fields.some((f) => f.path === path)) ?? null;
}

/// The controls of the comparison's form that fill a setup field (`data-field="PATH"`), but the
/// method checkboxes and the backend, which every setup reads its own way.
function fieldControls() {
  return [...form.querySelectorAll("[data-field]")]
    .filter((el) => el.dataset.field !== "methods" && el.dataset.field !== "backend");
}

/// A control's text `text` as its setup field takes it, read by its row of the table of
/// settings: a whole number, a real, a list of whole numbers (a text control of a whole-number
/// row: the widths, `none` for the empty list), nothing (null) where the row's default is empty (the library decides by the
/// data), or the text itself (a name); a bad value names the control in the page's words.
function fieldValue(el, text) {
  // A yes-or-no setting: its box.
  if (el.type === "checkbox") return el.checked;
  const path = el.dataset.field;
  const row = rowOf(path);
  const what = controlName(el);
  const v = String(text ?? "").trim();
  // Empty, or the control's own word for it ("auto" workers), where the library decides.
  const decided = v === "" || (v === el.defaultValue && !/\d/.test(v));
  if (decided && row?.fields.find((f) => f.path === path)?.default === "") return null;
  if (!row?.range) return v;
  if (Array.isArray(valueAt(state.defaults, path))) {
    // A list that may be empty has its word for none (the widths' `none`: a linear model).
    if (row.empty_list && v === row.empty_list) return [];
    return v.split(",").map((w) => integer(w.trim(), what));
  }
  return row.range.integer ? integer(v, what) : number(v, what);
}

/// A list setting's value as a control shows it, as the CLI writes it: comma-separated, or its
/// row's word for none (`none`: no hidden layer).
function listText(path, list) {
  return list.length === 0 && rowOf(path)?.empty_list ? rowOf(path).empty_list : list.join(",");
}

/// The fields under `prefix` (`data.source.`) of every control that applies (one not in a hidden
/// box: the synthetic knobs show for synthetic data, the logs' for simulated logs), set on
/// `target` from the form's values `v`, the prefix taken off.
function fillFields(target, prefix, v) {
  for (const el of fieldControls()) {
    const path = el.dataset.field;
    if (!path.startsWith(prefix) || el.closest("[hidden]")) continue;
    setAt(target, path.slice(prefix.length), fieldValue(el, v[el.name]));
  }
}

/// The setup's data source (crate/setup.rs, `DataSource`) from the form.
export function dataSource(v) {
  if (v.source === "mq2008") return "mq2008";
  if (v.source === "mq2008-folds") return "mq2008_folds";
  const opened = baseSetup().data.source;
  if (v.source === "upload") return { files: uploadedFiles(opened.files) };
  const base = opened.synthetic ?? state.defaults.data.source.synthetic;
  const source = { synthetic: structuredClone(base) };
  fillFields(source, "data.source.", v);
  return source;
}

/// The files of a setup (crate/setup.rs, `DataSource::Files`, and the objectives' files) from the
/// uploads by name: each split's upload and the `.query` file paired with it; a split without an
/// upload keeps what the opened setup (`opened`, its files) names, its `.query` file included.
function uploadedFiles(opened = {}) {
  const files = {};
  for (const role of ["train", "valid", "test"]) {
    const upload = state.uploads.find((u) => u.role === role);
    const query = opened[`${role}_query`];
    // The opened setup's file uploaded without the `.query` file it names: its groups would
    // come from the file's own qids without a word.
    const openedName = String(opened[role] ?? "").split(/[\\/]/).pop();
    if (upload && upload.name === openedName && query && !upload.query) {
      throw new Error(`${query}: the opened setup names it as ${upload.name}'s .query file, and it was not uploaded: upload the two together`);
    }
    files[role] = upload ? upload.name : opened[role] ?? null;
    files[`${role}_query`] = upload ? upload.query?.name ?? null : query ?? null;
  }
  files.train ??= "train.txt";
  return files;
}

/// The privileged split (`data.privileged`) from its two controls: the kind and its k or columns.
function privilegedSpec(v) {
  if (v.privileged_kind === "top") {
    // A count (top:12) or a share of the informative features (top:30%).
    const k = String(v.privileged_value).trim();
    if (!/^\d+(\.\d+)?%$|^\d+$/.test(k)) throw new Error(`k: expected a count such as 12 or a share such as 30%, got '${k}'`);
    return `top:${k}`;
  }
  if (v.privileged_kind === "cols") return `cols:${v.privileged_value}`;
  if (v.privileged_kind === "generator" && v.source !== "synthetic") {
    throw new Error("real data have no generator: choose top k, columns or simulated logs for the privileged features");
  }
  return v.privileged_kind === "logs" ? "logs" : null;
}

/// The setup of a comparison (crate/setup.rs, `Setup`): the base setup with the form's values on
/// top, each control read into the field its `data-field` names. `backend`: "webgpu", "cpu" or
/// "auto".
export function compareSetup(v, backend) {
  if (!state.defaults) throw new Error("the engine is still starting");
  const setup = structuredClone(baseSetup());
  setup.data.source = dataSource(v);
  setup.data.privileged = privilegedSpec(v);
  fillFields(setup.data.logs, "data.logs.", v);
  for (const el of fieldControls()) {
    const path = el.dataset.field;
    if (path.startsWith("data.source.") || path.startsWith("data.logs.")) continue;
    setAt(setup, path, fieldValue(el, v[el.name]));
  }
  setTeacher(setup);
  setOutside(setup, "reference", state.reference);
  if (v.methods.length === 0) throw new Error("choose at least one method");
  setup.methods = v.methods;
  setup.backend = backend === "webgpu" ? "gpu" : backend;
  setup.objectives = objectivesSection(setup.backend);
  setup.note = PAGE_NOTE;
  return setup;
}

/// The objectives' form's controls of targets, by the objective they qualify.
const TARGETS = { "recall-at-precision": "obj_rap", "precision-at-recall": "obj_par", "tpr-at-fpr": "obj_taf", "f-beta": "obj_beta" };

/// The global objectives' section of the setup (crate/setup.rs, `ObjectivesSetup`): the base
/// setup's, with the objectives' form on top (its data: the synthetic task, or the uploads by
/// name, else the opened setup's names) and `backend` ("gpu", "cpu" or "auto").
export function objectivesSection(backend) {
  const objectivesForm = $("objectives-setup");
  const f = new FormData(objectivesForm);
  const section = structuredClone(baseSetup().objectives ?? state.defaults.objectives);
  // A box without a target keeps the opened setup's own form of it (auc-pr:10's anchors).
  const kept = section.objectives.map(String);
  section.objectives = f.getAll("objective").map((o) => TARGETS[o]
    ? `${o}:${number(f.get(TARGETS[o]), objectivesForm.elements[TARGETS[o]].closest("label").textContent.trim())}`
    : kept.find((k) => k.split(":")[0] === o) ?? o);
  if (section.objectives.length === 0) throw new Error("choose at least one objective");
  if (f.get("obj_source") === "synthetic") {
    section.data = { synthetic: section.data.synthetic ?? state.defaults.objectives.data.synthetic };
  } else {
    const opened = section.data.files ?? {};
    section.data = { files: { ...uploadedFiles(opened), threshold: opened.threshold ?? 1 } };
  }
  const setup = { objectives: section };
  for (const el of objectivesForm.querySelectorAll("[data-field]")) {
    const path = el.dataset.field;
    // A field of the data source not chosen (the files' threshold for the synthetic task).
    if (valueAt(setup, path.split(".").slice(0, -1).join(".")) == null) continue;
    setAt(setup, path, fieldValue(el, el.value));
  }
  section.backend = backend;
  return section;
}

/// A teacher file's split, by its name, as the data files' (`planUploads`): 0 train, 1 valid, 2 test.
export function teacherRole(name) {
  return /test/i.test(name) ? 2 : /vali/i.test(name) ? 1 : 0;
}

/// The teacher trained elsewhere (`data.teacher`) from its uploaded files: a model by its name,
/// or scores files as TRAIN,VALID,TEST by their names. Without uploads, the names the base setup
/// gives (an opened setup's), which the engine asks to have uploaded.
function setTeacher(setup) {
  setOutside(setup, "teacher", state.teacher);
}

/// A model trained elsewhere (`data.teacher`, or `data.reference`: `role`) from its uploaded
/// `files`: a model by its name, or scores files as TRAIN,VALID,TEST by their names.
function setOutside(setup, role, files = []) {
  if (!files.length) return;
  const outside = (setup.data[role] ??= {});
  const models = files.filter((f) => f.kind === "model");
  if (models.length > 1 || (models.length && models.length < files.length)) {
    throw new Error(`the ${role}'s files: one model, or scores files, not ${files.map((f) => f.name).join(" and ")}`);
  }
  if (models.length) {
    outside.model = models[0].name;
    outside.scores = null;
    return;
  }
  const list = ["", "", ""];
  for (const f of files) {
    const split = teacherRole(f.name);
    if (list[split]) throw new Error(`the ${role}'s scores: ${list[split]} and ${f.name} are both for the ${["training", "validation", "test"][split]} file`);
    list[split] = f.name;
  }
  outside.model = null;
  outside.scores = list.join(",").replace(/,+$/, "");
}

/// The objectives' form's values from the setup's section `o`, put in `values`; returns the
/// objectives to check. Throws where the form cannot show the section.
function objectivesValues(o, values) {
  if (o.data.mq2008 !== undefined) {
    throw new Error("the page's global objectives run on the synthetic task or the uploaded files, not the bundled MQ2008 (objectives.data.mq2008); run it with distillrank objectives --setup");
  }
  values.obj_source = o.data.files ? "upload" : "synthetic";
  for (const el of $("objectives-setup").querySelectorAll("[data-field]")) {
    const v = valueAt({ objectives: o }, el.dataset.field);
    if (v != null) values[el.name] = Array.isArray(v) ? listText(el.dataset.field, v) : String(v);
  }
  const checked = new Set();
  for (const name of o.objectives.map(String)) {
    const [kind, target] = name.split(":");
    if (checked.has(kind)) throw new Error(`the page's objectives' form shows one ${kind}, and the setup has more (objectives.objectives: ${o.objectives.join(", ")}); run it with distillrank objectives --setup`);
    checked.add(kind);
    if (TARGETS[kind] && target !== undefined) values[TARGETS[kind]] = target;
  }
  return checked;
}

/// The form's fields from a whole setup (one the CLI wrote or the page exported, as the library
/// read it): every control from the field its `data-field` names, the data source and the
/// privileged split from theirs; throws, leaving the form as it was, when the form cannot show
/// it.
export function formFromSetup(setup) {
  const d = setup.data;
  const values = {};
  const source = d.source;
  if (source === "mq2008") values.source = "mq2008";
  else if (source === "mq2008_folds") values.source = "mq2008-folds";
  else if (source.files) values.source = "upload";
  else if (source.synthetic) values.source = "synthetic";
  const p = d.privileged ?? null;
  // Files and MQ2008 without a split take the library's default for files, top 30%.
  if (p === null && values.source === "synthetic") values.privileged_kind = "generator";
  else if (p === null) Object.assign(values, { privileged_kind: "top", privileged_value: "30%" });
  else if (p === "logs") values.privileged_kind = "logs";
  else if (p.startsWith("top:")) Object.assign(values, { privileged_kind: "top", privileged_value: p.slice(4) });
  else if (p.startsWith("cols:")) Object.assign(values, { privileged_kind: "cols", privileged_value: p.slice(5) });
  else throw new Error(`the page cannot show the privileged split '${p}'; run it with distillrank compare --setup`);
  for (const el of form.querySelectorAll("[data-field]")) {
    const path = el.dataset.field;
    const v = valueAt(setup, path);
    if (path === "methods" || v === undefined) continue;
    // The control's own word where the library decides (tau_target's empty, the workers'
    // auto); lists as the CLI writes them.
    values[el.name] = v === null ? el.defaultValue : Array.isArray(v) ? listText(path, v) : path === "backend" && v === "gpu" ? "webgpu"
      : typeof v === "boolean" ? (v ? el.value : "") : String(v);
  }
  const checked = objectivesValues(setup.objectives ?? state.defaults.objectives, values);
  writeForm(values);
  for (const box of $("objectives-setup").querySelectorAll('input[name="objective"]')) box.checked = checked.has(box.value);
  // A teacher trained elsewhere: its files are uploaded on the page, under the names it gives.
  const named = [d.teacher?.model, d.teacher?.scores].filter((n) => n);
  if (named.length && !(state.teacher ?? []).length) {
    $("teacher-box").open = true;
    $("teacher-stats").textContent = `This setup names a teacher trained elsewhere (${named.join("; ")}): upload its files here before Run.`;
  }
  const reference = [d.reference?.model, d.reference?.scores].filter((n) => n);
  if (reference.length && !(state.reference ?? []).length) {
    $("reference-box").open = true;
    $("reference-stats").textContent = `This setup names a reference model (${reference.join("; ")}): upload its files here before Run.`;
  }
  if (setup.methods) {
    for (const box of form.querySelectorAll('input[name="method"]')) box.checked = setup.methods.includes(box.value);
  }
}
