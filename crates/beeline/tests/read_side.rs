//! The read side of the started binary: instances created over REST become searchable from
//! the embedded store and from PostgreSQL, stay so across a kill -9 (exported at least once,
//! stored once), come back when the store was deleted while the node was down, and wait for a
//! PostgreSQL server that is away at start or goes away without stopping the engine or losing
//! anything; a node without secondary storage says why it cannot search.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{Broker, exchange, get, request};
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

/// A Camunda user task for the sales group, assigned to the instance's `owner`.
const TASKS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="read-side-tasks" name="Reviews" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <bpmn:userTask id="review" name="Review"><bpmn:extensionElements><zeebe:userTask/><zeebe:assignmentDefinition assignee="=owner" candidateGroups="sales"/></bpmn:extensionElements></bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"#;

fn deploy(broker: &Broker, dir: &std::path::Path) {
    deploy_xml(broker, dir, "read-side.bpmn", PROCESS);
}

fn deploy_xml(broker: &Broker, dir: &std::path::Path, name: &str, xml: &str) {
    let file = dir.join(name);
    std::fs::write(&file, xml).expect("written");
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
    searchable_across_a_kill(&[]);
}

#[test]
fn instances_become_searchable_in_postgres_and_stay_so_across_a_kill() {
    let Some(server) = beeline_postgres::testkit::Server::start() else {
        return;
    };
    let url = server.database().expect("a database");
    searchable_across_a_kill(&[
        "--secondary-storage",
        "postgres",
        "--secondary-storage-url",
        &url,
    ]);
}

