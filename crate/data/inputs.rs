//! The input matrix a model sees, as a view over a prepared split: the regular features x, the
//! privileged features z, both side by side (the PFD teacher) or x beside some of z (each teacher
//! of multi-teacher PFD). Nothing is copied whole: rows are assembled when a batch or a chunk to
//! score is, so every model of a comparison reads the same two matrices, wherever they lie (in
//! memory, mapped from a file, or in a buffer the page's workers share).

use std::ops::Range;

use crate::data::prepare::{FeatureView, RankingSet};
use crate::data::Features;

/// `n_rows x width` inputs: the chosen columns of up to two row-major matrices, side by side,
/// at all their rows or at chosen ones.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    n_rows: usize,
    left: Block<'a>,
    /// Empty (width 0) for a view of one matrix.
    right: Block<'a>,
    /// Row i of the view is row `rows[i]` of the matrices; all rows, in order, when `None`.
    rows: Option<&'a [usize]>,
    /// The query groups of the view's rows as offsets (group g is rows `groups[g]..groups[g +
    /// 1]`), for a model that scores whole queries (the listwise family); `None`: unknown, and
    /// such a model takes all the rows as one query's list.
    groups: Option<&'a [usize]>,
}

/// Columns of one `n_rows x width` matrix: all of them, or a list of 0-based indices.
#[derive(Debug, Clone, Copy)]
struct Block<'a> {
    matrix: Matrix<'a>,
    width: usize,
    columns: Option<&'a [usize]>,
}

