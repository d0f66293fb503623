//! Sizes as people write them on command lines: `512MB`, `2g`, `64k`, `1000` (binary units).

/// Parses a size in bytes; the error says what is wrong with it.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[digits.len()..];
    let n: f64 = digits.trim().parse().map_err(|_| format!("`{s}` is not a size (e.g. 512MB)"))?;
    let mult: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (use KB, MB or GB)")),
    };
    if !n.is_finite() || n < 0.0 {
        return Err(format!("`{s}` is not a size (e.g. 512MB)"));
    }
    Ok((n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MB"), Ok(512 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("-1MB").is_err());
    }
}
