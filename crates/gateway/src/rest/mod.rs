//! The REST transport: Camunda 8.8's REST API under `/v2` (axum), with the request and response
//! shapes of its published specification.
//!
//! ```text
//! client ─HTTP─▶ router (mod.rs) ─▶ <resource>.rs: JSON body → operation request
//!                                     operations::<op>::run (validate, route, send, answer)
//!                                  ◀─ <resource>.rs: operation result → JSON body
//!                                     problem.rs: GatewayError → HTTP status + problem+json
//! ```
//!
//! Keys are strings in paths, requests and responses (`json::Key`); variables pass through as
//! the JSON text the client sent. Every operation of the 8.8 API that Beeline does not serve
//! yet answers 501 problem+json naming it (`not_implemented.rs`); a path outside the API is a
//! 404 problem. Bodies are limited to the gateway's maximum message size (413 beyond it).

mod clock;
mod decision_definitions;
mod deployments;
mod element_instances;
mod incidents;
mod jobs;
mod json;
mod messages;
mod not_implemented;
mod problem;
mod process_instances;
mod resources;
mod search;
mod signals;
mod topology;
mod user_tasks;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post, put};

use crate::auth::Authenticator;
use crate::dispatch::Dispatcher;
use crate::metrics::Api;
use crate::tls::TlsIncoming;
use problem::Problem;

/// The state every handler gets.
pub(crate) type Gateway = Arc<Dispatcher>;

/// Serves the REST API on `listener` until `shutdown` completes; then stops accepting and lets
/// the requests in flight finish.
pub(crate) async fn serve(
    d: Arc<Dispatcher>,
    listener: tokio::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    auth: Arc<Authenticator>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = if auth.is_on() {
        router(d).layer(axum::middleware::from_fn_with_state(auth, authenticate))
    } else {
        router(d)
    };
    match tls {
        Some(tls) => {
            axum::serve(TlsIncoming::new(listener, tls), router)
                .with_graceful_shutdown(shutdown)
                .await
        }
        None => {
            axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await
        }
    }
}

pub(crate) fn router(d: Arc<Dispatcher>) -> Router {
    let api = Router::new()
        .route("/v2/topology", get(topology::topology))
        .route("/v2/status", get(topology::status))
        .route("/v2/deployments", post(deployments::create))
        .route("/v2/process-instances", post(process_instances::create))
        .route(
            "/v2/process-instances/{processInstanceKey}/cancellation",
            post(process_instances::cancel),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/modification",
            post(process_instances::modify),
        )
        .route(
            "/v2/resources/{resourceKey}/deletion",
            post(resources::delete),
        )
        .route("/v2/jobs/activation", post(jobs::activate))
        .route("/v2/jobs/{jobKey}/completion", post(jobs::complete))
        .route("/v2/jobs/{jobKey}/failure", post(jobs::fail))
        .route("/v2/jobs/{jobKey}/error", post(jobs::throw_error))
        .route("/v2/jobs/{jobKey}", patch(jobs::update))
        .route("/v2/messages/publication", post(messages::publish))
        .route("/v2/messages/correlation", post(messages::correlate))
        .route("/v2/signals/broadcast", post(signals::broadcast))
        .route(
            "/v2/decision-definitions/evaluation",
            post(decision_definitions::evaluate),
        )
        .route(
            "/v2/incidents/{incidentKey}/resolution",
            post(incidents::resolve),
        )
        .route(
            "/v2/element-instances/{elementInstanceKey}/variables",
            put(element_instances::set_variables),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/completion",
            post(user_tasks::complete),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/assignment",
            post(user_tasks::assign),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/assignee",
            delete(user_tasks::unassign),
        )
        .route("/v2/user-tasks/{userTaskKey}", patch(user_tasks::update))
        .route("/v2/clock", put(clock::pin))
        .route("/v2/clock/reset", post(clock::reset));
    not_implemented::add(api.merge(search::routes()))
        // Multipart deployments read their parts through axum's own limit.
        .layer(DefaultBodyLimit::max(d.config.max_message_size))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(d)
}

/// Lets a request with valid credentials through; else 401 problem+json saying what was wrong.
async fn authenticate(
    axum::extract::State(auth): axum::extract::State<Arc<Authenticator>>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    match auth
        .check(request.headers().get(header::AUTHORIZATION))
        .await
    {
        Ok(principal) => match auth.caller(principal) {
            Some(caller) => caller.scope(next.run(request)).await,
            None => next.run(request).await,
        },
        Err(message) => {
            let path = request.uri().path().to_owned();
            let mut response =
                Problem::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message).at(&path);
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(auth.scheme()),
            );
            response
        }
    }
}

