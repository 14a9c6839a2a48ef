//! Which BPMN element names the parser models, ignores or rejects.

/// Flow elements Zeebe does not execute, with the name its error message uses (the Java
/// class name). They are rejected by name, never skipped.
pub(crate) fn unsupported_flow_element(local: &str) -> Option<&'static str> {
    Some(match local {
        "complexGateway" => "ComplexGateway",
        "transaction" => "Transaction",
        "implicitThrowEvent" => "ImplicitThrowEvent",
        "choreographyTask" => "ChoreographyTask",
        "subChoreography" => "SubChoreography",
        "callChoreography" => "CallChoreography",
        _ => return None,
    })
}

/// BPMN elements that may appear in a process (or sub-process) but mean nothing to the
/// execution: artifacts, data, lanes, resources, documentation. Accepted and ignored.
pub(crate) fn is_ignored_process_child(local: &str) -> bool {
    matches!(
        local,
        "documentation"
            | "extensionElements"
            | "auditing"
            | "monitoring"
            | "categoryValueRef"
            | "laneSet"
            | "ioSpecification"
            | "ioBinding"
            | "property"
            | "dataObject"
            | "dataObjectReference"
            | "dataStoreReference"
            | "textAnnotation"
            | "association"
            | "group"
            | "resourceRole"
            | "performer"
            | "humanPerformer"
            | "potentialOwner"
            | "correlationSubscription"
            | "supports"
            | "incoming"
            | "outgoing"
            | "dataInputAssociation"
            | "dataOutputAssociation"
            | "loopCharacteristics"
            | "multiInstanceLoopCharacteristics"
            | "standardLoopCharacteristics"
            | "completionCondition"
            | "rendering"
            | "script"
            | "eventDefinitionRef"
            | "dataInput"
            | "dataOutput"
            | "inputSet"
            | "outputSet"
            | "conditionExpression"
    )
}

/// Children of `bpmn:definitions` (root elements and the like), all accepted; only
/// processes and the referenced messages, errors, signals and escalations matter.
pub(crate) fn is_known_root_element(local: &str) -> bool {
    matches!(
        local,
        "process"
            | "collaboration"
            | "choreography"
            | "conversation"
            | "globalConversation"
            | "message"
            | "error"
            | "signal"
            | "escalation"
            | "dataStore"
            | "itemDefinition"
            | "interface"
            | "endPoint"
            | "partnerEntity"
            | "partnerRole"
            | "resource"
            | "category"
            | "correlationProperty"
            | "globalTask"
            | "globalUserTask"
            | "globalManualTask"
            | "globalScriptTask"
            | "globalBusinessRuleTask"
            | "import"
            | "extension"
            | "relationship"
            | "documentation"
            | "extensionElements"
            | "messageEventDefinition"
            | "timerEventDefinition"
            | "errorEventDefinition"
            | "signalEventDefinition"
            | "escalationEventDefinition"
            | "compensateEventDefinition"
            | "conditionalEventDefinition"
            | "linkEventDefinition"
            | "terminateEventDefinition"
            | "cancelEventDefinition"
    )
}

/// The event definition element names, and whether Zeebe supports the type at all.
pub(crate) fn event_definition(local: &str) -> Option<bool> {
    match local {
        "messageEventDefinition"
        | "timerEventDefinition"
        | "errorEventDefinition"
        | "signalEventDefinition"
        | "escalationEventDefinition"
        | "compensateEventDefinition"
        | "conditionalEventDefinition"
        | "linkEventDefinition"
        | "terminateEventDefinition" => Some(true),
        "cancelEventDefinition" => Some(false),
        _ => None,
    }
}
