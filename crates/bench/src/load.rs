//! The load itself: the deployment, the open-loop starter and the job workers, through the
//! gateway's gRPC or REST API (`client.rs`). Every failed request is counted by operation and
//! gRPC code (a REST problem's title) and the work goes on.
//!
//! Completion is seen by the worker: each model ends with a service task, and the instance is
//! complete when that task's CompleteJob returns OK (Zeebe completes the task, the end event
//! and the process in the batch that completes the job). The instance's intended start time
//! travels in its variables (`benchT`), so no per-instance state is kept here and nothing
//! grows with the number of instances in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, watch};

use crate::client::{Client, Failure, Job, job_of, within};
use crate::models::{JOB_TYPE, MESSAGE_NAME, Model};
use crate::payload::{BenchVars, with_fields};
use crate::schedule::Schedule;
use crate::stats::{PhaseStats, Registry, Rpc};

/// How long a unary request may take before it counts as DEADLINE_EXCEEDED.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an ActivateJobs request waits for jobs (long polling).
const LONG_POLL: Duration = Duration::from_secs(10);
/// How long an activated job stays locked to the worker.
const JOB_LOCK: Duration = Duration::from_secs(60);
/// How long the `typical` model's message is buffered if it arrives before the subscription.
const MESSAGE_TTL: Duration = Duration::from_secs(60);
/// Retries of a publish or a completion refused with a retriable code; a lost publish or
/// completion would leave an instance that never completes.
const RETRIES: u32 = 5;

/// Deploys the model, retrying while the gateway is unreachable or busy (a broker still
/// starting) for up to `patience`. Returns the process definition key.
pub async fn deploy(client: &Client, model: &Model, patience: Duration) -> Result<i64, Failure> {
    let give_up = Instant::now() + patience;
    loop {
        let deployed = within(
            REQUEST_TIMEOUT,
            client.deploy(&model.resource_name, &model.xml, &model.bpmn_process_id),
        )
        .await;
        match deployed {
            Err(failure) if failure.retriable() && Instant::now() < give_up => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            other => return other,
        }
    }
}

/// What the starter and the workers share.
pub struct Ctx {
    pub registry: Registry,
    pub model: Model,
    pub payload: String,
    pub process_key: i64,
    pub starter: Client,
    /// Bounds the start requests (create, then publish) in flight.
    pub start_permits: Arc<Semaphore>,
    pub max_in_flight: usize,
    seq: AtomicU64,
}

impl Ctx {
    pub fn new(
        registry: Registry,
        model: Model,
        payload: String,
        process_key: i64,
        starter: Client,
        max_in_flight: usize,
    ) -> Ctx {
        Ctx {
            registry,
            model,
            payload,
            process_key,
            starter,
            start_permits: Arc::new(Semaphore::new(max_in_flight)),
            max_in_flight,
            seq: AtomicU64::new(0),
        }
    }

    /// Start requests in flight.
    pub fn starts_in_flight(&self) -> usize {
        self.max_in_flight - self.start_permits.available_permits()
    }
}

/// Starts instances on `schedule`; dropping the future stops the starts.
pub async fn start_phase(
    ctx: &Arc<Ctx>,
    phase: usize,
    stats: &Arc<PhaseStats>,
    schedule: Schedule,
) {
    let total = schedule.total();
    for n in 0..total {
        let due = stats.began + schedule.due(n);
        tokio::time::sleep_until(due.into()).await;
        stats.start_due(Instant::now().saturating_duration_since(due));
        let Ok(permit) = ctx.start_permits.clone().acquire_owned().await else {
            break;
        };
        stats.attempted.fetch_add(1, Ordering::Relaxed);
        let ctx = ctx.clone();
        let stats = stats.clone();
        tokio::spawn(async move {
            start_one(&ctx, phase, &stats, due).await;
            drop(permit);
        });
    }
    stats.end_starts(Instant::now());
}

