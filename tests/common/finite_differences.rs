//! Central finite differences, for checking analytic gradients in f64.

/// The step of the central differences.
pub const H: f64 = 1e-6;

/// The gradient of `f` at `x` by central differences, one coordinate at a time.
pub fn numeric_gradient(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let mut x = x.to_vec();
    (0..x.len())
        .map(|i| {
            let keep = x[i];
            x[i] = keep + H;
            let up = f(&x);
            x[i] = keep - H;
            let down = f(&x);
            x[i] = keep;
            (up - down) / (2.0 * H)
        })
        .collect()
}

/// Asserts |analytic - numeric| <= atol + rtol * |numeric| everywhere, reporting the worst index.
pub fn assert_close(analytic: &[f64], numeric: &[f64], atol: f64, rtol: f64, what: &str) {
    assert_eq!(analytic.len(), numeric.len());
    let mut worst = (0.0f64, 0usize);
    let mut failures = 0;
    for (i, (&a, &n)) in analytic.iter().zip(numeric).enumerate() {
        let err = (a - n).abs();
        if err > atol + rtol * n.abs() {
            failures += 1;
        }
        if err > worst.0 {
            worst = (err, i);
        }
    }
    assert!(
        failures == 0,
        "{what}: {failures} of {} entries off; max error {:.3e} at {} (analytic {}, numeric {})",
        analytic.len(),
        worst.0,
        worst.1,
        analytic[worst.1],
        numeric[worst.1]
    );
}
