//! FEEL's temporal values: date, time (local or zoned), date and time (local or zoned), and
//! the two duration kinds, with their arithmetic.
//!
//! Semantics follow java.time as feel-scala uses it (zone resolution, month arithmetic that
//! clamps to the end of the month), with the value range of `LocalDate` (years
//! ±999,999,999). Nothing here reads the wall clock: a time with a zone id but no date needs
//! "the current" standard offset, and the caller passes the instant to use.

pub mod civil;
mod format;
mod parse;
pub mod zone;

pub use chrono_tz::Tz;
pub use format::write_offset;
pub use parse::{parse_date, parse_date_time, parse_duration, parse_time};

pub const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;
pub const MIN_YEAR: i64 = -999_999_999;
pub const MAX_YEAR: i64 = 999_999_999;
/// Offsets are limited to ±18:00 like `java.time.ZoneOffset`.
pub const MAX_OFFSET_SECONDS: i32 = 18 * 3600;

/// A calendar date without a time zone.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

impl Date {
    /// A valid date, or `None` (month 13, February 30, a year out of range...).
    pub fn new(year: i64, month: i64, day: i64) -> Option<Date> {
        if !(MIN_YEAR..=MAX_YEAR).contains(&year) || !(1..=12).contains(&month) || day < 1 {
            return None;
        }
        if day > i64::from(civil::days_in_month(year, month as u32)) {
            return None;
        }
        Some(Date {
            year: year as i32,
            month: month as u8,
            day: day as u8,
        })
    }

    pub fn year(self) -> i64 {
        i64::from(self.year)
    }

    pub fn month(self) -> u32 {
        u32::from(self.month)
    }

    pub fn day(self) -> u32 {
        u32::from(self.day)
    }

    /// Days since 1970-01-01.
    pub fn epoch_days(self) -> i64 {
        civil::days_from_civil(self.year(), self.month(), self.day())
    }

    pub fn from_epoch_days(days: i64) -> Option<Date> {
        // Beyond ±1,000,000,000 years the civil arithmetic could overflow; no date lives
        // there anyway.
        if days.unsigned_abs() > 366_000_000_000 {
            return None;
        }
        let (y, m, d) = civil::civil_from_days(days);
        Date::new(y, i64::from(m), i64::from(d))
    }

    /// ISO weekday, Monday = 1.
    pub fn weekday(self) -> u32 {
        civil::weekday(self.epoch_days())
    }

    pub fn day_of_year(self) -> u32 {
        (self.epoch_days() - civil::days_from_civil(self.year(), 1, 1) + 1) as u32
    }

    /// ISO-8601 week of the week-based year.
    pub fn iso_week(self) -> u32 {
        let days = self.epoch_days();
        // The Thursday of this week decides the week-based year.
        let thursday = days - i64::from(self.weekday()) + 4;
        let (wy, _, _) = civil::civil_from_days(thursday);
        let jan1 = civil::days_from_civil(wy, 1, 1);
        ((thursday - jan1) / 7 + 1) as u32
    }

    pub fn last_day_of_month(self) -> u32 {
        civil::days_in_month(self.year(), self.month())
    }

    /// Adds months, clamping the day to the end of the target month (Jan 31 + 1 month =
    /// Feb 28/29), as `LocalDate.plusMonths` does.
    pub fn plus_months(self, months: i64) -> Option<Date> {
        let total = (self.year() * 12 + i64::from(self.month()) - 1).checked_add(months)?;
        let year = total.div_euclid(12);
        let month = total.rem_euclid(12) + 1;
        if !(MIN_YEAR..=MAX_YEAR).contains(&year) {
            return None;
        }
        let day = self.day().min(civil::days_in_month(year, month as u32));
        Date::new(year, month, i64::from(day))
    }

    pub fn plus_days(self, days: i64) -> Option<Date> {
        Date::from_epoch_days(self.epoch_days().checked_add(days)?)
    }
}

/// A time of day without zone, nanosecond precision.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct LocalTime {
    nanos: i64,
}

impl LocalTime {
    pub const MIDNIGHT: LocalTime = LocalTime { nanos: 0 };

