//! The read side of the started binary: instances created over REST become searchable from
//! the embedded store, stay so across a kill -9 (exported at least once, stored once), and a
//! node without secondary storage says why it cannot search.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{Broker, get, request};
use serde_json::Value;

const PROCESS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="read-side" name="Read side" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <bpmn:serviceTask id="work" name="Work"><bpmn:extensionElements><zeebe:taskDefinition type="read-side-work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"#;

fn deploy(broker: &Broker, dir: &std::path::Path) {
    let file = dir.join("read-side.bpmn");
    std::fs::write(&file, PROCESS).expect("written");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args(["deploy", "--gateway", &broker.gateway()])
        .arg(&file)
        .output()
        .expect("beeline deploy runs");
    assert!(output.status.success(), "{output:?}");
}

fn json(port: u16, method: &str, path: &str, body: &str) -> (String, Value) {
    let (status, body) = request(port, method, path, body).expect("the REST API answers");
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    (status, value)
}

fn create(broker: &Broker, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let (status, body) = json(
                broker.rest,
                "POST",
                "/v2/process-instances",
                &format!(r#"{{"processDefinitionId":"read-side","variables":{{"i":{i}}}}}"#),
            );
            assert!(status.contains(" 200 "), "{status} {body}");
            body["processInstanceKey"]
                .as_str()
                .expect("a key")
                .to_owned()
        })
        .collect()
}

/// The keys of every instance of the process, once the store holds `expected` of them.
fn searchable(broker: &Broker, expected: usize) -> Vec<String> {
    let started = Instant::now();
    loop {
        let (status, body) = json(
            broker.rest,
            "POST",
            "/v2/process-instances/search",
            r#"{"filter":{"processDefinitionId":"read-side"},"page":{"limit":1000}}"#,
        );
        assert!(status.contains(" 200 "), "{status} {body}");
        let keys: Vec<String> = body["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| {
                item["processInstanceKey"]
                    .as_str()
                    .expect("a key")
                    .to_owned()
            })
            .collect();
        if keys.len() >= expected || started.elapsed() > Duration::from_secs(20) {
            assert_eq!(
                body["page"]["totalItems"],
                Value::from(keys.len()),
                "{body}"
            );
            return keys;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn instances_become_searchable_and_stay_so_across_a_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let broker = Broker::start(&data, &[]);
    deploy(&broker, dir.path());
    let mut created = create(&broker, 20);
    assert_eq!(searchable(&broker, 20).len(), 20);
    let (status, body) = json(
        broker.rest,
        "GET",
        &format!("/v2/process-instances/{}", created[0]),
        "",
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert_eq!(body["state"], "ACTIVE");
    assert_eq!(body["processDefinitionName"], "Read side");
    let (_, metrics) = get(broker.monitoring, "/metrics").expect("metrics");
    assert!(
        metrics.contains(
            "beeline_exporter_lag_records{partition=\"1\",exporter=\"secondary-storage\"}"
        ),
        "{metrics}"
    );
    // Killed: what was exported but not in a snapshot is exported again; stored once.
    drop(broker);
    let broker = Broker::start(&data, &[]);
    created.extend(create(&broker, 5));
    let found = searchable(&broker, 25);
    let unique: BTreeSet<&String> = found.iter().collect();
    assert_eq!(unique.len(), found.len(), "each instance is stored once");
    assert_eq!(
        unique,
        created.iter().collect::<BTreeSet<_>>(),
        "every instance created is found"
    );
}

#[test]
fn without_secondary_storage_searches_say_why_they_cannot_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let broker = Broker::start(&data, &["--secondary-storage", "none"]);
    let (status, body) = json(broker.rest, "POST", "/v2/process-instances/search", "{}");
    assert!(status.contains(" 503 "), "{status}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("--secondary-storage")),
        "{body}"
    );
    assert!(!data.join("secondary.sqlite").exists(), "no store file");
}