async fn start_one(ctx: &Ctx, phase: usize, stats: &PhaseStats, due: Instant) {
    let seq = ctx.seq.fetch_add(1, Ordering::Relaxed);
    let key = format!("{}-{phase}-{seq}", ctx.registry.run_id);
    let now = Instant::now();
    let variables = with_fields(
        &[
            ("benchRun", ctx.registry.run_id.to_string()),
            ("benchPhase", phase.to_string()),
            ("benchT", ctx.registry.micros(due).to_string()),
            ("benchJobT", ctx.registry.micros(now).to_string()),
            ("benchKey", format!("\"{key}\"")),
            // Spreads the `typical` model's instances over both branches of its gateway.
            ("amount", (seq * 37 % 200).to_string()),
        ],
        &ctx.payload,
    );
    let client = &ctx.starter;
    stats.request(Rpc::CreateProcessInstance);
    match within(REQUEST_TIMEOUT, client.create(ctx.process_key, variables)).await {
        Ok(()) => {
            stats.started.fetch_add(1, Ordering::Relaxed);
        }
        Err(failure) => {
            stats.error(Rpc::CreateProcessInstance, failure.code);
            if failure.refused() {
                stats.refused.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
    }
    if ctx.model.needs_message {
        publish(stats, client, key).await;
    }
}

async fn publish(stats: &PhaseStats, client: &Client, key: String) {
    for attempt in 0..=RETRIES {
        stats.request(Rpc::PublishMessage);
        match within(
            REQUEST_TIMEOUT,
            client.publish(MESSAGE_NAME, &key, MESSAGE_TTL),
        )
        .await
        {
            Ok(()) => return,
            Err(failure) => {
                stats.error(Rpc::PublishMessage, failure.code);
                if !failure.retriable() || attempt == RETRIES {
                    return;
                }
                tokio::time::sleep(backoff(attempt)).await;
            }
        }
    }
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(50u64 << attempt.min(5))
}

/// How workers receive jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobSource {
    Poll,
    Stream,
}

/// Holds one of a worker's job slots; gives it back when the job is done with.
struct Slot(Arc<Semaphore>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.add_permits(1);
    }
}

/// Takes up to `capacity` free slots, waiting for at least `min`.
async fn take_slots(sem: &Arc<Semaphore>, min: u32, capacity: u32) -> Option<u32> {
    sem.acquire_many(min).await.ok()?.forget();
    let mut n = min;
    while n < capacity {
        match sem.try_acquire() {
            Ok(p) => {
                p.forget();
                n += 1;
            }
            Err(_) => break,
        }
    }
    Some(n)
}

/// One worker: a long-polling loop or a job stream (with a slow sweep), each job completed
/// with the payload in a task of its own, at most `capacity` at once.
pub async fn worker(
    ctx: Arc<Ctx>,
    client: Client,
    id: usize,
    source: JobSource,
    capacity: u32,
    stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(capacity as usize));
    let name = format!("beeline-bench-{id}");
    match source {
        JobSource::Poll => poll_loop(&ctx, client, &name, &slots, capacity, LONG_POLL, stop).await,
        JobSource::Stream => {
            // Jobs created while no stream was open (before it opened, or while it reconnected)
            // are not pushed; a slow non-waiting poll picks them up, as Zeebe's Java client does.
            let sweep = tokio::spawn({
                let ctx = ctx.clone();
                let client = client.clone();
                let name = name.clone();
                let slots = slots.clone();
                let stop = stop.clone();
                async move {
                    let mut tick = tokio::time::interval(Duration::from_secs(5));
                    let mut stop2 = stop.clone();
                    loop {
                        tokio::select! {
                            _ = stop2.wait_for(|s| *s) => return,
                            _ = tick.tick() => {}
                        }
                        let Some(n) = take_slots(&slots, 1, capacity).await else {
                            return;
                        };
                        activate_once(&ctx, &client, &name, &slots, n, None).await;
                    }
                }
            });
            stream_loop(&ctx, client, &name, &slots, stop).await;
            sweep.abort();
        }
    }
}

async fn poll_loop(
    ctx: &Arc<Ctx>,
    client: Client,
    name: &str,
    slots: &Arc<Semaphore>,
    capacity: u32,
    wait: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let mut failures = 0u32;
    loop {
        // Ask again once half the slots are free, as Zeebe's clients do.
        let min = (capacity / 2).max(1);
        let n = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            n = take_slots(slots, min, capacity) => match n { Some(n) => n, None => return },
        };
        let ok = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            ok = activate_once(ctx, &client, name, slots, n, Some(wait)) => ok,
        };
        if ok {
            failures = 0;
        } else {
            failures += 1;
            tokio::time::sleep(backoff(failures.min(5))).await;
        }
    }
}

