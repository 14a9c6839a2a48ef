//! The public face: a timer definition parsed into a [`Schedule`], and the due dates it gives.

use beeline_feel::Value;

use crate::ScheduleError;
use crate::cron::Cron;
use crate::date_time::{epoch_millis, parse_zoned_date_time};
use crate::interval::{INFINITE, Interval, Period, parse_interval, parse_repeating_interval};

/// The three BPMN timer definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimerKind {
    /// `timeDuration`: fires once, a duration after the timer is created.
    Duration,
    /// `timeDate`: fires once, at a date-time.
    Date,
    /// `timeCycle`: a repeating interval (`R5/PT10S`) or a cron expression.
    Cycle,
}

impl TimerKind {
    /// The word Zeebe's messages use: `duration`, `date`, `cycle`.
    pub fn name(self) -> &'static str {
        match self {
            TimerKind::Duration => "duration",
            TimerKind::Date => "date",
            TimerKind::Cycle => "cycle",
        }
    }
}

/// When a timer is due, and the `repetitions` Zeebe records with it in its `TimerRecord`
/// (`-1` repeats forever).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Due {
    /// Epoch milliseconds. May lie in the past (a past `timeDate`, a negative duration):
    /// the timer is then due at once.
    pub due_date: i64,
    pub repetitions: i32,
}

/// A parsed timer definition. Cheap to copy; holds no clock: every computation takes "now"
/// from the caller (the record's timestamp), so processing stays deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule(Inner);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inner {
    /// Zeebe's `RepeatingInterval`: a `timeDuration` (one repetition) or an ISO cycle.
    Interval {
        repetitions: i32,
        interval: Interval,
    },
    /// Zeebe's `TimeDateTimer`.
    Date { due_date: i64 },
    /// Zeebe's `CronTimer`.
    Cron(Cron),
}

impl Schedule {
    /// Parses a static timer text (a BPMN timer body that is not a FEEL expression).
    /// Messages name the text as the expression, as Zeebe's do for static expressions.
    pub fn parse(kind: TimerKind, text: &str) -> Result<Schedule, ScheduleError> {
        Schedule::from_text(kind, text, text)
    }

    /// Builds the schedule from the result of the timer's FEEL expression. `expression` is
    /// the expression's source without the leading `=`; failure messages quote it.
    ///
    /// Accepted, as in Zeebe's `ExpressionProcessor`:
    /// - `timeDuration`: a string, a days-and-time duration or a years-and-months duration;
    /// - `timeDate`: a string or a date and time (a local one is read in UTC, Zeebe's
    ///   default zone);
    /// - `timeCycle`: a string only.
    pub fn from_value(
        kind: TimerKind,
        value: &Value,
        expression: &str,
    ) -> Result<Schedule, ScheduleError> {
        let wrong_type = |expected: &str| {
            ScheduleError::UnexpectedType(format!(
                "Expected result of the expression '{expression}' to be {expected}, but was '{}'.",
                result_type(value)
            ))
        };
        match (kind, value) {
            (_, Value::String(text)) => Schedule::from_text(kind, text, expression),
            (TimerKind::Duration, Value::DayTimeDuration(duration)) => {
                let interval = Interval::of_duration(duration.0).ok_or(ScheduleError::Overflow)?;
                Ok(Schedule::once(interval))
            }
            (TimerKind::Duration, Value::YearMonthDuration(duration)) => {
                // java.time.Period from a normalized FEEL years-and-months duration.
                let years = i32::try_from(duration.years()).map_err(|_| ScheduleError::Overflow)?;
                let months = duration.months() as i32;
                Ok(Schedule::once(Interval::of_period(Period {
                    years,
                    months,
                    days: 0,
                })))
            }
            (TimerKind::Duration, _) => Err(wrong_type("one of '[DURATION, PERIOD, STRING]'")),
            (TimerKind::Date, Value::DateTime(date_time)) => {
                let instant = match date_time.zone {
                    Some(_) => date_time.instant_nanos(),
                    None => Some(date_time.local_nanos()),
                };
                let due_date = instant
                    .and_then(epoch_millis)
                    .ok_or(ScheduleError::Overflow)?;
                Ok(Schedule(Inner::Date { due_date }))
            }
            (TimerKind::Date, _) => Err(wrong_type("one of '[DATE_TIME, STRING]'")),
            (TimerKind::Cycle, _) => Err(wrong_type("'STRING'")),
        }
    }

    fn from_text(kind: TimerKind, text: &str, expression: &str) -> Result<Schedule, ScheduleError> {
        match kind {
            TimerKind::Duration => parse_interval(text).map(Schedule::once).map_err(|_| {
                ScheduleError::Invalid(format!(
                    "Invalid duration format '{text}' for expression '{expression}'."
                ))
            }),
            TimerKind::Date => {
                let date_time = parse_zoned_date_time(text).map_err(|_| {
                    ScheduleError::Invalid(format!(
                        "Invalid date-time format '{text}' for expression '{expression}'."
                    ))
                })?;
                let due_date = date_time
                    .instant_nanos()
                    .and_then(epoch_millis)
                    .ok_or(ScheduleError::Overflow)?;
                Ok(Schedule(Inner::Date { due_date }))
            }
            // Zeebe: a cycle starting with "R" is a repeating interval, anything else cron.
            TimerKind::Cycle if text.starts_with('R') => {
                let (repetitions, interval) =
                    parse_repeating_interval(text).map_err(ScheduleError::Invalid)?;
                Ok(Schedule(Inner::Interval {
                    repetitions,
                    interval,
                }))
            }
            TimerKind::Cycle => Cron::parse(text)
                .map(|cron| Schedule(Inner::Cron(cron)))
                .map_err(ScheduleError::Invalid),
        }
    }

