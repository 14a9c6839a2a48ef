//! The REST API (`/v2`) end to end against real partitions: each endpoint's success shape and
//! its errors (problem+json naming what was wrong), and the node serving on after each.

use super::*;
use serde_json::{Value, json};

/// An HTTP answer.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) content_type: String,
    pub(super) body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A problem+json answer with this status and title; its detail.
    pub(super) fn problem(&self, status: u16, title: &str, path: &str) -> String {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(
            self.content_type,
            "application/problem+json",
            "{}",
            self.text()
        );
        let json = self.json();
        assert_eq!(json["title"], title, "{json}");
        assert_eq!(json["status"], status, "{json}");
        assert_eq!(json["type"], "about:blank", "{json}");
        assert_eq!(json["instance"], path, "{json}");
        json["detail"].as_str().expect("a detail").to_owned()
    }
}

/// One HTTP/1.1 request on its own connection.
pub(super) async fn http(
    address: SocketAddr,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> Answer {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connects");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("writes");
    // A server that refuses the request at its head (a body too large) answers and closes
    // without reading the body: what it answered is still there to read.
    let _ = stream.write_all(body).await;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("reads");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let mut content_type = String::new();
    let mut chunked = false;
    for line in lines {
        let (name, value) = line.split_once(':').expect("a header");
        match name.to_ascii_lowercase().as_str() {
            "content-type" => content_type = value.trim().to_owned(),
            "transfer-encoding" => chunked = value.trim().eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    if chunked {
        let mut decoded = Vec::new();
        let mut rest = body.as_slice();
        while let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..end]).unwrap(), 16)
                .expect("a chunk size");
            if size == 0 {
                break;
            }
            decoded.extend_from_slice(&rest[end + 2..end + 2 + size]);
            rest = &rest[end + 2 + size + 2..];
        }
        body = decoded;
    }
    Answer {
        status,
        content_type,
        body,
    }
}

impl Node {
    pub(super) async fn post(&self, path: &str, body: Value) -> Answer {
        self.send("POST", path, &body.to_string()).await
    }

    async fn send(&self, method: &str, path: &str, body: &str) -> Answer {
        http(self.rest, method, path, "application/json", body.as_bytes()).await
    }

    async fn get(&self, path: &str) -> Answer {
        http(self.rest, "GET", path, "application/json", b"").await
    }