/// A path outside the API.
async fn not_found(request: Request) -> Response {
    let path = request.uri().path().to_owned();
    Problem::new(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!(
            "No endpoint {} {path}; the REST API is under /v2 (Camunda 8.8's Orchestration Cluster API)",
            request.method()
        ),
    )
    .at(&path)
}

/// A path of the API with another method.
async fn method_not_allowed(request: Request) -> Response {
    let path = request.uri().path().to_owned();
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        format!("{path} does not take {} requests", request.method()),
    )
    .at(&path)
}

/// A request as the handlers read it: its path (for the problem's `instance`) and its body,
/// limited to the gateway's maximum message size.
pub(crate) struct Call {
    pub path: String,
    pub body: Bytes,
}

impl FromRequest<Gateway> for Call {
    type Rejection = Response;

    async fn from_request(request: Request, d: &Gateway) -> Result<Self, Self::Rejection> {
        let path = request.uri().path().to_owned();
        let max = d.config.max_message_size;
        let too_large = |size: Option<u64>| {
            let size = size.map_or_else(|| "larger".to_owned(), |n| format!("{n} bytes,"));
            Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!(
                    "The request is {size} more than the gateway's maximum message size of {max} \
                     bytes; send less data (smaller variables or resources), or raise the limit \
                     (--grpc-max-message-size / BEELINE_GRPC_MAX_MESSAGE_SIZE)"
                ),
            )
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > max as u64) {
            return Err(too_large(declared).at(&path));
        }
        match axum::body::to_bytes(request.into_body(), max).await {
            Ok(body) => Ok(Call { path, body }),
            Err(error) => {
                let limit = std::error::Error::source(&error)
                    .is_some_and(|e| e.is::<http_body_util::LengthLimitError>());
                Err(if limit {
                    too_large(None).at(&path)
                } else {
                    Problem::invalid(format!("The request body cannot be read: {error}")).at(&path)
                })
            }
        }
    }
}

/// The parameter of a path such as `/v2/jobs/{jobKey}/completion`, as text. One that does not
/// percent-decode to UTF-8 is a 400 problem naming it, as every other error of the API (axum's
/// own answer is plain text).
pub(crate) struct PathParam(pub String);

impl<S: Send + Sync> FromRequestParts<S> for PathParam {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(text)) => Ok(Self(text)),
            Err(rejection) => Err(Problem::invalid(rejection.body_text()).at(parts.uri.path())),
        }
    }
}

/// What an operation answers on success.
pub(crate) enum Reply {
    /// 200 with this JSON body.
    Json(Vec<u8>),
    /// 204.
    NoContent,
}

/// Runs one operation: its answer (or problem) as the response, counted in the metrics.
pub(crate) async fn answer(
    d: &Dispatcher,
    rpc: &'static str,
    path: &str,
    work: impl Future<Output = Result<Reply, Problem>>,
) -> Response {
    let started = std::time::Instant::now();
    let response = match work.await {
        Ok(Reply::Json(body)) => {
            let mut response = (StatusCode::OK, body).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Ok(Reply::NoContent) => StatusCode::NO_CONTENT.into_response(),
        Err(problem) => {
            if problem.status.is_server_error() && problem.status != StatusCode::SERVICE_UNAVAILABLE
            {
                tracing::warn!(rpc, status = %problem.status, detail = %problem.detail, "failed");
            } else {
                tracing::debug!(rpc, status = %problem.status, detail = %problem.detail, "refused");
            }
            problem.at(path)
        }
    };
    d.metrics.record(
        Api::Rest,
        rpc,
        status_label(response.status()),
        started.elapsed(),
    );
    response
}

/// A command on the resource whose key is in the path (named `key_name` in errors), with a
/// JSON body of type `B` (an empty body reads as `{}`), answered 204 once `run` succeeds.
pub(crate) async fn keyed_command<B, Fut>(
    d: &Dispatcher,
    rpc: &'static str,
    key_name: &str,
    key: &str,
    call: &Call,
    run: impl FnOnce(i64, B) -> Fut,
) -> Response
where
    B: serde::de::DeserializeOwned,
    Fut: Future<Output = Result<(), crate::error::GatewayError>>,
{
    answer(d, rpc, &call.path, async {
        let key = json::path_key(key_name, key)?;
        let body: B = json::body(&call.body)?;
        run(key, body).await?;
        Ok(Reply::NoContent)
    })
    .await
}

/// The status as a metrics label.
fn status_label(status: StatusCode) -> &'static str {
    match status.as_u16() {
        200 => "200",
        204 => "204",
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        409 => "409",
        413 => "413",
        500 => "500",
        501 => "501",
        502 => "502",
        503 => "503",
        504 => "504",
        _ => "other",
    }
}
