use beeline_protocol::RejectionType;
use beeline_protocol::intent::{ProcessInstanceIntent as PI, VariableIntent};
use beeline_protocol::value::VariableRecord;
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

use crate::json;

fn variables(harness: &Harness) -> Vec<VariableRecord> {
    harness
        .records()
        .events()
        .with_value_type(beeline_protocol::ValueType::Variable)
        .values::<VariableRecord>()
}

#[test]
fn creation_variables_live_in_the_instance_scope() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("e"),
    );
    let instance = harness.create_instance("p", r#"{"a": 1, "b": "two"}"#);
    let created = variables(&harness);
    assert_eq!(created.len(), 2);
    assert!(
        created
            .iter()
            .all(|v| v.scope_key == instance && v.process_instance_key == instance)
    );
    assert_eq!(
        created.iter().find(|v| v.name == "b").unwrap().value,
        "\"two\""
    );
}

#[test]
fn job_variables_propagate_to_the_scope_that_has_them_or_the_instance() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .sub_process("sub")
            .start_event("in_s")
            .service_task("t", "w")
            .service_task("check", "check")
            .end_event("in_e")
            .end_sub_process()
            .end_event("e"),
    );
    let instance = harness.create_instance("p", r#"{"existing": 1}"#);
    let sub = harness
        .records()
        .with_element("sub")
        .with_intent(PI::ElementActivated)
        .expect_one()
        .key;
    harness.set_variables(sub, r#"{"local": 1}"#, true).unwrap();
    let (job, _) = harness.activate_job("w");
    harness
        .complete_job(job, r#"{"existing": 2, "local": 2, "fresh": 3}"#)
        .unwrap();
    let updates: Vec<(String, i64, String)> = variables(&harness)
        .into_iter()
        .map(|v| (v.name, v.scope_key, v.value))
        .collect();
    assert!(
        updates.contains(&("existing".into(), instance, "2".into())),
        "{updates:?}"
    );
    assert!(
        updates.contains(&("local".into(), sub, "2".into())),
        "a variable of the sub-process stays there: {updates:?}"
    );
    assert!(
        updates.contains(&("fresh".into(), instance, "3".into())),
        "a new one goes to the instance: {updates:?}"
    );
    let (_, check) = harness.activate_job("check");
    assert_eq!(
        json(&check.variables),
        serde_json::json!({"existing": 2, "local": 2, "fresh": 3})
    );
}

#[test]
fn input_mappings_make_local_variables_and_output_mappings_choose_what_leaves() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task_with(
                "t",
                "w",
                r#"<zeebe:ioMapping><zeebe:input source="=order.id" target="orderId"/><zeebe:input source="=orderId * 10" target="scaled"/><zeebe:input source="static" target="label.text"/><zeebe:output source="=result.total" target="summary.total"/></zeebe:ioMapping>"#,
            )
            .service_task("after", "after")
            .end_event("e"),
    );
    let instance =
        harness.create_instance("p", r#"{"order": {"id": 7}, "summary": {"keep": true}}"#);
    let (job, task) = harness.activate_job("w");
    let seen = json(&task.variables);
    assert_eq!(seen["orderId"], serde_json::json!(7));
    assert_eq!(
        seen["scaled"],
        serde_json::json!(70),
        "a mapping sees the ones before it"
    );
    assert_eq!(seen["label"], serde_json::json!({"text": "static"}));
    let task_key = task.element_instance_key;
    assert!(
        variables(&harness)
            .iter()
            .filter(|v| v.name == "orderId")
            .all(|v| v.scope_key == task_key)
    );
    harness
        .complete_job(job, r#"{"result": {"total": 99}, "noise": 1}"#)
        .unwrap();
    let (_, after) = harness.activate_job("after");
    let visible = json(&after.variables);
    assert_eq!(
        visible["summary"],
        serde_json::json!({"keep": true, "total": 99}),
        "a nested target changes one part"
    );
    assert!(
        visible.get("noise").is_none(),
        "with output mappings, job variables stay local"
    );
    assert!(
        visible.get("orderId").is_none(),
        "local variables end with their element"
    );
    assert!(
        harness
            .records()
            .of_instance(instance)
            .with_intent(VariableIntent::Updated)
            .list()
            .iter()
            .any(|r| r.value_as::<VariableRecord>().unwrap().name == "summary")
    );
}

#[test]
fn set_variables_locally_or_propagated_and_unknown_scopes() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("e"),
    );
    let instance = harness.create_instance("p", r#"{"x": 1}"#);
    let task = harness
        .records()
        .with_element("t")
        .with_intent(PI::ElementActivated)
        .expect_one()
        .key;
    harness
        .set_variables(task, r#"{"x": 2, "y": 3}"#, false)
        .unwrap();
    harness.set_variables(task, r#"{"z": 4}"#, true).unwrap();
    let all: Vec<(String, i64, String)> = variables(&harness)
        .into_iter()
        .map(|v| (v.name, v.scope_key, v.value))
        .collect();
    assert!(all.contains(&("x".into(), instance, "2".into())));
    assert!(all.contains(&("y".into(), instance, "3".into())));
    assert!(all.contains(&("z".into(), task, "4".into())));
    let unchanged_before = variables(&harness).len();
    harness.set_variables(task, r#"{"x": 2}"#, false).unwrap();
    assert_eq!(
        variables(&harness).len(),
        unchanged_before,
        "setting the same value writes no event"
    );
    let unknown = harness
        .set_variables(2_251_799_813_699_999, "{}", false)
        .unwrap();
    assert_eq!(unknown.rejection_type, RejectionType::NotFound);
    let not_an_object = harness.set_variables(task, "[]", false).unwrap();
    assert_eq!(not_an_object.rejection_type, RejectionType::InvalidArgument);
}
