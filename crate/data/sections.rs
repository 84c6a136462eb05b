//! The section layout shared by the binary cache ([`crate::data::cache`]) and the prepared
//! splits ([`crate::data::prepared_cache`]): sections one after the other, each after the first
//! few starting on an [`ALIGN`] boundary, so that a map of the bytes can use a matrix in place.

/// Sections start on multiples of this many bytes (a cache line; a multiple of every element's
/// size).
pub const ALIGN: usize = 64;

/// `n` rounded up to a multiple of [`ALIGN`].
pub fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Writes `sections` one after the other, each after the first `packed` ones starting on an
/// [`ALIGN`] boundary (zeros between), so that a map of the file can use them in place.
pub fn write_sections<'a>(
    out: &mut dyn std::io::Write,
    sections: impl IntoIterator<Item = &'a [u8]>,
    packed: usize,
) -> std::io::Result<()> {
    let mut written = 0;
    for (k, section) in sections.into_iter().enumerate() {
        if k >= packed {
            out.write_all(&[0u8; ALIGN][..align(written) - written])?;
            written = align(written);
        }
        out.write_all(section)?;
        written += section.len();
    }
    Ok(())
}

/// A writer that keeps only the CRC-32 of what it is given after its first `skip` bytes: the
/// checksum of a layout's body, computed by writing the layout once without a file.
struct Checksum {
    skip: usize,
    hasher: crc32fast::Hasher,
}

impl std::io::Write for Checksum {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let skipped = self.skip.min(bytes.len());
        self.skip -= skipped;
        self.hasher.update(&bytes[skipped..]);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The CRC-32 of the bytes `write` writes after the first `header` bytes: a layout's body as it
/// will be on disk, padding included, before the header that records it is written.
pub fn body_checksum(
    header: usize,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> u32 {
    let mut sink = Checksum {
        skip: header,
        hasher: crc32fast::Hasher::new(),
    };
    write(&mut sink).expect("a checksum's writer does not fail");
    sink.hasher.finalize()
}

/// Checks that the bytes of `path` after its first `header` bytes have the CRC-32 `expected`,
/// read a piece at a time (not mapped, so that the check leaves no pages resident): a file
/// changed since it was written, or damaged, is refused with the reason.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_body(
    path: &std::path::Path,
    header: u64,
    expected: u32,
) -> std::result::Result<(), String> {
    use std::io::{Read, Seek};
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    file.seek(std::io::SeekFrom::Start(header))
        .map_err(|e| e.to_string())?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    let found = hasher.finalize();
    if found == expected {
        return Ok(());
    }
    Err(format!(
        "its contents do not match the checksum written with them (CRC-32 {found:08x}, written {expected:08x}): it changed or was damaged after it was written"
    ))
}