/// Instances created over REST are found, then the node is killed (-9) and started again:
/// each instance is stored once, none is lost.
fn searchable_across_a_kill(args: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let broker = Broker::start(&data, args);
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
    let broker = Broker::start(&data, args);
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

/// Waits until the node's metrics show `line`.
fn metric_shows(broker: &Broker, line: &str) {
    let started = Instant::now();
    loop {
        let (_, metrics) = get(broker.monitoring, "/metrics").expect("metrics");
        if metrics.lines().any(|l| l == line) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the metrics never showed {line}:\n{metrics}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn postgres_away_at_start_or_going_away_holds_exporting_back_and_loses_nothing() {
    // Durable, as in production: the test server's usual settings (no fsync, asynchronous
    // commits) lose the last commits when it is stopped as an outage stops it.
    let Some(server) = beeline_postgres::testkit::Server::start_with(&[]) else {
        return;
    };
    let url = server.database().expect("a database");
    server.stop().expect("the server stops");
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Broker::start(
        &dir.path().join("data"),
        &[
            "--secondary-storage",
            "postgres",
            "--secondary-storage-url",
            &url,
        ],
    );
    // The engine goes on without its store; searches and metrics say why.
    deploy(&broker, dir.path());
    let mut created = create(&broker, 10);
    let (status, body) = search(&broker, "process-instances", "{}");
    assert!(status.contains(" 503 "), "{status} {body}");
    metric_shows(&broker, "beeline_secondary_storage_failing 1");
    assert!(
        broker
            .output()
            .contains("secondary storage does not answer"),
        "{}",
        broker.output()
    );
    server.restart().expect("the server starts");
    assert_eq!(searchable(&broker, 10).len(), 10);
    metric_shows(&broker, "beeline_secondary_storage_failing 0");

    // The server goes away while instances come: exporting waits and catches up.
    server.stop().expect("the server stops");
    created.extend(create(&broker, 10));
    metric_shows(&broker, "beeline_secondary_storage_failing 1");
    assert!(
        broker
            .output()
            .contains("cannot write to secondary storage; exporting waits and retries"),
        "{}",
        broker.output()
    );
    server.restart().expect("the server starts");
    let found = searchable(&broker, 20);
    let unique: BTreeSet<&String> = found.iter().collect();
    assert_eq!(unique.len(), found.len(), "each instance is stored once");
    assert_eq!(unique, created.iter().collect::<BTreeSet<_>>());
    metric_shows(&broker, "beeline_secondary_storage_failing 0");
}

#[test]
fn a_store_deleted_while_the_node_is_down_is_rebuilt_from_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let broker = Broker::start(&data, &[]);
    deploy(&broker, dir.path());
    let created = create(&broker, 10);
    assert_eq!(searchable(&broker, 10).len(), 10);
    drop(broker);
    for suffix in ["", "-wal", "-shm"] {
        let file = data.join(format!("secondary.sqlite{suffix}"));
        if file.exists() {
            std::fs::remove_file(&file).expect("deleted");
        }
    }
    let broker = Broker::start(&data, &[]);
    let found = searchable(&broker, 10);
    assert_eq!(
        found.iter().collect::<BTreeSet<_>>(),
        created.iter().collect::<BTreeSet<_>>(),
        "every instance is back"
    );
    let (status, body) = search(
        &broker,
        "process-definitions",
        r#"{"filter":{"processDefinitionId":"read-side"}}"#,
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert_eq!(body["page"]["totalItems"], 1, "{body}");
    let (status, xml) = request(
        broker.rest,
        "GET",
        &format!(
            "/v2/process-definitions/{}/xml",
            body["items"][0]["processDefinitionKey"]
                .as_str()
                .expect("a key")
        ),
        "",
    )
    .expect("the REST API answers");
    assert!(status.contains(" 200 "), "{status}");
    assert!(xml.contains("read-side-work"), "{xml}");
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

/// POSTs a search: (status line, body).
fn search(broker: &Broker, resource: &str, body: &str) -> (String, Value) {
    json(broker.rest, "POST", &format!("/v2/{resource}/search"), body)
}

/// The process instance keys a search finds, in its order.
fn found(broker: &Broker, body: &str) -> (Vec<String>, Value) {
    let (status, body) = search(broker, "process-instances", body);
    assert!(status.contains(" 200 "), "{status} {body}");
    let keys = body["items"]
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
    (keys, body)
}

/// A 400 problem+json whose detail names `what`.
fn refused(broker: &Broker, method: &str, path: &str, body: &str, what: &str) -> String {
    let (head, text) = exchange(broker.rest, method, path, body).expect("answers");
    assert!(
        head.starts_with("HTTP/1.0 400") || head.starts_with("HTTP/1.1 400"),
        "{head}\n{text}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{head}"
    );
    let problem: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(problem["status"], 400, "{problem}");
    assert_eq!(problem["title"], "INVALID_ARGUMENT", "{problem}");
    assert_eq!(problem["instance"], path, "{problem}");
    let detail = problem["detail"].as_str().expect("a detail").to_owned();
    assert!(detail.contains(what), "{what} in {detail}");
    detail
}

#[test]
fn searches_over_rest_take_every_operator_sort_and_page_form_and_name_what_is_wrong() {
    every_search_form(&[]);
}

#[test]
fn searches_over_rest_answer_the_same_from_postgres() {
    let Some(server) = beeline_postgres::testkit::Server::start() else {
        return;
    };
    let url = server.database().expect("a database");
    every_search_form(&[
        "--secondary-storage",
        "postgres",
        "--secondary-storage-url",
        &url,
    ]);
}

fn every_search_form(args: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Broker::start(&dir.path().join("data"), args);
    deploy(&broker, dir.path());
    deploy_xml(&broker, dir.path(), "tasks.bpmn", TASKS);
    deploy_xml(
        &broker,
        dir.path(),
        "shipping-cost.dmn",
        include_str!("../../../examples/shipping-cost.dmn"),
    );
    let mut keys = create(&broker, 6);
    keys.sort_by_key(|k| k.parse::<i64>().expect("digits"));
    let mut reviews = Vec::new();
    for owner in ["ann", "bo"] {
        let (status, body) = json(
            broker.rest,
            "POST",
            "/v2/process-instances",
            &format!(
                r#"{{"processDefinitionId":"read-side-tasks","variables":{{"owner":"{owner}"}},"tags":["review","{owner}"]}}"#
            ),
        );
        assert!(status.contains(" 200 "), "{status} {body}");
        reviews.push(
            body["processInstanceKey"]
                .as_str()
                .expect("a key")
                .to_owned(),
        );
    }
    // Searchable once the user tasks are assigned (the last records written).
    let started = Instant::now();
    loop {
        let (status, body) = search(
            &broker,
            "user-tasks",
            r#"{"filter":{"assignee":{"$exists":true}}}"#,
        );
        assert!(status.contains(" 200 "), "{status} {body}");
        if body["page"]["totalItems"] == 2 && searchable(&broker, 6).len() == 6 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let count = |filter: &str| found(&broker, &format!(r#"{{"filter":{filter}}}"#)).0.len();

    // Every operator, on strings, enums, keys, dates, integers, booleans and variables.
    assert_eq!(
        count(r#"{"processDefinitionId":"read-side"}"#),
        6,
        "a value"
    );
    assert_eq!(
        count(r#"{"processDefinitionId":{"$eq":"read-side"}}"#),
        6,
        "$eq"
    );
    assert_eq!(
        count(r#"{"processDefinitionId":{"$neq":"read-side"}}"#),
        2,
        "$neq"
    );
    assert_eq!(
        count(r#"{"state":{"$in":["ACTIVE","COMPLETED"]}}"#),
        8,
        "$in"
    );
    assert_eq!(count(r#"{"state":{"$notIn":["ACTIVE"]}}"#), 0, "$notIn");
    assert_eq!(
        count(r#"{"endDate":{"$exists":false}}"#),
        8,
        "$exists false"
    );
    assert_eq!(count(r#"{"endDate":{"$exists":true}}"#), 0, "$exists true");
    assert_eq!(
        count(r#"{"processDefinitionId":{"$like":"read-side-*"}}"#),
        2,
        "$like *"
    );
    assert_eq!(
        count(r#"{"processDefinitionId":{"$like":"read-sid?"}}"#),
        6,
        "$like ?"
    );
    assert_eq!(
        count(
            r#"{"startDate":{"$gte":"2000-01-01T00:00:00Z","$lt":"2100-01-01T00:00:00.000+01:00"}}"#
        ),
        8,
        "$gte and $lt on dates"
    );
    assert_eq!(
        count(r#"{"startDate":{"$gt":"2100-01-01T00:00:00Z"}}"#),
        0,
        "$gt"
    );
    assert_eq!(
        count(r#"{"startDate":{"$lte":"2000-01-01T00:00:00Z"}}"#),
        0,
        "$lte"
    );
    assert_eq!(
        count(r#"{"processDefinitionVersion":{"$gte":1,"$lte":1}}"#),
        8,
        "integers"
    );
    assert_eq!(count(r#"{"hasIncident":false}"#), 8, "booleans");
    assert_eq!(count(r#"{"tags":["review"]}"#), 2, "tags given at creation");
    assert_eq!(count(r#"{"tags":["review","ann"]}"#), 1, "all of the tags");
    assert_eq!(count(r#"{"tags":[]}"#), 8, "no tags asked for");
    assert_eq!(
        count(
            r#"{"processDefinitionId":{"$eq":"read-side","$in":[],"$notIn":[]},"tags":[],"variables":[],"$or":[]}"#
        ),
        6,
        "empty lists ask for nothing (as CamundaClient sends them)"
    );
    assert_eq!(
        count(&format!(
            r#"{{"processInstanceKey":{{"$in":["{}","{}"]}}}}"#,
            keys[0], keys[1]
        )),
        2,
        "keys as strings"
    );
    let (only, _) = found(
        &broker,
        r#"{"filter":{"variables":[{"name":"i","value":"3"}]}}"#,
    );
    assert_eq!(only.len(), 1, "a variable's JSON text");
    assert_eq!(
        count(
            r#"{"$or":[{"processDefinitionId":"read-side-tasks"},{"variables":[{"name":"i","value":{"$in":["0","1"]}}]}]}"#
        ),
        4,
        "$or"
    );

    // Sorts, and pages by offset and by cursor both ways.
    let sorted = r#""sort":[{"field":"processDefinitionId","order":"ASC"},{"field":"processInstanceKey","order":"DESC"}]"#;
    let (all, body) = found(&broker, &format!("{{{sorted},\"page\":{{\"limit\":100}}}}"));
    let mut expected: Vec<String> = keys.iter().rev().cloned().collect();
    let mut tasks = reviews.clone();
    tasks.sort_by_key(|k| std::cmp::Reverse(k.parse::<i64>().expect("digits")));
    expected.extend(tasks);
    assert_eq!(all, expected, "sorted on two fields: {body}");
    assert_eq!(body["page"]["totalItems"], 8);
    let (page, _) = found(
        &broker,
        &format!("{{{sorted},\"page\":{{\"from\":3,\"limit\":3}}}}"),
    );
    assert_eq!(page, all[3..6].to_vec(), "from and limit");
    let (first, body) = found(&broker, &format!("{{{sorted},\"page\":{{\"limit\":3}}}}"));
    assert_eq!(first, all[..3].to_vec());
    let end = body["page"]["endCursor"]
        .as_str()
        .expect("an end cursor")
        .to_owned();
    let (second, body) = found(
        &broker,
        &format!("{{{sorted},\"page\":{{\"after\":\"{end}\",\"limit\":3}}}}"),
    );
    assert_eq!(second, all[3..6].to_vec(), "after the end cursor");
    let start = body["page"]["startCursor"]
        .as_str()
        .expect("a start cursor")
        .to_owned();
    let (back, _) = found(
        &broker,
        &format!("{{{sorted},\"page\":{{\"before\":\"{start}\",\"limit\":3}}}}"),
    );
    assert_eq!(back, first, "before the start cursor");

    // User tasks: a search and a GET by key.
    let (status, body) = search(
        &broker,
        "user-tasks",
        r#"{"filter":{"candidateGroup":"sales","state":"CREATED"},"sort":[{"field":"creationDate","order":"ASC"}]}"#,
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    let items = body["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{body}");
    assert_eq!(items[0]["candidateGroups"], serde_json::json!(["sales"]));
    assert_eq!(items[0]["name"], "Review");
    assert_eq!(items[0]["processName"], "Reviews");
    let task = items[0]["userTaskKey"].as_str().expect("a key");
    let (status, body) = json(broker.rest, "GET", &format!("/v2/user-tasks/{task}"), "");
    assert!(status.contains(" 200 "), "{status} {body}");
    assert!(
        body["assignee"] == "ann" || body["assignee"] == "bo",
        "{body}"
    );
    assert_eq!(body["state"], "CREATED");
    let owner = body["assignee"].as_str().expect("an assignee").to_owned();

    // The variables the user task sees: its instance's.
    let (status, body) = search(
        &broker,
        &format!("user-tasks/{task}/variables"),
        r#"{"filter":{"name":"owner"}}"#,
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert_eq!(body["page"]["totalItems"], 1, "{body}");
    assert_eq!(body["items"][0]["value"], format!("\"{owner}\""), "{body}");
    refused(
        &broker,
        "POST",
        &format!("/v2/user-tasks/{task}/variables/search"),
        r#"{"filter":{"value":"x"}}"#,
        "[filter.value]",
    );
    let (status, body) = search(&broker, "user-tasks/1/variables", "{}");
    assert!(status.contains(" 404 "), "{status} {body}");

    // Element statistics over a definition's instances, filtered as instances are.
    let (_, body) = search(
        &broker,
        "process-definitions",
        r#"{"filter":{"processDefinitionId":"read-side"}}"#,
    );
    let definition = body["items"][0]["processDefinitionKey"]
        .as_str()
        .expect("a key")
        .to_owned();
    let statistics = |filter: &str| {
        let (status, body) = json(
            broker.rest,
            "POST",
            &format!("/v2/process-definitions/{definition}/statistics/element-instances"),
            filter,
        );
        assert!(status.contains(" 200 "), "{status} {body}");
        body["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| {
                (
                    item["elementId"].as_str().expect("an id").to_owned(),
                    item["active"].as_i64().expect("a count"),
                    item["completed"].as_i64().expect("a count"),
                )
            })
            .collect::<Vec<_>>()
    };
    let all = statistics("");
    assert!(
        all.contains(&("start".into(), 0, 6)),
        "every instance passed its start event: {all:?}"
    );
    let active = count(r#"{"processDefinitionId":"read-side","state":"ACTIVE"}"#) as i64;
    let waiting = statistics(r#"{"filter":{"state":"ACTIVE"}}"#);
    assert!(
        waiting
            .iter()
            .any(|(id, n, _)| id == "work" && *n == active),
        "{active} active instances wait at the task: {waiting:?}"
    );
    refused(
        &broker,
        "POST",
        &format!("/v2/process-definitions/{definition}/statistics/element-instances"),
        r#"{"page":{"limit":1}}"#,
        "[page]",
    );

    // Decision requirements: a search, a GET by key, the XML.
    let (status, body) = search(
        &broker,
        "decision-requirements",
        r#"{"filter":{"decisionRequirementsId":"shipping"}}"#,
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert_eq!(body["page"]["totalItems"], 1, "{body}");
    assert_eq!(body["items"][0]["decisionRequirementsName"], "Shipping");
    assert_eq!(body["items"][0]["resourceName"], "shipping-cost.dmn");
    let drg = body["items"][0]["decisionRequirementsKey"]
        .as_str()
        .expect("a key")
        .to_owned();
    let (status, body) = json(
        broker.rest,
        "GET",
        &format!("/v2/decision-requirements/{drg}"),
        "",
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert_eq!(body["version"], 1, "{body}");
    let (status, xml) = request(
        broker.rest,
        "GET",
        &format!("/v2/decision-requirements/{drg}/xml"),
        "",
    )
    .expect("the REST API answers");
    assert!(status.contains(" 200 "), "{status}");
    assert!(xml.contains("shipping-cost"), "{xml}");

    // What is wrong is named: the property, the operator, the cursor.
    let path = "/v2/process-instances/search";
    refused(
        &broker,
        "POST",
        path,
        r#"{"filter":{"color":"red"}}"#,
        "[filter.color]",
    );
    refused(
        &broker,
        "POST",
        path,
        r#"{"filter":{"state":{"$gt":"ACTIVE"}}}"#,
        "[filter.state.$gt] cannot be parsed: unknown operator `$gt`",
    );
    refused(
        &broker,
        "POST",
        path,
        r#"{"filter":{"state":{"$regex":"A.*"}}}"#,
        "unknown operator `$regex`",
    );
    refused(
        &broker,
        "POST",
        path,
        r#"{"page":{"after":"not a cursor!"}}"#,
        "[page.after]",
    );
    refused(
        &broker,
        "POST",
        path,
        &format!("{{\"page\":{{\"before\":\"{end}\"}}}}"),
        "[page.before]",
    );
    refused(
        &broker,
        "POST",
        path,
        r#"{"sort":[{"field":"color"}]}"#,
        "[sort[0].field]",
    );
    refused(
        &broker,
        "POST",
        path,
        r#"{"page":{"limit":0}}"#,
        "[page.limit]",
    );
    refused(&broker, "POST", path, r#"{"filter":"#, "not valid JSON");
    refused(
        &broker,
        "POST",
        "/v2/user-tasks/search",
        r#"{"filter":{"candidateGroup":{"$gt":"a"}}}"#,
        "[filter.candidateGroup.$gt]",
    );
    refused(
        &broker,
        "GET",
        "/v2/process-instances/abc",
        "",
        "processInstanceKey",
    );
    let (status, body) = json(broker.rest, "GET", "/v2/process-instances/1", "");
    assert!(status.contains(" 404 "), "{status} {body}");
    assert_eq!(body["title"], "NOT_FOUND");
}

/// An order process: its start event and its first user task link the form `order`, its
/// second user task has none.
const ORDER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="read-side-order" isExecutable="true">
    <bpmn:startEvent id="start"><bpmn:extensionElements><zeebe:formDefinition formId="order"/></bpmn:extensionElements></bpmn:startEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="fill"/>
    <bpmn:userTask id="fill"><bpmn:extensionElements><zeebe:userTask/><zeebe:formDefinition formId="order"/></bpmn:extensionElements></bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="fill" targetRef="check"/>
    <bpmn:userTask id="check"><bpmn:extensionElements><zeebe:userTask/></bpmn:extensionElements></bpmn:userTask>
    <bpmn:sequenceFlow id="f3" sourceRef="check" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"#;

fn order_form(label: &str) -> String {
    format!(
        r#"{{"id":"order","type":"default","schemaVersion":16,"components":[{{"type":"textfield","key":"item","label":"{label}"}}]}}"#
    )
}

#[test]
fn forms_of_user_tasks_and_start_events_are_read_from_the_store() {
    forms_are_read(&[]);
}

#[test]
fn forms_of_user_tasks_and_start_events_are_read_from_postgres() {
    let Some(server) = beeline_postgres::testkit::Server::start() else {
        return;
    };
    let url = server.database().expect("a database");
    forms_are_read(&[
        "--secondary-storage",
        "postgres",
        "--secondary-storage-url",
        &url,
    ]);
}

fn forms_are_read(args: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Broker::start(&dir.path().join("data"), args);
    deploy_xml(&broker, dir.path(), "order.form", &order_form("Item"));
    deploy_xml(&broker, dir.path(), "order.bpmn", ORDER);
    deploy(&broker, dir.path());
    let (status, body) = json(
        broker.rest,
        "POST",
        "/v2/process-instances",
        r#"{"processDefinitionId":"read-side-order"}"#,
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    let instance = body["processInstanceKey"]
        .as_str()
        .expect("a key")
        .to_owned();
    // The definitions, and the instance's first user task once it is searchable.
    let started = Instant::now();
    let (task, definitions) = loop {
        let (_, tasks) = search(
            &broker,
            "user-tasks",
            &format!(r#"{{"filter":{{"processInstanceKey":"{instance}"}}}}"#),
        );
        let (_, definitions) = search(&broker, "process-definitions", "{}");
        if let Some(task) = tasks["items"].get(0)
            && definitions["page"]["totalItems"] == 2
        {
            break (task.clone(), definitions);
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{tasks}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let definition = |id: &str| -> Value {
        definitions["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|d| d["processDefinitionId"] == id)
            .cloned()
            .expect("the definition")
    };
    let (order, plain) = (definition("read-side-order"), definition("read-side"));
    assert_eq!(order["hasStartForm"], true, "{order}");
    assert_eq!(plain["hasStartForm"], false, "{plain}");
    let (_, with_form) = search(
        &broker,
        "process-definitions",
        r#"{"filter":{"hasStartForm":true}}"#,
    );
    assert_eq!(with_form["page"]["totalItems"], 1, "{with_form}");

    // The user task's form: FormResult with the schema as an object.
    let task_key = task["userTaskKey"].as_str().expect("a key");
    let (status, form) = json(
        broker.rest,
        "GET",
        &format!("/v2/user-tasks/{task_key}/form"),
        "",
    );
    assert!(status.contains(" 200 "), "{status} {form}");
    assert_eq!(form["formId"], "order", "{form}");
    assert_eq!(form["version"], 1, "{form}");
    assert_eq!(form["tenantId"], "<default>", "{form}");
    assert_eq!(form["formKey"], task["formKey"], "{form} {task}");
    assert_eq!(form["schema"]["components"][0]["label"], "Item", "{form}");

    // The start form, by the latest version of `order`: a new version of the form is what
    // the definition's start form is now.
    let order_key = order["processDefinitionKey"].as_str().expect("a key");
    let start_form = |expected_version: i64| -> Value {
        let started = Instant::now();
        loop {
            let (status, form) = json(
                broker.rest,
                "GET",
                &format!("/v2/process-definitions/{order_key}/form"),
                "",
            );
            assert!(status.contains(" 200 "), "{status} {form}");
            if form["version"] == expected_version {
                return form;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "{form}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    assert_eq!(start_form(1)["formKey"], form["formKey"]);
    deploy_xml(&broker, dir.path(), "order.form", &order_form("Article"));
    let newer = start_form(2);
    assert_eq!(
        newer["schema"]["components"][0]["label"], "Article",
        "{newer}"
    );
    assert_ne!(newer["formKey"], form["formKey"], "{newer}");
    // The task keeps the version it was created with.
    let (_, again) = json(
        broker.rest,
        "GET",
        &format!("/v2/user-tasks/{task_key}/form"),
        "",
    );
    assert_eq!(again["version"], 1, "{again}");

    // No form: 204. Unknown keys: 404 problem+json.
    let plain_key = plain["processDefinitionKey"].as_str().expect("a key");
    let (status, _) = request(
        broker.rest,
        "GET",
        &format!("/v2/process-definitions/{plain_key}/form"),
        "",
    )
    .expect("answers");
    assert!(status.contains(" 204 "), "{status}");
    let (_, body) = json(
        broker.rest,
        "POST",
        &format!("/v2/user-tasks/{task_key}/completion"),
        "{}",
    );
    let started = Instant::now();
    let check = loop {
        let (_, tasks) = search(
            &broker,
            "user-tasks",
            &format!(r#"{{"filter":{{"processInstanceKey":"{instance}","elementId":"check"}}}}"#),
        );
        if let Some(task) = tasks["items"].get(0) {
            break task["userTaskKey"].as_str().expect("a key").to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{tasks} {body}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let (status, _) = request(
        broker.rest,
        "GET",
        &format!("/v2/user-tasks/{check}/form"),
        "",
    )
    .expect("answers");
    assert!(status.contains(" 204 "), "{status}");
    for path in [
        "/v2/user-tasks/123456789/form",
        "/v2/process-definitions/123456789/form",
    ] {
        let (head, text) = exchange(broker.rest, "GET", path, "").expect("answers");
        assert!(head.contains(" 404 "), "{head}\n{text}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/problem+json"),
            "{head}"
        );
        let problem: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(problem["status"], 404, "{problem}");
        assert_eq!(problem["instance"], path, "{problem}");
    }
}
