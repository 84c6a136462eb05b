// The form from the library's table of settings (crate/settings.rs): every control marked
// data-field="PATH" (a setup.json field, as the table names it) takes its bounds, its tooltip and
// its starting value from the row that fills PATH, so that the page, the CLI's flags and a
// setup's checks share one range, one help text and one set of defaults. The page starts lighter
// than the CLI where the table says so (a field's `page` value); the setups it sends say that in
// their note.

/// The row and field of the table that fill `path`, or null.
function rowOf(table, path) {
  for (const row of table) {
    const field = row.fields.find((f) => f.path === path);
    if (field) return { row, field };
  }
  return null;
}

/// Applies the table to every [data-field] control of `forms`. A control whose field has no row
/// is a page error, thrown so that it is seen.
export function applySettings(table, forms) {
  for (const form of forms) {
    for (const el of form.querySelectorAll("[data-field]")) {
      const found = rowOf(table, el.dataset.field);
      if (!found) throw new Error(`the form's control ${el.name} names ${el.dataset.field}, which no setting fills`);
      const { row, field } = found;
      const start = field.page ?? field.default;
      const range = row.range;
      // A choice with help of its own (a method's checkbox: choices.js) keeps it.
      el.title = el.dataset.help ?? (range ? `${row.help}. In ${range.text}` : row.help);
      if (el.type === "checkbox") {
        el.checked = start.split(",").includes(el.value);
        continue;
      }
      if (range && el.type === "number") {
        el.step = range.integer ? "1" : "any";
        el.min = String(range.min);
        // Past 2^53 a bound is not an exact number in JavaScript: a seed's range is left open.
        if (Number.isSafeInteger(range.max) || !range.integer) el.max = String(range.max);
      }
      if (start !== "") el.value = start;
    }
  }
}
