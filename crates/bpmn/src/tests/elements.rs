//! The executable shape: arena, scopes, flows, lookups, and each activity and gateway kind.

use super::*;
use crate::model::*;

#[test]
fn builds_a_flat_arena_with_flows_scopes_and_an_id_map() {
    let p = valid(
        &format!(
            r#"{START}
            {}
            {}
            <bpmn:endEvent id="end"/>
            {}{}"#,
            flow("f1", "start", "task"),
            service_task("task"),
            flow("f2", "task", "end"),
            ""
        ),
        "",
    );
    assert_eq!(p.bpmn_process_id, "process");
    let root = p.root();
    assert_eq!(root.kind(), ElementKind::Process);
    assert_eq!(root.parent, None);
    let scope = root.scope.as_ref().unwrap();
    assert_eq!(scope.children.len(), 3);
    let (start, _) = p.element_by_id("start").unwrap();
    assert_eq!(scope.none_start_event, Some(start));
    assert_eq!(scope.start_events, vec![start]);

    let (task, t) = p.element_by_id("task").unwrap();
    assert_eq!(t.parent, Some(ElementIndex::PROCESS));
    assert_eq!(t.incoming.len(), 1);
    assert_eq!(t.outgoing.len(), 1);
    let f1 = &p[t.incoming[0]];
    assert_eq!((f1.id.as_str(), f1.source, f1.target), ("f1", start, task));
    let f2 = &p[t.outgoing[0]];
    assert_eq!(p[f2.target].id, "end");
    assert_eq!(
        p.lookup("f2"),
        Some(ElementRef::SequenceFlow(t.outgoing[0]))
    );
    assert_eq!(p.lookup("nope"), None);
    assert!(p.element_by_id("f1").is_none());
    // Elements are in document order, the process first.
    let ids: Vec<&str> = p.elements().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, vec!["process", "start", "task", "end"]);
    assert_eq!(p.scope_of(task).map(|s| s.id.as_str()), Some("process"));
    assert_eq!(t.position.line, 6);
}

#[test]
fn the_model_is_shared_cheaply_between_threads() {
    let p = valid(START, "");
    let shared = Arc::clone(&p);
    let handle = std::thread::spawn(move || shared.elements().len());
    assert_eq!(handle.join().unwrap(), 2);
}

#[test]
fn service_task_job_worker_properties() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:serviceTask id="task">{}</bpmn:serviceTask>"#,
            ext(
                r#"<zeebe:taskDefinition type="=&quot;pay-&quot; + region" retries="5"/>
                <zeebe:taskHeaders><zeebe:header key="a" value="1"/><zeebe:header key="b" value="2"/></zeebe:taskHeaders>
                <zeebe:jobPriorityDefinition priority="30"/>
                <zeebe:linkedResources><zeebe:linkedResource resourceId="r" resourceType="RPA" linkName="l" bindingType="deployment"/></zeebe:linkedResources>"#
            )
        ),
        "",
    );
    let (_, task) = p.element_by_id("task").unwrap();
    let ElementData::ServiceTask(s) = &task.data else {
        panic!("{:?}", task.data)
    };
    let job = &s.job_worker;
    let expr = job.job_type.as_expression().unwrap();
    assert_eq!(expr.text, "\"pay-\" + region");
    assert_eq!(job.retries, ExprOrStatic::Static("5".into()));
    assert_eq!(
        job.task_headers,
        vec![
            TaskHeader {
                key: "a".into(),
                value: "1".into()
            },
            TaskHeader {
                key: "b".into(),
                value: "2".into()
            }
        ]
    );
    assert_eq!(job.job_priority, Some(ExprOrStatic::Static(30)));
    assert_eq!(
        job.linked_resources[0].binding_type,
        BindingType::Deployment
    );
    assert_eq!(job.linked_resources[0].link_name.as_deref(), Some("l"));
    assert_eq!(task.job_worker(), Some(job));
    // The expression is in the table with where it came from.
    let entry = p.expression(expr.id).unwrap();
    assert_eq!(entry.origin.element_id, "task");
    assert_eq!(entry.origin.attribute, "type");
    assert_eq!(entry.context, ExpressionContext::Variables);
}

#[test]
fn retries_default_to_three() {
    let p = valid(&format!("{START}{}", service_task("task")), "");
    let job = p.element_by_id("task").unwrap().1.job_worker().unwrap();
    assert_eq!(job.retries, ExprOrStatic::Static("3".into()));
    assert_eq!(job.job_type, ExprOrStatic::Static("work".into()));
}

