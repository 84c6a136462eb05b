// The page's state between events: the uploads, the library's defaults and the last described
// setup. It imports nothing, so that every module may read it without an import circle
// (tests/architecture.rs checks that web/js has none).

export const state = {
  /// [{role, name, file, query}]: the uploaded files, sent again to a restarted worker.
  uploads: [],
  /// The library's default setup (crate/setup.rs, the CLI's defaults), asked of the engine at
  /// start-up: the page's setups are it with the form's values on top.
  defaults: null,
  /// The form's setup as the engine last described it: {setup, command, differences}.
  lastDescribed: null,
};
