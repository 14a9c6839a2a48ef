//! `beeline publish NAME --correlation-key K`: PublishMessage.

use std::time::Duration;

use beeline_gateway_protocol::proto::{PublishMessageRequest, PublishMessageResponse};
use serde_json::json;

use crate::connection::{Connection, Error};
use crate::output::{Reply, int64};

#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    /// The message's name, as the model's message events and receive tasks name it
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The key the waiting instance's subscription must match (its correlation key expression's
    /// value); "" for a message that only starts instances
    #[arg(long, value_name = "KEY")]
    pub correlation_key: String,

    /// The message's variables, given to the instance it is correlated to: a JSON object, or
    /// @FILE to read it from a file
    #[arg(long, value_name = "JSON")]
    pub variables: Option<String>,

    /// How long the message waits for an instance to take it (0: only instances waiting now).
    /// The default is the Java client's
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = beeline_units::parse_duration)]
    pub ttl: Duration,

    /// An id unique among the messages waiting: a second message with it is refused
    /// (ALREADY_EXISTS)
    #[arg(long, value_name = "ID")]
    pub message_id: Option<String>,

    #[command(flatten)]
    pub connection: Connection,
}

pub async fn run(args: PublishArgs) -> Result<Reply, Error> {
    let request = PublishMessageRequest {
        name: args.name.clone(),
        correlation_key: args.correlation_key.clone(),
        time_to_live: i64::try_from(args.ttl.as_millis()).unwrap_or(i64::MAX),
        message_id: args.message_id.clone().unwrap_or_default(),
        variables: crate::variables(args.variables.as_deref())?,
        tenant_id: String::new(),
    };
    let mut client = args.connection.connect().await?;
    let response = args
        .connection
        .call(request, Duration::ZERO, |r| client.publish_message(r))
        .await?;
    Ok(reply(&args, &response))
}

fn reply(args: &PublishArgs, response: &PublishMessageResponse) -> Reply {
    Reply {
        text: format!(
            "published message {} with correlation key '{}' as message {}",
            args.name, args.correlation_key, response.key
        ),
        json: json!({
            "key": int64(response.key),
            "tenantId": response.tenant_id,
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
        args: PublishArgs,
    }

    #[test]
    fn the_ttl_defaults_to_an_hour_and_reads_durations() {
        let args = Cli::parse_from(["publish", "paid", "--correlation-key", "A-1"]).args;
        assert_eq!(args.ttl, Duration::from_secs(3600));
        let args = Cli::parse_from(["publish", "paid", "--correlation-key", "", "--ttl", "30s"]);
        assert_eq!(args.args.ttl, Duration::from_secs(30));
        assert!(Cli::try_parse_from(["publish", "paid"]).is_err());
    }

    #[test]
    fn the_reply_names_the_message_and_its_key() {
        let args = Cli::parse_from(["publish", "paid", "--correlation-key", "A-1"]).args;
        let reply = reply(
            &args,
            &PublishMessageResponse {
                key: 2251799813685270,
                tenant_id: "<default>".into(),
            },
        );
        assert_eq!(
            reply.text,
            "published message paid with correlation key 'A-1' as message 2251799813685270"
        );
        assert_eq!(
            reply.json,
            json!({"key": "2251799813685270", "tenantId": "<default>"})
        );
    }
}
