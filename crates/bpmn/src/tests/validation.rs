//! One test per validation rule, with Zeebe's exact message and the element it names.

use super::*;

fn task_with(id: &str, extensions: &str) -> String {
    format!(
        r#"<bpmn:serviceTask id="{id}">{}</bpmn:serviceTask>"#,
        ext(extensions)
    )
}

// ---- document level -------------------------------------------------------------------

#[test]
fn a_document_without_executable_process_is_rejected() {
    let xml = format!(
        r#"<bpmn:definitions {NS} id="defs"><bpmn:process id="p" isExecutable="false"/></bpmn:definitions>"#
    );
    assert_eq!(
        errors_of(&xml),
        vec![(
            "defs".into(),
            "Must contain at least one executable process".into()
        )]
    );
}

#[test]
fn the_root_must_be_bpmn_definitions() {
    let errors = errors_of(r#"<definitions id="d"><process/></definitions>"#);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .1
            .starts_with("Expected the root element 'definitions'")
    );
}

#[test]
fn ids_are_unique_in_the_document() {
    assert_errors(
        &format!("{START}<bpmn:task id=\"start\"/>"),
        "",
        &[(
            "start",
            "The id 'start' is not unique, it is already used at line 4",
        )],
    );
}

#[test]
fn elements_need_an_id() {
    assert_errors(
        &format!("{START}<bpmn:task/>"),
        "",
        &[(
            "process > task",
            "Element id must be present and not empty.",
        )],
    );
}

#[test]
fn unknown_bpmn_elements_are_rejected() {
    assert_errors(
        &format!("{START}<bpmn:Task id=\"t\"/>"),
        "",
        &[("t", "Element 'bpmn:Task' is not a BPMN element")],
    );
}

#[test]
fn elements_zeebe_does_not_support_are_rejected_by_name() {
    let message = |name: &str| {
        format!(
            "Elements of type '{name}' are currently not supported. Please refer to the \
             documentation for a list of supported elements: \
             https://docs.camunda.io/docs/components/modeler/bpmn/bpmn-coverage/"
        )
    };
    let errors = errors(
        &format!(
            r#"{START}<bpmn:complexGateway id="complex"/>
            <bpmn:transaction id="tx"><bpmn:startEvent id="txStart"/></bpmn:transaction>
            {}"#,
            flow("f", "start", "complex")
        ),
        "",
    );
    assert_eq!(
        errors,
        vec![
            ("complex".to_string(), message("ComplexGateway")),
            ("tx".to_string(), message("Transaction")),
        ]
    );
}

#[test]
fn all_problems_are_reported_at_once_in_document_order() {
    let errors = errors(
        r#"<bpmn:serviceTask id="a"/><bpmn:userTask id="b"><bpmn:extensionElements><zeebe:priorityDefinition priority="200"/></bpmn:extensionElements></bpmn:userTask>"#,
        "",
    );
    let messages: Vec<&str> = errors.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "Must have at least one start event",
            "Must have exactly one 'zeebe:taskDefinition' extension element",
            "Priority must be a number between 0 and 100, but was '200'",
        ]
    );
}

#[test]
fn errors_render_in_zeebes_format_with_positions() {
    let Err(crate::ParseError::Invalid(errors)) =
        parse(doc("<bpmn:serviceTask id=\"a\"/>", "").as_bytes())
    else {
        panic!()
    };
    assert_eq!(
        errors.to_zeebe_string(),
        "- Element: process\n    - ERROR: Must have at least one start event\n\
         - Element: a\n    - ERROR: Must have exactly one 'zeebe:taskDefinition' extension element\n"
    );
    assert!(
        errors
            .to_string()
            .contains("- Element: a (line 4, column 1)")
    );
}

// ---- processes and scopes --------------------------------------------------------------

#[test]
fn a_process_needs_a_start_event() {
    assert_errors(
        "<bpmn:task id=\"t\"/>",
        "",
        &[("process", "Must have at least one start event")],
    );
}

#[test]
fn a_process_has_at_most_one_none_start_event() {
    assert_errors(
        r#"<bpmn:startEvent id="a"/><bpmn:startEvent id="b"/>"#,
        "",
        &[("process", "Multiple none start events are not allowed")],
    );
}

#[test]
fn a_start_event_has_one_type() {
    assert_errors(
        r#"<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1H</bpmn:timeCycle></bpmn:timerEventDefinition><bpmn:signalEventDefinition signalRef="sig"/></bpmn:startEvent>"#,
        r#"<bpmn:signal id="sig" name="go"/>"#,
        &[("s", "Start event can't have more than one type")],
    );
}

#[test]
fn process_start_events_are_of_supported_types() {
    assert_errors(
        r#"<bpmn:startEvent id="s"><bpmn:errorEventDefinition/></bpmn:startEvent>"#,
        "",
        &[(
            "s",
            "Start events of a process must be one of: none, message, timer, signal or conditional",
        )],
    );
}

#[test]
fn signal_and_message_start_events_have_distinct_names() {
    assert_errors(
        r#"<bpmn:startEvent id="s1"><bpmn:signalEventDefinition signalRef="a"/></bpmn:startEvent>
           <bpmn:startEvent id="s2"><bpmn:signalEventDefinition signalRef="b"/></bpmn:startEvent>
           <bpmn:startEvent id="m1"><bpmn:messageEventDefinition messageRef="m"/></bpmn:startEvent>
           <bpmn:startEvent id="m2"><bpmn:messageEventDefinition messageRef="n"/></bpmn:startEvent>"#,
        r#"<bpmn:signal id="a" name="go"/><bpmn:signal id="b" name="go"/>
           <bpmn:message id="m" name="hello"/><bpmn:message id="n" name="hello"/>"#,
        &[
            (
                "process",
                "Multiple signal event definitions with the same name 'go' are not allowed.",
            ),
            (
                "process",
                "Multiple message event definitions with the same name 'hello' are not allowed.",
            ),
        ],
    );
}

