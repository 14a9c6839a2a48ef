//! `beeline chaos` as the test command runs it: three brokers (3 partitions, replication
//! factor 3) under load, 3 partition leaders killed with SIGKILL and 1 broker isolated behind
//! the fault-injecting proxies, then the checker over the client's history and every replica:
//! nothing acknowledged lost, nothing applied twice, the replicas agreeing on the committed log
//! and on the state it gives. The long run (100 kills and 50 isolations) is the same command;
//! its figures are in docs/benchmarks.md.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::process::Command;

#[test]
fn three_brokers_survive_leader_kills_and_an_isolation_without_losing_or_doubling_work() {
    let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args(["chaos", "--kills", "3", "--isolations", "1"])
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
        stdout.contains("3 leader kills, 1 isolations"),
        "the report does not say 3 kills and 1 isolation were made:\n{stdout}"
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
    }
}