    fn once(interval: Interval) -> Schedule {
        Schedule(Inner::Interval {
            repetitions: 1,
            interval,
        })
    }

    /// The repetitions as parsed: `n` for `R<n>/...` (Java's `Integer.parseInt`, so `R0`
    /// and negative counts exist; `R-1` means forever), `-1` for `R/...` and cron, `1` for
    /// a duration or a date.
    pub fn repetitions(&self) -> i32 {
        match self.0 {
            Inner::Interval { repetitions, .. } => repetitions,
            Inner::Date { .. } => 1,
            Inner::Cron(_) => INFINITE,
        }
    }

    /// The first due date of a timer created at `now_ms` (Zeebe's `Timer.getDueDate`).
    ///
    /// - A duration is added to `now` (calendar parts in UTC); a negative or zero duration
    ///   gives a due date at or before `now`, so the timer fires at once.
    /// - A date is its own due date, even when past.
    /// - A cycle with a start date is due at the start, or at `now` if the start has passed;
    ///   without a start it is due one interval after `now`.
    /// - A cron cycle is due at its first match strictly after `now`; if it never matches,
    ///   Zeebe makes it due `now` with 0 repetitions (it fires once and stops).
    ///
    /// Zeebe validates static timers at deployment by computing this with the deployment's
    /// time; [`ScheduleError::Overflow`] then rejects durations that are too large.
    pub fn first(&self, now_ms: i64) -> Result<Due, ScheduleError> {
        match self.0 {
            Inner::Interval {
                repetitions,
                interval,
            } => Ok(Due {
                due_date: interval.due_from(now_ms).ok_or(ScheduleError::Overflow)?,
                repetitions,
            }),
            Inner::Date { due_date } => Ok(Due {
                due_date,
                repetitions: 1,
            }),
            Inner::Cron(cron) => Ok(match cron.next_after(now_ms) {
                Some(due_date) => Due {
                    due_date,
                    repetitions: INFINITE,
                },
                None => Due {
                    due_date: now_ms,
                    repetitions: 0,
                },
            }),
        }
    }

    /// After a timer `last` (its record's due date and repetitions) triggered at `now_ms`,
    /// the next timer, if it repeats (Zeebe's `TimerTriggerProcessor`): only when `last`
    /// has repetitions `-1` or more than one. Call it on the schedule evaluated at trigger
    /// time: Zeebe evaluates the timer expression again before rescheduling.
    ///
    /// - A repeating interval counts down (`-1` stays `-1`) and is due one interval after
    ///   `last.due_date`, in the start date's zone if the cycle has one (so `P1D` keeps the
    ///   wall-clock time across daylight saving), UTC otherwise. If that is not after
    ///   `now` (the timer was late, e.g. the broker was down), it is due one interval after
    ///   `now` instead, so missed occurrences are not fired in a burst. A zero or negative
    ///   interval is due at `now` again (Zeebe does not reject `R/PT0S` either).
    /// - A cron cycle is due at its next match after `now`.
    pub fn next(&self, last: Due, now_ms: i64) -> Result<Option<Due>, ScheduleError> {
        if last.repetitions != INFINITE && last.repetitions <= 1 {
            return Ok(None);
        }
        match self.0 {
            Inner::Interval { interval, .. } => {
                let repetitions = if last.repetitions == INFINITE {
                    INFINITE
                } else {
                    last.repetitions - 1
                };
                let natural = interval
                    .after(last.due_date)
                    .ok_or(ScheduleError::Overflow)?;
                let due_date = if natural > now_ms {
                    natural
                } else {
                    interval.after(now_ms).ok_or(ScheduleError::Overflow)?
                };
                Ok(Some(Due {
                    due_date: due_date.max(now_ms),
                    repetitions,
                }))
            }
            Inner::Cron(_) => self.first(now_ms).map(Some),
            Inner::Date { .. } => Ok(None),
        }
    }
}

/// Zeebe's `ResultType` of a FEEL value, for type-mismatch messages.
fn result_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Number(_) => "NUMBER",
        Value::String(_) => "STRING",
        Value::List(_) => "ARRAY",
        Value::Context(_) => "OBJECT",
        Value::DayTimeDuration(_) => "DURATION",
        Value::YearMonthDuration(_) => "PERIOD",
        Value::Date(_) => "DATE",
        Value::DateTime(_) => "DATE_TIME",
        Value::Time(_) | Value::Range(_) | Value::Function(_) => "UNKNOWN",
    }
}
