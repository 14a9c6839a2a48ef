//! The node's settings. Every setting has a documented default and can be given as a flag, as
//! an environment variable `BEELINE_<NAME>` or in a YAML file (`--config`, `config_file.rs`);
//! a flag wins over the environment, which wins over the file.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use beeline_cluster::{ClusterSettings, RaftTiming, SettingsError};
use beeline_gateway::backpressure::{BACKPRESSURE_FORMS, BackpressureConfig};
use beeline_stream::FlushPolicy;
use beeline_units::{parse_duration, parse_size};

#[derive(clap::Args, Debug, Clone)]
pub struct BrokerConfig {
    /// A YAML file of settings (`partitions: 3`, `memory-limit: 512MiB`, ...: the flags'
    /// names); flags and environment variables override it.
    #[arg(long, env = "BEELINE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Directory for the partitions' logs, state and snapshots.
    #[arg(long, env = "BEELINE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Number of partitions on this node (1 to 8191).
    #[arg(long, env = "BEELINE_PARTITIONS", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=8191))]
    pub partitions: u16,

    /// This broker's id in the cluster, 0 to cluster-size - 1.
    #[arg(long, env = "BEELINE_NODE_ID", default_value_t = 0)]
    pub node_id: u64,

    /// Number of brokers in the cluster. Partitions are placed on them round-robin; a
    /// replication factor of 1 (each partition on one broker) or equal to the cluster size
    /// (every broker holds a replica of every partition).
    #[arg(long, env = "BEELINE_CLUSTER_SIZE", default_value_t = 1)]
    pub cluster_size: u32,

    /// Replicas of each partition, 1 to cluster-size.
    #[arg(long, env = "BEELINE_REPLICATION_FACTOR", default_value_t = 1)]
    pub replication_factor: u32,

    /// Internal addresses (host:26502), comma-separated, of other brokers to join through; the
    /// rest of the cluster is learnt from them. Empty for a single broker.
    #[arg(long, env = "BEELINE_CONTACT_POINTS", value_delimiter = ',')]
    pub contact_points: Vec<String>,

    /// Port of the internal API: Raft and broker-to-broker traffic.
    #[arg(long, env = "BEELINE_INTERNAL_PORT", default_value_t = beeline_cluster::settings::DEFAULT_INTERNAL_PORT)]
    pub internal_port: u16,

    /// How often a partition's leader sends heartbeats to its followers (Zeebe's
    /// `heartbeatInterval`): a duration like 250ms.
    #[arg(long, env = "BEELINE_HEARTBEAT_INTERVAL", default_value = "250ms", value_parser = parse_duration)]
    pub heartbeat_interval: Duration,

    /// How long a follower that hears nothing from its leader waits before it elects (Zeebe's
    /// `electionTimeout`): after the leader's lease of one election timeout, half to one more
    /// at random, so 1.5 to 2 election timeouts after the leader's last message; an isolated
    /// leader takes no new commands one election timeout after its quorum last answered. At
    /// least three heartbeat intervals. Shorter fails over sooner; too short for a busy
    /// machine's stalls elects without cause (`beeline_partition_elections_total` counts).
    #[arg(long, env = "BEELINE_ELECTION_TIMEOUT", default_value = "1000ms", value_parser = parse_duration)]
    pub election_timeout: Duration,

    /// Priority election (Zeebe's `enablePriorityElection`): each partition's replicas wait
    /// for an election in bands by their priority in the placement, so the primary stands first
    /// and leadership spreads over the brokers. `false`: every replica waits anywhere in the
    /// range, and leaders fall where the elections' randomness puts them.
    #[arg(long, env = "BEELINE_PRIORITY_ELECTION", default_value_t = true,
          action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub priority_election: bool,

    /// The cluster's name: brokers configured with different names do not join each other.
    #[arg(long, env = "BEELINE_CLUSTER_NAME", default_value = beeline_cluster::settings::DEFAULT_CLUSTER_NAME)]
    pub cluster_name: String,

    /// The host other brokers and clients reach this broker at (the topology reports it, and
    /// the other brokers connect to its internal port there). Default: --host, or this
    /// machine's name when --host is 0.0.0.0.
    #[arg(long, env = "BEELINE_ADVERTISED_HOST")]
    pub advertised_host: Option<String>,

    /// Address the node's servers listen on.
    #[arg(long, env = "BEELINE_HOST", default_value = "0.0.0.0")]
    pub host: IpAddr,

