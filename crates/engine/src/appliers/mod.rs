//! Event appliers: one per event intent and record version, each in a file named after its
//! event. The only code that changes engine state. A changed applier gets a new record version
//! and the old one stays, so old logs replay the same.

mod error;
mod message;

use std::collections::HashMap;

use beeline_protocol::{Intent, Record};

use crate::error::ProcessingError;
use crate::state::EngineState;

pub(crate) trait EventApplier: Send + Sync {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError>;
}

/// Events that change no state: they only tell the log's readers what happened. Every event of
/// an implemented value type is either here or has an applier (a test checks it).
const NO_STATE_CHANGE: &[Intent] = &[];

pub(crate) struct Appliers(HashMap<(Intent, u16), Box<dyn EventApplier>>);

impl Appliers {
    pub fn new() -> Self {
        let mut appliers = Self(HashMap::new());
        message::register(&mut appliers);
        error::register(&mut appliers);
        appliers
    }

    pub fn register(
        &mut self,
        intent: impl Into<Intent>,
        version: u16,
        applier: impl EventApplier + 'static,
    ) {
        let intent = intent.into();
        assert!(intent.is_event(), "{intent:?} is a command, not an event");
        self.0.insert((intent, version), Box::new(applier));
    }

    pub fn apply(
        &self,
        event: &Record,
        state: &mut EngineState<'_>,
    ) -> Result<(), ProcessingError> {
        match self.0.get(&(event.intent, event.record_version)) {
            Some(applier) => applier.apply(event, state),
            None if NO_STATE_CHANGE.contains(&event.intent) => Ok(()),
            None => Err(ProcessingError::Internal(format!(
                "no applier for {:?} version {}",
                event.intent, event.record_version
            ))),
        }
    }

    #[cfg(test)]
    pub fn handles(&self, intent: Intent) -> bool {
        NO_STATE_CHANGE.contains(&intent) || self.0.keys().any(|(i, _)| *i == intent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::ValueType;

    /// Value types whose events this engine writes: their event intents must all be accounted for.
    const IMPLEMENTED: &[ValueType] = &[ValueType::Message, ValueType::Error];

    #[test]
    fn every_event_of_an_implemented_value_type_is_accounted_for() {
        let appliers = Appliers::new();
        for &value_type in IMPLEMENTED {
            for value in 0..=u8::MAX {
                if let Some(intent) = Intent::from_parts(value_type, value)
                    && intent.is_event()
                {
                    assert!(
                        appliers.handles(intent),
                        "{intent:?} has no applier and is not declared as changing no state"
                    );
                }
            }
        }
    }
}
