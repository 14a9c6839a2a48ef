//! Multi-tenancy over both APIs: off, only `<default>` is accepted; on, every request names a
//! tenant the caller is assigned to (else INVALID_ARGUMENT, or PERMISSION_DENIED / 403), and
//! two tenants deploying the same process id never see each other's instances, jobs or
//! messages.

use std::collections::HashMap;

use base64::Engine as _;
use beeline_gateway::{AuthConfig, JwksSource, OidcConfig, TenancyConfig};
use jsonwebtoken::{Algorithm, EncodingKey, Header};

use super::*;

const A: &str = "tenant-a";
const B: &str = "tenant-b";

fn basic(user: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:pw"));
    format!("Basic {encoded}")
}

/// alice acts for tenant A, bob for B, admin for both (and the default tenant).
async fn two_tenants() -> Node {
    let users = ["alice", "bob", "admin"]
        .iter()
        .map(|u| (u.to_string(), "pw".to_string()))
        .collect();
    let config = GatewayConfig {
        auth: AuthConfig::Basic(users),
        tenancy: TenancyConfig {
            enabled: true,
            assignments: TenancyConfig::parse_assignments(
                "alice=tenant-a,bob=tenant-b,admin=tenant-a+tenant-b+<default>",
            )
            .expect("assignments"),
        },
        ..GatewayConfig::default()
    };
    Node::start_with(2, config, |_| {}).await
}

fn as_user<T>(user: &str, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        basic(user).parse().expect("a metadata value"),
    );
    request
}

fn waiting_process() -> String {
    ProcessBuilder::new("order")
        .message("payment", Some("=orderId"))
        .start_event("s")
        .service_task("pack", "pack")
        .catch_event(
            "paid",
            &beeline_stream::testkit::bpmn::message_ref("payment"),
        )
        .end_event("e")
        .build()
}

async fn deploy_as(
    node: &Node,
    user: &str,
    tenant: &str,
) -> Result<DeployResourceResponse, tonic::Status> {
    node.client()
        .deploy_resource(as_user(
            user,
            DeployResourceRequest {
                resources: vec![resource("order.bpmn", &waiting_process())],
                tenant_id: tenant.into(),
            },
        ))
        .await
        .map(tonic::Response::into_inner)
}

async fn create_as(
    node: &Node,
    user: &str,
    tenant: &str,
    variables: &str,
) -> Result<CreateProcessInstanceResponse, tonic::Status> {
    let mut request = create("order", variables);
    request.tenant_id = tenant.into();
    for _ in 0..100 {
        match node
            .client()
            .create_process_instance(as_user(user, request.clone()))
            .await
        {
            // The deployment may still be on its way to the other partition.
            Err(status) if status.code() == Code::NotFound => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answer => return answer.map(tonic::Response::into_inner),
        }
    }
    panic!("the deployment never reached every partition");
}

async fn activate_as(
    node: &Node,
    user: &str,
    tenants: &[&str],
) -> Result<Vec<ActivatedJob>, tonic::Status> {
    let mut request = activate("pack", 10, 200);
    request.tenant_ids = tenants.iter().map(|t| t.to_string()).collect();
    let mut stream = node
        .client()
        .activate_jobs(as_user(user, request))
        .await?
        .into_inner();
    let mut jobs = Vec::new();
    while let Some(response) = stream.message().await? {
        jobs.extend(response.jobs);
    }
    Ok(jobs)
}

/// A REST call with the user's basic credentials: (status, JSON body).
async fn rest_as(
    node: &Node,
    user: &str,
    path: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    let mut stream = tokio::net::TcpStream::connect(node.rest)
        .await
        .expect("connects");
    let body = body.to_string();
    stream
        .write_all(
            format!(
                "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                basic(user),
                body.len()
            )
            .as_bytes(),
        )
        .await
        .expect("writes");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("reads");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer[9..12].parse().expect("a status");
    let json = answer
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or(serde_json::Value::Null);
    (status, json)
}

