//! Cron expressions for `timeCycle`, with the semantics of Spring's `CronExpression`
//! (Spring 5.3+), which Zeebe follows through cron-utils' `SPRING53` definition.
//!
//! Six fields, `second minute hour day-of-month month day-of-week`, each a list of `*`,
//! values, ranges `a-b` and steps (`*/n`, `a/n` = from `a` to the end, `a-b/n`); month and
//! day-of-week names (`JAN`, `MON`; 0 and 7 are Sunday); `?` for a whole day field; in the
//! day-of-month field `L`, `L-n`, `LW` and `nW`; in the day-of-week field `dL` and `d#n`;
//! and the macros `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
//! `@hourly`. Unlike Unix cron, a day must match both day fields (Spring ANDs them).
//!
//! Matching is declarative (a date-time matches or not) and the search looks 400 years
//! ahead, one full Gregorian cycle, so an expression that never matches (`0 0 0 30 2 *`) is
//! recognised as such. Times are UTC: Zeebe evaluates cron in the JVM's default zone, which
//! is UTC in its images, so there is no daylight saving to handle.

use beeline_feel::temporal::civil;

/// A parsed cron expression. Fields are bit sets: bit `v` set means value `v` matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cron {
    seconds: u64,
    minutes: u64,
    hours: u64,
    days_of_month: DaysOfMonth,
    months: u64,
    days_of_week: DaysOfWeek,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct DaysOfMonth {
    /// Plain days 1-31.
    days: u64,
    /// Bit `n`: the day `n` days before the last of the month (`L` is bit 0, `L-3` bit 3).
    before_last: u64,
    /// `LW`: the last weekday (Monday to Friday) of the month.
    last_weekday: bool,
    /// Bit `n`: `nW`, the weekday nearest to day `n`.
    nearest_weekday: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct DaysOfWeek {
    /// ISO weekdays, Monday = 1 ... Sunday = 7.
    days: u64,
    /// Bit `d`: `dL`, the last weekday `d` of the month.
    last: u64,
    /// Bit `d * 8 + n`: `d#n`, the `n`-th weekday `d` of the month.
    nth: u64,
}

/// The longest `L-n` offset taken: beyond it the day would leave the month.
const MAX_LAST_OFFSET: u32 = 30;
/// A month has at most five of each weekday.
const MAX_NTH: u32 = 5;
/// One Gregorian cycle: after 400 years dates and weekdays repeat.
const SEARCH_MONTHS: u32 = 400 * 12;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

impl Field {
    /// `java.time`'s field name, as Spring's messages use it.
    fn name(self) -> &'static str {
        match self {
            Field::Second => "SecondOfMinute",
            Field::Minute => "MinuteOfHour",
            Field::Hour => "HourOfDay",
            Field::DayOfMonth => "DayOfMonth",
            Field::Month => "MonthOfYear",
            Field::DayOfWeek => "DayOfWeek",
        }
    }

    /// The range `*` stands for.
    fn range(self) -> (u32, u32) {
        match self {
            Field::Second | Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::DayOfMonth => (1, 31),
            Field::Month => (1, 12),
            Field::DayOfWeek => (1, 7),
        }
    }

    /// The values that may be written: cron also takes 0 for Sunday.
    fn valid(self) -> (u32, u32) {
        match self {
            Field::DayOfWeek => (0, 7),
            _ => self.range(),
        }
    }

    fn names(self) -> &'static [&'static str] {
        match self {
            Field::Month => &[
                "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
            ],
            Field::DayOfWeek => &["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"],
            _ => &[],
        }
    }
}

/// Java's `\s`: the ASCII whitespace cron-utils splits on.
fn is_java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

