//! The public API, form by form, against the due dates and messages Zeebe gives.

use beeline_feel::Value;
use beeline_feel::temporal::{DayTimeDuration, YearMonthDuration, civil, parse_date_time};
use proptest::prelude::*;

use crate::cron::Cron;
use crate::{Due, Schedule, ScheduleError, TimerKind};

const SECOND: i64 = 1000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// Epoch milliseconds of a UTC date-time.
fn utc(y: i64, mo: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
    civil::days_from_civil(y, mo, d) * DAY + h * HOUR + mi * MINUTE + s * SECOND
}

/// 2025-01-15T10:30:00Z, a Wednesday.
fn now() -> i64 {
    utc(2025, 1, 15, 10, 30, 0)
}

fn parse(kind: TimerKind, text: &str) -> Schedule {
    Schedule::parse(kind, text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn first(kind: TimerKind, text: &str, now: i64) -> Due {
    parse(kind, text)
        .first(now)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn due(due_date: i64, repetitions: i32) -> Due {
    Due {
        due_date,
        repetitions,
    }
}

#[test]
fn durations() {
    let n = now();
    for (text, at, expected) in [
        ("PT10S", n, n + 10 * SECOND),
        ("PT1H30M", n, n + 90 * MINUTE),
        ("PT0.5S", n, n + 500),
        ("PT1.0009S", n, n + 1000),
        ("P1D", n, n + DAY),
        ("P1W", n, n + 7 * DAY),
        ("P1DT1H", n, n + 25 * HOUR),
        ("PT36H", n, n + 36 * HOUR),
        ("P1Y2M3W4DT5H6M7.5S", n, utc(2026, 4, 9, 15, 36, 7) + 500),
        // Months are calendar months, clamped to the end of the shorter month.
        (
            "P1M",
            utc(2025, 1, 31, 12, 0, 0),
            utc(2025, 2, 28, 12, 0, 0),
        ),
        (
            "P1M",
            utc(2024, 1, 31, 12, 0, 0),
            utc(2024, 2, 29, 12, 0, 0),
        ),
        ("P1Y", utc(2024, 2, 29, 0, 0, 0), utc(2025, 2, 28, 0, 0, 0)),
        ("P12M", utc(2024, 2, 29, 0, 0, 0), utc(2025, 2, 28, 0, 0, 0)),
        ("P1M1D", utc(2025, 1, 31, 0, 0, 0), utc(2025, 3, 1, 0, 0, 0)),
        ("P1Y-12M", n, n),
        // Zero and negative durations are due at once (or in the past).
        ("PT0S", n, n),
        ("P0D", n, n),
        ("-PT5S", n, n - 5 * SECOND),
        ("PT-5S", n, n - 5 * SECOND),
        ("-P1DT1H", n, n - 25 * HOUR),
        ("-P1M", utc(2025, 3, 31, 0, 0, 0), utc(2025, 2, 28, 0, 0, 0)),
        // Zeebe's interval parser takes a start: due then, or now if it has passed.
        ("2030-01-01T00:00:00Z/PT1H", n, utc(2030, 1, 1, 0, 0, 0)),
        ("2020-01-01T00:00:00Z/PT1H", n, n),
    ] {
        assert_eq!(
            first(TimerKind::Duration, text, at),
            due(expected, 1),
            "{text}"
        );
    }
    let once = parse(TimerKind::Duration, "PT10S");
    assert_eq!(once.repetitions(), 1);
    assert_eq!(
        once.next(due(n + 10 * SECOND, 1), n + 10 * SECOND),
        Ok(None)
    );
}

#[test]
fn duration_errors() {
    for text in [
        "foo", "", "10s", "PT", "P", "P1H", "PT1D", "R3/PT1S", "P1.5D", " PT1S", "PT1S ",
    ] {
        let error = Schedule::parse(TimerKind::Duration, text).unwrap_err();
        assert_eq!(
            error,
            ScheduleError::Invalid(format!(
                "Invalid duration format '{text}' for expression '{text}'."
            )),
            "{text}"
        );
    }
    assert_eq!(
        Schedule::parse(TimerKind::Duration, "foo")
            .unwrap_err()
            .deployment_message(TimerKind::Duration),
        "Invalid timer duration expression (Invalid duration format 'foo' for expression 'foo'.)"
    );
    // Values out of Java's int/long range fail to parse...
    for text in [
        "P2147483648Y",
        "PT9223372036854775808S",
        "PT2562047788015216H",
    ] {
        assert!(
            matches!(
                Schedule::parse(TimerKind::Duration, text),
                Err(ScheduleError::Invalid(_))
            ),
            "{text}"
        );
    }
    // ...and values that parse but leave the calendar overflow when scheduled.
    for text in [
        "P999999999Y",
        "P2147483647Y",
        "PT9223372036854775807S",
        "-PT9223372036854775807S",
        "P1000000000Y",
    ] {
        assert_eq!(
            parse(TimerKind::Duration, text).first(now()),
            Err(ScheduleError::Overflow),
            "{text}"
        );
    }
    assert_eq!(
        ScheduleError::Overflow.deployment_message(TimerKind::Duration),
        "Invalid timer duration expression (Timer duration is too large and results in \
         arithmetic overflow. Please use a smaller duration value.)"
    );
    // Long but representable durations are fine (179 million years fit in epoch millis).
    assert_eq!(
        first(TimerKind::Duration, "P100Y", now()).due_date,
        utc(2125, 1, 15, 10, 30, 0)
    );
    for text in [
        "P2147483647M",
        "P2147483647D",
        "P-2147483648D",
        "P-2147483648M",
    ] {
        assert!(
            parse(TimerKind::Duration, text).first(now()).is_ok(),
            "{text}"
        );
    }
}

#[test]
fn dates() {
    let n = now();
    for (text, expected) in [
        ("2025-06-01T12:00:00Z", utc(2025, 6, 1, 12, 0, 0)),
        ("2025-06-01T12:00:00.250Z", utc(2025, 6, 1, 12, 0, 0) + 250),
        ("2025-06-01T14:00:00+02:00", utc(2025, 6, 1, 12, 0, 0)),
        ("2025-06-01T14:00+02:00", utc(2025, 6, 1, 12, 0, 0)),
        (
            "2025-06-01T14:00:00+02:00[Europe/Berlin]",
            utc(2025, 6, 1, 12, 0, 0),
        ),
        (
            "2025-12-01T13:00:00+01:00[Europe/Berlin]",
            utc(2025, 12, 1, 12, 0, 0),
        ),
        // A date in the past keeps its due date: the timer is due at once.
        ("2020-01-01T00:00:00Z", utc(2020, 1, 1, 0, 0, 0)),
        ("1969-12-31T23:59:59Z", -SECOND),
    ] {
        assert_eq!(first(TimerKind::Date, text, n), due(expected, 1), "{text}");
    }
    let date = parse(TimerKind::Date, "2025-06-01T12:00:00Z");
    assert_eq!(date.repetitions(), 1);
    assert_eq!(date.next(date.first(n).unwrap(), n), Ok(None));
}

#[test]
fn date_errors() {
    for text in [
        "2025-06-01T12:00:00",
        "2025-06-01",
        "2025-06-01T12:00:00@Europe/Berlin",
        "2025-06-01T12:00:00[Europe/Berlin]",
        "2025-02-29T12:00:00Z",
        "2025-06-01T24:00:00Z",
        "tomorrow",
        "",
    ] {
        assert_eq!(
            Schedule::parse(TimerKind::Date, text),
            Err(ScheduleError::Invalid(format!(
                "Invalid date-time format '{text}' for expression '{text}'."
            ))),
            "{text}"
        );
    }
    assert_eq!(
        Schedule::parse(TimerKind::Date, "foo")
            .unwrap_err()
            .deployment_message(TimerKind::Date),
        "Invalid timer date expression (Invalid date-time format 'foo' for expression 'foo'.)"
    );
    // A valid date-time whose epoch milliseconds do not fit in a long.
    assert_eq!(
        Schedule::parse(TimerKind::Date, "+999999999-12-31T23:59:59Z"),
        Err(ScheduleError::Overflow)
    );
    assert_eq!(
        Schedule::parse(TimerKind::Date, "-999999999-01-01T00:00:00Z"),
        Err(ScheduleError::Overflow)
    );
}

#[test]
fn repeating_intervals_count_down() {
    let n = now();
    let cycle = parse(TimerKind::Cycle, "R3/PT10S");
    assert_eq!(cycle.repetitions(), 3);
    // Three triggers in total: repetitions 3, 2, 1, then no more timers.
    let mut timer = cycle.first(n).unwrap();
    let mut fired = vec![timer];
    while let Some(next) = cycle.next(timer, timer.due_date).unwrap() {
        fired.push(next);
        timer = next;
    }
    assert_eq!(
        fired,
        [
            due(n + 10 * SECOND, 3),
            due(n + 20 * SECOND, 2),
            due(n + 30 * SECOND, 1)
        ]
    );

    let forever = parse(TimerKind::Cycle, "R/PT1M");
    assert_eq!(forever.repetitions(), -1);
    let timer = forever.first(n).unwrap();
    assert_eq!(timer, due(n + MINUTE, -1));
    assert_eq!(
        forever.next(timer, timer.due_date),
        Ok(Some(due(n + 2 * MINUTE, -1)))
    );

    for (text, repetitions) in [("R1/PT1S", 1), ("R0/PT1S", 0), ("R-5/PT1S", -5)] {
        let once = parse(TimerKind::Cycle, text);
        let timer = once.first(n).unwrap();
        assert_eq!(timer, due(n + SECOND, repetitions), "{text}");
        assert_eq!(once.next(timer, timer.due_date), Ok(None), "{text}");
    }
    // Integer.parseInt: "-1" is the infinite marker, "+2" is two.
    assert_eq!(parse(TimerKind::Cycle, "R-1/PT1S").repetitions(), -1);
    assert_eq!(parse(TimerKind::Cycle, "R+2/PT1S").repetitions(), 2);
}

#[test]
fn repeating_intervals_with_a_start() {
    let n = now();
    // A start in the future: first due at the start, then one interval after each.
    let cycle = parse(TimerKind::Cycle, "R3/2025-02-01T09:00:00Z/PT1H");
    let timer = cycle.first(n).unwrap();
    assert_eq!(timer, due(utc(2025, 2, 1, 9, 0, 0), 3));
    assert_eq!(
        cycle.next(timer, timer.due_date),
        Ok(Some(due(utc(2025, 2, 1, 10, 0, 0), 2)))
    );
    // A start that has passed: due at once.
    let cycle = parse(TimerKind::Cycle, "R/2020-01-01T00:00:00Z/PT15M");
    assert_eq!(cycle.first(n), Ok(due(n, -1)));
    // The wall-clock time is kept across daylight saving in the start's zone: Berlin
    // springs forward on 2025-03-30, so that day starts 23 hours after the last.
    let cycle = parse(
        TimerKind::Cycle,
        "R/2025-03-29T09:00:00+01:00[Europe/Berlin]/P1D",
    );
    let timer = cycle.first(n).unwrap();
    assert_eq!(timer.due_date, utc(2025, 3, 29, 8, 0, 0));
    let next = cycle.next(timer, timer.due_date).unwrap().unwrap();
    assert_eq!(next.due_date, utc(2025, 3, 30, 7, 0, 0));
    let next = cycle.next(next, next.due_date).unwrap().unwrap();
    assert_eq!(next.due_date, utc(2025, 3, 31, 7, 0, 0));
    // With a fixed offset (or no start) a day is 24 hours.
    let cycle = parse(TimerKind::Cycle, "R/2025-03-29T09:00:00+01:00/P1D");
    let timer = cycle.first(n).unwrap();
    let next = cycle.next(timer, timer.due_date).unwrap().unwrap();
    assert_eq!(next.due_date, utc(2025, 3, 30, 8, 0, 0));
    // Monthly from the 31st, clamped in each month (from the last due date).
    let cycle = parse(TimerKind::Cycle, "R/2025-01-31T00:00:00Z/P1M");
    let jan = cycle.first(n).unwrap();
    let feb = cycle.next(jan, jan.due_date).unwrap().unwrap();
    let mar = cycle.next(feb, feb.due_date).unwrap().unwrap();
    assert_eq!(
        [jan.due_date, feb.due_date, mar.due_date],
        [
            utc(2025, 1, 31, 0, 0, 0),
            utc(2025, 2, 28, 0, 0, 0),
            utc(2025, 3, 28, 0, 0, 0)
        ]
    );
}

#[test]
fn late_triggers_do_not_burst() {
    let n = now();
    let cycle = parse(TimerKind::Cycle, "R5/PT10M");
    let timer = cycle.first(n).unwrap();
    // Triggered on time or a little late: the next one keeps the rhythm.
    assert_eq!(
        cycle.next(timer, timer.due_date + MINUTE),
        Ok(Some(due(n + 20 * MINUTE, 4)))
    );
    // Triggered after the next occurrence had passed (broker down): one interval after now.
    let late = n + HOUR;
    assert_eq!(
        cycle.next(timer, late),
        Ok(Some(due(late + 10 * MINUTE, 4)))
    );
    // Exactly at the natural next occurrence is also late.
    assert_eq!(
        cycle.next(timer, n + 20 * MINUTE),
        Ok(Some(due(n + 30 * MINUTE, 4)))
    );
    // Zero and negative intervals are due at once, again and again, as in Zeebe.
    let zero = parse(TimerKind::Cycle, "R/PT0S");
    assert_eq!(zero.first(n), Ok(due(n, -1)));
    assert_eq!(zero.next(due(n, -1), n), Ok(Some(due(n, -1))));
    let negative = parse(TimerKind::Cycle, "R/-PT1M");
    assert_eq!(negative.first(n), Ok(due(n - MINUTE, -1)));
    assert_eq!(negative.next(due(n - MINUTE, -1), n), Ok(Some(due(n, -1))));
}

#[test]
fn cron_cycles() {
    let n = now(); // Wednesday 2025-01-15T10:30:00Z
    let cron = parse(TimerKind::Cycle, "0 0 9 * * MON-FRI");
    assert_eq!(cron.repetitions(), -1);
    let timer = cron.first(n).unwrap();
    assert_eq!(timer, due(utc(2025, 1, 16, 9, 0, 0), -1));
    // Rescheduled from the trigger time, not from the due date.
    assert_eq!(
        cron.next(timer, utc(2025, 1, 17, 12, 0, 0)),
        Ok(Some(due(utc(2025, 1, 20, 9, 0, 0), -1)))
    );
    assert_eq!(
        first(TimerKind::Cycle, "@hourly", n),
        due(utc(2025, 1, 15, 11, 0, 0), -1)
    );
    assert_eq!(
        first(TimerKind::Cycle, "0 0 0 L * *", n),
        due(utc(2025, 1, 31, 0, 0, 0), -1)
    );
    assert_eq!(
        first(TimerKind::Cycle, "0 0 12 ? * FRI#3", n),
        due(utc(2025, 1, 17, 12, 0, 0), -1)
    );
    // Never matches: due at once with no repetitions, so it fires once and stops.
    let never = parse(TimerKind::Cycle, "0 0 0 30 2 *");
    let timer = never.first(n).unwrap();
    assert_eq!(timer, due(n, 0));
    assert_eq!(never.next(timer, n), Ok(None));
}

#[test]
fn cycle_errors() {
    for (text, message) in [
        (
            "foo",
            "Cron expression contains 1 parts but we expect one of [6]",
        ),
        ("", "Empty expression!"),
        (
            "0 0 * * *",
            "Cron expression contains 5 parts but we expect one of [6]",
        ),
        (
            "PT1M",
            "Cron expression contains 1 parts but we expect one of [6]",
        ),
        ("R5", "No interval given"),
        ("R5PT1M", "No interval given"),
        ("Rx/PT1M", "Cannot parse repetitions count"),
        ("R99999999999/PT1S", "Cannot parse repetitions count"),
        ("R 5/PT1S", "Cannot parse repetitions count"),
        ("R/", "Text cannot be parsed to a Period"),
        ("R/foo", "Text cannot be parsed to a Period"),
        ("R/PT", "Text cannot be parsed to a Duration"),
        ("R/P0¡", "Text cannot be parsed to a Period"),
        ("R/P1D¡", "Text cannot be parsed to a Period"),
        ("R/PT1¥", "Text cannot be parsed to a Duration"),
        ("R/P1DT2Ѩ", "Text cannot be parsed to a Duration"),
        ("R/P1DT", "Text cannot be parsed to a Duration"),
        (
            "R/PT9999999999999999999H",
            "Text cannot be parsed to a Duration: hours",
        ),
        (
            "R3/2025-13-01T00:00:00Z/PT1H",
            "Text '2025-13-01T00:00:00Z' could not be parsed: Invalid value for MonthOfYear (valid values 1 - 12): 13",
        ),
        (
            "R3/2025-01-01T00:00:00/PT1H",
            "Text '2025-01-01T00:00:00' could not be parsed at index 19",
        ),
        (
            "R3/PT1H/2025-01-01T00:00:00Z",
            "Text 'PT1H' could not be parsed at index 0",
        ),
    ] {
        assert_eq!(
            Schedule::parse(TimerKind::Cycle, text),
            Err(ScheduleError::Invalid(message.to_string())),
            "{text}"
        );
    }
    assert_eq!(
        Schedule::parse(TimerKind::Cycle, "Rx/PT1M")
            .unwrap_err()
            .deployment_message(TimerKind::Cycle),
        "Invalid timer cycle expression (Cannot parse repetitions count)"
    );
    assert_eq!(
        parse(TimerKind::Cycle, "R/P999999999Y").first(now()),
        Err(ScheduleError::Overflow)
    );
    let cycle = parse(TimerKind::Cycle, "R/P200000000Y");
    let timer = cycle.first(now()).unwrap();
    assert_eq!(
        cycle.next(timer, timer.due_date),
        Err(ScheduleError::Overflow)
    );
}

#[test]
fn feel_values() {
    let n = now();
    let value = |kind, v: Value| Schedule::from_value(kind, &v, "timer").and_then(|s| s.first(n));
    assert_eq!(
        value(TimerKind::Duration, Value::string("PT1M")),
        Ok(due(n + MINUTE, 1))
    );
    assert_eq!(
        value(
            TimerKind::Duration,
            Value::DayTimeDuration(DayTimeDuration::from_seconds(90))
        ),
        Ok(due(n + 90 * SECOND, 1))
    );
    assert_eq!(
        value(
            TimerKind::Duration,
            Value::DayTimeDuration(DayTimeDuration::from_seconds(-90))
        ),
        Ok(due(n - 90 * SECOND, 1))
    );
    assert_eq!(
        value(
            TimerKind::Duration,
            Value::YearMonthDuration(YearMonthDuration(14))
        ),
        Ok(due(utc(2026, 3, 15, 10, 30, 0), 1))
    );
    assert_eq!(
        value(
            TimerKind::Duration,
            Value::DayTimeDuration(DayTimeDuration(i128::MAX))
        ),
        Err(ScheduleError::Overflow)
    );
    let zoned = parse_date_time("2025-06-01T14:00:00@Europe/Berlin", 0).unwrap();
    assert_eq!(
        value(TimerKind::Date, Value::DateTime(zoned)),
        Ok(due(utc(2025, 6, 1, 12, 0, 0), 1))
    );
    // A local date and time is read in UTC (Zeebe's default zone).
    let local = parse_date_time("2025-06-01T14:00:00", 0).unwrap();
    assert_eq!(
        value(TimerKind::Date, Value::DateTime(local)),
        Ok(due(utc(2025, 6, 1, 14, 0, 0), 1))
    );
    assert_eq!(
        value(TimerKind::Cycle, Value::string("R2/PT1S")),
        Ok(due(n + SECOND, 2))
    );
    // Failure messages quote the expression, not the value.
    assert_eq!(
        Schedule::from_value(TimerKind::Duration, &Value::string("soon"), "delay"),
        Err(ScheduleError::Invalid(
            "Invalid duration format 'soon' for expression 'delay'.".to_string()
        ))
    );
    assert_eq!(
        Schedule::from_value(TimerKind::Date, &Value::string("soon"), "when"),
        Err(ScheduleError::Invalid(
            "Invalid date-time format 'soon' for expression 'when'.".to_string()
        ))
    );
    for (kind, v, message) in [
        (
            TimerKind::Duration,
            Value::number(5),
            "Expected result of the expression 'x' to be one of '[DURATION, PERIOD, STRING]', but was 'NUMBER'.",
        ),
        (
            TimerKind::Duration,
            Value::Null,
            "Expected result of the expression 'x' to be one of '[DURATION, PERIOD, STRING]', but was 'NULL'.",
        ),
        (
            TimerKind::Date,
            Value::Bool(true),
            "Expected result of the expression 'x' to be one of '[DATE_TIME, STRING]', but was 'BOOLEAN'.",
        ),
        (
            TimerKind::Date,
            Value::DayTimeDuration(DayTimeDuration::from_seconds(1)),
            "Expected result of the expression 'x' to be one of '[DATE_TIME, STRING]', but was 'DURATION'.",
        ),
        (
            TimerKind::Cycle,
            Value::DayTimeDuration(DayTimeDuration::from_seconds(1)),
            "Expected result of the expression 'x' to be 'STRING', but was 'DURATION'.",
        ),
        (
            TimerKind::Cycle,
            Value::list(vec![]),
            "Expected result of the expression 'x' to be 'STRING', but was 'ARRAY'.",
        ),
    ] {
        assert_eq!(
            Schedule::from_value(kind, &v, "x"),
            Err(ScheduleError::UnexpectedType(message.to_string()))
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// No text, for any kind, at any time, makes parsing or scheduling panic.
    #[test]
    fn no_input_panics(
        text in prop_oneof![
            any::<String>(),
            "[RPTWYMDHS0-9/:.,+\\-Z\\[\\] ]{0,30}",
            "R[0-9+\\-]{0,12}/[-+]?P[0-9]{0,12}[YMWD]?(T[0-9]{0,20}[HMS]?)?",
            "R[0-9]{0,3}/[+\\-0-9]{4,11}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+\\-][0-9]{2}:[0-9]{2})(\\[[A-Za-z/_]{0,20}\\])?/P[0-9]{0,10}[YMWD]",
            "[0-9*?LW#/,\\-]{1,6}( [0-9A-Z*?LW#/,\\-]{1,8}){5}",
            "@[a-z]{0,9}",
        ],
        now in prop_oneof![any::<i64>(), -(1i64 << 50)..(1i64 << 50)],
        repetitions in prop_oneof![Just(-1i32), any::<i32>()],
    ) {
        for kind in [TimerKind::Duration, TimerKind::Date, TimerKind::Cycle] {
            if let Ok(schedule) = Schedule::parse(kind, &text) {
                if let Ok(timer) = schedule.first(now) {
                    let _ = schedule.next(timer, now);
                }
                let _ = schedule.next(due(now, repetitions), now);
            }
            let _ = Schedule::from_value(kind, &Value::string(text.as_str()), &text);
        }
    }

    /// FEEL durations of any size schedule or overflow, never panic.
    #[test]
    fn no_feel_duration_panics(nanos in any::<i128>(), months in any::<i64>(), now in any::<i64>()) {
        for v in [
            Value::DayTimeDuration(DayTimeDuration(nanos)),
            Value::YearMonthDuration(YearMonthDuration(months)),
        ] {
            if let Ok(schedule) = Schedule::from_value(TimerKind::Duration, &v, "x") {
                let _ = schedule.first(now);
            }
        }
    }

    /// A pure duration of a whole number of milliseconds is due exactly that much later.
    #[test]
    fn durations_add_exactly(
        millis in -(1i64 << 42)..(1i64 << 42),
        now in -(1i64 << 50)..(1i64 << 50),
    ) {
        let sign = if millis < 0 { "-" } else { "" };
        let abs = millis.unsigned_abs();
        let text = format!("{sign}PT{}.{:03}S", abs / 1000, abs % 1000);
        prop_assert_eq!(first(TimerKind::Duration, &text, now), due(now + millis, 1));
    }

    /// The next cron time matches, lies strictly after the start, and no second between
    /// them matches.
    #[test]
    fn cron_next_is_the_first_match(
        second in "\\*|[0-5]?[0-9](,[0-5]?[0-9])?|\\*/[1-9][0-9]?|[0-2]?[0-9]-[3-5][0-9]",
        minute in "\\*|[0-5]?[0-9]|\\*/[1-9][0-9]?|[0-2]?[0-9]-[3-5][0-9](/[1-9])?",
        hour in "\\*|1?[0-9]|2[0-3]|\\*/[1-9]|[0-9]-1[0-9]",
        day_of_month in "\\*|\\?|[1-9]|[12][0-9]|3[01]|L|L-[1-5]|LW|[1-9]W|[1-9]-2[0-9]|\\*/[1-9]",
        month in "\\*|[1-9]|1[0-2]|[1-6]-1[0-2]|\\*/[1-5]|JAN|FEB|DEC",
        day_of_week in "\\*|\\?|[0-7]|[1-5]-[67]|[1-7]L|[1-7]#[1-5]|MON-FRI|SUN",
        start in -(1i64 << 41)..(1i64 << 42),
    ) {
        let text = format!("{second} {minute} {hour} {day_of_month} {month} {day_of_week}");
        let cron = Cron::parse(&text).unwrap();
        match cron.next_after(start) {
            Some(next) => {
                prop_assert!(next > start, "{} after {}: {}", text, start, next);
                prop_assert!(cron.matches(next), "{} after {}: {}", text, start, next);
                // Walk the gap second by second when it is short enough to check.
                if next - start <= 2 * DAY {
                    let mut t = (start.div_euclid(1000) + 1) * 1000;
                    while t < next {
                        prop_assert!(!cron.matches(t), "{} after {}: {} matches before {}", text, start, t, next);
                        t += 1000;
                    }
                }
            }
            None => {
                // Then no day in a full 400-year cycle matches: spot-check a few years.
                let mut t = (start.div_euclid(DAY) + 1) * DAY;
                for _ in 0..(3 * 366) {
                    prop_assert!(!cron.matches(t), "{} never, but matches {}", text, t);
                    t += DAY;
                }
            }
        }
    }
}