    /// Port of the Zeebe gRPC gateway.
    #[arg(long, env = "BEELINE_GRPC_PORT", default_value_t = 26500)]
    pub grpc_port: u16,

    /// Largest gRPC request (and response message): a size like 4MiB, from 1KiB to 1GiB.
    /// Larger requests are refused with RESOURCE_EXHAUSTED.
    #[arg(long, env = "BEELINE_GRPC_MAX_MESSAGE_SIZE", default_value = "4MiB",
          value_parser = parse_message_size)]
    pub grpc_max_message_size: u64,

    /// The per-partition limit on commands in flight, beyond which requests are refused with
    /// RESOURCE_EXHAUSTED: `aimd` (adapts to commit latency), `fixed:<limit>`, `vegas`, or
    /// `off`; parameters as in `aimd:initial=100,min=1,max=1000,expected-rtt=200ms,backoff=0.9`
    /// or `vegas:alpha=3,beta=6,initial=20,max=1000`.
    #[arg(long, env = "BEELINE_BACKPRESSURE", default_value = "aimd", value_parser = parse_backpressure)]
    pub backpressure: BackpressureConfig,

    /// Port of the REST API: Camunda 8.8's Orchestration Cluster API under `/v2`.
    #[arg(long, env = "BEELINE_REST_PORT", default_value_t = 8080)]
    pub rest_port: u16,

    /// TLS for the gRPC and REST APIs: the server's certificate chain, a PEM file (its own
    /// certificate first). Given with `--tls-private-key`, both APIs take TLS connections only;
    /// without the two (the default), they speak plaintext. The monitoring port stays plaintext.
    #[arg(
        long,
        env = "BEELINE_TLS_CERTIFICATE",
        value_name = "FILE",
        requires = "tls_private_key"
    )]
    pub tls_certificate: Option<PathBuf>,

    /// The private key of `--tls-certificate`, a PEM file (PKCS#8, PKCS#1 or SEC1).
    #[arg(
        long,
        env = "BEELINE_TLS_PRIVATE_KEY",
        value_name = "FILE",
        requires = "tls_certificate"
    )]
    pub tls_private_key: Option<PathBuf>,

    /// Basic authentication on both APIs: the users, as `name:password` separated by commas.
    /// Off by default (everyone may call, as in Camunda's development setup); a call without
    /// valid credentials gets UNAUTHENTICATED (HTTP 401).
    #[arg(long, env = "BEELINE_AUTH_BASIC_USERS", value_name = "USER:PASSWORD,...",
          value_parser = parse_users, conflicts_with = "auth_oidc_jwks")]
    pub auth_basic_users: Option<Users>,

    /// OIDC authentication on both APIs: bearer tokens (JWTs) are checked against the keys of
    /// this JWKS, a file or an `http://` or `https://` URL (read at start, and again when a
    /// token names an unknown key). Off by default.
    #[arg(long, env = "BEELINE_AUTH_OIDC_JWKS", value_name = "FILE|URL")]
    pub auth_oidc_jwks: Option<String>,

    /// Certificate authorities (a PEM file) trusted for an `https://` JWKS besides the
    /// system's (default: the system's only; `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured).
    #[arg(
        long,
        env = "BEELINE_AUTH_OIDC_JWKS_CA",
        value_name = "FILE",
        requires = "auth_oidc_jwks"
    )]
    pub auth_oidc_jwks_ca: Option<PathBuf>,

    /// The issuer (`iss`) OIDC tokens must name (default: any).
    #[arg(long, env = "BEELINE_AUTH_OIDC_ISSUER", requires = "auth_oidc_jwks")]
    pub auth_oidc_issuer: Option<String>,

    /// An audience (`aud`) OIDC tokens must name (default: any).
    #[arg(long, env = "BEELINE_AUTH_OIDC_AUDIENCE", requires = "auth_oidc_jwks")]
    pub auth_oidc_audience: Option<String>,

    /// The claim of an OIDC token that names its user, the principal tenants are assigned to
    /// (Camunda's `usernameClaim`).
    #[arg(long, env = "BEELINE_AUTH_OIDC_USERNAME_CLAIM", default_value = "sub")]
    pub auth_oidc_username_claim: String,

    /// The claim of an OIDC token that names its client (Camunda's `clientIdClaim`, such as
    /// `client_id` or `azp`); when set and a token carries it, the client is the principal.
    #[arg(long, env = "BEELINE_AUTH_OIDC_CLIENT_ID_CLAIM")]
    pub auth_oidc_client_id_claim: Option<String>,

    /// Multi-tenancy: every request names the tenant it acts for (Zeebe's `tenantId`), which
    /// the caller must be assigned to (`--tenant-assignments`); deployments, instances, jobs,
    /// messages and signals of one tenant never reach another. Needs authentication. Off by
    /// default: everything belongs to the tenant `<default>`, and a request naming another is
    /// refused.
    #[arg(long, env = "BEELINE_MULTI_TENANCY", default_value_t = false,
          action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub multi_tenancy: bool,

    /// Which principals (basic users; OIDC clients or users) may act for which tenants:
    /// `principal=tenant+tenant,...`, with `*` for every authenticated principal, e.g.
    /// `alice=tenant-a+<default>,worker-b=tenant-b`.
    #[arg(long, env = "BEELINE_TENANT_ASSIGNMENTS", value_name = "PRINCIPAL=TENANT+...,...",
          value_parser = parse_assignments, requires = "multi_tenancy")]
    pub tenant_assignments: Option<Assignments>,

    /// Port of health, readiness and Prometheus metrics.
    #[arg(long, env = "BEELINE_MONITORING_PORT", default_value_t = 9600)]
    pub monitoring_port: u16,

    /// Memory of the whole node: a size like 256MiB, 1GiB or 500MB. Half of it is the state's
    /// (each partition's write-back buffer, and one RocksDB cache for blocks, indexes, filters
    /// and memtables shared by all partitions); the rest is headroom for requests in flight,
    /// queues and the allocator.
    #[arg(long, env = "BEELINE_MEMORY_LIMIT", default_value = "256MiB", value_parser = parse_size)]
    pub memory_limit: u64,

    /// When the log is synced to disk: `immediate` (every write, grouped; safe), `delayed:<duration>`
    /// (at most once per duration; answers still wait for it) or `none` (never; the OS decides,
    /// a power loss can lose acknowledged work).
    #[arg(long, env = "BEELINE_LOG_FLUSH", default_value = "immediate", value_parser = parse_flush)]
    pub log_flush: FlushPolicy,

    /// Size of one log segment file, preallocated: a size like 128MiB (at least 1MiB).
    #[arg(long, env = "BEELINE_LOG_SEGMENT_SIZE", default_value = "128MiB", value_parser = parse_segment_size)]
    pub log_segment_size: u64,

    /// How often each partition takes a snapshot (then compacts its log): a duration like 5m,
    /// 30s or 1h, or `off`.
    #[arg(long, env = "BEELINE_SNAPSHOT_PERIOD", default_value = "5m", value_parser = parse_period)]
    pub snapshot_period: Period,

    /// Each partition also takes a snapshot (then compacts its log) as soon as the log
    /// written since its latest one reaches this size: a size like 256MiB, or `off` (by the
    /// period only). It bounds a partition's log on disk, and its replay after a restart,
    /// under any rate; a Raft replica keeps the entries its peers still need besides.
    #[arg(long, env = "BEELINE_SNAPSHOT_LOG_SIZE", default_value = "256MiB", value_parser = parse_size_or_off)]
    pub snapshot_log_size: SizeOrOff,

    /// Free space the data directory's file system must keep for processing: a size like
    /// 2GiB, or `off`. Below it, new commands are refused with RESOURCE_EXHAUSTED (HTTP 503)
    /// saying the disk is full, and timers wait, while snapshots and log compaction go on;
    /// above it again, service resumes by itself. Measured every second.
    #[arg(long, env = "BEELINE_DISK_FREE_MIN", default_value = "2GiB", value_parser = parse_size_or_off)]
    pub disk_free_min: SizeOrOff,

    /// Free space a replicated broker keeps for what it already holds: a size like 1GiB
    /// (less than --disk-free-min), or `off`. Below it, the broker takes no replicated
    /// entries and no snapshots from its partitions' leaders (they retry), its replicas fall
    /// behind while the others go on, and they catch up by themselves once space is above it
    /// again. Measured every second, with --disk-free-min.
    #[arg(long, env = "BEELINE_DISK_FREE_REPLICATION_MIN", default_value = "1GiB", value_parser = parse_size_or_off)]
    pub disk_free_replication_min: SizeOrOff,

    /// Worker threads (default: the number of CPU cores).
    #[arg(long, env = "BEELINE_THREADS")]
    pub threads: Option<usize>,

    /// Secondary storage, which exporters feed and the REST API's searches read:
    /// `embedded` (one SQLite file under the data directory, within the memory limit),
    /// `postgres` (a PostgreSQL database, at --secondary-storage-url) or `none` (no read side:
    /// searches answer 503, the engine runs alone).
    #[arg(long, env = "BEELINE_SECONDARY_STORAGE", default_value = "embedded",
          value_parser = parse_secondary_storage)]
    pub secondary_storage: SecondaryStorage,

    /// The PostgreSQL database of `--secondary-storage postgres`:
    /// `postgresql://user:password@host:port/database` (or libpq's `host=... dbname=...`).
    #[arg(long, env = "BEELINE_SECONDARY_STORAGE_URL")]
    pub secondary_storage_url: Option<String>,

    /// Finished process instances (with their elements, variables, jobs, incidents) older
    /// than this leave secondary storage: a duration like 24h, or `off`.
    #[arg(long, env = "BEELINE_RETENTION_AGE", default_value = "168h", value_parser = parse_period)]
    pub retention_age: Period,

    /// At most this many finished process instances stay in secondary storage (the oldest
    /// leave first), or `off`.
    #[arg(long, env = "BEELINE_RETENTION_MAX_INSTANCES", default_value = "1000000",
          value_parser = parse_count)]
    pub retention_max_instances: Count,
}