#[test]
fn a_message_starts_at_most_one_start_event() {
    assert_errors(
        r#"<bpmn:startEvent id="m1"><bpmn:messageEventDefinition messageRef="m"/></bpmn:startEvent>
           <bpmn:startEvent id="m2"><bpmn:messageEventDefinition messageRef="m"/></bpmn:startEvent>"#,
        r#"<bpmn:message id="m" name="hello"/>"#,
        &[(
            "m",
            "A message cannot be referred by more than one start event",
        )],
    );
}

#[test]
fn sub_processes_have_exactly_one_none_start_event() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:subProcess id="empty"/>
            <bpmn:subProcess id="typed"><bpmn:startEvent id="t"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent></bpmn:subProcess>"#
        ),
        "",
        &[
            ("empty", "Must have exactly one start event"),
            ("typed", "Start events in subprocesses must be of type none"),
        ],
    );
}

#[test]
fn event_sub_process_start_events_have_a_trigger() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="s"/></bpmn:subProcess>"#
        ),
        "",
        &[(
            "esp",
            "Start events in event subprocesses must be one of: message, timer, error, signal, escalation or conditional",
        )],
    );
}

#[test]
fn non_interrupting_event_sub_processes_only_for_some_types() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:subProcess id="esp" triggeredByEvent="true">
              <bpmn:startEvent id="s" isInterrupting="false"><bpmn:errorEventDefinition/></bpmn:startEvent>
            </bpmn:subProcess>
            <bpmn:subProcess id="cycle" triggeredByEvent="true">
              <bpmn:startEvent id="c"><bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>
            </bpmn:subProcess>"#
        ),
        "",
        &[
            ("esp", "Non-Interrupting event of this type is not allowed"),
            (
                "cycle",
                "Interrupting timer event with time cycle is not allowed.",
            ),
        ],
    );
}

#[test]
fn event_sub_processes_of_a_scope_are_told_apart() {
    let esp = |id: &str, definition: &str| {
        format!(
            r#"<bpmn:subProcess id="{id}" triggeredByEvent="true"><bpmn:startEvent id="{id}s">{definition}</bpmn:startEvent></bpmn:subProcess>"#
        )
    };
    assert_errors(
        &format!(
            "{START}{}{}{}{}",
            esp("e1", r#"<bpmn:errorEventDefinition errorRef="err"/>"#),
            esp("e2", r#"<bpmn:errorEventDefinition errorRef="err"/>"#),
            esp("e3", r#"<bpmn:escalationEventDefinition/>"#),
            esp("e4", r#"<bpmn:escalationEventDefinition/>"#),
        ),
        r#"<bpmn:error id="err" errorCode="E1"/>"#,
        &[
            (
                "process",
                "Multiple error catch events with the same error code 'E1' are not supported on the same scope.",
            ),
            (
                "process",
                "The same scope can not contain more than one escalation catch event without escalation code. An escalation catch event without escalation code catches all escalations.",
            ),
        ],
    );
}

#[test]
fn a_compensation_event_sub_process_is_not_allowed_on_process_level() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="s"><bpmn:compensateEventDefinition/></bpmn:startEvent></bpmn:subProcess>"#
        ),
        "",
        &[
            (
                "esp",
                "Start events in event subprocesses must be one of: message, timer, error, signal, escalation or conditional",
            ),
            (
                "esp",
                "A compensation event subprocess is not allowed on the process level",
            ),
        ],
    );
}

#[test]
fn ad_hoc_sub_process_rules() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:adHocSubProcess id="empty"/>
            <bpmn:adHocSubProcess id="bad"><bpmn:startEvent id="s"/><bpmn:endEvent id="e"/></bpmn:adHocSubProcess>"#
        ),
        "",
        &[
            ("empty", "Must have at least one activity."),
            ("bad", "Must not contain a start event."),
            ("bad", "Must not contain an end event."),
        ],
    );
}

#[test]
fn ad_hoc_sub_process_with_a_job_worker_excludes_other_settings() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:adHocSubProcess id="agent" cancelRemainingInstances="false">{}
              <bpmn:completionCondition>=done</bpmn:completionCondition>
              <bpmn:task id="a"/>
            </bpmn:adHocSubProcess>"#,
            ext(
                r#"<zeebe:taskDefinition type="agent"/><zeebe:adHoc activeElementsCollection="=x" outputCollection="out"/>"#
            )
        ),
        "",
        &[
            (
                "agent",
                "OutputElement and OutputCollection must both be set, or neither of them set. outputElement:null and outputCollection:out.",
            ),
            (
                "agent",
                "Must not define cancelRemainingInstances in combination with zeebe:taskDefinition.",
            ),
            (
                "agent",
                "Must not define completionCondition in combination with zeebe:taskDefinition.",
            ),
            (
                "agent",
                "Must not define activeElementsCollection in combination with zeebe:taskDefinition.",
            ),
        ],
    );
}

// ---- sequence flows and gateways ---------------------------------------------------------