/// One ActivateJobs request for up to `n` jobs, whose `n` slots the caller took. Returns
/// whether the request succeeded.
async fn activate_once(
    ctx: &Arc<Ctx>,
    client: &Client,
    name: &str,
    slots: &Arc<Semaphore>,
    n: u32,
    wait: Option<Duration>,
) -> bool {
    let stats = ctx.registry.current();
    if let Some(s) = &stats {
        s.request(Rpc::ActivateJobs);
    }
    let mut unused = n;
    let deadline = wait.unwrap_or(Duration::ZERO) + REQUEST_TIMEOUT;
    let result = within(
        deadline,
        client.activate(JOB_TYPE, name, JOB_LOCK, n, wait, |jobs| {
            let received = Instant::now();
            for job in jobs {
                if unused == 0 {
                    // More jobs than asked for: still complete them, over the bound by one.
                    slots.forget_permits(1);
                } else {
                    unused -= 1;
                }
                spawn_job(ctx, client, slots, job, received);
            }
        }),
    )
    .await;
    slots.add_permits(unused as usize);
    match result {
        Ok(()) => true,
        Err(failure) => {
            if let Some(s) = &stats {
                s.error(Rpc::ActivateJobs, failure.code);
            }
            false
        }
    }
}

/// Works `job` in its own task, holding one of the worker's slots until it is done.
fn spawn_job(ctx: &Arc<Ctx>, client: &Client, slots: &Arc<Semaphore>, job: Job, received: Instant) {
    let slot = Slot(slots.clone());
    let ctx = ctx.clone();
    let client = client.clone();
    tokio::spawn(async move {
        handle_job(&ctx, client, job, received).await;
        drop(slot);
    });
}

async fn stream_loop(
    ctx: &Arc<Ctx>,
    client: Client,
    name: &str,
    slots: &Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
) {
    let mut failures = 0u32;
    loop {
        let stats = ctx.registry.current();
        if let Some(s) = &stats {
            s.request(Rpc::StreamActivatedJobs);
        }
        let opened = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            r = within(REQUEST_TIMEOUT, client.stream(JOB_TYPE, name, JOB_LOCK)) => r,
        };
        let result = match opened {
            Ok(mut jobs) => loop {
                let next = tokio::select! {
                    _ = stop.wait_for(|s| *s) => return,
                    next = jobs.message() => next,
                };
                match next {
                    Ok(Some(job)) => {
                        failures = 0;
                        let received = Instant::now();
                        let Ok(permit) = slots.clone().acquire_owned().await else {
                            return;
                        };
                        permit.forget();
                        spawn_job(ctx, &client, slots, job_of(job), received);
                    }
                    Ok(None) => break Ok(()),
                    Err(status) => break Err(Failure::from(status)),
                }
            },
            Err(failure) => Err(failure),
        };
        if let Err(failure) = result
            && let Some(s) = ctx.registry.current()
        {
            s.error(Rpc::StreamActivatedJobs, failure.code);
        }
        failures += 1;
        tokio::time::sleep(backoff(failures.min(5))).await;
    }
}

/// Measures and completes one job. Jobs of other runs (left over in the broker) are
/// completed too, so they drain, but not measured.
async fn handle_job(ctx: &Ctx, client: Client, job: Job, received: Instant) {
    let vars = BenchVars::parse(&job.variables);
    let phase = if vars.run == Some(ctx.registry.run_id) {
        vars.phase.and_then(|p| ctx.registry.phase(p))
    } else {
        None
    };
    let counted = phase.clone().or_else(|| ctx.registry.current());
    if let (Some(p), Some(t)) = (&phase, vars.job_t_us)
        && ctx
            .model
            .measured_elements
            .contains(&job.element_id.as_str())
    {
        p.activated(received.saturating_duration_since(ctx.registry.instant(t)));
    }
    for attempt in 0..=RETRIES {
        let sent = Instant::now();
        let variables = with_fields(
            &[("benchJobT", ctx.registry.micros(sent).to_string())],
            &ctx.payload,
        );
        if let Some(s) = &counted {
            s.request(Rpc::CompleteJob);
        }
        match within(REQUEST_TIMEOUT, client.complete(job.key, variables)).await {
            Ok(()) => {
                if job.element_id == ctx.model.final_element
                    && let (Some(p), Some(t)) = (&phase, vars.intended_us)
                {
                    let now = Instant::now();
                    p.completed(now.saturating_duration_since(ctx.registry.instant(t)), now);
                }
                return;
            }
            Err(failure) => {
                if let Some(s) = &counted {
                    s.error(Rpc::CompleteJob, failure.code);
                }
                if !failure.retriable() || attempt == RETRIES {
                    return;
                }
                tokio::time::sleep(backoff(attempt)).await;
            }
        }
    }
}