impl Cron {
    /// Parses an expression; the error is the message Zeebe reports for it.
    pub fn parse(text: &str) -> Result<Cron, String> {
        let upper = text.to_ascii_uppercase();
        let mut parts: Vec<&str> = upper
            .split(is_java_space)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return Err("Empty expression!".to_string());
        }
        if let [single] = parts[..]
            && let Some(expanded) = macro_fields(single)
        {
            parts = expanded.split(' ').collect();
        }
        if let Some(part) = parts.iter().find(|p| p.ends_with(',')) {
            return Err(format!(
                "Invalid field value! Trailing commas not permitted! '{part}'"
            ));
        }
        let [second, minute, hour, day_of_month, month, day_of_week] = parts[..] else {
            return Err(format!(
                "Cron expression contains {} parts but we expect one of [6]",
                parts.len()
            ));
        };
        let fields = || -> Result<Cron, String> {
            Ok(Cron {
                seconds: parse_bits(Field::Second, second)?,
                minutes: parse_bits(Field::Minute, minute)?,
                hours: parse_bits(Field::Hour, hour)?,
                days_of_month: parse_days_of_month(day_of_month)?,
                months: parse_bits(Field::Month, month)?,
                days_of_week: parse_days_of_week(day_of_week)?,
            })
        };
        fields().map_err(|detail| format!("Failed to parse '{text}'. {detail}"))
    }

    /// The first whole second strictly after `after_ms` (epoch milliseconds, UTC) that
    /// matches, or `None` if there is none in the next 400 years (then there is none at
    /// all) or it is beyond the range of epoch milliseconds.
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        let start = after_ms.div_euclid(1000).checked_add(1)?;
        let start_day = start.div_euclid(86_400);
        let start_second = start.rem_euclid(86_400) as u32;
        let (mut year, mut month, first_day) = civil::civil_from_days(start_day);
        let mut day = first_day;
        let mut floor = start_second;
        for _ in 0..=SEARCH_MONTHS {
            if bit(self.months, month) {
                let days_in_month = civil::days_in_month(year, month);
                while day <= days_in_month {
                    if self.matches_day(year, month, day, days_in_month)
                        && let Some(second) = self.first_time_from(floor)
                    {
                        let days = civil::days_from_civil(year, month, day);
                        let seconds = days.checked_mul(86_400)?.checked_add(i64::from(second))?;
                        return seconds.checked_mul(1000);
                    }
                    day += 1;
                    floor = 0;
                }
            }
            (year, month) = if month == 12 {
                (year + 1, 1)
            } else {
                (year, month + 1)
            };
            day = 1;
            floor = 0;
        }
        None
    }

    /// Whether a whole-second instant (epoch milliseconds, UTC) matches.
    #[cfg(test)]
    pub fn matches(&self, at_ms: i64) -> bool {
        let seconds = at_ms.div_euclid(1000);
        let (year, month, day) = civil::civil_from_days(seconds.div_euclid(86_400));
        let second_of_day = seconds.rem_euclid(86_400) as u32;
        at_ms.rem_euclid(1000) == 0
            && bit(self.months, month)
            && self.matches_day(year, month, day, civil::days_in_month(year, month))
            && bit(self.hours, second_of_day / 3600)
            && bit(self.minutes, second_of_day / 60 % 60)
            && bit(self.seconds, second_of_day % 60)
    }

    fn matches_day(&self, year: i64, month: u32, day: u32, days_in_month: u32) -> bool {
        let epoch_day = civil::days_from_civil(year, month, day);
        let weekday = civil::weekday(epoch_day);
        self.days_of_month.matches(epoch_day, day, days_in_month)
            && self.days_of_week.matches(weekday, day, days_in_month)
    }

    /// The first matching second of the day at or after `floor` (seconds since midnight).
    fn first_time_from(&self, floor: u32) -> Option<u32> {
        let (floor_hour, floor_minute, floor_second) = (floor / 3600, floor / 60 % 60, floor % 60);
        let mut hour = next_bit(self.hours, floor_hour)?;
        loop {
            let minute_floor = if hour == floor_hour { floor_minute } else { 0 };
            let mut minute = next_bit(self.minutes, minute_floor);
            while let Some(m) = minute {
                let second_floor = if hour == floor_hour && m == floor_minute {
                    floor_second
                } else {
                    0
                };
                if let Some(s) = next_bit(self.seconds, second_floor) {
                    return Some(hour * 3600 + m * 60 + s);
                }
                minute = next_bit(self.minutes, m + 1);
            }
            hour = next_bit(self.hours, hour + 1)?;
        }
    }
}

impl DaysOfMonth {
    fn matches(&self, epoch_day: i64, day: u32, days_in_month: u32) -> bool {
        if bit(self.days, day) {
            return true;
        }
        // `L-n`: this day is `n` days before the end of its month or, for long offsets, of
        // the next month (Spring counts back from the last day across the month boundary).
        let mut offsets = self.before_last;
        while offsets != 0 {
            let n = offsets.trailing_zeros();
            offsets &= offsets - 1;
            let (y, m, d) = civil::civil_from_days(epoch_day + i64::from(n));
            if d == civil::days_in_month(y, m) {
                return true;
            }
        }
        if self.last_weekday && day == last_weekday(epoch_day, day, days_in_month) {
            return true;
        }
        let mut targets = self.nearest_weekday;
        while targets != 0 {
            let n = targets.trailing_zeros();
            targets &= targets - 1;
            if nearest_weekday(epoch_day, day, n, days_in_month) == Some(day) {
                return true;
            }
        }
        false
    }
}

