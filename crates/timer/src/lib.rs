//! Zeebe's timer schedules: a BPMN `timeDuration`, `timeDate` or `timeCycle` turned into due
//! dates, as Zeebe (Camunda 8.5–8.8) computes them.
//!
//! ```
//! use beeline_timer::{Due, Schedule, TimerKind};
//!
//! let now = 1_735_725_600_000; // 2025-01-01T10:00:00Z
//! let cycle = Schedule::parse(TimerKind::Cycle, "R3/PT10S").unwrap();
//! let first = cycle.first(now).unwrap();
//! assert_eq!(first, Due { due_date: now + 10_000, repetitions: 3 });
//! // Fired on time: the next one is an interval later, with one repetition less.
//! let second = cycle.next(first, first.due_date).unwrap().unwrap();
//! assert_eq!(second, Due { due_date: now + 20_000, repetitions: 2 });
//! ```
//!
//! # Design notes
//!
//! The engine evaluates the timer's FEEL expression (or takes the static text) and hands the
//! result to [`Schedule::from_value`] or [`Schedule::parse`]; it writes [`Due`] into the
//! `TimerRecord` (`dueDate`, `repetitions`). When a timer triggers, the engine evaluates the
//! expression again, as Zeebe does, and asks [`Schedule::next`] for the follow-up timer.
//! Nothing here reads the clock; "now" is always the caller's (the record timestamp).
//!
//! What each kind does, and the Zeebe classes it follows (`zeebe/bpmn-model`
//! `io.camunda.zeebe.model.bpmn.util.time` and `zeebe/engine` `processing.timer`):
//!
//! - **Duration** (`Interval`, wrapped in a `RepeatingInterval` of one repetition): an ISO
//!   8601 period and/or duration, `P1Y2M3W4DT5H6M7.5S`, parsed with the rules of
//!   `java.time.Period.parse` and `Duration.parse` (optional sign, per-field signs, `,` or
//!   `.` before up to nine fraction digits, `int` period fields and `long` seconds). Due at
//!   `now` plus the duration; the years, months and days are calendar arithmetic (months
//!   first, clamping to the month's end, then days). Negative and zero durations are
//!   allowed and are simply due at once. Zeebe's parser also takes a start
//!   (`2025-01-01T00:00:00Z/PT1H`): the timer is then due at the start, or now if past.
//! - **Date** (`TimeDateTimer`): `java.time.ZonedDateTime.parse`, i.e. an ISO date-time
//!   with a required offset (`Z`, `+02:00`) and an optional zone (`[Europe/Berlin]`). A
//!   date-time without offset is rejected, as `ZonedDateTime.parse` rejects it; a FEEL
//!   `date and time` without zone is read in UTC. A past date is due at once.
//! - **Cycle**: text starting with `R` is a `RepeatingInterval`, `R<n>/[start/]interval`
//!   or `R/...` for ever; anything else is a cron expression (`CronTimer`).
//!
//! Zeebe computes calendar arithmetic and cron in the JVM's default zone
//! (`ZoneId.systemDefault()`); its images run in UTC, and so does this crate. The only zone
//! that matters is a cycle's start zone: repetitions of `R/2025-03-29T09:00:00+01:00[Europe/
//! Berlin]/P1D` stay at 09:00 Berlin time across daylight saving, as `ZonedDateTime.plus`
//! keeps them.
//!
//! Repetitions: a `TimerRecord` carries them, `-1` for ever. A trigger reschedules only if
//! they are `-1` or above one, and counts one down, so `R3/PT10S` fires three times in
//! total, on a start event as on a boundary event. `R0/...` and `R1/...` fire once; since
//! Zeebe parses the count with `Integer.parseInt`, `R-1/...` repeats for ever.
//!
//! Two Zeebe behaviours changed in 2026 patch releases; this crate follows the current
//! ones. A cycle whose start date has passed fires at once (camunda/camunda#49135,
//! backported to 8.6–8.8; before, it fired one interval after deployment). A late
//! repeating timer is rescheduled one interval after the trigger time rather than firing
//! every missed occurrence (the behaviour since 8.1, camunda/camunda#10054, restored by
//! #63687).
//!
//! # Cron
//!
//! Zeebe parses cron with cron-utils' `SPRING53` definition, whose goal is Spring 5.3's
//! `CronExpression` syntax; this crate implements that syntax and its semantics (see the
//! `cron` module): six fields with seconds, `?`, names, steps, `L`, `L-n`, `LW`, `nW`,
//! `dL`, `d#n`, the `@` macros, and day-of-month AND day-of-week. It is written here rather
//! than taken from crates.io because none of the candidates matches:
//!
//! - `cron` numbers weekdays Quartz-style (1 = Sunday, where Spring has 1 = Monday) and has
//!   no `L`, `W` or `#`;
//! - `saffron` works to the minute (five fields, no seconds);
//! - `croner` comes closest (seconds, `L`, `W`, `#`, an AND option for the day fields) but
//!   has neither `L-n` nor `LW`, takes five-field expressions Spring rejects, and differs
//!   in edge cases such as `nW` for a Sunday at the end of the month.
//!
//! Matching is declarative and the search spans a full 400-year Gregorian cycle, so an
//! expression that can never match (`0 0 0 30 2 *`) is known as such; Zeebe then fires it
//! once, at once. Error messages follow cron-utils where known (`Cron expression contains 5
//! parts but we expect one of [6]`).
//!
//! # Errors
//!
//! [`ScheduleError`]'s `Display` is Zeebe's runtime message (`Invalid duration format 'x'
//! for expression 'x'.`, `Cannot parse repetitions count`, ...);
//! [`ScheduleError::deployment_message`] wraps it as deployment validation does
//! (`Invalid timer cycle expression (...)`). Out-of-range input (`R99999999999/PT1S`,
//! `P999999999Y`, year 1000000000) gives an error, never a panic or a wrapped number.

mod cron;
mod date_time;
mod error;
mod interval;
mod schedule;

pub use error::ScheduleError;
pub use schedule::{Due, Schedule, TimerKind};

#[cfg(test)]
mod tests;
