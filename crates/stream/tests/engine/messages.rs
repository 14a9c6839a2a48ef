//! Message correlation: subscriptions opened on the partition of the correlation key, messages
//! published before or after, time to live, one correlation per process, message start events
//! with one instance per correlation key, and messages on another partition.

use beeline_protocol::intent::{
    IncidentIntent, MessageIntent, MessageStartEventSubscriptionIntent, MessageSubscriptionIntent,
    ProcessInstanceIntent as PI, ProcessMessageSubscriptionIntent,
};
use beeline_protocol::partitioning::message_partition;
use beeline_protocol::value::{
    IncidentRecord, MessageSubscriptionRecord, ProcessMessageSubscriptionRecord, VariableRecord,
};
use beeline_protocol::{RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, message_ref, timer};

use crate::json;

fn waiting_for_payment() -> ProcessBuilder {
    ProcessBuilder::new("order")
        .message("payment", Some("=orderId"))
        .start_event("s")
        .catch_event("paid", &message_ref("payment"))
        .end_event("e")
}

fn completed(harness: &Harness, instance: i64) -> bool {
    !harness
        .records()
        .of_instance(instance)
        .with_element("order")
        .with_intent(PI::ElementCompleted)
        .is_empty()
}

fn variable(harness: &Harness, name: &str) -> Option<serde_json::Value> {
    harness
        .records()
        .values::<VariableRecord>()
        .into_iter()
        .rev()
        .find(|v| v.name == name)
        .map(|v| json(v.value.as_bytes()))
}

#[test]
fn a_message_published_after_the_subscription_opened_completes_the_catch_event() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    let instance = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    // The subscription opened on both sides.
    harness
        .records()
        .with_intent(ProcessMessageSubscriptionIntent::Created)
        .expect_one();
    let subscription = harness
        .records()
        .with_intent(MessageSubscriptionIntent::Created)
        .expect_one();
    let value = subscription
        .value_as::<MessageSubscriptionRecord>()
        .unwrap();
    assert_eq!(value.correlation_key, "o-1");
    assert_eq!(value.message_name, "payment");
    assert!(!completed(&harness, instance));

    harness
        .publish_message("payment", "o-2", 0, "", "{}")
        .unwrap();
    assert!(!completed(&harness, instance), "another key does not match");
    harness
        .publish_message("payment", "o-1", 0, "", r#"{"amount": 42}"#)
        .unwrap();
    assert!(completed(&harness, instance), "{}", harness.records().log());
    assert_eq!(variable(&harness, "amount"), Some(serde_json::json!(42)));
    let intents: Vec<_> = harness
        .records()
        .with_value_type(beeline_protocol::ValueType::MessageSubscription)
        .events()
        .intents();
    assert_eq!(
        intents,
        [
            MessageSubscriptionIntent::Created.into(),
            MessageSubscriptionIntent::Correlating.into(),
            MessageSubscriptionIntent::Correlated.into(),
        ]
    );
}

#[test]
fn a_buffered_message_correlates_to_a_subscription_opened_within_its_time_to_live() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    harness
        .publish_message("payment", "o-1", 60_000, "", r#"{"amount": 7}"#)
        .unwrap();
    harness.advance_time(30_000);
    let instance = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    assert!(completed(&harness, instance), "{}", harness.records().log());
    assert_eq!(variable(&harness, "amount"), Some(serde_json::json!(7)));
}

#[test]
fn an_expired_message_correlates_no_more() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    harness
        .publish_message("payment", "o-1", 1_000, "", "{}")
        .unwrap();
    harness.advance_time(1_000);
    harness
        .records()
        .with_intent(MessageIntent::Expired)
        .expect_one();
    let instance = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    assert!(!completed(&harness, instance));
}

#[test]
fn a_message_id_is_unique_while_the_message_lives() {
    let harness = Harness::new(1);
    harness
        .publish_message("payment", "o-1", 60_000, "id-1", "{}")
        .unwrap();
    let again = harness
        .publish_message("payment", "o-1", 60_000, "id-1", "{}")
        .unwrap();
    assert_eq!(again.record_type, RecordType::CommandRejection);
    assert_eq!(again.rejection_type, RejectionType::AlreadyExists);
    harness.advance_time(60_000);
    let later = harness
        .publish_message("payment", "o-1", 60_000, "id-1", "{}")
        .unwrap();
    assert_eq!(later.record_type, RecordType::Event);
}

