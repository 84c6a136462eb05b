// The setup (crate/setup.rs) from the form and back, and kept in the URL. The setup box (its
// command and differences) is describe.js's.

import { $, form, number, integer } from "./dom.js";
import { state } from "./state.js";

// ---------------------------------------------------------------- the setup, kept in the URL

export const FIELDS = [
  "source", "queries", "valid_queries", "test_queries", "min_docs", "max_docs", "regular", "noise", "query_spread",
  "privileged_strength", "privileged_correlation", "data_seed", "tau_target", "min_group_size", "privileged_kind",
  "privileged_value", "loss", "alpha", "epochs", "patience", "widths", "lr", "batch_docs",
  "seeds", "backend", "workers", "log_sessions", "log_click_model", "log_position_bias", "log_conversion_rate",
  "log_seed",
];

export function readForm() {
  const f = new FormData(form);
  const out = {};
  for (const k of FIELDS) out[k] = f.get(k);
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

export function loadFromUrl() {
  const p = new URLSearchParams(location.hash.slice(1));
  for (const f of urlForms()) {
    for (const el of f.elements) {
      if (!el.name || el.type === "file" || !p.has(el.name)) continue;
      const v = p.get(el.name);
      if (el.type === "checkbox") el.checked = v.split(",").includes(el.value);
      else if (el.type === "radio") el.checked = el.value === v;
      else el.value = v;
    }
  }
  showSourceKnobs();
}

export function showSourceKnobs() {
  const { source, privileged_kind } = readForm();
  $("synthetic-knobs").hidden = source !== "synthetic";
  $("upload-box").hidden = source !== "upload";
  $("mq2008-box").hidden = source !== "mq2008";
  $("logs-knobs").hidden = privileged_kind !== "logs";
}

/// What the JSON of a setup says about where it was made.
export const PAGE_NOTE = "made on the page: its form starts lighter than the CLI's defaults for a browser " +
  "(less data, a smaller model, fewer epochs); the page lists every difference beside the form";

/// The setup the form's values go on top of: the last opened setup, else the library's defaults.
export function baseSetup() {
  return state.base ?? state.defaults;
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
  return {
    synthetic: {
      options: {
        ...base.options,
        queries: integer(v.queries, "training queries"),
        min_docs: integer(v.min_docs, "docs per query, min"),
        max_docs: integer(v.max_docs, "docs per query, max"),
        regular: integer(v.regular, "regular features"),
        noise: number(v.noise, "relevance noise"),
        query_spread: number(v.query_spread, "query spread"),
        privileged_strength: number(v.privileged_strength, "privileged strength"),
        privileged_correlation: number(v.privileged_correlation, "z's correlation with x"),
        seed: integer(v.data_seed, "data seed"),
      },
      valid_queries: integer(v.valid_queries, "validation queries"),
      test_queries: integer(v.test_queries, "test queries"),
    },
  };
}

/// The setup of a comparison (crate/setup.rs, `Setup`): the defaults with the form's values.
/// `backend`: "webgpu", "cpu" or "auto".
export function compareSetup(v, backend) {
  if (!state.defaults) throw new Error("the engine is still starting");
  const widths = String(v.widths).split(",").map((w) => integer(w.trim(), "hidden widths"));
  let privileged = null;
  if (v.privileged_kind === "top") {
    // A count (top:12) or a share of the informative features (top:30%).
    const k = String(v.privileged_value).trim();
    if (!/^\d+(\.\d+)?%$|^\d+$/.test(k)) throw new Error(`k: expected a count such as 12 or a share such as 30%, got '${k}'`);
    privileged = `top:${k}`;
  }
  if (v.privileged_kind === "cols") privileged = `cols:${v.privileged_value}`;
  if (v.privileged_kind === "generator" && v.source !== "synthetic") {
    throw new Error("real data have no generator: choose top k, columns or simulated logs for the privileged features");
  }
  const base = baseSetup();
  let logs = base.data.logs;
  if (v.privileged_kind === "logs") {
    privileged = "logs";
    logs = {
      ...base.data.logs,
      sessions: integer(v.log_sessions, "sessions"),
      click_model: v.log_click_model,
      position_bias: number(v.log_position_bias, "position bias"),
      conversion_rate: number(v.log_conversion_rate, "conversion rate"),
      seed: integer(v.log_seed, "log seed"),
    };
  }
  if (v.methods.length === 0) throw new Error("choose at least one method");
  return {
    ...base,
    data: {
      ...base.data,
      source: dataSource(v),
      privileged,
      logs,
      tau_target: number(v.tau_target, "tau_target"),
      min_group_size: integer(v.min_group_size, "min group size"),
    },
    methods: v.methods,
    loss: v.loss,
    alpha: number(v.alpha, "alpha"),
    epochs: integer(v.epochs, "epochs"),
    patience: integer(v.patience, "patience"),
    widths,
    lr: number(v.lr, "learning rate"),
    batch_docs: integer(v.batch_docs, "batch"),
    seeds: integer(v.seeds, "seeds"),
    backend: backend === "webgpu" ? "gpu" : backend,
    note: PAGE_NOTE,
  };
}

/// The form's fields from a whole setup (one the CLI wrote or the page exported, as the library
/// read it): throws, leaving the form as it was, when the form cannot show it.
export function formFromSetup(setup) {
  const d = setup.data;
  const values = {};
  const source = d.source;
  if (source === "mq2008") values.source = "mq2008";
  else if (source.files) values.source = "upload";
  else if (source.synthetic) {
    const o = source.synthetic.options;
    Object.assign(values, {
      source: "synthetic", queries: o.queries, valid_queries: source.synthetic.valid_queries,
      test_queries: source.synthetic.test_queries, min_docs: o.min_docs, max_docs: o.max_docs,
      regular: o.regular, noise: o.noise, query_spread: o.query_spread,
      privileged_strength: o.privileged_strength, privileged_correlation: o.privileged_correlation, data_seed: o.seed,
    });
  }
  const p = d.privileged ?? null;
  // Files and MQ2008 without a split take the library's default for files, top 30%.
  if (p === null && values.source === "synthetic") values.privileged_kind = "generator";
  else if (p === null) Object.assign(values, { privileged_kind: "top", privileged_value: "30%" });
  else if (p === "logs") {
    values.privileged_kind = "logs";
    const l = d.logs;
    Object.assign(values, {
      log_sessions: l.sessions, log_click_model: l.click_model, log_position_bias: l.position_bias,
      log_conversion_rate: l.conversion_rate, log_seed: l.seed,
    });
  } else if (p.startsWith("top:")) Object.assign(values, { privileged_kind: "top", privileged_value: p.slice(4) });
  else if (p.startsWith("cols:")) Object.assign(values, { privileged_kind: "cols", privileged_value: p.slice(5) });
  else throw new Error(`the page cannot show the privileged split '${p}'; run it with distillrank compare --setup`);
  // The library's tau_target for the kind of data when the setup leaves it out.
  values.tau_target = d.tau_target ?? (values.source === "synthetic" ? 3.5 : 4.8);
  values.min_group_size = d.min_group_size;
  for (const k of ["loss", "alpha", "epochs", "patience", "lr", "batch_docs", "seeds"]) {
    if (setup[k] != null) values[k] = setup[k];
  }
  if (setup.widths) values.widths = setup.widths.join(",");
  if (setup.backend) values.backend = setup.backend === "gpu" ? "webgpu" : setup.backend;
  for (const [k, v] of Object.entries(values)) if (v === undefined) delete values[k];
  writeForm(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)])));
  if (setup.methods) {
    for (const box of form.querySelectorAll('input[name="method"]')) box.checked = setup.methods.includes(box.value);
  }
}