#[test]
fn undefined_and_manual_tasks_pass_through() {
    let p = valid(
        &format!(r#"{START}<bpmn:task id="t"/><bpmn:manualTask id="m"/>"#),
        "",
    );
    assert_eq!(p.element_by_id("t").unwrap().1.kind(), ElementKind::Task);
    assert_eq!(
        p.element_by_id("m").unwrap().1.kind(),
        ElementKind::ManualTask
    );
}

#[test]
fn send_task_as_job_worker_or_publishing_a_message() {
    let p = valid(
        &format!(
            r#"{START}
            <bpmn:sendTask id="job">{}</bpmn:sendTask>
            <bpmn:sendTask id="publish" messageRef="m">{}</bpmn:sendTask>"#,
            ext(r#"<zeebe:taskDefinition type="send"/>"#),
            ext(r#"<zeebe:publishMessage correlationKey="=orderId" timeToLive="PT1M"/>"#)
        ),
        r#"<bpmn:message id="m" name="paid"/>"#,
    );
    let (_, job) = p.element_by_id("job").unwrap();
    assert!(matches!(
        job.data,
        ElementData::SendTask(SendTask::JobWorker(_))
    ));
    let (_, publish) = p.element_by_id("publish").unwrap();
    let ElementData::SendTask(SendTask::PublishMessage { message, publish }) = &publish.data else {
        panic!("{:?}", publish.data)
    };
    assert_eq!(message.name, ExprOrStatic::Static("paid".into()));
    assert!(publish.correlation_key.is_expression());
    assert_eq!(
        publish.time_to_live,
        Some(ExprOrStatic::Static("PT1M".into()))
    );
}

#[test]
fn receive_task_references_a_message_with_its_correlation_key() {
    let p = valid(
        &format!(r#"{START}<bpmn:receiveTask id="r" messageRef="m"/>"#),
        &format!(
            r#"<bpmn:message id="m" name="=&quot;paid-&quot; + id">{}</bpmn:message>"#,
            ext(r#"<zeebe:subscription correlationKey="=orderId"/>"#)
        ),
    );
    let ElementData::ReceiveTask(r) = &p.element_by_id("r").unwrap().1.data else {
        panic!()
    };
    assert_eq!(r.message.message_id, "m");
    let name = r.message.name.as_expression().unwrap();
    assert_eq!(p.expression(name.id).unwrap().origin.element_id, "m");
    let key = r.message.correlation_key.as_ref().unwrap();
    assert_eq!(key.text, "orderId");
    assert_eq!(
        p.expression(key.id).unwrap().origin.attribute,
        "correlationKey"
    );
}

#[test]
fn user_task_as_camunda_user_task_with_everything() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:userTask id="u">{}</bpmn:userTask>"#,
            ext(r#"<zeebe:userTask/>
                <zeebe:formDefinition formId="form-1" bindingType="versionTag" versionTag="v1"/>
                <zeebe:assignmentDefinition assignee="=ring.bearer" candidateGroups="elves, men" candidateUsers="=users"/>
                <zeebe:taskSchedule dueDate="2023-04-20T04:20:00Z" followUpDate="=later"/>
                <zeebe:priorityDefinition priority="75"/>
                <zeebe:taskHeaders><zeebe:header key="k" value="v"/></zeebe:taskHeaders>
                <zeebe:taskListeners><zeebe:taskListener eventType="complete" type="audit" retries="2"/></zeebe:taskListeners>"#)
        ),
        "",
    );
    let ElementData::UserTask(u) = &p.element_by_id("u").unwrap().1.data else {
        panic!()
    };
    assert_eq!(u.implementation, UserTaskImplementation::CamundaUserTask);
    let form = u.form.as_ref().unwrap();
    assert_eq!(form.form_id.as_deref(), Some("form-1"));
    assert_eq!(form.binding_type, BindingType::VersionTag);
    assert_eq!(form.version_tag.as_deref(), Some("v1"));
    assert!(u.assignment.assignee.as_ref().unwrap().is_expression());
    assert_eq!(
        u.assignment.candidate_groups,
        Some(ExprOrStatic::Static(vec!["elves".into(), "men".into()]))
    );
    assert!(
        u.assignment
            .candidate_users
            .as_ref()
            .unwrap()
            .is_expression()
    );
    assert_eq!(
        u.schedule.due_date,
        Some(ExprOrStatic::Static("2023-04-20T04:20:00Z".into()))
    );
    assert!(u.schedule.follow_up_date.as_ref().unwrap().is_expression());
    assert_eq!(u.priority, Some(ExprOrStatic::Static(75)));
    assert_eq!(u.task_headers.len(), 1);
    assert_eq!(
        u.task_listeners[0].event_type,
        TaskListenerEventType::Completing
    );
    assert_eq!(
        u.task_listeners[0].retries,
        ExprOrStatic::Static("2".into())
    );
}

/// Camunda's Java model builder writes `<zeebe:priorityDefinition/>` on every Camunda user
/// task; Zeebe reads the missing attribute as its default.
#[test]
fn user_task_with_an_empty_priority_definition_takes_the_default() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:userTask id="u">{}</bpmn:userTask>"#,
            ext(r#"<zeebe:userTask/><zeebe:priorityDefinition/>"#)
        ),
        "",
    );
    let ElementData::UserTask(u) = &p.element_by_id("u").unwrap().1.data else {
        panic!()
    };
    assert_eq!(u.priority, None);
}

#[test]
fn user_task_without_zeebe_user_task_is_job_based() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:userTask id="u">{}</bpmn:userTask>"#,
            ext(r#"<zeebe:formDefinition formKey="camunda-forms:bpmn:f"/>"#)
        ),
        "",
    );
    let ElementData::UserTask(u) = &p.element_by_id("u").unwrap().1.data else {
        panic!()
    };
    assert_eq!(u.implementation, UserTaskImplementation::JobWorker);
    assert_eq!(
        u.form.as_ref().unwrap().form_key.as_deref(),
        Some("camunda-forms:bpmn:f")
    );
}

