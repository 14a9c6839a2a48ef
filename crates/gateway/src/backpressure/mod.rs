//! Backpressure: a limit on the commands in flight per partition, as Zeebe's broker keeps one.
//!
//! A command takes a [`Permit`] from its partition's [`PartitionLimiter`] before it is sent and
//! gives it back with its answer; the round trip (sent to committed answer) feeds the limit
//! algorithm, which moves the limit: [`AimdLimit`] (the default), [`VegasLimit`] or a
//! [`FixedLimit`], each behind a [`Windowed`] average as in Zeebe. Over the limit, the command
//! is refused at once with RESOURCE_EXHAUSTED, before it costs the partition anything.
//!
//! Commands that finish work already started are never refused, as in Zeebe (job completions
//! and failures, thrown errors, cancellations, deployments): refusing them would keep the work
//! that is loading the partition alive longer. They still count as in flight.

mod aimd;
mod fixed;
mod vegas;
mod windowed;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beeline_protocol::Intent;
use beeline_protocol::intent::{
    CommandDistributionIntent, DeploymentIntent, JobIntent, ProcessInstanceIntent,
};

pub use aimd::{AimdConfig, AimdLimit};
pub use fixed::{DEFAULT_FIXED_LIMIT, FixedLimit};
pub use vegas::{VegasConfig, VegasLimit};
pub use windowed::Windowed;

/// A concurrency limit that learns from round trips.
pub trait Limit: Send + std::fmt::Debug {
    /// The commands that may be in flight now.
    fn limit(&self) -> usize;

    /// One answered command: when it started (since the limiter was made), how long it took,
    /// how many commands were in flight when it started, and whether it was dropped by the
    /// partition (its inbox was full).
    fn on_sample(&mut self, start: Duration, rtt: Duration, inflight: usize, dropped: bool);
}

/// The limit algorithm, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algorithm {
    Aimd(AimdConfig),
    Fixed(usize),
    Vegas(VegasConfig),
}

/// Backpressure settings. `Default` is Zeebe's: AIMD, windowed, enabled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackpressureConfig {
    /// `None`: no limit (every command is sent; the partition's own inbox still bounds memory).
    pub algorithm: Option<Algorithm>,
}

impl Default for BackpressureConfig {
    fn default() -> Self {
        Self {
            algorithm: Some(Algorithm::Aimd(AimdConfig::default())),
        }
    }
}

/// The accepted forms of the backpressure setting, for error messages and help.
pub const BACKPRESSURE_FORMS: &str = "aimd, aimd:<key>=<value>,... (keys: initial, min, max, \
     expected-rtt, backoff), fixed, fixed:<limit>, vegas, vegas:<key>=<value>,... (keys: \
     alpha, beta, initial, max), or off";

impl std::str::FromStr for BackpressureConfig {
    type Err = String;

    /// Parses `aimd`, `aimd:initial=100,min=1,max=1000,expected-rtt=200ms,backoff=0.9`,
    /// `fixed`, `fixed:20`, `vegas`, `vegas:alpha=3,beta=6,initial=20,max=1000`, `off`.
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (name, params) = match text.split_once(':') {
            Some((name, params)) => (name.trim(), Some(params.trim())),
            None => (text, None),
        };
        let algorithm = match (name, params) {
            ("off" | "none" | "disabled", None) => None,
            ("aimd", params) => Some(Algorithm::Aimd(parse_aimd(params.unwrap_or(""))?)),
            ("fixed", None) => Some(Algorithm::Fixed(DEFAULT_FIXED_LIMIT)),
            ("fixed", Some(limit)) => Some(Algorithm::Fixed(parse_count("fixed limit", limit)?)),
            ("vegas", params) => Some(Algorithm::Vegas(parse_vegas(params.unwrap_or(""))?)),
            _ => {
                return Err(format!(
                    "'{text}' is not a backpressure algorithm; expected {BACKPRESSURE_FORMS}"
                ));
            }
        };
        Ok(Self { algorithm })
    }
}

fn parse_count(what: &str, text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a valid {what}; expected a whole number of at least 1"
        )),
    }
}

