mod cancel;
mod create;

use beeline_protocol::intent::{ProcessInstanceCreationIntent, ProcessInstanceIntent};
use beeline_protocol::value::ProcessInstanceRecord;

use super::Processors;
use crate::model::DeployedProcess;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        ProcessInstanceCreationIntent::Create,
        create::ProcessInstanceCreateProcessor,
    );
    processors.register(
        ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        create::ProcessInstanceCreateProcessor,
    );
    processors.register(
        ProcessInstanceIntent::Cancel,
        cancel::ProcessInstanceCancelProcessor,
    );
}

/// The record of the process element of a new instance `instance_key` of `process`.
pub(crate) fn root_record(process: &DeployedProcess, instance_key: i64) -> ProcessInstanceRecord {
    ProcessInstanceRecord {
        bpmn_process_id: process.bpmn_process_id.clone(),
        version: process.version,
        process_definition_key: process.key,
        process_instance_key: instance_key,
        element_id: process.model.root().id.clone(),
        flow_scope_key: -1,
        bpmn_element_type: "PROCESS".to_string(),
        bpmn_event_type: "UNSPECIFIED".to_string(),
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: process.tenant_id.clone(),
    }
}
