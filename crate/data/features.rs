//! A feature matrix: owned, or a section of a memory-mapped file used in place (a dataset's in
//! the binary cache, [`crate::data::cache`]; a prepared split's x and z in the prepared-splits
//! file, [`crate::data::prepared_cache`]).
//!
//! On the page, a prepared split's x and z may also lie outside the wasm instance's memory, in a
//! buffer that every worker of the pool shares ([`Features::shared`]): one copy of an upload's
//! matrices for the whole pool. Models read such a matrix row by row ([`Features::extend_from`],
//! through [`crate::data::inputs::Inputs`]), copying into their batch only the rows they use.
//!
//! Owned and mapped, it reads as a `&[f32]`. Preparation, which turns the matrix into a model's
//! inputs, may give back the memory of rows it has consumed ([`Features::release`]), so that a
//! full-size file and its prepared splits are never in memory whole at the same time.

use std::ops::{Deref, Range};

/// `n_docs x n_features` values, row-major.
#[derive(Clone)]
pub struct Features(Storage);

enum Storage {
    Owned(Vec<f32>),
    /// `len` values from byte `offset` of a read-only map (shared by clones: no copy).
    #[cfg(not(target_arch = "wasm32"))]
    Mapped {
        map: std::sync::Arc<memmap2::Mmap>,
        offset: usize,
        len: usize,
    },
    /// `len` values in the writable map of a scratch file, unlinked once mapped: preparation's
    /// matrices when they should not be bound by memory ([`Features::scratch`]). The system
    /// writes its pages back to the disk and drops them when memory is short.
    #[cfg(not(target_arch = "wasm32"))]
    Scratch {
        map: memmap2::MmapMut,
        len: usize,
        /// The unlinked file, kept to grow it ([`Features::resize`]).
        file: std::fs::File,
    },
    /// Values in a buffer outside this instance's memory (the page's `SharedArrayBuffer`),
    /// read by copying rows out of it. `whole` is a copy of them all, made the first time
    /// something asks for the values as one slice (nothing on the training path does).
    #[cfg(target_arch = "wasm32")]
    Shared {
        values: SharedValues,
        whole: std::sync::Arc<std::sync::OnceLock<Vec<f32>>>,
    },
}

/// A view of the page's shared buffer.
#[cfg(target_arch = "wasm32")]
#[derive(Clone)]
struct SharedValues(js_sys::Float32Array);

// SAFETY: this build of the engine has no threads (wasm32 without the atomics feature: one
// instance, one thread), so a value is never used from two threads at once. The page's other
// workers are other instances, which hold views of their own.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl Send for SharedValues {}
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl Sync for SharedValues {}

/// Makes `file` `bytes` long with the disk space for all of them taken now: a write through its
/// map into space the disk does not have would kill the process (SIGBUS) instead of failing with
/// an error that names the folder, so a full disk is found here.
#[cfg(not(target_arch = "wasm32"))]
fn reserve(file: &std::fs::File, bytes: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let bytes = libc::off_t::try_from(bytes)
            .map_err(|_| std::io::Error::other(format!("{bytes} bytes: too large a file")))?;
        // SAFETY: a call on an open file descriptor this function borrows; it writes no memory.
        match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, bytes) } {
            0 => Ok(()),
            // A file system without it: the size alone (its space is then taken as written).
            libc::EOPNOTSUPP | libc::EINVAL => file.set_len(bytes as u64),
            code => Err(std::io::Error::from_raw_os_error(code)),
        }
    }
    #[cfg(not(unix))]
    file.set_len(bytes)
}

impl Clone for Storage {
    fn clone(&self) -> Storage {
        match self {
            Storage::Owned(v) => Storage::Owned(v.clone()),
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Mapped { map, offset, len } => Storage::Mapped {
                map: map.clone(),
                offset: *offset,
                len: *len,
            },
            // A writable map has one owner: its clone is a copy in memory.
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Scratch { map, len, .. } => {
                Storage::Owned(bytemuck::cast_slice(&map[..4 * len]).to_vec())
            }
            #[cfg(target_arch = "wasm32")]
            Storage::Shared { values, whole } => Storage::Shared {
                values: values.clone(),
                whole: whole.clone(),
            },
        }
    }
}

