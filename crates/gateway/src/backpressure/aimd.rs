//! Additive increase, multiplicative decrease, as Zeebe's `StabilizingAIMDLimit`: grow by one
//! while answers come back within the expected round trip and the limit is in use; shrink by
//! the back-off ratio when they come back slower (or a command was dropped), but only while
//! the commands in flight fit the limit, so the limit settles instead of swinging between 1
//! and twice the optimum as a plain AIMD limit does.

use std::time::Duration;

use super::Limit;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdConfig {
    /// Round trips slower than this shrink the limit. Default 200 ms.
    pub expected_rtt: Duration,
    /// Default 100.
    pub initial_limit: usize,
    /// Default 1.
    pub min_limit: usize,
    /// Default 1000.
    pub max_limit: usize,
    /// The factor a shrinking limit is multiplied by, in [0.5, 1). Default 0.9.
    pub backoff_ratio: f64,
}

impl Default for AimdConfig {
    fn default() -> Self {
        Self {
            expected_rtt: Duration::from_millis(200),
            initial_limit: 100,
            min_limit: 1,
            max_limit: 1000,
            backoff_ratio: 0.9,
        }
    }
}

#[derive(Debug)]
pub struct AimdLimit {
    config: AimdConfig,
    limit: usize,
}

impl AimdLimit {
    pub fn new(config: AimdConfig) -> Self {
        let limit = config
            .initial_limit
            .clamp(config.min_limit, config.max_limit);
        Self { config, limit }
    }
}

impl Limit for AimdLimit {
    fn limit(&self) -> usize {
        self.limit
    }

    fn on_sample(&mut self, _start: Duration, rtt: Duration, inflight: usize, dropped: bool) {
        let mut limit = self.limit;
        if dropped || rtt > self.config.expected_rtt {
            if inflight <= limit {
                limit = (limit as f64 * self.config.backoff_ratio) as usize;
            }
        } else if inflight * 2 >= limit {
            limit += 1;
        }
        self.limit = limit.clamp(self.config.min_limit, self.config.max_limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: Duration = Duration::from_millis(5);
    const SLOW: Duration = Duration::from_millis(500);

    fn limit(initial: usize) -> AimdLimit {
        AimdLimit::new(AimdConfig {
            initial_limit: initial,
            min_limit: 2,
            max_limit: 12,
            ..AimdConfig::default()
        })
    }

    #[test]
    fn grows_by_one_while_fast_and_in_use() {
        let mut aimd = limit(10);
        aimd.on_sample(Duration::ZERO, FAST, 5, false);
        assert_eq!(aimd.limit(), 11);
        aimd.on_sample(Duration::ZERO, FAST, 6, false);
        assert_eq!(aimd.limit(), 12);
        aimd.on_sample(Duration::ZERO, FAST, 12, false);
        assert_eq!(aimd.limit(), 12, "capped at the maximum");
    }

    #[test]
    fn does_not_grow_when_the_limit_is_not_in_use() {
        let mut aimd = limit(10);
        aimd.on_sample(Duration::ZERO, FAST, 4, false);
        assert_eq!(aimd.limit(), 10);
    }

    #[test]
    fn shrinks_by_the_ratio_when_slow_or_dropped() {
        let mut aimd = limit(10);
        aimd.on_sample(Duration::ZERO, SLOW, 10, false);
        assert_eq!(aimd.limit(), 9);
        aimd.on_sample(Duration::ZERO, FAST, 9, true);
        assert_eq!(aimd.limit(), 8);
        for _ in 0..20 {
            aimd.on_sample(Duration::ZERO, SLOW, 1, false);
        }
        assert_eq!(aimd.limit(), 2, "floored at the minimum");
    }

    #[test]
    fn stabilizes_while_more_is_in_flight_than_the_limit() {
        let mut aimd = limit(10);
        aimd.on_sample(Duration::ZERO, SLOW, 11, false);
        assert_eq!(aimd.limit(), 10);
    }

    #[test]
    fn initial_limit_is_clamped() {
        assert_eq!(limit(100).limit(), 12);
        assert_eq!(limit(0).limit(), 2);
    }
}
