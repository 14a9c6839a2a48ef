//! The script task (Zeebe's `ScriptTaskProcessor`): a FEEL expression whose result is the
//! variable the task completes with; or, with a `zeebe:taskDefinition`, a job worker's task.

use beeline_bpmn::{ElementData, ScriptTask};
use serde_json::Map;

use crate::processing::bpmn::behavior::variables::{Document, eval};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, ErrorType, Failure, Step};

pub(crate) struct ScriptTaskProcessor;

impl ElementProcessor for ScriptTaskProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        super::activate_computing_or_job_worker(bpmn)
    }

    fn completion_result(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
        again: bool,
    ) -> Step<Option<Document>> {
        match script_result(bpmn) {
            // A completion retried after an incident at ELEMENT_COMPLETING evaluates the
            // script again; it succeeded once, and failing now raises no second incident.
            Err(Failure::Incident(..)) if again => Ok(None),
            result => result,
        }
    }
}

/// The result of the script's expression, as the variables the task completes with.
fn script_result(bpmn: &BpmnElementContext<'_, '_, '_>) -> Step<Option<Document>> {
    let ElementData::ScriptTask(ScriptTask::Script(script)) = &bpmn.element().data else {
        return Ok(None);
    };
    let (value, _) = eval(bpmn, script.expression.id, bpmn.key, None)
        .map_err(|failure| Failure::of_evaluation(failure, ErrorType::ExtractValueError))?;
    let mut result = Map::new();
    result.insert(script.result_variable.clone(), value.to_json());
    Ok(Some(Document::from_map(&result)))
}