impl Features {
    /// `len` zeros in a scratch file in `dir` (room for more: see [`resize`](Self::resize)), mapped
    /// and then unlinked (the map keeps it until
    /// it is dropped): a matrix that the system may write to the disk rather than keep in
    /// memory, for data larger than memory.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn scratch(dir: &std::path::Path, len: usize) -> std::io::Result<Features> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        // Room for a page of values at least: a map cannot be empty, and the matrix may grow.
        let capacity = len.max(1024);
        let path = dir.join(format!(
            ".distillrank-scratch-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let map = reserve(&file, 4 * capacity as u64).and_then(|_| {
            // SAFETY: the file was created here and is unlinked below: nothing else maps or
            // writes it.
            unsafe { memmap2::MmapMut::map_mut(&file) }
        });
        let removed = std::fs::remove_file(&path);
        let map = map?;
        removed?;
        Ok(Features(Storage::Scratch { map, len, file }))
    }

    /// Makes the values `len` long, the new ones 0: a scratch file grows (doubling), a vector is
    /// resized.
    pub fn resize(&mut self, len: usize) -> std::io::Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        if let Storage::Scratch {
            map,
            len: kept,
            file,
        } = &mut self.0
        {
            let capacity = map.len() / 4;
            if len > capacity {
                reserve(file, 4 * len.max(2 * capacity) as u64)?;
                // SAFETY: as in `scratch`: this file is this matrix's alone; the old map is
                // dropped as the new one replaces it.
                *map = unsafe { memmap2::MmapMut::map_mut(&*file) }?;
            }
            // Values past the length within the old capacity may hold values cut off before.
            let stale = len.min(capacity);
            if stale > *kept {
                bytemuck::cast_slice_mut::<u8, f32>(&mut map[4 * *kept..4 * stale]).fill(0.0);
            }
            *kept = len;
            return Ok(());
        }
        self.to_mut().resize(len, 0.0);
        Ok(())
    }

    /// The values, to write them in place: a scratch file's map or an owned vector (a mapped or
    /// shared matrix is copied into one first).
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        #[cfg(not(target_arch = "wasm32"))]
        if matches!(self.0, Storage::Scratch { .. }) {
            let Storage::Scratch { map, len, .. } = &mut self.0 else {
                unreachable!("matched above")
            };
            return bytemuck::cast_slice_mut(&mut map[..4 * *len]);
        }
        self.to_mut()
    }

    /// Keeps the first `len` values.
    pub fn truncate(&mut self, len: usize) {
        match &mut self.0 {
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Scratch { len: kept, .. } => *kept = len.min(*kept),
            _ => {
                let values = self.to_mut();
                values.truncate(len);
                values.shrink_to_fit();
            }
        }
    }

    /// `len` f32 values from byte `offset` of `map`, used in place. `offset` must be 4-aligned
    /// within the map (which is page-aligned) and the values must lie inside it.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn mapped(map: std::sync::Arc<memmap2::Mmap>, offset: usize, len: usize) -> Features {
        assert!(offset.is_multiple_of(4) && offset + 4 * len <= map.len());
        Features(Storage::Mapped { map, offset, len })
    }

    /// The values of `values` (a view of a buffer the page's workers share), read in place.
    #[cfg(target_arch = "wasm32")]
    pub fn shared(values: js_sys::Float32Array) -> Features {
        Features(Storage::Shared {
            values: SharedValues(values),
            whole: Default::default(),
        })
    }

    /// Whether the values are read in place from a file written before (mapped) or from a shared
    /// buffer: not this run's own (owned, or in its scratch files).
    pub fn is_mapped(&self) -> bool {
        match self.0 {
            Storage::Owned(_) => false,
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Scratch { .. } => false,
            _ => true,
        }
    }

    /// Whether the values lie outside this instance's memory (a buffer the page's workers
    /// share) and have not been copied into it.
    pub fn is_outside(&self) -> bool {
        match &self.0 {
            #[cfg(target_arch = "wasm32")]
            Storage::Shared { whole, .. } => whole.get().is_none(),
            _ => false,
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        match &self.0 {
            Storage::Owned(v) => v.len(),
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Mapped { len, .. } | Storage::Scratch { len, .. } => *len,
            #[cfg(target_arch = "wasm32")]
            Storage::Shared { values, .. } => values.0.length() as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as one slice where they are in this instance's memory (owned, mapped, or a
    /// shared buffer already copied in); None for a shared buffer read row by row.
    pub fn in_memory(&self) -> Option<&[f32]> {
        (!self.is_outside()).then(|| &**self)
    }

    /// Appends `values[range]` to `out`: a copy out of the shared buffer for a matrix outside
    /// this instance's memory, without copying the rest.
    pub fn extend_from(&self, range: Range<usize>, out: &mut Vec<f32>) {
        #[cfg(target_arch = "wasm32")]
        if let Storage::Shared { values, whole } = &self.0 {
            if whole.get().is_none() {
                assert!(
                    range.start <= range.end && range.end <= self.len(),
                    "rows past the matrix"
                );
                let at = out.len();
                out.resize(at + range.len(), 0.0);
                values
                    .0
                    .subarray(range.start as u32, range.end as u32)
                    .copy_to(&mut out[at..]);
                return;
            }
        }
        out.extend_from_slice(&self[range]);
    }

    /// The values as an owned vector, to change them; any other matrix is copied first.
    pub fn to_mut(&mut self) -> &mut Vec<f32> {
        if !matches!(self.0, Storage::Owned(_)) {
            self.0 = Storage::Owned(self.to_vec());
        }
        match &mut self.0 {
            Storage::Owned(v) => v,
            _ => unreachable!("copied above"),
        }
    }

    /// The values as an owned vector (a mapped or shared matrix is copied).
    pub fn into_vec(self) -> Vec<f32> {
        match self.0 {
            Storage::Owned(v) => v,
            _ => self.to_vec(),
        }
    }

    /// Gives the memory behind `values` (a range of indices) back to the system, for values that
    /// will not be read again: afterwards they read as 0 (owned) or as the file's (mapped), and
    /// resident memory falls by their whole pages. A no-op where that is not possible.
    pub fn release(&mut self, values: Range<usize>) {
        #[cfg(unix)]
        {
            const PAGE: usize = 4096;
            let slice = &self[values];
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
        let _ = values;
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
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Scratch { map, len, .. } => bytemuck::cast_slice(&map[..4 * len]),
            // Correct, but a copy of the whole matrix into this instance: the training path
            // reads rows through `extend_from` instead (the page's e2e test measures it).
            #[cfg(target_arch = "wasm32")]
            Storage::Shared { values, whole } => whole.get_or_init(|| values.0.to_vec()),
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
        let kind = match self.0 {
            Storage::Owned(_) => "owned",
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Mapped { .. } => "mapped",
            #[cfg(not(target_arch = "wasm32"))]
            Storage::Scratch { .. } => "scratch",
            #[cfg(target_arch = "wasm32")]
            Storage::Shared { .. } => "shared",
        };
        write!(f, "Features({kind}, {} values)", self.len())
    }
}

/// Where reading and preparation keep their matrices: in memory, or (for data larger than memory) in scratch
/// files in a folder, mapped ([`Features::scratch`]), whose pages the system writes to the disk
/// and drops when memory is short. The values are the same either way.
#[derive(Debug, Clone, Default)]
pub enum Scratch {
    #[default]
    Memory,
    #[cfg(not(target_arch = "wasm32"))]
    Files(std::path::PathBuf),
}

impl Scratch {
    /// `len` zeros, where this scratch keeps them.
    pub fn zeros(&self, len: usize) -> crate::error::Result<Features> {
        match self {
            Scratch::Memory => Ok(vec![0f32; len].into()),
            #[cfg(not(target_arch = "wasm32"))]
            Scratch::Files(dir) => Features::scratch(dir, len).map_err(|e| {
                crate::error::Error::io(
                    dir,
                    std::io::Error::new(e.kind(), format!("a scratch file for {len} values: {e}")),
                )
            }),
        }
    }
}