/// Which principals may act for which tenants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignments(pub std::collections::HashMap<String, Vec<String>>);

fn parse_assignments(text: &str) -> Result<Assignments, String> {
    beeline_gateway::TenancyConfig::parse_assignments(text).map(Assignments)
}

/// Basic authentication's users: name → password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Users(pub std::collections::HashMap<String, String>);

fn parse_users(text: &str) -> Result<Users, String> {
    let mut users = std::collections::HashMap::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, password) = entry
            .split_once(':')
            .filter(|(name, password)| !name.is_empty() && !password.is_empty())
            .ok_or_else(|| format!("'{entry}' is not name:password"))?;
        users.insert(name.to_owned(), password.to_owned());
    }
    if users.is_empty() {
        return Err("no users given (name:password, separated by commas)".into());
    }
    Ok(Users(users))
}

/// Where the read side keeps what the exporters write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecondaryStorage {
    Embedded,
    Postgres,
    None,
}

const SECONDARY_STORAGE_FORMS: &str = "one of: embedded, postgres, none";

fn parse_secondary_storage(text: &str) -> Result<SecondaryStorage, String> {
    match text.trim() {
        "embedded" => Ok(SecondaryStorage::Embedded),
        "postgres" | "postgresql" => Ok(SecondaryStorage::Postgres),
        "none" => Ok(SecondaryStorage::None),
        other => Err(format!(
            "'{other}' is not a secondary storage; expected {SECONDARY_STORAGE_FORMS}"
        )),
    }
}

