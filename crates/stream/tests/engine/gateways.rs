use beeline_protocol::intent::{IncidentIntent, ProcessInstanceIntent as PI};
use beeline_protocol::value::IncidentRecord;
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

fn exclusive() -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("s")
        .exclusive_gateway("split")
        .condition("=amount > 100")
        .end_event("big")
        .move_to("split")
        .condition("=amount > 10")
        .end_event("medium")
        .move_to("split")
        .default_flow()
        .end_event("small")
}

fn ended_at(harness: &Harness, instance: i64) -> Vec<String> {
    harness
        .records()
        .of_instance(instance)
        .with_intent(PI::ElementCompleted)
        .lifecycle()
        .into_iter()
        .map(|(e, _)| e)
        .filter(|e| ["big", "medium", "small", "a", "b", "c", "after"].contains(&e.as_str()))
        .collect()
}

#[test]
fn an_exclusive_gateway_takes_the_first_true_condition_or_the_default() {
    let harness = Harness::new(1);
    harness.deploy_process(&exclusive());
    let big = harness.create_instance("p", r#"{"amount": 500}"#);
    let medium = harness.create_instance("p", r#"{"amount": 50}"#);
    let small = harness.create_instance("p", r#"{"amount": 5}"#);
    assert_eq!(
        ended_at(&harness, big),
        vec!["big"],
        "conditions in order: the first that holds"
    );
    assert_eq!(ended_at(&harness, medium), vec!["medium"]);
    assert_eq!(ended_at(&harness, small), vec!["small"]);
}

#[test]
fn an_exclusive_gateway_without_a_true_condition_or_default_raises_an_incident() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .exclusive_gateway("split")
            .condition("=x = 1")
            .end_event("a")
            .move_to("split")
            .condition("=x = 2")
            .end_event("b"),
    );
    let instance = harness.create_instance("p", r#"{"x": 3}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "CONDITION_ERROR");
    assert_eq!(
        value.error_message,
        "Expected at least one condition to evaluate to true, or to have a default flow"
    );
    assert_eq!(value.element_id, "split");
    // Fix the data, resolve: the gateway is evaluated again.
    let gateway = harness
        .records()
        .with_element("split")
        .with_intent(PI::ElementActivating)
        .expect_one();
    harness
        .set_variables(instance, r#"{"x": 2}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    assert_eq!(ended_at(&harness, instance), vec!["b"]);
    assert_eq!(
        gateway.key,
        harness
            .records()
            .with_element("split")
            .with_intent(PI::ElementCompleted)
            .expect_one()
            .key
    );
}

#[test]
fn a_condition_of_the_wrong_type_names_the_expression_and_the_missing_variable() {
    let harness = Harness::new(1);
    harness.deploy_process(&exclusive());
    harness.create_instance("p", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let message = incident
        .value_as::<IncidentRecord>()
        .unwrap()
        .error_message
        .clone();
    assert!(
        message.contains(
            "Expected result of the expression 'amount > 100' to be 'BOOLEAN', but was 'NULL'"
        ),
        "{message}"
    );
    assert!(
        message.contains("No variable found with name 'amount'"),
        "{message}"
    );
}

#[test]
fn a_parallel_gateway_forks_and_joins_once_every_branch_arrived() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .parallel_gateway("fork")
            .service_task("a", "a")
            .parallel_gateway("join")
            .end_event("after")
            .move_to("fork")
            .service_task("b", "b")
            .connect_to("join")
            .move_to("fork")
            .service_task("c", "c")
            .connect_to("join"),
    );
    let instance = harness.create_instance("p", "{}");
    for job_type in ["a", "b"] {
        let (job, _) = harness.activate_job(job_type);
        harness.complete_job(job, "{}").unwrap();
        harness
            .records()
            .with_element("join")
            .with_intent(PI::ElementActivated)
            .expect_none();
    }
    let (job, _) = harness.activate_job("c");
    harness.complete_job(job, "{}").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("join")
        .with_intent(PI::ElementActivated)
        .expect_one();
    records
        .clone()
        .with_element("after")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_parallel_join_counts_tokens_per_flow() {
    // Two tokens arrive over the same incoming flow (through a merging exclusive gateway)
    // before the other branch's one: the join fires once, for one pair, and the extra token
    // keeps waiting (so the instance does not complete).
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .parallel_gateway("fork")
            .parallel_gateway("fork2")
            .service_task("x", "x")
            .exclusive_gateway("merge")
            .parallel_gateway("join")
            .end_event("after")
            .move_to("fork2")
            .service_task("y", "y")
            .connect_to("merge")
            .move_to("fork")
            .service_task("b", "b")
            .connect_to("join"),
    );
    let instance = harness.create_instance("p", "{}");
    for job_type in ["x", "y"] {
        let (job, _) = harness.activate_job(job_type);
        harness.complete_job(job, "{}").unwrap();
    }
    harness
        .records()
        .of_instance(instance)
        .with_element("join")
        .with_intent(PI::ElementActivated)
        .expect_none();
    let (b, _) = harness.activate_job("b");
    harness.complete_job(b, "{}").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("join")
        .with_intent(PI::ElementActivated)
        .expect_one();
    records
        .clone()
        .with_element("after")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_none();
}

#[test]
fn an_inclusive_gateway_forks_on_true_conditions_and_joins_those_branches() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .inclusive_gateway("fork")
            .condition("=a")
            .service_task("ta", "ta")
            .inclusive_gateway("join")
            .end_event("after")
            .move_to("fork")
            .condition("=b")
            .service_task("tb", "tb")
            .connect_to("join")
            .move_to("fork")
            .condition("=c")
            .service_task("tc", "tc")
            .connect_to("join"),
    );
    let instance = harness.create_instance("p", r#"{"a": true, "b": false, "c": true}"#);
    assert!(
        harness.activate_jobs("tb", 1).is_empty(),
        "branch b was not taken"
    );
    let (ta, _) = harness.activate_job("ta");
    harness.complete_job(ta, "{}").unwrap();
    harness
        .records()
        .of_instance(instance)
        .with_element("join")
        .with_intent(PI::ElementActivated)
        .expect_none();
    let (tc, _) = harness.activate_job("tc");
    harness.complete_job(tc, "{}").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("join")
        .with_intent(PI::ElementActivated)
        .expect_one();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}
