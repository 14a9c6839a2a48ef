//! Time-zone rules (IANA tz database compiled into the binary by chrono-tz, so results do
//! not depend on the machine's zoneinfo files).
//!
//! FEEL years reach ±999,999,999, far beyond chrono's range and the years the compiled
//! transition tables list; see `into_range` for how such years are answered.

use chrono::{NaiveDate, NaiveDateTime, Offset, TimeZone};
use chrono_tz::{OffsetComponents, Tz};

use super::civil;

const SECS_PER_DAY: i64 = 86_400;

/// The last year whose transitions the compiled tables list explicitly.
const LAST_TABLE_YEAR: i64 = 2037;

pub fn parse_zone_id(id: &str) -> Option<Tz> {
    id.parse::<Tz>().ok()
}

/// Maps an instant (or local seconds) to one with the same month, day, time and weekday in
/// a year the tables cover. Past years move by whole 400-year Gregorian cycles (before a
/// zone's first transition its offset is constant anyway). Future years beyond the tables
/// move to a year between 2010 and 2037 with the same calendar (leap year and weekday of
/// January 1st), where the zone's current yearly rule gives the same transitions, as
/// `java.time` would compute from that rule.
fn into_range(secs: i64) -> i64 {
    let days = secs.div_euclid(SECS_PER_DAY);
    let sod = secs.rem_euclid(SECS_PER_DAY);
    let (y, m, d) = civil::civil_from_days(days);
    let target = if y > LAST_TABLE_YEAR {
        let y400 = 2000 + (y - 2000).rem_euclid(400);
        if y400 <= LAST_TABLE_YEAR {
            y400
        } else {
            let leap = civil::is_leap_year(y);
            let jan1 = civil::weekday(civil::days_from_civil(y, 1, 1));
            (2010..=LAST_TABLE_YEAR)
                .find(|c| {
                    civil::is_leap_year(*c) == leap
                        && civil::weekday(civil::days_from_civil(*c, 1, 1)) == jan1
                })
                .unwrap_or(y400)
        }
    } else if y < 1600 {
        1600 + (y - 1600).rem_euclid(400)
    } else {
        y
    };
    if target == y {
        return secs;
    }
    civil::days_from_civil(target, m, d) * SECS_PER_DAY + sod
}

fn naive(secs: i64) -> Option<NaiveDateTime> {
    let days = secs.div_euclid(SECS_PER_DAY);
    let sod = secs.rem_euclid(SECS_PER_DAY) as u32;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    let date = epoch.checked_add_signed(chrono::TimeDelta::try_days(days)?)?;
    date.and_hms_opt(sod / 3600, (sod / 60) % 60, sod % 60)
}

/// Offset (seconds east of UTC) in effect at an instant.
pub fn offset_at_instant(tz: Tz, epoch_secs: i64) -> i32 {
    match naive(into_range(epoch_secs)) {
        Some(n) => tz.offset_from_utc_datetime(&n).fix().local_minus_utc(),
        None => 0,
    }
}

/// The zone's standard offset (without daylight saving) at an instant. feel-scala gives a
/// time with a zone id but no date the standard offset "now"; we take the evaluation
/// clock's instant so the result stays deterministic.
pub fn standard_offset(tz: Tz, epoch_secs: i64) -> i32 {
    match naive(into_range(epoch_secs)) {
        Some(n) => {
            let off = tz.offset_from_utc_datetime(&n);
            off.base_utc_offset().num_seconds() as i32
        }
        None => 0,
    }
}

/// Resolves a local date-time (seconds since the epoch, read as if it were UTC) in a zone,
/// as `ZonedDateTime.of` does: in an overlap the earlier offset wins; in a gap the local
/// time moves forward by the length of the gap. Returns the offset and the (possibly
/// adjusted) local seconds.
pub fn resolve_local(tz: Tz, local_secs: i64) -> (i32, i64) {
    let shifted = into_range(local_secs);
    let delta = local_secs - shifted;
    let Some(n) = naive(shifted) else {
        return (0, local_secs);
    };
    match tz.offset_from_local_datetime(&n) {
        chrono::LocalResult::Single(o) => (o.fix().local_minus_utc(), local_secs),
        chrono::LocalResult::Ambiguous(earlier, _) => (earlier.fix().local_minus_utc(), local_secs),
        chrono::LocalResult::None => {
            // In a gap: use the offset before the transition to find the instant, then
            // read that instant with the offset after it.
            let before = offset_at_instant(tz, shifted - SECS_PER_DAY);
            let instant = shifted - i64::from(before);
            let after = offset_at_instant(tz, instant);
            let local = instant + i64::from(after);
            (after, local + delta)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::civil::days_from_civil;

    fn secs(y: i64, m: u32, d: u32, h: i64) -> i64 {
        days_from_civil(y, m, d) * SECS_PER_DAY + h * 3600
    }

    #[test]
    fn paris_summer_and_winter() {
        let tz = parse_zone_id("Europe/Paris").unwrap();
        assert_eq!(resolve_local(tz, secs(2017, 8, 10, 10)).0, 7200);
        assert_eq!(resolve_local(tz, secs(2017, 12, 10, 10)).0, 3600);
        assert_eq!(standard_offset(tz, secs(2017, 8, 10, 10)), 3600);
        assert!(parse_zone_id("xyz/abc").is_none());
    }

    #[test]
    fn gap_moves_forward() {
        let tz = parse_zone_id("Europe/Paris").unwrap();
        // 2021-03-28 02:30 does not exist in Paris; Java gives 03:30+02:00.
        let (off, local) = resolve_local(tz, secs(2021, 3, 28, 2) + 1800);
        assert_eq!(off, 7200);
        assert_eq!(local, secs(2021, 3, 28, 3) + 1800);
    }

    #[test]
    fn far_years_use_repeating_rules() {
        let tz = parse_zone_id("Europe/Paris").unwrap();
        assert_eq!(resolve_local(tz, secs(999_999_999, 12, 31, 23)).0, 3600);
        assert_eq!(resolve_local(tz, secs(999_999_999, 7, 31, 23)).0, 7200);
    }
}
