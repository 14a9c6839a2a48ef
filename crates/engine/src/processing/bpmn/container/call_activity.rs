//! The call activity (Zeebe's `CallActivityProcessor`): starts an instance of another process
//! (its `zeebe:calledElement`, a static or evaluated process id, bound to its latest version,
//! the version deployed with the calling process, or the latest version with a version tag)
//! on the same partition, and completes when that instance completes.
//!
//! The child gets the variables visible from the call activity
//! (`propagateAllParentVariables`, the default), or only its input mappings' results; the
//! call activity completes with the child's variables (`propagateAllChildVariables`, the
//! default, or through its output mappings). Terminating the call activity terminates the
//! child; errors and escalations the child does not catch reach the call activity's boundary
//! events (`behavior/events.rs`).

use std::sync::Arc;

use beeline_bpmn::{BindingType, CallActivity, ElementData, ExprOrStatic};
use beeline_protocol::intent::ProcessInstanceIntent as PI;
use beeline_protocol::value::ProcessInstanceRecord;

use crate::error::ProcessingError;
use crate::expression::wrong_type;
use crate::model::DeployedProcess;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::behavior::subscriptions;
use crate::processing::bpmn::behavior::variables::{Document, VariableOwner, create_local, eval};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, ErrorType, Failure, Step};
use crate::processing::process_instance::root_record;
use crate::state::values::{ElementInstance, ElementLifecycle};

/// How many process instances deep call activities may nest (Zeebe's default
/// `maxProcessDepth`): a recursion stops there with an incident.
pub(crate) const MAX_PROCESS_DEPTH: i32 = 1000;

pub(crate) struct CallActivityProcessor;

fn called_element_error(message: String) -> Failure {
    Failure::Incident(ErrorType::CalledElementError, message)
}

impl ElementProcessor for CallActivityProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        let ElementData::CallActivity(called) = &process.model[bpmn.index].data else {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "'{}' is not a call activity",
                bpmn.record.element_id
            ))));
        };
        let process_id = process_id(bpmn, called)?;
        let child = called_process(bpmn, called, &process_id)?;
        if child
            .model
            .root()
            .scope
            .as_ref()
            .and_then(|s| s.none_start_event)
            .is_none()
        {
            return Err(called_element_error(format!(
                "Expected process with BPMN process id '{process_id}' to have a none start event, but not found."
            )));
        }
        let depth = bpmn
            .ctx
            .state()
            .element_instances()
            .get(bpmn.record.process_instance_key)?
            .map_or(1, |root| root.process_depth.max(1));
        if depth >= MAX_PROCESS_DEPTH {
            return Err(called_element_error(format!(
                "The call activity has reached the maximum depth of {MAX_PROCESS_DEPTH}. This is likely due to a recursive call. Cancel the root process instance if this was unintentional. Otherwise, consider increasing the maximum depth, or use process instance modification to adjust the process instance."
            )));
        }
        subscriptions::open(bpmn)?;
        bpmn.write(PI::ElementActivated)?;
        let child_key = bpmn.ctx.next_key()?;
        let record = ProcessInstanceRecord {
            parent_process_instance_key: bpmn.record.process_instance_key,
            parent_element_instance_key: bpmn.key,
            ..root_record(&child, child_key)
        };
        bpmn.ctx
            .append_command(child_key, PI::ActivateElement, record.clone());
        let handed = if called.propagate_all_parent_variables {
            Some(bpmn.ctx.state().variables().visible(bpmn.key)?)
        } else if !bpmn.element().io_mapping.inputs.is_empty() {
            // The input mappings' results, the call activity's own variables.
            Some(
                bpmn.ctx
                    .state()
                    .variables()
                    .local(bpmn.key)?
                    .into_iter()
                    .map(|(name, variable)| (name, variable.value))
                    .collect(),
            )
        } else {
            None
        };
        if let Some(variables) = handed {
            let document = Document::from_printed(variables.into_iter().collect());
            create_local(bpmn.ctx, child_key, &document, &VariableOwner::of(&record))?;
        }
        Ok(())
    }

    /// The called instance is terminated first; the call activity follows when it is gone.
    fn on_terminate(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
    ) -> Result<bool, ProcessingError> {
        let Some(call) = bpmn.instance()? else {
            return Ok(false);
        };
        let child = match call.called_child_key {
            key if key > 0 => bpmn.ctx.state().element_instances().get(key)?,
            _ => None,
        };
        let Some(child) = child else {
            return Ok(false);
        };
        if !child.is(ElementLifecycle::Terminating) {
            bpmn.ctx
                .append_command(child.key, PI::TerminateElement, child.record());
        }
        Ok(true)
    }
}

