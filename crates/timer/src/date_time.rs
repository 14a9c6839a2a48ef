//! `ZonedDateTime.parse` as Zeebe calls it for `timeDate` and for the start of a time cycle:
//! `java.time`'s `ISO_ZONED_DATE_TIME` in its strict mode.
//!
//! The accepted form is `yyyy-MM-ddTHH:mm[:ss[.fffffffff]]` followed by an offset (`Z` or
//! `±HH:MM[:SS]`, required) and optionally a zone id in brackets (`[Europe/Berlin]`). The
//! offset decides the instant; the zone id, when present, decides how the calendar advances
//! from there (daylight saving). `T` and `Z` may be lower case, years beyond four digits
//! need a `+`. Calendar and zone rules are the FEEL crate's.

use beeline_feel::temporal::{Date, DateTime, LocalTime, MAX_YEAR, NANOS_PER_SECOND, Zone, zone};

/// Parses an ISO zoned date-time; the error is `java.time`'s message for the text.
pub(crate) fn parse_zoned_date_time(text: &str) -> Result<DateTime, String> {
    let mut scanner = Scanner::new(text);
    let fields = scanner.fields().map_err(|index| {
        if scanner.unparsed {
            format!("Text '{text}' could not be parsed, unparsed text found at index {index}")
        } else {
            format!("Text '{text}' could not be parsed at index {index}")
        }
    })?;
    fields
        .resolve()
        .map_err(|reason| format!("Text '{text}' could not be parsed: {reason}"))
}

/// The fields as read, before range checks (Java checks ranges when it resolves).
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nano: i64,
    offset_seconds: i32,
    zone: Option<Zone>,
}

impl Fields {
    fn resolve(&self) -> Result<DateTime, String> {
        check("Year", -MAX_YEAR, MAX_YEAR, self.year)?;
        check("MonthOfYear", 1, 12, self.month)?;
        if !(1..=31).contains(&self.day) {
            return Err(format!(
                "Invalid value for DayOfMonth (valid values 1 - 28/31): {}",
                self.day
            ));
        }
        check("HourOfDay", 0, 23, self.hour)?;
        check("MinuteOfHour", 0, 59, self.minute)?;
        check("SecondOfMinute", 0, 59, self.second)?;
        let date = Date::new(self.year, self.month, self.day).ok_or_else(|| {
            if self.month == 2 && self.day == 29 {
                format!(
                    "Invalid date 'February 29' as '{}' is not a leap year",
                    self.year
                )
            } else {
                format!(
                    "Invalid date '{} {}'",
                    MONTHS[self.month as usize - 1],
                    self.day
                )
            }
        })?;
        let time = LocalTime::new(self.hour, self.minute, self.second, self.nano)
            .ok_or_else(|| "Invalid time".to_string())?;
        // The text's offset fixes the instant; a bracketed zone only changes how it is seen.
        let at_offset = DateTime {
            date,
            time,
            zone: Some(Zone {
                offset: self.offset_seconds,
                id: None,
            }),
        };
        match self.zone {
            None => Ok(at_offset),
            Some(zone) => at_offset
                .instant_nanos()
                .and_then(|instant| DateTime::at_instant(instant, zone))
                .ok_or_else(|| "Instant exceeds minimum or maximum instant".to_string()),
        }
    }
}

const MONTHS: [&str; 12] = [
    "JANUARY",
    "FEBRUARY",
    "MARCH",
    "APRIL",
    "MAY",
    "JUNE",
    "JULY",
    "AUGUST",
    "SEPTEMBER",
    "OCTOBER",
    "NOVEMBER",
    "DECEMBER",
];

fn check(field: &str, min: i64, max: i64, value: i64) -> Result<(), String> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "Invalid value for {field} (valid values {min} - {max}): {value}"
        ))
    }
}