#[test]
fn flows_reference_existing_flow_nodes() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:sequenceFlow id="f" sourceRef="nowhere" targetRef="start"/><bpmn:sequenceFlow id="g" sourceRef="start"/>"#
        ),
        "",
        &[
            (
                "f",
                "Attribute 'sourceRef' must reference a valid flow node",
            ),
            ("g", "Attribute 'targetRef' must be present and not empty"),
        ],
    );
}

#[test]
fn flows_stay_in_their_scope() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:subProcess id="sub"><bpmn:startEvent id="inner"/></bpmn:subProcess>{}"#,
            flow("f", "start", "inner")
        ),
        "",
        &[(
            "f",
            "Sequence flows must connect elements of the (sub-)process that contains them",
        )],
    );
}

#[test]
fn exclusive_gateway_flows_need_a_condition_or_be_default() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:exclusiveGateway id="x"/>{}{}
            <bpmn:sequenceFlow id="b" sourceRef="x" targetRef="t2"><bpmn:conditionExpression>=ok</bpmn:conditionExpression></bpmn:sequenceFlow>
            <bpmn:task id="t1"/><bpmn:task id="t2"/>"#,
            flow("in", "start", "x"),
            flow("a", "x", "t1")
        ),
        "",
        &[("a", "Must have a condition or be default flow")],
    );
}

#[test]
fn inclusive_gateway_flows_need_a_condition() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:inclusiveGateway id="i"/>{}{}
            <bpmn:sequenceFlow id="b" sourceRef="i" targetRef="t2"><bpmn:conditionExpression>=ok</bpmn:conditionExpression></bpmn:sequenceFlow>
            <bpmn:task id="t1"/><bpmn:task id="t2"/>"#,
            flow("in", "start", "i"),
            flow("a", "i", "t1")
        ),
        "",
        &[("a", "Must have a condition")],
    );
}

#[test]
fn the_default_flow_starts_at_its_gateway_and_has_no_condition() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:exclusiveGateway id="x" default="in"/><bpmn:inclusiveGateway id="i" default="d"/>{}{}
            <bpmn:sequenceFlow id="d" sourceRef="i" targetRef="t"><bpmn:conditionExpression>=ok</bpmn:conditionExpression></bpmn:sequenceFlow>
            <bpmn:task id="t"/>"#,
            flow("in", "start", "x"),
            flow("x_i", "x", "i"),
        ),
        "",
        &[
            ("x", "Default flow must start at gateway"),
            ("d", "Default flow must not have a condition"),
        ],
    );
}

#[test]
fn conditions_only_on_exclusive_and_inclusive_gateways() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:sequenceFlow id="f" sourceRef="start" targetRef="t"><bpmn:conditionExpression>=x</bpmn:conditionExpression></bpmn:sequenceFlow><bpmn:task id="t"/>"#
        ),
        "",
        &[(
            "start",
            "Conditional sequence flows are only supported at exclusive or inclusive gateway",
        )],
    );
}

#[test]
fn conditions_are_expressions() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:exclusiveGateway id="x"/>{}
            <bpmn:sequenceFlow id="f" sourceRef="x" targetRef="t"><bpmn:conditionExpression>x &gt; 1</bpmn:conditionExpression></bpmn:sequenceFlow><bpmn:task id="t"/>"#,
            flow("in", "start", "x")
        ),
        "",
        &[(
            "f > conditionExpression",
            "Expected expression but found static value 'x > 1'. An expression must start with '=' (e.g. '=x > 1').",
        )],
    );
}

#[test]
fn event_based_gateway_rules() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:eventBasedGateway id="g"/>{}{}
            <bpmn:task id="t"/>"#,
            flow("in", "start", "g"),
            flow("a", "g", "t"),
        ),
        "",
        &[
            (
                "g",
                "Event-based gateway must have at least 2 outgoing sequence flows.",
            ),
            (
                "g",
                "Event-based gateway must not have an outgoing sequence flow to other elements than message/timer/signal/conditional intermediate catch events.",
            ),
        ],
    );
    assert_errors(
        &format!(
            r#"{START}<bpmn:eventBasedGateway id="g"/>{}{}{}{}
            <bpmn:intermediateCatchEvent id="m1"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent>
            <bpmn:intermediateCatchEvent id="m2"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent>"#,
            flow("in", "start", "g"),
            flow("a", "g", "m1"),
            flow("b", "g", "m2"),
            flow("back", "start", "m2"),
        ),
        r#"<bpmn:message id="m" name="x"><bpmn:extensionElements><zeebe:subscription correlationKey="=k"/></bpmn:extensionElements></bpmn:message>"#,
        &[
            (
                "g",
                "Multiple message event definitions with the same name 'x' are not allowed.",
            ),
            (
                "g",
                "Target elements of an event gateway must not have any additional incoming sequence flows other than that from the event gateway.",
            ),
        ],
    );
}

// ---- events -----------------------------------------------------------------------------

#[test]
fn end_events_have_no_outgoing_flows_and_one_definition_of_a_known_type() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:endEvent id="e"/><bpmn:task id="t"/>{}
            <bpmn:endEvent id="two"><bpmn:terminateEventDefinition/><bpmn:terminateEventDefinition/></bpmn:endEvent>
            <bpmn:endEvent id="timer"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:endEvent>"#,
            flow("f", "e", "t")
        ),
        "",
        &[
            (
                "e",
                "End events must not have outgoing sequence flows to other elements.",
            ),
            ("two", "Must have at most one event definition"),
            (
                "timer",
                "End events must be one of: none, error, message, terminate, signal, escalation or compensation",
            ),
        ],
    );
}

