//! `beeline create PROCESS_ID`: CreateProcessInstance, or CreateProcessInstanceWithResult with
//! `--with-result`.

use std::time::Duration;

use beeline_gateway_protocol::proto::{
    CreateProcessInstanceRequest, CreateProcessInstanceResponse,
    CreateProcessInstanceWithResultRequest, CreateProcessInstanceWithResultResponse,
};
use serde_json::json;

use crate::connection::{Connection, Error};
use crate::output::{Reply, int64, pretty};

/// Extra time the client waits beyond `--request-timeout` for a result, so the gateway's own
/// answer when the instance does not complete in time (with its message) arrives first.
const RESULT_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The BPMN process id (the process's `id` in its model), or a process definition key
    #[arg(value_name = "PROCESS_ID")]
    pub process: String,

    /// The version of the process to start (default: the latest deployed)
    #[arg(long)]
    pub version: Option<i32>,

    /// The instance's variables: a JSON object, or @FILE to read it from a file
    #[arg(long, value_name = "JSON")]
    pub variables: Option<String>,

    /// Waits until the instance completes and prints its variables (at most --request-timeout)
    #[arg(long)]
    pub with_result: bool,

    #[command(flatten)]
    pub connection: Connection,
}

pub async fn run(args: CreateArgs) -> Result<Reply, Error> {
    let request = request(&args)?;
    let mut client = args.connection.connect().await?;
    if args.with_result {
        let timeout = args.connection.request_timeout;
        let request = CreateProcessInstanceWithResultRequest {
            request: Some(request),
            request_timeout: i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX),
            fetch_variables: Vec::new(),
        };
        let response = args
            .connection
            .call(request, RESULT_GRACE, |r| {
                client.create_process_instance_with_result(r)
            })
            .await?;
        Ok(with_result_reply(&response))
    } else {
        let response = args
            .connection
            .call(request, Duration::ZERO, |r| {
                client.create_process_instance(r)
            })
            .await?;
        Ok(reply(&response))
    }
}

/// By definition key when PROCESS_ID is a number (a BPMN id cannot start with a digit), as
/// zbctl does; else by id, in the asked or the latest version.
fn request(args: &CreateArgs) -> Result<CreateProcessInstanceRequest, Error> {
    let variables = crate::variables(args.variables.as_deref())?;
    let mut request = CreateProcessInstanceRequest {
        variables,
        version: args.version.unwrap_or(-1),
        ..CreateProcessInstanceRequest::default()
    };
    match args.process.parse::<i64>() {
        Ok(key) if args.version.is_some() => {
            return Err(Error::Usage(format!(
                "--version picks a version of a process id; {key} is a process definition key, \
                 which names one version already"
            )));
        }
        Ok(key) => request.process_definition_key = key,
        Err(_) => request.bpmn_process_id = args.process.clone(),
    }
    Ok(request)
}

fn reply(response: &CreateProcessInstanceResponse) -> Reply {
    Reply {
        text: format!(
            "created instance {} of {} version {} (process definition {})",
            response.process_instance_key,
            response.bpmn_process_id,
            response.version,
            response.process_definition_key
        ),
        json: json!({
            "processDefinitionKey": int64(response.process_definition_key),
            "bpmnProcessId": response.bpmn_process_id,
            "version": response.version,
            "processInstanceKey": int64(response.process_instance_key),
            "tenantId": response.tenant_id,
            "tags": response.tags,
        }),
    }
}

fn with_result_reply(response: &CreateProcessInstanceWithResultResponse) -> Reply {
    Reply {
        text: format!(
            "instance {} of {} version {} completed; its variables:\n{}",
            response.process_instance_key,
            response.bpmn_process_id,
            response.version,
            pretty(&response.variables)
        ),
        json: json!({
            "processDefinitionKey": int64(response.process_definition_key),
            "bpmnProcessId": response.bpmn_process_id,
            "version": response.version,
            "processInstanceKey": int64(response.process_instance_key),
            "variables": response.variables,
            "tenantId": response.tenant_id,
            "tags": response.tags,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CreateArgs,
    }

    fn parse(args: &[&str]) -> CreateArgs {
        Cli::parse_from(std::iter::once("create").chain(args.iter().copied())).args
    }

    #[test]
    fn an_id_starts_its_latest_version_or_the_one_asked() {
        let latest = request(&parse(&["order", "--variables", r#"{"a":1}"#])).unwrap();
        assert_eq!(latest.bpmn_process_id, "order");
        assert_eq!(latest.version, -1);
        assert_eq!(latest.process_definition_key, 0);
        assert_eq!(latest.variables, r#"{"a":1}"#);
        assert_eq!(
            request(&parse(&["order", "--version", "3"]))
                .unwrap()
                .version,
            3
        );
    }

    #[test]
    fn a_number_is_a_definition_key_which_takes_no_version() {
        let by_key = request(&parse(&["2251799813685250"])).unwrap();
        assert_eq!(by_key.process_definition_key, 2251799813685250);
        assert_eq!(by_key.bpmn_process_id, "");
        let Err(Error::Usage(message)) = request(&parse(&["22", "--version", "1"])) else {
            panic!("a key with a version accepted");
        };
        assert!(message.contains("process definition key"), "{message}");
    }

    #[test]
    fn the_result_is_printed_with_its_variables() {
        let reply = with_result_reply(&CreateProcessInstanceWithResultResponse {
            process_definition_key: 1,
            bpmn_process_id: "order".into(),
            version: 1,
            process_instance_key: 2251799813685260,
            variables: r#"{"shipped":true}"#.into(),
            tenant_id: "<default>".into(),
            tags: Vec::new(),
        });
        assert_eq!(
            reply.text,
            "instance 2251799813685260 of order version 1 completed; its variables:\n\
             {\n  \"shipped\": true\n}"
        );
        assert_eq!(reply.json["processInstanceKey"], "2251799813685260");
        assert_eq!(reply.json["variables"], r#"{"shipped":true}"#);
    }
}