    pub fn new(hour: i64, minute: i64, second: i64, nano: i64) -> Option<LocalTime> {
        if !(0..24).contains(&hour)
            || !(0..60).contains(&minute)
            || !(0..60).contains(&second)
            || !(0..NANOS_PER_SECOND).contains(&nano)
        {
            return None;
        }
        Some(LocalTime {
            nanos: ((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + nano,
        })
    }

    /// From nanoseconds since midnight, wrapping around the day.
    pub fn from_nanos_wrapping(nanos: i128) -> LocalTime {
        LocalTime {
            nanos: nanos.rem_euclid(i128::from(NANOS_PER_DAY)) as i64,
        }
    }

    pub fn nanos_of_day(self) -> i64 {
        self.nanos
    }

    pub fn hour(self) -> u32 {
        (self.nanos / (3600 * NANOS_PER_SECOND)) as u32
    }

    pub fn minute(self) -> u32 {
        ((self.nanos / (60 * NANOS_PER_SECOND)) % 60) as u32
    }

    pub fn second(self) -> u32 {
        ((self.nanos / NANOS_PER_SECOND) % 60) as u32
    }

    pub fn nano(self) -> u32 {
        (self.nanos % NANOS_PER_SECOND) as u32
    }
}

/// A zone: a fixed offset, or an IANA zone id together with the offset it resolved to for
/// the value at hand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Zone {
    /// Seconds east of UTC.
    pub offset: i32,
    pub id: Option<Tz>,
}

impl Zone {
    pub const UTC: Zone = Zone {
        offset: 0,
        id: None,
    };

    pub fn fixed(offset: i32) -> Option<Zone> {
        if offset.abs() > MAX_OFFSET_SECONDS {
            None
        } else {
            Some(Zone { offset, id: None })
        }
    }
}

/// A time of day, local or with a zone.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Time {
    pub local: LocalTime,
    pub zone: Option<Zone>,
}

impl Time {
    /// Nanoseconds since midnight UTC for a zoned time (may leave the 0..24h range, as in
    /// feel-scala's `ZonedTime`), or the local nanoseconds for a local time.
    pub fn comparable_nanos(self) -> i64 {
        match self.zone {
            Some(z) => self.local.nanos - i64::from(z.offset) * NANOS_PER_SECOND,
            None => self.local.nanos,
        }
    }

    pub fn plus_nanos(self, nanos: i128) -> Time {
        // Reduce first: a duration may be near the i128 limit.
        let shift = nanos.rem_euclid(i128::from(NANOS_PER_DAY));
        Time {
            local: LocalTime::from_nanos_wrapping(i128::from(self.local.nanos) + shift),
            zone: self.zone,
        }
    }
}

/// A date and time, local or with a zone.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DateTime {
    pub date: Date,
    pub time: LocalTime,
    pub zone: Option<Zone>,
}

impl DateTime {
    pub fn local(date: Date, time: LocalTime) -> DateTime {
        DateTime {
            date,
            time,
            zone: None,
        }
    }

    /// Nanoseconds since the epoch of the local date-time read as UTC.
    pub fn local_nanos(self) -> i128 {
        i128::from(self.date.epoch_days()) * i128::from(NANOS_PER_DAY) + i128::from(self.time.nanos)
    }

    /// The instant (nanoseconds since the epoch) of a zoned date-time.
    pub fn instant_nanos(self) -> Option<i128> {
        self.zone
            .map(|z| self.local_nanos() - i128::from(z.offset) * i128::from(NANOS_PER_SECOND))
    }

    fn from_local_nanos(nanos: i128, zone: Option<Zone>) -> Option<DateTime> {
        let days = nanos.div_euclid(i128::from(NANOS_PER_DAY));
        let tod = nanos.rem_euclid(i128::from(NANOS_PER_DAY)) as i64;
        let date = Date::from_epoch_days(i64::try_from(days).ok()?)?;
        Some(DateTime {
            date,
            time: LocalTime { nanos: tod },
            zone,
        })
    }

    /// Builds a date-time from local fields and a zone spec, resolving the offset of a
    /// zone id with the zone rules (gaps move forward, overlaps take the earlier offset).
    pub fn resolve(date: Date, time: LocalTime, zone: Option<Zone>) -> Option<DateTime> {
        let dt = DateTime { date, time, zone };
        match zone {
            Some(Zone { id: Some(tz), .. }) => {
                let local = dt.local_nanos();
                let secs = i64::try_from(local.div_euclid(i128::from(NANOS_PER_SECOND))).ok()?;
                let sub = local.rem_euclid(i128::from(NANOS_PER_SECOND));
                let (offset, adjusted) = zone::resolve_local(tz, secs);
                DateTime::from_local_nanos(
                    i128::from(adjusted) * i128::from(NANOS_PER_SECOND) + sub,
                    Some(Zone {
                        offset,
                        id: Some(tz),
                    }),
                )
            }
            _ => Some(dt),
        }
    }

