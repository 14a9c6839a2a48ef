//! `beeline bench` against a running broker, as a user runs it: it deploys its model, starts
//! instances at the asked rate, completes their jobs, and reports what it measured.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::process::Command;

use common::Broker;

/// A broker on its defaults, with its data in a directory that lives as long as the test.
fn broker() -> (tempfile::TempDir, Broker) {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Broker::start(&dir.path().join("data"), &[]);
    (dir, broker)
}

/// Runs `beeline bench` with `args` (split at spaces) and `--json`: (its output, the report).
fn bench(args: &str) -> (String, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .arg("bench")
        .args(args.split_whitespace())
        .arg("--json")
        .output()
        .expect("beeline bench runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "beeline bench failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    let report = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("the last line is not JSON ({e}):\n{stdout}"));
    (stdout, report)
}

fn number(report: &serde_json::Value, path: &[&str]) -> f64 {
    let mut value = report;
    for key in path {
        value = &value[*key];
    }
    value
        .as_f64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {report}"))
}

/// A find-max report's steps: their rates, and whether each held.
fn steps(report: &serde_json::Value) -> (Vec<f64>, Vec<bool>) {
    let steps = report["find_max"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no find-max steps in {report}"));
    steps
        .iter()
        .map(|step| (number(step, &["rate"]), step["held"] == true))
        .unzip()
}

#[test]
fn a_run_reports_throughput_latency_and_the_brokers_memory() {
    let (_dir, broker) = broker();
    let gateway = broker.gateway();
    let pid = broker.pid();
    let (text, report) = bench(&format!(
        "--gateway {gateway} --rate 100 --duration 3s --payload 1KiB --broker-pid {pid}"
    ));
    // Every instance started was completed by the tool's workers, at about the asked rate.
    assert_eq!(
        number(&report, &["started"]),
        300.0,
        "100/s for 3 s:\n{text}"
    );
    assert_eq!(number(&report, &["completed"]), 300.0, "{text}");
    let completed_per_s = number(&report, &["completed_per_s"]);
    assert!((80.0..=110.0).contains(&completed_per_s), "{text}");
    // Latencies are measured, ordered, and small for so light a load.
    let p50 = number(&report, &["p50_ms"]);
    let p99 = number(&report, &["p99_ms"]);
    assert!(0.0 < p50 && p50 <= p99 && p99 < 5_000.0, "{text}");
    assert!(
        number(&report, &["job_activation", "p50_ms"]) > 0.0,
        "{text}"
    );
    assert_eq!(number(&report, &["backpressure_ratio"]), 0.0, "{text}");
    assert_eq!(report["errors"], serde_json::json!({}), "{text}");
    // The broker on this machine was sampled.
    let rss = number(&report, &["broker", "peak_rss_mib"]);
    assert!(1.0 < rss && rss < 1024.0, "{text}");
    // So was the machine: something ran (the broker and the tool), and the shares add up.
    let busy = number(&report, &["machine", "busy_percent"]);
    let steal = number(&report, &["machine", "steal_percent"]);
    assert!(0.0 < busy && busy + steal <= 100.0, "{text}");
    assert!(text.contains("machine over the run: "), "{text}");
    // What the run left in the state (the deployment, counters) sits in the partition's
    // write-back buffer, and the broker says how much.
    let (_, metrics) = common::get(broker.monitoring, "/metrics").expect("metrics");
    let buffered: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("beeline_state_write_back_bytes "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no beeline_state_write_back_bytes in:\n{metrics}"));
    assert!(0 < buffered && buffered <= 4 << 20, "{buffered}");
}

#[test]
fn a_warm_up_runs_at_the_rate_before_the_measured_run_and_is_reported_apart() {
    let (_dir, broker) = broker();
    let gateway = broker.gateway();
    let (text, report) = bench(&format!(
        "--gateway {gateway} --rate 100 --warm-up 1s --duration 2s --payload 1KiB"
    ));
    // The report's figures are the measured run's alone; the warm-up's are beside them.
    assert_eq!(number(&report, &["started"]), 200.0, "{text}");
    assert_eq!(number(&report, &["completed"]), 200.0, "{text}");
    assert_eq!(number(&report, &["warm_up", "started"]), 100.0, "{text}");
    assert_eq!(number(&report, &["warm_up", "completed"]), 100.0, "{text}");
    assert_eq!(
        number(&report, &["warm_up", "target_rate"]),
        100.0,
        "{text}"
    );
    assert!(number(&report, &["warm_up", "p99_ms"]) > 0.0, "{text}");
    assert!(text.contains("warm-up (not measured): "), "{text}");
    // Without --warm-up there is none.
    let (text, report) = bench(&format!("--gateway {gateway} --rate 100 --duration 1s"));
    assert!(report["warm_up"].is_null(), "{text}");
    assert!(!text.contains("warm-up"), "{text}");
}

#[test]
fn the_same_load_runs_over_the_rest_api() {
    let (_dir, broker) = broker();
    let gateway = broker.rest_gateway();
    let pid = broker.pid();
    let (text, report) = bench(&format!(
        "--api rest --gateway {gateway} --rate 100 --duration 2s --payload 1KiB --broker-pid {pid}"
    ));
    assert_eq!(report["api"], "rest", "{text}");
    assert!(text.contains("over REST"), "{text}");
    assert_eq!(number(&report, &["started"]), 200.0, "{text}");
    assert_eq!(number(&report, &["completed"]), 200.0, "{text}");
    assert_eq!(report["errors"], serde_json::json!({}), "{text}");
    let cpu = number(&report, &["broker_cpu_us_per_instance"]);
    assert!(cpu > 0.0, "{text}");
    assert!(text.contains("per completed instance"), "{text}");
    // REST workers poll: there is no job stream to ask for.
    let refused = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args(["bench", "--api", "rest", "--stream", "--gateway", &gateway])
        .output()
        .expect("beeline bench runs");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--stream needs --api grpc"),
        "{refused:?}"
    );
}

#[test]
fn find_max_steps_up_and_reports_the_highest_rate_that_held() {
    let (_dir, broker) = broker();
    let gateway = broker.gateway();
    let (text, report) = bench(&format!(
        "--gateway {gateway} --find-max --rate 64 --max-rate 80 --duration 2s"
    ));
    let (rates, held) = steps(&report);
    assert_eq!(
        rates,
        [64.0, 80.0],
        "it ramps by a quarter up to --max-rate:\n{text}"
    );
    assert_eq!(held, [true, true], "{text}");
    assert_eq!(
        number(&report, &["find_max", "max_sustained_rate"]),
        80.0,
        "{text}"
    );
    // The report's figures are those of the best step.
    assert_eq!(number(&report, &["started"]), 160.0, "{text}");
}

#[test]
fn find_max_searches_below_a_first_step_that_fails() {
    let (_dir, broker) = broker();
    let gateway = broker.gateway();
    // No instance of the one-task model (a start, a job hand-off, a completion) is done within
    // a millisecond here: every step fails.
    let (text, report) = bench(&format!(
        "--gateway {gateway} --find-max --rate 40 --p99-target 1ms --search-steps 1 --duration 1s"
    ));
    let (rates, held) = steps(&report);
    // Each rate is tried twice before it counts as failed.
    assert_eq!(rates, [40.0, 40.0, 20.0, 20.0], "{text}");
    assert_eq!(held, [false, false, false, false], "{text}");
    let search = &report["find_max"];
    assert!(
        search["steps"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("p99")),
        "{text}"
    );
    assert!(search["max_sustained_rate"].is_null(), "{text}");
}

#[test]
fn a_soak_runs_its_restart_command_and_keeps_the_brokers_memory_over_time() {
    let (dir, broker) = broker();
    let gateway = broker.gateway();
    let pid = broker.pid();
    // A restart command that leaves the broker running, notes that it ran, and names the
    // broker's PID on its last line as a real one would.
    let marker = dir.path().join("restarts");
    let script = dir.path().join("restart.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho ran >> {}\necho {pid}\n", marker.display()),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");
    let (text, report) = bench(&format!(
        "--gateway {gateway} --rate 50 --soak 5s --sample-every 1s --restart-every 2s \
         --rss-limit 1GiB --broker-pid {pid} --restart-cmd {}",
        script.display()
    ));
    let soak = &report["soak"];
    let restarts = number(soak, &["restarts"]);
    assert!(restarts >= 2.0, "{text}");
    assert_eq!(number(soak, &["restart_failures"]), 0.0, "{text}");
    let ran = std::fs::read_to_string(&marker).expect("the restart command ran");
    assert_eq!(ran.lines().count() as f64, restarts, "{text}");
    assert_eq!(soak["stayed_under_limit"], true, "{text}");
    let timeline = soak["timeline"].as_array().expect("timeline");
    assert!(timeline.len() >= 4, "a line a second:\n{text}");
    assert!(
        timeline.iter().all(|line| number(line, &["rss_mib"]) > 1.0),
        "{text}"
    );
    assert_eq!(number(&report, &["started"]), 250.0, "{text}");
}

/// `--compare-cluster` in short: one broker at replication factor 1 and three at factor 3 (the
/// leaders asked to their primaries) each through a short find-max, the cluster at half its
/// rate, two leader kills under load, every broker's RSS against its memory limit; a verdict
/// per target with its figures. The targets themselves are not asserted (a shared machine
/// decides them): that each was measured is.
#[test]
fn compare_cluster_measures_both_sides_the_failover_and_each_broker_s_memory() {
    let output = Command::new(env!("CARGO_BIN_EXE_beeline"))
        .args(
            "bench --compare-cluster --rate 50 --max-rate 60 --duration 3s --drain 5s --kills 2 \
             --hold 4s --hold-warm-up 1s --broker-memory-limit 512MiB --json"
                .split_whitespace(),
        )
        .output()
        .expect("beeline bench runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 0: every target met; 3: measured, a target missed. Anything else: the run failed.
    assert!(
        matches!(output.status.code(), Some(0 | 3)),
        "beeline bench --compare-cluster failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    let report: serde_json::Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("the last line is not JSON ({e}):\n{stdout}"));
    let single = number(&report, &["single_max_rate"]);
    let cluster = number(&report, &["cluster_max_rate"]);
    assert!(single > 0.0 && cluster > 0.0, "{stdout}");
    assert!(
        (number(&report, &["rate_ratio"]) - cluster / single).abs() < 0.01,
        "{stdout}"
    );
    assert!(
        (number(&report, &["half_rate"]) - cluster / 2.0).abs() < 0.1,
        "{stdout}"
    );
    assert!(number(&report, &["half_rate_p99_ms"]) > 0.0, "{stdout}");
    // The hold's figures follow a warm-up at its rate, which the line about the hold names.
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("three brokers at ")
                && line.contains("(after 1 s at that rate not measured, whose p50 ")),
        "{stdout}"
    );
    // The brokers' cost at half the rate: some CPU, and threads that waited.
    assert!(
        number(&report, &["half_rate_cost", "cpu_ms_per_instance"]) > 0.0
            && number(&report, &["half_rate_cost", "switches_per_instance"]) > 0.0,
        "{stdout}"
    );
    assert!(
        stdout.contains("voluntary context switches per instance"),
        "{stdout}"
    );
    // ... and the journal syncs their flushers made, from the brokers' metrics: every
    // replicated append is synced before it counts, so a completed instance took some.
    assert!(
        number(&report, &["half_rate_cost", "syncs_per_instance"]) > 0.0
            && number(&report, &["half_rate_cost", "mean_sync_ms"]) > 0.0,
        "{stdout}"
    );
    assert!(
        stdout.contains("journal syncs per instance (mean "),
        "{stdout}"
    );
    // Where the cluster's leaders were for its search, after asking for them at the primaries.
    let placed = stdout
        .lines()
        .find(|line| line.starts_with("leaders: "))
        .unwrap_or_else(|| panic!("no line saying where the leaders are:\n{stdout}"));
    assert!(
        (1..=3).all(|p| placed.contains(&format!("partition {p} on broker "))),
        "{placed}"
    );
    let failovers = report["failover_ms"].as_array().expect("failover_ms");
    assert_eq!(failovers.len(), 2, "both kills measured:\n{stdout}");
    // Each kill's line says which partitions the killed broker led at the kill, and which
    // requests failed under it, by RPC and code.
    let kills: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("kill "))
        .collect();
    assert_eq!(kills.len(), 2, "{stdout}");
    assert!(
        kills
            .iter()
            .all(|line| line.contains("(leader of partitions ")
                && line.contains(" at the kill; partition ")
                && line.contains(" measured) killed under ")
                && line.contains("; its failed requests: ")),
        "{stdout}"
    );
    assert!(number(&report, &["failover_p99_ms"]) > 0.0, "{stdout}");
    let brokers = report["brokers"].as_array().expect("brokers");
    let names: Vec<&str> = brokers
        .iter()
        .map(|b| b["broker"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["single", "cluster-0", "cluster-1", "cluster-2"]);
    for broker in brokers {
        let peak = number(broker, &["peak_rss_mib"]);
        assert!(peak > 5.0, "{broker}");
        assert_eq!(broker["within_limit"].as_bool(), Some(peak <= 512.0));
    }
    let verdicts: Vec<&str> = report["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| v["target"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(verdicts, ["rate", "latency", "failover", "memory"]);
    for target in ["rate", "latency", "failover", "memory"] {
        assert!(
            stdout.contains(&format!("PASS {target}: "))
                || stdout.contains(&format!("FAIL {target}: ")),
            "no verdict line for {target}:\n{stdout}"
        );
    }
    assert_eq!(
        output.status.code() == Some(0),
        report["verdicts"]
            .as_array()
            .is_some_and(|v| v.iter().all(|v| v["met"].as_bool() == Some(true))),
        "the exit code follows the verdicts"
    );
}