#[test]
fn script_task_evaluates_feel_or_is_a_job() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:scriptTask id="feel">{}</bpmn:scriptTask>
               <bpmn:scriptTask id="job">{}</bpmn:scriptTask>"#,
            ext(r#"<zeebe:script expression="=today()" resultVariable="date"/>"#),
            ext(r#"<zeebe:taskDefinition type="groovy"/>"#)
        ),
        "",
    );
    let ElementData::ScriptTask(ScriptTask::Script(s)) = &p.element_by_id("feel").unwrap().1.data
    else {
        panic!()
    };
    assert_eq!(
        (s.expression.text.as_str(), s.result_variable.as_str()),
        ("today()", "date")
    );
    assert!(matches!(
        p.element_by_id("job").unwrap().1.data,
        ElementData::ScriptTask(ScriptTask::JobWorker(_))
    ));
}

#[test]
fn business_rule_task_calls_a_decision_or_is_a_job() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:businessRuleTask id="dmn">{}</bpmn:businessRuleTask>
               <bpmn:businessRuleTask id="job">{}</bpmn:businessRuleTask>"#,
            ext(
                r#"<zeebe:calledDecision decisionId="dish" resultVariable="meal" bindingType="deployment"/>"#
            ),
            ext(r#"<zeebe:taskDefinition type="rules"/>"#)
        ),
        "",
    );
    let ElementData::BusinessRuleTask(BusinessRuleTask::CalledDecision(d)) =
        &p.element_by_id("dmn").unwrap().1.data
    else {
        panic!()
    };
    assert_eq!(d.decision_id, ExprOrStatic::Static("dish".into()));
    assert_eq!(d.result_variable, "meal");
    assert_eq!(d.binding_type, BindingType::Deployment);
    assert!(p.element_by_id("job").unwrap().1.job_worker().is_some());
}

#[test]
fn call_activity_called_element() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:callActivity id="call">{}</bpmn:callActivity>
               <bpmn:callActivity id="defaults">{}</bpmn:callActivity>"#,
            ext(
                r#"<zeebe:calledElement processId="=child" propagateAllChildVariables="false" propagateAllParentVariables="false" businessId="=order.id"/>"#
            ),
            ext(r#"<zeebe:calledElement processId="child"/>"#)
        ),
        "",
    );
    let ElementData::CallActivity(c) = &p.element_by_id("call").unwrap().1.data else {
        panic!()
    };
    assert!(c.process_id.is_expression());
    assert!(!c.propagate_all_child_variables);
    assert!(!c.propagate_all_parent_variables);
    assert!(c.business_id.as_ref().unwrap().is_expression());
    let ElementData::CallActivity(d) = &p.element_by_id("defaults").unwrap().1.data else {
        panic!()
    };
    assert!(d.propagate_all_child_variables && d.propagate_all_parent_variables);
    assert_eq!(d.binding_type, BindingType::Latest);
    assert_eq!(d.business_id, None);
}