/// Where a block's values lie: a slice, or a prepared split's [`Features`] (which may lie
/// outside this instance's memory, and are then read a range at a time).
#[derive(Debug, Clone, Copy)]
enum Matrix<'a> {
    Slice(&'a [f32]),
    Features(&'a Features),
}

impl<'a> Matrix<'a> {
    fn of(features: &'a Features) -> Matrix<'a> {
        match features.in_memory() {
            Some(values) => Matrix::Slice(values),
            None => Matrix::Features(features),
        }
    }

    /// Appends `values[range]` to `out`.
    fn extend(&self, range: Range<usize>, out: &mut Vec<f32>) {
        match self {
            Matrix::Slice(values) => out.extend_from_slice(&values[range]),
            Matrix::Features(features) => features.extend_from(range, out),
        }
    }
}

impl<'a> Block<'a> {
    fn empty() -> Block<'a> {
        Block {
            matrix: Matrix::Slice(&[]),
            width: 0,
            columns: None,
        }
    }

    fn taken(&self) -> usize {
        self.columns.map_or(self.width, <[usize]>::len)
    }

    fn append_row(&self, row: usize, out: &mut Vec<f32>) {
        let values = row * self.width..(row + 1) * self.width;
        match (self.columns, self.matrix) {
            (None, matrix) => matrix.extend(values, out),
            (Some(columns), Matrix::Slice(matrix)) => {
                let values = &matrix[values];
                out.extend(columns.iter().map(|&j| values[j]));
            }
            (Some(columns), matrix) => {
                // The whole row, then its chosen columns moved to its front: in place when the
                // columns are in increasing order (each value is read before it is written, as
                // for multi-teacher PFD's subsets), through a copy of the row otherwise.
                let at = out.len();
                matrix.extend(values, out);
                if columns.windows(2).all(|w| w[0] < w[1]) {
                    for (k, &j) in columns.iter().enumerate() {
                        out[at + k] = out[at + j];
                    }
                    out.truncate(at + columns.len());
                } else {
                    let row = out.split_off(at);
                    out.extend(columns.iter().map(|&j| row[j]));
                }
            }
        }
    }
}

impl<'a> Inputs<'a> {
    /// A whole row-major matrix of `n_rows` rows.
    pub fn dense(matrix: &'a [f32], n_rows: usize) -> Inputs<'a> {
        let width = matrix.len().checked_div(n_rows).unwrap_or(0);
        Inputs {
            n_rows,
            left: Block {
                matrix: Matrix::Slice(matrix),
                width,
                columns: None,
            },
            right: Block::empty(),
            rows: None,
            groups: None,
        }
    }

    /// The same view with its rows grouped into queries by `offsets` (first 0, last
    /// `n_rows`).
    pub fn with_groups(self, offsets: &'a [usize]) -> Inputs<'a> {
        debug_assert!(offsets.first() == Some(&0) && offsets.last() == Some(&self.n_rows));
        Inputs {
            groups: Some(offsets),
            ..self
        }
    }

    /// The query groups, when known.
    pub fn groups(&self) -> Option<&'a [usize]> {
        self.groups
    }

    /// A whole row-major matrix of `n_rows` rows, wherever it lies.
    pub fn of_features(matrix: &'a Features, n_rows: usize) -> Inputs<'a> {
        let width = matrix.len().checked_div(n_rows).unwrap_or(0);
        Inputs {
            n_rows,
            left: Block {
                matrix: Matrix::of(matrix),
                width,
                columns: None,
            },
            right: Block::empty(),
            rows: None,
            groups: None,
        }
    }

    /// What a model with `view` sees of `set`, grouped by its queries.
    pub fn of(set: &'a RankingSet, view: FeatureView) -> Inputs<'a> {
        let n_rows = set.n_docs();
        let x = Block {
            matrix: Matrix::of(&set.regular),
            width: set.d_x,
            columns: None,
        };
        let z = Block {
            matrix: Matrix::of(&set.privileged),
            width: set.d_z,
            columns: None,
        };
        let (left, right) = match view {
            FeatureView::Regular => (x, Block::empty()),
            FeatureView::Privileged => (z, Block::empty()),
            FeatureView::Both => (x, z),
        };
        Inputs {
            n_rows,
            left,
            right,
            rows: None,
            groups: Some(&set.group_offsets),
        }
    }

    /// The same view at rows `rows` (indices into this view's rows, which must be all of its
    /// matrices' rows), without groups.
    pub fn at_rows(self, rows: &'a [usize]) -> Inputs<'a> {
        debug_assert!(self.rows.is_none() && rows.iter().all(|&r| r < self.n_rows));
        Inputs {
            n_rows: rows.len(),
            rows: Some(rows),
            groups: None,
            ..self
        }
    }

    /// x beside the privileged columns `subset` (0-based indices into z) of `set`.
    pub fn with_subset(set: &'a RankingSet, subset: &'a [usize]) -> Inputs<'a> {
        let mut inputs = Inputs::of(set, FeatureView::Both);
        inputs.right.columns = Some(subset);
        inputs
    }

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Columns per row.
    pub fn width(&self) -> usize {
        self.left.taken() + self.right.taken()
    }

    /// Whether the view is one whole matrix: its rows in order, all its columns.
    fn is_whole(&self) -> bool {
        self.rows.is_none() && self.left.columns.is_none() && self.right.taken() == 0
    }

    /// The matrix itself, when the view is one whole matrix in this instance's memory.
    pub fn as_dense(&self) -> Option<&'a [f32]> {
        match self.left.matrix {
            Matrix::Slice(matrix) if self.is_whole() => Some(matrix),
            _ => None,
        }
    }

    /// Appends rows `rows` to `out`, row-major.
    pub fn append_rows(&self, rows: Range<usize>, out: &mut Vec<f32>) {
        if self.is_whole() {
            let width = self.left.width;
            self.left
                .matrix
                .extend(rows.start * width..rows.end * width, out);
            return;
        }
        out.reserve(rows.len() * self.width());
        for row in rows {
            let row = self.rows.map_or(row, |chosen| chosen[row]);
            self.left.append_row(row, out);
            self.right.append_row(row, out);
        }
    }

    /// Rows `rows`, row-major: borrowed from a whole matrix, otherwise assembled in `buffer`.
    pub fn rows<'b>(&self, rows: Range<usize>, buffer: &'b mut Vec<f32>) -> &'b [f32]
    where
        'a: 'b,
    {
        if let Some(matrix) = self.as_dense() {
            let width = self.left.width;
            return &matrix[rows.start * width..rows.end * width];
        }
        buffer.clear();
        self.append_rows(rows, buffer);
        buffer
    }

    /// Calls `f` on consecutive chunks of whole query groups, each chunk with its groups'
    /// offsets (from 0): groups are added to a chunk while it stays within `rows_per_chunk`
    /// rows, so a chunk is larger only when one group is. Without groups, the rows are one
    /// group and one chunk.
    pub fn for_each_group_chunk(&self, rows_per_chunk: usize, mut f: impl FnMut(&[f32], &[usize])) {
        let whole = [0, self.n_rows];
        let groups = self.groups.unwrap_or(&whole);
        let mut buffer = Vec::new();
        let mut offsets = Vec::new();
        let mut g = 0;
        while g + 1 < groups.len() {
            let start = groups[g];
            offsets.clear();
            offsets.push(0);
            loop {
                offsets.push(groups[g + 1] - start);
                g += 1;
                if g + 1 == groups.len() || groups[g + 1] - start > rows_per_chunk {
                    break;
                }
            }
            f(self.rows(start..groups[g], &mut buffer), &offsets);
        }
    }

    /// Calls `f` on consecutive chunks of at most `rows_per_chunk` rows, in order.
    pub fn for_each_chunk(&self, rows_per_chunk: usize, mut f: impl FnMut(&[f32])) {
        let mut buffer = Vec::new();
        let mut at = 0;
        while at < self.n_rows {
            let end = (at + rows_per_chunk.max(1)).min(self.n_rows);
            f(self.rows(at..end, &mut buffer));
            at = end;
        }
    }
}