impl DaysOfWeek {
    fn matches(&self, weekday: u32, day: u32, days_in_month: u32) -> bool {
        bit(self.days, weekday)
            || (bit(self.last, weekday) && day + 7 > days_in_month)
            || bit(self.nth, weekday * 8 + (day - 1) / 7 + 1)
    }
}

/// The weekday of day `target` in the month of `day` (given its epoch day).
fn weekday_of(epoch_day: i64, day: u32, target: u32) -> u32 {
    civil::weekday(epoch_day - i64::from(day) + i64::from(target))
}

/// `LW`: the last day of the month, moved back to Friday from a weekend.
fn last_weekday(epoch_day: i64, day: u32, days_in_month: u32) -> u32 {
    match weekday_of(epoch_day, day, days_in_month) {
        6 => days_in_month - 1,
        7 => days_in_month - 2,
        _ => days_in_month,
    }
}

/// `nW` as Spring computes it: a Saturday moves back to Friday (but the 1st forward to
/// Monday the 3rd), a Sunday forward to Monday. A Sunday that ends the month and a day the
/// month does not have give nothing in that month.
fn nearest_weekday(epoch_day: i64, day: u32, n: u32, days_in_month: u32) -> Option<u32> {
    if n > days_in_month {
        return None;
    }
    match weekday_of(epoch_day, day, n) {
        6 if n == 1 => Some(3),
        6 => Some(n - 1),
        7 if n < days_in_month => Some(n + 1),
        7 => None,
        _ => Some(n),
    }
}

fn bit(bits: u64, index: u32) -> bool {
    index < 64 && bits & (1 << index) != 0
}

fn next_bit(bits: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let rest = bits & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros())
}

fn macro_fields(text: &str) -> Option<&'static str> {
    Some(match text {
        "@YEARLY" | "@ANNUALLY" => "0 0 0 1 1 *",
        "@MONTHLY" => "0 0 0 1 * *",
        "@WEEKLY" => "0 0 0 * * 0",
        "@DAILY" | "@MIDNIGHT" => "0 0 0 * * *",
        "@HOURLY" => "0 0 * * * *",
        _ => return None,
    })
}

/// A number or (month and day-of-week fields) a three-letter name, within the field's
/// valid values.
fn parse_value(field: Field, text: &str) -> Result<u32, String> {
    let value = if let Some(index) = field.names().iter().position(|n| *n == text) {
        index as u32 + 1
    } else if !text.is_empty() && text.len() <= 9 && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<u32>().map_err(|_| invalid_number(text))?
    } else {
        return Err(invalid_number(text));
    };
    let (min, max) = field.valid();
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "Invalid value for {} (valid values {min} - {max}): {value}",
            field.name()
        ))
    }
}

fn invalid_number(text: &str) -> String {
    format!("For input string: \"{text}\"")
}

/// `*`, a value or a range `a-b` (`a <= b`).
fn parse_range(field: Field, text: &str) -> Result<(u32, u32), String> {
    if text == "*" {
        return Ok(field.range());
    }
    let Some((low, high)) = text.split_once('-') else {
        let value = parse_value(field, text)?;
        return Ok((value, value));
    };
    let mut low = parse_value(field, low)?;
    let high = parse_value(field, high)?;
    if field == Field::DayOfWeek && low == 7 {
        // As the start of a range, Sunday is day 0 (SUN-SAT is the whole week).
        low = 0;
    }
    if low > high {
        return Err(format!(
            "Minimum value must be less than maximum value '{text}'"
        ));
    }
    Ok((low, high))
}

/// A comma-separated list of ranges with optional steps.
fn parse_bits(field: Field, text: &str) -> Result<u64, String> {
    let mut bits = 0u64;
    for item in text.split(',') {
        bits |= parse_bits_item(field, item)?;
    }
    Ok(bits)
}

