//! What the engine keeps in memory only: requests that wait for a process instance to
//! complete. It dies with the process, as the requests do; replay never touches it.

use std::cell::RefCell;
use std::collections::HashMap;

/// A `CreateProcessInstanceWithResult` request waiting for its instance.
#[derive(Debug, Clone)]
pub struct AwaitingResult {
    /// Position of the creation command: how the stream processor finds the requester.
    pub request: i64,
    pub fetch_variables: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Transient {
    awaiting: RefCell<HashMap<i64, AwaitingResult>>,
}

impl Transient {
    pub fn await_result(&self, instance: i64, awaiting: AwaitingResult) {
        self.awaiting.borrow_mut().insert(instance, awaiting);
    }

    pub fn take_awaiting(&self, instance: i64) -> Option<AwaitingResult> {
        self.awaiting.borrow_mut().remove(&instance)
    }
}
