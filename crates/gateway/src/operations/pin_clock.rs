//! Pin the engine's clock, or reset it to the system clock: `CLOCK PIN` / `CLOCK RESET` on
//! the deployment partition, which distributes it to every other partition. While pinned,
//! every partition's time stands at the pinned instant: timers, job time-outs and message
//! time-to-live follow it (Camunda Process Test moves time this way).

use beeline_protocol::Record;
use beeline_protocol::intent::ClockIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::ClockRecord;

use super::keyed;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::routing::DEPLOYMENT_PARTITION;
use crate::validate;

/// What to do with the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChange {
    /// Stand still at this instant (ms since the epoch).
    Pin(i64),
    /// Follow the system clock again.
    Reset,
}

pub(crate) fn command(change: ClockChange) -> Result<Record, GatewayError> {
    Ok(match change {
        ClockChange::Pin(time) => {
            validate::at_least("timestamp", time, 0)?;
            Record::command(NO_KEY, ClockIntent::Pin, ClockRecord { time })
        }
        ClockChange::Reset => Record::command(NO_KEY, ClockIntent::Reset, ClockRecord { time: 0 }),
    })
}

/// The clock as the partitions now have it: the pinned instant, or 0 after a reset.
pub async fn run(d: &Dispatcher, change: ClockChange) -> Result<ClockRecord, GatewayError> {
    let command = command(change)?;
    let what = match change {
        ClockChange::Pin(_) => "pinning the clock",
        ClockChange::Reset => "resetting the clock",
    };
    d.require(command.intent, what)?;
    Ok(keyed::<ClockRecord>(d.execute(DEPLOYMENT_PARTITION, command).await?)?.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_and_reset_commands() {
        let pin = command(ClockChange::Pin(1_700_000_000_000)).unwrap();
        assert_eq!(pin.intent, ClockIntent::Pin.into());
        assert_eq!(
            pin.value_as::<ClockRecord>().unwrap().time,
            1_700_000_000_000
        );
        let reset = command(ClockChange::Reset).unwrap();
        assert_eq!(reset.intent, ClockIntent::Reset.into());
        let negative = command(ClockChange::Pin(-1)).unwrap_err();
        assert_eq!(
            negative.to_string(),
            "The value for timestamp is '-1' but must be 0 or greater"
        );
    }
}
