use beeline_protocol::intent::ClockIntent;
use beeline_protocol::value::ClockRecord;
use beeline_protocol::{Intent, Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, distribution, value_of};

/// `CLOCK PIN` (`PINNED`: time stands at the record's instant) and `CLOCK RESET`
/// (`RESETTED`: the system clock again). Answered where it arrives, then distributed to every
/// other partition; a distributed copy carries the original's key and is acknowledged.
pub(crate) struct ClockChangeProcessor;

impl CommandProcessor for ClockChangeProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let clock = value_of::<ClockRecord>(command)?.clone();
        let pin = command.intent == Intent::from(ClockIntent::Pin);
        if pin && clock.time < 0 {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to pin the clock to a positive instant, but got {}",
                    clock.time
                ),
            );
            return Ok(());
        }
        let distributed = command.key > 0;
        let key = if distributed {
            command.key
        } else {
            ctx.next_key()?
        };
        let (event_intent, command_intent) = if pin {
            (ClockIntent::Pinned, ClockIntent::Pin)
        } else {
            (ClockIntent::Resetted, ClockIntent::Reset)
        };
        let event = ctx.append_event(key, event_intent, clock.clone())?;
        if distributed {
            distribution::acknowledge(ctx, command)?;
            Ok(())
        } else {
            ctx.respond(event);
            distribution::distribute(ctx, key, command_intent, clock)
        }
    }
}
