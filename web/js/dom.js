// Small helpers of the page: element lookup, the setup form, number fields, errors and downloads.

export const $ = (id) => document.getElementById(id);
export const form = $("setup");

export const number = (v, what) => {
  const x = Number(v);
  if (v === "" || !Number.isFinite(x)) throw new Error(`${what}: '${v}' is not a number`);
  return x;
};
export const integer = (v, what) => {
  const x = number(v, what);
  if (!Number.isInteger(x) || x < 0) throw new Error(`${what}: '${v}' is not a whole number`);
  return x;
};

/// The first field of form `f` outside the bounds the page sets on it (min, max, step, type), in
/// words that name the field; null when every field is within them. Every button that trains asks
/// it, not only the form's own submit (which the browser checks).
export function formProblem(f) {
  for (const el of f.elements) {
    if (!el.willValidate || el.checkValidity()) continue;
    return `${controlName(el)}: ${el.value} is outside the form's bounds: ${el.validationMessage}`;
  }
  return null;
}

/// A control's name in the page's words: its label's own text, else its name.
export function controlName(el) {
  const label = el.closest("label");
  const words = label
    ? [...label.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(" ")
    : "";
  return words.replace(/\s+/g, " ").trim() || el.name;
}

/// A message of the library's in the page's words: each setup field a control fills
/// (`setup field epochs (--epochs)`) named by that control's label first (`Epochs (most): setup
/// field epochs`), the command line's flag left out.
export function inPageWords(message) {
  return String(message).replace(/setup field ([\w.]+)(?: \(--[\w-]+\))?/g, (all, path) => {
    const el = document.querySelector(`[data-field="${path}"]`);
    return el ? `${controlName(el)}: setup field ${path}` : all;
  });
}

export function showError(text, offerRestart = false) {
  $("error-text").textContent = inPageWords(text);
  $("restart").hidden = !offerRestart;
  $("error").hidden = false;
}

export function clearError() {
  $("error").hidden = true;
}

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function download(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/// The value of the methods' form field `name` (the first of its kind; a radio group's checked
/// value), without reading the whole form.
export function field(name) {
  const el = form.elements[name];
  return el instanceof RadioNodeList ? el.value : el?.value;
}
