//! Parsing of the ISO-8601 / XML Schema forms FEEL accepts for temporal values.
//! Strict: two-digit fields, years of at least four digits without a leading zero when
//! longer, offsets within ±18:00, and never both an offset and a zone id.

use super::{
    Date, DateTime, DayTimeDuration, Duration, LocalTime, NANOS_PER_SECOND, Time,
    YearMonthDuration, Zone, zone,
};

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Cursor<'a> {
        Cursor {
            s: s.as_bytes(),
            i: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn done(&self) -> bool {
        self.i == self.s.len()
    }

    fn digits(&mut self) -> &'a [u8] {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    /// Exactly `n` digits.
    fn fixed(&mut self, n: usize) -> Option<i64> {
        let d = self.digits();
        if d.len() != n {
            return None;
        }
        number(d)
    }

    fn rest(&self) -> &'a [u8] {
        &self.s[self.i..]
    }
}

fn number(d: &[u8]) -> Option<i64> {
    if d.is_empty() || d.len() > 18 {
        return None;
    }
    d.iter()
        .try_fold(0i64, |acc, &c| Some(acc * 10 + i64::from(c - b'0')))
}

fn date_part(c: &mut Cursor) -> Option<Date> {
    let negative = c.eat(b'-');
    let y = c.digits();
    if y.len() < 4 || (y.len() > 4 && y[0] == b'0') {
        return None;
    }
    let year = number(y)?;
    if !c.eat(b'-') {
        return None;
    }
    let month = c.fixed(2)?;
    if !c.eat(b'-') {
        return None;
    }
    let day = c.fixed(2)?;
    Date::new(if negative { -year } else { year }, month, day)
}

/// `HH:MM[:SS[.fffffffff]]`; the seconds are optional as in feel-scala (`time("13:30")`).
fn local_time_part(c: &mut Cursor) -> Option<LocalTime> {
    let h = c.fixed(2)?;
    if !c.eat(b':') {
        return None;
    }
    let m = c.fixed(2)?;
    let mut s = 0;
    let mut nanos = 0;
    if c.eat(b':') {
        s = c.fixed(2)?;
        if c.eat(b'.') {
            let f = c.digits();
            if f.is_empty() || f.len() > 9 {
                return None;
            }
            nanos = number(f)? * 10i64.pow((9 - f.len()) as u32);
        }
    }
    LocalTime::new(h, m, s, nanos)
}

enum ZonePart {
    None,
    Offset(i32),
    Id(chrono_tz::Tz),
}

fn zone_part(c: &mut Cursor) -> Option<ZonePart> {
    match c.peek() {
        None => Some(ZonePart::None),
        Some(b'Z') => {
            c.i += 1;
            Some(ZonePart::Offset(0))
        }
        Some(sign @ (b'+' | b'-')) => {
            c.i += 1;
            let h = c.fixed(2)?;
            if !c.eat(b':') {
                return None;
            }
            let m = c.fixed(2)?;
            let s = if c.eat(b':') { c.fixed(2)? } else { 0 };
            if m >= 60 || s >= 60 {
                return None;
            }
            let total = (h * 3600 + m * 60 + s) as i32;
            let offset = if sign == b'-' { -total } else { total };
            Zone::fixed(offset).map(|z| ZonePart::Offset(z.offset))
        }
        Some(b'@') => {
            c.i += 1;
            let id = std::str::from_utf8(c.rest()).ok()?;
            c.i = c.s.len();
            zone::parse_zone_id(id).map(ZonePart::Id)
        }
        Some(_) => None,
    }
}

pub fn parse_date(s: &str) -> Option<Date> {
    let mut c = Cursor::new(s);
    let d = date_part(&mut c)?;
    c.done().then_some(d)
}

/// A time. A zone id has no date to resolve against, so it gets the zone's standard offset
/// at `reference_epoch_secs` (feel-scala uses "now"; we use the evaluation clock).
pub fn parse_time(s: &str, reference_epoch_secs: i64) -> Option<Time> {
    let mut c = Cursor::new(s);
    let local = local_time_part(&mut c)?;
    let zone = match zone_part(&mut c)? {
        ZonePart::None => None,
        ZonePart::Offset(o) => Some(Zone {
            offset: o,
            id: None,
        }),
        ZonePart::Id(tz) => Some(Zone {
            offset: zone::standard_offset(tz, reference_epoch_secs),
            id: Some(tz),
        }),
    };
    c.done().then_some(Time { local, zone })
}

