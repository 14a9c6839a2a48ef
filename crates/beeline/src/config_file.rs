//! `--config <file.yaml>` (or `BEELINE_CONFIG`): broker settings from a YAML file.
//!
//! The file is a flat mapping from setting names (the flags without their dashes) to values:
//!
//! ```yaml
//! data-dir: /var/lib/beeline
//! partitions: 3
//! memory-limit: 512MiB
//! ```
//!
//! A flag wins over an environment variable, which wins over the file, which wins over the
//! default. The file's settings become flags placed before the command line's (clap lets a
//! later flag override an earlier one); settings whose environment variable is set are left
//! out. Unknown names, values that are not single scalars and invalid values are refused
//! with the file, the setting and the reason.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

const CONFIG_FLAG: &str = "config";

/// `args` (the whole command line) with the settings of the broker's config file inserted
/// after the `broker` subcommand. Unchanged when there is no config file.
pub fn with_file_settings(
    args: Vec<OsString>,
    broker: &clap::Command,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<OsString>, String> {
    if args.get(1).map(OsString::as_os_str) != Some(OsStr::new(broker.get_name())) {
        return Ok(args);
    }
    let Some(path) = config_path(&args[2..]).or_else(|| env("BEELINE_CONFIG")) else {
        return Ok(args);
    };
    let path = Path::new(&path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))?;
    let settings = parse(&text).map_err(|e| format!("config file {}: {e}", path.display()))?;
    let mut flags = Vec::new();
    for (name, value) in settings {
        let arg = broker
            .get_arguments()
            .find(|a| a.get_long() == Some(name.as_str()) && name != CONFIG_FLAG)
            .ok_or_else(|| {
                format!(
                    "config file {}: unknown setting '{name}'; known settings: {}",
                    path.display(),
                    known_settings(broker)
                )
            })?;
        let flag = OsString::from(format!("--{name}={value}"));
        // Checked alone, so an error names the file and the setting.
        if let Err(e) = broker
            .clone()
            .try_get_matches_from([OsString::from(broker.get_name()), flag.clone()])
        {
            let reason = e.to_string();
            let reason = reason.lines().next().unwrap_or_default();
            let reason = reason.trim_start_matches("error: ");
            return Err(format!(
                "config file {}: '{name}': {reason}",
                path.display()
            ));
        }
        let overridden_by_env = arg.get_env().is_some_and(|var| {
            var.to_str()
                .and_then(&env)
                .is_some_and(|value| !value.is_empty())
        });
        if !overridden_by_env {
            flags.push(flag);
        }
    }
    let mut args = args;
    args.splice(2..2, flags);
    Ok(args)
}

/// The value of `--config` on the command line, if given.
fn config_path(args: &[OsString]) -> Option<OsString> {
    let flag = format!("--{CONFIG_FLAG}");
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        if text == "--" {
            return None;
        }
        if text == flag {
            return args.next().cloned();
        }
        if let Some(value) = text.strip_prefix(&format!("{flag}=")) {
            return Some(value.into());
        }
    }
    None
}

/// The file's settings, as (name, value) in file order.
fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let documents = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    let root = match documents.as_slice() {
        [] => return Ok(Vec::new()),
        [root] => root,
        _ => return Err("holds several YAML documents; expected one mapping".into()),
    };
    let mapping = match root {
        Yaml::Hash(mapping) => mapping,
        Yaml::Null => return Ok(Vec::new()),
        _ => return Err("expected a mapping of setting names to values".into()),
    };
    mapping
        .iter()
        .map(|(name, value)| {
            let name = match name {
                Yaml::String(name) => name.replace('_', "-"),
                other => return Err(format!("a setting name must be a string, not {other:?}")),
            };
            let value = match value {
                Yaml::String(s) | Yaml::Real(s) => s.clone(),
                Yaml::Integer(i) => i.to_string(),
                Yaml::Boolean(b) => b.to_string(),
                _ => return Err(format!("'{name}' must be a single value (text or number)")),
            };
            Ok((name, value))
        })
        .collect()
}

