//! The report: what a run measured, as text for a reader and as one JSON object for scripts.

use std::fmt::Write;

use serde::Serialize;

use crate::broker::BrokerReport;
use crate::client::Api;
use crate::machine::MachineReport;
use crate::stats::{Percentiles, PhaseSummary};

/// Everything a run measured. Serialized flat: the figures of the run (for `--find-max`, of
/// the highest rate sustained) are top-level keys (`started_per_s`, `completed_per_s`,
/// `p50_ms`, `p99_ms`, `backpressure_ratio`, `errors`, ...).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub gateway: String,
    /// The API the load went through.
    pub api: Api,
    /// The version the gateway reports through Topology.
    pub gateway_version: Option<String>,
    pub partitions: Option<u32>,
    pub process: String,
    /// `poll` or `stream`.
    pub jobs: String,
    pub workers: usize,
    pub payload_bytes: u64,
    /// Ctrl-C stopped the run; the figures are what was measured until then.
    pub interrupted: bool,
    #[serde(flatten)]
    pub result: PhaseSummary,
    pub broker: Option<BrokerReport>,
    /// The broker's CPU time per completed instance, µs (see [`Report::cpu_per_instance`]).
    pub broker_cpu_us_per_instance: Option<f64>,
    /// This machine's CPU over the whole run (every step of `--find-max`), where /proc/stat
    /// can be read.
    pub machine: Option<MachineReport>,
    pub find_max: Option<FindMaxReport>,
    pub soak: Option<SoakReport>,
    /// The warm-up before the measured run (`--warm-up`): its figures are not the report's.
    pub warm_up: Option<PhaseSummary>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FindMaxReport {
    /// The highest rate whose step held; `None` if none did.
    pub max_sustained_rate: Option<f64>,
    pub p99_target_ms: f64,
    pub max_backpressure: f64,
    pub step_seconds: f64,
    pub steps: Vec<StepReport>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StepReport {
    pub rate: f64,
    pub held: bool,
    /// Why the step did not hold.
    pub reason: Option<String>,
    pub started_per_s: f64,
    pub completed_per_s: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub backpressure_ratio: f64,
    pub errors: u64,
    pub broker_peak_rss_mib: Option<f64>,
    pub broker_mean_cpu_percent: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SoakReport {
    pub seconds: f64,
    pub restart_cmd: Option<String>,
    pub restarts: u32,
    pub restart_failures: u32,
    pub rss_limit_mib: Option<f64>,
    /// Whether every RSS sample stayed under `--rss-limit`.
    pub stayed_under_limit: Option<bool>,
    /// Mean RSS of the last quarter of the run over the first quarter's, in %.
    pub rss_growth_percent: Option<f64>,
    /// Growth above 10%.
    pub crept: Option<bool>,
    pub timeline: Vec<SoakLine>,
}

/// One line printed during a soak.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SoakLine {
    pub t_s: f64,
    pub rss_mib: Option<f64>,
    /// The broker's memory cgroup, when it has one (see [`crate::broker`]).
    pub cgroup_mib: Option<f64>,
    pub cpu_percent: Option<f64>,
    pub started: u64,
    pub completed: u64,
    pub errors: u64,
}

fn ms(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.1} ms"))
}

fn percentiles(p: &Percentiles) -> String {
    if p.samples == 0 {
        return "no samples".to_string();
    }
    format!(
        "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({} samples)",
        ms(p.p50_ms),
        ms(p.p90_ms),
        ms(p.p99_ms),
        ms(p.p999_ms),
        ms(p.max_ms),
        p.samples
    )
}

impl Report {
    /// The broker's CPU time per completed instance (µs): its mean CPU share over the run
    /// divided by the completion rate. What one instance costs the broker, to compare APIs and
    /// builds measured on one machine.
    pub fn cpu_per_instance(broker: Option<&BrokerReport>, result: &PhaseSummary) -> Option<f64> {
        let cpu = broker?.mean_cpu_percent?;
        let rate = result.completed_per_s;
        (rate > 0.0).then(|| (cpu / 100.0 * 1e6 / rate * 10.0).round() / 10.0)
    }

