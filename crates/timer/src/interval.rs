//! Zeebe's `Interval` and `RepeatingInterval` (`io.camunda.zeebe.model.bpmn.util.time`):
//! an ISO 8601 period (`P1Y2M3W4D`) plus a duration (`PT5H6M7.5S`), optionally anchored at
//! a start date-time, parsed with `java.time.Period.parse` and `Duration.parse` rules.
//!
//! The period part is calendar arithmetic (months then days, on the local date in the zone
//! at hand, clamping the day to the end of the month); the duration part is exact time.

use beeline_feel::temporal::{DateTime, NANOS_PER_DAY, NANOS_PER_SECOND, Zone, zone};

use crate::date_time::{epoch_millis, local_seconds, nanos_from_millis, parse_zoned_date_time};

/// `RepeatingInterval.INFINITE`: Zeebe's `repetitions` for `R/...` and cron timers.
pub(crate) const INFINITE: i32 = -1;

/// `java.time.Period`: three independent `int` fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Period {
    pub years: i32,
    pub months: i32,
    pub days: i32,
}

impl Period {
    fn is_zero(self) -> bool {
        self.years == 0 && self.months == 0 && self.days == 0
    }

    /// `Period.toTotalMonths`.
    fn total_months(self) -> i64 {
        i64::from(self.years) * 12 + i64::from(self.months)
    }
}

/// An `Interval`: period, duration (nanoseconds, within `java.time.Duration`'s range of
/// `long` seconds) and an optional start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Interval {
    pub period: Period,
    pub duration_nanos: i128,
    pub start: Option<DateTime>,
}

impl Interval {
    pub fn of_period(period: Period) -> Interval {
        Interval {
            period,
            duration_nanos: 0,
            start: None,
        }
    }

    pub fn of_duration(duration_nanos: i128) -> Option<Interval> {
        duration_in_range(duration_nanos).then_some(Interval {
            period: Period::default(),
            duration_nanos,
            start: None,
        })
    }

    /// `Interval.toEpochMilli`: the start if there is one (or `from` when the start has
    /// passed: the timer is overdue and fires at once); otherwise `from` plus the interval,
    /// in UTC (Zeebe uses the JVM's default zone, which is UTC in its images).
    pub fn due_from(&self, from_ms: i64) -> Option<i64> {
        if let Some(start) = self.start {
            let start_ms = epoch_millis(start.instant_nanos()?)?;
            return Some(start_ms.max(from_ms));
        }
        if !self.is_calendar_based() {
            // Duration.toMillis truncates toward zero.
            let millis = i64::try_from(self.duration_nanos / 1_000_000).ok()?;
            return from_ms.checked_add(millis);
        }
        epoch_millis(self.add_to(nanos_from_millis(from_ms), Zone::UTC)?)
    }

    /// `Interval.withStart(instant)`'s start in epoch milliseconds: the instant seen in the
    /// start's zone (UTC without one) plus this interval.
    pub fn after(&self, instant_ms: i64) -> Option<i64> {
        let zone = self.start.and_then(|s| s.zone).unwrap_or(Zone::UTC);
        epoch_millis(self.add_to(nanos_from_millis(instant_ms), zone)?)
    }

    /// `Interval.isCalendarBased`: a period, or a duration of a day or more.
    fn is_calendar_based(&self) -> bool {
        !self.period.is_zero() || self.duration_nanos >= i128::from(NANOS_PER_DAY)
    }

    /// `ZonedDateTime.ofInstant(instant, zone).plus(period).plus(duration)`.
    fn add_to(&self, instant_nanos: i128, zone: Zone) -> Option<i128> {
        let mut dt = DateTime::at_instant(instant_nanos, zone)?;
        let months = self.period.total_months();
        if months != 0 {
            let date = dt.date.plus_months(months)?;
            dt = resolve_keeping_offset(DateTime { date, ..dt })?;
        }
        if self.period.days != 0 {
            let date = dt.date.plus_days(i64::from(self.period.days))?;
            dt = resolve_keeping_offset(DateTime { date, ..dt })?;
        }
        let instant = dt.instant_nanos()?.checked_add(self.duration_nanos)?;
        // The result must still be a date-time java.time can hold.
        DateTime::at_instant(instant, zone)?;
        Some(instant)
    }
}

