//! Why a timer definition could not be turned into due dates.

use crate::TimerKind;

/// A timer definition that cannot be scheduled. `Display` gives Zeebe's runtime failure
/// message (what an incident says); [`ScheduleError::deployment_message`] wraps it the way
/// Zeebe's deployment validation does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The FEEL result has a type this timer kind does not take, e.g. a number for a
    /// `timeDate`. The message names the expression and the type in Zeebe's words.
    #[error("{0}")]
    UnexpectedType(String),
    /// The text is not a valid duration, date-time, repeating interval or cron expression.
    #[error("{0}")]
    Invalid(String),
    /// A due date would leave the range of epoch milliseconds or of the calendar
    /// (years ±999,999,999).
    #[error(
        "Timer duration is too large and results in arithmetic overflow. Please use a smaller duration value."
    )]
    Overflow,
}

impl ScheduleError {
    /// The message Zeebe's deployment validation gives for a timer it rejects, e.g.
    /// `Invalid timer cycle expression (Cannot parse repetitions count)`.
    pub fn deployment_message(&self, kind: TimerKind) -> String {
        format!("Invalid timer {} expression ({self})", kind.name())
    }
}