#[test]
fn unsupported_event_definitions_are_rejected() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:endEvent id="e"><bpmn:cancelEventDefinition id="cancel"/></bpmn:endEvent>"#
        ),
        "",
        &[
            (
                "e",
                "End events must be one of: none, error, message, terminate, signal, escalation or compensation",
            ),
            ("cancel", "Event definition of this type is not supported"),
        ],
    );
}

#[test]
fn intermediate_catch_events_have_exactly_one_supported_definition() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateCatchEvent id="none"/>
            <bpmn:intermediateCatchEvent id="error"><bpmn:errorEventDefinition/></bpmn:intermediateCatchEvent>
            <bpmn:intermediateCatchEvent id="cycle"><bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>"#
        ),
        "",
        &[
            ("none", "Must have exactly one event definition"),
            (
                "error",
                "Event definition must be one of: message, timer, signal, link or conditional",
            ),
            (
                "cycle",
                "Intermediate timer catch event must have either a time duration or a time date.",
            ),
        ],
    );
}

#[test]
fn intermediate_throw_events_of_supported_types() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateThrowEvent id="t"><bpmn:terminateEventDefinition/></bpmn:intermediateThrowEvent>"#
        ),
        "",
        &[(
            "t",
            "Intermediate throw events must be one of: none, message, signal, escalation, link or compensation",
        )],
    );
}

#[test]
fn timers_have_exactly_one_kind() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateCatchEvent id="c"><bpmn:timerEventDefinition id="timer"><bpmn:timeDuration>PT1M</bpmn:timeDuration><bpmn:timeDate>2030-01-01T00:00:00Z</bpmn:timeDate></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>"#
        ),
        "",
        &[(
            "timer",
            "Must be exactly one type of timer: timeDuration, timeDate or timeCycle",
        )],
    );
}

#[test]
fn boundary_event_rules() {
    assert_errors(
        &format!(
            r#"{START}{}
            <bpmn:boundaryEvent id="orphan" attachedToRef="nothing"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:boundaryEvent>
            <bpmn:boundaryEvent id="none" attachedToRef="task"/>
            <bpmn:boundaryEvent id="link" attachedToRef="task"><bpmn:linkEventDefinition name="l"/></bpmn:boundaryEvent>
            <bpmn:boundaryEvent id="error" attachedToRef="task" cancelActivity="false"><bpmn:errorEventDefinition/></bpmn:boundaryEvent>
            <bpmn:boundaryEvent id="cycle" attachedToRef="task"><bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:boundaryEvent>
            <bpmn:boundaryEvent id="escalation" attachedToRef="task"><bpmn:escalationEventDefinition/></bpmn:boundaryEvent>
            <bpmn:boundaryEvent id="incoming" attachedToRef="task"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:boundaryEvent>
            {}"#,
            service_task("task"),
            flow("f", "start", "incoming")
        ),
        "",
        &[
            ("orphan", "Must be attached to an activity"),
            ("none", "Must have exactly one event definition"),
            (
                "link",
                "Boundary events must be one of: timer, message, error, signal, escalation, conditional",
            ),
            (
                "error",
                "Non-Interrupting event of this type is not allowed",
            ),
            (
                "cycle",
                "Interrupting timer event with time cycle is not allowed.",
            ),
            (
                "escalation",
                "An escalation boundary event should only be attached to a subprocess, or a call activity.",
            ),
            ("incoming", "Cannot have incoming sequence flows"),
        ],
    );
}

#[test]
fn boundary_events_of_an_activity_are_told_apart() {
    let boundary = |id: &str, message: &str| {
        format!(
            r#"<bpmn:boundaryEvent id="{id}" attachedToRef="task"><bpmn:messageEventDefinition messageRef="{message}"/></bpmn:boundaryEvent>"#
        )
    };
    assert_errors(
        &format!(
            "{START}{}{}{}<bpmn:boundaryEvent id=\"e1\" attachedToRef=\"task\"><bpmn:errorEventDefinition/></bpmn:boundaryEvent><bpmn:boundaryEvent id=\"e2\" attachedToRef=\"task\"><bpmn:errorEventDefinition/></bpmn:boundaryEvent>",
            service_task("task"),
            boundary("a", "m1"),
            boundary("b", "m2")
        ),
        r#"<bpmn:message id="m1" name="same"><bpmn:extensionElements><zeebe:subscription correlationKey="=a"/></bpmn:extensionElements></bpmn:message>
           <bpmn:message id="m2" name="same"><bpmn:extensionElements><zeebe:subscription correlationKey="=b"/></bpmn:extensionElements></bpmn:message>"#,
        &[
            (
                "task",
                "Multiple message event definitions with the same name 'same' are not allowed.",
            ),
            (
                "task",
                "The same scope can not contain more than one error catch event without error code. An error catch event without error code catches all errors.",
            ),
        ],
    );
}

#[test]
fn a_receive_task_message_differs_from_its_boundary_messages() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:receiveTask id="r" messageRef="m1"/>
            <bpmn:boundaryEvent id="b" attachedToRef="r"><bpmn:messageEventDefinition messageRef="m2"/></bpmn:boundaryEvent>"#
        ),
        r#"<bpmn:message id="m1" name="same"><bpmn:extensionElements><zeebe:subscription correlationKey="=a"/></bpmn:extensionElements></bpmn:message>
           <bpmn:message id="m2" name="same"><bpmn:extensionElements><zeebe:subscription correlationKey="=b"/></bpmn:extensionElements></bpmn:message>"#,
        &[(
            "r",
            "Cannot reference the same message name as a boundary event",
        )],
    );
}

