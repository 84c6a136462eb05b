// Small helpers of the page: element lookup, the setup form, number fields, errors and downloads.

export const $ = (id) => document.getElementById(id);
export const form = $("setup");

/// A decimal number as the command line reads one (JavaScript's Number() would also read
/// `0x10`, `0b1` and `0o7`, and an empty text as 0).
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
export const number = (v, what) => {
  const text = String(v).trim();
  const x = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(x)) throw new Error(`${what}: '${v}' is not a number`);
  return x;
};
/// A whole number in any decimal notation, as the command line reads one (`1e3`, `1000.0`), that
/// JavaScript holds exactly (a seed past 2^53 - 1 would change on its way: the command line and
/// Python take it).
export const integer = (v, what) => {
  const x = number(v, what);
  const text = String(v).trim();
  if (!Number.isInteger(x) || x < 0) throw new Error(`${what}: '${v}' is not a whole number`);
  if (!Number.isSafeInteger(x)) {
    throw new Error(`${what}: ${text} is past the whole numbers the page holds exactly (up to ${Number.MAX_SAFE_INTEGER}): run it with distillrank compare, or Python, which take any`);
  }
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
    const controls = document.querySelectorAll(`[data-field="${path}"]`);
    if (!controls.length) return all;
    // A list filled by several boxes (the methods) is named by their group, not its first box.
    const name = controls.length > 1
      ? controls[0].closest("fieldset")?.querySelector("legend")?.textContent.trim() ?? path
      : controlName(controls[0]);
    return `${name}: setup field ${path}`;
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
