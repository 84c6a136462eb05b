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

/// Sets fields of the methods' form by name.
export function writeForm(values) {
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
export function urlForms() {
  return [form, $("objectives-setup")];
}

export function saveToUrl() {
  // Until the table of settings has filled the form, its controls are empty: nothing to keep.
  if (!state.settings) return;
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
      if (!el.name || el.type === "file" || !p.has(el.name)) continue;
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
        el.value = v;
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
  $("mq2008-box").hidden = source !== "mq2008";
  $("logs-knobs").hidden = privileged_kind !== "logs";
  const label = (name) => form.elements[name].closest("label");
  label("privileged_value").hidden = !["top", "cols"].includes(privileged_kind);
  label("tau_target").hidden = privileged_kind === "logs" || labels === "grades";
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
/// row: the widths), nothing (null) where the row's default is empty (the library decides by the
/// data), or the text itself (a name); a bad value names the control in the page's words.
function fieldValue(el, text) {
  const path = el.dataset.field;
  const row = rowOf(path);
  const what = controlName(el);
  const v = String(text ?? "").trim();
  if (v === "" && row?.fields.find((f) => f.path === path)?.default === "") return null;
  if (!row?.range) return v;
  if (row.range.integer && el.type === "text") return v.split(",").map((w) => integer(w.trim(), what));
  return row.range.integer ? integer(v, what) : number(v, what);
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
  const opened = baseSetup().data.source;
  if (v.source === "upload") {
    // The uploads' names; without uploads, those of the opened setup.
    const name = (role) => state.uploads.find((u) => u.role === role)?.name ?? opened.files?.[role] ?? null;
    return { files: { train: name("train") ?? "train.txt", valid: name("valid"), test: name("test") } };
  }
  const base = opened.synthetic ?? state.defaults.data.source.synthetic;
  const source = { synthetic: structuredClone(base) };
  fillFields(source, "data.source.", v);
  return source;
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
  if (v.methods.length === 0) throw new Error("choose at least one method");
  setup.methods = v.methods;
  setup.backend = backend === "webgpu" ? "gpu" : backend;
  setup.note = PAGE_NOTE;
  return setup;
}

/// A teacher file's split, by its name, as the data files' (`planUploads`): 0 train, 1 valid, 2 test.
export function teacherRole(name) {
  return /test/i.test(name) ? 2 : /vali/i.test(name) ? 1 : 0;
}

/// The teacher trained elsewhere (`data.teacher`) from its uploaded files: a model by its name,
/// or scores files as TRAIN,VALID,TEST by their names. Without uploads, the names the base setup
/// gives (an opened setup's), which the engine asks to have uploaded.
function setTeacher(setup) {
  const files = state.teacher ?? [];
  if (!files.length) return;
  const teacher = (setup.data.teacher ??= {});
  const models = files.filter((f) => f.kind === "model");
  if (models.length > 1 || (models.length && models.length < files.length)) {
    throw new Error(`the teacher's files: one model, or scores files, not ${files.map((f) => f.name).join(" and ")}`);
  }
  if (models.length) {
    teacher.model = models[0].name;
    teacher.scores = null;
    return;
  }
  const list = ["", "", ""];
  for (const f of files) {
    const role = teacherRole(f.name);
    if (list[role]) throw new Error(`the teacher's scores: ${list[role]} and ${f.name} are both for the ${["training", "validation", "test"][role]} file`);
    list[role] = f.name;
  }
  teacher.model = null;
  teacher.scores = list.join(",").replace(/,+$/, "");
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
    // Empty where the library decides by the data (tau_target's null); lists as the CLI writes them.
    values[el.name] = v === null ? "" : Array.isArray(v) ? v.join(",") : path === "backend" && v === "gpu" ? "webgpu" : String(v);
  }
  writeForm(values);
  // A teacher trained elsewhere: its files are uploaded on the page, under the names it gives.
  const named = [d.teacher?.model, d.teacher?.scores].filter((n) => n);
  if (named.length && !(state.teacher ?? []).length) {
    $("teacher-box").open = true;
    $("teacher-stats").textContent = `This setup names a teacher trained elsewhere (${named.join("; ")}): upload its files here before Run.`;
  }
  if (setup.methods) {
    for (const box of form.querySelectorAll('input[name="method"]')) box.checked = setup.methods.includes(box.value);
  }
}
