//! `beeline bench`: a load tool that speaks only the public Zeebe gateway protocol, so the same
//! run measures Beeline or a real Zeebe.
//!
//! ```text
//! run ─▶ Topology, DeployResource (models.rs)
//!     ─▶ workers (load.rs): ActivateJobs long polls or StreamActivatedJobs ─▶ CompleteJob
//!     ─▶ phases: starter (schedule.rs, open loop) ─▶ CreateProcessInstance (+ PublishMessage)
//!          plain run: one phase · --find-max: one phase per step (find_max.rs) · --soak: one
//!          long phase with restarts and RSS lines
//!     ─▶ stats.rs (per phase) + broker.rs (/proc sampling) ─▶ report.rs (text, JSON)
//! ```
//!
//! How latency is measured, and why:
//! - Starts follow a fixed schedule (start `n` due at `n / rate`), not the answers: open loop.
//!   An instance's latency runs from its *due* time to the moment the CompleteJob of the
//!   model's final service task returns OK, so time spent queued behind a slow gateway (or a
//!   starter held back by the in-flight bound) is counted, not hidden (coordinated omission).
//! - The due time rides in the instance's variables (`benchT`, µs after the run's origin), so
//!   the worker that completes the final job knows it without a shared map; the tool's memory
//!   does not grow with the instances in flight.
//! - Job hand-off latency: the time from the request that made a job (CreateProcessInstance for
//!   the first task, the previous task's CompleteJob after it; `benchJobT`) to the job reaching
//!   a worker, for tasks created in the same batch as that request.
//! - Start lateness: how long after its due time the starter's timer fired for an instance
//!   (tokio's timer wheel ticks each millisecond). It is part of the instance latency and the
//!   tool's own, so a reader can tell it from the engine's.
//! - Backpressure ratio: starts refused with RESOURCE_EXHAUSTED over starts attempted. A
//!   refused start is not retried (as Camunda's benchmark starter does not).

mod args;
mod broker;
mod client;
mod find_max;
mod load;
mod machine;
mod models;
mod payload;
mod report;
mod schedule;
mod stats;

use std::future::Future;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args as _;
use tokio::sync::watch;

pub use args::{BenchArgs, ProcessKind};
pub use broker::{BrokerReport, ProcessUse, Sampler};
pub use client::Api;
pub use machine::MachineReport;
pub use models::{JOB_TYPE, Model};
pub use payload::{payload, with_fields};
pub use report::{FindMaxReport, Report, SoakLine, SoakReport, StepReport};
pub use stats::{Percentiles, PhaseSummary};

use client::Client;
use find_max::{Criteria, Search};
use load::{Ctx, JobSource};
use schedule::Schedule;
use stats::{PhaseStats, Registry};

/// Why a run could not take place. Failures during a run (refused or failed requests, a
/// gateway that goes away) are not errors: they are counted in the report.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("invalid gateway address `{address}`: {reason}")]
    Gateway { address: String, reason: String },
    #[error("could not deploy the {process} model through {gateway}: {code}: {message}")]
    Deploy {
        process: &'static str,
        gateway: String,
        code: &'static str,
        message: String,
    },
    #[error("cannot read /proc/{0}/status and /proc/{0}/stat: no such process, or not readable")]
    BrokerPid(u32),
    #[error("{0}")]
    Args(String),
}

/// The `bench` subcommand with its flags, for a binary that builds its CLI by hand; a derive
/// CLI can embed [`BenchArgs`] directly (`Bench(beeline_bench::BenchArgs)`).
pub fn command() -> clap::Command {
    BenchArgs::augment_args(clap::Command::new("bench"))
}