    /// Deploys over REST: a multipart body with one `resources` part per file.
    async fn deploy_rest(&self, files: &[(&str, &str)]) -> Answer {
        let boundary = "beeline-boundary-7f3a";
        let mut body = Vec::new();
        for (name, content) in files {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"resources\"; \
                     filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(content.as_bytes());
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        http(
            self.rest,
            "POST",
            "/v2/deployments",
            &format!("multipart/form-data; boundary={boundary}"),
            &body,
        )
        .await
    }

    /// Creates an instance over REST, retrying while the deployment is on its way.
    async fn create_rest(&self, body: Value) -> Value {
        for _ in 0..100 {
            let answer = self.post("/v2/process-instances", body.clone()).await;
            match answer.status {
                200 => return answer.json(),
                404 => tokio::time::sleep(Duration::from_millis(20)).await,
                _ => panic!("creation failed: {}", answer.text()),
            }
        }
        panic!("the deployment never reached every partition");
    }

    async fn activate_rest(&self, job_type: &str, max: i32) -> Vec<Value> {
        let answer = self
            .post(
                "/v2/jobs/activation",
                json!({"type": job_type, "timeout": 60000, "maxJobsToActivate": max,
                       "requestTimeout": 5000, "worker": "rest-test"}),
            )
            .await;
        assert_eq!(answer.status, 200, "{}", answer.text());
        answer.json()["jobs"].as_array().expect("jobs").clone()
    }

    /// The node still answers over REST and gRPC.
    async fn assert_serving_rest(&self) {
        let topology = self.get("/v2/topology").await;
        assert_eq!(topology.status, 200, "{}", topology.text());
        self.assert_serving().await;
    }
}

#[tokio::test]
async fn topology_and_status_answer_in_the_rest_shapes() {
    let node = Node::start(2).await;
    let topology = node.get("/v2/topology").await;
    assert_eq!(topology.status, 200);
    assert_eq!(topology.content_type, "application/json");
    let json = topology.json();
    assert_eq!(json["clusterSize"], 1);
    assert_eq!(json["partitionsCount"], 2);
    assert_eq!(json["replicationFactor"], 1);
    assert_eq!(json["gatewayVersion"], "0.1.0-test");
    let partitions = &json["brokers"][0]["partitions"];
    assert_eq!(
        partitions[1],
        json!({"partitionId": 2, "role": "leader", "health": "healthy"})
    );
    let status = node.get("/v2/status").await;
    assert_eq!(status.status, 204);
    assert!(status.body.is_empty());
}

#[tokio::test]
async fn a_process_is_deployed_started_worked_and_completed_over_rest() {
    let node = Node::start(2).await;
    let deployed = node
        .deploy_rest(&[("order.bpmn", &order_process()), ("dishes.dmn", DISHES)])
        .await;
    assert_eq!(deployed.status, 200, "{}", deployed.text());
    let deployed = deployed.json();
    let process = &deployed["deployments"][0]["processDefinition"];
    assert_eq!(process["processDefinitionId"], "order");
    assert_eq!(process["processDefinitionVersion"], 1);
    assert_eq!(process["resourceName"], "order.bpmn");
    let process_key = process["processDefinitionKey"]
        .as_str()
        .expect("a string key");
    assert!(deployed["deploymentKey"].as_str().is_some());
    assert_eq!(
        deployed["deployments"][1]["decisionDefinition"]["decisionDefinitionId"],
        "dish"
    );

    // By id, variables passing through exactly; by key.
    let created = node
        .create_rest(json!({"processDefinitionId": "order", "variables": {"n": 1}}))
        .await;
    assert_eq!(created["processDefinitionKey"], process_key);
    assert_eq!(created["processDefinitionVersion"], 1);
    assert_eq!(created["tenantId"], "<default>");
    assert_eq!(created["variables"], json!({}));
    let by_key = node
        .create_rest(json!({"processDefinitionKey": process_key}))
        .await;
    assert_ne!(by_key["processInstanceKey"], created["processInstanceKey"]);

    let jobs = node.activate_rest("payment", 5).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    let job = jobs
        .iter()
        .find(|j| j["processInstanceKey"] == created["processInstanceKey"])
        .expect("the first instance's job");
    assert_eq!(job["type"], "payment");
    assert_eq!(job["worker"], "rest-test");
    assert_eq!(job["kind"], "BPMN_ELEMENT");
    assert_eq!(job["variables"], json!({"n": 1}));
    assert!(job["deadline"].as_i64().is_some());
    for job in &jobs {
        let key = job["jobKey"].as_str().expect("a string key");
        let completed = node
            .post(
                &format!("/v2/jobs/{key}/completion"),
                json!({"variables": {"paid": true}}),
            )
            .await;
        assert_eq!(completed.status, 204, "{}", completed.text());
    }
    // Completing again: the job is gone.
    let key = jobs[0]["jobKey"].as_str().unwrap();
    let path = format!("/v2/jobs/{key}/completion");
    let again = node.send("POST", &path, "").await;
    let detail = again.problem(404, "NOT_FOUND", &path);
    assert!(
        detail.starts_with("Command 'COMPLETE' rejected with code 'NOT_FOUND'"),
        "{detail}"
    );
}

#[tokio::test]
async fn await_completion_answers_with_the_result_or_504() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    node.create("order", "{}").await;
    let rest = node.rest;
    let waiting = tokio::spawn(async move {
        http(
            rest,
            "POST",
            "/v2/process-instances",
            "application/json",
            json!({"processDefinitionId": "order", "awaitCompletion": true,
                   "variables": {"id": 0.12496785020850265, "big": 12345678901234567890u64},
                   "fetchVariables": ["id", "big", "paid"], "requestTimeout": 10000})
            .to_string()
            .as_bytes(),
        )
        .await
    });
    let mut jobs = Vec::new();
    while jobs.len() < 2 {
        jobs.extend(node.activate_rest("payment", 2).await);
    }
    for job in &jobs {
        let key = job["jobKey"].as_str().unwrap();
        let done = node
            .post(
                &format!("/v2/jobs/{key}/completion"),
                json!({"variables": {"paid": true}}),
            )
            .await;
        assert_eq!(done.status, 204, "{}", done.text());
    }
    let answer = waiting.await.expect("the request ends");
    assert_eq!(answer.status, 200, "{}", answer.text());
    let text = answer.text();
    assert!(text.contains(r#""big":12345678901234567890"#), "{text}");
    assert_eq!(answer.json()["variables"]["paid"], true);

    let timed_out = node
        .post(
            "/v2/process-instances",
            json!({"processDefinitionId": "order", "awaitCompletion": true, "requestTimeout": 200}),
        )
        .await;
    let detail = timed_out.problem(504, "DEADLINE_EXCEEDED", "/v2/process-instances");
    assert!(
        detail.contains("Time out between gateway and broker"),
        "{detail}"
    );
}

#[tokio::test]
async fn failing_updating_throwing_and_resolving_over_rest() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    let created = node.create("order", "{}").await;
    let job = node.activate_rest("payment", 1).await.remove(0);
    let key = job["jobKey"].as_str().unwrap().to_owned();

    let both = node
        .send(
            "PATCH",
            &format!("/v2/jobs/{key}"),
            &json!({"changeset": {"retries": 5, "timeout": 120000}, "operationReference": 3})
                .to_string(),
        )
        .await;
    assert_eq!(both.status, 204, "{}", both.text());
    let path = format!("/v2/jobs/{key}");
    let nothing = node.send("PATCH", &path, r#"{"changeset":{}}"#).await;
    assert_eq!(
        nothing.problem(400, "INVALID_ARGUMENT", &path),
        "At least one of [retries, timeout] is required"
    );

    let failed = node
        .post(
            &format!("/v2/jobs/{key}/failure"),
            json!({"retries": 0, "errorMessage": "the payment service is down"}),
        )
        .await;
    assert_eq!(failed.status, 204, "{}", failed.text());
    // Failed again: the job waits for an incident's resolution, not for a worker.
    let path = format!("/v2/jobs/{key}/failure");
    let again = node.post(&path, json!({})).await;
    let detail = again.problem(409, "INVALID_STATE", &path);
    assert!(detail.contains("Command 'FAIL' rejected"), "{detail}");

    let retries = node
        .send(
            "PATCH",
            &format!("/v2/jobs/{key}"),
            r#"{"changeset":{"retries":2}}"#,
        )
        .await;
    assert_eq!(retries.status, 204, "{}", retries.text());
    let incident = node
        .records(1)
        .await
        .into_iter()
        .find(|r| r.intent == IncidentIntent::Created.into())
        .expect("an incident for the job without retries");
    let path = format!("/v2/incidents/{}/resolution", incident.key);
    assert_eq!(node.send("POST", &path, "").await.status, 204);
    let resolved = node.send("POST", &path, "").await;
    resolved.problem(404, "NOT_FOUND", &path);

    let job = node.activate_rest("payment", 1).await.remove(0);
    assert_eq!(job["retries"], 2);
    let key = job["jobKey"].as_str().unwrap();
    let path = format!("/v2/jobs/{key}/error");
    let no_code = node.post(&path, json!({"errorMessage": "x"})).await;
    assert_eq!(
        no_code.problem(400, "INVALID_ARGUMENT", &path),
        "No errorCode provided"
    );
    let thrown = node
        .post(
            &path,
            json!({"errorCode": "NOT_PAID", "errorMessage": "declined"}),
        )
        .await;
    assert_eq!(thrown.status, 204, "{}", thrown.text());

    // Variables on the instance, then cancel it.
    let instance = created.process_instance_key;
    let path = format!("/v2/element-instances/{instance}/variables");
    let set = node
        .send(
            "PUT",
            &path,
            r#"{"variables":{"note":"hello"},"local":true}"#,
        )
        .await;
    assert_eq!(set.status, 204, "{}", set.text());
    let no_variables = node.send("PUT", &path, "{}").await;
    assert_eq!(
        no_variables.problem(400, "INVALID_ARGUMENT", &path),
        "No variables provided"
    );
    let array = node.send("PUT", &path, r#"{"variables":[1]}"#).await;
    assert!(
        array
            .problem(400, "INVALID_ARGUMENT", &path)
            .contains("'ARRAY'")
    );
    let path = format!("/v2/process-instances/{instance}/cancellation");
    assert_eq!(node.send("POST", &path, "").await.status, 204);
    node.send("POST", &path, "")
        .await
        .problem(404, "NOT_FOUND", &path);
}

#[tokio::test]
async fn messages_signals_and_decisions_over_rest() {
    let node = Node::start(2).await;
    let published = node
        .post(
            "/v2/messages/publication",
            json!({"name": "paid", "correlationKey": "order-1", "timeToLive": 60000,
                   "messageId": "m-1", "variables": {"amount": 5}}),
        )
        .await;
    assert_eq!(published.status, 200, "{}", published.text());
    let published = published.json();
    assert_eq!(published["tenantId"], "<default>");
    let message_key: i64 = published["messageKey"].as_str().unwrap().parse().unwrap();
    let partition = message_partition("order-1", 2);
    assert_eq!(key::partition_of(message_key), Some(partition));
    let duplicate = node
        .post(
            "/v2/messages/publication",
            json!({"name": "paid", "correlationKey": "order-1", "timeToLive": 60000,
                   "messageId": "m-1"}),
        )
        .await;
    duplicate.problem(409, "ALREADY_EXISTS", "/v2/messages/publication");

    let signal = node
        .post("/v2/signals/broadcast", json!({"signalName": "alarm"}))
        .await;
    assert_eq!(signal.status, 200, "{}", signal.text());
    assert!(signal.json()["signalKey"].as_str().is_some());

    let deployed = node.deploy_rest(&[("dishes.dmn", DISHES)]).await;
    assert_eq!(deployed.status, 200, "{}", deployed.text());
    let mut evaluated = None;
    for _ in 0..100 {
        let answer = node
            .post(
                "/v2/decision-definitions/evaluation",
                json!({"decisionDefinitionId": "dish", "variables": {"season": "Winter"}}),
            )
            .await;
        if answer.status == 200 {
            evaluated = Some(answer.json());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let evaluated = evaluated.expect("the decision evaluates");
    assert_eq!(evaluated["output"], r#""Soup""#);
    assert_eq!(evaluated["decisionDefinitionId"], "dish");
    assert_eq!(evaluated["failedDecisionDefinitionId"], "");
    assert_eq!(
        evaluated["evaluatedDecisions"][0]["matchedRules"][0]["ruleId"],
        "any_fall"
    );
    let missing = node
        .post(
            "/v2/decision-definitions/evaluation",
            json!({"decisionDefinitionId": "nope"}),
        )
        .await;
    missing.problem(404, "NOT_FOUND", "/v2/decision-definitions/evaluation");
}

#[tokio::test]
async fn bad_requests_are_problems_naming_what_is_wrong_and_the_node_serves_on() {
    let node = Node::start(1).await;
    let activation = "/v2/jobs/activation";
    for (body, expected) in [
        ("{not json", "The request body is not valid JSON"),
        ("[1,2]", "The request body must be a JSON object"),
        (
            r#"{"type":"a","timeout":"soon","maxJobsToActivate":1}"#,
            "Request property [timeout] cannot be parsed: invalid value: string \"soon\"",
        ),
        (
            r#"{"type":"a","timeout":true,"maxJobsToActivate":1}"#,
            "Request property [timeout] cannot be parsed: invalid type: boolean `true`",
        ),
        (r#"{"timeout":1,"maxJobsToActivate":1}"#, "No type provided"),
        (
            r#"{"type":"a","timeout":1,"maxJobsToActivate":0}"#,
            "The value for maxJobsToActivate is '0' but must be greater than 0",
        ),
        (
            r#"{"type":"a","timeout":1,"maxJobsToActivate":1,"tenantIds":["acme"]}"#,
            "Expected to handle request ActivateJobs with tenant identifier 'acme', but multi-tenancy is disabled",
        ),
    ] {
        let answer = node.send("POST", activation, body).await;
        let detail = answer.problem(400, "INVALID_ARGUMENT", activation);
        assert!(detail.starts_with(expected), "{body}: {detail}");
    }
    let path = "/v2/jobs/12ab/completion";
    let detail = node
        .send("POST", path, "{}")
        .await
        .problem(400, "INVALID_ARGUMENT", path);
    assert_eq!(
        detail,
        "The provided jobKey '12ab' is not a valid key. Expected a numeric value."
    );
    // Found by fuzzing: a key that does not percent-decode to UTF-8 was axum's plain-text 400.
    let path = "/v2/jobs/225179%9813685300";
    let detail = node
        .send("PATCH", path, r#"{"changeset":{"retries":1}}"#)
        .await
        .problem(400, "INVALID_ARGUMENT", path);
    assert!(detail.contains("Invalid UTF-8"), "{detail}");
    // A key of a partition this cluster does not have.
    let path = format!("/v2/jobs/{}/completion", key::encode(5, 1));
    node.send("POST", &path, "{}")
        .await
        .problem(404, "NOT_FOUND", &path);
    let path = "/v2/process-instances";
    let detail = node
        .post(
            path,
            json!({"processDefinitionId": "order", "variables": "x"}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT", path);
    assert!(detail.contains("'STRING'"), "{detail}");
    let detail = node
        .post(path, json!({"processDefinitionId": "nope"}))
        .await
        .problem(404, "NOT_FOUND", path);
    assert!(detail.contains("nope"), "{detail}");

    // A body over the maximum message size (4 MiB here).
    let large = format!(
        r#"{{"name":"m","variables":{{"x":"{}"}}}}"#,
        "y".repeat(5 << 20)
    );
    let path = "/v2/messages/publication";
    let detail = node
        .send("POST", path, &large)
        .await
        .problem(413, "PAYLOAD_TOO_LARGE", path);
    assert!(detail.contains("maximum message size"), "{detail}");

    // Operations of the API not served yet, paths outside it, methods a path does not take.
    let path = "/v2/batch-operations/search";
    let detail = node
        .post(path, json!({}))
        .await
        .problem(501, "UNIMPLEMENTED", path);
    assert!(detail.contains("searchBatchOperations"), "{detail}");
    // A search of the read side on a node without secondary storage says which setting.
    let path = "/v2/process-instances/search";
    let detail = node
        .post(path, json!({}))
        .await
        .problem(503, "UNAVAILABLE", path);
    assert!(detail.contains("--secondary-storage"), "{detail}");
    let path = "/v2/user-tasks/2251799813685249/form";
    node.get(path).await.problem(503, "UNAVAILABLE", path);
    node.get("/v3/topology")
        .await
        .problem(404, "NOT_FOUND", "/v3/topology");
    node.send("DELETE", "/v2/topology", "").await.problem(
        405,
        "METHOD_NOT_ALLOWED",
        "/v2/topology",
    );
    node.assert_serving_rest().await;

    let mut out = String::new();
    node.metrics.render(&mut out);
    assert!(
        out.lines().any(|l| l
            == "beeline_gateway_requests_total{api=\"rest\",rpc=\"ActivateJobs\",code=\"400\"} 7"),
        "{out}"
    );
}

#[tokio::test]
async fn a_long_poll_over_rest_wakes_when_a_job_is_created() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    let rest = node.rest;
    let started = std::time::Instant::now();
    let poll = tokio::spawn(async move {
        http(
            rest,
            "POST",
            "/v2/jobs/activation",
            "application/json",
            br#"{"type":"payment","timeout":60000,"maxJobsToActivate":3,"requestTimeout":20000}"#,
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!poll.is_finished(), "the poll waits for a job");
    node.create("order", r#"{"x":1}"#).await;
    let answer = poll.await.expect("the poll ends");
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["jobs"].as_array().unwrap().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(10));
    // Nothing left: a poll that may not wait answers at once, empty.
    let empty = node
        .post(
            "/v2/jobs/activation",
            json!({"type": "payment", "timeout": 1000, "maxJobsToActivate": 1, "requestTimeout": -1}),
        )
        .await;
    assert_eq!(empty.json(), json!({"jobs": []}));
}

#[tokio::test]
async fn a_correlated_message_names_the_instance_it_reached() {
    let node = Node::start(2).await;
    let waiting = ProcessBuilder::new("order")
        .message("payment", Some("=orderId"))
        .start_event("s")
        .catch_event(
            "paid",
            &beeline_stream::testkit::bpmn::message_ref("payment"),
        )
        .end_event("e")
        .build();
    node.deploy("waiting.bpmn", &waiting).await;
    let created = node.create("order", r#"{"orderId": "o-1"}"#).await;
    // The subscription opens on the message's partition a moment after the instance starts.
    let mut answer = None;
    for _ in 0..100 {
        let correlated = node
            .post(
                "/v2/messages/correlation",
                json!({"name": "payment", "correlationKey": "o-1", "variables": {"n": 1}}),
            )
            .await;
        if correlated.status != 404 {
            answer = Some(correlated);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answer = answer.expect("the message correlates once the subscription is open");
    assert_eq!(answer.status, 200, "{}", answer.text());
    let json = answer.json();
    assert_eq!(
        json["processInstanceKey"],
        created.process_instance_key.to_string()
    );
    assert_eq!(json["tenantId"], "<default>");
    assert!(json["messageKey"].as_str().is_some());

    let path = "/v2/messages/correlation";
    let detail = node
        .post(path, json!({"name": "payment", "correlationKey": "nobody"}))
        .await
        .problem(404, "NOT_FOUND", path);
    assert!(
        detail.contains("Expected to find subscription for message with name 'payment'"),
        "{detail}"
    );
    node.post(path, json!({"correlationKey": "x"}))
        .await
        .problem(400, "INVALID_ARGUMENT", path);
}

#[tokio::test]
async fn a_pinned_clock_fires_timers_and_a_reset_returns_to_the_system_clock() {
    let node = Node::start(2).await;
    let timed = ProcessBuilder::new("timed")
        .start_event("s")
        .catch_event(
            "wait",
            &beeline_stream::testkit::bpmn::timer("timeDuration", "PT1H"),
        )
        .end_event("e")
        .build();
    node.deploy("timed.bpmn", &timed).await;
    let created = node.create("timed", "{}").await;
    let partition = key::partition_of(created.process_instance_key).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let pinned = node
        .send(
            "PUT",
            "/v2/clock",
            &json!({"timestamp": now + 2 * 3_600_000}).to_string(),
        )
        .await;
    assert_eq!(pinned.status, 204, "{}", pinned.text());
    let mut fired = false;
    for _ in 0..250 {
        fired = node
            .records(partition)
            .await
            .iter()
            .any(|r| r.intent == beeline_protocol::intent::TimerIntent::Triggered.into());
        if fired {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(fired, "the timer fires at the pinned time");
    let reset = node.send("POST", "/v2/clock/reset", "").await;
    assert_eq!(reset.status, 204, "{}", reset.text());
    let path = "/v2/clock";
    let detail = node
        .send("PUT", path, "{}")
        .await
        .problem(400, "INVALID_ARGUMENT", path);
    assert_eq!(detail, "No timestamp provided");
}

#[tokio::test]
async fn a_user_task_is_assigned_updated_and_completed_over_rest() {
    let node = Node::start(1).await;
    let process = ProcessBuilder::new("approval")
        .start_event("start")
        .user_task(
            "review",
            true,
            r#"<zeebe:assignmentDefinition candidateGroups="sales"/>"#,
        )
        .end_event("end")
        .build();
    let deployed = node.deploy_rest(&[("approval.bpmn", &process)]).await;
    assert_eq!(deployed.status, 200, "{}", deployed.text());
    let created = node
        .create_rest(json!({"processDefinitionId": "approval"}))
        .await;
    let instance: i64 = created["processInstanceKey"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // The key of the task, as a task list would find it through the read side.
    let task = node
        .records(1)
        .await
        .into_iter()
        .find(|r| r.intent == beeline_protocol::intent::UserTaskIntent::Created.into())
        .expect("a user task")
        .key;
    let path = |suffix: &str| format!("/v2/user-tasks/{task}{suffix}");

    let assigned = node
        .post(&path("/assignment"), json!({"assignee": "ann"}))
        .await;
    assert_eq!(assigned.status, 204, "{}", assigned.text());
    // Not taken from ann without allowOverride.
    let claim = node
        .post(
            &path("/assignment"),
            json!({"assignee": "bo", "allowOverride": false}),
        )
        .await;
    let detail = claim.problem(409, "INVALID_STATE", &path("/assignment"));
    assert!(detail.contains("it has already been assigned"), "{detail}");
    let missing = node.post(&path("/assignment"), json!({})).await;
    missing.problem(400, "INVALID_ARGUMENT", &path("/assignment"));
    let unassigned = node.send("DELETE", &path("/assignee"), "").await;
    assert_eq!(unassigned.status, 204, "{}", unassigned.text());

    let updated = node
        .send(
            "PATCH",
            &path(""),
            &json!({"changeset": {"candidateGroups": ["ops"], "priority": 80}}).to_string(),
        )
        .await;
    assert_eq!(updated.status, 204, "{}", updated.text());
    let empty = node.send("PATCH", &path(""), "{}").await;
    empty.problem(400, "INVALID_ARGUMENT", &path(""));

    let completed = node
        .post(
            &path("/completion"),
            json!({"variables": {"approved": true}}),
        )
        .await;
    assert_eq!(completed.status, 204, "{}", completed.text());
    let again = node.post(&path("/completion"), json!({})).await;
    again.problem(404, "NOT_FOUND", &path("/completion"));
    let unknown = "/v2/user-tasks/x/completion";
    node.post(unknown, json!({}))
        .await
        .problem(400, "INVALID_ARGUMENT", unknown);

    let records = node.records(1).await;
    let events: Vec<String> = records
        .iter()
        .filter(|r| r.is_event() && r.value_type() == beeline_protocol::ValueType::UserTask)
        .map(|r| r.intent.name().to_string())
        .collect();
    assert_eq!(
        events,
        [
            "CREATING",
            "CREATED",
            "ASSIGNING",
            "ASSIGNED",
            "ASSIGNING",
            "ASSIGNED",
            "UPDATING",
            "UPDATED",
            "COMPLETING",
            "COMPLETED"
        ]
    );
    assert!(
        records.iter().any(
            |r| r.key == instance && r.intent == ProcessInstanceIntent::ElementCompleted.into()
        ),
        "the instance completed"
    );
    // Reading tasks is the read side's: this node has no secondary storage.
    let get = node.get(&path("")).await;
    let detail = get.problem(503, "UNAVAILABLE", &path(""));
    assert!(detail.contains("--secondary-storage"), "{detail}");
    node.assert_serving_rest().await;
}

#[tokio::test]
async fn a_user_task_listener_is_worked_on_over_rest_and_the_completion_waits_for_it() {
    let node = Node::start(1).await;
    let process = ProcessBuilder::new("checked")
        .start_event("start")
        .user_task(
            "review",
            true,
            r#"<zeebe:taskListeners><zeebe:taskListener eventType="completing" type="check"/></zeebe:taskListeners>"#,
        )
        .end_event("end")
        .build();
    let deployed = node.deploy_rest(&[("checked.bpmn", &process)]).await;
    assert_eq!(deployed.status, 200, "{}", deployed.text());
    node.create_rest(json!({"processDefinitionId": "checked"}))
        .await;
    let task = node
        .records(1)
        .await
        .into_iter()
        .find(|r| r.intent == beeline_protocol::intent::UserTaskIntent::Created.into())
        .expect("a user task")
        .key;
    let path = format!("/v2/user-tasks/{task}/completion");
    // The listener's job comes with the task; its completion answers the waiting request.
    let node = &node;
    let work = |result: Value| async move {
        let jobs = node.activate_rest("check", 1).await;
        let job = jobs.first().expect("the listener's job");
        assert_eq!(job["kind"], "TASK_LISTENER");
        assert_eq!(job["listenerEventType"], "COMPLETING");
        assert_eq!(job["userTask"]["userTaskKey"], task.to_string());
        assert_eq!(job["userTask"]["action"], "complete");
        assert_eq!(job["userTask"]["priority"], 50);
        let key = job["jobKey"].as_str().unwrap().to_owned();
        let done = node
            .post(
                &format!("/v2/jobs/{key}/completion"),
                json!({"result": result}),
            )
            .await;
        assert_eq!(done.status, 204, "{}", done.text());
    };
    let (denied, ()) = tokio::join!(
        node.post(&path, json!({})),
        work(json!({"denied": true, "deniedReason": "not yet"}))
    );
    let detail = denied.problem(409, "INVALID_STATE", &path);
    assert_eq!(
        detail,
        format!(
            "Command 'COMPLETE' rejected with code 'INVALID_STATE': Completion of the User Task with key '{task}' was denied by Task Listener. Reason to deny: 'not yet'"
        )
    );
    let (completed, ()) = tokio::join!(
        node.post(&path, json!({})),
        work(json!({"corrections": {"priority": 7, "candidateUsers": ["bo"]}}))
    );
    assert_eq!(completed.status, 204, "{}", completed.text());
    let records = node.records(1).await;
    let done = records
        .iter()
        .find(|r| r.intent == beeline_protocol::intent::UserTaskIntent::Completed.into())
        .expect("the task completed");
    let done = done
        .value_as::<beeline_protocol::value::UserTaskRecord>()
        .unwrap();
    assert_eq!(done.priority, 7);
    assert_eq!(done.candidate_users_list, vec!["bo"]);
    assert_eq!(
        done.changed_attributes,
        vec!["candidateUsersList", "priority"]
    );
    // An ad-hoc sub-process's result is refused by name.
    let adhoc = "/v2/jobs/1/completion";
    let detail = node
        .post(adhoc, json!({"result": {"type": "adHocSubProcess"}}))
        .await
        .problem(501, "UNIMPLEMENTED", adhoc);
    assert!(detail.contains("ad-hoc"), "{detail}");
    node.assert_serving_rest().await;
}

/// What `@camunda8/orchestration-cluster-api` 8.8 sends with its request validation on: every
/// int64 as a string of digits. Camunda's REST API (Jackson) reads those as numbers; so does
/// Beeline, and a string that is no integer is refused naming the property.
#[tokio::test]
async fn integers_sent_as_strings_of_digits_are_read_as_numbers() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    let created = node
        .create_rest(
            json!({"processDefinitionId": "order", "processDefinitionVersion": "1",
                             "operationReference": "7"}),
        )
        .await;
    let activated = node
        .post(
            "/v2/jobs/activation",
            json!({"type": "payment", "timeout": "60000", "maxJobsToActivate": 1,
                   "requestTimeout": "5000", "worker": "strings"}),
        )
        .await;
    assert_eq!(activated.status, 200, "{}", activated.text());
    let job = activated.json()["jobs"][0].clone();
    assert_eq!(job["processInstanceKey"], created["processInstanceKey"]);
    let key = job["jobKey"].as_str().unwrap().to_owned();
    let updated = node
        .send(
            "PATCH",
            &format!("/v2/jobs/{key}"),
            &json!({"changeset": {"retries": 5, "timeout": "600000"}}).to_string(),
        )
        .await;
    assert_eq!(updated.status, 204, "{}", updated.text());
    let failed = node
        .post(
            &format!("/v2/jobs/{key}/failure"),
            json!({"retries": 4, "retryBackOff": "0"}),
        )
        .await;
    assert_eq!(failed.status, 204, "{}", failed.text());
    let published = node
        .post(
            "/v2/messages/publication",
            json!({"name": "m", "correlationKey": "k", "timeToLive": "60000"}),
        )
        .await;
    assert_eq!(published.status, 200, "{}", published.text());
    let pinned = node
        .send("PUT", "/v2/clock", r#"{"timestamp":"1700000000000"}"#)
        .await;
    assert_eq!(pinned.status, 204, "{}", pinned.text());
    let reset = node.send("POST", "/v2/clock/reset", "").await;
    assert_eq!(reset.status, 204, "{}", reset.text());

    let path = "/v2/jobs/activation";
    let detail = node
        .post(
            path,
            json!({"type": "payment", "timeout": "a minute", "maxJobsToActivate": 1}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT", path);
    assert_eq!(
        detail,
        "Request property [timeout] cannot be parsed: invalid value: string \"a minute\", \
         expected an integer of at most 64 bits (a number, or a string of digits)"
    );
    node.assert_serving_rest().await;
}

#[tokio::test]
async fn an_instance_is_modified_over_rest() {
    let node = Node::start(1).await;
    let process = ProcessBuilder::new("two")
        .start_event("start")
        .service_task("first", "first")
        .service_task("second", "second")
        .end_event("end")
        .build();
    let deployed = node.deploy_rest(&[("two.bpmn", &process)]).await;
    assert_eq!(deployed.status, 200, "{}", deployed.text());
    let created = node
        .create_rest(json!({"processDefinitionId": "two"}))
        .await;
    let instance = created["processInstanceKey"].as_str().unwrap().to_owned();
    let first = node
        .records(1)
        .await
        .into_iter()
        .find(|r| {
            r.intent == beeline_protocol::intent::ProcessInstanceIntent::ElementActivated.into()
                && r.value_as::<beeline_protocol::value::ProcessInstanceRecord>()
                    .is_some_and(|v| v.element_id == "first")
        })
        .expect("first activated")
        .key;
    let path = format!("/v2/process-instances/{instance}/modification");
    let detail = node
        .post(
            &path,
            json!({"activateInstructions": [{"elementId": "start"}]}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT", &path);
    assert!(
        detail.contains("The activation of elements with type 'START_EVENT' is not supported"),
        "{detail}"
    );
    let missing = "/v2/process-instances/2251799813685999/modification";
    node.post(missing, json!({}))
        .await
        .problem(404, "NOT_FOUND", missing);
    let modified = node
        .post(
            &path,
            json!({
                "activateInstructions": [{
                    "elementId": "second",
                    "ancestorElementInstanceKey": instance,
                    "variableInstructions": [{"variables": {"moved": 1}, "scopeId": "second"}]
                }],
                "terminateInstructions": [{"elementInstanceKey": first.to_string()}],
                "operationReference": 5
            }),
        )
        .await;
    assert_eq!(modified.status, 204, "{}", modified.text());
    let jobs = node.activate_rest("second", 1).await;
    assert_eq!(jobs[0]["variables"], json!({"moved": 1}));
    assert!(node.activate_rest("first", 1).await.is_empty());
    node.assert_serving_rest().await;
}

#[tokio::test]
async fn a_resource_is_deleted_over_rest() {
    let node = Node::start(1).await;
    let process = ProcessBuilder::new("gone")
        .start_event("start")
        .end_event("end")
        .build();
    let deployed = node.deploy_rest(&[("gone.bpmn", &process)]).await;
    assert_eq!(deployed.status, 200, "{}", deployed.text());
    let key = deployed.json()["deployments"][0]["processDefinition"]["processDefinitionKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/v2/resources/{key}/deletion");
    let deleted = node.post(&path, json!({"operationReference": 1})).await;
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    assert_eq!(deleted.json(), json!({"resourceKey": key}));
    node.post(&path, json!({}))
        .await
        .problem(404, "NOT_FOUND", &path);
    let detail = node
        .post(&path, json!({"deleteHistory": true}))
        .await
        .problem(501, "UNIMPLEMENTED", &path);
    assert!(detail.contains("deleteHistory"), "{detail}");
    node.assert_serving_rest().await;
}
