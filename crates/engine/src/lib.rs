//! The engine: Zeebe's processing model without I/O.
//!
//! A command goes to its **processor** (one per command intent, in `processing/`), which reads
//! [`EngineState`] and writes events, follow-up commands, a rejection and a response through a
//! [`ProcessingContext`]. Every event is handed at once to its **applier** (one per event intent
//! and record version, in `appliers/`), the only code that changes state, so later reads in the
//! batch see it. Follow-up commands are processed in the same batch until none is left or the
//! batch limit is reached. Replay runs the appliers alone, which is why state is a pure
//! function of the log.
//!
//! The engine never touches the log, a socket or the wall clock: the stream processor feeds it
//! commands (whose timestamp is the processing time) and stores what it returns.

mod appliers;
mod engine;
mod error;
mod expression;
pub mod model;
mod partitions;
mod processing;
pub mod push;
pub mod state;
mod transient;

pub use engine::{Engine, EngineConfig, ProcessingResult, ReplayProgress, Response};
pub use error::{FatalError, ProcessingError};
pub use processing::ProcessingContext;
pub use push::{JobPush, Push, PushSlot};
pub use state::EngineState;
