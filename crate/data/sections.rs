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