#[test]
fn messages_need_a_reference_a_name_and_a_subscription() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateCatchEvent id="c"><bpmn:messageEventDefinition id="def" messageRef="missing"/></bpmn:intermediateCatchEvent>
            <bpmn:receiveTask id="r" messageRef="m"/>
            <bpmn:receiveTask id="none"/>"#
        ),
        r#"<bpmn:message id="m"/>"#,
        &[
            ("def", "Must reference a message"),
            ("none", "Must reference a message"),
            ("m", "Name must be present and not empty"),
            (
                "m",
                "Must have exactly one zeebe:subscription extension element",
            ),
        ],
    );
}

#[test]
fn correlation_keys_are_expressions() {
    assert_errors(
        &format!(r#"{START}<bpmn:receiveTask id="r" messageRef="m"/>"#),
        r#"<bpmn:message id="m" name="n"><bpmn:extensionElements><zeebe:subscription correlationKey="orderId"/></bpmn:extensionElements></bpmn:message>"#,
        &[(
            "m > extensionElements > subscription",
            "Expected expression but found static value 'orderId'. An expression must start with '=' (e.g. '=orderId').",
        )],
    );
}

#[test]
fn signals_need_a_reference_and_a_name() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition id="def"/></bpmn:intermediateThrowEvent>
            <bpmn:intermediateCatchEvent id="c"><bpmn:signalEventDefinition signalRef="s"/></bpmn:intermediateCatchEvent>"#
        ),
        r#"<bpmn:signal id="s"/>"#,
        &[
            ("def", "Must reference a signal"),
            ("s", "Name must be present and not empty"),
        ],
    );
}

#[test]
fn thrown_errors_need_a_code_and_caught_codes_are_static() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:endEvent id="noRef"><bpmn:errorEventDefinition id="d1"/></bpmn:endEvent>
            <bpmn:endEvent id="noCode"><bpmn:errorEventDefinition id="d2" errorRef="empty"/></bpmn:endEvent>
            {}
            <bpmn:boundaryEvent id="b" attachedToRef="task"><bpmn:errorEventDefinition id="d3" errorRef="dynamic"/></bpmn:boundaryEvent>"#,
            service_task("task")
        ),
        r#"<bpmn:error id="empty"/><bpmn:error id="dynamic" errorCode="=code"/>"#,
        &[
            ("d1", "Must reference an error"),
            ("d2", "ErrorCode must be present and not empty"),
            (
                "d3",
                "The errorCode of the error catch event is not allowed to be an expression",
            ),
        ],
    );
}

#[test]
fn thrown_escalations_need_a_code_and_caught_codes_are_static() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateThrowEvent id="noRef"><bpmn:escalationEventDefinition id="d1"/></bpmn:intermediateThrowEvent>
            <bpmn:endEvent id="noCode"><bpmn:escalationEventDefinition escalationRef="empty"/></bpmn:endEvent>
            <bpmn:subProcess id="sub"><bpmn:startEvent id="s"/></bpmn:subProcess>
            <bpmn:boundaryEvent id="b" attachedToRef="sub"><bpmn:escalationEventDefinition id="d3" escalationRef="dynamic"/></bpmn:boundaryEvent>"#
        ),
        r#"<bpmn:escalation id="empty"/><bpmn:escalation id="dynamic" escalationCode="=code"/>"#,
        &[
            ("d1", "Must reference an escalation"),
            (
                "d3",
                "The escalationCode of the escalation catch event is not allowed to be an expression",
            ),
            ("empty", "EscalationCode must be present and not empty"),
        ],
    );
}

#[test]
fn link_events_come_in_pairs_per_scope() {
    assert_errors(
        &format!(
            r#"{START}
            <bpmn:intermediateThrowEvent id="t"><bpmn:linkEventDefinition name="A"/></bpmn:intermediateThrowEvent>
            <bpmn:intermediateCatchEvent id="c1"><bpmn:linkEventDefinition name="B"/></bpmn:intermediateCatchEvent>
            <bpmn:intermediateCatchEvent id="c2"><bpmn:linkEventDefinition name="B"/></bpmn:intermediateCatchEvent>
            <bpmn:intermediateCatchEvent id="c3"><bpmn:linkEventDefinition id="noName"/></bpmn:intermediateCatchEvent>"#
        ),
        "",
        &[
            (
                "process",
                "Multiple intermediate catch link event definitions with the same name 'B' are not allowed.",
            ),
            (
                "process",
                "Can't find an catch link event for the throw link event with the name 'A'.",
            ),
            ("noName", "Link name must be present and not empty."),
        ],
    );
}

#[test]
fn conditional_events_need_a_condition_and_valid_filters() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:intermediateCatchEvent id="c"><bpmn:conditionalEventDefinition id="def"/></bpmn:intermediateCatchEvent>
            <bpmn:intermediateCatchEvent id="d"><bpmn:conditionalEventDefinition id="def2">{}<bpmn:condition id="cond"> </bpmn:condition></bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>"#,
            ext(
                r#"<zeebe:conditionalFilter variableEvents="create update" variableNames="a,,=b"/>"#
            )
        ),
        "",
        &[
            ("def", "Must have a condition"),
            (
                "def2 > extensionElements > conditionalFilter",
                "Variable event 'create update' is not valid. Must be one of: create, update or a comma-separated list of both.",
            ),
            (
                "def2 > extensionElements > conditionalFilter",
                "Variable names must not contain empty names but 'a,,=b' given. Please provide a comma-separated list of variable names without empty entries.",
            ),
            (
                "def2 > extensionElements > conditionalFilter",
                "Variable names must be static and cannot be expressions. '=b' starts with '='.",
            ),
            (
                "cond",
                "Attribute 'condition' must be present and not empty",
            ),
        ],
    );
}