/// The subcommand's entry: runs, prints the report (and, with `--json`, the JSON object as
/// the last line) on stdout and progress on stderr. Exit code 0, 1 when the run could not
/// take place, 130 when Ctrl-C cut it short.
pub async fn main(args: BenchArgs) -> ExitCode {
    let json = args.json;
    match run(args).await {
        Ok(report) => {
            print!("{}", report.text());
            if json {
                println!("{}", report.json_line());
            }
            if report.interrupted {
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("beeline bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the load the flags describe until it is done or Ctrl-C, which ends it early with the
/// figures measured so far (`Report::interrupted`).
pub async fn run(args: BenchArgs) -> Result<Report, BenchError> {
    run_until(
        args,
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                // No signal handling here: never interrupt.
                std::future::pending::<()>().await;
            }
        },
        || {},
    )
    .await
}

/// [`run`], ended early when `interrupt` completes; `began` is called when the load begins
/// (the model deployed, the workers started), before its first instance.
pub async fn run_until(
    args: BenchArgs,
    interrupt: impl Future<Output = ()>,
    began: impl FnOnce(),
) -> Result<Report, BenchError> {
    if args.worker_capacity == 0 || args.worker_capacity > 10_000 {
        return Err(BenchError::Args(
            "--worker-capacity must be 1 to 10000".into(),
        ));
    }
    if args.max_in_flight == 0 || args.max_in_flight > 1_000_000 {
        return Err(BenchError::Args(
            "--max-in-flight must be 1 to 1000000".into(),
        ));
    }
    if !(0.0..=1.0).contains(&args.max_backpressure) {
        return Err(BenchError::Args("--max-backpressure must be 0 to 1".into()));
    }
    if !(args.max_rate > 0.0 && args.max_rate >= args.rate) {
        return Err(BenchError::Args(
            "--max-rate must be positive and at least --rate".into(),
        ));
    }
    if args.workers == Some(0) {
        return Err(BenchError::Args("--workers must be at least 1".into()));
    }
    if let Some(pid) = args.broker_pid
        && !Sampler::check(pid)
    {
        return Err(BenchError::BrokerPid(pid));
    }
    let gateway = args.gateway();
    let gateway_err = |reason: String| BenchError::Gateway {
        address: gateway.clone(),
        reason,
    };
    if args.api == Api::Rest && args.stream {
        return Err(BenchError::Args(
            "--stream needs --api grpc: the REST API has no job streams (its workers poll)".into(),
        ));
    }
    let client = Client::connect(args.api, &gateway).map_err(gateway_err)?;
    let model = Model::new(args.process);
    let topology = client.topology().await;
    let partitions = args.partitions_hint.or(topology.partitions);
    let workers = args
        .workers
        .unwrap_or_else(|| (partitions.unwrap_or(1) as usize * 2).max(2));
    let source = if args.stream {
        JobSource::Stream
    } else {
        JobSource::Poll
    };
    let process_key = load::deploy(&client, &model, Duration::from_secs(60))
        .await
        .map_err(|failure| BenchError::Deploy {
            process: args.process.name(),
            gateway: gateway.clone(),
            code: failure.code,
            message: failure.message,
        })?;
    eprintln!(
        "beeline bench: deployed {} (key {process_key}) to {} over {}{}; {workers} {} workers",
        model.bpmn_process_id,
        gateway,
        args.api.name(),
        topology
            .version
            .as_ref()
            .map(|v| format!(" (version {v})"))
            .unwrap_or_default(),
        if source == JobSource::Stream {
            "streaming"
        } else {
            "polling"
        },
    );

    let run_id = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let ctx = Arc::new(Ctx::new(
        Registry::new(run_id, Instant::now()),
        model,
        payload::payload(args.payload),
        process_key,
        client,
        args.max_in_flight,
    ));

    let (stop_workers, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    for id in 0..workers {
        let c = Client::connect(args.api, &gateway).map_err(gateway_err)?;
        tasks.push(tokio::spawn(load::worker(
            ctx.clone(),
            c,
            id,
            source,
            args.worker_capacity as u32,
            stop_rx.clone(),
        )));
    }
    let sampler = args
        .broker_pid
        .map(|pid| Arc::new(Sampler::start(pid, Duration::from_secs(1))));
    let shared = Arc::new(Mutex::new(Progress::default()));
    let progress_every = if args.soak.is_some() {
        args.sample_every.max(Duration::from_secs(1))
    } else {
        Duration::from_secs(5)
    };
    tasks.push(tokio::spawn(monitor(
        ctx.clone(),
        sampler.clone(),
        shared.clone(),
        progress_every,
        args.soak.is_some(),
    )));

    let machine_before = machine::CpuTimes::read();
    began();
    let mode = drive(&args, &ctx, sampler.as_deref(), &shared);
    let interrupted = tokio::select! {
        _ = mode => false,
        _ = interrupt => true,
    };
    let _ = stop_workers.send(true);
    for t in &tasks {
        t.abort();
    }
    if interrupted {
        eprintln!("beeline bench: interrupted; reporting what was measured");
    }

    let now = Instant::now();
    let progress = std::mem::take(&mut *shared.lock().unwrap_or_else(PoisonError::into_inner));
    // Interrupted in a warm-up, the run measured nothing: the warm-up's figures are its own.
    let result_phase = progress
        .result_phase
        .and_then(|i| ctx.registry.phase(i))
        .or_else(|| {
            ctx.registry
                .current()
                .filter(|_| progress.warm_up_phase.is_none())
        });
    let broker = sampler.as_ref().map(|s| s.report(0.0));
    let machine = machine_before
        .zip(machine::CpuTimes::read())
        .and_then(|(before, after)| {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            machine::MachineReport::between(before, after, cpus, machine::cpu_model())
        });
    let soak = args.soak.map(|length| {
        let growth = broker.as_ref().and_then(BrokerReport::growth_percent);
        let limit = args.rss_limit;
        SoakReport {
            seconds: ctx.registry.phase(0).map_or(0.0, |p| {
                now.saturating_duration_since(p.began)
                    .as_secs_f64()
                    .min(length.as_secs_f64())
            }),
            restart_cmd: args.restart_cmd.clone(),
            restarts: progress.restarts,
            restart_failures: progress.restart_failures,
            rss_limit_mib: limit.map(|l| l as f64 / (1024.0 * 1024.0)),
            stayed_under_limit: limit.and_then(|l| {
                let peak = broker.as_ref()?.peak_rss_mib?;
                Some(peak * 1024.0 * 1024.0 <= l as f64)
            }),
            rss_growth_percent: growth,
            crept: growth.map(|g| g > 10.0),
            timeline: progress.timeline,
        }
    });
    let find_max = args.find_max.then(|| FindMaxReport {
        max_sustained_rate: progress.best_rate,
        p99_target_ms: args.p99_target().as_secs_f64() * 1000.0,
        max_backpressure: args.max_backpressure,
        step_seconds: args.duration.as_secs_f64(),
        steps: progress.steps,
    });
    let result = result_phase.map(|p| p.summary(now)).unwrap_or_default();
    let warm_up = progress
        .warm_up_phase
        .and_then(|i| ctx.registry.phase(i))
        .map(|p| p.summary(now));
    Ok(Report {
        gateway,
        api: args.api,
        gateway_version: topology.version,
        partitions,
        process: args.process.name().to_string(),
        jobs: if source == JobSource::Stream {
            "stream"
        } else {
            "poll"
        }
        .to_string(),
        workers,
        payload_bytes: ctx.payload.len() as u64,
        interrupted,
        broker_cpu_us_per_instance: Report::cpu_per_instance(broker.as_ref(), &result),
        result,
        broker,
        machine,
        find_max,
        soak,
        warm_up,
    })
}

/// What the modes leave for the report, kept outside their futures so that an interrupted
/// run still reports it.
#[derive(Debug, Default)]
struct Progress {
    /// The phase whose figures are the report's (find-max: the best step).
    result_phase: Option<usize>,
    /// The warm-up's phase, before the measured one (`--warm-up`).
    warm_up_phase: Option<usize>,
    best_rate: Option<f64>,
    steps: Vec<StepReport>,
    restarts: u32,
    restart_failures: u32,
    timeline: Vec<SoakLine>,
}

fn progress(shared: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The run itself: one phase, a find-max search, or a soak.
async fn drive(
    args: &BenchArgs,
    ctx: &Arc<Ctx>,
    sampler: Option<&Sampler>,
    shared: &Mutex<Progress>,
) {
    if args.find_max {
        let criteria = Criteria {
            max_backpressure: args.max_backpressure,
            p99_target: args.p99_target(),
        };
        let mut search = Search::new(args.rate, args.search_steps, args.max_rate);
        while let Some(rate) = search.next_rate() {
            eprintln!(
                "beeline bench: find-max step at {rate:.1}/s for {:?}",
                args.duration
            );
            let (index, stats) = run_phase(ctx, rate, args.duration, args.drain).await;
            let summary = stats.summary(Instant::now());
            let verdict = find_max::judge(&summary, &criteria);
            search.record(rate, verdict.is_ok());
            if verdict.is_err() {
                // An overloaded engine still works off the instances it accepted: a lower step
                // started on top of that backlog would be judged by it.
                wait_for_backlog(ctx, &stats, BACKLOG_WAIT.max(args.duration * 4)).await;
            }
            let broker = sampler.map(|s| s.report(s.began_s(stats.began)));
            let mut p = progress(shared);
            if verdict.is_ok() && search.best() == Some(rate) {
                p.result_phase = Some(index);
                p.best_rate = Some(rate);
            } else if p.best_rate.is_none() {
                p.result_phase = Some(index);
            }
            p.steps.push(StepReport {
                rate,
                held: verdict.is_ok(),
                reason: verdict.err(),
                started_per_s: summary.started_per_s,
                completed_per_s: summary.completed_per_s,
                p50_ms: summary.latency.p50_ms,
                p99_ms: summary.latency.p99_ms,
                backpressure_ratio: summary.backpressure_ratio,
                errors: summary.errors.values().sum(),
                broker_peak_rss_mib: broker.as_ref().and_then(|b| b.peak_rss_mib),
                broker_mean_cpu_percent: broker.as_ref().and_then(|b| b.mean_cpu_percent),
            });
        }
    } else if let Some(length) = args.soak {
        let restarts = async {
            let Some(cmd) = &args.restart_cmd else {
                return std::future::pending::<()>().await;
            };
            let every = args.restart_every.max(Duration::from_secs(1));
            let mut tick = tokio::time::interval_at((Instant::now() + every).into(), every);
            loop {
                tick.tick().await;
                let ok = restart(cmd, sampler).await;
                let mut p = progress(shared);
                p.restarts += 1;
                if !ok {
                    p.restart_failures += 1;
                }
            }
        };
        progress(shared).result_phase = Some(0);
        tokio::select! {
            _ = run_phase(ctx, args.rate, length, args.drain) => {}
            _ = restarts => {}
        }
    } else {
        if let Some(warm_up) = args.warm_up {
            eprintln!(
                "beeline bench: warming up at {:.1}/s for {warm_up:?} (not measured)",
                args.rate
            );
            let (index, stats) = ctx.registry.begin(args.rate, Instant::now());
            progress(shared).warm_up_phase = Some(index);
            // No drain: the measured phase's starts follow at once, at the same rate.
            run_begun_phase(ctx, index, &stats, args.rate, warm_up, Duration::ZERO).await;
        }
        let (index, stats) = ctx.registry.begin(args.rate, Instant::now());
        progress(shared).result_phase = Some(index);
        run_begun_phase(ctx, index, &stats, args.rate, args.duration, args.drain).await;
    }
}

/// Runs `cmd` through `sh -c`; a number on the last line of its output is the broker's new PID.
async fn restart(cmd: &str, sampler: Option<&Sampler>) -> bool {
    eprintln!("beeline bench: running restart command: {cmd}");
    let began = Instant::now();
    let output = tokio::time::timeout(
        Duration::from_secs(600),
        tokio::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    match output {
        Ok(Ok(out)) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            if let (Some(s), Some(pid)) = (
                sampler,
                stdout
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .and_then(|l| l.trim().parse::<u32>().ok()),
            ) {
                s.set_pid(pid);
            }
            eprintln!(
                "beeline bench: restart command exited with {} after {:.1} s",
                out.status,
                began.elapsed().as_secs_f64()
            );
            out.status.success()
        }
        Ok(Err(e)) => {
            eprintln!("beeline bench: restart command could not run: {e}");
            false
        }
        Err(_) => {
            eprintln!("beeline bench: restart command still running after 600 s; killed");
            false
        }
    }
}

/// The least a find-max search waits for the backlog of a step that failed.
const BACKLOG_WAIT: Duration = Duration::from_secs(60);

/// Waits up to `limit` for the instances a phase started to complete (its figures are taken).
async fn wait_for_backlog(ctx: &Ctx, stats: &PhaseStats, limit: Duration) {
    let outstanding = ctx.starts_in_flight() as u64 + stats.outstanding();
    if outstanding == 0 {
        return;
    }
    eprintln!(
        "beeline bench: waiting up to {limit:?} for the {outstanding} instances still running"
    );
    let began = Instant::now();
    while began.elapsed() < limit && (ctx.starts_in_flight() > 0 || stats.outstanding() > 0) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let left = ctx.starts_in_flight() as u64 + stats.outstanding();
    eprintln!(
        "beeline bench: {left} still running after {:.1} s; next step",
        began.elapsed().as_secs_f64()
    );
}

/// Starts instances at `rate` for `length`, then waits up to `drain` for them to complete.
async fn run_phase(
    ctx: &Arc<Ctx>,
    rate: f64,
    length: Duration,
    drain: Duration,
) -> (usize, Arc<PhaseStats>) {
    let (index, stats) = ctx.registry.begin(rate, Instant::now());
    run_begun_phase(ctx, index, &stats, rate, length, drain).await;
    (index, stats)
}

/// [`run_phase`] for a phase begun already.
async fn run_begun_phase(
    ctx: &Arc<Ctx>,
    index: usize,
    stats: &Arc<PhaseStats>,
    rate: f64,
    length: Duration,
    drain: Duration,
) {
    load::start_phase(ctx, index, stats, Schedule::new(rate, length)).await;
    let until = Instant::now() + drain;
    while Instant::now() < until && (ctx.starts_in_flight() > 0 || stats.outstanding() > 0) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Prints a progress line every `every` on stderr; during a soak, also keeps it for the report.
async fn monitor(
    ctx: Arc<Ctx>,
    sampler: Option<Arc<Sampler>>,
    shared: Arc<Mutex<Progress>>,
    every: Duration,
    soak: bool,
) {
    let began = Instant::now();
    let mut tick = tokio::time::interval_at((began + every).into(), every);
    loop {
        tick.tick().await;
        let Some(stats) = ctx.registry.current() else {
            continue;
        };
        let now = Instant::now();
        let s = stats.summary(now);
        let errors: u64 = s.errors.values().sum();
        let sample = sampler.as_ref().and_then(|s| s.last());
        let rss = sample.map(|x| x.rss_bytes as f64 / (1024.0 * 1024.0));
        let cgroup = sample
            .and_then(|x| x.cgroup_bytes)
            .map(|b| b as f64 / (1024.0 * 1024.0));
        eprintln!(
            "[{:>6.0}s] {:.1}/s: started {} completed {} refused {} in flight {} errors {} p99 {}{}{}",
            now.duration_since(began).as_secs_f64(),
            stats.rate,
            s.started,
            s.completed,
            stats.refused.load(Ordering::Relaxed),
            ctx.starts_in_flight(),
            errors,
            s.latency
                .p99_ms
                .map_or("-".into(), |v| format!("{v:.1} ms")),
            match (rss, sample.and_then(|x| x.cpu_percent)) {
                (Some(r), Some(c)) => format!(" | broker RSS {r:.1} MiB CPU {c:.0}%"),
                (Some(r), None) => format!(" | broker RSS {r:.1} MiB"),
                _ => String::new(),
            },
            cgroup.map_or(String::new(), |m| format!(" cgroup {m:.1} MiB")),
        );
        if soak {
            progress(&shared).timeline.push(SoakLine {
                t_s: now.duration_since(stats.began).as_secs_f64().round(),
                rss_mib: rss.map(|r| (r * 10.0).round() / 10.0),
                cgroup_mib: cgroup.map(|m| (m * 10.0).round() / 10.0),
                cpu_percent: sample.and_then(|x| x.cpu_percent).map(|c| c.round()),
                started: s.started,
                completed: s.completed,
                errors,
            });
        }
    }
}
