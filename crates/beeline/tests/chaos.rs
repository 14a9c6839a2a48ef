//! `beeline chaos` as the test command runs it: three brokers (3 partitions, replication
//! factor 3, a snapshot every 5 s) under load, 3 partition leaders killed with SIGKILL, 1
//! broker isolated behind the fault-injecting proxies, 1 broker's data wiped and 1 broker's
//! files damaged, then the checker over the client's history, every replica and the archived
//! journal segments: nothing acknowledged lost, nothing applied twice, the replicas agreeing
//! on the committed log, and every replica's state and every snapshot it holds equal to the
//! state of the whole committed log replayed. The long run is the same command; its figures
//! are in docs/benchmarks.md.
//!
//! Beside it, three brokers started as a user starts them hold one TCP connection per pair
//! between their internal ports, also after one of them restarts.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Broker, free_port};

#[test]
fn three_brokers_survive_leader_kills_and_an_isolation_without_losing_or_doubling_work() {
    let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args([
            "chaos",
            "--kills",
            "3",
            "--isolations",
            "1",
            "--wipes",
            "1",
            "--corruptions",
            "1",
            "--snapshot-period",
            "5s",
        ])
        .output()
        .expect("beeline chaos runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "beeline chaos failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("3 leader kills, 1 isolations, 1 wipes, 1 corruptions"),
        "the report does not say 3 kills, 1 isolation, 1 wipe and 1 corruption were made:\n{stdout}"
    );
    assert!(
        stdout.contains("restarted it: its replicas were members again"),
        "no wiped or damaged broker was repaired:\n{stdout}"
    );
    assert!(
        stdout.contains(": 0 lost, 0 duplicated, 0 disagreements, 0 checks not made"),
        "the checker did not pass every check:\n{stdout}"
    );
    // The load ran, and the checker read the committed logs of three partitions.
    let starts: u64 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("acknowledged: "))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    assert!(starts > 50, "fewer than 50 acknowledged starts:\n{stdout}");
    for partition in 1..=3 {
        assert!(
            stdout.contains(&format!("partition {partition}: committed entries")),
            "partition {partition} was not checked:\n{stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "partition {partition}: the whole committed log 1..="
            )),
            "partition {partition}'s whole committed log was not put together:\n{stdout}"
        );
    }
    // Snapshots were taken and held against the replay of the committed log.
    let snapshots: usize = stdout
        .lines()
        .filter_map(|line| {
            line.strip_suffix(" snapshots held against its replay")?
                .rsplit("; ")
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert!(snapshots > 0, "no snapshot was checked:\n{stdout}");
}

/// The established TCP connections to `internal` ports (broker's internal port by broker),
/// each as (dialling broker, dialled broker), from `/proc/net/tcp` and the sockets each
/// broker's process holds; and how many connections the dialled ends count (each connection
/// appears once from each end).
fn internal_connections(internal: &[u16], pids: &[u32]) -> (Vec<(usize, usize)>, usize) {
    let mut owner = HashMap::new();
    for (broker, pid) in pids.iter().enumerate() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            if let Some(inode) = link
                .to_string_lossy()
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
            {
                owner.insert(inode.to_owned(), broker);
            }
        }
    }
    let port = |address: &str| {
        address
            .rsplit_once(':')
            .and_then(|(_, port)| u16::from_str_radix(port, 16).ok())
            .unwrap_or(0)
    };
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let (mut dialled, mut accepted) = (Vec::new(), 0);
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // local address, remote address, state (01: established), ..., inode
        let [_, local, remote, "01", _, _, _, _, _, inode, ..] = fields.as_slice() else {
            continue;
        };
        if internal.contains(&port(local)) {
            accepted += 1;
        }
        if let Some(to) = internal.iter().position(|&p| p == port(remote))
            && let Some(&from) = owner.get(*inode)
        {
            dialled.push((from, to));
        }
    }
    dialled.sort_unstable();
    (dialled, accepted)
}