// ---- compensation ------------------------------------------------------------------------

#[test]
fn compensation_rules() {
    assert_errors(
        &format!(
            r#"{START}{}
            <bpmn:boundaryEvent id="noAssociation" attachedToRef="task"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>
            <bpmn:receiveTask id="handler" isForCompensation="true" messageRef="m"/>
            {}
            <bpmn:intermediateThrowEvent id="throw"><bpmn:compensateEventDefinition id="def" activityRef="plain" waitForCompletion="false"/></bpmn:intermediateThrowEvent>
            <bpmn:task id="plain"/>
            <bpmn:intermediateThrowEvent id="missing"><bpmn:compensateEventDefinition id="def2" activityRef="ghost"/></bpmn:intermediateThrowEvent>"#,
            service_task("task"),
            flow("f", "start", "handler"),
        ),
        r#"<bpmn:message id="m" name="n"><bpmn:extensionElements><zeebe:subscription correlationKey="=k"/></bpmn:extensionElements></bpmn:message>"#,
        &[
            (
                "noAssociation",
                "Compensation boundary events must have a compensation association and no outgoing sequence flows",
            ),
            (
                "handler",
                "Compensation task must be one of: service task, user task, send task, script task, manual task, or undefined task.",
            ),
            (
                "handler",
                "A compensation handler should have no incoming sequence flows",
            ),
            (
                "def",
                "A compensation intermediate throwing event waitForCompletion attribute must be true or not present",
            ),
            (
                "def",
                "The referenced compensation activity 'plain' must have either a compensation boundary event or be a subprocess",
            ),
            (
                "def2",
                "The referenced compensation activity 'ghost' doesn't exist",
            ),
        ],
    );
}

// ---- Zeebe extension elements ------------------------------------------------------------

#[test]
fn job_worker_elements_need_exactly_one_task_definition() {
    assert_errors(
        &format!(
            "{START}<bpmn:serviceTask id=\"none\"/>{}",
            task_with(
                "two",
                r#"<zeebe:taskDefinition type="a"/><zeebe:taskDefinition type="b"/>"#
            )
        ),
        "",
        &[
            (
                "none",
                "Must have exactly one 'zeebe:taskDefinition' extension element",
            ),
            (
                "two",
                "Must have exactly one 'zeebe:taskDefinition' extension element",
            ),
        ],
    );
}

#[test]
fn task_definition_attributes_are_not_empty() {
    assert_errors(
        &format!(
            "{START}{}",
            task_with("t", r#"<zeebe:taskDefinition type="" retries=""/>"#)
        ),
        "",
        &[
            (
                "t > extensionElements > taskDefinition",
                "Attribute 'type' must be present and not empty",
            ),
            (
                "t > extensionElements > taskDefinition",
                "Attribute 'retries' must be present and not empty",
            ),
        ],
    );
}

#[test]
fn task_headers_are_unique_and_not_reserved() {
    assert_errors(
        &format!(
            "{START}{}",
            task_with(
                "t",
                r#"<zeebe:taskDefinition type="a"/><zeebe:taskHeaders>
                  <zeebe:header key="a" value="1"/><zeebe:header key="a" value="2"/>
                  <zeebe:header key="io.camunda.zeebe:userTaskKey" value="3"/>
                </zeebe:taskHeaders>"#
            )
        ),
        "",
        &[
            (
                "t > extensionElements > taskHeaders",
                "Attribute 'key' contains 'io.camunda.zeebe:userTaskKey', but header keys starting with 'io.camunda.zeebe:' are reserved for internal use.",
            ),
            (
                "t > extensionElements > taskHeaders",
                "Headers contain duplicate entries for key 'a'",
            ),
        ],
    );
}

#[test]
fn extension_elements_appear_at_most_once() {
    assert_errors(
        &format!(
            "{START}{}",
            task_with(
                "t",
                r#"<zeebe:taskDefinition type="a"/><zeebe:taskHeaders/><zeebe:taskHeaders/><zeebe:ioMapping/><zeebe:ioMapping/>"#
            )
        ),
        "",
        &[
            (
                "t",
                "Must have exactly one 'zeebe:taskHeaders' extension element when exists. Please check process definition XML and retain only one extension element.",
            ),
            (
                "t",
                "Must have exactly one 'zeebe:ioMapping' extension element when exists. Please check process definition XML and retain only one extension element.",
            ),
        ],
    );
}

#[test]
fn io_mapping_targets_are_paths_and_output_sources_expressions() {
    assert_errors(
        &format!(
            "{START}<bpmn:task id=\"t\">{}</bpmn:task>",
            ext(
                r#"<zeebe:ioMapping><zeebe:input source="=a" target="1x"/><zeebe:output source="b" target="if"/><zeebe:output target="c"/></zeebe:ioMapping>"#
            )
        ),
        "",
        &[
            (
                "t > extensionElements > ioMapping > input",
                "Expected path expression '1x' but doesn't match the pattern '[a-zA-Z_][a-zA-Z0-9_]*(\\.[a-zA-Z_][a-zA-Z0-9_]*)*'.",
            ),
            (
                "t > extensionElements > ioMapping > output",
                "Expected expression but found static value 'b'. An expression must start with '=' (e.g. '=b').",
            ),
            (
                "t > extensionElements > ioMapping > output",
                "Expected path expression 'if' but is one of the reserved words (null, true, false, function, if, then, else, for, between, instance, of).",
            ),
            (
                "t > extensionElements > ioMapping > output",
                "Expected expression but not found.",
            ),
        ],
    );
}

#[test]
fn script_business_rule_and_send_tasks_need_one_implementation() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:scriptTask id="s"/><bpmn:businessRuleTask id="b"/><bpmn:sendTask id="send"/>
            <bpmn:scriptTask id="both">{}</bpmn:scriptTask>"#,
            ext(
                r#"<zeebe:script expression="=1" resultVariable="r"/><zeebe:taskDefinition type="t"/>"#
            )
        ),
        "",
        &[
            (
                "s",
                "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element",
            ),
            (
                "b",
                "Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element",
            ),
            (
                "send",
                "Must have either one 'zeebe:publishMessage' or one 'zeebe:taskDefinition' extension element",
            ),
            (
                "both",
                "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element",
            ),
        ],
    );
}

