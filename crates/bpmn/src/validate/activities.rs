//! Rules on activities and what is attached to them: boundary events, compensation.

use super::Check;
use super::duplicates;
use crate::model::*;

pub(super) fn check(c: &mut Check<'_, '_>) {
    let process = &c.draft.process;
    for (index, element) in process.iter() {
        if element.is_activity() {
            boundary_events(c, index, element);
        }
        if element.is_for_compensation {
            compensation_handler(c, index, element);
        }
        match &element.data {
            ElementData::BoundaryEvent(boundary) => boundary_event(c, index, element, boundary),
            ElementData::EndEvent(ThrowEvent {
                event: EventDefinition::Compensation(compensation),
            })
            | ElementData::IntermediateThrowEvent(ThrowEvent {
                event: EventDefinition::Compensation(compensation),
            }) => compensation_throw(c, index, element, compensation),
            _ => {}
        }
    }
}

/// The boundary events of one activity must be told apart; a receive task's message must
/// differ from its boundary events' messages.
fn boundary_events(c: &mut Check<'_, '_>, index: ElementIndex, activity: &Element) {
    let process = &c.draft.process;
    let definitions: Vec<&EventDefinition> = activity
        .boundary_events
        .iter()
        .filter_map(|&b| process.element(b)?.event_definition())
        .collect();
    let mut messages = duplicates::names(&definitions);
    messages.extend(duplicates::handlers(&definitions));
    if let ElementData::ReceiveTask(task) = &activity.data {
        let name = task.message.name.raw();
        let same = definitions.iter().any(|d| match d {
            EventDefinition::Message(m) => m
                .message
                .as_ref()
                .is_some_and(|m| !name.is_empty() && m.name.raw() == name),
            _ => false,
        });
        if same {
            messages.push("Cannot reference the same message name as a boundary event".into());
        }
    }
    for message in messages {
        c.on_element(index, message);
    }
}

fn boundary_event(
    c: &mut Check<'_, '_>,
    index: ElementIndex,
    element: &Element,
    boundary: &BoundaryEvent,
) {
    let process = &c.draft.process;
    let attached = process
        .element(boundary.attached_to)
        .filter(|_| boundary.attached_to != ElementIndex::PROCESS);
    if let (EventDefinition::Escalation(_), Some(activity)) = (&boundary.event, attached)
        && !matches!(
            activity.data,
            ElementData::SubProcess
                | ElementData::EventSubProcess
                | ElementData::AdHocSubProcess(_)
                | ElementData::CallActivity(_)
        )
    {
        c.on_element(
            index,
            "An escalation boundary event should only be attached to a subprocess, or a call activity.",
        );
    }
    if matches!(boundary.event, EventDefinition::Compensation(_)) {
        let associated = c
            .draft
            .associations
            .iter()
            .any(|(source, _)| *source == element.id);
        if !element.outgoing.is_empty() || !associated {
            c.on_element(
                index,
                "Compensation boundary events must have a compensation association and no outgoing sequence flows",
            );
        }
    }
}

/// A task marked `isForCompensation` is only started by compensation.
fn compensation_handler(c: &mut Check<'_, '_>, index: ElementIndex, element: &Element) {
    let is_task = matches!(
        element.data,
        ElementData::Task
            | ElementData::ManualTask
            | ElementData::ServiceTask(_)
            | ElementData::SendTask(_)
            | ElementData::ReceiveTask(_)
            | ElementData::UserTask(_)
            | ElementData::ScriptTask(_)
            | ElementData::BusinessRuleTask(_)
    );
    // Zeebe checks tasks only; a compensating sub-process or call activity is not checked.
    if !is_task {
        return;
    }
    if matches!(
        element.data,
        ElementData::ReceiveTask(_) | ElementData::BusinessRuleTask(_)
    ) {
        c.on_element(
            index,
            "Compensation task must be one of: service task, user task, send task, script task, manual task, or undefined task.",
        );
    }
    if !element.incoming.is_empty() {
        c.on_element(
            index,
            "A compensation handler should have no incoming sequence flows",
        );
    }
    if !element.outgoing.is_empty() {
        c.on_element(
            index,
            "A compensation handler should have no outgoing sequence flows",
        );
    }
    if !element.boundary_events.is_empty() {
        c.on_element(
            index,
            "A compensation handler should have no boundary events",
        );
    }
}

/// A compensation throw event's `activityRef` names an activity of its own scope that can
/// be compensated.
fn compensation_throw(
    c: &mut Check<'_, '_>,
    index: ElementIndex,
    element: &Element,
    compensation: &CompensationEventDefinition,
) {
    let process = &c.draft.process;
    let Some(activity_index) = compensation.activity else {
        return;
    };
    let Some(activity) = process.element(activity_index) else {
        return;
    };
    let has_compensation_boundary = activity.boundary_events.iter().any(|&b| {
        matches!(
            process.element(b).map(|e| &e.data),
            Some(ElementData::BoundaryEvent(BoundaryEvent {
                event: EventDefinition::Compensation(_),
                ..
            }))
        )
    });
    let is_sub_process = matches!(
        activity.data,
        ElementData::SubProcess | ElementData::AdHocSubProcess(_)
    );
    if !has_compensation_boundary && !is_sub_process {
        c.on_event_definition(
            index,
            format!(
                "The referenced compensation activity '{}' must have either a compensation boundary event or be a subprocess",
                activity.id
            ),
        );
    }
    if activity.parent != element.parent {
        c.on_event_definition(
            index,
            format!(
                "The referenced compensation activity '{}' must be in the same scope as the compensation throw event",
                activity.id
            ),
        );
    }
}
