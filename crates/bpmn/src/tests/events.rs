//! Every event kind with its definition, and the root elements they reference.

use super::*;
use crate::model::*;

const ROOTS: &str = r#"
  <bpmn:message id="msg" name="order-paid"><bpmn:extensionElements><zeebe:subscription correlationKey="=orderId"/></bpmn:extensionElements></bpmn:message>
  <bpmn:message id="startMsg" name="start-order"/>
  <bpmn:signal id="sig" name="alarm"/>
  <bpmn:error id="err" errorCode="E42" name="Failure"/>
  <bpmn:error id="dynErr" errorCode="=code"/>
  <bpmn:escalation id="esc" escalationCode="ESC"/>"#;

fn kind_of(p: &Process, id: &str) -> ElementKind {
    p.element_by_id(id).unwrap().1.kind()
}

fn event_of<'p>(p: &'p Process, id: &str) -> &'p EventDefinition {
    p.element_by_id(id).unwrap().1.event_definition().unwrap()
}

#[test]
fn start_events_of_a_process() {
    let p = valid(
        r#"<bpmn:startEvent id="none"/>
        <bpmn:startEvent id="message"><bpmn:messageEventDefinition messageRef="startMsg"/></bpmn:startEvent>
        <bpmn:startEvent id="timer"><bpmn:timerEventDefinition><bpmn:timeDate>2030-01-01T00:00:00Z</bpmn:timeDate></bpmn:timerEventDefinition></bpmn:startEvent>
        <bpmn:startEvent id="signal"><bpmn:signalEventDefinition signalRef="sig"/></bpmn:startEvent>
        <bpmn:startEvent id="conditional"><bpmn:conditionalEventDefinition><bpmn:condition>=x &gt; 1</bpmn:condition></bpmn:conditionalEventDefinition></bpmn:startEvent>"#,
        ROOTS,
    );
    assert_eq!(kind_of(&p, "none"), ElementKind::NoneStartEvent);
    assert_eq!(kind_of(&p, "message"), ElementKind::MessageStartEvent);
    assert_eq!(kind_of(&p, "timer"), ElementKind::TimerStartEvent);
    assert_eq!(kind_of(&p, "signal"), ElementKind::SignalStartEvent);
    assert_eq!(
        kind_of(&p, "conditional"),
        ElementKind::ConditionalStartEvent
    );
    let EventDefinition::Message(m) = event_of(&p, "message") else {
        panic!()
    };
    let message = m.message.as_ref().unwrap();
    // A process-level message start event does not correlate.
    assert_eq!(message.correlation_key, None);
    assert_eq!(message.name, ExprOrStatic::Static("start-order".into()));
    let EventDefinition::Timer(TimerDefinition::Date(date)) = event_of(&p, "timer") else {
        panic!()
    };
    assert_eq!(date, &ExprOrStatic::Static("2030-01-01T00:00:00Z".into()));
    assert_eq!(p.root().scope.as_ref().unwrap().start_events.len(), 5);
}

#[test]
fn names_of_process_start_messages_and_signals_must_be_constant() {
    let p = valid(
        r#"<bpmn:startEvent id="m"><bpmn:messageEventDefinition messageRef="dyn"/></bpmn:startEvent>
           <bpmn:startEvent id="s"><bpmn:signalEventDefinition signalRef="dynSig"/></bpmn:startEvent>"#,
        r#"<bpmn:message id="dyn" name="=&quot;a&quot; + &quot;b&quot;"/><bpmn:signal id="dynSig" name="=&quot;s&quot;"/>"#,
    );
    assert!(
        p.expressions()
            .iter()
            .all(|e| e.context == ExpressionContext::Constant)
    );
    assert_eq!(p.expressions().len(), 2);
}