    /// The date-time at an instant, seen in a zone (a zone id gets the offset valid then).
    pub fn at_instant(instant_nanos: i128, zone: Zone) -> Option<DateTime> {
        let offset = match zone.id {
            Some(tz) => {
                let secs =
                    i64::try_from(instant_nanos.div_euclid(i128::from(NANOS_PER_SECOND))).ok()?;
                zone::offset_at_instant(tz, secs)
            }
            None => zone.offset,
        };
        DateTime::from_local_nanos(
            instant_nanos + i128::from(offset) * i128::from(NANOS_PER_SECOND),
            Some(Zone {
                offset,
                id: zone.id,
            }),
        )
    }

    /// Adds an exact duration: on the instant for zoned values (so a zone id may change
    /// offset across a DST switch), on the local fields otherwise.
    pub fn plus_nanos(self, nanos: i128) -> Option<DateTime> {
        match (self.instant_nanos(), self.zone) {
            (Some(instant), Some(zone)) => DateTime::at_instant(instant.checked_add(nanos)?, zone),
            _ => DateTime::from_local_nanos(self.local_nanos().checked_add(nanos)?, None),
        }
    }

    /// Adds calendar months to the local date and re-resolves the zone.
    pub fn plus_months(self, months: i64) -> Option<DateTime> {
        let date = self.date.plus_months(months)?;
        DateTime::resolve(date, self.time, self.zone)
    }

    pub fn time_value(self) -> Time {
        Time {
            local: self.time,
            zone: self.zone,
        }
    }
}

/// A days-and-time duration, in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct DayTimeDuration(pub i128);

impl DayTimeDuration {
    pub fn from_seconds(secs: i64) -> DayTimeDuration {
        DayTimeDuration(i128::from(secs) * i128::from(NANOS_PER_SECOND))
    }

    fn part(self, unit: i128, modulo: Option<i128>) -> i128 {
        let whole = self.0 / (unit * i128::from(NANOS_PER_SECOND));
        match modulo {
            Some(m) => whole % m,
            None => whole,
        }
    }

    pub fn days(self) -> i128 {
        self.part(86_400, None)
    }

    pub fn hours(self) -> i128 {
        self.part(3600, Some(24))
    }

    pub fn minutes(self) -> i128 {
        self.part(60, Some(60))
    }

    pub fn seconds(self) -> i128 {
        self.part(1, Some(60))
    }
}

/// A years-and-months duration, in months.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct YearMonthDuration(pub i64);

impl YearMonthDuration {
    pub fn years(self) -> i64 {
        self.0 / 12
    }

    pub fn months(self) -> i64 {
        self.0 % 12
    }

    /// Whole months between two dates, as `Period.between(...).toTotalMonths()`.
    pub fn between(from: Date, to: Date) -> YearMonthDuration {
        let mut months =
            (to.year() - from.year()) * 12 + i64::from(to.month()) - i64::from(from.month());
        if months > 0 && to.day() < from.day() {
            months -= 1;
        } else if months < 0 && to.day() > from.day() {
            months += 1;
        }
        YearMonthDuration(months)
    }
}

/// A parsed duration string: FEEL has two duration types and the string decides which.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Duration {
    YearMonth(YearMonthDuration),
    DayTime(DayTimeDuration),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn month_arithmetic_clamps() {
        let d = Date::new(2021, 1, 31).unwrap();
        assert_eq!(d.plus_months(1), Date::new(2021, 2, 28));
        assert_eq!(d.plus_months(-2), Date::new(2020, 11, 30));
    }

    #[test]
    fn week_of_year() {
        assert_eq!(Date::new(2019, 9, 17).unwrap().iso_week(), 38);
        assert_eq!(Date::new(2003, 12, 29).unwrap().iso_week(), 1);
        assert_eq!(Date::new(2005, 1, 1).unwrap().iso_week(), 53);
        assert_eq!(Date::new(2019, 9, 17).unwrap().day_of_year(), 260);
    }

    #[test]
    fn months_between() {
        let a = Date::new(2011, 12, 22).unwrap();
        let b = Date::new(2013, 8, 24).unwrap();
        assert_eq!(YearMonthDuration::between(a, b).0, 20);
        assert_eq!(YearMonthDuration::between(b, a).0, -20);
    }

    #[test]
    fn zoned_addition_crosses_dst() {
        let dt = parse_date_time("2021-03-27T12:00:00@Europe/Paris", 0).unwrap();
        let next = dt.plus_nanos(i128::from(NANOS_PER_DAY)).unwrap();
        assert_eq!(next.to_string(), "2021-03-28T13:00:00@Europe/Paris");
    }
}