fn parse_millis(what: &str, text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let number: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a valid {what}; expected e.g. 200ms or 1s"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(number),
        "s" => Duration::from_secs(number),
        _ => {
            return Err(format!(
                "'{text}' is not a valid {what}; expected e.g. 200ms or 1s"
            ));
        }
    };
    if duration.is_zero() {
        return Err(format!("{what} must be greater than 0"));
    }
    Ok(duration)
}

fn params(text: &str) -> impl Iterator<Item = Result<(&str, &str), String>> {
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| format!("'{p}' is not a <key>=<value> parameter"))
        })
}

fn parse_aimd(text: &str) -> Result<AimdConfig, String> {
    let mut config = AimdConfig::default();
    for param in params(text) {
        match param? {
            ("initial", v) => config.initial_limit = parse_count("initial limit", v)?,
            ("min", v) => config.min_limit = parse_count("minimum limit", v)?,
            ("max", v) => config.max_limit = parse_count("maximum limit", v)?,
            ("expected-rtt", v) => config.expected_rtt = parse_millis("expected-rtt", v)?,
            ("backoff", v) => {
                config.backoff_ratio = match v.parse::<f64>() {
                    Ok(r) if (0.5..1.0).contains(&r) => r,
                    _ => {
                        return Err(format!(
                            "'{v}' is not a valid backoff ratio; expected a number in [0.5, 1)"
                        ));
                    }
                }
            }
            (key, _) => {
                return Err(format!(
                    "unknown aimd parameter '{key}'; expected initial, min, max, expected-rtt or backoff"
                ));
            }
        }
    }
    if config.min_limit > config.max_limit {
        return Err(format!(
            "the aimd minimum limit {} is above its maximum {}",
            config.min_limit, config.max_limit
        ));
    }
    Ok(config)
}

fn parse_vegas(text: &str) -> Result<VegasConfig, String> {
    let mut config = VegasConfig::default();
    for param in params(text) {
        match param? {
            ("alpha", v) => config.alpha = parse_count("alpha", v)?,
            ("beta", v) => config.beta = parse_count("beta", v)?,
            ("initial", v) => config.initial_limit = parse_count("initial limit", v)?,
            ("max", v) => config.max_limit = parse_count("maximum limit", v)?,
            (key, _) => {
                return Err(format!(
                    "unknown vegas parameter '{key}'; expected alpha, beta, initial or max"
                ));
            }
        }
    }
    if config.alpha > config.beta {
        return Err(format!(
            "vegas alpha {} is above beta {}",
            config.alpha, config.beta
        ));
    }
    Ok(config)
}

impl std::fmt::Display for BackpressureConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.algorithm {
            None => write!(f, "off"),
            Some(Algorithm::Fixed(limit)) => write!(f, "fixed:{limit}"),
            Some(Algorithm::Aimd(c)) => write!(
                f,
                "aimd:initial={},min={},max={},expected-rtt={}ms,backoff={}",
                c.initial_limit,
                c.min_limit,
                c.max_limit,
                c.expected_rtt.as_millis(),
                c.backoff_ratio
            ),
            Some(Algorithm::Vegas(c)) => write!(
                f,
                "vegas:alpha={},beta={},initial={},max={}",
                c.alpha, c.beta, c.initial_limit, c.max_limit
            ),
        }
    }
}

/// Commands never shed. Zeebe's broker lets job completions and failures, cancellations and
/// deployments through; Beeline adds thrown errors, which also finish a job's work.
pub fn is_never_shed(intent: Intent) -> bool {
    matches!(
        intent,
        Intent::Job(JobIntent::Complete | JobIntent::Fail | JobIntent::ThrowError)
            | Intent::ProcessInstance(ProcessInstanceIntent::Cancel)
            | Intent::Deployment(DeploymentIntent::Create)
            | Intent::CommandDistribution(CommandDistributionIntent::Acknowledge)
    )
}

#[derive(Debug)]
struct State {
    limit: Box<dyn Limit>,
    inflight: usize,
    rejected: u64,
}

/// The in-flight limit of one partition.
#[derive(Debug)]
pub struct PartitionLimiter {
    partition: u16,
    epoch: Instant,
    /// `None` when backpressure is off.
    state: Option<Mutex<State>>,
}

/// Over the limit: how many were in flight and what the limit was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    pub partition: u16,
    pub inflight: usize,
    pub limit: usize,
}

