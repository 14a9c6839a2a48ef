//! The string forms of temporal values, as FEEL's `string()` and the DMN TCK expect them:
//! `2017-08-10T10:20:00@Europe/Paris`, `11:59:45+02:45:55`, `P2DT1H40M`, `-P8Y4M`.

use std::fmt::{self, Write};

use super::{
    Date, DateTime, DayTimeDuration, LocalTime, NANOS_PER_SECOND, Time, YearMonthDuration, Zone,
};

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let y = self.year();
        if y < 0 {
            f.write_char('-')?;
        }
        write!(f, "{:04}-{:02}-{:02}", y.abs(), self.month(), self.day())
    }
}

fn write_fraction(f: &mut impl Write, nanos: u32) -> fmt::Result {
    if nanos == 0 {
        return Ok(());
    }
    let digits = format!("{nanos:09}");
    write!(f, ".{}", digits.trim_end_matches('0'))
}

impl fmt::Display for LocalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}:{:02}",
            self.hour(),
            self.minute(),
            self.second()
        )?;
        write_fraction(f, self.nano())
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(tz) = self.id {
            return write!(f, "@{}", tz.name());
        }
        write_offset(f, self.offset)
    }
}

/// `Z`, `+01:00` or `+02:45:55`.
pub fn write_offset(f: &mut impl Write, offset: i32) -> fmt::Result {
    if offset == 0 {
        return f.write_char('Z');
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.unsigned_abs();
    write!(f, "{sign}{:02}:{:02}", a / 3600, (a / 60) % 60)?;
    if !a.is_multiple_of(60) {
        write!(f, ":{:02}", a % 60)?;
    }
    Ok(())
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.local)?;
        match self.zone {
            Some(z) => write!(f, "{z}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T{}", self.date, self.time)?;
        match self.zone {
            Some(z) => write!(f, "{z}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for DayTimeDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("PT0S");
        }
        if self.0 < 0 {
            f.write_char('-')?;
        }
        let total = self.0.unsigned_abs();
        let ns = NANOS_PER_SECOND as u128;
        let secs = total / ns;
        let frac = (total % ns) as u32;
        let days = secs / 86_400;
        let hours = (secs / 3600) % 24;
        let minutes = (secs / 60) % 60;
        let seconds = secs % 60;
        f.write_char('P')?;
        if days > 0 {
            write!(f, "{days}D")?;
        }
        if hours > 0 || minutes > 0 || seconds > 0 || frac > 0 {
            f.write_char('T')?;
            if hours > 0 {
                write!(f, "{hours}H")?;
            }
            if minutes > 0 {
                write!(f, "{minutes}M")?;
            }
            if seconds > 0 || frac > 0 {
                write!(f, "{seconds}")?;
                write_fraction(f, frac)?;
                f.write_char('S')?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for YearMonthDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("P0M");
        }
        if self.0 < 0 {
            f.write_char('-')?;
        }
        let total = self.0.unsigned_abs();
        f.write_char('P')?;
        if total / 12 > 0 {
            write!(f, "{}Y", total / 12)?;
        }
        if !total.is_multiple_of(12) {
            write!(f, "{}M", total % 12)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::temporal::{Duration, parse_date_time, parse_duration, parse_time};

    fn dur(s: &str) -> String {
        match parse_duration(s).unwrap() {
            Duration::YearMonth(d) => d.to_string(),
            Duration::DayTime(d) => d.to_string(),
        }
    }

    #[test]
    fn durations_are_normalized() {
        assert_eq!(dur("PT1000M"), "PT16H40M");
        assert_eq!(dur("PT24H"), "P1D");
        assert_eq!(dur("P2DT274M"), "P2DT4H34M");
        assert_eq!(dur("PT1000M0.999999999S"), "PT16H40M0.999999999S");
        assert_eq!(dur("PT0.000S"), "PT0S");
        assert_eq!(dur("-P100M"), "-P8Y4M");
        assert_eq!(dur("P0Y"), "P0M");
    }

    #[test]
    fn times_and_date_times() {
        assert_eq!(
            parse_time("11:22:33-00:00", 0).unwrap().to_string(),
            "11:22:33Z"
        );
        assert_eq!(
            parse_date_time("2011-12-31T10:15:30.987@Europe/Paris", 0)
                .unwrap()
                .to_string(),
            "2011-12-31T10:15:30.987@Europe/Paris"
        );
        assert_eq!(
            parse_date_time("-999999999-12-31T23:59:59.999999999+02:00", 0)
                .unwrap()
                .to_string(),
            "-999999999-12-31T23:59:59.999999999+02:00"
        );
        assert_eq!(
            parse_date_time("2012-12-24", 0).unwrap().to_string(),
            "2012-12-24T00:00:00"
        );
    }
}