#[tokio::test]
async fn off_only_the_default_tenant_is_accepted_over_both_apis() {
    let node = Node::start(1).await;
    let status = node
        .client()
        .deploy_resource(DeployResourceRequest {
            resources: vec![resource("order.bpmn", &waiting_process())],
            tenant_id: A.into(),
        })
        .await
        .expect_err("another tenant");
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        status.message(),
        "Expected to handle request DeployResource with tenant identifier 'tenant-a', but multi-tenancy is disabled"
    );
    node.deploy("order.bpmn", &waiting_process()).await;
    let mut request = create("order", r#"{"orderId": "o-1"}"#);
    request.tenant_id = "<default>".into();
    let created = node
        .client()
        .create_process_instance(request)
        .await
        .expect("the default tenant")
        .into_inner();
    assert_eq!(created.tenant_id, "<default>");
    let answer = node
        .post(
            "/v2/process-instances",
            serde_json::json!({"processDefinitionId": "order", "tenantId": B}),
        )
        .await;
    let detail = answer.problem(400, "INVALID_ARGUMENT", "/v2/process-instances");
    assert!(detail.contains("multi-tenancy is disabled"), "{detail}");
}

#[tokio::test]
async fn on_requests_name_a_valid_tenant_of_the_caller() {
    let node = two_tenants().await;
    let refused = |status: tonic::Status| (status.code(), status.message().to_owned());
    assert_eq!(
        refused(deploy_as(&node, "alice", "").await.expect_err("no tenant")),
        (
            Code::InvalidArgument,
            "Expected to handle request DeployResource with multi-tenancy enabled, but no tenant identifier was provided.".into()
        )
    );
    assert_eq!(
        refused(
            deploy_as(&node, "alice", "tenant a")
                .await
                .expect_err("a space")
        )
        .1,
        "Expected to handle request DeployResource with tenant identifier 'tenant a', but tenant identifier contains illegal characters."
    );
    let long = "t".repeat(32);
    assert!(
        refused(
            deploy_as(&node, "alice", &long)
                .await
                .expect_err("too long")
        )
        .1
        .contains("longer than 31 characters")
    );
    assert_eq!(
        refused(deploy_as(&node, "alice", B).await.expect_err("not alice's")),
        (
            Code::PermissionDenied,
            "Expected to handle request DeployResource with tenant identifier 'tenant-b', but tenant is not authorized to perform this request".into()
        )
    );
    assert_eq!(
        refused(
            activate_as(&node, "alice", &[A, B])
                .await
                .expect_err("B is not alice's")
        )
        .0,
        Code::PermissionDenied
    );
    assert_eq!(
        refused(
            activate_as(&node, "alice", &[])
                .await
                .expect_err("no tenants")
        )
        .1,
        "Expected to handle request ActivateJobs with multi-tenancy enabled, but no tenant identifiers were provided."
    );
    // REST: 403 problem+json for a tenant not the caller's, 400 for a missing one.
    let (status, problem) = rest_as(
        &node,
        "bob",
        "/v2/process-instances",
        serde_json::json!({"processDefinitionId": "order", "tenantId": A}),
    )
    .await;
    assert_eq!(status, 403, "{problem}");
    assert_eq!(problem["title"], "FORBIDDEN");
    let (status, problem) = rest_as(
        &node,
        "bob",
        "/v2/messages/publication",
        serde_json::json!({"name": "payment", "correlationKey": "o-1"}),
    )
    .await;
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no tenant identifier was provided")),
        "{problem}"
    );
}