/// `ZonedDateTime.resolveLocal`: new local fields in the same zone. A gap moves the time
/// forward; in an overlap the previous offset is kept if it is still valid, otherwise the
/// earlier one is taken.
fn resolve_keeping_offset(dt: DateTime) -> Option<DateTime> {
    let current = dt.zone?;
    let Some(tz) = current.id else {
        return Some(dt);
    };
    let resolved = DateTime::resolve(dt.date, dt.time, Some(current))?;
    let same_local = resolved.date == dt.date && resolved.time == dt.time;
    let resolved_offset = resolved.zone.map(|z| z.offset);
    if same_local && resolved_offset != Some(current.offset) {
        let instant_secs = local_seconds(&dt).checked_sub(i64::from(current.offset))?;
        if zone::offset_at_instant(tz, instant_secs) == current.offset {
            return Some(dt);
        }
    }
    Some(resolved)
}

/// A `java.time.Duration` has `long` seconds.
fn duration_in_range(nanos: i128) -> bool {
    i64::try_from(nanos.div_euclid(i128::from(NANOS_PER_SECOND))).is_ok()
}

/// `Interval.parse`: `[start/]period-and-duration`, where the text after the last `/` is a
/// period (`P1Y2M3W4D`), a duration (`PT1H`), or both (`P1DT1H`), with an optional sign.
pub(crate) fn parse_interval(text: &str) -> Result<Interval, String> {
    let (start, expression) = match text.rfind('/') {
        Some(slash) if slash > 0 => (
            Some(parse_zoned_date_time(&text[..slash])?),
            &text[slash + 1..],
        ),
        Some(slash) => (None, &text[slash + 1..]),
        None => (None, text),
    };
    let (sign_len, negative) = match expression.as_bytes().first() {
        Some(b'-') => (1, true),
        Some(b'+') => (1, false),
        _ => (0, false),
    };
    let (period, duration_nanos) = match expression.find('T') {
        None => (parse_period(expression)?, 0),
        Some(t) if t == sign_len + 1 => (Period::default(), parse_duration(expression)?),
        Some(t) => {
            let sign = if negative { "-" } else { "" };
            (
                parse_period(&expression[..t])?,
                parse_duration(&format!("{sign}P{}", &expression[t..]))?,
            )
        }
    };
    Ok(Interval {
        period,
        duration_nanos,
        start,
    })
}

/// `RepeatingInterval.parse`: `R<n>/<interval>` or `R/<interval>` (repeats forever).
pub(crate) fn parse_repeating_interval(text: &str) -> Result<(i32, Interval), String> {
    let Some(rest) = text.strip_prefix('R') else {
        return Err("Repetition spec must start with R".to_string());
    };
    let Some(slash) = rest.find('/') else {
        return Err("No interval given".to_string());
    };
    if slash == 0 {
        return Ok((INFINITE, parse_interval(&rest[1..])?));
    }
    // Java parses the count first, so a bad count wins over a bad interval.
    let repetitions = parse_java_int(&rest[..slash])
        .ok_or_else(|| "Cannot parse repetitions count".to_string())?;
    Ok((repetitions, parse_interval(&rest[slash + 1..])?))
}

/// `Integer.parseInt` on ASCII: an optional sign and digits, within `int`.
fn parse_java_int(text: &str) -> Option<i32> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i32>().ok()
}

/// `Long.parseLong` on ASCII.
fn parse_java_long(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok()
}

/// Splits `<sign?><digits><letter>` sections off an ISO text body, case-insensitively.
struct Sections<'a> {
    rest: &'a str,
}

impl<'a> Sections<'a> {
    /// The next number (with its own optional sign) and the designator after it, if the
    /// text continues with one. A fraction (`.5` or `,5`) is returned separately.
    fn next(&mut self) -> Option<(&'a str, Option<&'a str>, u8)> {
        let bytes = self.rest.as_bytes();
        let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
        let digits_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == digits_start {
            return None;
        }
        let number = &self.rest[..i];
        let mut fraction = None;
        if matches!(bytes.get(i), Some(b'.' | b',')) {
            let start = i + 1;
            let mut end = start;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            fraction = Some(&self.rest[start..end]);
            i = end;
        }
        // A designator is one ASCII letter; anything else (a multi-byte character too)
        // ends the sections, so the rest is never split inside a character.
        let designator = bytes.get(i).filter(|b| b.is_ascii())?.to_ascii_uppercase();
        self.rest = &self.rest[i + 1..];
        Some((number, fraction, designator))
    }
}

const NOT_A_PERIOD: &str = "Text cannot be parsed to a Period";

