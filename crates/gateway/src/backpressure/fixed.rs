//! A limit that never moves: predictable, and immune to clock trouble.

use std::time::Duration;

use super::Limit;

/// Zeebe's default for `fixed`.
pub const DEFAULT_FIXED_LIMIT: usize = 20;

#[derive(Debug)]
pub struct FixedLimit(pub usize);

impl Limit for FixedLimit {
    fn limit(&self) -> usize {
        self.0
    }

    fn on_sample(&mut self, _start: Duration, _rtt: Duration, _inflight: usize, _dropped: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_moves() {
        let mut fixed = FixedLimit(7);
        fixed.on_sample(Duration::ZERO, Duration::from_secs(10), 7, true);
        fixed.on_sample(Duration::ZERO, Duration::from_micros(1), 7, false);
        assert_eq!(fixed.limit(), 7);
    }
}
