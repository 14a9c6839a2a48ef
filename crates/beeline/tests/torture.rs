//! `beeline torture` as the test command runs it: 10 SIGKILLs of a loaded broker, at random
//! moments and as snapshots, compactions and segment rolls begin, with the check after every
//! restart that each acknowledged command's effect is there exactly once. The long run (100
//! kills and more) is the same command; its figures are in docs/benchmarks.md.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::process::Command;

#[test]
fn a_broker_killed_ten_times_under_load_loses_and_duplicates_nothing() {
    let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args(["torture", "--kills", "10"])
        .output()
        .expect("beeline torture runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "beeline torture failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("survived 10 SIGKILLs"),
        "the report does not say 10 kills were survived:\n{stdout}"
    );
    // The load ran: commands were acknowledged, and the checks looked at instances.
    let acknowledged: u64 = stdout
        .lines()
        .find(|line| line.contains("acknowledged commands;"))
        .and_then(|line| line.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    assert!(
        acknowledged > 100,
        "fewer than 100 acknowledged commands over 10 rounds:\n{stdout}"
    );
}
