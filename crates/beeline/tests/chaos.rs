//! `beeline chaos` as the test command runs it: three brokers (3 partitions, replication
//! factor 3, a snapshot every 5 s) under load, 3 partition leaders killed with SIGKILL, 1
//! broker isolated behind the fault-injecting proxies, 1 broker's data wiped and 1 broker's
//! files damaged, then the checker over the client's history, every replica and the archived
//! journal segments: nothing acknowledged lost, nothing applied twice, the replicas agreeing
//! on the committed log, and every replica's state and every snapshot it holds equal to the
//! state of the whole committed log replayed. The long run is the same command; its figures
//! are in docs/benchmarks.md.
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
