//! A feature matrix: owned, or a section of a memory-mapped file used in place (a dataset's in
//! the binary cache, [`crate::data::cache`]; a prepared split's x and z in the prepared-splits
//! file, [`crate::data::prepared_cache`]).
//!
//! Either way it reads as a `&[f32]`. Preparation, which turns the matrix into a model's inputs,
//! may give back the memory of rows it has consumed ([`Features::release`]), so that a
//! full-size file and its prepared splits are never in memory whole at the same time.

use std::ops::{Deref, Range};

/// `n_docs x n_features` values, row-major.
#[derive(Clone)]
pub struct Features(Storage);

#[derive(Clone)]
enum Storage {
    Owned(Vec<f32>),
    /// `len` values from byte `offset` of a read-only map (shared by clones: no copy).
    #[cfg(not(target_arch = "wasm32"))]
    Mapped {
        map: std::sync::Arc<memmap2::Mmap>,
        offset: usize,
        len: usize,
    },
}

impl Features {
    /// `len` f32 values from byte `offset` of `map`, used in place. `offset` must be 4-aligned
    /// within the map (which is page-aligned) and the values must lie inside it.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn mapped(map: std::sync::Arc<memmap2::Mmap>, offset: usize, len: usize) -> Features {
        assert!(offset.is_multiple_of(4) && offset + 4 * len <= map.len());
        Features(Storage::Mapped { map, offset, len })
    }

    /// Whether the values are read in place from a mapped file.
    pub fn is_mapped(&self) -> bool {
        !matches!(self.0, Storage::Owned(_))
    }

    /// The values as an owned vector, to change them; a mapped matrix is copied first.
    pub fn to_mut(&mut self) -> &mut Vec<f32> {
        if self.is_mapped() {
            self.0 = Storage::Owned(self.to_vec());
        }
        match &mut self.0 {
            Storage::Owned(v) => v,
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Mapped { .. } => unreachable!("copied above"),
        }
    }

    /// The values as an owned vector (a mapped matrix is copied).
    pub fn into_vec(self) -> Vec<f32> {
        match self.0 {
            Storage::Owned(v) => v,
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Mapped { .. } => self.to_vec(),
        }
    }

    /// Gives the memory behind `values` (a range of indices) back to the system, for values that
    /// will not be read again: afterwards they read as 0 (owned) or as the file's (mapped), and
    /// resident memory falls by their whole pages. A no-op where that is not possible.
    pub fn release(&mut self, values: Range<usize>) {
        let slice = &self[values];
        #[cfg(unix)]
        {
            const PAGE: usize = 4096;
            let (start, end) = (
                slice.as_ptr() as usize,
                slice.as_ptr() as usize + std::mem::size_of_val(slice),
            );
            let (first, last) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
            if last > first {
                // SAFETY: [first, last) lies inside memory this matrix owns or maps, which we hold
                // by `&mut self`, so no reference into it is alive. MADV_DONTNEED leaves the range
                // mapped and readable: a private anonymous page reads back as zeros, a file page
                // as the file's bytes. Either is a valid f32, and the caller reads neither.
                unsafe {
                    libc::madvise(
                        first as *mut libc::c_void,
                        last - first,
                        libc::MADV_DONTNEED,
                    );
                }
            }
        }
        #[cfg(not(unix))]
        let _ = slice;
    }
}

impl Deref for Features {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        match &self.0 {
            Storage::Owned(v) => v,
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Mapped { map, offset, len } => {
                bytemuck::cast_slice(&map[*offset..*offset + 4 * len])
            }
        }
    }
}

impl From<Vec<f32>> for Features {
    fn from(values: Vec<f32>) -> Features {
        Features(Storage::Owned(values))
    }
}

impl FromIterator<f32> for Features {
    fn from_iter<I: IntoIterator<Item = f32>>(values: I) -> Features {
        values.into_iter().collect::<Vec<f32>>().into()
    }
}

impl Default for Features {
    fn default() -> Features {
        Vec::new().into()
    }
}

impl PartialEq for Features {
    fn eq(&self, other: &Features) -> bool {
        **self == **other
    }
}

impl PartialEq<Vec<f32>> for Features {
    fn eq(&self, other: &Vec<f32>) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Features {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "owned" };
        write!(f, "Features({kind}, {} values)", self.len())
    }
}