/// A date and time, or a date alone (then midnight, local). The second argument is unused
/// for date-times but keeps the signature parallel to `parse_time`.
pub fn parse_date_time(s: &str, _reference_epoch_secs: i64) -> Option<DateTime> {
    let mut c = Cursor::new(s);
    let date = date_part(&mut c)?;
    if c.done() {
        return Some(DateTime::local(date, LocalTime::MIDNIGHT));
    }
    if !c.eat(b'T') {
        return None;
    }
    // `24:00:00` is the end of the day, i.e. the next day's midnight (ISO 8601 and XML
    // Schema allow it in date-times).
    let (date, time) = if c.rest().starts_with(b"24:00:00")
        && !c
            .rest()
            .get(8)
            .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
    {
        c.i += 8;
        (date.plus_days(1)?, LocalTime::MIDNIGHT)
    } else {
        (date, local_time_part(&mut c)?)
    };
    let zone = match zone_part(&mut c)? {
        ZonePart::None => None,
        ZonePart::Offset(o) => Some(Zone {
            offset: o,
            id: None,
        }),
        ZonePart::Id(tz) => Some(Zone {
            offset: 0,
            id: Some(tz),
        }),
    };
    if !c.done() {
        return None;
    }
    DateTime::resolve(date, time, zone)
}

/// An ISO-8601 duration. `P1Y2M` is a years-and-months duration, `P1DT2H` a
/// days-and-time duration; mixing both kinds is not a FEEL value and gives `None`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let mut c = Cursor::new(s);
    let negative = c.eat(b'-');
    if !c.eat(b'P') {
        return None;
    }
    let mut months: i128 = 0;
    let mut nanos: i128 = 0;
    let mut any_ym = false;
    let mut any_dt = false;
    let mut in_time = false;
    // Designators must appear in order; `order` tracks the last one seen.
    let mut order = 0;
    while !c.done() {
        if c.eat(b'T') {
            if in_time {
                return None;
            }
            in_time = true;
            if c.done() {
                return None;
            }
            continue;
        }
        let int = c.digits();
        if int.is_empty() {
            return None;
        }
        let value = i128::from(number(int)?);
        let mut frac_nanos: i128 = 0;
        let mut has_frac = false;
        if c.eat(b'.') {
            has_frac = true;
            let f = c.digits();
            if f.len() > 9 {
                return None;
            }
            if !f.is_empty() {
                frac_nanos = i128::from(number(f)?) * 10i128.pow((9 - f.len()) as u32);
            }
        }
        let designator = c.peek()?;
        c.i += 1;
        let (rank, ok_frac) = match (in_time, designator) {
            (false, b'Y') => (1, false),
            (false, b'M') => (2, false),
            (false, b'D') => (3, false),
            (true, b'H') => (4, false),
            (true, b'M') => (5, false),
            (true, b'S') => (6, true),
            _ => return None,
        };
        if rank <= order || (has_frac && !ok_frac) {
            return None;
        }
        order = rank;
        let secs = i128::from(NANOS_PER_SECOND);
        match rank {
            1 => {
                months += value * 12;
                any_ym = true;
            }
            2 => {
                months += value;
                any_ym = true;
            }
            3 => {
                nanos += value * 86_400 * secs;
                any_dt = true;
            }
            4 => {
                nanos += value * 3600 * secs;
                any_dt = true;
            }
            5 => {
                nanos += value * 60 * secs;
                any_dt = true;
            }
            _ => {
                nanos += value * secs + frac_nanos;
                any_dt = true;
            }
        }
    }
    match (any_ym, any_dt) {
        (true, false) => {
            let m = i64::try_from(if negative { -months } else { months }).ok()?;
            Some(Duration::YearMonth(YearMonthDuration(m)))
        }
        (false, true) => Some(Duration::DayTime(DayTimeDuration(if negative {
            -nanos
        } else {
            nanos
        }))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("2017-12-31"), Date::new(2017, 12, 31));
        assert_eq!(parse_date("-2017-01-01"), Date::new(-2017, 1, 1));
        assert_eq!(
            parse_date("999999999-12-31"),
            Date::new(999_999_999, 12, 31)
        );
        for bad in [
            "998-12-31",
            "01211-12-31",
            "+2012-12-02",
            "2017-13-10",
            "2017-02-29",
            "2012-12-25T",
            "9999999999-12-25",
            "",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn times() {
        let t = parse_time("13:20:00+02:00", 0).unwrap();
        assert_eq!(t.zone.unwrap().offset, 7200);
        assert_eq!(
            parse_time("11:22:33.123456789", 0).unwrap().local.nano(),
            123_456_789
        );
        assert_eq!(parse_time("13:30", 0).unwrap().local.minute(), 30);
        for bad in [
            "24:00:01",
            "7:00:00",
            "00:60:00",
            "13:20:00+19:00",
            "13:20:00+5:00",
            "13:20:00+02:00@Europe/Paris",
            "13:20:00@xyz/abc",
            "11:30:00T",
        ] {
            assert_eq!(parse_time(bad, 0), None, "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("P1Y2M"),
            Some(Duration::YearMonth(YearMonthDuration(14)))
        );
        assert_eq!(
            parse_duration("-PT1H2M"),
            Some(Duration::DayTime(DayTimeDuration(-3_720 * 1_000_000_000)))
        );
        assert_eq!(
            parse_duration("PT0.S"),
            Some(Duration::DayTime(DayTimeDuration(0)))
        );
        for bad in ["P", "P0", "1Y", "P1H", "P1S", "PT", "P1Y1D", "PT1M1H"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