#[test]
fn script_and_called_decision_attributes() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:scriptTask id="s">{}</bpmn:scriptTask><bpmn:businessRuleTask id="b">{}</bpmn:businessRuleTask>"#,
            ext(r#"<zeebe:script expression="today()" resultVariable=""/>"#),
            ext(r#"<zeebe:calledDecision decisionId="" resultVariable="r"/>"#),
        ),
        "",
        &[
            (
                "s > extensionElements > script",
                "Expected expression but found static value 'today()'. An expression must start with '=' (e.g. '=today()').",
            ),
            (
                "s > extensionElements > script",
                "Attribute 'resultVariable' must be present and not empty",
            ),
            (
                "b > extensionElements > calledDecision",
                "Attribute 'decisionId' must be present and not empty",
            ),
        ],
    );
}

#[test]
fn call_activities_need_a_called_process() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:callActivity id="none"/><bpmn:callActivity id="empty">{}</bpmn:callActivity>"#,
            ext(r#"<zeebe:calledElement processId=""/>"#)
        ),
        "",
        &[
            (
                "none",
                "Must have exactly one 'zeebe:calledElement' extension element",
            ),
            (
                "empty > extensionElements > calledElement",
                "Attribute 'processId' must be present and not empty",
            ),
        ],
    );
}

#[test]
fn binding_types_and_version_tags() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:callActivity id="a">{}</bpmn:callActivity><bpmn:callActivity id="b">{}</bpmn:callActivity><bpmn:callActivity id="c">{}</bpmn:callActivity>"#,
            ext(r#"<zeebe:calledElement processId="p" bindingType="newest"/>"#),
            ext(r#"<zeebe:calledElement processId="p" bindingType="versionTag"/>"#),
            ext(r#"<zeebe:calledElement processId="p" versionTag="v1"/>"#),
        ),
        "",
        &[
            (
                "a > extensionElements > calledElement",
                "Attribute 'bindingType' must be one of: latest, deployment, versionTag",
            ),
            (
                "b > extensionElements > calledElement",
                "Attribute 'versionTag' must be present and not empty if 'bindingType' is 'versionTag'",
            ),
            (
                "c > extensionElements > calledElement",
                "Attribute 'versionTag' may only be used if 'bindingType' is 'versionTag'",
            ),
        ],
    );
}

#[test]
fn multi_instance_needs_zeebe_loop_characteristics() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:task id="a"><bpmn:multiInstanceLoopCharacteristics id="none"/></bpmn:task>
            <bpmn:task id="b"><bpmn:multiInstanceLoopCharacteristics id="mi">{}</bpmn:multiInstanceLoopCharacteristics></bpmn:task>
            <bpmn:task id="c"><bpmn:standardLoopCharacteristics id="std"/></bpmn:task>"#,
            ext(r#"<zeebe:loopCharacteristics inputCollection="items" outputCollection="out"/>"#)
        ),
        "",
        &[
            (
                "none",
                "Must have exactly one 'zeebe:loopCharacteristics' extension element",
            ),
            (
                "mi > extensionElements > loopCharacteristics",
                "Expected expression but found static value 'items'. An expression must start with '=' (e.g. '=items').",
            ),
            (
                "mi > extensionElements > loopCharacteristics",
                "Attribute 'outputElement' must be present if the attribute 'outputCollection' is set",
            ),
            (
                "std",
                "Loop characteristics of type 'StandardLoopCharacteristics' are not supported, use multiInstanceLoopCharacteristics",
            ),
        ],
    );
}

#[test]
fn user_task_forms() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:userTask id="job">{}</bpmn:userTask><bpmn:userTask id="camunda">{}</bpmn:userTask>"#,
            ext(r#"<zeebe:formDefinition formKey="k" formId="f"/>"#),
            ext(
                r#"<zeebe:userTask/><zeebe:formDefinition externalReference="url" bindingType="latest"/>"#
            ),
        ),
        "",
        &[
            (
                "job > extensionElements > formDefinition",
                "Exactly one of the attributes 'formId, formKey' must be present and not blank",
            ),
            (
                "camunda > extensionElements > formDefinition",
                "Attribute 'externalReference' must not be used in combination with attribute 'bindingType'",
            ),
        ],
    );
}