/// Reads the text left to right; an error is the byte index where reading failed.
struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
    /// The date-time was complete but text is left over (Java words that differently).
    unparsed: bool,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            s: text.as_bytes(),
            i: 0,
            unparsed: false,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn literal(&mut self, c: u8) -> Result<(), usize> {
        if self.peek().is_some_and(|p| p.eq_ignore_ascii_case(&c)) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.i)
        }
    }

    /// Up to `max` digits; fewer than `min` is an error at the first digit.
    fn digits(&mut self, min: usize, max: usize) -> Result<(i64, usize), usize> {
        let start = self.i;
        let mut value: i64 = 0;
        while self.i - start < max {
            match self.peek() {
                Some(c) if c.is_ascii_digit() => {
                    value = value * 10 + i64::from(c - b'0');
                    self.i += 1;
                }
                _ => break,
            }
        }
        let len = self.i - start;
        if len < min {
            Err(start)
        } else {
            Ok((value, len))
        }
    }

    fn two_digits(&mut self) -> Result<i64, usize> {
        self.digits(2, 2).map(|(v, _)| v)
    }

    /// `appendValue(YEAR, 4, 10, SignStyle.EXCEEDS_PAD)` in strict mode: four digits, or
    /// more with a sign; `+` only when more than four digits follow; no `-0000`.
    fn year(&mut self) -> Result<i64, usize> {
        let start = self.i;
        let sign = match self.peek() {
            Some(b'+') => Some(false),
            Some(b'-') => Some(true),
            _ => None,
        };
        if sign.is_some() {
            self.i += 1;
        }
        let (value, len) = self.digits(4, 10)?;
        match sign {
            Some(false) if len <= 4 => Err(start),
            Some(true) if value == 0 => Err(start),
            Some(true) => Ok(-value),
            None if len > 4 => Err(start),
            _ => Ok(value),
        }
    }

    fn fields(&mut self) -> Result<Fields, usize> {
        let year = self.year()?;
        self.literal(b'-')?;
        let month = self.two_digits()?;
        self.literal(b'-')?;
        let day = self.two_digits()?;
        self.literal(b'T')?;
        let hour = self.two_digits()?;
        self.literal(b':')?;
        let minute = self.two_digits()?;
        let mut second = 0;
        let mut nano = 0;
        if self.peek() == Some(b':') {
            self.i += 1;
            second = self.two_digits()?;
            if self.peek() == Some(b'.') {
                self.i += 1;
                // `appendFraction(NANO_OF_SECOND, 0, 9, true)`: the point may stand alone.
                let (digits, len) = self.digits(0, 9)?;
                nano = digits * 10i64.pow(9 - len as u32);
            }
        }
        let offset_seconds = self.offset()?;
        // The bracketed zone is optional in Java's pattern: when it does not parse, Java
        // stops before it and complains about the text left over.
        let zone = self.bracketed_zone();
        if self.i != self.s.len() {
            self.unparsed = true;
            return Err(self.i);
        }
        Ok(Fields {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nano,
            offset_seconds,
            zone,
        })
    }

    fn bracketed_zone(&mut self) -> Option<Zone> {
        let open = self.i;
        if self.peek() != Some(b'[') {
            return None;
        }
        let close = open + self.s[open..].iter().position(|&c| c == b']')?;
        let id = std::str::from_utf8(&self.s[open + 1..close]).ok()?;
        let zone = zone_id(id)?;
        self.i = close + 1;
        Some(zone)
    }

    /// `appendOffsetId()`: `Z`, or `±HH:MM` with optional `:SS`, at most ±18:00.
    fn offset(&mut self) -> Result<i32, usize> {
        let start = self.i;
        match self.peek() {
            Some(b'Z' | b'z') => {
                self.i += 1;
                Ok(0)
            }
            Some(sign @ (b'+' | b'-')) => {
                self.i += 1;
                let hours = self.two_digits().map_err(|_| start)?;
                self.literal(b':').map_err(|_| start)?;
                let minutes = self.two_digits().map_err(|_| start)?;
                let mut seconds = 0;
                if self.peek() == Some(b':') {
                    self.i += 1;
                    seconds = self.two_digits().map_err(|_| start)?;
                }
                let total = hours * 3600 + minutes * 60 + seconds;
                if hours > 18 || minutes > 59 || seconds > 59 || total > 18 * 3600 {
                    return Err(start);
                }
                let total = total as i32;
                Ok(if sign == b'-' { -total } else { total })
            }
            _ => Err(start),
        }
    }
}

/// A `ZoneId` as `java.time` reads it in brackets: a region id (`Europe/Berlin`, `UTC`),
/// or an offset (`Z`, `+02:00`).
fn zone_id(id: &str) -> Option<Zone> {
    if id == "Z" {
        return Some(Zone::UTC);
    }
    if let Some(first) = id.bytes().next()
        && (first == b'+' || first == b'-')
    {
        let mut scanner = Scanner::new(id);
        let offset = scanner.offset().ok()?;
        return (scanner.i == id.len()).then_some(Zone { offset, id: None });
    }
    // Region ids are case sensitive in java.time; chrono-tz would also take other cases.
    let tz = zone::parse_zone_id(id)?;
    (tz.name() == id).then_some(Zone {
        offset: 0,
        id: Some(tz),
    })
}

/// Epoch milliseconds of an instant the way `Instant.toEpochMilli` computes them
/// (truncating sub-millisecond parts toward zero), if they fit.
pub(crate) fn epoch_millis(instant_nanos: i128) -> Option<i64> {
    i64::try_from(instant_nanos / 1_000_000).ok()
}

pub(crate) fn nanos_from_millis(millis: i64) -> i128 {
    i128::from(millis) * 1_000_000
}