/// A count that can be switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub Option<u64>);

fn parse_count(text: &str) -> Result<Count, String> {
    match text.trim() {
        "off" | "none" => Ok(Count(None)),
        other => other
            .parse()
            .map(|n| Count(Some(n)))
            .map_err(|_| format!("'{other}' is not a count; expected a whole number, or `off`")),
    }
}

/// What a broker with Raft groups holds beyond a single node: openraft's runtime statistics
/// compute their histograms' scales once per process (28 MiB with base2histogram 0.2.3, found
/// with jemalloc's heap profile of a broker), the groups' own buffers and tasks, and under an
/// overload the gateway's side of the cluster (forwarded commands, their answers, the
/// allocator's pages around them). Measured on three brokers at 256 MiB after a minute at
/// 2,000/s and a minute at 4,556/s (far past their highest rate): broker 0, the gateway, held
/// 158 MiB besides RocksDB's cache at its peak, a single broker about 83 MiB.
pub const REPLICATION_BASELINE: u64 = 80 << 20;

impl BrokerConfig {
    /// The state's share of the memory limit (write-back buffers, RocksDB's cache and
    /// memtables): half of it, or in a broker with Raft groups half of what is left after
    /// [`REPLICATION_BASELINE`]. The other half covers the process itself, which holds about
    /// 20 MiB idle and grows with requests in flight, which backpressure bounds (and, for
    /// commands forwarded to other brokers, [`Self::forwarding_memory`]).
    pub fn state_memory(&self) -> u64 {
        let replicated = self.cluster_size > 1 && self.replication_factor > 1;
        let baseline = if replicated { REPLICATION_BASELINE } else { 0 };
        self.memory_limit.saturating_sub(baseline) / 2
    }

