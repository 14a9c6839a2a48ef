use beeline_protocol::intent::VariableDocumentIntent;
use beeline_protocol::value::VariableDocumentRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::variables::{
    Document, VariableOwner, merge_local, merge_propagating,
};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `VARIABLE_DOCUMENT UPDATE` (SetVariables): sets variables on an active element instance,
/// locally or propagated as a job's variables are.
pub(crate) struct VariableDocumentUpdateProcessor;

impl CommandProcessor for VariableDocumentUpdateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let mut update = value_of::<VariableDocumentRecord>(command)?.clone();
        let variables = match Document::parse(&update.variables) {
            Ok(variables) => variables,
            Err(reason) => {
                ctx.reject(
                    command,
                    RejectionType::InvalidArgument,
                    format!("Expected to update variables with a document, but {reason}"),
                );
                return Ok(());
            }
        };
        let Some(element) = ctx.state().element_instances().get(update.scope_key)? else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to update variables for element with key '{}', but no such element was found",
                    update.scope_key
                ),
            );
            return Ok(());
        };
        let owner = VariableOwner::of(&element.record());
        let key = ctx.next_key()?;
        if update.update_semantics.is_empty() {
            update.update_semantics = "PROPAGATE".to_string();
        }
        update.process_instance_key = owner.process_instance_key;
        update.tenant_id = owner.tenant_id.clone();
        let event = ctx.append_event(key, VariableDocumentIntent::Updated, update.clone())?;
        ctx.respond(event);
        if update.update_semantics == "LOCAL" {
            merge_local(ctx, update.scope_key, &variables, &owner)
        } else {
            merge_propagating(ctx, update.scope_key, &variables, &owner)
        }
    }
}
