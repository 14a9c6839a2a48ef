//! gRPC requests and REST bodies under the fuzzing harness (`beeline-fuzz`), sent to a node of
//! real partitions: every answer must be a status the API defines, never INTERNAL / 500, never
//! a dropped connection, and the node serves on.
//!
//! - `fuzz/seeds/grpc`: `<RPC name>\n<protobuf message>`, one per RPC of
//!   `gateway_protocol.Gateway` (written by `write_the_grpc_seeds`). The message goes out in a
//!   well-formed gRPC frame (malformed frames have their own test); the name picks the path.
//! - `fuzz/seeds/rest`: `<METHOD> <path>\n<content type>\n<body>`, one per command of the REST
//!   API, with the bodies its clients send.
//!
//! Waits a request may ask for (long polls, awaiting a result) are cut to a fraction of a
//! second, so that each input takes little time.

use super::rest::http;
use super::*;
use prost::Message;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Deploys the seeds' models, so that fuzzed commands reach deployed processes.
async fn with_models(node: &Node) {
    let models = beeline_fuzz::inputs(&beeline_fuzz::root().join("seeds/bpmn"));
    let decisions = beeline_fuzz::inputs(&beeline_fuzz::root().join("seeds/dmn"));
    for (path, content) in models.iter().chain(&decisions) {
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let _ = node
            .client
            .clone()
            .deploy_resource(DeployResourceRequest {
                resources: vec![Resource {
                    name,
                    content: content.clone(),
                }],
                ..Default::default()
            })
            .await;
    }
}

/// The message with its waits cut short, where it decodes as the RPC's request.
fn bounded(rpc: &str, message: &[u8]) -> Vec<u8> {
    let short = |timeout: i64| timeout.clamp(1, 100);
    match rpc {
        "ActivateJobs" => match ActivateJobsRequest::decode(message) {
            Ok(mut request) => {
                request.request_timeout = short(request.request_timeout);
                request.encode_to_vec()
            }
            Err(_) => message.to_vec(),
        },
        "CreateProcessInstanceWithResult" => {
            match CreateProcessInstanceWithResultRequest::decode(message) {
                Ok(mut request) => {
                    request.request_timeout = short(request.request_timeout);
                    request.encode_to_vec()
                }
                Err(_) => message.to_vec(),
            }
        }
        _ => message.to_vec(),
    }
}

#[test]
fn grpc_requests() {
    let runtime = runtime();
    let node = runtime.block_on(async {
        let node = Node::start(2).await;
        with_models(&node).await;
        node
    });
    beeline_fuzz::fuzz("grpc", |input| {
        let split = input
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(input.len());
        let rpc = String::from_utf8_lossy(&input[..split]).into_owned();
        // Streams that stay open as long as the client wants are not for a fuzzer; a name no
        // URI can hold, or longer than HTTP/2's header limits, never reaches the gateway.
        if rpc == "StreamActivatedJobs"
            || rpc.len() > 64
            || !rpc.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return;
        }
        let message = bounded(&rpc, input.get(split + 1..).unwrap_or_default());
        let path = format!("/gateway_protocol.Gateway/{rpc}");
        let body = frame(0, message.len() as u32, &message);
        let (status, text) = runtime.block_on(raw_call(node.address, &path, body));
        let code: i32 = status
            .parse()
            .unwrap_or_else(|_| panic!("{rpc}: no grpc-status in the answer ({status:?})"));
        // INTERNAL is what grpc-java (Zeebe's gateway) answers a message it cannot decode;
        // for anything else it is a defect.
        let undecodable = code == Code::Internal as i32 && text.starts_with("failed%20to%20decode");
        assert!(
            (0..=16).contains(&code)
                && code != Code::Unknown as i32
                && (code != Code::Internal as i32 || undecodable),
            "{rpc}: answered {code} ({text})"
        );
    });
    runtime.block_on(node.assert_serving());
}