#[test]
fn embedded_and_event_sub_processes_are_scopes() {
    let p = valid(
        &format!(
            r#"{START}
            <bpmn:subProcess id="sub">
              <bpmn:startEvent id="subStart"/>
              {}
              {}
            </bpmn:subProcess>
            <bpmn:subProcess id="esp" triggeredByEvent="true">
              <bpmn:startEvent id="espStart" isInterrupting="false">
                <bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1H</bpmn:timeCycle></bpmn:timerEventDefinition>
              </bpmn:startEvent>
            </bpmn:subProcess>"#,
            service_task("inner"),
            flow("f", "subStart", "inner")
        ),
        "",
    );
    let (sub, s) = p.element_by_id("sub").unwrap();
    assert_eq!(s.kind(), ElementKind::SubProcess);
    let scope = s.scope.as_ref().unwrap();
    let (sub_start, _) = p.element_by_id("subStart").unwrap();
    assert_eq!(scope.none_start_event, Some(sub_start));
    let (_, inner) = p.element_by_id("inner").unwrap();
    assert_eq!(inner.parent, Some(sub));
    let (esp, e) = p.element_by_id("esp").unwrap();
    assert_eq!(e.kind(), ElementKind::EventSubProcess);
    assert_eq!(
        p.root().scope.as_ref().unwrap().event_sub_processes,
        vec![esp]
    );
    // An event sub-process start is not a start event of the process.
    assert_eq!(p.root().scope.as_ref().unwrap().start_events.len(), 1);
    let (esp_start, start) = p.element_by_id("espStart").unwrap();
    assert_eq!(e.scope.as_ref().unwrap().start_events, vec![esp_start]);
    assert_eq!(start.kind(), ElementKind::TimerStartEvent);
    let ElementData::StartEvent(s) = &start.data else {
        panic!()
    };
    assert!(!s.interrupting);
}

#[test]
fn ad_hoc_sub_process() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:adHocSubProcess id="adhoc" cancelRemainingInstances="false">
              {}
              <bpmn:completionCondition>=done</bpmn:completionCondition>
              <bpmn:task id="a"/><bpmn:task id="b"/>
            </bpmn:adHocSubProcess>"#,
            ext(
                r#"<zeebe:adHoc activeElementsCollection="=next" outputCollection="results" outputElement="=result"/>"#
            )
        ),
        "",
    );
    let (adhoc, e) = p.element_by_id("adhoc").unwrap();
    let ElementData::AdHocSubProcess(a) = &e.data else {
        panic!()
    };
    assert_eq!(a.active_elements_collection.as_ref().unwrap().text, "next");
    assert_eq!(a.completion_condition.as_ref().unwrap().text, "done");
    assert!(!a.cancel_remaining_instances);
    assert_eq!(a.output_collection.as_deref(), Some("results"));
    assert_eq!(a.output_element.as_ref().unwrap().text, "result");
    assert_eq!(e.scope.as_ref().unwrap().children.len(), 2);
    assert_eq!(p.element_by_id("a").unwrap().1.parent, Some(adhoc));
}

#[test]
fn gateways_and_default_flows() {
    let p = valid(
        &format!(
            r#"{START}{}
            <bpmn:exclusiveGateway id="x" default="other"/>
            {}
            <bpmn:sequenceFlow id="cond" sourceRef="x" targetRef="a">
              <bpmn:conditionExpression xsi:type="bpmn:tFormalExpression" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">= amount &gt; 100</bpmn:conditionExpression>
            </bpmn:sequenceFlow>
            <bpmn:task id="a"/><bpmn:task id="b"/>
            <bpmn:inclusiveGateway id="i"/><bpmn:parallelGateway id="p"/>"#,
            flow("in", "start", "x"),
            flow("other", "x", "b"),
        ),
        "",
    );
    let (_, x) = p.element_by_id("x").unwrap();
    let ElementData::ExclusiveGateway(g) = &x.data else {
        panic!()
    };
    let default = g.default_flow.unwrap();
    assert_eq!(p[default].id, "other");
    let Some(ElementRef::SequenceFlow(cond)) = p.lookup("cond") else {
        panic!()
    };
    let condition = p[cond].condition.as_ref().unwrap();
    assert_eq!(condition.text.trim(), "amount > 100");
    assert_eq!(
        p.expression(condition.id).unwrap().origin.attribute,
        "conditionExpression"
    );
    assert_eq!(x.data.gateway(), Some(g));
    assert_eq!(
        p.element_by_id("i").unwrap().1.kind(),
        ElementKind::InclusiveGateway
    );
    assert_eq!(
        p.element_by_id("p").unwrap().1.kind(),
        ElementKind::ParallelGateway
    );
}