    /// The report as a reader sees it.
    pub fn text(&self) -> String {
        let mut t = String::new();
        let r = &self.result;
        let _ = writeln!(
            t,
            "beeline bench: {} model, {} workers ({}), payload {} B, gateway {} over {}{}{}",
            self.process,
            self.workers,
            self.jobs,
            self.payload_bytes,
            self.gateway,
            self.api.name(),
            self.gateway_version
                .as_ref()
                .map(|v| format!(" (version {v})"))
                .unwrap_or_default(),
            self.partitions
                .map(|p| format!(", {p} partition{}", if p == 1 { "" } else { "s" }))
                .unwrap_or_default(),
        );
        if self.interrupted {
            let _ = writeln!(t, "INTERRUPTED: partial figures");
        }
        if let Some(f) = &self.find_max {
            let _ = writeln!(
                t,
                "find-max: steps of {:.0} s, held = backpressure <= {:.2}% and p99 <= {:.0} ms",
                f.step_seconds,
                f.max_backpressure * 100.0,
                f.p99_target_ms
            );
            for s in &f.steps {
                let _ = writeln!(
                    t,
                    "  {:>8.1}/s  {}  started {:.1}/s completed {:.1}/s p50 {} p99 {} backpressure {:.2}%{}{}",
                    s.rate,
                    if s.held { "held  " } else { "FAILED" },
                    s.started_per_s,
                    s.completed_per_s,
                    ms(s.p50_ms),
                    ms(s.p99_ms),
                    s.backpressure_ratio * 100.0,
                    s.broker_peak_rss_mib
                        .map(|m| format!(" rss {m:.0} MiB"))
                        .unwrap_or_default(),
                    s.reason
                        .as_ref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default(),
                );
            }
            match f.max_sustained_rate {
                Some(rate) => {
                    let _ = writeln!(
                        t,
                        "highest rate sustained: {rate:.1} instances/s; its figures:"
                    );
                }
                None => {
                    let _ = writeln!(t, "no rate was sustained; figures of the last step:");
                }
            }
        }
        if let Some(w) = &self.warm_up {
            let _ = writeln!(
                t,
                "warm-up (not measured): {:.1} s at {:.1}/s, completed {}, p50 {} p99 {}",
                w.seconds,
                w.target_rate,
                w.completed,
                ms(w.latency.p50_ms),
                ms(w.latency.p99_ms)
            );
        }
        let _ = writeln!(
            t,
            "target {:.1}/s for {:.1} s: started {} ({:.1}/s), completed {} ({:.1}/s), not completed {}",
            r.target_rate,
            r.seconds,
            r.started,
            r.started_per_s,
            r.completed,
            r.completed_per_s,
            r.incomplete
        );
        let _ = writeln!(
            t,
            "instance latency (intended start to completion): {}",
            percentiles(&r.latency)
        );
        let _ = writeln!(
            t,
            "job hand-off latency (request that made the job to a worker): {}",
            percentiles(&r.job_activation)
        );
        let _ = writeln!(
            t,
            "start lateness (intended start to the starter's timer; part of the instance latency): {}",
            percentiles(&r.start_lateness)
        );
        let _ = writeln!(
            t,
            "backpressure: {:.2}% of {} start attempts refused (RESOURCE_EXHAUSTED)",
            r.backpressure_ratio * 100.0,
            r.attempted
        );
        let requests: Vec<String> = r.requests.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(t, "requests: {}", requests.join(", "));
        let _ = writeln!(t, "errors: {}", r.errors_text());
        if let Some(b) = &self.broker {
            let _ = writeln!(
                t,
                "broker pid {}: RSS peak {} mean {} last {}, CPU mean {}{} ({} samples{})",
                b.pid,
                mib(b.peak_rss_mib),
                mib(b.mean_rss_mib),
                mib(b.last_rss_mib),
                b.mean_cpu_percent
                    .map_or("-".into(), |c| format!("{c:.1}%")),
                self.broker_cpu_us_per_instance
                    .map_or(String::new(), |us| format!(
                        " = {us:.0} µs per completed instance"
                    )),
                b.samples,
                if b.missed_samples > 0 {
                    format!(", {} missed", b.missed_samples)
                } else {
                    String::new()
                }
            );
            if b.peak_cgroup_mib.is_some() {
                let _ = writeln!(
                    t,
                    "broker's memory cgroup (its page cache included): peak {} mean {} last {}",
                    mib(b.peak_cgroup_mib),
                    mib(b.mean_cgroup_mib),
                    mib(b.last_cgroup_mib),
                );
            }
        }
        if let Some(m) = &self.machine {
            let _ = writeln!(
                t,
                "machine over the run: {} CPUs{}, busy {:.1}%, waiting for I/O {:.1}%, stolen by the \
                 host {:.1}%{}",
                m.cpus,
                m.cpu_model
                    .as_ref()
                    .map_or_else(String::new, |model| format!(" ({model})")),
                m.busy_percent,
                m.iowait_percent,
                m.steal_percent,
                if m.steal_percent >= 2.0 {
                    " (a shared host took CPU time: latency figures are not comparable to a quiet run)"
                } else {
                    ""
                }
            );
        }
        if let Some(s) = &self.soak {
            let _ = writeln!(
                t,
                "soak {:.0} s: restarts {} ({} failed); RSS growth last vs first quarter {}{}{}",
                s.seconds,
                s.restarts,
                s.restart_failures,
                s.rss_growth_percent
                    .map_or("-".into(), |g| format!("{g:+.1}%")),
                match s.crept {
                    Some(true) => " (CREPT)",
                    Some(false) => " (flat)",
                    None => "",
                },
                match (s.rss_limit_mib, s.stayed_under_limit) {
                    (Some(l), Some(true)) => format!("; stayed under {l:.0} MiB"),
                    (Some(l), Some(false)) => format!("; EXCEEDED {l:.0} MiB"),
                    _ => String::new(),
                }
            );
        }
        t
    }