/// `<METHOD> <path>` with what a URI cannot hold percent-encoded (HTTP itself refuses such a
/// request line before the API sees it).
fn request_line(line: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(line);
    let (method, path) = text.split_once(' ').unwrap_or(("POST", &text));
    let method = if !method.is_empty() && method.bytes().all(|b| b.is_ascii_uppercase()) {
        method.to_owned()
    } else {
        "POST".to_owned()
    };
    let mut encoded = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~?=&%:@!$'()*+,;".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    if !encoded.starts_with('/') {
        encoded.insert(0, '/');
    }
    (method, encoded)
}

/// The body with its waits cut short, where it is a JSON object. The API reads some bodies
/// that are not valid UTF-8 (serde skips the value of a property it does not know without
/// checking its bytes): such a body that waits is sent with the bad bytes replaced, so its
/// wait is cut short too; one that does not wait is sent as it is.
fn bounded_body(path: &str, body: &[u8]) -> Vec<u8> {
    let (mut object, valid) = match serde_json::from_slice(body) {
        Ok(serde_json::Value::Object(object)) => (object, true),
        Ok(_) => return body.to_vec(),
        Err(_) => match serde_json::from_str(&String::from_utf8_lossy(body)) {
            Ok(serde_json::Value::Object(object)) => (object, false),
            _ => return body.to_vec(),
        },
    };
    let waits = path.ends_with("/jobs/activation")
        || object.get("awaitCompletion") == Some(&serde_json::Value::Bool(true));
    if !waits && !valid {
        return body.to_vec();
    }
    if waits {
        let timeout = object
            .get("requestTimeout")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(100);
        object.insert("requestTimeout".into(), timeout.clamp(1, 100).into());
    }
    serde_json::Value::Object(object).to_string().into_bytes()
}