#[test]
fn multi_instance_on_an_activity() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:task id="t">
              <bpmn:multiInstanceLoopCharacteristics isSequential="true">
                {}
                <bpmn:completionCondition>=count(results) &gt; 2</bpmn:completionCondition>
              </bpmn:multiInstanceLoopCharacteristics>
            </bpmn:task>"#,
            ext(
                r#"<zeebe:loopCharacteristics inputCollection="=items" inputElement="item" outputCollection="results" outputElement="=result"/>"#
            )
        ),
        "",
    );
    let mi = p
        .element_by_id("t")
        .unwrap()
        .1
        .multi_instance
        .as_ref()
        .unwrap();
    assert!(mi.is_sequential);
    assert_eq!(mi.input_collection.text, "items");
    assert_eq!(mi.input_element.as_deref(), Some("item"));
    assert_eq!(mi.output_collection.as_deref(), Some("results"));
    assert_eq!(mi.output_element.as_ref().unwrap().text, "result");
    assert!(mi.completion_condition.as_ref().unwrap().is_expression());
}

#[test]
fn collaborations_lanes_diagrams_and_artifacts_are_ignored() {
    let xml = format!(
        r#"<bpmn:definitions {NS} xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">
  <bpmn:collaboration id="c">
    <bpmn:participant id="pool" processRef="process"/>
    <bpmn:participant id="other" processRef="documentation"/>
    <bpmn:messageFlow id="mf" sourceRef="pool" targetRef="other"/>
  </bpmn:collaboration>
  <bpmn:process id="process" isExecutable="true">
    <bpmn:documentation>How it works</bpmn:documentation>
    <bpmn:extensionElements><camunda:properties><camunda:property name="x"/></camunda:properties></bpmn:extensionElements>
    <bpmn:laneSet id="ls"><bpmn:lane id="lane"><bpmn:flowNodeRef>start</bpmn:flowNodeRef></bpmn:lane></bpmn:laneSet>
    <bpmn:startEvent id="start"><camunda:foo/></bpmn:startEvent>
    <bpmn:dataObject id="do"/>
    <bpmn:dataObjectReference id="dor" dataObjectRef="do"/>
    <bpmn:dataStoreReference id="dsr"/>
    <bpmn:textAnnotation id="note"><bpmn:text>hi</bpmn:text></bpmn:textAnnotation>
    <bpmn:association id="a" sourceRef="start" targetRef="note"/>
    <bpmn:group id="g"/>
  </bpmn:process>
  <bpmn:process id="documentation" isExecutable="false">
    <bpmn:serviceTask id="notChecked"/>
  </bpmn:process>
  <bpmn:dataStore id="ds"/>
  <bpmn:category id="cat"/>
  <bpmndi:BPMNDiagram id="diagram"><bpmndi:BPMNPlane id="plane" bpmnElement="c">
    <bpmndi:BPMNShape id="start_di" bpmnElement="start"><dc:Bounds x="1" y="2" width="3" height="4"/></bpmndi:BPMNShape>
  </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>
</bpmn:definitions>"#
    );
    let d = parse(xml.as_bytes()).unwrap();
    assert_eq!(d.id.as_deref(), Some("d"));
    assert_eq!(d.processes.len(), 1);
    assert_eq!(
        d.non_executable_process_ids,
        vec!["documentation".to_string()]
    );
    assert_eq!(d.processes[0].elements().len(), 2);
}

