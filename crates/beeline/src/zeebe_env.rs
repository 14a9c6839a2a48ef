//! Zeebe's environment variables for the cluster settings (`ZEEBE_BROKER_CLUSTER_NODEID`, ...),
//! the free-disk watermarks (`ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING`, ..., sizes in
//! Spring's units) and multi-tenancy (`ZEEBE_GATEWAY_MULTITENANCY_ENABLED`, Camunda 8.8's
//! `CAMUNDA_SECURITY_MULTITENANCY_CHECKSENABLED`), accepted beside Beeline's own, so Zeebe's
//! Helm values and compose files keep working.
//!
//! Each one that is set becomes its flag, placed after the config file's settings and before
//! the command line's: a flag wins over it, and so does Beeline's own variable for the same
//! setting (the Zeebe one is then left out); it wins over the file.

use std::ffi::{OsStr, OsString};

use beeline_cluster::settings::ZEEBE_ENVIRONMENT;

/// Zeebe's and Camunda's variables for the gateway's settings: (variable, flag, Beeline's own
/// variable). Camunda 8.8's name comes first, so it wins over the older gateway names.
const GATEWAY_ENVIRONMENT: &[(&str, &str, &str)] = &[
    (
        "CAMUNDA_SECURITY_MULTITENANCY_CHECKSENABLED",
        "multi-tenancy",
        "BEELINE_MULTI_TENANCY",
    ),
    (
        "ZEEBE_BROKER_GATEWAY_MULTITENANCY_ENABLED",
        "multi-tenancy",
        "BEELINE_MULTI_TENANCY",
    ),
    (
        "ZEEBE_GATEWAY_MULTITENANCY_ENABLED",
        "multi-tenancy",
        "BEELINE_MULTI_TENANCY",
    ),
];

/// How a Zeebe variable's value becomes its flag's.
#[derive(Clone, Copy)]
enum Value {
    /// As it is.
    Same,
    /// A size as Spring reads Zeebe's (`2GB`: KB, MB, GB and TB are 1024 times the unit
    /// before), in bytes; any other text as it is, for the flag to refuse.
    SpringSize,
    /// `false` turns the setting `off`; `true` leaves it at its own value.
    OffWhenFalse,
}

impl Value {
    /// The flag's value, or none when the variable leaves the setting alone.
    fn translate(self, value: &OsStr) -> Option<OsString> {
        let text = value.to_string_lossy();
        let text = text.trim();
        match self {
            Value::Same => Some(value.to_owned()),
            Value::SpringSize => Some(spring_size(text).map_or_else(
                || value.to_owned(),
                |bytes| OsString::from(bytes.to_string()),
            )),
            Value::OffWhenFalse if text.eq_ignore_ascii_case("false") => Some("off".into()),
            Value::OffWhenFalse if text.eq_ignore_ascii_case("true") => None,
            Value::OffWhenFalse => Some(value.to_owned()),
        }
    }
}

/// Bytes of a size as Spring's `DataSize` writes it: digits and an optional unit.
fn spring_size(text: &str) -> Option<u64> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "KB" => 10,
        "MB" => 20,
        "GB" => 30,
        "TB" => 40,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Zeebe's variables for the free-disk watermarks: (variable, flag, Beeline's own variable,
/// how the value translates). Monitoring turned off comes first, so it wins over the sizes.
const DISK_ENVIRONMENT: &[(&str, &str, &str, Value)] = &[
    (
        "ZEEBE_BROKER_DATA_DISK_ENABLEMONITORING",
        "disk-free-min",
        "BEELINE_DISK_FREE_MIN",
        Value::OffWhenFalse,
    ),
    (
        "ZEEBE_BROKER_DATA_DISK_ENABLEMONITORING",
        "disk-free-replication-min",
        "BEELINE_DISK_FREE_REPLICATION_MIN",
        Value::OffWhenFalse,
    ),
    (
        "ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING",
        "disk-free-min",
        "BEELINE_DISK_FREE_MIN",
        Value::SpringSize,
    ),
    (
        "ZEEBE_BROKER_DATA_DISK_FREESPACE_REPLICATION",
        "disk-free-replication-min",
        "BEELINE_DISK_FREE_REPLICATION_MIN",
        Value::SpringSize,
    ),
];

