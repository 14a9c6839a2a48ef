//! Rules per scope: start events of processes and sub-processes, event sub-processes,
//! ad-hoc sub-processes, link events.

use super::Check;
use super::duplicates;
use crate::model::*;

pub(super) fn check(c: &mut Check<'_, '_>) {
    let process = &c.draft.process;
    for (index, element) in process.iter() {
        let Some(scope) = &element.scope else {
            continue;
        };
        match &element.data {
            ElementData::Process => process_start_events(c, index, scope),
            ElementData::AdHocSubProcess(_) => {
                ad_hoc(c, index, scope);
                sub_process_start_event(c, index, scope);
            }
            _ => {
                if scope.start_events.len() != 1 {
                    c.on_element(index, "Must have exactly one start event");
                }
                sub_process_start_event(c, index, scope);
            }
        }
        event_sub_process_duplicates(c, index, scope);
        links(c, index);
    }
}

fn start_event(process: &Process, index: ElementIndex) -> Option<&StartEvent> {
    match &process.element(index)?.data {
        ElementData::StartEvent(s) => Some(s),
        _ => None,
    }
}

fn process_start_events(c: &mut Check<'_, '_>, index: ElementIndex, scope: &FlowScope) {
    let process = &c.draft.process;
    if scope.start_events.is_empty() {
        c.on_element(index, "Must have at least one start event");
        return;
    }
    let starts: Vec<&StartEvent> = scope
        .start_events
        .iter()
        .filter_map(|&s| start_event(process, s))
        .collect();
    let none = starts
        .iter()
        .filter(|s| matches!(s.event, EventDefinition::None))
        .count();
    if none > 1 {
        c.on_element(index, "Multiple none start events are not allowed");
    }
    // Signal start events must differ by name; message start events too, when they
    // reference different messages (one message used twice is reported on the message).
    let signals: Vec<&EventDefinition> = starts
        .iter()
        .map(|s| &s.event)
        .filter(|e| matches!(e, EventDefinition::Signal(_)))
        .collect();
    let mut seen_messages: Vec<&str> = Vec::new();
    let messages: Vec<&EventDefinition> = starts
        .iter()
        .map(|s| &s.event)
        .filter(|e| match e {
            EventDefinition::Message(m) => match &m.message {
                Some(message) if !seen_messages.contains(&message.message_id.as_str()) => {
                    seen_messages.push(&message.message_id);
                    true
                }
                _ => false,
            },
            _ => false,
        })
        .collect();
    for message in duplicates::names(&signals)
        .into_iter()
        .chain(duplicates::names(&messages))
    {
        c.on_element(index, message);
    }
}

/// Zeebe checks the first start event of a sub-process.
fn sub_process_start_event(c: &mut Check<'_, '_>, index: ElementIndex, scope: &FlowScope) {
    let process = &c.draft.process;
    let Some(&first) = scope.start_events.first() else {
        return;
    };
    let Some(start) = start_event(process, first) else {
        return;
    };
    let Some(element) = process.element(index) else {
        return;
    };
    if !matches!(element.data, ElementData::EventSubProcess) {
        if !matches!(start.event, EventDefinition::None) {
            c.on_element(index, "Start events in subprocesses must be of type none");
        }
        return;
    }
    let supported = matches!(
        start.event,
        EventDefinition::Timer(_)
            | EventDefinition::Message(_)
            | EventDefinition::Error(_)
            | EventDefinition::Signal(_)
            | EventDefinition::Escalation(_)
            | EventDefinition::Conditional(_)
    );
    if !supported {
        c.on_element(
            index,
            "Start events in event subprocesses must be one of: message, timer, error, signal, escalation or conditional",
        );
    }
    let parent = process.scope_of(index).map(|p| &p.data);
    if matches!(start.event, EventDefinition::Compensation(_))
        && matches!(parent, Some(ElementData::Process))
    {
        c.on_element(
            index,
            "A compensation event subprocess is not allowed on the process level",
        );
    }
    if start.interrupting && matches!(parent, Some(ElementData::AdHocSubProcess(_))) {
        c.on_element(
            index,
            "An interrupting event subprocess is not allowed inside an ad-hoc subprocess",
        );
    }
}

