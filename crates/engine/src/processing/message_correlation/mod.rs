//! Message correlation (`MESSAGE_CORRELATION`): a message correlated at once and never
//! buffered, whose request learns the first process instance it reached.

mod correlate;

use beeline_protocol::intent::MessageCorrelationIntent;

use super::Processors;

pub(crate) use correlate::answer_pending;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        MessageCorrelationIntent::Correlate,
        correlate::MessageCorrelationCorrelateProcessor,
    );
}