#[test]
fn event_sub_process_start_events() {
    let esp = |id: &str, definition: &str, interrupting: bool| {
        format!(
            r#"<bpmn:subProcess id="{id}" triggeredByEvent="true">
                 <bpmn:startEvent id="{id}Start" isInterrupting="{interrupting}">{definition}</bpmn:startEvent>
               </bpmn:subProcess>"#
        )
    };
    let p = valid(
        &format!(
            "{START}{}{}{}{}{}{}",
            esp("e1", r#"<bpmn:errorEventDefinition errorRef="err"/>"#, true),
            esp(
                "e2",
                r#"<bpmn:escalationEventDefinition escalationRef="esc"/>"#,
                false
            ),
            esp(
                "e3",
                r#"<bpmn:messageEventDefinition messageRef="msg"/>"#,
                false
            ),
            esp(
                "e4",
                r#"<bpmn:signalEventDefinition signalRef="sig"/>"#,
                true
            ),
            esp(
                "e5",
                r#"<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>"#,
                true
            ),
            esp(
                "e6",
                r#"<bpmn:conditionalEventDefinition><bpmn:condition>=go</bpmn:condition></bpmn:conditionalEventDefinition>"#,
                false
            ),
        ),
        ROOTS,
    );
    assert_eq!(kind_of(&p, "e1Start"), ElementKind::ErrorStartEvent);
    assert_eq!(kind_of(&p, "e2Start"), ElementKind::EscalationStartEvent);
    assert_eq!(kind_of(&p, "e3Start"), ElementKind::MessageStartEvent);
    assert_eq!(kind_of(&p, "e4Start"), ElementKind::SignalStartEvent);
    assert_eq!(kind_of(&p, "e5Start"), ElementKind::TimerStartEvent);
    assert_eq!(kind_of(&p, "e6Start"), ElementKind::ConditionalStartEvent);
    let EventDefinition::Error(e) = event_of(&p, "e1Start") else {
        panic!()
    };
    assert_eq!(
        e.error.as_ref().unwrap().error_code,
        Some(ExprOrStatic::Static("E42".into()))
    );
    // An event sub-process start correlates: it has the correlation key.
    let EventDefinition::Message(m) = event_of(&p, "e3Start") else {
        panic!()
    };
    assert!(m.message.as_ref().unwrap().correlation_key.is_some());
    assert_eq!(
        p.root().scope.as_ref().unwrap().event_sub_processes.len(),
        6
    );
}

#[test]
fn end_events() {
    let p = valid(
        &format!(
            r#"{START}
            <bpmn:endEvent id="none"/>
            <bpmn:endEvent id="terminate"><bpmn:terminateEventDefinition/></bpmn:endEvent>
            <bpmn:endEvent id="error"><bpmn:errorEventDefinition errorRef="dynErr"/></bpmn:endEvent>
            <bpmn:endEvent id="escalation"><bpmn:escalationEventDefinition escalationRef="esc"/></bpmn:endEvent>
            <bpmn:endEvent id="message">{}<bpmn:messageEventDefinition messageRef="msg"/></bpmn:endEvent>
            <bpmn:endEvent id="signal"><bpmn:signalEventDefinition signalRef="sig"/></bpmn:endEvent>
            <bpmn:endEvent id="compensation"><bpmn:compensateEventDefinition/></bpmn:endEvent>"#,
            ext(r#"<zeebe:taskDefinition type="notify"/>"#)
        ),
        ROOTS,
    );
    assert_eq!(kind_of(&p, "none"), ElementKind::NoneEndEvent);
    assert_eq!(kind_of(&p, "terminate"), ElementKind::TerminateEndEvent);
    assert_eq!(kind_of(&p, "error"), ElementKind::ErrorEndEvent);
    assert_eq!(kind_of(&p, "escalation"), ElementKind::EscalationEndEvent);
    assert_eq!(kind_of(&p, "message"), ElementKind::MessageEndEvent);
    assert_eq!(kind_of(&p, "signal"), ElementKind::SignalEndEvent);
    assert_eq!(
        kind_of(&p, "compensation"),
        ElementKind::CompensationEndEvent
    );
    // A thrown error code may be an expression, evaluated for the end event.
    let EventDefinition::Error(e) = event_of(&p, "error") else {
        panic!()
    };
    let code = e.error.as_ref().unwrap().error_code.as_ref().unwrap();
    let code = code.as_expression().unwrap();
    assert_eq!(p.expression(code.id).unwrap().origin.element_id, "error");
    let (_, message) = p.element_by_id("message").unwrap();
    assert!(message.job_worker().is_some());
    let EventDefinition::Compensation(c) = event_of(&p, "compensation") else {
        panic!()
    };
    assert!(c.wait_for_completion);
    assert_eq!(c.activity, None);
}

#[test]
fn intermediate_catch_events() {
    let p = valid(
        r#"<bpmn:startEvent id="start"/>
        <bpmn:intermediateCatchEvent id="message"><bpmn:messageEventDefinition messageRef="msg"/></bpmn:intermediateCatchEvent>
        <bpmn:intermediateCatchEvent id="timer"><bpmn:timerEventDefinition><bpmn:timeDuration>=delay</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>
        <bpmn:intermediateCatchEvent id="signal"><bpmn:signalEventDefinition signalRef="sig"/></bpmn:intermediateCatchEvent>
        <bpmn:intermediateCatchEvent id="link"><bpmn:linkEventDefinition name="jump"/></bpmn:intermediateCatchEvent>
        <bpmn:intermediateCatchEvent id="conditional"><bpmn:conditionalEventDefinition>
            <bpmn:extensionElements><zeebe:conditionalFilter variableNames="a, b" variableEvents="create"/></bpmn:extensionElements>
            <bpmn:condition>=a &gt; b</bpmn:condition>
          </bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>"#,
        ROOTS,
    );
    assert_eq!(
        kind_of(&p, "message"),
        ElementKind::MessageIntermediateCatchEvent
    );
    assert_eq!(
        kind_of(&p, "timer"),
        ElementKind::TimerIntermediateCatchEvent
    );
    assert_eq!(
        kind_of(&p, "signal"),
        ElementKind::SignalIntermediateCatchEvent
    );
    assert_eq!(kind_of(&p, "link"), ElementKind::LinkIntermediateCatchEvent);
    assert_eq!(
        kind_of(&p, "conditional"),
        ElementKind::ConditionalIntermediateCatchEvent
    );
    let EventDefinition::Message(m) = event_of(&p, "message") else {
        panic!()
    };
    assert_eq!(
        m.message
            .as_ref()
            .unwrap()
            .correlation_key
            .as_ref()
            .unwrap()
            .text,
        "orderId"
    );
    let EventDefinition::Timer(TimerDefinition::Duration(d)) = event_of(&p, "timer") else {
        panic!()
    };
    assert!(d.is_expression());
    let EventDefinition::Conditional(c) = event_of(&p, "conditional") else {
        panic!()
    };
    assert!(c.condition.is_expression());
    assert_eq!(c.variable_names, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(c.variable_events, vec![VariableEvent::Create]);
}

#[test]
fn intermediate_throw_events_and_link_targets() {
    let p = valid(
        &format!(
            r#"{START}
            <bpmn:intermediateThrowEvent id="none"/>
            <bpmn:intermediateThrowEvent id="message"><bpmn:messageEventDefinition messageRef="msg">{}</bpmn:messageEventDefinition></bpmn:intermediateThrowEvent>
            <bpmn:intermediateThrowEvent id="signal"><bpmn:signalEventDefinition signalRef="sig"/></bpmn:intermediateThrowEvent>
            <bpmn:intermediateThrowEvent id="escalation"><bpmn:escalationEventDefinition escalationRef="esc"/></bpmn:intermediateThrowEvent>
            <bpmn:intermediateThrowEvent id="link"><bpmn:linkEventDefinition name="jump"/></bpmn:intermediateThrowEvent>
            <bpmn:intermediateCatchEvent id="target"><bpmn:linkEventDefinition name="jump"/></bpmn:intermediateCatchEvent>
            <bpmn:intermediateThrowEvent id="compensation"><bpmn:compensateEventDefinition activityRef="task" waitForCompletion="true"/></bpmn:intermediateThrowEvent>
            <bpmn:serviceTask id="task">{}</bpmn:serviceTask>
            <bpmn:boundaryEvent id="onCompensate" attachedToRef="task"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>
            <bpmn:serviceTask id="undo" isForCompensation="true">{}</bpmn:serviceTask>
            <bpmn:association id="assoc" associationDirection="One" sourceRef="onCompensate" targetRef="undo"/>"#,
            ext(r#"<zeebe:publishMessage correlationKey="=id" messageId="=mid"/>"#),
            ext(r#"<zeebe:taskDefinition type="work"/>"#),
            ext(r#"<zeebe:taskDefinition type="undo"/>"#),
        ),
        ROOTS,
    );
    assert_eq!(kind_of(&p, "none"), ElementKind::NoneIntermediateThrowEvent);
    assert_eq!(
        kind_of(&p, "message"),
        ElementKind::MessageIntermediateThrowEvent
    );
    assert_eq!(
        kind_of(&p, "signal"),
        ElementKind::SignalIntermediateThrowEvent
    );
    assert_eq!(
        kind_of(&p, "escalation"),
        ElementKind::EscalationIntermediateThrowEvent
    );
    assert_eq!(kind_of(&p, "link"), ElementKind::LinkIntermediateThrowEvent);
    assert_eq!(
        kind_of(&p, "compensation"),
        ElementKind::CompensationIntermediateThrowEvent
    );
    let EventDefinition::Message(m) = event_of(&p, "message") else {
        panic!()
    };
    assert!(matches!(
        m.throw_behavior,
        Some(MessageThrowBehavior::Publish(_))
    ));
    let EventDefinition::Link(link) = event_of(&p, "link") else {
        panic!()
    };
    let (target, _) = p.element_by_id("target").unwrap();
    assert_eq!(link.catch_event, Some(target));
    let (task, t) = p.element_by_id("task").unwrap();
    let EventDefinition::Compensation(c) = event_of(&p, "compensation") else {
        panic!()
    };
    assert_eq!(c.activity, Some(task));
    let (boundary, _) = p.element_by_id("onCompensate").unwrap();
    assert_eq!(t.boundary_events, vec![boundary]);
    let ElementData::BoundaryEvent(b) = &p[boundary].data else {
        panic!()
    };
    let (undo, u) = p.element_by_id("undo").unwrap();
    assert_eq!(b.compensation_handler, Some(undo));
    assert!(u.is_for_compensation);
}

#[test]
fn boundary_events_attach_to_their_activity() {
    let boundary = |id: &str, cancel: bool, definition: &str| {
        format!(
            r#"<bpmn:boundaryEvent id="{id}" attachedToRef="sub" cancelActivity="{cancel}">{definition}</bpmn:boundaryEvent>"#
        )
    };
    let p = valid(
        &format!(
            r#"{START}<bpmn:subProcess id="sub"><bpmn:startEvent id="inner"/></bpmn:subProcess>
            {}{}{}{}{}{}"#,
            boundary("error", true, r#"<bpmn:errorEventDefinition/>"#),
            boundary(
                "timer",
                false,
                r#"<bpmn:timerEventDefinition><bpmn:timeCycle>R3/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition>"#
            ),
            boundary(
                "message",
                false,
                r#"<bpmn:messageEventDefinition messageRef="msg"/>"#
            ),
            boundary(
                "signal",
                true,
                r#"<bpmn:signalEventDefinition signalRef="sig"/>"#
            ),
            boundary(
                "escalation",
                false,
                r#"<bpmn:escalationEventDefinition escalationRef="esc"/>"#
            ),
            boundary(
                "conditional",
                true,
                r#"<bpmn:conditionalEventDefinition><bpmn:condition>=x</bpmn:condition></bpmn:conditionalEventDefinition>"#
            ),
        ),
        ROOTS,
    );
    let (sub, s) = p.element_by_id("sub").unwrap();
    let names: Vec<&str> = s
        .boundary_events
        .iter()
        .map(|&b| p[b].id.as_str())
        .collect();
    assert_eq!(
        names,
        vec![
            "error",
            "timer",
            "message",
            "signal",
            "escalation",
            "conditional"
        ]
    );
    assert_eq!(kind_of(&p, "error"), ElementKind::ErrorBoundaryEvent);
    assert_eq!(kind_of(&p, "timer"), ElementKind::TimerBoundaryEvent);
    assert_eq!(kind_of(&p, "message"), ElementKind::MessageBoundaryEvent);
    assert_eq!(kind_of(&p, "signal"), ElementKind::SignalBoundaryEvent);
    assert_eq!(
        kind_of(&p, "escalation"),
        ElementKind::EscalationBoundaryEvent
    );
    assert_eq!(
        kind_of(&p, "conditional"),
        ElementKind::ConditionalBoundaryEvent
    );
    let (_, timer) = p.element_by_id("timer").unwrap();
    let ElementData::BoundaryEvent(b) = &timer.data else {
        panic!()
    };
    assert_eq!(b.attached_to, sub);
    assert!(!b.cancel_activity);
    // A catch-all error boundary event has no error reference.
    let EventDefinition::Error(e) = event_of(&p, "error") else {
        panic!()
    };
    assert_eq!(e.error, None);
    // Its flow scope is the activity's scope, not the activity.
    assert_eq!(timer.parent, Some(ElementIndex::PROCESS));
}

#[test]
fn a_message_used_by_many_events_has_one_name_expression() {
    let p = valid(
        r#"<bpmn:startEvent id="s"/>
           <bpmn:intermediateCatchEvent id="a"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent>
           <bpmn:intermediateCatchEvent id="b"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent>"#,
        r#"<bpmn:message id="m" name="=name"><bpmn:extensionElements><zeebe:subscription correlationKey="=key"/></bpmn:extensionElements></bpmn:message>"#,
    );
    assert_eq!(p.expressions().len(), 2);
}
