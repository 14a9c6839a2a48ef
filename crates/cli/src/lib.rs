//! `beeline deploy | create | publish | status`: a small command-line client of any Zeebe
//! gateway (Beeline's or Zeebe's), in the spirit of zbctl and c8ctl.
//!
//! It speaks only the public gRPC protocol (`beeline-gateway-protocol`), so it links neither
//! the engine nor the gateway. Each command is one request (`deploy.rs`, `create.rs`,
//! `publish.rs`, `status.rs`); `connection.rs` finds and reaches the gateway, `output.rs`
//! prints the answer for a person or, with `--json`, for a script.
//!
//! Exit status: 0 when the gateway accepted the request; 1 when it answered with an error (the
//! gRPC status code and the gateway's message are printed) or could not be reached; 2 when the
//! arguments were wrong and nothing was sent.

mod connection;
mod create;
mod deploy;
mod output;
mod publish;
mod status;

use std::process::ExitCode;

pub use connection::{Connection, DEFAULT_ADDRESS, Error, endpoint_url};
pub use create::CreateArgs;
pub use deploy::DeployArgs;
pub use output::Reply;
pub use publish::PublishArgs;
pub use status::StatusArgs;

/// The client commands, as subcommands of `beeline`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Deploys BPMN processes, DMN decisions and forms (one deployment for all FILEs).
    Deploy(DeployArgs),
    /// Creates a process instance, and with --with-result waits for it to complete.
    Create(CreateArgs),
    /// Publishes a message, to be correlated to the instances waiting for it.
    Publish(PublishArgs),
    /// Shows the cluster's topology: brokers, partitions, their roles and health.
    Status(StatusArgs),
}

impl Command {
    fn connection(&self) -> &Connection {
        match self {
            Command::Deploy(args) => &args.connection,
            Command::Create(args) => &args.connection,
            Command::Publish(args) => &args.connection,
            Command::Status(args) => &args.connection,
        }
    }
}

/// `--variables`: a JSON document as given, or `@FILE` for a file's content (as curl reads
/// `@`). The gateway checks it, so its error says what is wrong with it.
fn variables(arg: Option<&str>) -> Result<String, Error> {
    match arg {
        None => Ok(String::new()),
        Some(text) => match text.strip_prefix('@') {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| Error::Usage(format!("cannot read the variables file {path}: {e}"))),
            None => Ok(text.to_owned()),
        },
    }
}

/// Runs one command and prints its answer or its error.
pub async fn run(command: Command) -> ExitCode {
    let json = command.connection().json;
    let result = match command {
        Command::Deploy(args) => deploy::run(args).await,
        Command::Create(args) => create::run(args).await,
        Command::Publish(args) => publish::run(args).await,
        Command::Status(args) => status::run(args).await,
    };
    match result {
        Ok(reply) => {
            reply.print(json);
            ExitCode::SUCCESS
        }
        Err(error) => {
            error.print(json);
            error.exit_code()
        }
    }
}