fn parse_bits_item(field: Field, item: &str) -> Result<u64, String> {
    if item.is_empty() {
        return Err(format!("Value must not be empty in '{item}'"));
    }
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => (range, Some(step)),
        None => (item, None),
    };
    let (low, mut high) = parse_range(field, range)?;
    let step = match step {
        None => 1,
        Some(step) => {
            let step = parse_step(step)?;
            if !range.contains('-') {
                // `a/n` runs from `a` to the end of the field.
                high = field.range().1;
            }
            step
        }
    };
    let mut bits = 0u64;
    let mut value = low;
    while value <= high {
        bits |= 1 << value;
        value = match value.checked_add(step) {
            Some(v) => v,
            None => break,
        };
    }
    if field == Field::DayOfWeek && bits & 1 != 0 {
        // Day 0 is Sunday, which java.time numbers 7.
        bits = (bits & !1) | (1 << 7);
    }
    Ok(bits)
}

fn parse_step(text: &str) -> Result<u32, String> {
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid_number(text));
    }
    match text.parse::<u32>() {
        Ok(0) | Err(_) => Err(format!("Incrementer delta must be 1 or higher '{text}'")),
        Ok(step) => Ok(step),
    }
}

fn parse_days_of_month(text: &str) -> Result<DaysOfMonth, String> {
    let text = if text == "?" { "*" } else { text };
    let mut result = DaysOfMonth::default();
    for item in text.split(',') {
        if let Some(rest) = item.strip_prefix('L') {
            match rest {
                "" => result.before_last |= 1,
                "W" => result.last_weekday = true,
                _ => {
                    let offset = rest
                        .strip_prefix('-')
                        .filter(|n| !n.is_empty() && n.len() <= 9)
                        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|n| n.parse::<u32>().ok())
                        .ok_or_else(|| format!("Unrecognized characters after 'L' in '{item}'"))?;
                    if !(1..=MAX_LAST_OFFSET).contains(&offset) {
                        return Err(format!(
                            "Offset from the last day must be between 1 and {MAX_LAST_OFFSET} in '{item}'"
                        ));
                    }
                    result.before_last |= 1 << offset;
                }
            }
        } else if item.contains('L') {
            return Err(format!("Unrecognized characters before 'L' in '{item}'"));
        } else if let Some(day) = item.strip_suffix('W') {
            if day.is_empty() {
                return Err(format!("No day-of-month before 'W' in '{item}'"));
            }
            let day = parse_value(Field::DayOfMonth, day)?;
            result.nearest_weekday |= 1 << day;
        } else if item.contains('W') {
            return Err(format!("Unrecognized characters after 'W' in '{item}'"));
        } else {
            result.days |= parse_bits_item(Field::DayOfMonth, item)?;
        }
    }
    Ok(result)
}

fn parse_days_of_week(text: &str) -> Result<DaysOfWeek, String> {
    let text = if text == "?" { "*" } else { text };
    let mut result = DaysOfWeek::default();
    for item in text.split(',') {
        if let Some(day) = item.strip_suffix('L') {
            if day.is_empty() {
                return Err(format!("No day-of-week before 'L' in '{item}'"));
            }
            result.last |= 1 << iso_weekday(day)?;
        } else if item.contains('L') {
            return Err(format!("Unrecognized characters after 'L' in '{item}'"));
        } else if let Some((day, nth)) = item.split_once('#') {
            if day.is_empty() {
                return Err(format!("No day-of-week before '#' in '{item}'"));
            }
            let weekday = iso_weekday(day)?;
            let nth = Some(nth)
                .filter(|n| !n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| (1..=MAX_NTH).contains(n))
                .ok_or_else(|| {
                    format!("Ordinal after '#' must be between 1 and {MAX_NTH} in '{item}'")
                })?;
            result.nth |= 1 << (weekday * 8 + nth);
        } else {
            result.days |= parse_bits_item(Field::DayOfWeek, item)?;
        }
    }
    Ok(result)
}