/// Waits until the brokers hold exactly one connection per pair, steadily for 3 s, and
/// returns the connections.
fn one_connection_per_pair(brokers: &[Broker], internal: &[u16]) -> Vec<(usize, usize)> {
    let pids: Vec<u32> = brokers.iter().map(Broker::pid).collect();
    let started = Instant::now();
    let mut steady_since: Option<Instant> = None;
    loop {
        let (dialled, accepted) = internal_connections(internal, &pids);
        let mut pairs = BTreeMap::new();
        for &(from, to) in &dialled {
            *pairs.entry((from.min(to), from.max(to))).or_insert(0) += 1;
        }
        let one_each = dialled.len() == 3
            && accepted == 3
            && pairs.len() == 3
            && pairs.values().all(|&n| n == 1);
        if !one_each {
            steady_since = None;
        } else if steady_since.get_or_insert_with(Instant::now).elapsed() >= Duration::from_secs(3)
        {
            return dialled;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the brokers do not settle on one connection per pair: dialled (from, to) \
             {dialled:?}, {accepted} counted at the internal ports"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Three brokers on one machine (3 partitions, factor 3, no secondary storage), each on an
/// internal port of its own.
struct ThreeBrokers {
    internal: Vec<u16>,
}

impl ThreeBrokers {
    fn new() -> Self {
        Self {
            internal: (0..3).map(|_| free_port()).collect(),
        }
    }

    /// Broker `node`'s flags, then `extra`.
    fn args(&self, node: usize, extra: &[&str]) -> Vec<String> {
        let contact = self
            .internal
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut args = [
            "--node-id",
            &node.to_string(),
            "--cluster-size",
            "3",
            "--partitions",
            "3",
            "--replication-factor",
            "3",
            "--contact-points",
            &contact,
            "--internal-port",
            &self.internal[node].to_string(),
            "--secondary-storage",
            "none",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|arg| arg.to_string()));
        args
    }
}

#[test]
fn three_broker_processes_hold_one_connection_per_pair_also_after_a_restart() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let three = ThreeBrokers::new();
    let internal = three.internal.clone();
    let spawn = |node: usize, ports: Option<(u16, u16, u16)>| {
        let args = three.args(node, &[]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (grpc, rest, monitoring) =
            ports.unwrap_or_else(|| (free_port(), free_port(), free_port()));
        Broker::spawn(
            &dir.path().join(format!("data-{node}")),
            &args,
            grpc,
            rest,
            monitoring,
        )
    };
    let mut brokers: Vec<Broker> = (0..3).map(|node| spawn(node, None)).collect();
    for broker in &mut brokers {
        broker.wait_ready().expect("the broker is ready");
    }
    let before = one_connection_per_pair(&brokers, &internal);
    println!("dialled (from, to): {before:?}");

    // A broker killed and started again on its data and ports: its old connections go with
    // its process, and its new start is reached over one connection per peer again.
    let ports = (brokers[2].grpc, brokers[2].rest, brokers[2].monitoring);
    brokers.pop();
    let mut restarted = spawn(2, Some(ports));
    restarted
        .wait_ready()
        .expect("the restarted broker is ready");
    brokers.push(restarted);
    let after = one_connection_per_pair(&brokers, &internal);
    println!("after broker 2 restarted, dialled (from, to): {after:?}");
}

/// A broker short of disk (its watermarks above any disk's size) reports its replicas
/// unhealthy in the topology every broker gives, as Zeebe's partitions report themselves out
/// of disk space; the other brokers' replicas stay healthy.
#[test]
fn a_broker_short_of_disk_shows_its_replicas_unhealthy_in_the_topology() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let three = ThreeBrokers::new();
    let mut brokers: Vec<Broker> = (0..3)
        .map(|node: usize| {
            let short = [
                "--disk-free-min",
                "100000GiB",
                "--disk-free-replication-min",
                "50000GiB",
            ];
            let args = three.args(node, if node == 2 { &short } else { &[] });
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            Broker::spawn(
                &dir.path().join(format!("data-{node}")),
                &args,
                free_port(),
                free_port(),
                free_port(),
            )
        })
        .collect();
    for broker in &mut brokers {
        broker.wait_ready().expect("the broker is ready");
    }
    // Each broker's health by partition, as broker 0's gateway gives them.
    let healths = || -> BTreeMap<(u64, u64), String> {
        let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
            .args(["status", "--json", "--gateway", &brokers[0].gateway()])
            .output()
            .expect("the beeline binary runs");
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(&output.stdout) else {
            return BTreeMap::new();
        };
        let mut healths = BTreeMap::new();
        for broker in json["brokers"].as_array().into_iter().flatten() {
            for partition in broker["partitions"].as_array().into_iter().flatten() {
                healths.insert(
                    (
                        broker["nodeId"].as_u64().unwrap_or(u64::MAX),
                        partition["partitionId"].as_u64().unwrap_or(u64::MAX),
                    ),
                    partition["health"].as_str().unwrap_or_default().to_string(),
                );
            }
        }
        healths
    };
    let expected: BTreeMap<(u64, u64), String> = (0..3u64)
        .flat_map(|node| {
            (1..=3u64).map(move |partition| {
                let health = if node == 2 { "UNHEALTHY" } else { "HEALTHY" };
                ((node, partition), health.to_string())
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = healths();
    while seen != expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        seen = healths();
    }
    assert_eq!(
        seen, expected,
        "each broker's replicas by (broker, partition)"
    );
}