    /// What the gateway may hold of commands forwarded to partition leaders on other brokers
    /// while it awaits their answers: a sixteenth of the memory limit, out of the half that
    /// is not the state's.
    pub fn forwarding_memory(&self) -> u64 {
        self.memory_limit / 16
    }

    /// What the broker's Raft groups keep of their latest entries to replicate them from
    /// memory: a sixty-fourth of the memory limit, out of the half that is not the state's,
    /// shared by the broker's replicas.
    pub fn recent_entries_memory(&self) -> u64 {
        self.memory_limit / 64
    }

    /// The embedded secondary storage's share of the memory limit (its page caches and
    /// SQLite's heap): an eighth, out of the half that is not the state's.
    pub fn secondary_storage_memory(&self) -> u64 {
        match self.secondary_storage {
            SecondaryStorage::Embedded => self.memory_limit / 8,
            SecondaryStorage::Postgres | SecondaryStorage::None => 0,
        }
    }

    /// The cluster settings, checked against each other and against the other ports, and
    /// against what this build can run.
    pub fn cluster(&self) -> Result<ClusterSettings, SettingsError> {
        let settings = ClusterSettings {
            node_id: self.node_id,
            cluster_size: self.cluster_size,
            partitions: u32::from(self.partitions),
            replication_factor: self.replication_factor,
            contact_points: self
                .contact_points
                .iter()
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect(),
            internal_port: self.internal_port,
            cluster_name: self.cluster_name.clone(),
        };
        for (port, setting) in [
            (self.grpc_port, "grpc-port"),
            (self.rest_port, "rest-port"),
            (self.monitoring_port, "monitoring-port"),
        ] {
            if port == self.internal_port {
                return Err(SettingsError {
                    setting: "internal-port",
                    reason: format!("{port} is also --{setting}"),
                });
            }
        }
        settings.validate()?;
        self.raft_timing()?;
        if let (Some(replication), Some(processing)) =
            (self.disk_free_replication_min.0, self.disk_free_min.0)
            && replication >= processing
        {
            return Err(SettingsError {
                setting: "disk-free-replication-min",
                reason: format!(
                    "{replication} bytes is not less than --disk-free-min ({processing} bytes): \
                     a broker stops taking new commands before it stops taking replicated \
                     entries"
                ),
            });
        }
        Ok(settings)
    }

    /// The Raft groups' heartbeats and elections (`--heartbeat-interval`,
    /// `--election-timeout`).
    pub fn raft_timing(&self) -> Result<RaftTiming, SettingsError> {
        let timing = RaftTiming::from_settings(self.heartbeat_interval, self.election_timeout)
            .map_err(|reason| SettingsError {
                setting: "election-timeout",
                reason,
            })?;
        Ok(RaftTiming {
            priority_election: self.priority_election,
            ..timing
        })
    }

    pub fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1)
    }
}

fn parse_message_size(text: &str) -> Result<u64, String> {
    let size = parse_size(text)?;
    if !(1 << 10..=1 << 30).contains(&size) {
        return Err(format!(
            "{size} bytes is out of range for a message size; expected 1KiB to 1GiB"
        ));
    }
    Ok(size)
}

fn parse_backpressure(text: &str) -> Result<BackpressureConfig, String> {
    text.parse().map_err(|e: String| {
        if e.contains(BACKPRESSURE_FORMS) {
            e
        } else {
            format!("{e}; expected {BACKPRESSURE_FORMS}")
        }
    })
}

fn parse_segment_size(text: &str) -> Result<u64, String> {
    let size = parse_size(text)?;
    if size < 1 << 20 {
        return Err(format!(
            "{size} bytes is too small for a log segment; expected at least 1MiB"
        ));
    }
    Ok(size)
}

/// A size that can be switched off (a minimum of free disk space, a log size to snapshot at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeOrOff(pub Option<u64>);

fn parse_size_or_off(text: &str) -> Result<SizeOrOff, String> {
    match text.trim() {
        "off" | "none" => Ok(SizeOrOff(None)),
        other => parse_size(other)
            .map(|size| SizeOrOff(Some(size)))
            .map_err(|e| format!("{e}, or `off`")),
    }
}