    /// The report as one line of JSON.
    pub fn json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

fn mib(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.1} MiB"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn json_has_the_keys_scripts_read_at_the_top_level() {
        let mut errors = BTreeMap::new();
        errors.insert("RESOURCE_EXHAUSTED".to_string(), 3);
        let report = Report {
            gateway: "127.0.0.1:26500".into(),
            process: "one-task".into(),
            jobs: "poll".into(),
            result: PhaseSummary {
                target_rate: 50.0,
                started_per_s: 49.9,
                completed_per_s: 49.5,
                latency: Percentiles {
                    samples: 10,
                    p50_ms: Some(4.2),
                    p99_ms: Some(9.5),
                    ..Percentiles::default()
                },
                backpressure_ratio: 0.003,
                errors,
                ..PhaseSummary::default()
            },
            ..Report::default()
        };
        let line = report.json_line();
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["started_per_s"], 49.9);
        assert_eq!(v["completed_per_s"], 49.5);
        assert_eq!(v["p50_ms"], 4.2);
        assert_eq!(v["p99_ms"], 9.5);
        assert_eq!(v["backpressure_ratio"], 0.003);
        assert_eq!(v["errors"]["RESOURCE_EXHAUSTED"], 3);
        assert!(v["job_activation"]["p50_ms"].is_null());
        assert!(v["broker"].is_null());
        let text = report.text();
        assert!(text.contains("p50 4.2 ms"), "{text}");
        assert!(
            text.contains("RESOURCE_EXHAUSTED") || text.contains("errors:"),
            "{text}"
        );
    }
}