/// `java.time.Period.parse`: `[±]P[±nY][±nM][±nW][±nD]`, at least one section, `int`
/// values; weeks count as seven days.
pub(crate) fn parse_period(text: &str) -> Result<Period, String> {
    let err = || NOT_A_PERIOD.to_string();
    let (negate, body) = strip_sign_and_p(text).ok_or_else(err)?;
    let mut values: [Option<i32>; 4] = [None; 4];
    let mut last = None;
    let mut sections = Sections { rest: body };
    while !sections.rest.is_empty() {
        let (number, fraction, designator) = sections.next().ok_or_else(err)?;
        let slot = match designator {
            b'Y' => 0,
            b'M' => 1,
            b'W' => 2,
            b'D' => 3,
            _ => return Err(err()),
        };
        if fraction.is_some() || last.is_some_and(|l| slot <= l) {
            return Err(err());
        }
        last = Some(slot);
        let value = parse_java_int(number).ok_or_else(err)?;
        values[slot] = Some(if negate {
            value.checked_neg().ok_or_else(err)?
        } else {
            value
        });
    }
    if last.is_none() {
        return Err(err());
    }
    let [years, months, weeks, days] = values.map(Option::unwrap_or_default);
    let days = weeks
        .checked_mul(7)
        .and_then(|w| days.checked_add(w))
        .ok_or_else(err)?;
    Ok(Period {
        years,
        months,
        days,
    })
}

/// `java.time.Duration.parse`: `[±]P[±nD][T[±nH][±nM][±n[.f]S]]`, `long` seconds, up to
/// nine fraction digits (after `.` or `,`). Returns nanoseconds.
pub(crate) fn parse_duration(text: &str) -> Result<i128, String> {
    const NOT_A_DURATION: &str = "Text cannot be parsed to a Duration";
    let err = || NOT_A_DURATION.to_string();
    let (negate, body) = strip_sign_and_p(text).ok_or_else(err)?;
    let (date_part, time_part) = match body.find(['T', 't']) {
        Some(t) => (&body[..t], Some(&body[t + 1..])),
        None => (body, None),
    };
    // Seconds of each section: days, hours, minutes, seconds.
    let mut parts: [Option<(&str, Option<&str>)>; 4] = [None; 4];
    let mut sections = Sections { rest: date_part };
    if !date_part.is_empty() {
        let (number, fraction, designator) = sections.next().ok_or_else(err)?;
        if designator != b'D' || fraction.is_some() || !sections.rest.is_empty() {
            return Err(err());
        }
        parts[0] = Some((number, None));
    }
    if let Some(time_part) = time_part {
        if time_part.is_empty() {
            return Err(err());
        }
        let mut last = 0;
        let mut sections = Sections { rest: time_part };
        while !sections.rest.is_empty() {
            let (number, fraction, designator) = sections.next().ok_or_else(err)?;
            let slot = match designator {
                b'H' => 1,
                b'M' => 2,
                b'S' => 3,
                _ => return Err(err()),
            };
            if slot <= last || (fraction.is_some() && slot != 3) {
                return Err(err());
            }
            if fraction.is_some_and(|f| f.len() > 9) {
                return Err(err());
            }
            last = slot;
            parts[slot] = Some((number, fraction));
        }
    }
    if parts.iter().all(Option::is_none) {
        return Err(err());
    }
    let mut values = [0i64; 4];
    for (slot, (unit, name)) in [
        (86_400, "days"),
        (3_600, "hours"),
        (60, "minutes"),
        (1, "seconds"),
    ]
    .into_iter()
    .enumerate()
    {
        if let Some((number, _)) = parts[slot] {
            values[slot] = parse_java_long(number)
                .and_then(|v| v.checked_mul(unit))
                .ok_or_else(|| format!("{NOT_A_DURATION}: {name}"))?;
        }
    }
    // Summed in Java's order, so the same texts overflow.
    let [days, hours, minutes, secs] = values;
    let seconds = minutes
        .checked_add(secs)
        .and_then(|s| hours.checked_add(s))
        .and_then(|s| days.checked_add(s))
        .ok_or_else(|| format!("{NOT_A_DURATION}: overflow"))?;
    let mut nanos: i128 = 0;
    if let Some((number, Some(fraction))) = parts[3]
        && !fraction.is_empty()
    {
        let digits: i128 = fraction.parse().map_err(|_| err())?;
        nanos = digits * 10i128.pow(9 - fraction.len() as u32);
        if number.starts_with('-') {
            nanos = -nanos;
        }
    }
    let total = i128::from(seconds) * i128::from(NANOS_PER_SECOND) + nanos;
    let total = if negate { -total } else { total };
    if !duration_in_range(total) {
        return Err(format!("{NOT_A_DURATION}: overflow"));
    }
    Ok(total)
}

