//! The transcendental functions of every figure the CPU engine computes, from the `libm` crate on
//! every target.
//!
//! Rust's `f32::exp` and its kin call the platform's maths library: glibc's in the native build,
//! the `libm` crate's in WebAssembly. The two differ in the last bit for many arguments, and one
//! bit in a loss or a transformed input moves a whole training run, so that the page's CPU engine
//! and the CLI on the page's own setup would give different figures. Computed here, the two
//! builds do the same arithmetic. `clippy.toml` refuses the platform's versions in the library.

/// The functions, for the types the engines run in.
pub trait Libm: Copy {
    fn exp(x: Self) -> Self;
    fn exp2(x: Self) -> Self;
    fn ln(x: Self) -> Self;
    fn ln_1p(x: Self) -> Self;
    fn log2(x: Self) -> Self;
    fn tanh(x: Self) -> Self;
}

impl Libm for f32 {
    fn exp(x: f32) -> f32 {
        libm::expf(x)
    }
    fn exp2(x: f32) -> f32 {
        libm::exp2f(x)
    }
    fn ln(x: f32) -> f32 {
        libm::logf(x)
    }
    fn ln_1p(x: f32) -> f32 {
        libm::log1pf(x)
    }
    fn log2(x: f32) -> f32 {
        libm::log2f(x)
    }
    fn tanh(x: f32) -> f32 {
        libm::tanhf(x)
    }
}

impl Libm for f64 {
    fn exp(x: f64) -> f64 {
        libm::exp(x)
    }
    fn exp2(x: f64) -> f64 {
        libm::exp2(x)
    }
    fn ln(x: f64) -> f64 {
        libm::log(x)
    }
    fn ln_1p(x: f64) -> f64 {
        libm::log1p(x)
    }
    fn log2(x: f64) -> f64 {
        libm::log2(x)
    }
    fn tanh(x: f64) -> f64 {
        libm::tanh(x)
    }
}

/// e^x.
#[inline]
pub fn exp<T: Libm>(x: T) -> T {
    T::exp(x)
}

/// 2^x.
#[inline]
pub fn exp2<T: Libm>(x: T) -> T {
    T::exp2(x)
}

/// The natural logarithm.
#[inline]
pub fn ln<T: Libm>(x: T) -> T {
    T::ln(x)
}

/// ln(1 + x), exact near 0.
#[inline]
pub fn ln_1p<T: Libm>(x: T) -> T {
    T::ln_1p(x)
}

/// The base-2 logarithm.
#[inline]
pub fn log2<T: Libm>(x: T) -> T {
    T::log2(x)
}

/// The hyperbolic tangent.
#[inline]
pub fn tanh<T: Libm>(x: T) -> T {
    T::tanh(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The functions are the `libm` crate's, bit for bit, in both widths (the WebAssembly build's
    /// `f32::exp` is that crate's too, so this is what makes the two builds agree).
    #[test]
    fn each_function_is_the_libm_crates() {
        for i in -400..400 {
            let x = f64::from(i) / 37.0;
            let y = x as f32;
            assert_eq!(exp(x).to_bits(), libm::exp(x).to_bits());
            assert_eq!(exp(y).to_bits(), libm::expf(y).to_bits());
            assert_eq!(ln_1p(x.abs()).to_bits(), libm::log1p(x.abs()).to_bits());
            assert_eq!(
                ln(y.abs() + 1e-3).to_bits(),
                libm::logf(y.abs() + 1e-3).to_bits()
            );
            assert_eq!(tanh(x).to_bits(), libm::tanh(x).to_bits());
            assert_eq!(exp2(y).to_bits(), libm::exp2f(y).to_bits());
            assert_eq!(
                log2(x.abs() + 1.0).to_bits(),
                libm::log2(x.abs() + 1.0).to_bits()
            );
        }
    }
}