/// A duration that can be switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period(pub Option<Duration>);

fn parse_period(text: &str) -> Result<Period, String> {
    match text.trim() {
        "off" | "none" => Ok(Period(None)),
        other => parse_duration(other)
            .map(|d| Period(Some(d)))
            .map_err(|e| format!("{e}, or `off`")),
    }
}

fn parse_flush(text: &str) -> Result<FlushPolicy, String> {
    match text.trim() {
        "immediate" => Ok(FlushPolicy::Immediate),
        "none" => Ok(FlushPolicy::None),
        other => match other.strip_prefix("delayed:") {
            Some(delay) => parse_duration(delay).map(FlushPolicy::Delayed),
            None => Err(format!(
                "'{other}' is not a flush policy; expected one of: immediate, delayed:<duration> (e.g. delayed:5ms), none"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: BrokerConfig,
    }

    #[test]
    fn authentication_is_off_by_default_and_takes_users_or_a_jwks() {
        let config = Cli::try_parse_from(["beeline"]).unwrap().config;
        assert_eq!(config.auth_basic_users, None);
        assert_eq!(config.auth_oidc_jwks, None);
        let config = Cli::try_parse_from(["beeline", "--auth-basic-users", "demo:demo, ann:x:y"])
            .unwrap()
            .config;
        let users = config.auth_basic_users.unwrap().0;
        assert_eq!(users["demo"], "demo");
        assert_eq!(users["ann"], "x:y");
        let error = Cli::try_parse_from(["beeline", "--auth-basic-users", "demo"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("'demo' is not name:password"), "{error}");
        let both = Cli::try_parse_from([
            "beeline",
            "--auth-basic-users",
            "a:b",
            "--auth-oidc-jwks",
            "jwks.json",
        ]);
        assert!(both.is_err(), "basic and OIDC at once");
    }

    #[test]
    fn tls_takes_a_certificate_and_its_key_together() {
        let config = Cli::try_parse_from(["beeline"]).unwrap().config;
        assert_eq!(
            (config.tls_certificate, config.tls_private_key),
            (None, None)
        );
        let config = Cli::try_parse_from([
            "beeline",
            "--tls-certificate",
            "server.pem",
            "--tls-private-key",
            "server.key",
        ])
        .unwrap()
        .config;
        assert_eq!(config.tls_certificate, Some("server.pem".into()));
        assert_eq!(config.tls_private_key, Some("server.key".into()));
        let error = Cli::try_parse_from(["beeline", "--tls-certificate", "server.pem"])
            .err()
            .expect("a certificate without its key")
            .to_string();
        assert!(error.contains("--tls-private-key"), "{error}");
    }

    #[test]
    fn the_states_share_of_the_memory_limit_leaves_room_for_a_replicated_brokers_baseline() {
        let single = Cli::try_parse_from(["beeline"]).unwrap().config;
        assert_eq!(single.state_memory(), 128 << 20);
        let replicated = Cli::try_parse_from([
            "beeline",
            "--cluster-size",
            "3",
            "--replication-factor",
            "3",
        ])
        .unwrap()
        .config;
        assert_eq!(replicated.state_memory(), (256 - 80) << 19);
        // Several brokers at factor 1 hold no Raft groups.
        let unreplicated = Cli::try_parse_from(["beeline", "--cluster-size", "3"])
            .unwrap()
            .config;
        assert_eq!(unreplicated.state_memory(), 128 << 20);
    }

    #[test]
    fn defaults_parse_and_bad_values_name_the_setting() {
        let config = Cli::try_parse_from(["beeline"]).unwrap().config;
        assert_eq!(config.partitions, 1);
        assert_eq!(config.monitoring_port, 9600);
        assert_eq!(config.memory_limit, 256 << 20);
        assert_eq!(
            config.snapshot_period,
            Period(Some(Duration::from_secs(300)))
        );
        assert_eq!(config.log_flush, FlushPolicy::Immediate);
        assert_eq!(config.grpc_port, 26500);
        assert_eq!(config.grpc_max_message_size, 4 << 20);
        assert_eq!(config.backpressure, BackpressureConfig::default());
        assert_eq!(config.secondary_storage, SecondaryStorage::Embedded);
        assert_eq!(
            config.retention_age,
            Period(Some(Duration::from_secs(7 * 24 * 3600)))
        );
        assert_eq!(config.retention_max_instances, Count(Some(1_000_000)));
        let error = Cli::try_parse_from(["beeline", "--secondary-storage", "mongodb"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("--secondary-storage") && error.contains("embedded, postgres, none"),
            "{error}"
        );
        let config = Cli::try_parse_from([
            "beeline",
            "--secondary-storage",
            "none",
            "--retention-age",
            "off",
            "--retention-max-instances",
            "5",
        ])
        .unwrap()
        .config;
        assert_eq!(config.secondary_storage, SecondaryStorage::None);
        assert_eq!(config.retention_age, Period(None));
        assert_eq!(config.retention_max_instances, Count(Some(5)));
        assert_eq!(config.disk_free_min, SizeOrOff(Some(2 << 30)));

        let config =
            Cli::try_parse_from(["beeline", "--snapshot-period", "off", "--log-flush", "none"])
                .unwrap()
                .config;
        assert_eq!(config.snapshot_period, Period(None));
        assert_eq!(config.log_flush, FlushPolicy::None);
        assert_eq!(config.snapshot_log_size, SizeOrOff(Some(256 << 20)));
        let config = Cli::try_parse_from(["beeline", "--snapshot-log-size", "off"])
            .unwrap()
            .config;
        assert_eq!(config.snapshot_log_size, SizeOrOff(None));
        let config = Cli::try_parse_from(["beeline", "--snapshot-log-size", "64MiB"])
            .unwrap()
            .config;
        assert_eq!(config.snapshot_log_size, SizeOrOff(Some(64 << 20)));
        let config = Cli::try_parse_from(["beeline", "--disk-free-min", "off"])
            .unwrap()
            .config;
        assert_eq!(config.disk_free_min, SizeOrOff(None));
        assert_eq!(config.disk_free_replication_min, SizeOrOff(Some(1 << 30)));
        assert!(
            config.cluster().is_ok(),
            "no processing minimum to be below"
        );
        let config = Cli::try_parse_from(["beeline", "--disk-free-replication-min", "2GiB"])
            .unwrap()
            .config;
        let error = config.cluster().unwrap_err().to_string();
        assert!(
            error.contains("--disk-free-replication-min") && error.contains("--disk-free-min"),
            "{error}"
        );
        let config = Cli::try_parse_from([
            "beeline",
            "--disk-free-min",
            "4GiB",
            "--disk-free-replication-min",
            "2GiB",
        ])
        .unwrap()
        .config;
        assert!(config.cluster().is_ok());
        let error = Cli::try_parse_from(["beeline", "--disk-free-min", "full"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("--disk-free-min") && error.contains("`off`"),
            "{error}"
        );

        let error = Cli::try_parse_from(["beeline", "--memory-limit", "lots"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("--memory-limit"), "{error}");
        assert!(error.contains("MiB"), "{error}");
        let error = Cli::try_parse_from(["beeline", "--partitions", "0"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("--partitions"), "{error}");
        let error = Cli::try_parse_from(["beeline", "--log-flush", "often"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("--log-flush") && error.contains("immediate"),
            "{error}"
        );
        let error = Cli::try_parse_from(["beeline", "--backpressure", "gradient"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("--backpressure") && error.contains("fixed:<limit>"),
            "{error}"
        );
        let error = Cli::try_parse_from(["beeline", "--backpressure", "aimd:backoff=2"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("[0.5, 1)") && error.contains("vegas"),
            "{error}"
        );
        let error = Cli::try_parse_from(["beeline", "--grpc-max-message-size", "10"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("--grpc-max-message-size") && error.contains("1KiB to 1GiB"),
            "{error}"
        );
        let config = Cli::try_parse_from([
            "beeline",
            "--backpressure",
            "fixed:50",
            "--grpc-max-message-size",
            "16MiB",
        ])
        .unwrap()
        .config;
        assert_eq!(config.backpressure.to_string(), "fixed:50");
        assert_eq!(config.grpc_max_message_size, 16 << 20);
    }

    #[test]
    fn durations_and_flush_policies() {
        assert_eq!(parse_period("off"), Ok(Period(None)));
        assert_eq!(
            parse_flush("delayed:2ms"),
            Ok(FlushPolicy::Delayed(Duration::from_millis(2)))
        );
        assert!(
            parse_flush("sometimes")
                .unwrap_err()
                .contains("immediate, delayed:<duration>")
        );
    }
}