/// A single day of week, 0 and 7 both Sunday, as ISO weekday 1-7.
fn iso_weekday(text: &str) -> Result<u32, String> {
    let day = parse_value(Field::DayOfWeek, text)?;
    Ok(if day == 0 { 7 } else { day })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Epoch milliseconds of a UTC date-time.
    fn at(y: i64, mo: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
        (civil::days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s) * 1000
    }

    fn cron(text: &str) -> Cron {
        Cron::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// Follows the expression from `start`, checking each next time in turn.
    fn sequence(text: &str, start: i64, expected: &[i64]) {
        let c = cron(text);
        let mut last = start;
        for (i, want) in expected.iter().enumerate() {
            let got = c.next_after(last);
            assert_eq!(got, Some(*want), "{text}: step {i} after {last}");
            last = *want;
        }
    }

    #[test]
    fn spring_documentation_examples() {
        // Every example in the `CronExpression.parse` Javadoc, from Thursday 2020-01-02.
        let start = at(2020, 1, 2, 10, 30, 0);
        sequence(
            "0 0 * * * *",
            start,
            &[at(2020, 1, 2, 11, 0, 0), at(2020, 1, 2, 12, 0, 0)],
        );
        sequence(
            "*/10 * * * * *",
            start,
            &[at(2020, 1, 2, 10, 30, 10), at(2020, 1, 2, 10, 30, 20)],
        );
        sequence(
            "0 0 8-10 * * *",
            start,
            &[
                at(2020, 1, 3, 8, 0, 0),
                at(2020, 1, 3, 9, 0, 0),
                at(2020, 1, 3, 10, 0, 0),
                at(2020, 1, 4, 8, 0, 0),
            ],
        );
        sequence(
            "0 0 6,19 * * *",
            start,
            &[at(2020, 1, 2, 19, 0, 0), at(2020, 1, 3, 6, 0, 0)],
        );
        sequence(
            "0 0/30 8-10 * * *",
            start,
            &[
                at(2020, 1, 3, 8, 0, 0),
                at(2020, 1, 3, 8, 30, 0),
                at(2020, 1, 3, 9, 0, 0),
                at(2020, 1, 3, 9, 30, 0),
                at(2020, 1, 3, 10, 0, 0),
                at(2020, 1, 3, 10, 30, 0),
                at(2020, 1, 4, 8, 0, 0),
            ],
        );
        sequence(
            "0 0 9-17 * * MON-FRI",
            at(2020, 1, 3, 17, 0, 0),
            &[at(2020, 1, 6, 9, 0, 0), at(2020, 1, 6, 10, 0, 0)],
        );
        sequence(
            "0 0 0 25 12 ?",
            start,
            &[at(2020, 12, 25, 0, 0, 0), at(2021, 12, 25, 0, 0, 0)],
        );
        sequence(
            "0 0 0 L * *",
            start,
            &[
                at(2020, 1, 31, 0, 0, 0),
                at(2020, 2, 29, 0, 0, 0),
                at(2020, 3, 31, 0, 0, 0),
                at(2020, 4, 30, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 L-3 * *",
            start,
            &[
                at(2020, 1, 28, 0, 0, 0),
                at(2020, 2, 26, 0, 0, 0),
                at(2020, 3, 28, 0, 0, 0),
            ],
        );
        // 2020-02-01 is a Saturday: the first weekday is Monday the 3rd.
        sequence(
            "0 0 0 1W * *",
            start,
            &[at(2020, 2, 3, 0, 0, 0), at(2020, 3, 2, 0, 0, 0)],
        );
        // 2020-05-31 is a Sunday: the last weekday is Friday the 29th.
        sequence(
            "0 0 0 LW * *",
            at(2020, 4, 30, 1, 0, 0),
            &[at(2020, 5, 29, 0, 0, 0), at(2020, 6, 30, 0, 0, 0)],
        );
        sequence(
            "0 0 0 * * 5L",
            start,
            &[at(2020, 1, 31, 0, 0, 0), at(2020, 2, 28, 0, 0, 0)],
        );
        sequence(
            "0 0 0 * * THUL",
            start,
            &[at(2020, 1, 30, 0, 0, 0), at(2020, 2, 27, 0, 0, 0)],
        );
        sequence(
            "0 0 0 ? * 5#2",
            start,
            &[at(2020, 1, 10, 0, 0, 0), at(2020, 2, 14, 0, 0, 0)],
        );
        sequence(
            "0 0 0 ? * MON#1",
            start,
            &[at(2020, 1, 6, 0, 0, 0), at(2020, 2, 3, 0, 0, 0)],
        );
    }

    #[test]
    fn spring_test_suite_cases() {
        // Cases from Spring's CronExpressionTests, which pin down its semantics.
        sequence(
            "0 0 0 29 2 *",
            at(2007, 2, 10, 0, 0, 0),
            &[at(2008, 2, 29, 0, 0, 0), at(2012, 2, 29, 0, 0, 0)],
        );
        sequence(
            "0 30 23 30 1/3 ?",
            at(2010, 12, 30, 12, 0, 0),
            &[
                at(2011, 1, 30, 23, 30, 0),
                at(2011, 4, 30, 23, 30, 0),
                at(2011, 7, 30, 23, 30, 0),
            ],
        );
        sequence(
            "0 15 12 */10 1-8 5",
            at(2021, 4, 30, 12, 14, 59),
            &[
                at(2021, 5, 21, 12, 15, 0),
                at(2021, 6, 11, 12, 15, 0),
                at(2022, 1, 21, 12, 15, 0),
            ],
        );
        sequence(
            "0 0 0 LW * *",
            at(2008, 1, 4, 12, 0, 0),
            &[
                at(2008, 1, 31, 0, 0, 0),
                at(2008, 2, 29, 0, 0, 0),
                at(2008, 3, 31, 0, 0, 0),
                at(2008, 4, 30, 0, 0, 0),
                at(2008, 5, 30, 0, 0, 0),
                at(2008, 6, 30, 0, 0, 0),
                at(2008, 7, 31, 0, 0, 0),
                at(2008, 8, 29, 0, 0, 0),
                at(2008, 9, 30, 0, 0, 0),
                at(2008, 10, 31, 0, 0, 0),
                at(2008, 11, 28, 0, 0, 0),
                at(2008, 12, 31, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 15W * ?",
            at(2020, 1, 1, 0, 0, 0),
            &[
                at(2020, 1, 15, 0, 0, 0),
                at(2020, 2, 14, 0, 0, 0),
                at(2020, 3, 16, 0, 0, 0),
                at(2020, 4, 15, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 1W * ?",
            at(2019, 12, 31, 0, 0, 0),
            &[
                at(2020, 1, 1, 0, 0, 0),
                at(2020, 2, 3, 0, 0, 0),
                at(2020, 3, 2, 0, 0, 0),
                at(2020, 4, 1, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 1W * ?",
            at(2022, 1, 1, 0, 0, 0),
            &[at(2022, 1, 3, 0, 0, 0)],
        );
        sequence(
            "0 0 0 1W * ?",
            at(2021, 8, 1, 0, 0, 0),
            &[at(2021, 8, 2, 0, 0, 0)],
        );
        // May 2020 ends on a Sunday and has no "nearest weekday" to the 31st.
        sequence(
            "0 0 0 31W * ?",
            at(2020, 1, 1, 0, 0, 0),
            &[
                at(2020, 1, 31, 0, 0, 0),
                at(2020, 3, 31, 0, 0, 0),
                at(2020, 7, 31, 0, 0, 0),
                at(2020, 8, 31, 0, 0, 0),
                at(2020, 10, 30, 0, 0, 0),
                at(2020, 12, 31, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 ? * 3#5",
            at(2020, 1, 1, 0, 0, 0),
            &[
                at(2020, 1, 29, 0, 0, 0),
                at(2020, 4, 29, 0, 0, 0),
                at(2020, 7, 29, 0, 0, 0),
                at(2020, 9, 30, 0, 0, 0),
                at(2020, 12, 30, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 1W,15,LW * ?",
            at(2019, 12, 30, 0, 0, 0),
            &[
                at(2019, 12, 31, 0, 0, 0),
                at(2020, 1, 1, 0, 0, 0),
                at(2020, 1, 15, 0, 0, 0),
                at(2020, 1, 31, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 ? * THU#1,THU#3,THU#5",
            at(2019, 12, 31, 0, 0, 0),
            &[
                at(2020, 1, 2, 0, 0, 0),
                at(2020, 1, 16, 0, 0, 0),
                at(2020, 1, 30, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 * L-1 * *",
            at(2021, 1, 29, 0, 1, 0),
            &[at(2021, 1, 30, 0, 0, 0), at(2021, 1, 30, 1, 0, 0)],
        );
        sequence(
            "0 0 * ? * FRI#5",
            at(2021, 1, 28, 0, 1, 0),
            &[at(2021, 1, 29, 0, 0, 0), at(2021, 1, 29, 1, 0, 0)],
        );
        sequence(
            "0 0 0 ? * SUN-FRI",
            at(2021, 2, 25, 15, 0, 0),
            &[at(2021, 2, 26, 0, 0, 0), at(2021, 2, 28, 0, 0, 0)],
        );
        sequence(
            "3-57 13-28 17,18 1,15 3-12 6#1",
            at(2022, 9, 15, 17, 44, 11),
            &[at(2022, 10, 1, 17, 13, 3)],
        );
        sequence(
            "*/28 56 22 */6 * *",
            at(2022, 2, 27, 8, 0, 42),
            &[at(2022, 3, 1, 22, 56, 0)],
        );
        // Friday the 13th: both day fields must match.
        sequence(
            "0 0 0 13 * FRI",
            at(2018, 7, 31, 11, 47, 14),
            &[at(2019, 9, 13, 0, 0, 0), at(2019, 12, 13, 0, 0, 0)],
        );
    }

    #[test]
    fn month_ends_and_leap_years() {
        sequence(
            "0 0 0 31 * *",
            at(2021, 1, 31, 0, 0, 0),
            &[
                at(2021, 3, 31, 0, 0, 0),
                at(2021, 5, 31, 0, 0, 0),
                at(2021, 7, 31, 0, 0, 0),
                at(2021, 8, 31, 0, 0, 0),
            ],
        );
        sequence(
            "0 0 0 * * *",
            at(2021, 9, 30, 12, 0, 0),
            &[at(2021, 10, 1, 0, 0, 0), at(2021, 10, 2, 0, 0, 0)],
        );
        sequence(
            "59 59 23 31 12 *",
            at(2021, 12, 31, 23, 59, 59),
            &[at(2022, 12, 31, 23, 59, 59)],
        );
        // 2100 is not a leap year, 2400 is.
        sequence(
            "0 0 0 29 2 *",
            at(2096, 3, 1, 0, 0, 0),
            &[at(2104, 2, 29, 0, 0, 0)],
        );
        sequence(
            "0 0 0 29 2 *",
            at(2396, 3, 1, 0, 0, 0),
            &[at(2400, 2, 29, 0, 0, 0)],
        );
        // Feb 29 on a Monday: rare, but found (2016, then 2044).
        sequence(
            "0 0 0 29 2 MON",
            at(2016, 3, 1, 0, 0, 0),
            &[at(2044, 2, 29, 0, 0, 0)],
        );
        // L-30 reaches into the month before a short February (Spring counts back from
        // the last day): Feb 28, 2021 minus 30 days is Jan 29.
        sequence(
            "0 0 0 L-30 * *",
            at(2021, 1, 2, 0, 0, 0),
            &[at(2021, 1, 29, 0, 0, 0), at(2021, 3, 1, 0, 0, 0)],
        );
    }

    #[test]
    fn strictly_after_and_sub_second_start() {
        let c = cron("* * * * * *");
        assert_eq!(c.next_after(1000), Some(2000));
        assert_eq!(c.next_after(1001), Some(2000));
        assert_eq!(c.next_after(999), Some(1000));
        assert_eq!(c.next_after(-1), Some(0));
        assert_eq!(c.next_after(-1000), Some(0));
        assert_eq!(c.next_after(-1001), Some(-1000));
        let c = cron("30 * * * * *");
        assert_eq!(c.next_after(30_000), Some(90_000));
        assert_eq!(c.next_after(29_999), Some(30_000));
    }

    #[test]
    fn never_and_far_future() {
        for text in [
            "0 0 0 30 2 *",
            "0 0 0 31 6 *",
            "0 0 0 31 2,4,6,9,11 *",
            "0 0 0 30W 2 *",
            "0 0 0 29 2 SUN#1",
        ] {
            assert_eq!(cron(text).next_after(0), None, "{text}");
        }
        // Some Februaries do have five Mondays (2016, 2044, ...).
        assert_eq!(
            cron("0 0 0 ? 2 MON#5").next_after(at(2016, 3, 1, 0, 0, 0)),
            Some(at(2044, 2, 29, 0, 0, 0))
        );
        assert_eq!(
            cron("0 0 0 29 2 MON#5").next_after(at(2016, 3, 1, 0, 0, 0)),
            Some(at(2044, 2, 29, 0, 0, 0))
        );
        assert_eq!(cron("* * * * * *").next_after(i64::MAX), None);
        assert_eq!(
            cron("* * * * * *").next_after(i64::MAX - 1_000),
            Some(i64::MAX / 1000 * 1000)
        );
        assert_eq!(cron("* * * * * *").next_after(i64::MAX / 1000 * 1000), None);
        assert_eq!(
            cron("* * * * * *").next_after(i64::MIN),
            Some((i64::MIN.div_euclid(1000) + 1) * 1000)
        );
    }

    #[test]
    fn macros_and_names() {
        assert_eq!(cron("@yearly"), cron("0 0 0 1 1 *"));
        assert_eq!(cron("@ANNUALLY"), cron("0 0 0 1 1 *"));
        assert_eq!(cron("@monthly"), cron("0 0 0 1 * *"));
        assert_eq!(cron("@weekly"), cron("0 0 0 * * 0"));
        assert_eq!(cron("@daily"), cron("0 0 0 * * *"));
        assert_eq!(cron(" @midnight\n"), cron("0 0 0 * * *"));
        assert_eq!(cron("@hourly"), cron("0 0 * * * *"));
        assert_eq!(cron("0 0 0 * JAN-MAR MON"), cron("0 0 0 * 1-3 1"));
        assert_eq!(cron("0 0 0 * * sun"), cron("0 0 0 * * 7"));
        assert_eq!(cron("0 0 0 * * 0"), cron("0 0 0 * * 7"));
        assert_eq!(cron("0 0 0 * * SUN-SAT"), cron("0 0 0 * * *"));
        assert_eq!(cron("0 0 0 * * 0-7"), cron("0 0 0 * * *"));
        assert_eq!(cron("0 0 0 * * */2"), cron("0 0 0 * * MON,WED,FRI,SUN"));
        assert_eq!(cron("0 0 0 * * 0/2"), cron("0 0 0 * * SUN,TUE,THU,SAT"));
        assert_eq!(cron("0 0 0 ? * ?"), cron("0 0 0 * * *"));
        assert_eq!(cron("0\t0 0  *\n* *"), cron("0 0 0 * * *"));
        assert_eq!(cron("5/20 * * * * *"), cron("5,25,45 * * * * *"));
        assert_eq!(cron("0 0 */5 * * *"), cron("0 0 0,5,10,15,20 * * *"));
        assert_eq!(cron("0 0 0 * 2/5 *"), cron("0 0 0 * 2,7,12 *"));
        assert_eq!(cron("0 0 0 * * 0l"), cron("0 0 0 * * SUNL"));
    }

    #[test]
    fn error_messages() {
        for (text, message) in [
            ("", "Empty expression!"),
            ("  \t ", "Empty expression!"),
            (
                "foo",
                "Cron expression contains 1 parts but we expect one of [6]",
            ),
            (
                "* * * * *",
                "Cron expression contains 5 parts but we expect one of [6]",
            ),
            (
                "* * * * * * *",
                "Cron expression contains 7 parts but we expect one of [6]",
            ),
            (
                "1, * * * * *",
                "Invalid field value! Trailing commas not permitted! '1,'",
            ),
            (
                "60 * * * * *",
                "Failed to parse '60 * * * * *'. Invalid value for SecondOfMinute (valid values 0 - 59): 60",
            ),
            (
                "* * 24 * * *",
                "Failed to parse '* * 24 * * *'. Invalid value for HourOfDay (valid values 0 - 23): 24",
            ),
            (
                "* * * 0 * *",
                "Failed to parse '* * * 0 * *'. Invalid value for DayOfMonth (valid values 1 - 31): 0",
            ),
            (
                "* * * * 13 *",
                "Failed to parse '* * * * 13 *'. Invalid value for MonthOfYear (valid values 1 - 12): 13",
            ),
            (
                "* * * * * 8",
                "Failed to parse '* * * * * 8'. Invalid value for DayOfWeek (valid values 0 - 7): 8",
            ),
            (
                "* * * * * FRI-MON",
                "Failed to parse '* * * * * FRI-MON'. Minimum value must be less than maximum value 'FRI-MON'",
            ),
            (
                "*/0 * * * * *",
                "Failed to parse '*/0 * * * * *'. Incrementer delta must be 1 or higher '0'",
            ),
            (
                "a * * * * *",
                "Failed to parse 'a * * * * *'. For input string: \"A\"",
            ),
        ] {
            assert_eq!(Cron::parse(text), Err(message.to_string()), "{text}");
        }
        for text in [
            "? * * * * *",
            "* * * * ? *",
            "* * * 1-L * *",
            "* * * L-0 * *",
            "* * * L-31 * *",
            "* * * L3 * *",
            "* * * W * *",
            "* * * 1W2 * *",
            "* * * 32W * *",
            "* * * 1-5W * *",
            "* * * * * L",
            "* * * * * 5L2",
            "* * * * * #2",
            "* * * * * 5#0",
            "* * * * * 5#6",
            "* * * * * 5#",
            "* * * * * 8L",
            "* * * * JAN-FOO *",
            "* * * * * MONDAY",
            "*/ * * * * *",
            "1/2/3 * * * * *",
            "1-2-3 * * * * *",
            "-1 * * * * *",
            "+1 * * * * *",
            "* * * ,1 * *",
            "* * * 1,,2 * *",
            "99999999999 * * * * *",
            "*/99999999999 * * * * *",
            "MON * * * * *",
            "@reboot",
            "@every 5m",
            "0 0 0 * * 1|2",
        ] {
            assert!(Cron::parse(text).is_err(), "{text}");
        }
    }
}