#[test]
fn a_message_correlates_once_per_process() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    let first = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    let second = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    harness
        .publish_message("payment", "o-1", 60_000, "", "{}")
        .unwrap();
    assert!(completed(&harness, first));
    assert!(
        !completed(&harness, second),
        "the message went to one instance"
    );
    harness
        .publish_message("payment", "o-1", 60_000, "", "{}")
        .unwrap();
    assert!(completed(&harness, second));
}

#[test]
fn a_message_correlates_to_instances_of_different_processes() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    harness.deploy_process(
        &ProcessBuilder::new("invoice")
            .message("payment", Some("=orderId"))
            .start_event("s")
            .receive_task("await", "payment")
            .end_event("e"),
    );
    let order = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    let invoice = harness.create_instance("invoice", r#"{"orderId": "o-1"}"#);
    harness
        .publish_message("payment", "o-1", 0, "", "{}")
        .unwrap();
    assert!(completed(&harness, order));
    harness
        .records()
        .of_instance(invoice)
        .with_element("invoice")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_non_interrupting_message_boundary_event_takes_every_message() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("update", Some("=orderId"))
            .start_event("s")
            .service_task("t", "w")
            .end_event("e")
            .boundary_event("on-update", "t", &message_ref("update"), false)
            .end_event("updated"),
    );
    let instance = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    // Buffered, so a message that comes while the subscription is busy with the one before
    // waits for it (one with no time to live would be dropped, as in Zeebe).
    for _ in 0..3 {
        harness
            .publish_message("update", "o-1", 60_000, "", "{}")
            .unwrap();
    }
    harness
        .records()
        .with_element("updated")
        .with_intent(PI::ElementCompleted)
        .expect_count(3);
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    assert!(completed(&harness, instance));
    // Leaving the task closed its subscription on both sides.
    harness
        .records()
        .with_intent(ProcessMessageSubscriptionIntent::Deleted)
        .expect_one();
    harness
        .records()
        .with_intent(MessageSubscriptionIntent::Deleted)
        .expect_one();
}

#[test]
fn canceling_the_instance_closes_its_subscriptions() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    let instance = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    harness.cancel_instance(instance).unwrap();
    harness
        .records()
        .with_intent(MessageSubscriptionIntent::Deleted)
        .expect_one();
    harness
        .records()
        .with_intent(ProcessMessageSubscriptionIntent::Deleted)
        .expect_one();
    harness
        .publish_message("payment", "o-1", 60_000, "", "{}")
        .unwrap();
    harness
        .records()
        .with_intent(MessageSubscriptionIntent::Correlating)
        .expect_none();
}

#[test]
fn a_correlation_key_that_is_not_a_string_or_number_is_an_incident() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    let instance = harness.create_instance("order", r#"{"orderId": {"id": 1}}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert!(
        value
            .error_message
            .contains("Failed to extract the correlation key for 'orderId'"),
        "{}",
        value.error_message
    );
    harness
        .set_variables(instance, r#"{"orderId": 17}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    harness
        .publish_message("payment", "17", 0, "", "{}")
        .unwrap();
    assert!(completed(&harness, instance), "{}", harness.records().log());
}