#[test]
fn several_executable_processes_in_one_file() {
    let xml = format!(
        r#"<bpmn:definitions {NS}>
  <bpmn:process id="one" isExecutable="true"><bpmn:startEvent id="s1"/></bpmn:process>
  <bpmn:process id="two" isExecutable="true" name="Two"><bpmn:startEvent id="s2"/></bpmn:process>
</bpmn:definitions>"#
    );
    let d = parse(xml.as_bytes()).unwrap();
    let ids: Vec<_> = d
        .processes
        .iter()
        .map(|p| p.bpmn_process_id.as_str())
        .collect();
    assert_eq!(ids, vec!["one", "two"]);
    assert_eq!(d.processes[1].name.as_deref(), Some("Two"));
}

#[test]
fn process_level_extensions() {
    let xml = format!(
        r#"<bpmn:definitions {NS}>
  <bpmn:process id="p" isExecutable="true">
    {}
    <bpmn:startEvent id="s"/>
  </bpmn:process>
</bpmn:definitions>"#,
        ext(r#"<zeebe:versionTag value="v1.0"/>
            <zeebe:jobPriorityDefinition priority="=prio"/>
            <zeebe:userTaskForm id="form">{"components": []}</zeebe:userTaskForm>
            <zeebe:properties><zeebe:property name="team" value="billing"/></zeebe:properties>
            <zeebe:executionListeners><zeebe:executionListener eventType="start" type="audit"/></zeebe:executionListeners>"#)
    );
    let p = process(&xml);
    assert_eq!(p.version_tag.as_deref(), Some("v1.0"));
    assert!(p.job_priority.as_ref().unwrap().is_expression());
    assert_eq!(p.user_task_forms[0].id, "form");
    assert_eq!(p.user_task_forms[0].body, r#"{"components": []}"#);
    assert_eq!(p.root().properties[0].value, "billing");
    assert_eq!(
        p.root().execution_listeners[0].event_type,
        ExecutionListenerEventType::Start
    );
}

#[test]
fn references_may_carry_a_namespace_prefix() {
    let p = valid(
        r#"<bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="tns:m"/></bpmn:startEvent>"#,
        r#"<bpmn:message id="m" name="go"/>"#,
    );
    assert_eq!(p.root().scope.as_ref().unwrap().start_events.len(), 1);
    let (_, s) = p.element_by_id("s").unwrap();
    assert_eq!(s.kind(), ElementKind::MessageStartEvent);
}

#[test]
fn lists_every_expression_of_a_process_with_its_element() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:serviceTask id="task">{}</bpmn:serviceTask>"#,
            ext(r#"<zeebe:taskDefinition type="=t" retries="=r"/>
                <zeebe:ioMapping><zeebe:input source="=a" target="b"/><zeebe:output source="=c" target="d"/></zeebe:ioMapping>"#)
        ),
        "",
    );
    let listed: Vec<(String, &str, &str)> = p
        .expressions()
        .iter()
        .map(|e| {
            (
                e.origin.element_id.clone(),
                e.origin.attribute,
                e.text.as_str(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            ("task".into(), "type", "t"),
            ("task".into(), "retries", "r"),
            ("task".into(), "source", "a"),
            ("task".into(), "source", "c"),
        ]
    );
    for (i, e) in p.expressions().iter().enumerate() {
        assert_eq!(e.id.index(), i);
    }
}

#[test]
fn unsupported_kinds_are_rejected_by_name() {
    let p = valid(
        &format!(
            r#"{START}{}<bpmn:task id="loop"><bpmn:multiInstanceLoopCharacteristics>{}</bpmn:multiInstanceLoopCharacteristics></bpmn:task>
            <bpmn:complexGatewayLike id="x"/>"#,
            service_task("task"),
            ext(r#"<zeebe:loopCharacteristics inputCollection="=items"/>"#)
        )
        .replace(r#"<bpmn:complexGatewayLike id="x"/>"#, ""),
        "",
    );
    let supported = ElementKindSet::from([
        ElementKind::Process,
        ElementKind::NoneStartEvent,
        ElementKind::Task,
    ]);
    let errors = p.unsupported_elements(&supported);
    let rendered: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        rendered,
        vec![
            "Element: task (line 4, column 30)\n    - ERROR: Elements of type 'service task' are not supported",
            "Element: loop (line 4, column 161)\n    - ERROR: Elements of type 'multi-instance body' are not supported",
        ]
    );
    assert!(p.unsupported_elements(&ElementKindSet::all()).is_empty());
}