fn ad_hoc(c: &mut Check<'_, '_>, index: ElementIndex, scope: &FlowScope) {
    let process = &c.draft.process;
    if scope.children.is_empty() {
        c.on_element(index, "Must have at least one activity.");
    }
    let has = |f: fn(&ElementData) -> bool| {
        scope
            .children
            .iter()
            .filter_map(|&i| process.element(i))
            .any(|e| f(&e.data))
    };
    if has(|d| matches!(d, ElementData::StartEvent(_))) {
        c.on_element(index, "Must not contain a start event.");
    }
    if has(|d| matches!(d, ElementData::EndEvent(_))) {
        c.on_element(index, "Must not contain an end event.");
    }
}

/// The start events of a scope's event sub-processes must be told apart.
fn event_sub_process_duplicates(c: &mut Check<'_, '_>, index: ElementIndex, scope: &FlowScope) {
    let process = &c.draft.process;
    let definitions: Vec<&EventDefinition> = scope
        .event_sub_processes
        .iter()
        .filter_map(|&esp| process.element(esp)?.scope.as_ref())
        .flat_map(|s| s.start_events.iter())
        .filter_map(|&s| start_event(process, s))
        .map(|s| &s.event)
        .collect();
    let mut messages = duplicates::names(&definitions);
    messages.extend(duplicates::handlers(&definitions));
    for message in messages {
        c.on_element(index, message);
    }
}

/// Link catch events in a scope (and, as in Zeebe, in its sub-processes) have unique
/// names; every link throw event has a catch event with its name in its own scope.
fn links(c: &mut Check<'_, '_>, index: ElementIndex) {
    let process = &c.draft.process;
    let mut catches: Vec<&EventDefinition> = Vec::new();
    collect_link_catches(process, index, &mut catches, 0);
    let mut messages = duplicates::names(&catches);
    let Some(scope) = process.element(index).and_then(|e| e.scope.as_ref()) else {
        return;
    };
    let local_catches: Vec<&str> = scope
        .children
        .iter()
        .filter_map(|&i| match &process.element(i)?.data {
            ElementData::IntermediateCatchEvent(CatchEvent {
                event: EventDefinition::Link(l),
            }) => Some(l.name.as_str()),
            _ => None,
        })
        .collect();
    let mut missing: Vec<&str> = Vec::new();
    for &child in &scope.children {
        if let Some(ElementData::IntermediateThrowEvent(ThrowEvent {
            event: EventDefinition::Link(l),
        })) = process.element(child).map(|e| &e.data)
            && !l.name.is_empty()
            && !local_catches.contains(&l.name.as_str())
            && !missing.contains(&l.name.as_str())
        {
            missing.push(&l.name);
        }
    }
    messages.extend(missing.into_iter().map(|name| {
        format!("Can't find an catch link event for the throw link event with the name '{name}'.")
    }));
    for message in messages {
        c.on_element(index, message);
    }
}

fn collect_link_catches<'p>(
    process: &'p Process,
    scope: ElementIndex,
    into: &mut Vec<&'p EventDefinition>,
    depth: usize,
) {
    // Scopes nest at most as deep as the XML, which is bounded; this guards the invariant.
    if depth > crate::xml::MAX_DEPTH {
        return;
    }
    let Some(children) = process
        .element(scope)
        .and_then(|e| e.scope.as_ref())
        .map(|s| &s.children)
    else {
        return;
    };
    for &child in children {
        let Some(element) = process.element(child) else {
            continue;
        };
        match &element.data {
            ElementData::IntermediateCatchEvent(CatchEvent {
                event: e @ EventDefinition::Link(_),
            }) => into.push(e),
            _ if element.scope.is_some() => collect_link_catches(process, child, into, depth + 1),
            _ => {}
        }
    }
}
