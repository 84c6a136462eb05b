//! The CPU training engine: the reference every GPU kernel is checked against, and a fast path for
//! machines without a GPU. Generic over [`Real`] so that tests run the same code in f64 for
//! finite-difference gradient checks; training uses f32.
//!
//! Matrix products go through the `gemm` crate (packed, SIMD, rayon-parallel on native). The
//! words it shares with the GPU engine (the model, the losses' names and weights, Adam's
//! settings, the objectives, the step's plan) are the ground floor's, [`crate::model`].

pub mod adam;
pub mod attention;
pub mod classifier;
pub mod loss;
pub mod mlp;
pub mod ranking;

use crate::model::{positive_part, real, Real};

/// Strided view of a matrix: element (r, c) is `data[r * row_stride + c * col_stride]`.
#[derive(Clone, Copy)]
pub struct View<'a, T> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a, T> View<'a, T> {
    /// A row-major `rows x cols` matrix.
    pub fn rows(data: &'a [T], rows: usize, cols: usize) -> Self {
        View {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }
    /// The transpose of a row-major `rows x cols` matrix, seen as `cols x rows`.
    pub fn transposed(data: &'a [T], rows: usize, cols: usize) -> Self {
        View {
            data,
            rows: cols,
            cols: rows,
            row_stride: 1,
            col_stride: cols,
        }
    }
    /// The transpose of this view (its rows as columns).
    pub fn t(self) -> Self {
        View {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }
    fn fits(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride
                < self.data.len()
    }
}

/// `c = a . b` (or `c += a . b` with `accumulate`), `c` row-major `a.rows x b.cols`.
pub fn matmul<T: Real>(c: &mut [T], a: View<T>, b: View<T>, accumulate: bool) {
    assert_eq!(a.cols, b.rows, "matmul: inner dimensions differ");
    assert_eq!(
        c.len(),
        a.rows * b.cols,
        "matmul: output has the wrong size"
    );
    assert!(a.fits() && b.fits(), "matmul: a view reaches past its data");
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            c.iter_mut().for_each(|v| *v = T::zero());
        }
        return;
    }
    // SAFETY: the asserts above bound every index gemm computes from these shapes and strides
    // inside the three slices; `c` is borrowed mutably, so it cannot alias `a` or `b`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.data.as_ptr(),
            a.col_stride as isize,
            a.row_stride as isize,
            b.data.as_ptr(),
            b.col_stride as isize,
            b.row_stride as isize,
            T::one(),
            T::one(),
            false,
            false,
            false,
            parallelism(m * n * k),
        );
    }
}

/// Runs `step` (a training step) on a thread of rayon's pool, handed over once, natively; on
/// this thread when it is one already, and always in the browser (one thread per worker).
///
/// A large product shares its work with the pool. Called from outside the pool, each one wakes the
/// pool and parks the caller until it is done: 14 hand-offs a step for the default model. From a
/// thread of the pool, the product's halves start where they are and the other thread steals its
/// share. Which thread computes a product does not change its result, so neither does this.
pub fn on_pool<R: Send>(step: impl FnOnce() -> R + Send) -> R {
    #[cfg(not(target_arch = "wasm32"))]
    if rayon::current_thread_index().is_none() {
        return rayon::scope(|_| step());
    }
    step()
}

/// Products smaller than this many multiply-adds run on one thread: below it, sharing the work
/// costs more than it saves. Measured from inside the pool ([`on_pool`], where the steps run):
/// `bench train` at 142,700 docs/s with 2^23 (the threshold for products called from outside
/// it), 157,000 with 2^19, 154,000-155,600 with 2^17 and 1 (means of 5 alternated runs).
pub const PARALLEL_MIN_WORK: usize = 1 << 19;

#[cfg(not(target_arch = "wasm32"))]
fn parallelism(work: usize) -> gemm::Parallelism {
    if work >= PARALLEL_MIN_WORK {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    }
}
#[cfg(target_arch = "wasm32")]
fn parallelism(_work: usize) -> gemm::Parallelism {
    gemm::Parallelism::None
}
