//! Memory, checked before it is allocated: what the machine can still give, whether a need fits
//! in it, and sizes in words. Every floor may use it: the data's generators, the models and the
//! applications each refuse a size here before allocating it, with a message that names the size.

/// Memory this machine can still give (Linux: MemAvailable), if known.
pub fn available_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Refuses, before anything is allocated, `what` when it needs `bytes` and the machine has less
/// memory available (or, where that is unknown, more than one allocation can hold); the message
/// ends with `advice`.
pub fn check_fits(bytes: u128, what: &str, advice: &str) -> crate::error::Result<()> {
    let available = available_memory();
    let limit = available.map_or(isize::MAX as u128, |a| a as u128);
    if bytes <= limit {
        return Ok(());
    }
    Err(crate::error::Error::Config(format!(
        "{what} need up to {} in memory, and {}; {advice}",
        human_bytes(bytes),
        match available {
            Some(a) => format!("this machine has {} available", human_bytes(a as u128)),
            None => format!("one allocation here holds at most {}", human_bytes(limit)),
        }
    )))
}

/// `48.0 GB`.
pub fn human_bytes(bytes: u128) -> String {
    let units = ["bytes", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}
