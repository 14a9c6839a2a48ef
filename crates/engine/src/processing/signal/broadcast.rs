use beeline_protocol::intent::SignalIntent;
use beeline_protocol::value::SignalRecord;
use beeline_protocol::{Record, RejectionType, tenant_or_default};

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::{events, variables};
use crate::processing::{CommandProcessor, ProcessingContext, distribution, value_of};

/// `SIGNAL BROADCAST`: triggers the signal's subscriptions here, starts instances at signal
/// start events, and is distributed to every other partition, where it triggers the waiting
/// catch events (start events only start on the receiving partition, once per signal).
pub(crate) struct SignalBroadcastProcessor;

impl CommandProcessor for SignalBroadcastProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let mut signal = value_of::<SignalRecord>(command)?.clone();
        signal.tenant_id = tenant_or_default(&signal.tenant_id).to_owned();
        let distributed = command.key > 0;
        // Checked where it is broadcast; the copies distributed carry the canonical text.
        let signal_variables = match variables::Document::parse(&signal.variables) {
            Ok(document) => document,
            Err(reason) if !distributed => {
                ctx.reject(
                    command,
                    RejectionType::InvalidArgument,
                    format!("Expected to broadcast a signal with variables, but {reason}"),
                );
                return Ok(());
            }
            Err(_) => variables::Document::default(),
        };
        signal.variables = signal_variables.to_bytes();
        let key = if distributed {
            command.key
        } else {
            ctx.next_key()?
        };
        let event = ctx.append_event(key, SignalIntent::Broadcasted, signal.clone())?;
        if !distributed {
            ctx.respond(event);
        }
        for (_, subscription) in ctx
            .state()
            .signal_subscriptions()
            .by_name(&signal.tenant_id, &signal.signal_name)?
        {
            let Some(process) = ctx
                .state()
                .processes()
                .deployed(subscription.process_definition_key)?
            else {
                continue;
            };
            if subscription.catch_event_instance_key <= 0 {
                if !distributed && let Some(start) = process.element(&subscription.catch_event_id) {
                    let instance_key = ctx.next_key()?;
                    events::start_instance(
                        ctx,
                        &process,
                        start,
                        signal.variables.clone(),
                        instance_key,
                    )?;
                }
                continue;
            }
            let Some(instance) = ctx
                .state()
                .element_instances()
                .get(subscription.catch_event_instance_key)?
            else {
                continue;
            };
            if let Some(catch) = events::catch_of(&process, &instance, &subscription.catch_event_id)
                && events::can_trigger(ctx, &catch)?
            {
                events::trigger(ctx, &process, &catch, &signal_variables)?;
            }
        }
        if distributed {
            distribution::acknowledge(ctx, command)?;
            Ok(())
        } else {
            distribution::distribute(ctx, key, SignalIntent::Broadcast, signal)
        }
    }
}
