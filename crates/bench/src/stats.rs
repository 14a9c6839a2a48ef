//! What one phase of load measured: counters, two latency histograms and errors by RPC and
//! gRPC code. Shared by the starter and the workers; every update is a short lock or an atomic.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// The RPCs the tool sends, for counting requests and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rpc {
    CreateProcessInstance,
    PublishMessage,
    ActivateJobs,
    StreamActivatedJobs,
    CompleteJob,
}

impl Rpc {
    pub fn name(self) -> &'static str {
        match self {
            Rpc::CreateProcessInstance => "CreateProcessInstance",
            Rpc::PublishMessage => "PublishMessage",
            Rpc::ActivateJobs => "ActivateJobs",
            Rpc::StreamActivatedJobs => "StreamActivatedJobs",
            Rpc::CompleteJob => "CompleteJob",
        }
    }
}

/// Latencies in µs from 1 µs to one hour, three significant digits.
fn histogram() -> Histogram<u64> {
    #[allow(
        clippy::expect_used,
        reason = "constant bounds, which the histogram accepts"
    )]
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("constant, valid bounds")
}

/// A latency distribution as the report shows it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Percentiles {
    /// Latencies measured.
    pub samples: u64,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub mean_ms: Option<f64>,
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        let ms = |us: u64| (us as f64 / 1000.0 * 1000.0).round() / 1000.0;
        Percentiles {
            samples: h.len(),
            p50_ms: Some(ms(h.value_at_quantile(0.50))),
            p90_ms: Some(ms(h.value_at_quantile(0.90))),
            p99_ms: Some(ms(h.value_at_quantile(0.99))),
            p999_ms: Some(ms(h.value_at_quantile(0.999))),
            max_ms: Some(ms(h.max())),
            mean_ms: Some((h.mean() / 1000.0 * 1000.0).round() / 1000.0),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave a counter half-written in a way
    // that matters for a report, so a poisoned lock is used as it is.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The measurements of one phase: a run at one rate (a find-max step, or the whole run).
#[derive(Debug)]
pub struct PhaseStats {
    pub rate: f64,
    /// Due starts the starter sent (or tried to).
    pub attempted: AtomicU64,
    /// Starts the gateway accepted.
    pub started: AtomicU64,
    /// Starts refused with RESOURCE_EXHAUSTED.
    pub refused: AtomicU64,
    pub completed: AtomicU64,
    /// µs after the phase began when its last instance completed.
    last_completion_us: AtomicU64,
    /// Instance latency, intended start to completion, µs.
    latency: Mutex<Histogram<u64>>,
    /// Job hand-off latency, µs.
    activation: Mutex<Histogram<u64>>,
    /// Start lateness, µs: the intended start to the starter's timer firing for it.
    lateness: Mutex<Histogram<u64>>,
    requests: Mutex<BTreeMap<Rpc, u64>>,
    errors: Mutex<BTreeMap<(Rpc, &'static str), u64>>,
    /// When the phase began (its origin for `last_completion_us`).
    pub began: Instant,
    /// When the phase stopped starting instances.
    ended: Mutex<Option<Instant>>,
}

impl PhaseStats {
    pub fn new(rate: f64, began: Instant) -> PhaseStats {
        PhaseStats {
            rate,
            attempted: AtomicU64::new(0),
            started: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            last_completion_us: AtomicU64::new(0),
            latency: Mutex::new(histogram()),
            activation: Mutex::new(histogram()),
            lateness: Mutex::new(histogram()),
            requests: Mutex::new(BTreeMap::new()),
            errors: Mutex::new(BTreeMap::new()),
            began,
            ended: Mutex::new(None),
        }
    }

    pub fn request(&self, rpc: Rpc) {
        *lock(&self.requests).entry(rpc).or_default() += 1;
    }

    /// A failed request of `rpc`, by the gRPC code's name (`RESOURCE_EXHAUSTED`, ...).
    pub fn error(&self, rpc: Rpc, code: &'static str) {
        *lock(&self.errors).entry((rpc, code)).or_default() += 1;
    }

    pub fn completed(&self, latency: Duration, now: Instant) {
        self.completed.fetch_add(1, Ordering::Relaxed);
        let us = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        lock(&self.latency).saturating_record(us);
        let at = u64::try_from(now.saturating_duration_since(self.began).as_micros())
            .unwrap_or(u64::MAX);
        self.last_completion_us.fetch_max(at, Ordering::Relaxed);
    }

    pub fn activated(&self, latency: Duration) {
        let us = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        lock(&self.activation).saturating_record(us);
    }

    /// The starter's timer fired `late` after a start's intended time.
    pub fn start_due(&self, late: Duration) {
        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX).max(1);
        lock(&self.lateness).saturating_record(us);
    }

    pub fn end_starts(&self, at: Instant) {
        lock(&self.ended).get_or_insert(at);
    }

    /// Started instances not completed yet.
    pub fn outstanding(&self) -> u64 {
        self.started
            .load(Ordering::Relaxed)
            .saturating_sub(self.completed.load(Ordering::Relaxed))
    }

    /// The phase's figures as of `now`.
    pub fn summary(&self, now: Instant) -> PhaseSummary {
        let started = self.started.load(Ordering::Relaxed);
        let completed = self.completed.load(Ordering::Relaxed);
        let attempted = self.attempted.load(Ordering::Relaxed);
        let refused = self.refused.load(Ordering::Relaxed);
        let starts_end = lock(&self.ended).unwrap_or(now);
        let start_secs = starts_end
            .saturating_duration_since(self.began)
            .as_secs_f64();
        let last_completion =
            Duration::from_micros(self.last_completion_us.load(Ordering::Relaxed));
        let per_s = |n: u64, secs: f64| {
            if secs > 0.0 {
                round2(n as f64 / secs)
            } else {
                0.0
            }
        };
        let mut errors: BTreeMap<String, u64> = BTreeMap::new();
        let mut errors_by_rpc: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for ((rpc, code), n) in lock(&self.errors).iter() {
            *errors.entry((*code).to_string()).or_default() += n;
            *errors_by_rpc
                .entry(rpc.name().to_string())
                .or_default()
                .entry((*code).to_string())
                .or_default() += n;
        }
        let requests = lock(&self.requests)
            .iter()
            .map(|(rpc, n)| (rpc.name().to_string(), *n))
            .collect();
        PhaseSummary {
            target_rate: self.rate,
            seconds: round2(start_secs),
            attempted,
            started,
            completed,
            incomplete: started.saturating_sub(completed),
            started_per_s: per_s(started, start_secs),
            // Over the time from the phase's start to its last completion, so the figure is
            // the throughput the engine delivered, drain included.
            completed_per_s: per_s(completed, last_completion.as_secs_f64()),
            latency: Percentiles::of(&lock(&self.latency)),
            job_activation: Percentiles::of(&lock(&self.activation)),
            start_lateness: Percentiles::of(&lock(&self.lateness)),
            backpressure_ratio: if attempted > 0 {
                (refused as f64 / attempted as f64 * 1e6).round() / 1e6
            } else {
                0.0
            },
            requests,
            errors,
            errors_by_rpc,
        }
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One phase's figures, ready for the report.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PhaseSummary {
    pub target_rate: f64,
    /// How long instances were started.
    pub seconds: f64,
    pub attempted: u64,
    pub started: u64,
    pub completed: u64,
    /// Started and not seen completing by the end of the drain.
    pub incomplete: u64,
    pub started_per_s: f64,
    pub completed_per_s: f64,
    /// Process-instance latency: intended start to the final job's completion. Flattened:
    /// `p50_ms`, `p99_ms`, ... are top-level keys of the report.
    #[serde(flatten)]
    pub latency: Percentiles,
    /// Job hand-off latency: the request that made a job to the job reaching a worker.
    pub job_activation: Percentiles,
    /// Start lateness: the intended start to the starter's timer firing for it (the tool's own
    /// delay: tokio's timer has a 1 ms granularity; part of the instance latency).
    pub start_lateness: Percentiles,
    /// Refused starts (RESOURCE_EXHAUSTED) over attempted starts.
    pub backpressure_ratio: f64,
    pub requests: BTreeMap<String, u64>,
    /// Failed requests by gRPC code, over all RPCs.
    pub errors: BTreeMap<String, u64>,
    pub errors_by_rpc: BTreeMap<String, BTreeMap<String, u64>>,
}

impl PhaseSummary {
    /// The failed requests by RPC and code (`CompleteJob UNAVAILABLE 3, ...`), or `none`.
    pub fn errors_text(&self) -> String {
        let by_rpc: Vec<String> = self
            .errors_by_rpc
            .iter()
            .flat_map(|(rpc, codes)| codes.iter().map(move |(c, n)| format!("{rpc} {c} {n}")))
            .collect();
        if by_rpc.is_empty() {
            "none".to_string()
        } else {
            by_rpc.join(", ")
        }
    }
}

/// The phases of one run, so a worker can attribute a job of an earlier phase (a find-max
/// step that already ended) to that phase. Bounded: one entry per phase.
#[derive(Debug)]
pub struct Registry {
    pub run_id: u64,
    pub origin: Instant,
    phases: Mutex<Vec<Arc<PhaseStats>>>,
}

impl Registry {
    pub fn new(run_id: u64, origin: Instant) -> Registry {
        Registry {
            run_id,
            origin,
            phases: Mutex::new(Vec::new()),
        }
    }

    /// Opens a new phase and makes it current; returns its index.
    pub fn begin(&self, rate: f64, now: Instant) -> (usize, Arc<PhaseStats>) {
        let mut phases = lock(&self.phases);
        let stats = Arc::new(PhaseStats::new(rate, now));
        phases.push(stats.clone());
        (phases.len() - 1, stats)
    }

    pub fn phase(&self, index: usize) -> Option<Arc<PhaseStats>> {
        lock(&self.phases).get(index).cloned()
    }

    /// The phase being run (errors that belong to no instance are counted there).
    pub fn current(&self) -> Option<Arc<PhaseStats>> {
        lock(&self.phases).last().cloned()
    }

    /// µs after the run's origin.
    pub fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.origin).as_micros()).unwrap_or(u64::MAX)
    }

    pub fn instant(&self, micros: u64) -> Instant {
        self.origin + Duration::from_micros(micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_figures() {
        let t0 = Instant::now();
        let s = PhaseStats::new(100.0, t0);
        for _ in 0..200 {
            s.attempted.fetch_add(1, Ordering::Relaxed);
            s.request(Rpc::CreateProcessInstance);
        }
        s.started.store(198, Ordering::Relaxed);
        s.refused.store(2, Ordering::Relaxed);
        s.error(Rpc::CreateProcessInstance, "RESOURCE_EXHAUSTED");
        s.error(Rpc::CreateProcessInstance, "RESOURCE_EXHAUSTED");
        s.error(Rpc::CompleteJob, "NOT_FOUND");
        for i in 1..=100u64 {
            s.completed(Duration::from_millis(i), t0 + Duration::from_millis(4000));
        }
        s.activated(Duration::from_micros(1500));
        s.start_due(Duration::from_micros(400));
        s.start_due(Duration::from_micros(900));
        s.end_starts(t0 + Duration::from_secs(2));
        let sum = s.summary(t0 + Duration::from_secs(10));
        assert_eq!(sum.seconds, 2.0);
        assert_eq!(sum.started_per_s, 99.0);
        assert_eq!(sum.completed_per_s, 25.0); // 100 over the 4 s to the last completion
        assert_eq!(sum.incomplete, 98);
        assert_eq!(sum.backpressure_ratio, 0.01);
        assert_eq!(sum.latency.samples, 100);
        let p50 = sum.latency.p50_ms.unwrap();
        assert!((49.9..=50.1).contains(&p50), "{p50}");
        let p99 = sum.latency.p99_ms.unwrap();
        assert!((98.9..=99.1).contains(&p99), "{p99}");
        assert!((99.9..=100.1).contains(&sum.latency.max_ms.unwrap()));
        assert_eq!(sum.job_activation.samples, 1);
        assert_eq!(sum.start_lateness.samples, 2);
        let late = sum.start_lateness.max_ms.unwrap();
        assert!((0.89..=0.91).contains(&late), "{late}");
        assert_eq!(sum.errors["RESOURCE_EXHAUSTED"], 2);
        assert_eq!(sum.errors["NOT_FOUND"], 1);
        assert_eq!(sum.errors_by_rpc["CompleteJob"]["NOT_FOUND"], 1);
        assert_eq!(sum.requests["CreateProcessInstance"], 200);
    }

    #[test]
    fn empty_phase_has_no_percentiles_and_no_division_by_zero() {
        let t0 = Instant::now();
        let sum = PhaseStats::new(10.0, t0).summary(t0);
        assert_eq!(sum.latency, Percentiles::default());
        assert_eq!(sum.started_per_s, 0.0);
        assert_eq!(sum.completed_per_s, 0.0);
        assert_eq!(sum.backpressure_ratio, 0.0);
    }

    #[test]
    fn registry_keeps_phases_in_order() {
        let t0 = Instant::now();
        let r = Registry::new(1, t0);
        assert!(r.current().is_none());
        let (a, _) = r.begin(10.0, t0);
        let (b, _) = r.begin(20.0, t0);
        assert_eq!((a, b), (0, 1));
        assert_eq!(r.phase(0).unwrap().rate, 10.0);
        assert_eq!(r.current().unwrap().rate, 20.0);
        assert!(r.phase(2).is_none());
        assert_eq!(r.micros(r.instant(1234)), 1234);
    }
}