/// `args` (the whole command line) with the settings of Zeebe's environment variables inserted
/// after the `broker` subcommand.
pub fn with_zeebe_environment(
    args: Vec<OsString>,
    broker: &clap::Command,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<OsString>, String> {
    if args.get(1).map(OsString::as_os_str) != Some(OsStr::new(broker.get_name())) {
        return Ok(args);
    }
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let mut flags = Vec::new();
    let mut taken = Vec::new();
    let as_they_are = ZEEBE_ENVIRONMENT
        .iter()
        .chain(GATEWAY_ENVIRONMENT)
        .map(|&(zeebe, flag, beeline)| (zeebe, flag, beeline, Value::Same));
    let translated = DISK_ENVIRONMENT.iter().copied();
    for (zeebe, flag, beeline, translate) in as_they_are.chain(translated) {
        let Some(value) = set(zeebe) else { continue };
        if set(beeline).is_some() || taken.contains(&flag) {
            continue;
        }
        let Some(value) = translate.translate(&value) else {
            continue;
        };
        taken.push(flag);
        let mut arg = OsString::from(format!("--{flag}="));
        arg.push(&value);
        // Checked alone, so an error names the variable.
        if let Err(e) = broker
            .clone()
            .try_get_matches_from([OsString::from(broker.get_name()), arg.clone()])
        {
            let reason = e.to_string();
            let reason = reason.lines().next().unwrap_or_default();
            return Err(format!(
                "{zeebe} (--{flag}): {}",
                reason.trim_start_matches("error: ")
            ));
        }
        flags.push(arg);
    }
    let mut args = args;
    args.splice(2..2, flags);
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BrokerConfig;
    use clap::{CommandFactory, FromArgMatches, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        #[command(args_override_self = true)]
        Broker(BrokerConfig),
    }

    fn parse(args: &[&str], env: &[(&str, &str)]) -> Result<BrokerConfig, String> {
        let command = Cli::command();
        let broker = command.find_subcommand("broker").expect("broker");
        let args = std::iter::once("beeline")
            .chain(std::iter::once("broker"))
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let lookup = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        };
        let args = with_zeebe_environment(args, broker, lookup)?;
        let matches = Cli::command()
            .try_get_matches_from(args)
            .map_err(|e| e.to_string())?;
        match Cli::from_arg_matches(&matches)
            .map_err(|e| e.to_string())?
            .command
        {
            Sub::Broker(config) => Ok(config),
        }
    }

    #[test]
    fn zeebes_and_camundas_names_turn_multi_tenancy_on() {
        assert!(!parse(&[], &[]).expect("parse").multi_tenancy);
        for name in [
            "CAMUNDA_SECURITY_MULTITENANCY_CHECKSENABLED",
            "ZEEBE_BROKER_GATEWAY_MULTITENANCY_ENABLED",
            "ZEEBE_GATEWAY_MULTITENANCY_ENABLED",
        ] {
            assert!(parse(&[], &[(name, "true")]).expect("parse").multi_tenancy);
        }
        let config = parse(
            &[],
            &[
                ("CAMUNDA_SECURITY_MULTITENANCY_CHECKSENABLED", "false"),
                ("ZEEBE_GATEWAY_MULTITENANCY_ENABLED", "true"),
            ],
        )
        .expect("parse");
        assert!(!config.multi_tenancy, "Camunda 8.8's name wins");
        let config = parse(
            &[
                "--multi-tenancy",
                "--tenant-assignments",
                "demo=tenant-a+<default>",
            ],
            &[],
        )
        .expect("parse");
        assert!(config.multi_tenancy);
        let assigned = config.tenant_assignments.expect("assignments").0;
        assert_eq!(assigned["demo"], vec!["tenant-a", "<default>"]);
        assert!(
            parse(
                &["--multi-tenancy", "--tenant-assignments", "demo=a b"],
                &[]
            )
            .is_err()
        );
    }

    #[test]
    fn zeebes_names_set_the_cluster_settings() {
        let config = parse(
            &[],
            &[
                ("ZEEBE_BROKER_CLUSTER_NODEID", "2"),
                ("ZEEBE_BROKER_CLUSTER_CLUSTERSIZE", "3"),
                ("ZEEBE_BROKER_CLUSTER_PARTITIONSCOUNT", "6"),
                ("ZEEBE_BROKER_CLUSTER_REPLICATIONFACTOR", "3"),
                (
                    "ZEEBE_BROKER_CLUSTER_INITIALCONTACTPOINTS",
                    "b0:26502,b1:26502",
                ),
                ("ZEEBE_BROKER_NETWORK_INTERNALAPI_PORT", "26602"),
                ("ZEEBE_BROKER_CLUSTER_CLUSTERNAME", "orders"),
                ("ZEEBE_BROKER_NETWORK_ADVERTISEDHOST", "broker-2.internal"),
            ],
        )
        .expect("parse");
        assert_eq!(config.cluster_name, "orders");
        assert_eq!(config.advertised_host.as_deref(), Some("broker-2.internal"));
        assert_eq!(
            (config.node_id, config.cluster_size, config.partitions),
            (2, 3, 6)
        );
        assert_eq!(config.replication_factor, 3);
        assert_eq!(config.contact_points, vec!["b0:26502", "b1:26502"]);
        assert_eq!(config.internal_port, 26602);
    }

    #[test]
    fn zeebes_heartbeat_and_election_timeout_set_the_raft_timing() {
        let config = parse(&[], &[]).expect("parse");
        let timing = config.raft_timing().expect("default timing");
        assert_eq!(
            (timing.heartbeat_ms, timing.election_timeout_ms),
            (250, (500, 1000))
        );
        let config = parse(
            &[],
            &[
                ("ZEEBE_BROKER_CLUSTER_HEARTBEATINTERVAL", "100ms"),
                ("ZEEBE_BROKER_CLUSTER_ELECTIONTIMEOUT", "2500ms"),
            ],
        )
        .expect("parse");
        let timing = config.raft_timing().expect("timing");
        assert_eq!(
            (timing.heartbeat_ms, timing.election_timeout_ms),
            (100, (1250, 2500))
        );
        let config = parse(&["--election-timeout", "500ms"], &[]).expect("parse");
        let error = config.cluster().expect_err("shorter than three heartbeats");
        assert_eq!(error.setting, "election-timeout");
        assert!(
            error.reason.contains("three heartbeat intervals"),
            "{error}"
        );
    }

    #[test]
    fn flags_and_beelines_own_names_win_over_zeebes() {
        let config = parse(
            &["--node-id", "1"],
            &[
                ("ZEEBE_BROKER_CLUSTER_NODEID", "2"),
                ("ZEEBE_BROKER_CLUSTER_PARTITIONSCOUNT", "6"),
                ("BEELINE_PARTITIONS", "4"),
            ],
        );
        // BEELINE_PARTITIONS is read by clap from the real environment, not this test's: only
        // check that the Zeebe variable was left out for it.
        let config = config.expect("parse");
        assert_eq!(config.node_id, 1, "the flag wins");
        assert_ne!(config.partitions, 6, "Beeline's own variable wins");
    }

    #[test]
    fn defaults_are_a_single_broker_on_26502() {
        let config = parse(&[], &[]).expect("parse");
        assert_eq!(
            (
                config.node_id,
                config.cluster_size,
                config.replication_factor
            ),
            (0, 1, 1)
        );
        assert!(config.contact_points.is_empty());
        assert_eq!(config.internal_port, 26502);
        assert!(config.cluster().is_ok());
    }

    #[test]
    fn zeebes_disk_settings_set_the_watermarks_in_springs_units() {
        let config = parse(
            &[],
            &[
                ("ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING", "5GB"),
                ("ZEEBE_BROKER_DATA_DISK_FREESPACE_REPLICATION", "512MB"),
            ],
        )
        .expect("parse");
        assert_eq!(
            config.disk_free_min.0,
            Some(5 << 30),
            "Spring's GB is 1024^3"
        );
        assert_eq!(config.disk_free_replication_min.0, Some(512 << 20));
        let config = parse(
            &[],
            &[
                ("ZEEBE_BROKER_DATA_DISK_ENABLEMONITORING", "false"),
                ("ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING", "5GB"),
            ],
        )
        .expect("parse");
        assert_eq!(
            (config.disk_free_min.0, config.disk_free_replication_min.0),
            (None, None),
            "monitoring off turns both off"
        );
        let config = parse(
            &[],
            &[
                ("ZEEBE_BROKER_DATA_DISK_ENABLEMONITORING", "true"),
                ("ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING", "3GB"),
            ],
        )
        .expect("parse");
        assert_eq!(config.disk_free_min.0, Some(3 << 30));
        assert_eq!(
            config.disk_free_replication_min.0,
            Some(1 << 30),
            "the default"
        );
        let config = parse(
            &["--disk-free-min", "4GiB"],
            &[("ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING", "5GB")],
        )
        .expect("parse");
        assert_eq!(config.disk_free_min.0, Some(4 << 30), "the flag wins");
        let error = parse(
            &[],
            &[("ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING", "lots")],
        )
        .unwrap_err();
        assert!(
            error.starts_with("ZEEBE_BROKER_DATA_DISK_FREESPACE_PROCESSING (--disk-free-min):"),
            "{error}"
        );
        assert_eq!(spring_size("1TB"), Some(1 << 40));
        assert_eq!(spring_size("123"), Some(123));
        assert_eq!(spring_size("2gb"), Some(2 << 30));
        assert_eq!(spring_size("1.5GB"), None);
        assert_eq!(spring_size("99999999999TB"), None, "too large");
    }

    #[test]
    fn a_bad_value_names_zeebes_variable() {
        let error = parse(&[], &[("ZEEBE_BROKER_CLUSTER_NODEID", "first")]).unwrap_err();
        assert!(
            error.starts_with("ZEEBE_BROKER_CLUSTER_NODEID (--node-id):"),
            "{error}"
        );
    }

    #[test]
    fn brokers_without_replication_run_and_partial_replication_is_refused() {
        let config = parse(
            &[
                "--cluster-size",
                "3",
                "--replication-factor",
                "1",
                "--contact-points",
                "b0:26502,b1:26502,b2:26502",
            ],
            &[],
        )
        .expect("parse");
        assert!(
            config.cluster().is_ok(),
            "three brokers without replication run"
        );
        let config = parse(&["--replication-factor", "2"], &[]).expect("parse");
        let error = config.cluster().unwrap_err().to_string();
        assert!(error.starts_with("--replication-factor:"), "{error}");
        let config = parse(&["--internal-port", "26500"], &[]).expect("parse");
        let error = config.cluster().unwrap_err().to_string();
        assert!(error.contains("--grpc-port"), "{error}");
    }
}
