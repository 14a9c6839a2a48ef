//! Proleptic Gregorian calendar arithmetic on plain integers.
//!
//! FEEL dates span years -999,999,999 to 999,999,999 (as `java.time.LocalDate` does), far
//! beyond what chrono or jiff represent, so the calendar math is done here with Howard
//! Hinnant's days-from-civil algorithms, which are exact over the whole `i64` range we use.

/// Days since 1970-01-01 of a valid civil date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        _ => 28,
    }
}

/// ISO weekday, Monday = 1 ... Sunday = 7.
pub fn weekday(days: i64) -> u32 {
    // 1970-01-01 was a Thursday (4).
    ((days + 3).rem_euclid(7) + 1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for days in [-1_000_000_000_i64, -719_468, -1, 0, 1, 17_000, 365_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn weekdays_and_leap_years() {
        assert_eq!(weekday(days_from_civil(2024, 1, 1)), 1);
        assert_eq!(weekday(days_from_civil(2019, 9, 17)), 2);
        assert!(is_leap_year(2000) && !is_leap_year(1900) && is_leap_year(-4));
        assert_eq!(days_in_month(2024, 2), 29);
    }
}