fn known_settings(broker: &clap::Command) -> String {
    broker
        .get_arguments()
        .filter_map(clap::Arg::get_long)
        .filter(|long| *long != CONFIG_FLAG)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::config::BrokerConfig;

    #[derive(Parser)]
    #[command(name = "beeline")]
    enum Cli {
        #[command(args_override_self = true)]
        Broker(BrokerConfig),
    }

    fn broker() -> clap::Command {
        Cli::command()
            .find_subcommand("broker")
            .expect("broker")
            .clone()
    }

    /// The settings `file` and `args` give, with `env` as the environment settings set (they
    /// only leave the file's settings out here: clap reads the real environment).
    fn config(file: &str, args: &[&str], env: &[&str]) -> Result<BrokerConfig, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("beeline.yaml");
        std::fs::write(&path, file).expect("write");
        let args: Vec<OsString> = ["beeline", "broker", "--config", path.to_str().unwrap()]
            .iter()
            .chain(args)
            .map(OsString::from)
            .collect();
        let args = with_file_settings(args, &broker(), |k| {
            env.contains(&k).then(|| OsString::from("set"))
        })?;
        let Cli::Broker(config) = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
        Ok(config)
    }

    #[test]
    fn file_settings_apply_below_environment_and_flags() {
        let file = "partitions: 3\ngrpc-port: 26600\nmemory_limit: 64MiB\nsnapshot-period: 10s\n";
        let c = config(file, &[], &[]).unwrap();
        assert_eq!(
            (c.partitions, c.grpc_port, c.memory_limit),
            (3, 26600, 64 << 20)
        );
        // A flag wins over the file; a setting in the environment leaves the file's out.
        let c = config(file, &["--grpc-port", "26700"], &["BEELINE_PARTITIONS"]).unwrap();
        assert_eq!((c.partitions, c.grpc_port), (1, 26700));
        assert_eq!(c.memory_limit, 64 << 20);
        // Settings the file leaves out keep their defaults.
        assert_eq!(c.monitoring_port, 9600);
        // An empty file is no settings.
        assert_eq!(config("", &[], &[]).unwrap().partitions, 1);
    }

    #[test]
    fn bad_files_are_refused_naming_file_and_setting() {
        let error = config("partitions: 0\n", &[], &[]).unwrap_err();
        assert!(
            error.contains("beeline.yaml") && error.contains("'partitions'") && error.contains('0'),
            "{error}"
        );
        let error = config("partition: 3\n", &[], &[]).unwrap_err();
        assert!(
            error.contains("unknown setting 'partition'") && error.contains("partitions"),
            "{error}"
        );
        let error = config("partitions: [1, 2]\n", &[], &[]).unwrap_err();
        assert!(error.contains("must be a single value"), "{error}");
        let error = config("- partitions\n", &[], &[]).unwrap_err();
        assert!(error.contains("expected a mapping"), "{error}");
        let error = config("partitions: 3\n  bad: indent\n", &[], &[]).unwrap_err();
        assert!(error.contains("line"), "{error}");
        let error = config("memory-limit: lots\n", &[], &[]).unwrap_err();
        assert!(
            error.contains("'memory-limit'") && error.contains("lots"),
            "{error}"
        );
    }

    #[test]
    fn the_config_flag_is_found_on_the_command_line() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            config_path(&args(&["--config", "a.yaml"])),
            Some("a.yaml".into())
        );
        assert_eq!(
            config_path(&args(&["--config=b.yaml"])),
            Some("b.yaml".into())
        );
        assert_eq!(config_path(&args(&["--", "--config", "c"])), None);
        let missing = with_file_settings(
            args(&["beeline", "broker", "--config", "/nonexistent/x.yaml"]),
            &broker(),
            |_| None,
        )
        .unwrap_err();
        assert!(missing.contains("/nonexistent/x.yaml"), "{missing}");
        // Other subcommands are left alone.
        let bench = args(&["beeline", "bench", "--config", "x"]);
        assert_eq!(
            with_file_settings(bench.clone(), &broker(), |_| None).unwrap(),
            bench
        );
    }
}
