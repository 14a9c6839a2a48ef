//! `beeline deploy | create | publish | status` against a running broker, as a user runs them:
//! what each prints when the gateway accepts the request, for a person and with `--json`, and
//! what it prints and how it exits when the gateway refuses it or cannot be reached.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Broker;
use serde_json::Value;

/// A broker on its defaults, with its data in a directory that lives as long as the test.
fn broker() -> (tempfile::TempDir, Broker) {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Broker::start(&dir.path().join("data"), &[]);
    (dir, broker)
}

/// What one run of the binary did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Its standard output as one JSON document.
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Its standard error as one JSON document (an error with `--json`).
    fn error_json(&self) -> Value {
        serde_json::from_str(&self.stderr)
            .unwrap_or_else(|e| panic!("stderr is not JSON ({e}):\n{}", self.stderr))
    }

    #[track_caller]
    fn succeeded(self) -> Self {
        assert_eq!(
            self.code,
            Some(0),
            "expected success:\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    fn failed_with(self, code: i32) -> Self {
        assert_eq!(
            self.code,
            Some(code),
            "expected exit status {code}:\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        assert_eq!(self.stdout, "", "nothing on stdout when it fails");
        self
    }
}

/// Runs `beeline ARGS` with `env` set and the gateway variables of the test's own environment
/// removed.
fn run_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args(args)
        .env_remove("BEELINE_GATEWAY")
        .env_remove("ZEEBE_ADDRESS")
        .envs(env.iter().copied())
        .output()
        .expect("the beeline binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `beeline COMMAND --gateway <the broker's> ARGS`.
fn run(broker: &Broker, command: &str, args: &[&str]) -> Run {
    let gateway = broker.gateway();
    let mut all = vec![command, "--gateway", gateway.as_str()];
    all.extend_from_slice(args);
    run_with_env(&all, &[])
}

/// The repository's examples, which the README's quick start deploys.
fn example(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "..", "examples", name]
        .iter()
        .collect();
    path.to_string_lossy().into_owned()
}

/// A process that completes as soon as it starts: start event, end event.
fn write_straight_through(dir: &Path) -> String {
    let path = dir.join("straight.bpmn");
    std::fs::write(
        &path,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    id="straight-definitions" targetNamespace="http://beeline.test/cli">
  <bpmn:process id="straight" isExecutable="true">
    <bpmn:startEvent id="start"><bpmn:outgoing>f</bpmn:outgoing></bpmn:startEvent>
    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end" />
    <bpmn:endEvent id="end"><bpmn:incoming>f</bpmn:incoming></bpmn:endEvent>
  </bpmn:process>
</bpmn:definitions>"#,
    )
    .expect("write the model");
    path.to_string_lossy().into_owned()
}

#[test]
fn deploy_create_and_publish_answer_a_person_and_a_script() {
    let (dir, broker) = broker();
    let order = example("order.bpmn");
    let decision = example("shipping-cost.dmn");

    // deploy: one line per resource for a person; the deployment as protobuf's JSON for a script.
    let deployed = run(&broker, "deploy", &[&order, &decision]).succeeded();
    let lines: Vec<&str> = deployed.stdout.lines().collect();
    assert!(
        lines[0].starts_with("deployed 3 resources as deployment "),
        "{}",
        deployed.stdout
    );
    assert!(
        lines.iter().any(|l| l.starts_with("  process ")
            && l.contains(" order ")
            && l.contains("version 1")
            && l.ends_with("order.bpmn")),
        "{}",
        deployed.stdout
    );
    assert!(
        lines.iter().any(|l| l.starts_with("  decision ")
            && l.contains(" shipping-cost ")
            && l.ends_with("in shipping")),
        "{}",
        deployed.stdout
    );
    let json = run(&broker, "deploy", &[&order, "--json"])
        .succeeded()
        .json();
    let process = &json["deployments"][0]["process"];
    assert_eq!(process["bpmnProcessId"], "order", "{json}");
    assert_eq!(process["version"], 1, "the same model again: {json}");
    assert_eq!(process["resourceName"], "order.bpmn", "{json}");
    let definition_key = process["processDefinitionKey"]
        .as_str()
        .unwrap_or_else(|| panic!("the key is a string of digits: {json}"));
    assert!(definition_key.parse::<i64>().is_ok(), "{json}");

    // create: by id, and by definition key; the instance's key for a script.
    let created = run(
        &broker,
        "create",
        &["order", "--variables", r#"{"orderId": "C-1"}"#],
    )
    .succeeded();
    assert!(
        created.stdout.starts_with("created instance ")
            && created.stdout.contains(&format!(
                " of order version 1 (process definition {definition_key})"
            )),
        "{}",
        created.stdout
    );
    let json = run(&broker, "create", &[definition_key, "--json"])
        .succeeded()
        .json();
    assert_eq!(json["bpmnProcessId"], "order", "{json}");
    assert_eq!(json["processDefinitionKey"], definition_key, "{json}");
    assert!(json["processInstanceKey"].is_string(), "{json}");

    // create --with-result: the completed instance's variables, from a file with @.
    let straight = write_straight_through(dir.path());
    run(&broker, "deploy", &[&straight]).succeeded();
    let variables = dir.path().join("variables.json");
    std::fs::write(&variables, r#"{"total": 42, "items": ["book"]}"#).expect("write variables");
    let at_file = format!("@{}", variables.display());
    let result = run(
        &broker,
        "create",
        &["straight", "--with-result", "--variables", &at_file],
    )
    .succeeded();
    assert!(
        result
            .stdout
            .contains(" of straight version 1 completed; its variables:\n{\n"),
        "{}",
        result.stdout
    );
    assert!(
        result.stdout.contains("  \"total\": 42"),
        "{}",
        result.stdout
    );
    let json = run(
        &broker,
        "create",
        &[
            "straight",
            "--with-result",
            "--json",
            "--variables",
            &at_file,
        ],
    )
    .succeeded()
    .json();
    let variables: Value = serde_json::from_str(json["variables"].as_str().unwrap_or("null"))
        .unwrap_or_else(|e| panic!("the variables are a JSON document ({e}): {json}"));
    assert_eq!(variables["total"], 42, "{json}");
    assert_eq!(variables["items"][0], "book", "{json}");

    // publish: the message's key.
    let published = run(
        &broker,
        "publish",
        &[
            "payment-received",
            "--correlation-key",
            "C-1",
            "--ttl",
            "1m",
        ],
    )
    .succeeded();
    assert!(
        published.stdout.starts_with(
            "published message payment-received with correlation key 'C-1' as message "
        ),
        "{}",
        published.stdout
    );
    let json = run(
        &broker,
        "publish",
        &[
            "payment-received",
            "--correlation-key",
            "C-2",
            "--variables",
            r#"{"paymentId": "P-2"}"#,
            "--json",
        ],
    )
    .succeeded()
    .json();
    assert!(
        json["key"]
            .as_str()
            .is_some_and(|k| k.parse::<i64>().is_ok()),
        "{json}"
    );
}

#[test]
fn errors_show_the_gateways_code_and_message_and_exit_non_zero() {
    let (dir, broker) = broker();

    // deploy: an invalid model is the gateway's INVALID_ARGUMENT, with its reason.
    let broken = dir.path().join("broken.bpmn");
    std::fs::write(&broken, "<definitions>not a process").expect("write the model");
    let refused = run(&broker, "deploy", &[&broken.to_string_lossy()]).failed_with(1);
    assert!(
        refused.stderr.starts_with("error: INVALID_ARGUMENT: ")
            && refused.stderr.contains("broken.bpmn"),
        "{}",
        refused.stderr
    );
    // A file that cannot be read is the user's mistake: nothing is sent, exit status 2.
    let missing = dir.path().join("missing.bpmn");
    let unread = run(&broker, "deploy", &[&missing.to_string_lossy()]).failed_with(2);
    assert!(
        unread.stderr.starts_with("error: cannot read ") && unread.stderr.contains("missing.bpmn"),
        "{}",
        unread.stderr
    );

    // create: an unknown process is NOT_FOUND, naming it; with --json, as JSON on stderr.
    let not_found = run(&broker, "create", &["no-such-process"]).failed_with(1);
    assert!(
        not_found.stderr.starts_with("error: NOT_FOUND: ")
            && not_found.stderr.contains("'no-such-process'"),
        "{}",
        not_found.stderr
    );
    let json = run(&broker, "create", &["no-such-process", "--json"])
        .failed_with(1)
        .error_json();
    assert_eq!(json["code"], "NOT_FOUND", "{json}");
    assert!(
        json["message"]
            .as_str()
            .is_some_and(|m| m.contains("'no-such-process'")),
        "{json}"
    );
    // Variables that are not a JSON object are the gateway's to refuse.
    let bad_variables = run(&broker, "create", &["order", "--variables", "[1, 2]"]).failed_with(1);
    assert!(
        bad_variables
            .stderr
            .starts_with("error: INVALID_ARGUMENT: "),
        "{}",
        bad_variables.stderr
    );

    // publish: a message id already waiting is ALREADY_EXISTS.
    let args = [
        "paid",
        "--correlation-key",
        "E-1",
        "--message-id",
        "m-1",
        "--ttl",
        "1m",
    ];
    run(&broker, "publish", &args).succeeded();
    let duplicate = run(&broker, "publish", &args).failed_with(1);
    assert!(
        duplicate.stderr.starts_with("error: ALREADY_EXISTS: ")
            && duplicate.stderr.contains("'m-1'"),
        "{}",
        duplicate.stderr
    );

    // status: a gateway nobody listens on is UNAVAILABLE, naming the address.
    let port = common::free_port();
    let address = format!("127.0.0.1:{port}");
    let unreachable = run_with_env(&["status", "--gateway", &address], &[]).failed_with(1);
    assert!(
        unreachable.stderr.starts_with(&format!(
            "error: UNAVAILABLE: cannot connect to the gateway at {address}: "
        )),
        "{}",
        unreachable.stderr
    );
    // A TLS address is refused before anything is sent.
    let tls = run_with_env(&["status", "--gateway", "https://localhost:443"], &[]).failed_with(2);
    assert!(
        tls.stderr.contains("TLS is not supported"),
        "{}",
        tls.stderr
    );
}

#[test]
fn status_shows_a_partition_short_of_disk_as_unhealthy() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A minimum no disk here has: the partition refuses new commands from the start.
    let broker = Broker::start(&dir.path().join("data"), &["--disk-free-min", "100000GiB"]);
    let json = run(&broker, "status", &["--json"]).succeeded().json();
    assert_eq!(
        json["brokers"][0]["partitions"][0]["role"], "LEADER",
        "{json}"
    );
    assert_eq!(
        json["brokers"][0]["partitions"][0]["health"], "UNHEALTHY",
        "{json}"
    );
    let (_, metrics) = common::get(broker.monitoring, "/metrics").expect("metrics answer");
    for line in [
        "beeline_disk_full 1",
        "beeline_partition_healthy{partition=\"1\"} 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing {line} in:\n{metrics}"
        );
    }
}

#[test]
fn status_shows_the_topology_of_the_gateway_named_by_flag_or_environment() {
    let (_dir, broker) = broker();
    let gateway = broker.gateway();
    let status = run(&broker, "status", &[]).succeeded();
    let port = gateway.rsplit(':').next().unwrap_or_default();
    assert_eq!(
        status.stdout,
        format!(
            "Cluster size: 1\nPartitions count: 1\nReplication factor: 1\nGateway version: {v}\n\
             Brokers:\n  Broker 0 - 127.0.0.1:{port}\n    Version: {v}\n\
             \x20   Partition 1 : Leader, Healthy\n",
            v = env!("CARGO_PKG_VERSION")
        )
    );
    let json = run(&broker, "status", &["--json"]).succeeded().json();
    assert_eq!(json["clusterSize"], 1, "{json}");
    assert_eq!(json["brokers"][0]["partitions"][0]["role"], "LEADER");
    assert_eq!(json["brokers"][0]["partitions"][0]["health"], "HEALTHY");

    // Without --gateway: BEELINE_GATEWAY, else Zeebe's ZEEBE_ADDRESS; the flag wins over both.
    let nowhere = format!("127.0.0.1:{}", common::free_port());
    for env in [
        vec![("BEELINE_GATEWAY", gateway.as_str())],
        vec![("ZEEBE_ADDRESS", gateway.as_str())],
        vec![
            ("BEELINE_GATEWAY", gateway.as_str()),
            ("ZEEBE_ADDRESS", nowhere.as_str()),
        ],
    ] {
        let run = run_with_env(&["status", "--json"], &env).succeeded();
        assert_eq!(run.json()["clusterSize"], 1, "{env:?}");
    }
    run_with_env(
        &["status", "--gateway", &gateway],
        &[("BEELINE_GATEWAY", &nowhere), ("ZEEBE_ADDRESS", &nowhere)],
    )
    .succeeded();
}