impl PartitionLimiter {
    pub fn new(partition: u16, config: &BackpressureConfig) -> Self {
        let limit: Option<Box<dyn Limit>> = config.algorithm.map(|algorithm| match algorithm {
            Algorithm::Aimd(c) => Box::new(Windowed::new(AimdLimit::new(c))) as Box<dyn Limit>,
            Algorithm::Vegas(c) => Box::new(Windowed::new(VegasLimit::new(c))),
            Algorithm::Fixed(n) => Box::new(FixedLimit(n.max(1))),
        });
        Self::with_limit(partition, limit)
    }

    /// A limiter over any limit (`None`: unlimited); for tests of the algorithms' effect.
    pub fn with_limit(partition: u16, limit: Option<Box<dyn Limit>>) -> Self {
        Self {
            partition,
            epoch: Instant::now(),
            state: limit.map(|limit| {
                Mutex::new(State {
                    limit,
                    inflight: 0,
                    rejected: 0,
                })
            }),
        }
    }

    fn lock(&self) -> Option<std::sync::MutexGuard<'_, State>> {
        self.state
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A permit for one command of `intent`, or why not.
    pub fn try_acquire(self: &Arc<Self>, intent: Intent) -> Result<Permit, Exhausted> {
        let inflight = match self.lock() {
            None => 0,
            Some(mut state) => {
                let limit = state.limit.limit();
                if state.inflight >= limit && !is_never_shed(intent) {
                    state.rejected += 1;
                    return Err(Exhausted {
                        partition: self.partition,
                        inflight: state.inflight,
                        limit,
                    });
                }
                state.inflight += 1;
                state.inflight
            }
        };
        Ok(Permit {
            limiter: Some(self.clone()),
            started: Instant::now(),
            inflight,
        })
    }

    /// Commands in flight now.
    pub fn inflight(&self) -> usize {
        self.lock().map_or(0, |s| s.inflight)
    }

    /// The current limit (`None` when backpressure is off).
    pub fn limit(&self) -> Option<usize> {
        self.lock().map(|s| s.limit.limit())
    }

    /// Commands refused so far.
    pub fn rejected(&self) -> u64 {
        self.lock().map_or(0, |s| s.rejected)
    }

    fn release(&self, sample: Option<(Instant, usize, bool)>) {
        if let Some(mut state) = self.lock() {
            state.inflight = state.inflight.saturating_sub(1);
            if let Some((started, inflight, dropped)) = sample {
                let start = started.saturating_duration_since(self.epoch);
                let rtt = started.elapsed();
                state.limit.on_sample(start, rtt, inflight, dropped);
            }
        }
    }
}

/// One command in flight. Dropped without an outcome (an error that says nothing about load),
/// it only frees its place.
#[derive(Debug)]
pub struct Permit {
    limiter: Option<Arc<PartitionLimiter>>,
    started: Instant,
    inflight: usize,
}

impl Permit {
    /// The command was answered: its round trip counts.
    pub fn success(mut self) {
        if let Some(limiter) = self.limiter.take() {
            limiter.release(Some((self.started, self.inflight, false)));
        }
    }