/// Seconds since the epoch of a zoned date-time's local fields (read as if UTC).
pub(crate) fn local_seconds(dt: &DateTime) -> i64 {
    (dt.local_nanos().div_euclid(i128::from(NANOS_PER_SECOND))) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(text: &str) -> i64 {
        let dt = parse_zoned_date_time(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        epoch_millis(dt.instant_nanos().unwrap()).unwrap()
    }

    #[test]
    fn offsets_and_zones_fix_the_instant() {
        assert_eq!(millis("1970-01-01T00:00:00Z"), 0);
        assert_eq!(millis("1970-01-01T01:00:00+01:00"), 0);
        assert_eq!(millis("1970-01-01T00:00Z"), 0);
        assert_eq!(millis("1970-01-01t00:00:00.5z"), 500);
        assert_eq!(millis("1970-01-01T00:00:00.Z"), 0);
        assert_eq!(millis("2025-01-01T10:00:00Z"), 1_735_725_600_000);
        // The offset wins over the zone; the zone is kept for calendar arithmetic.
        let dt = parse_zoned_date_time("2020-06-01T10:00:00+00:00[Europe/Berlin]").unwrap();
        assert_eq!(dt.time.hour(), 12);
        assert_eq!(dt.zone.unwrap().offset, 7200);
        assert!(dt.zone.unwrap().id.is_some());
        assert_eq!(
            millis("2020-06-01T12:00:00+02:00[Europe/Berlin]"),
            millis("2020-06-01T10:00:00Z")
        );
        assert_eq!(millis("+10000-01-01T00:00:00Z"), 253_402_300_800_000);
        assert_eq!(millis("-0001-01-01T00:00:00Z"), -62_198_755_200_000);
        assert_eq!(millis("2020-01-01T00:00:00+05:30:15"), 1_577_816_985_000);
        assert_eq!(
            millis("2020-01-01T00:00:00Z[UTC]"),
            millis("2020-01-01T00:00:00Z")
        );
        assert_eq!(
            millis("2020-01-01T00:00:00Z[+02:00]"),
            millis("2020-01-01T00:00:00Z")
        );
    }

    #[test]
    fn java_rejects() {
        for (text, message) in [
            ("", "Text '' could not be parsed at index 0"),
            ("foo", "Text 'foo' could not be parsed at index 0"),
            (
                "2025-01-01T10:00:00",
                "Text '2025-01-01T10:00:00' could not be parsed at index 19",
            ),
            (
                "2025-01-01",
                "Text '2025-01-01' could not be parsed at index 10",
            ),
            (
                "2025-01-01T10:00:00+01",
                "Text '2025-01-01T10:00:00+01' could not be parsed at index 19",
            ),
            (
                "2025-01-01T10:00:00Z[Mars/Olympus]",
                "Text '2025-01-01T10:00:00Z[Mars/Olympus]' could not be parsed, unparsed text found at index 20",
            ),
            (
                "2025-13-01T10:00:00Z",
                "Text '2025-13-01T10:00:00Z' could not be parsed: Invalid value for MonthOfYear (valid values 1 - 12): 13",
            ),
            (
                "2021-02-29T10:00:00Z",
                "Text '2021-02-29T10:00:00Z' could not be parsed: Invalid date 'February 29' as '2021' is not a leap year",
            ),
            (
                "2021-04-31T10:00:00Z",
                "Text '2021-04-31T10:00:00Z' could not be parsed: Invalid date 'APRIL 31'",
            ),
            (
                "2021-04-01T24:00:00Z",
                "Text '2021-04-01T24:00:00Z' could not be parsed: Invalid value for HourOfDay (valid values 0 - 23): 24",
            ),
            (
                "+1000000000-01-01T00:00:00Z",
                "Text '+1000000000-01-01T00:00:00Z' could not be parsed: Invalid value for Year (valid values -999999999 - 999999999): 1000000000",
            ),
        ] {
            assert_eq!(parse_zoned_date_time(text).unwrap_err(), message, "{text}");
        }
        for text in [
            "+2020-01-01T00:00:00Z",
            "20200-01-01T00:00:00Z",
            "-0000-01-01T00:00:00Z",
            "2020-1-01T00:00:00Z",
            "2020-01-01 00:00:00Z",
            "2020-01-01T00:00:00+19:00",
            "2020-01-01T00:00:00.1234567890Z",
            "2020-01-01T00:00:00Z[europe/berlin]",
            "2020-01-01T00:00:00Z[Europe/Berlin",
            "2020-01-01T00:00:00Z ",
            "2020-01-01T00:00:00@Europe/Berlin",
        ] {
            assert!(parse_zoned_date_time(text).is_err(), "{text}");
        }
    }
}
