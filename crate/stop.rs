//! A request to stop, shared between whoever runs a job and the training loop: Python's Ctrl-C,
//! the page's Stop. The loop checks it between steps and ends with [`crate::error::Error::Stopped`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag that any clone can raise; the training loops read it between steps. The default is a
/// fresh flag that nobody else holds.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Asks every loop that holds a clone of this flag to stop at its next step.
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Every flag is the same setting: a stop is not part of what a configuration describes, so two
/// configurations that differ only in their flags are equal.
impl PartialEq for Stop {
    fn eq(&self, _: &Stop) -> bool {
        true
    }
}