#[tokio::test]
async fn two_tenants_with_the_same_process_id_never_cross() {
    let node = two_tenants().await;
    let deployed_a = deploy_as(&node, "alice", A)
        .await
        .expect("alice deploys in A");
    let deployed_b = deploy_as(&node, "bob", B).await.expect("bob deploys in B");
    assert_eq!(
        (deployed_a.tenant_id.as_str(), deployed_b.tenant_id.as_str()),
        (A, B)
    );
    let key_of = |d: &DeployResourceResponse| match &d.deployments[0].metadata {
        Some(deployment::Metadata::Process(p)) => {
            (p.version, p.process_definition_key, p.tenant_id.clone())
        }
        other => panic!("a process: {other:?}"),
    };
    let (version_a, key_a, tenant_a) = key_of(&deployed_a);
    let (version_b, key_b, _) = key_of(&deployed_b);
    assert_eq!((version_a, version_b), (1, 1), "versions count per tenant");
    assert_ne!(key_a, key_b);
    assert_eq!(tenant_a, A);

    let instance_a = create_as(&node, "alice", A, r#"{"orderId": "o-1"}"#)
        .await
        .expect("alice starts A's process");
    assert_eq!(instance_a.tenant_id, A);
    assert_eq!(instance_a.process_definition_key, key_a);
    let (status, created) = rest_as(
        &node,
        "bob",
        "/v2/process-instances",
        serde_json::json!({"processDefinitionId": "order", "tenantId": B, "variables": {"orderId": "o-1"}}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["tenantId"], B);
    assert_eq!(created["processDefinitionKey"], key_b.to_string());

    // Jobs: each worker gets its tenant's job only.
    let mut jobs_a = Vec::new();
    for _ in 0..50 {
        jobs_a = activate_as(&node, "alice", &[A])
            .await
            .expect("alice activates");
        if !jobs_a.is_empty() {
            break;
        }
    }
    assert_eq!(jobs_a.len(), 1, "{jobs_a:?}");
    assert_eq!(jobs_a[0].tenant_id, A);
    assert_eq!(
        jobs_a[0].process_instance_key,
        instance_a.process_instance_key
    );
    let (status, activated) = rest_as(
        &node,
        "bob",
        "/v2/jobs/activation",
        serde_json::json!({"type": "pack", "maxJobsToActivate": 10, "timeout": 60000, "requestTimeout": 500, "tenantIds": [B]}),
    )
    .await;
    assert_eq!(status, 200, "{activated}");
    let jobs_b = activated["jobs"].as_array().expect("jobs").clone();
    assert_eq!(jobs_b.len(), 1, "{activated}");
    assert_eq!(jobs_b[0]["tenantId"], B);
    // Bob can neither complete A's job nor cancel A's instance: for him they are not there.
    let status = node
        .client()
        .complete_job(as_user(
            "bob",
            CompleteJobRequest {
                job_key: jobs_a[0].key,
                variables: String::new(),
                result: None,
            },
        ))
        .await
        .expect_err("not bob's job");
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status = node
        .client()
        .cancel_process_instance(as_user(
            "bob",
            CancelProcessInstanceRequest {
                process_instance_key: instance_a.process_instance_key,
                operation_reference: None,
            },
        ))
        .await
        .expect_err("not bob's instance");
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    for (user, key) in [
        ("alice", jobs_a[0].key.to_string()),
        (
            "bob",
            jobs_b[0]["jobKey"].as_str().expect("a key").to_owned(),
        ),
    ] {
        node.client()
            .complete_job(as_user(
                user,
                CompleteJobRequest {
                    job_key: key.parse().expect("a key"),
                    variables: String::new(),
                    result: None,
                },
            ))
            .await
            .expect("completes");
    }

    // A message published in A reaches A's instance only.
    node.client()
        .publish_message(as_user(
            "alice",
            PublishMessageRequest {
                name: "payment".into(),
                correlation_key: "o-1".into(),
                time_to_live: 0,
                tenant_id: A.into(),
                ..Default::default()
            },
        ))
        .await
        .expect("alice publishes in A");
    let completed = |records: &[beeline_protocol::Record], tenant: &str| {
        records.iter().any(|r| {
            r.intent == Intent::from(ProcessInstanceIntent::ElementCompleted)
                && r.value_as::<beeline_protocol::value::ProcessInstanceRecord>()
                    .is_some_and(|v| v.element_id == "order" && v.tenant_id == tenant)
        })
    };
    let mut records = Vec::new();
    for _ in 0..100 {
        records = [node.records(1).await, node.records(2).await].concat();
        if completed(&records, A) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(completed(&records, A), "A's instance completes");
    assert!(
        !completed(&records, B),
        "B's instance still waits for its payment"
    );
    // Bob may not publish for A.
    let status = node
        .client()
        .publish_message(as_user(
            "bob",
            PublishMessageRequest {
                name: "payment".into(),
                correlation_key: "o-1".into(),
                tenant_id: A.into(),
                ..Default::default()
            },
        ))
        .await
        .expect_err("not bob's tenant");
    assert_eq!(status.code(), Code::PermissionDenied);
    // An admin assigned to both may act for either.
    create_as(&node, "admin", B, r#"{"orderId": "o-2"}"#)
        .await
        .expect("admin starts B's process");
}

#[tokio::test]
async fn job_streams_take_the_jobs_of_their_tenants() {
    let node = two_tenants().await;
    deploy_as(&node, "alice", A).await.expect("deployed in A");
    deploy_as(&node, "bob", B).await.expect("deployed in B");
    let mut stream = node
        .client()
        .stream_activated_jobs(as_user(
            "bob",
            StreamActivatedJobsRequest {
                r#type: "pack".into(),
                worker: "bob".into(),
                timeout: 60_000,
                fetch_variable: Vec::new(),
                tenant_ids: vec![B.into()],
            },
        ))
        .await
        .expect("bob streams B's jobs")
        .into_inner();
    // Let the stream register before the jobs are made.
    tokio::time::sleep(Duration::from_millis(200)).await;
    create_as(&node, "alice", A, r#"{"orderId": "a"}"#)
        .await
        .expect("A's");
    create_as(&node, "bob", B, r#"{"orderId": "b"}"#)
        .await
        .expect("B's");
    let job = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .expect("a job within 10 s")
        .expect("the stream is open")
        .expect("a job");
    assert_eq!(job.tenant_id, B);
    let next = tokio::time::timeout(Duration::from_millis(500), stream.message()).await;
    assert!(
        next.is_err(),
        "A's job is not pushed to B's stream: {next:?}"
    );
    let status = node
        .client()
        .stream_activated_jobs(as_user(
            "bob",
            StreamActivatedJobsRequest {
                r#type: "pack".into(),
                worker: "bob".into(),
                timeout: 60_000,
                fetch_variable: Vec::new(),
                tenant_ids: vec![A.into()],
            },
        ))
        .await
        .expect_err("A is not bob's");
    assert_eq!(status.code(), Code::PermissionDenied);
}

#[tokio::test]
async fn an_oidc_client_acts_for_the_tenants_of_its_client_id_claim() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pem = dir.path().join("idp.pem");
    let run = |args: &[&str]| {
        let output = std::process::Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl runs (it makes the test's keys)");
        assert!(output.status.success(), "openssl {args:?}: {output:?}");
        output.stdout
    };
    let pem_path = pem.to_str().expect("a path");
    run(&["genrsa", "-out", pem_path, "2048"]);
    let der = run(&["rsa", "-in", pem_path, "-outform", "DER", "-traditional"]);
    let modulus =
        String::from_utf8(run(&["rsa", "-in", pem_path, "-noout", "-modulus"])).expect("text");
    let hex = modulus.trim().trim_start_matches("Modulus=");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let jwks = dir.path().join("jwks.json");
    std::fs::write(
        &jwks,
        serde_json::json!({"keys": [{"kty": "RSA", "kid": "k", "alg": "RS256", "use": "sig", "n": n, "e": "AQAB"}]})
            .to_string(),
    )
    .expect("writes");
    let config = GatewayConfig {
        auth: AuthConfig::Oidc(OidcConfig {
            client_id_claim: Some("client_id".into()),
            ..OidcConfig::new(JwksSource::File(jwks))
        }),
        tenancy: TenancyConfig {
            enabled: true,
            assignments: HashMap::from([("worker-a".to_owned(), vec![A.to_owned()])]),
        },
        ..GatewayConfig::default()
    };
    let node = Node::start_with(1, config, |_| {}).await;
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock")
        .as_secs()
        + 300;
    let token = |claims: serde_json::Value| {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("k".into());
        let token = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_rsa_der(&der))
            .expect("signs");
        format!("Bearer {token}")
    };
    let deploy = |authorization: String| {
        let mut request = tonic::Request::new(DeployResourceRequest {
            resources: vec![resource("order.bpmn", &waiting_process())],
            tenant_id: A.into(),
        });
        request
            .metadata_mut()
            .insert("authorization", authorization.parse().expect("a value"));
        let mut client = node.client();
        async move { client.deploy_resource(request).await }
    };
    // The client claim names the principal; the user claim (`sub`) when there is none.
    deploy(token(
        serde_json::json!({"sub": "someone", "client_id": "worker-a", "exp": exp}),
    ))
    .await
    .expect("worker-a acts for A");
    deploy(token(serde_json::json!({"sub": "worker-a", "exp": exp})))
        .await
        .expect("the user claim names worker-a too");
    let status = deploy(token(
        serde_json::json!({"sub": "worker-a", "client_id": "other", "exp": exp}),
    ))
    .await
    .expect_err("another client");
    assert_eq!(status.code(), Code::PermissionDenied);
}

#[tokio::test]
async fn multi_tenancy_without_authentication_does_not_start() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let cluster = Cluster::single_node(
        NodeInfo {
            node_id: 0,
            host: "127.0.0.1".into(),
            port: 0,
            version: "test".into(),
        },
        Vec::new(),
    );
    let gateway = Gateway::new(
        cluster,
        GatewayConfig {
            tenancy: TenancyConfig {
                enabled: true,
                ..TenancyConfig::default()
            },
            ..GatewayConfig::default()
        },
    );
    let error = gateway
        .serve(listener, None, std::future::pending())
        .await
        .expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("multi-tenancy needs authentication"),
        "{error}"
    );
}
