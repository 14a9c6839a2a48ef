//! What the engine keeps in memory only: requests that wait for an answer a later batch gives
//! (a process instance's result, a message correlation's confirmation). It dies with the
//! process, as the requests do; replay never touches it.
//!
//! Its changes belong to the batch that makes them: a batch that fails and is rolled back, or
//! whose results are refused after all, takes them back too (the engine calls
//! [`Transient::commit`] when the next batch begins or [`Transient::rollback`]), so no request
//! waits for an answer that a batch that was not written would have arranged.

use std::cell::RefCell;
use std::collections::HashMap;

/// A `CreateProcessInstanceWithResult` request waiting for its instance.
#[derive(Debug, Clone)]
pub struct AwaitingResult {
    /// Position of the creation command: how the stream processor finds the requester.
    pub request: i64,
    pub fetch_variables: Vec<String>,
}

/// A `MESSAGE_CORRELATION CORRELATE` request waiting for an instance on another partition to
/// take its message.
#[derive(Debug, Clone)]
pub struct PendingCorrelation {
    /// Position of the correlate command.
    pub request: i64,
    /// Subscriptions the message was sent to that have not answered yet.
    pub pending: usize,
}

/// What a later batch learns of a pending correlation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorrelationOutcome {
    /// An instance took the message: answer the request (position) with it.
    Taken(i64),
    /// Every instance it was sent to refused it: answer the request (position) "not found".
    Refused(i64),
    /// Others may still take it, or nobody waits for this message.
    Open,
}

#[derive(Debug)]
enum Undo {
    Awaiting(i64, Option<AwaitingResult>),
    Correlation(i64, Option<PendingCorrelation>),
    UserTask(i64, Option<i64>),
}

#[derive(Debug, Default)]
pub struct Transient {
    awaiting: RefCell<HashMap<i64, AwaitingResult>>,
    correlations: RefCell<HashMap<i64, PendingCorrelation>>,
    /// Requests (positions of their commands) to assign, update or complete a user task,
    /// by the task's key, waiting for the task's listeners.
    user_tasks: RefCell<HashMap<i64, i64>>,
    /// How to undo the changes of the batch in progress, newest last.
    undo: RefCell<Vec<Undo>>,
}

impl Transient {
    pub fn await_result(&self, instance: i64, awaiting: AwaitingResult) {
        let old = self.awaiting.borrow_mut().insert(instance, awaiting);
        self.undo.borrow_mut().push(Undo::Awaiting(instance, old));
    }

    pub fn take_awaiting(&self, instance: i64) -> Option<AwaitingResult> {
        let taken = self.awaiting.borrow_mut().remove(&instance);
        if taken.is_some() {
            self.undo
                .borrow_mut()
                .push(Undo::Awaiting(instance, taken.clone()));
        }
        taken
    }

    /// The correlate request at position `request` waits for `pending` subscriptions of the
    /// message `message_key` to answer.
    pub fn await_correlation(&self, message_key: i64, request: i64, pending: usize) {
        let old = self
            .correlations
            .borrow_mut()
            .insert(message_key, PendingCorrelation { request, pending });
        self.undo
            .borrow_mut()
            .push(Undo::Correlation(message_key, old));
    }

    /// A subscription took the message `message_key` (`taken`) or refused it.
    pub fn correlation_answered(&self, message_key: i64, taken: bool) -> CorrelationOutcome {
        let mut correlations = self.correlations.borrow_mut();
        let Some(pending) = correlations.get_mut(&message_key) else {
            return CorrelationOutcome::Open;
        };
        let before = pending.clone();
        pending.pending = pending.pending.saturating_sub(1);
        let outcome = if taken {
            CorrelationOutcome::Taken(pending.request)
        } else if pending.pending == 0 {
            CorrelationOutcome::Refused(pending.request)
        } else {
            CorrelationOutcome::Open
        };
        if outcome != CorrelationOutcome::Open {
            correlations.remove(&message_key);
        }
        self.undo
            .borrow_mut()
            .push(Undo::Correlation(message_key, Some(before)));
        outcome
    }

    /// The request at position `request` waits for the listeners of the user task `key`.
    pub fn await_user_task(&self, key: i64, request: i64) {
        let old = self.user_tasks.borrow_mut().insert(key, request);
        self.undo.borrow_mut().push(Undo::UserTask(key, old));
    }

    /// The request waiting for the listeners of the user task `key`, if one does.
    pub fn take_user_task_request(&self, key: i64) -> Option<i64> {
        let taken = self.user_tasks.borrow_mut().remove(&key);
        if taken.is_some() {
            self.undo.borrow_mut().push(Undo::UserTask(key, taken));
        }
        taken
    }

    /// Keeps the changes of the batch that just succeeded.
    pub fn commit(&self) {
        self.undo.borrow_mut().clear();
    }

    /// Takes back the changes of the batch that just failed.
    pub fn rollback(&self) {
        let undo = std::mem::take(&mut *self.undo.borrow_mut());
        for change in undo.into_iter().rev() {
            match change {
                Undo::Awaiting(key, old) => restore(&self.awaiting, key, old),
                Undo::Correlation(key, old) => restore(&self.correlations, key, old),
                Undo::UserTask(key, old) => restore(&self.user_tasks, key, old),
            }
        }
    }
}

fn restore<V>(map: &RefCell<HashMap<i64, V>>, key: i64, old: Option<V>) {
    let mut map = map.borrow_mut();
    match old {
        Some(value) => map.insert(key, value),
        None => map.remove(&key),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rolled_back_batch_takes_its_changes_back() {
        let transient = Transient::default();
        transient.await_result(
            1,
            AwaitingResult {
                request: 10,
                fetch_variables: Vec::new(),
            },
        );
        transient.await_correlation(7, 20, 2);
        transient.commit();

        assert!(transient.take_awaiting(1).is_some());
        transient.await_result(
            2,
            AwaitingResult {
                request: 11,
                fetch_variables: Vec::new(),
            },
        );
        assert_eq!(
            transient.correlation_answered(7, false),
            CorrelationOutcome::Open
        );
        transient.rollback();

        assert_eq!(transient.take_awaiting(1).map(|a| a.request), Some(10));
        assert!(transient.take_awaiting(2).is_none());
        // Still two answers pending: one refusal leaves it open, the second refuses it.
        assert_eq!(
            transient.correlation_answered(7, false),
            CorrelationOutcome::Open
        );
        assert_eq!(
            transient.correlation_answered(7, false),
            CorrelationOutcome::Refused(20)
        );
        assert_eq!(
            transient.correlation_answered(7, true),
            CorrelationOutcome::Open
        );
    }

    #[test]
    fn the_first_instance_to_take_the_message_answers() {
        let transient = Transient::default();
        transient.await_correlation(7, 20, 3);
        assert_eq!(
            transient.correlation_answered(7, false),
            CorrelationOutcome::Open
        );
        assert_eq!(
            transient.correlation_answered(7, true),
            CorrelationOutcome::Taken(20)
        );
        assert_eq!(
            transient.correlation_answered(7, true),
            CorrelationOutcome::Open
        );
    }
}