fn strip_sign_and_p(text: &str) -> Option<(bool, &str)> {
    let (negate, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest.strip_prefix(['P', 'p'])?;
    Some((negate, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i128 = 1_000_000_000;

    #[test]
    fn periods_like_java() {
        let p = |y, m, d| Period {
            years: y,
            months: m,
            days: d,
        };
        for (text, expected) in [
            ("P1Y", p(1, 0, 0)),
            ("P1Y2M3W4D", p(1, 2, 25)),
            ("p2w", p(0, 0, 14)),
            ("-P1Y2M", p(-1, -2, 0)),
            ("P-1Y+2M", p(-1, 2, 0)),
            ("-P-1D", p(0, 0, 1)),
            ("+P0D", p(0, 0, 0)),
            ("P2147483647D", p(0, 0, i32::MAX)),
        ] {
            assert_eq!(parse_period(text), Ok(expected), "{text}");
        }
        for text in [
            "",
            "P",
            "1D",
            "PT1H",
            "P1D1Y",
            "P1.5D",
            "P1H",
            "P1Y1Y",
            "P2147483648D",
            "-P-2147483648D",
            "P306783379W",
            "P 1D",
            "P1D ",
        ] {
            assert_eq!(parse_period(text), Err(NOT_A_PERIOD.to_string()), "{text}");
        }
    }

    #[test]
    fn durations_like_java() {
        for (text, expected) in [
            ("PT1H", 3600 * SECOND),
            ("PT1H30M", 5400 * SECOND),
            ("pt10s", 10 * SECOND),
            ("PT0.5S", SECOND / 2),
            ("PT1,25S", SECOND + SECOND / 4),
            ("PT1.S", SECOND),
            ("PT-0.5S", -SECOND / 2),
            ("-PT1M", -60 * SECOND),
            ("-PT-1M", 60 * SECOND),
            ("PT-1H+30M", -1800 * SECOND),
            ("P2D", 2 * 86_400 * SECOND),
            ("P1DT1H", 90_000 * SECOND),
            ("PT0.000000001S", 1),
            ("PT9223372036854775807S", i128::from(i64::MAX) * SECOND),
        ] {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
        for text in [
            "",
            "P",
            "PT",
            "P1H",
            "PT1D",
            "PT1S1M",
            "PT1.5M",
            "PT1.0000000001S",
            "PT1H ",
            "P1DT",
        ] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        assert_eq!(
            parse_duration("PT9223372036854775807H"),
            Err("Text cannot be parsed to a Duration: hours".to_string())
        );
        assert_eq!(
            parse_duration("PT9223372036854775807S1S").unwrap_err(),
            "Text cannot be parsed to a Duration"
        );
        assert_eq!(
            parse_duration("PT2562047788015215H30M8S"),
            Err("Text cannot be parsed to a Duration: overflow".to_string())
        );
    }

    #[test]
    fn intervals_split_like_zeebe() {
        let i = parse_interval("P1Y2M3DT4H5M6.5S").unwrap();
        assert_eq!(
            i.period,
            Period {
                years: 1,
                months: 2,
                days: 3
            }
        );
        assert_eq!(
            i.duration_nanos,
            (4 * 3600 + 5 * 60 + 6) * SECOND + SECOND / 2
        );
        let i = parse_interval("-P1DT1H").unwrap();
        assert_eq!(i.period.days, -1);
        assert_eq!(i.duration_nanos, -3600 * SECOND);
        let i = parse_interval("pT5M").unwrap();
        assert_eq!(i.duration_nanos, 300 * SECOND);
        // The separator must be an upper-case T (Zeebe looks for 'T').
        assert!(parse_interval("Pt5M").is_err());
        // A leading slash is no start.
        assert_eq!(parse_interval("/PT1S").unwrap().duration_nanos, SECOND);
        let i = parse_interval("2025-01-01T10:00:00+01:00[Europe/Berlin]/P1D").unwrap();
        assert!(i.start.is_some());
        assert_eq!(i.period.days, 1);
        assert_eq!(
            parse_interval("PT1H/P1D").unwrap_err(),
            "Text 'PT1H' could not be parsed at index 0"
        );
        assert_eq!(parse_interval("").unwrap_err(), NOT_A_PERIOD);
    }

    #[test]
    fn repetitions_like_integer_parse_int() {
        let reps = |t: &str| parse_repeating_interval(t).map(|(r, _)| r);
        assert_eq!(reps("R5/PT1S"), Ok(5));
        assert_eq!(reps("R/PT1S"), Ok(INFINITE));
        assert_eq!(reps("R+3/PT1S"), Ok(3));
        assert_eq!(reps("R0/PT1S"), Ok(0));
        assert_eq!(reps("R-1/PT1S"), Ok(INFINITE));
        assert_eq!(
            reps("R99999999999/PT1S"),
            Err("Cannot parse repetitions count".to_string())
        );
        assert_eq!(
            reps("Rx/garbage"),
            Err("Cannot parse repetitions count".to_string())
        );
        assert_eq!(reps("R5"), Err("No interval given".to_string()));
        assert_eq!(
            reps("5/PT1S"),
            Err("Repetition spec must start with R".to_string())
        );
        assert_eq!(
            reps("R5/PT"),
            Err("Text cannot be parsed to a Duration".to_string())
        );
    }

    #[test]
    fn calendar_arithmetic_in_utc() {
        let ms = |y, m, d| beeline_feel::temporal::civil::days_from_civil(y, m, d) * 86_400_000;
        let i = parse_interval("P1M").unwrap();
        assert_eq!(i.due_from(ms(2021, 1, 31)), Some(ms(2021, 2, 28)));
        assert_eq!(i.due_from(ms(2024, 1, 31)), Some(ms(2024, 2, 29)));
        let i = parse_interval("P1Y").unwrap();
        assert_eq!(i.due_from(ms(2024, 2, 29)), Some(ms(2025, 2, 28)));
        // Months first, then days: Jan 31 + 1 month = Feb 28, + 1 day = Mar 1.
        let i = parse_interval("P1M1D").unwrap();
        assert_eq!(i.due_from(ms(2021, 1, 31)), Some(ms(2021, 3, 1)));
        let i = parse_interval("PT1.9999S").unwrap();
        assert_eq!(i.due_from(0), Some(1999));
        let i = parse_interval("-PT1.9999S").unwrap();
        assert_eq!(i.due_from(0), Some(-1999));
        assert_eq!(parse_interval("P999999999Y").unwrap().due_from(0), None);
        assert_eq!(
            parse_interval("PT24H").unwrap().due_from(i64::MAX - 1000),
            None
        );
        assert_eq!(parse_interval("PT1S").unwrap().due_from(i64::MAX), None);
    }

    #[test]
    fn calendar_arithmetic_follows_the_start_zone() {
        // Across the spring-forward night in Berlin, a day is 23 hours.
        let i = parse_interval("2021-03-27T10:00:00+01:00[Europe/Berlin]/P1D").unwrap();
        let start = i.due_from(0).unwrap();
        assert_eq!(i.after(start), Some(start + 23 * 3_600_000));
        let i = parse_interval("2021-03-27T10:00:00+01:00[Europe/Berlin]/PT24H").unwrap();
        assert_eq!(i.after(start), Some(start + 24 * 3_600_000));
        // A fixed offset has no daylight saving.
        let i = parse_interval("2021-03-27T10:00:00+01:00/P1D").unwrap();
        assert_eq!(i.after(start), Some(start + 24 * 3_600_000));
        // In the autumn overlap the offset before the addition is kept when still valid:
        // 2021-10-30T02:30+02:00 plus a day is 2021-10-31T02:30+02:00 (the first 02:30)...
        let i = parse_interval("2021-10-30T02:30:00+02:00[Europe/Berlin]/P1D").unwrap();
        let start = i.due_from(0).unwrap();
        assert_eq!(i.after(start), Some(start + 24 * 3_600_000));
        // ...and 2021-11-01T02:30+01:00 minus a day is 2021-10-31T02:30+01:00 (the second).
        let i = parse_interval("2021-11-01T02:30:00+01:00[Europe/Berlin]/-P1D").unwrap();
        let start = i.due_from(0).unwrap();
        assert_eq!(i.after(start), Some(start - 24 * 3_600_000));
        // Into the spring gap: 2021-03-27T02:30+01:00 plus a day is 03:30+02:00.
        let i = parse_interval("2021-03-27T02:30:00+01:00[Europe/Berlin]/P1D").unwrap();
        let start = i.due_from(0).unwrap();
        assert_eq!(i.after(start), Some(start + 24 * 3_600_000));
    }
}
