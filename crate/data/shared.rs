//! Buffers the page's workers share (`SharedArrayBuffer`): one worker lays data out in one, the
//! others read it without a copy of their own. The prepared splits of a comparison
//! ([`crate::data::prepared_cache::to_shared`]) and the global objectives' examples
//! ([`crate::objectives::data::BinarySplits::to_shared`]) travel this way.

use crate::data::Features;
use crate::error::{Error, Result};

/// A new shared buffer holding what `write` writes (called twice: once to count the bytes, once
/// to copy them in, so nothing is staged in this instance's memory).
pub fn buffer_of(
    what: &str,
    write: impl Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<js_sys::SharedArrayBuffer> {
    use std::io::Write;
    /// Counts bytes: the layout's size, before the buffer is made (in 64 bits: more than 4 GiB
    /// is refused, not wrapped).
    struct Count(u64);
    impl Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    /// Copies bytes into the buffer, one after the other.
    struct Copying(js_sys::Uint8Array, u32);
    impl Write for Copying {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let end = self.1 + bytes.len() as u32;
            self.0.subarray(self.1, end).copy_from(bytes);
            self.1 = end;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let io = |e: std::io::Error| Error::Config(format!("laying out {what}: {e}"));
    let mut count = Count(0);
    write(&mut count).map_err(io)?;
    let bytes = u32::try_from(count.0).map_err(|_| {
        Error::Config(format!(
            "{what} take {} bytes, more than a shared buffer holds (4 GiB)",
            count.0
        ))
    })?;
    let buffer = js_sys::SharedArrayBuffer::new(bytes);
    write(&mut Copying(js_sys::Uint8Array::new(&buffer), 0)).map_err(io)?;
    Ok(buffer)
}

/// A view of a shared buffer: small sections copied out, matrices read in place.
pub struct SharedBytes<'a>(pub &'a js_sys::SharedArrayBuffer);

impl SharedBytes<'_> {
    pub fn len(&self) -> usize {
        self.0.byte_length() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes `range` (inside the buffer), copied into this instance.
    pub fn bytes(&self, range: std::ops::Range<usize>) -> Vec<u8> {
        js_sys::Uint8Array::new_with_byte_offset_and_length(
            self.0,
            range.start as u32,
            range.len() as u32,
        )
        .to_vec()
    }

    /// `len` f32 values from byte `offset` (4-aligned, inside the buffer), read in place.
    pub fn matrix(&self, offset: usize, len: usize) -> Features {
        Features::shared(js_sys::Float32Array::new_with_byte_offset_and_length(
            self.0,
            offset as u32,
            len as u32,
        ))
    }
}
