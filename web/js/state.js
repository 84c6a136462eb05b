// The page's state between events: the uploads, the library's defaults and the last described
// setup. It imports nothing, so that every module may read it without an import circle
// (tests/architecture.rs checks that web/js has none).

export const state = {
  /// [{role, name, file, query}]: the uploaded files, sent again to a restarted worker.
  uploads: [],
  /// The library's default setup (crate/setup.rs, the CLI's defaults), asked of the engine at
  /// start-up: the page's setups are it with the form's values on top.
  defaults: null,
  /// The library's table of settings (crate/settings.rs, `table_json`): the form's bounds,
  /// tooltips and starting values.
  settings: null,
  /// The losses and methods the library offers ({losses, methods}, crate/setup.rs
  /// `choices_json`): the form's choices, their tooltips and the methods' colours.
  choices: null,
  /// The form's setup as the engine last described it: {setup, command, differences}; null when
  /// the form holds no valid setup.
  lastDescribed: null,
  /// The last setup opened (as the library read it): the base of the page's setups instead of
  /// the defaults, so that its settings without a control on the form (teacher_widths, teachers,
  /// first_seed, the generator's kind and privileged count, ...) are kept.
  base: null,
  /// Why the last upload failed (its file and the reader's message), until one succeeds.
  uploadFailure: null,
  /// [{name, kind: "model" | "scores", description}]: the uploaded files of a teacher trained
  /// elsewhere, as the engine read them (`data.teacher`).
  teacher: [],
  /// The same for the reference model (`data.reference`): a row of the comparison.
  reference: [],
};
