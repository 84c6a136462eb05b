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

/// `Libm` for one float type, each function the `libm` crate's of that width.
macro_rules! libm_for {
    ($t:ty: $exp:ident, $exp2:ident, $ln:ident, $ln_1p:ident, $log2:ident, $tanh:ident) => {
        impl Libm for $t {
            fn exp(x: $t) -> $t {
                libm::$exp(x)
            }
            fn exp2(x: $t) -> $t {
                libm::$exp2(x)
            }
            fn ln(x: $t) -> $t {
                libm::$ln(x)
            }
            fn ln_1p(x: $t) -> $t {
                libm::$ln_1p(x)
            }
            fn log2(x: $t) -> $t {
                libm::$log2(x)
            }
            fn tanh(x: $t) -> $t {
                libm::$tanh(x)
            }
        }
    };
}
libm_for!(f32: expf, exp2f, logf, log1pf, log2f, tanhf);
libm_for!(f64: exp, exp2, log, log1p, log2, tanh);

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