#[test]
fn user_task_priorities_and_candidates() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:userTask id="a">{}</bpmn:userTask><bpmn:userTask id="b">{}</bpmn:userTask>"#,
            ext(r#"<zeebe:priorityDefinition priority="high"/>"#),
            ext(r#"<zeebe:assignmentDefinition candidateGroups="a,,b"/>"#),
        ),
        "",
        &[
            (
                "a > extensionElements > priorityDefinition",
                "Expected static value to be a valid Number between 0 and 100, but found 'high'.",
            ),
            (
                "b > extensionElements > assignmentDefinition",
                "Expected static value to be a list of comma-separated values, e.g. 'a,b,c', but found 'a,,b'.",
            ),
        ],
    );
}

#[test]
fn job_priority_is_an_integer_or_an_expression() {
    assert_errors(
        &format!(
            "{START}{}",
            task_with(
                "t",
                r#"<zeebe:taskDefinition type="a"/><zeebe:jobPriorityDefinition priority="high"/>"#
            )
        ),
        "",
        &[(
            "t > extensionElements > jobPriorityDefinition",
            "Expected 'priority' to be a literal integer or a FEEL expression (starting with '='), but got 'high'.",
        )],
    );
}

#[test]
fn task_listeners_only_on_camunda_user_tasks() {
    assert_errors(
        &format!(
            r#"{START}<bpmn:userTask id="u">{}</bpmn:userTask>"#,
            ext(
                r#"<zeebe:taskListeners><zeebe:taskListener eventType="assign" type="t"/></zeebe:taskListeners>"#
            )
        ),
        "",
        &[
            (
                "u > extensionElements > taskListeners",
                "Task listeners are only allowed on Camunda user tasks.",
            ),
            (
                "u > extensionElements > taskListeners > taskListener",
                "Task listener event type 'assign' is not supported. Currently, only 'creating', 'assigning', 'updating', 'completing' event types and 'create', 'assignment', 'update', 'complete' deprecated event types are supported.",
            ),
        ],
    );
}

#[test]
fn execution_listener_rules() {
    assert_errors(
        &format!(
            r#"<bpmn:startEvent id="s">{}</bpmn:startEvent>
            <bpmn:exclusiveGateway id="g">{}</bpmn:exclusiveGateway>
            <bpmn:task id="t">{}</bpmn:task>"#,
            ext(
                r#"<zeebe:executionListeners><zeebe:executionListener eventType="start" type="a"/></zeebe:executionListeners>"#
            ),
            ext(
                r#"<zeebe:executionListeners><zeebe:executionListener eventType="end" type="a"/></zeebe:executionListeners>"#
            ),
            ext(
                r#"<zeebe:executionListeners><zeebe:executionListener eventType="end" type="a"/><zeebe:executionListener eventType="end" type="a"/><zeebe:executionListener type="b"/></zeebe:executionListeners>"#
            ),
        ),
        "",
        &[
            (
                "s",
                "Execution listeners of type 'start' are not supported by start events",
            ),
            (
                "g",
                "Execution listeners of type 'end' are not supported by gateway element",
            ),
            (
                "t > extensionElements > executionListeners",
                "Found '2' duplicates based on eventType[end] and type[a], these combinations should be unique.",
            ),
            (
                "t > extensionElements > executionListeners > executionListener",
                "Attribute 'eventType' must be present and not empty",
            ),
        ],
    );
}

#[test]
fn start_event_forms_are_not_public() {
    assert_errors(
        &format!(
            r#"<bpmn:startEvent id="s">{}</bpmn:startEvent>"#,
            ext(
                r#"<zeebe:formDefinition formId="f"/><zeebe:properties><zeebe:property name="publicAccess" value="true"/></zeebe:properties>"#
            )
        ),
        "",
        &[(
            "s",
            "Start event forms with public access enabled are not supported",
        )],
    );
}

#[test]
fn agent_definitions_match_their_element() {
    assert_errors(
        &format!(
            r#"{START}{}<bpmn:adHocSubProcess id="a">{}<bpmn:task id="x"/></bpmn:adHocSubProcess>"#,
            task_with(
                "t",
                r#"<zeebe:taskDefinition type="a"/><zeebe:agentDefinition agentType="aiAgentSubProcess"/>"#
            ),
            ext(r#"<zeebe:agentDefinition agentType="external"/>"#),
        ),
        "",
        &[
            (
                "t",
                "agentType 'aiAgentSubProcess' is only allowed on an ad-hoc sub-process.",
            ),
            (
                "a",
                "agentType 'external' is only allowed on a service task.",
            ),
        ],
    );
}

#[test]
fn process_extension_rules() {
    let xml = format!(
        r#"<bpmn:definitions {NS}><bpmn:process id="p" isExecutable="true">{}<bpmn:startEvent id="s"/></bpmn:process></bpmn:definitions>"#,
        ext(
            r#"<zeebe:versionTag value="1"/><zeebe:versionTag value="2"/><zeebe:userTaskForm id="f"/>"#
        )
    );
    assert_eq!(
        errors_of(&xml),
        vec![
            (
                "p".to_string(),
                "Must have exactly one 'zeebe:versionTag' extension element when exists. Please check process definition XML and retain only one extension element.".to_string()
            ),
            (
                "p > extensionElements > userTaskForm".to_string(),
                "User task form text content has to be present and not empty".to_string()
            ),
        ]
    );
}
