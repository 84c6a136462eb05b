//! A clock that works natively and in the browser, for epoch times and throughput.

/// A clock that works natively and in the browser (where it reads `Date.now()`, in milliseconds).
pub struct Instant {
    #[cfg(not(target_arch = "wasm32"))]
    start: std::time::Instant,
    #[cfg(target_arch = "wasm32")]
    start_ms: f64,
}

impl Instant {
    pub fn now() -> Self {
        Instant {
            #[cfg(not(target_arch = "wasm32"))]
            start: std::time::Instant::now(),
            #[cfg(target_arch = "wasm32")]
            start_ms: js_sys::Date::now(),
        }
    }
    /// Seconds since `now()`.
    pub fn elapsed(&self) -> f64 {
        #[cfg(not(target_arch = "wasm32"))]
        return self.start.elapsed().as_secs_f64();
        #[cfg(target_arch = "wasm32")]
        return (js_sys::Date::now() - self.start_ms) / 1000.0;
    }
}