#[test]
fn a_message_start_event_starts_an_instance_per_message() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("placed", None)
            .start_event_with("placed", &message_ref("placed"))
            .end_event("e"),
    );
    harness
        .records()
        .with_intent(MessageStartEventSubscriptionIntent::Created)
        .expect_one();
    harness
        .publish_message("placed", "", 0, "", r#"{"item": "book"}"#)
        .unwrap();
    harness
        .publish_message("placed", "", 0, "", r#"{"item": "pen"}"#)
        .unwrap();
    let started = harness
        .records()
        .with_element("order")
        .with_intent(PI::ElementCompleted)
        .len();
    assert_eq!(started, 2);
    let items: Vec<_> = harness
        .records()
        .values::<VariableRecord>()
        .into_iter()
        .filter(|v| v.name == "item")
        .map(|v| v.value)
        .collect();
    assert_eq!(items, [r#""book""#, r#""pen""#]);
}

#[test]
fn a_message_start_event_runs_one_instance_per_correlation_key_at_a_time() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("placed", None)
            .start_event_with("placed", &message_ref("placed"))
            .service_task("t", "w")
            .end_event("e"),
    );
    harness
        .publish_message("placed", "customer-1", 60_000, "", r#"{"n": 1}"#)
        .unwrap();
    harness
        .publish_message("placed", "customer-1", 60_000, "", r#"{"n": 2}"#)
        .unwrap();
    harness
        .publish_message("placed", "customer-2", 60_000, "", r#"{"n": 3}"#)
        .unwrap();
    let started = |harness: &Harness| {
        harness
            .records()
            .with_element("order")
            .with_intent(PI::ElementActivated)
            .len()
    };
    assert_eq!(started(&harness), 2, "one for each customer");
    let jobs = harness.activate_jobs("w", 10);
    let first = jobs
        .iter()
        .find(|(_, job)| json(&job.variables)["n"] == 1)
        .expect("the first customer's instance")
        .0;
    harness.complete_job(first, "{}").unwrap();
    assert_eq!(
        started(&harness),
        3,
        "the buffered message starts the next one"
    );
    let (next, job) = harness.activate_job("w");
    assert_eq!(json(&job.variables)["n"], 2);
    harness.complete_job(next, "{}").unwrap();
    assert_eq!(started(&harness), 3);
}

#[test]
fn a_new_version_replaces_the_message_start_event() {
    let harness = Harness::new(1);
    let version = |end: &str| {
        ProcessBuilder::new("order")
            .message("placed", None)
            .start_event_with("placed", &message_ref("placed"))
            .end_event(end)
    };
    harness.deploy_process(&version("v1-end"));
    harness.deploy_process(&version("v2-end"));
    harness
        .records()
        .with_intent(MessageStartEventSubscriptionIntent::Deleted)
        .expect_one();
    harness.publish_message("placed", "", 0, "", "{}").unwrap();
    harness
        .records()
        .with_element("v2-end")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness.records().with_element("v1-end").expect_none();
}

#[test]
fn an_event_based_gateway_takes_the_first_event_and_closes_the_others() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("payment", Some("=orderId"))
            .start_event("s")
            .event_based_gateway("which")
            .catch_event("paid", &message_ref("payment"))
            .end_event("ok")
            .move_to("which")
            .catch_event("timeout", &timer("timeDuration", "PT1H"))
            .end_event("late"),
    );
    let paid = harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    harness
        .publish_message("payment", "o-1", 0, "", "{}")
        .unwrap();
    let records = harness.records().of_instance(paid);
    assert_eq!(
        records
            .lifecycle()
            .iter()
            .filter(|(_, i)| *i == PI::ElementCompleted.into())
            .map(|(e, _)| e.as_str())
            .collect::<Vec<_>>(),
        ["s", "which", "paid", "ok", "order"],
        "{}",
        harness.records().log()
    );
    harness
        .records()
        .with_intent(beeline_protocol::intent::TimerIntent::Canceled)
        .expect_one();

    let late = harness.create_instance("order", r#"{"orderId": "o-2"}"#);
    harness.advance_time(3_600_000);
    let records = harness.records().of_instance(late);
    records
        .clone()
        .with_element("late")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness
        .records()
        .with_intent(ProcessMessageSubscriptionIntent::Deleted)
        .values::<ProcessMessageSubscriptionRecord>()
        .iter()
        .find(|s| s.process_instance_key == late)
        .expect("the message subscription of the late instance closed");
}

#[test]
fn a_message_on_another_partition_reaches_the_instance() {
    let harness = Harness::new(3);
    harness.deploy_process(&waiting_for_payment());
    // An instance on partition 1, a correlation key whose messages live on partition 3.
    let key = (0..100)
        .map(|i| format!("order-{i}"))
        .find(|k| message_partition(k, 3) == 3)
        .expect("a key of partition 3");
    let instance = harness.create_instance_on(1, "order", &format!(r#"{{"orderId": "{key}"}}"#));
    harness
        .records_of(3)
        .with_intent(MessageSubscriptionIntent::Created)
        .expect_one();
    harness
        .publish_message("payment", &key, 0, "", r#"{"paid": true}"#)
        .unwrap();
    assert!(completed(&harness, instance), "{}", harness.records().log());
    harness
        .records_of(3)
        .with_intent(MessageSubscriptionIntent::Correlated)
        .expect_one();
    assert_eq!(variable(&harness, "paid"), Some(serde_json::json!(true)));
}

#[test]
fn subscriptions_survive_a_restart_of_either_side() {
    let mut harness = Harness::new(2);
    harness.deploy_process(&waiting_for_payment());
    let key = (0..100)
        .map(|i| format!("order-{i}"))
        .find(|k| message_partition(k, 2) == 2)
        .expect("a key of partition 2");
    let instance = harness.create_instance_on(1, "order", &format!(r#"{{"orderId": "{key}"}}"#));
    harness.snapshot(2);
    harness.restart(2);
    harness.restart(1);
    harness
        .publish_message("payment", &key, 0, "", "{}")
        .unwrap();
    assert!(completed(&harness, instance), "{}", harness.records().log());
}

#[test]
fn lost_subscription_commands_are_sent_again_until_confirmed() {
    let harness = Harness::new(2);
    harness.deploy_process(&waiting_for_payment());
    let key = (0..100)
        .map(|i| format!("order-{i}"))
        .find(|k| message_partition(k, 2) == 2)
        .expect("a key of partition 2");
    // The opening is lost on its way to the message's partition.
    harness.settle();
    harness.cut_off(2, true);
    let instance = harness.create_instance_on(1, "order", &format!(r#"{{"orderId": "{key}"}}"#));
    harness
        .records_of(2)
        .with_intent(MessageSubscriptionIntent::Created)
        .expect_none();
    harness.cut_off(2, false);
    harness.advance_time(9_000);
    harness
        .records_of(2)
        .with_intent(MessageSubscriptionIntent::Created)
        .expect_none();
    harness.advance_time(1_000);
    harness
        .records_of(2)
        .with_intent(MessageSubscriptionIntent::Created)
        .expect_one();
    harness
        .records_of(1)
        .with_intent(ProcessMessageSubscriptionIntent::Created)
        .expect_one();

    // The correlation is lost on its way back to the instance's partition.
    harness.cut_off(1, true);
    harness
        .publish_message("payment", &key, 60_000, "", "{}")
        .unwrap();
    assert!(!completed(&harness, instance));
    harness.cut_off(1, false);
    harness.advance_time(10_000);
    assert!(completed(&harness, instance), "{}", harness.records().log());
    harness
        .records_of(2)
        .with_intent(MessageSubscriptionIntent::Correlated)
        .expect_one();
    // Confirmed, it is not sent again.
    harness.advance_time(10_000);
    harness
        .records_of(1)
        .with_intent(ProcessMessageSubscriptionIntent::Correlated)
        .expect_one();
}

#[test]
fn a_message_end_event_is_sent_by_a_job_worker() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("notify")
            .message("done", Some("=id"))
            .start_event("s")
            .element(
                "send",
                r#"<bpmn:endEvent id="send"><bpmn:extensionElements><zeebe:taskDefinition type="send-done"/></bpmn:extensionElements><bpmn:messageEventDefinition messageRef="message-done"/></bpmn:endEvent>"#,
            ),
    );
    let instance = harness.create_instance("notify", "{}");
    let (job, record) = harness.activate_job("send-done");
    assert_eq!(record.element_id, "send");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .of_instance(instance)
        .with_element("notify")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_interrupting_message_event_sub_process_cancels_the_process_content() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("cancel", Some("=orderId"))
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .event_sub_process("on-cancel")
            .start_event_with("cancel-start", &message_ref("cancel"))
            .end_event("canceled")
            .end_sub_process(),
    );
    let instance = harness.create_instance("order", r#"{"orderId": "o-9"}"#);
    harness
        .publish_message("cancel", "o-9", 0, "", r#"{"reason": "customer"}"#)
        .unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("t")
        .with_intent(PI::ElementTerminated)
        .expect_one();
    records
        .clone()
        .with_element("canceled")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    assert!(completed(&harness, instance));
    assert_eq!(
        variable(&harness, "reason"),
        Some(serde_json::json!("customer"))
    );
    assert!(harness.activate_jobs("w", 1).is_empty());
}

fn correlation(
    record: &beeline_protocol::Record,
) -> beeline_protocol::value::MessageCorrelationRecord {
    record
        .value_as::<beeline_protocol::value::MessageCorrelationRecord>()
        .cloned()
        .unwrap_or_else(|| panic!("not a correlation: {record:?}"))
}

#[test]
fn a_correlated_message_answers_with_the_instance_it_reached_on_another_partition() {
    let harness = Harness::new(3);
    harness.deploy_process(&waiting_for_payment());
    // Instances on every partition; the message lives on the partition of its key.
    let instance = harness.create_instance_on(2, "order", r#"{"orderId": "o-1"}"#);
    let other = harness.create_instance_on(3, "order", r#"{"orderId": "o-2"}"#);
    let answer = harness
        .correlate_message("payment", "o-1", r#"{"amount": 42}"#)
        .unwrap();
    assert_eq!(answer.record_type, RecordType::Event, "{answer:?}");
    assert_eq!(
        answer.intent,
        beeline_protocol::intent::MessageCorrelationIntent::Correlated.into()
    );
    let value = correlation(&answer);
    assert_eq!(value.process_instance_key, instance);
    assert_eq!(value.name, "payment");
    assert_eq!(value.message_key, answer.key);
    assert_eq!(
        beeline_protocol::key::partition_of(answer.key),
        Some(message_partition("o-1", 3))
    );
    let completed_on = |partition: u16, instance: i64| {
        !harness
            .records_of(partition)
            .of_instance(instance)
            .with_element("order")
            .with_intent(PI::ElementCompleted)
            .is_empty()
    };
    assert!(completed_on(2, instance), "{}", harness.records_of(2).log());
    assert!(!completed_on(3, other));
    let amount = harness
        .records_of(2)
        .values::<VariableRecord>()
        .into_iter()
        .find(|v| v.name == "amount")
        .map(|v| json(v.value.as_bytes()));
    assert_eq!(amount, Some(serde_json::json!(42)));
    // Published and expired at once: not buffered for a subscription opened later.
    let message = harness
        .records_of(message_partition("o-1", 3))
        .with_key(answer.key);
    assert_eq!(
        message
            .clone()
            .with_value_type(beeline_protocol::ValueType::Message)
            .events()
            .intents(),
        [
            MessageIntent::Published.into(),
            MessageIntent::Expired.into()
        ]
    );
    let late = harness.create_instance_on(1, "order", r#"{"orderId": "o-1"}"#);
    harness.settle();
    assert!(
        !completed_on(1, late),
        "a correlated message is not buffered"
    );
}

#[test]
fn a_correlated_message_starts_an_instance_at_a_message_start_event() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("placed", None)
            .start_event_with("placed", &message_ref("placed"))
            .end_event("e"),
    );
    let answer = harness
        .correlate_message("placed", "k-1", r#"{"item": "book"}"#)
        .unwrap();
    let value = correlation(&answer);
    let started = harness
        .records()
        .with_element("order")
        .with_intent(PI::ElementActivated)
        .expect_one();
    assert_eq!(
        value.process_instance_key,
        started
            .value_as::<beeline_protocol::value::ProcessInstanceRecord>()
            .unwrap()
            .process_instance_key
    );
    assert!(value.process_definition_key > 0);
}

#[test]
fn a_correlated_message_nothing_waits_for_is_not_found() {
    let harness = Harness::new(1);
    harness.deploy_process(&waiting_for_payment());
    harness.create_instance("order", r#"{"orderId": "o-1"}"#);
    let answer = harness
        .correlate_message("payment", "nobody", "{}")
        .unwrap();
    assert_eq!(answer.record_type, RecordType::CommandRejection);
    assert_eq!(answer.rejection_type, RejectionType::NotFound);
    assert_eq!(
        answer.rejection_reason,
        "Expected to find subscription for message with name 'payment' and correlation key \
         'nobody', but none was found."
    );
    // Nothing kept: a later publish of the same key is the only one the instance sees.
    harness
        .records()
        .with_intent(MessageIntent::Expired)
        .expect_one();
}

#[test]
fn a_correlated_message_whose_instance_leaves_before_taking_it_is_not_found() {
    let harness = Harness::new(2);
    harness.deploy_process(&waiting_for_payment());
    let key = (0..100)
        .map(|i| format!("order-{i}"))
        .find(|k| message_partition(k, 2) == 2)
        .expect("a key of partition 2");
    let instance = harness.create_instance_on(1, "order", &format!(r#"{{"orderId": "{key}"}}"#));
    harness.settle();
    // The correlation is lost on its way to the instance, which is canceled meanwhile.
    harness.cut_off(1, true);
    let mut answer = harness.submit(
        2,
        beeline_protocol::Record::command(
            -1,
            beeline_protocol::intent::MessageCorrelationIntent::Correlate,
            beeline_protocol::value::MessageCorrelationRecord {
                name: "payment".into(),
                correlation_key: key.clone(),
                variables: b"{}".to_vec(),
                tenant_id: "<default>".into(),
                message_key: -1,
                process_instance_key: -1,
                process_definition_key: -1,
            },
        ),
    );
    harness.sync(2);
    assert!(
        answer.try_take().is_none(),
        "the answer waits for the instance"
    );
    harness.cut_off(1, false);
    harness.cancel_instance(instance).unwrap();
    harness.settle();
    let refused = answer.wait(&harness).unwrap();
    assert_eq!(
        refused.record_type,
        RecordType::CommandRejection,
        "{refused:?}"
    );
    assert_eq!(refused.rejection_type, RejectionType::NotFound);
    assert!(
        refused.rejection_reason.contains("no longer wait for it"),
        "{}",
        refused.rejection_reason
    );
}
