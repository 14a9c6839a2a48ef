//! TCP Vegas-style limit (the algorithm of Netflix's `VegasLimit`, which Zeebe offers as
//! `vegas`): estimate the queue from how much slower a round trip is than the fastest one seen
//! (`queue = limit × (1 − rtt_noload / rtt)`), grow while the queue is short, shrink when it is
//! long, and re-measure the no-load round trip now and then (a probe) so the estimate follows
//! a changing system.

use std::time::Duration;

use super::Limit;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VegasConfig {
    /// Queue length below which the limit grows. Default 3.
    pub alpha: usize,
    /// Queue length above which the limit shrinks. Default 6.
    pub beta: usize,
    /// Default 20.
    pub initial_limit: usize,
    /// Default 1000.
    pub max_limit: usize,
}

impl Default for VegasConfig {
    fn default() -> Self {
        Self {
            alpha: 3,
            beta: 6,
            initial_limit: 20,
            max_limit: 1000,
        }
    }
}

/// Probe after about `PROBE_MULTIPLIER × limit` samples (times a jitter in [0.5, 1)).
const PROBE_MULTIPLIER: f64 = 30.0;

#[derive(Debug)]
pub struct VegasLimit {
    config: VegasConfig,
    estimated: f64,
    rtt_noload: Option<Duration>,
    probe_count: u64,
    probe_jitter: f64,
    /// xorshift state for the probe jitter: deterministic, so tests are repeatable.
    seed: u64,
}

/// `max(1, floor(log10(n)))`: the step Vegas grows and shrinks by, and its "no queue" threshold.
fn log10_step(n: f64) -> f64 {
    if n < 1.0 {
        1.0
    } else {
        n.log10().floor().max(1.0)
    }
}

impl VegasLimit {
    pub fn new(config: VegasConfig) -> Self {
        let mut limit = Self {
            estimated: config.initial_limit.clamp(1, config.max_limit.max(1)) as f64,
            config,
            rtt_noload: None,
            probe_count: 0,
            probe_jitter: 0.75,
            seed: 0x9E37_79B9_7F4A_7C15,
        };
        limit.reset_probe_jitter();
        limit
    }

    fn reset_probe_jitter(&mut self) {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        // 53 random bits to a fraction in [0, 1), then into [0.5, 1).
        let unit = (self.seed >> 11) as f64 / (1u64 << 53) as f64;
        self.probe_jitter = 0.5 + unit * 0.5;
    }

    fn should_probe(&self) -> bool {
        self.probe_jitter * PROBE_MULTIPLIER * self.estimated <= self.probe_count as f64
    }

    fn update_estimate(&mut self, rtt: Duration, noload: Duration, inflight: usize, dropped: bool) {
        let estimated = self.estimated;
        let queue = (estimated * (1.0 - noload.as_secs_f64() / rtt.as_secs_f64())).ceil();
        let step = log10_step(estimated);
        let new_limit = if dropped {
            estimated - step
        } else if (inflight as f64) * 2.0 < estimated {
            // Not using the limit: do not let it drift upwards.
            return;
        } else if queue <= step {
            estimated + self.config.beta as f64
        } else if queue < self.config.alpha as f64 {
            estimated + step
        } else if queue > self.config.beta as f64 {
            estimated - step
        } else {
            return;
        };
        self.estimated = new_limit.clamp(1.0, self.config.max_limit.max(1) as f64);
    }
}

impl Limit for VegasLimit {
    fn limit(&self) -> usize {
        self.estimated as usize
    }

    fn on_sample(&mut self, _start: Duration, rtt: Duration, inflight: usize, dropped: bool) {
        if rtt.is_zero() {
            return;
        }
        self.probe_count += 1;
        if self.should_probe() {
            self.reset_probe_jitter();
            self.probe_count = 0;
            self.rtt_noload = Some(rtt);
            return;
        }
        match self.rtt_noload {
            Some(noload) if rtt >= noload => self.update_estimate(rtt, noload, inflight, dropped),
            _ => self.rtt_noload = Some(rtt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn grows_fast_without_queueing_and_shrinks_with_it() {
        let mut vegas = VegasLimit::new(VegasConfig::default());
        assert_eq!(vegas.limit(), 20);
        vegas.on_sample(Duration::ZERO, 10 * MS, 20, false); // the first sample sets rtt_noload
        assert_eq!(vegas.limit(), 20);
        vegas.on_sample(Duration::ZERO, 10 * MS, 20, false); // no queue: + beta
        assert_eq!(vegas.limit(), 26);
        // Twice the no-load round trip: the queue is half the limit (13), above beta.
        vegas.on_sample(Duration::ZERO, 20 * MS, 26, false);
        assert_eq!(vegas.limit(), 25);
        vegas.on_sample(Duration::ZERO, 10 * MS, 25, true);
        assert_eq!(vegas.limit(), 24, "a drop shrinks it");
    }

    #[test]
    fn grows_by_the_step_while_the_queue_is_below_alpha() {
        let mut vegas = VegasLimit::new(VegasConfig {
            alpha: 10,
            beta: 20,
            initial_limit: 100,
            max_limit: 1000,
        });
        vegas.on_sample(Duration::ZERO, 100 * MS, 100, false);
        // rtt 4% above no-load: queue = ceil(100 × (1 − 100/104)) = 4, between step (2) and alpha.
        vegas.on_sample(Duration::ZERO, 104 * MS, 100, false);
        assert_eq!(vegas.limit(), 102);
    }

    #[test]
    fn ignores_samples_while_the_limit_is_not_in_use() {
        let mut vegas = VegasLimit::new(VegasConfig::default());
        vegas.on_sample(Duration::ZERO, 10 * MS, 20, false);
        vegas.on_sample(Duration::ZERO, 50 * MS, 3, false);
        assert_eq!(vegas.limit(), 20);
    }

    #[test]
    fn probes_reset_the_no_load_round_trip() {
        let mut vegas = VegasLimit::new(VegasConfig {
            initial_limit: 1,
            max_limit: 1,
            ..VegasConfig::default()
        });
        vegas.on_sample(Duration::ZERO, 10 * MS, 1, false);
        // With a limit of 1 a probe comes within 30 samples; afterwards a slower round trip is
        // the new no-load time.
        for _ in 0..40 {
            vegas.on_sample(Duration::ZERO, 50 * MS, 1, false);
        }
        assert_eq!(vegas.rtt_noload, Some(50 * MS));
        assert_eq!(vegas.limit(), 1);
    }
}