#[test]
fn rest_bodies() {
    let runtime = runtime();
    let node = runtime.block_on(async {
        let node = Node::start(2).await;
        with_models(&node).await;
        node
    });
    beeline_fuzz::fuzz("rest", |input| {
        let mut lines = input.splitn(3, |&b| b == b'\n');
        let (method, path) = request_line(lines.next().unwrap_or_default());
        // HTTP refuses a longer request line (414) before the API sees it.
        if path.len() > 4096 {
            return;
        }
        let content_type: String = String::from_utf8_lossy(lines.next().unwrap_or_default())
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        let body = bounded_body(&path, lines.next().unwrap_or_default());
        let answer = runtime.block_on(http(node.rest, &method, &path, &content_type, &body));
        assert!(
            answer.status != 500 && (200..600).contains(&answer.status),
            "{method} {path}: answered {} ({})",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
        if answer.status >= 400 {
            assert_eq!(
                answer.content_type,
                "application/problem+json",
                "{method} {path}: an error that is not a problem ({}: {})",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            );
        }
    });
    runtime.block_on(node.assert_serving());
}

/// Writes `fuzz/seeds/grpc`: one request per RPC, with the fields its clients fill.
#[test]
#[ignore = "writes the seed corpus: cargo test -p beeline-gateway --test gateway -- --ignored write_the_grpc_seeds"]
fn write_the_grpc_seeds() {
    let model = std::fs::read(beeline_fuzz::root().join("seeds/bpmn/everything.bpmn"))
        .expect("the everything model");
    let decision = std::fs::read(beeline_fuzz::root().join("seeds/dmn/discount.dmn"))
        .expect("the discount decision");
    let variables = r#"{"items":[1,2,3],"region":"eu","amount":150,"vip":false,"orderId":"o-1","owner":"ann","childId":"compat-task"}"#;
    let seeds: Vec<(&str, Vec<u8>)> = vec![
        (
            "DeployResource",
            DeployResourceRequest {
                resources: vec![
                    Resource {
                        name: "everything.bpmn".into(),
                        content: model,
                    },
                    Resource {
                        name: "discount.dmn".into(),
                        content: decision,
                    },
                ],
                tenant_id: "<default>".into(),
            }
            .encode_to_vec(),
        ),
        (
            "CreateProcessInstance",
            CreateProcessInstanceRequest {
                bpmn_process_id: "everything".into(),
                version: -1,
                variables: variables.into(),
                start_instructions: vec![ProcessInstanceCreationStartInstruction {
                    element_id: "task".into(),
                }],
                tenant_id: "<default>".into(),
                operation_reference: Some(7),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "CreateProcessInstanceWithResult",
            CreateProcessInstanceWithResultRequest {
                request: Some(CreateProcessInstanceRequest {
                    bpmn_process_id: "compat-task".into(),
                    version: -1,
                    variables: r#"{"jobType":"x","retries":1}"#.into(),
                    ..Default::default()
                }),
                request_timeout: 100,
                fetch_variables: vec!["x".into()],
            }
            .encode_to_vec(),
        ),
        (
            "CancelProcessInstance",
            CancelProcessInstanceRequest {
                process_instance_key: 2251799813685260,
                operation_reference: Some(1),
            }
            .encode_to_vec(),
        ),
        (
            "PublishMessage",
            PublishMessageRequest {
                name: "order-paid".into(),
                correlation_key: "o-1".into(),
                time_to_live: 60_000,
                message_id: "m-1".into(),
                variables: r#"{"paid":true}"#.into(),
                tenant_id: "<default>".into(),
            }
            .encode_to_vec(),
        ),
        (
            "BroadcastSignal",
            BroadcastSignalRequest {
                signal_name: "stop".into(),
                variables: r#"{"why":"fuzz"}"#.into(),
                tenant_id: "<default>".into(),
            }
            .encode_to_vec(),
        ),
        (
            "ActivateJobs",
            ActivateJobsRequest {
                r#type: "audit".into(),
                worker: "fuzz".into(),
                timeout: 60_000,
                max_jobs_to_activate: 10,
                fetch_variable: vec!["items".into()],
                request_timeout: 50,
                tenant_ids: vec!["<default>".into()],
            }
            .encode_to_vec(),
        ),
        (
            "CompleteJob",
            CompleteJobRequest {
                job_key: 2251799813685300,
                variables: r#"{"result":{"reserved":true}}"#.into(),
                result: None,
            }
            .encode_to_vec(),
        ),
        (
            "FailJob",
            FailJobRequest {
                job_key: 2251799813685300,
                retries: 2,
                error_message: "boom".into(),
                retry_back_off: 1000,
                variables: "{}".into(),
            }
            .encode_to_vec(),
        ),
        (
            "ThrowError",
            ThrowErrorRequest {
                job_key: 2251799813685300,
                error_code: "NO_STOCK".into(),
                error_message: "none left".into(),
                variables: r#"{"a":1}"#.into(),
            }
            .encode_to_vec(),
        ),
        (
            "UpdateJobRetries",
            UpdateJobRetriesRequest {
                job_key: 2251799813685300,
                retries: 5,
                operation_reference: Some(2),
            }
            .encode_to_vec(),
        ),
        (
            "UpdateJobTimeout",
            UpdateJobTimeoutRequest {
                job_key: 2251799813685300,
                timeout: 1000,
                operation_reference: None,
            }
            .encode_to_vec(),
        ),
        (
            "SetVariables",
            SetVariablesRequest {
                element_instance_key: 2251799813685260,
                variables: r#"{"a":1,"b":[true,null]}"#.into(),
                local: true,
                operation_reference: None,
            }
            .encode_to_vec(),
        ),
        (
            "ResolveIncident",
            ResolveIncidentRequest {
                incident_key: 2251799813685270,
                operation_reference: None,
            }
            .encode_to_vec(),
        ),
        (
            "EvaluateDecision",
            EvaluateDecisionRequest {
                decision_id: "compat-discount".into(),
                variables: r#"{"customer":"gold","amount":10}"#.into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        ("Topology", TopologyRequest {}.encode_to_vec()),
        (
            "DeleteResource",
            DeleteResourceRequest {
                resource_key: 2251799813685257,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "ModifyProcessInstance",
            ModifyProcessInstanceRequest {
                process_instance_key: 2251799813685260,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
    ];
    let out = beeline_fuzz::root().join("seeds/grpc");
    std::fs::create_dir_all(&out).expect("creates the seed directory");
    for (rpc, message) in seeds {
        let mut seed = format!("{rpc}\n").into_bytes();
        seed.extend(message);
        std::fs::write(out.join(rpc), seed).expect("writes a seed");
    }
}
