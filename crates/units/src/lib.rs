//! Durations and byte sizes as people write them, read the same way by every flag, the
//! configuration file, `beeline bench` and the command-line client.
//!
//! - A duration is one or more numbers each with a unit, `ms`, `s`, `m` (or `min`), `h`, `d`:
//!   `500ms`, `30s`, `1.5s`, `1m30s`. A bare number is refused: `5` could mean seconds or
//!   milliseconds, and guessing wrong is a thousandfold error.
//! - A size is a number of bytes, or a number with a unit: `B`, `KB`/`kB`, `MB`, `GB` (powers of
//!   1000), `KiB`, `MiB`, `GiB` (powers of 1024): `4096`, `256MiB`, `1.5GB`.

use std::time::Duration;

/// The forms [`parse_duration`] reads, for error messages.
pub const DURATION_FORMS: &str =
    "a number with a unit: ms, s, m, h, d (e.g. 500ms, 30s, 5m, 1m30s)";

/// The forms [`parse_size`] reads, for error messages.
pub const SIZE_FORMS: &str =
    "a number of bytes, or a number with a unit: B, KB, MB, GB, KiB, MiB, GiB (e.g. 256MiB)";

/// Reads a duration: `500ms`, `30s`, `1.5s`, `5m`, `2h`, `1d`, `1m30s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let refuse = || format!("'{trimmed}' is not a duration; expected {DURATION_FORMS}");
    if trimmed.is_empty() {
        return Err(refuse());
    }
    let mut total = Duration::ZERO;
    let mut rest = trimmed;
    while !rest.is_empty() {
        let (number, after) = split_number(rest);
        if number.is_empty() {
            return Err(refuse());
        }
        let value: f64 = number.parse().map_err(|_| refuse())?;
        let unit_len = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let unit_seconds = match &after[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3_600.0,
            "d" => 86_400.0,
            "" => {
                return Err(format!(
                    "'{trimmed}' has no unit; expected {DURATION_FORMS}"
                ));
            }
            unit => {
                return Err(format!(
                    "'{trimmed}' has an unknown unit '{unit}'; expected {DURATION_FORMS}"
                ));
            }
        };
        let part = Duration::try_from_secs_f64(value * unit_seconds).map_err(|_| refuse())?;
        total = total
            .checked_add(part)
            .ok_or_else(|| format!("'{trimmed}' is too long"))?;
        rest = &after[unit_len..];
    }
    Ok(total)
}

/// Reads a byte size: `4096`, `512B`, `1KB` (1000), `1KiB` (1024), `256MiB`, `1.5GB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (number, unit) = split_number(trimmed);
    if number.is_empty() {
        return Err(format!("'{trimmed}' is not a size; expected {SIZE_FORMS}"));
    }
    let factor: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "'{trimmed}' has an unknown unit '{other}'; expected {SIZE_FORMS}"
            ));
        }
    };
    if let Ok(whole) = number.parse::<u64>() {
        return whole
            .checked_mul(factor)
            .ok_or_else(|| format!("'{trimmed}' is too large"));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{trimmed}' is not a size; expected {SIZE_FORMS}"))?;
    let bytes = (value * factor as f64).round();
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("'{trimmed}' is too large"));
    }
    Ok(bytes as u64)
}

/// Splits `text` after its leading digits and dots.
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration(" 5m "), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3_600)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1_500)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn durations_refused_say_why() {
        assert!(parse_duration("5").unwrap_err().contains("has no unit"));
        assert!(
            parse_duration("5x")
                .unwrap_err()
                .contains("unknown unit 'x'")
        );
        for bad in ["", "s", "ms", "-1s", "1..5s", "1s5", "1e400s"] {
            let error = parse_duration(bad).unwrap_err();
            assert!(error.contains("ms, s, m, h"), "{bad}: {error}");
        }
        assert!(parse_duration("99999999999999999999d").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4_096));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size("1KB"), Ok(1_000));
        assert_eq!(parse_size("1kB"), Ok(1_000));
        assert_eq!(parse_size("1KiB"), Ok(1_024));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("2 GiB"), Ok(2 << 30));
    }

    #[test]
    fn sizes_refused_say_why() {
        assert!(parse_size("1mb").unwrap_err().contains("unknown unit 'mb'"));
        assert!(parse_size("").unwrap_err().contains("KiB"));
        assert!(parse_size("-1").unwrap_err().contains("KiB"));
        assert!(parse_size("1.2.3MB").unwrap_err().contains("KiB"));
        assert!(
            parse_size("99999999999GiB")
                .unwrap_err()
                .contains("too large")
        );
        assert!(parse_size("1e30GiB").is_err());
    }
}
