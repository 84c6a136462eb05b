//! A clock that works natively and in the browser, for epoch times and throughput.

/// A clock that works natively and in the browser (where it reads `performance.now()`: fractions
/// of a millisecond, in pages and workers alike).
pub struct Instant {
    #[cfg(not(target_arch = "wasm32"))]
    start: std::time::Instant,
    #[cfg(target_arch = "wasm32")]
    start_ms: f64,
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

impl Instant {
    pub fn now() -> Self {
        Instant {
            #[cfg(not(target_arch = "wasm32"))]
            start: std::time::Instant::now(),
            #[cfg(target_arch = "wasm32")]
            start_ms: performance_now(),
        }
    }
    /// Seconds since `now()`.
    pub fn elapsed(&self) -> f64 {
        #[cfg(not(target_arch = "wasm32"))]
        return self.start.elapsed().as_secs_f64();
        #[cfg(target_arch = "wasm32")]
        return (performance_now() - self.start_ms) / 1000.0;
    }
}
