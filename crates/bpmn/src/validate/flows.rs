//! Rules on sequence flows: conditions, default flows, event-based gateways, flows that
//! events may not have.

use super::Check;
use super::duplicates;
use crate::model::*;

pub(super) fn check(c: &mut Check<'_, '_>) {
    let process = &c.draft.process;
    for (index, element) in process.iter() {
        let outgoing: Vec<&SequenceFlow> = element
            .outgoing
            .iter()
            .filter_map(|&f| process.sequence_flow(f))
            .collect();
        match &element.data {
            ElementData::ExclusiveGateway(gateway) | ElementData::InclusiveGateway(gateway) => {
                conditions(c, element, gateway)
            }
            ElementData::EventBasedGateway => event_based_gateway(c, index, element),
            _ => {
                if outgoing.iter().any(|f| f.condition.is_some()) {
                    c.on_element(
                        index,
                        "Conditional sequence flows are only supported at exclusive or inclusive gateway",
                    );
                }
            }
        }
        match &element.data {
            ElementData::EndEvent(_) if !element.outgoing.is_empty() => c.on_element(
                index,
                "End events must not have outgoing sequence flows to other elements.",
            ),
            ElementData::BoundaryEvent(_) if !element.incoming.is_empty() => {
                c.on_element(index, "Cannot have incoming sequence flows")
            }
            _ => {}
        }
    }
}

/// Outgoing flows of exclusive and inclusive gateways: with more than one, each needs a
/// condition unless it is the default flow; the default flow needs none.
fn conditions(c: &mut Check<'_, '_>, gateway: &Element, data: &Gateway) {
    let exclusive = matches!(gateway.data, ElementData::ExclusiveGateway(_));
    let several = gateway.outgoing.len() > 1;
    for &flow_index in &gateway.outgoing {
        let Some(flow) = c.draft.process.sequence_flow(flow_index) else {
            continue;
        };
        let is_default = data.default_flow == Some(flow_index);
        if is_default && flow.condition.is_some() {
            c.on_flow(flow_index, "Default flow must not have a condition");
        }
        if several && !is_default && flow.condition.is_none() {
            c.on_flow(
                flow_index,
                if exclusive {
                    "Must have a condition or be default flow"
                } else {
                    "Must have a condition"
                },
            );
        }
    }
}

fn event_based_gateway(c: &mut Check<'_, '_>, index: ElementIndex, gateway: &Element) {
    let process = &c.draft.process;
    if gateway.outgoing.len() < 2 {
        c.on_element(
            index,
            "Event-based gateway must have at least 2 outgoing sequence flows.",
        );
    }
    let targets: Vec<(ElementIndex, &Element)> = gateway
        .outgoing
        .iter()
        .filter_map(|&f| process.sequence_flow(f))
        .filter_map(|f| Some((f.target, process.element(f.target)?)))
        .collect();
    let valid = targets.iter().all(|(_, t)| {
        matches!(
            t.data,
            ElementData::IntermediateCatchEvent(CatchEvent {
                event: EventDefinition::Message(_)
                    | EventDefinition::Timer(_)
                    | EventDefinition::Signal(_)
                    | EventDefinition::Conditional(_)
            })
        )
    });
    if !valid {
        c.on_element(
            index,
            "Event-based gateway must not have an outgoing sequence flow to other elements than message/timer/signal/conditional intermediate catch events.",
        );
    }
    let definitions: Vec<&EventDefinition> = targets
        .iter()
        .filter_map(|(_, t)| match &t.data {
            ElementData::IntermediateCatchEvent(CatchEvent {
                event: e @ (EventDefinition::Message(_) | EventDefinition::Signal(_)),
            }) => Some(e),
            _ => None,
        })
        .collect();
    for message in duplicates::names(&definitions) {
        c.on_element(index, message);
    }
    let only_from_gateway = targets.iter().all(|(_, t)| {
        t.incoming
            .iter()
            .filter_map(|&f| process.sequence_flow(f))
            .all(|f| f.source == index)
    });
    if !only_from_gateway {
        c.on_element(
            index,
            "Target elements of an event gateway must not have any additional incoming sequence flows other than that from the event gateway.",
        );
    }
}
