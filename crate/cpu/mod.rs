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

/// The longest inner dimension handed to the gemm crate in one call: the smallest block it
/// splits a longer one into on any machine (`gemm-common`'s `kernel_params` takes at least 512),
/// so a call of this length or less is summed in one block everywhere.
pub const MAX_INNER: usize = 512;

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
    // The gemm crate splits a long inner dimension into blocks sized from the CPU's L1 cache,
    // found at run time, and rounds each block's sum on its own: the same product could round
    // differently on two machines (or natively and in the browser, where no cache is found).
    // Products longer than MAX_INNER go to it in blocks of MAX_INNER, which it never splits.
    if k > MAX_INNER {
        for (j, k0) in (0..k).step_by(MAX_INNER).enumerate() {
            let len = MAX_INNER.min(k - k0);
            let a_block = View {
                data: &a.data[k0 * a.col_stride..],
                cols: len,
                ..a
            };
            let b_block = View {
                data: &b.data[k0 * b.row_stride..],
                rows: len,
                ..b
            };
            matmul(c, a_block, b_block, accumulate || j > 0);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A product longer than MAX_INNER is the sum, in order, of its blocks' products, each
    /// computed in one call: what any machine computes, whatever cache the gemm crate finds.
    /// And it is the product: within f32 rounding of a sum in f64.
    #[test]
    fn a_long_inner_dimension_is_summed_in_fixed_blocks() {
        let (m, k, n) = (7, 2 * MAX_INNER + 77, 5);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 17.0)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 53 % 89) as f32 - 44.0) / 13.0)
            .collect();
        let mut c = vec![0.0f32; m * n];
        matmul(&mut c, View::rows(&a, m, k), View::rows(&b, k, n), false);

        let mut blocks = vec![0.0f32; m * n];
        for k0 in (0..k).step_by(MAX_INNER) {
            let len = MAX_INNER.min(k - k0);
            let a_block: Vec<f32> = (0..m)
                .flat_map(|r| a[r * k + k0..r * k + k0 + len].to_vec())
                .collect();
            let mut part = vec![0.0f32; m * n];
            matmul(
                &mut part,
                View::rows(&a_block, m, len),
                View::rows(&b[k0 * n..(k0 + len) * n], len, n),
                false,
            );
            blocks.iter_mut().zip(&part).for_each(|(s, p)| *s += p);
        }
        assert_eq!(c, blocks);
        for r in 0..m {
            for j in 0..n {
                let exact: f64 = (0..k)
                    .map(|i| a[r * k + i] as f64 * b[i * n + j] as f64)
                    .sum();
                assert!((c[r * n + j] as f64 - exact).abs() < 1e-3 * (1.0 + exact.abs()));
            }
        }
    }
}