    /// The partition dropped the command (its inbox was full): the limit should shrink.
    pub fn dropped(mut self) {
        if let Some(limiter) = self.limiter.take() {
            limiter.release(Some((self.started, self.inflight, true)));
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(limiter) = self.limiter.take() {
            limiter.release(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::intent::MessageIntent;

    fn fixed(limit: usize) -> Arc<PartitionLimiter> {
        Arc::new(PartitionLimiter::new(
            1,
            &BackpressureConfig {
                algorithm: Some(Algorithm::Fixed(limit)),
            },
        ))
    }

    const PUBLISH: Intent = Intent::Message(MessageIntent::Publish);

    #[test]
    fn refuses_over_the_limit_and_frees_places_on_answer_or_drop() {
        let limiter = fixed(2);
        let a = limiter.try_acquire(PUBLISH).unwrap();
        let b = limiter.try_acquire(PUBLISH).unwrap();
        assert_eq!(
            limiter.try_acquire(PUBLISH).unwrap_err(),
            Exhausted {
                partition: 1,
                inflight: 2,
                limit: 2
            }
        );
        assert_eq!(limiter.rejected(), 1);
        a.success();
        assert_eq!(limiter.inflight(), 1);
        let c = limiter.try_acquire(PUBLISH).unwrap();
        drop(b);
        c.dropped();
        assert_eq!(limiter.inflight(), 0);
    }

    #[test]
    fn job_completions_failures_and_errors_are_never_shed() {
        let limiter = fixed(1);
        let _held = limiter.try_acquire(PUBLISH).unwrap();
        for intent in [JobIntent::Complete, JobIntent::Fail, JobIntent::ThrowError] {
            let permit = limiter.try_acquire(intent.into());
            assert!(permit.is_ok(), "{intent:?} was shed");
            std::mem::forget(permit);
        }
        assert_eq!(limiter.inflight(), 4, "they still count as in flight");
        assert!(limiter.try_acquire(PUBLISH).is_err());
        assert!(
            limiter
                .try_acquire(ProcessInstanceIntent::Cancel.into())
                .is_ok()
        );
        assert!(
            limiter
                .try_acquire(JobIntent::UpdateRetries.into())
                .is_err()
        );
    }

    #[test]
    fn off_means_unlimited() {
        let limiter = Arc::new(PartitionLimiter::new(
            1,
            &BackpressureConfig { algorithm: None },
        ));
        let permits: Vec<_> = (0..10_000)
            .map(|_| limiter.try_acquire(PUBLISH).unwrap())
            .collect();
        assert_eq!(limiter.limit(), None);
        drop(permits);
    }

    #[test]
    fn answers_move_the_limit() {
        // An unwindowed AIMD limit sees every answer: fast answers with the limit in use
        // raise it one by one.
        let limiter = Arc::new(PartitionLimiter::with_limit(
            1,
            Some(Box::new(AimdLimit::new(AimdConfig {
                initial_limit: 2,
                ..AimdConfig::default()
            }))),
        ));
        let a = limiter.try_acquire(PUBLISH).unwrap();
        let b = limiter.try_acquire(PUBLISH).unwrap();
        a.success();
        b.success();
        assert_eq!(limiter.limit(), Some(4));
        let c = limiter.try_acquire(PUBLISH).unwrap();
        c.dropped();
        assert_eq!(
            limiter.limit(),
            Some(3),
            "a drop shrinks it by the back-off ratio"
        );
    }

    #[test]
    fn settings_parse_with_defaults_and_name_what_is_wrong() {
        let default: BackpressureConfig = "aimd".parse().unwrap();
        assert_eq!(default, BackpressureConfig::default());
        assert_eq!(
            "fixed".parse::<BackpressureConfig>().unwrap().algorithm,
            Some(Algorithm::Fixed(20))
        );
        assert_eq!(
            "fixed:50".parse::<BackpressureConfig>().unwrap().algorithm,
            Some(Algorithm::Fixed(50))
        );
        assert_eq!("off".parse::<BackpressureConfig>().unwrap().algorithm, None);
        assert_eq!(
            "vegas".parse::<BackpressureConfig>().unwrap().algorithm,
            Some(Algorithm::Vegas(VegasConfig::default()))
        );
        let aimd: BackpressureConfig = "aimd:initial=50, max=500,expected-rtt=1s,backoff=0.5"
            .parse()
            .unwrap();
        assert_eq!(
            aimd.algorithm,
            Some(Algorithm::Aimd(AimdConfig {
                initial_limit: 50,
                max_limit: 500,
                expected_rtt: Duration::from_secs(1),
                backoff_ratio: 0.5,
                ..AimdConfig::default()
            }))
        );
        let shown = aimd.to_string();
        assert_eq!(shown.parse::<BackpressureConfig>().unwrap(), aimd);

        for (bad, says) in [
            ("gradient", "aimd, aimd:<key>=<value>"),
            ("fixed:0", "at least 1"),
            ("fixed:lots", "whole number"),
            ("aimd:backoff=1.5", "[0.5, 1)"),
            ("aimd:min=10,max=5", "above its maximum"),
            ("aimd:speed=3", "unknown aimd parameter 'speed'"),
            ("aimd:expected-rtt=5", "200ms"),
            ("vegas:alpha=9,beta=3", "above beta"),
            ("vegas:initial", "<key>=<value>"),
            ("off:1", "not a backpressure algorithm"),
        ] {
            let error = bad.parse::<BackpressureConfig>().unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