/// The process id to call: static, or an expression that must give a string.
fn process_id(bpmn: &BpmnElementContext<'_, '_, '_>, called: &CallActivity) -> Step<String> {
    match &called.process_id {
        ExprOrStatic::Static(id) => Ok(id.clone()),
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((beeline_feel::Value::String(id), _)) => Ok(id.to_string()),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                Err(Failure::Incident(
                    ErrorType::ExtractValueError,
                    wrong_type(expression, "STRING", &other, &warnings),
                ))
            }
            Err(failure) => Err(Failure::of_evaluation(
                failure,
                ErrorType::ExtractValueError,
            )),
        },
    }
}

/// The process the binding type chooses.
fn called_process(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    called: &CallActivity,
    process_id: &str,
) -> Step<Arc<DeployedProcess>> {
    let processes = bpmn.ctx.state().processes();
    let found = match called.binding_type {
        BindingType::Latest => match processes.latest(&bpmn.process.tenant_id, process_id)? {
            Some((_, key)) => processes.deployed(key)?,
            None => None,
        },
        BindingType::Deployment => {
            let deployment = bpmn.process.deployment_key;
            latest_matching(bpmn, process_id, |p| p.deployment_key == deployment)?
        }
        BindingType::VersionTag => {
            let tag = called.version_tag.as_deref().unwrap_or_default();
            latest_matching(bpmn, process_id, |p| p.version_tag == tag)?
        }
    };
    found.ok_or_else(|| {
        called_element_error(match called.binding_type {
            BindingType::Latest => format!(
                "Expected process with BPMN process id '{process_id}' to be deployed, but not found."
            ),
            BindingType::Deployment => format!(
                "Expected to call process with BPMN process id '{process_id}' with binding type 'deployment', but no such process found in the deployment with key {} which contained the current process. To resolve this incident, migrate the process instance to a process definition that is deployed together with the intended process definition to call.",
                bpmn.process.deployment_key
            ),
            BindingType::VersionTag => format!(
                "Expected to call process with BPMN process id '{process_id}' and version tag '{}', but no such process found. To resolve this incident, deploy a process with the given process id and version tag.",
                called.version_tag.as_deref().unwrap_or_default()
            ),
        })
    })
}

/// The latest version of `process_id` that `matches`.
fn latest_matching(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    process_id: &str,
    matches: impl Fn(&DeployedProcess) -> bool,
) -> Result<Option<Arc<DeployedProcess>>, ProcessingError> {
    let processes = bpmn.ctx.state().processes();
    let tenant = bpmn.process.tenant_id.as_str();
    let Some((latest, _)) = processes.latest(tenant, process_id)? else {
        return Ok(None);
    };
    for version in (1..=latest).rev() {
        if let Some(key) = processes.by_version(tenant, process_id, version)?
            && let Some(process) = processes.deployed(key)?
            && matches(&process)
        {
            return Ok(Some(process));
        }
    }
    Ok(None)
}

/// The process instance a call activity created completed: the call activity completes (with
/// its variables, which the instance's ELEMENT_COMPLETED handed it), or, when it is being
/// terminated meanwhile, goes on terminating.
pub(crate) fn on_called_process_completed(
    ctx: &mut ProcessingContext<'_, '_>,
    call_activity_key: i64,
) -> Result<(), ProcessingError> {
    let Some(call) = ctx.state().element_instances().get(call_activity_key)? else {
        return Ok(());
    };
    if call.is(ElementLifecycle::Activated) {
        ctx.append_command(call.key, PI::CompleteElement, call.record());
    } else if call.is(ElementLifecycle::Terminating) {
        ctx.append_command(call.key, PI::TerminateElement, call.record());
    } else {
        return Err(unexpected_state(&call, "complete"));
    }
    Ok(())
}

/// The process instance a call activity created was terminated: the call activity, which
/// terminated it, goes on terminating.
pub(crate) fn on_called_process_terminated(
    ctx: &mut ProcessingContext<'_, '_>,
    call_activity_key: i64,
) -> Result<(), ProcessingError> {
    let Some(call) = ctx.state().element_instances().get(call_activity_key)? else {
        return Ok(());
    };
    if !call.is(ElementLifecycle::Terminating) {
        return Err(unexpected_state(&call, "terminate"));
    }
    ctx.append_command(call.key, PI::TerminateElement, call.record());
    Ok(())
}

fn unexpected_state(call: &ElementInstance, what: &str) -> ProcessingError {
    ProcessingError::Internal(format!(
        "Expected to {what} call activity {} after its child instance, but it is in state {}",
        call.key, call.state
    ))
}
