//! The open-loop start schedule: start `n` is due at `n / rate` after the phase began, whether
//! or not earlier starts have been answered. A starter that falls behind sends what is overdue
//! at once (every `due(n)` already past), and each instance's latency counts from its due time, so a slow engine cannot hide
//! behind a slow starter (coordinated omission).

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    rate: f64,
    length: Duration,
}

impl Schedule {
    /// `rate` starts per second for `length`.
    pub fn new(rate: f64, length: Duration) -> Schedule {
        Schedule { rate, length }
    }

    /// How many starts the phase has: those due strictly before its end.
    pub fn total(&self) -> u64 {
        let exact = self.length.as_secs_f64() * self.rate;
        let n = exact.ceil();
        if n <= 0.0 { 0 } else { n as u64 }
    }

    /// When start `n` is due, after the phase began.
    pub fn due(&self, n: u64) -> Duration {
        // Computed from n each time, not accumulated, so no rounding drift over long runs.
        Duration::from_secs_f64(n as f64 / self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_are_evenly_spaced_from_the_phase_start() {
        let s = Schedule::new(200.0, Duration::from_secs(20));
        assert_eq!(s.total(), 4000);
        assert_eq!(s.due(0), Duration::ZERO);
        assert_eq!(s.due(1), Duration::from_millis(5));
        assert_eq!(s.due(200), Duration::from_secs(1));
        assert_eq!(s.due(3999), Duration::from_micros(19_995_000));
        assert!(s.due(s.total() - 1) < Duration::from_secs(20));
    }

    #[test]
    fn fractional_rates_and_lengths() {
        let s = Schedule::new(0.5, Duration::from_secs(5));
        // Due at 0, 2 and 4 s.
        assert_eq!(s.total(), 3);
        assert_eq!(s.due(2), Duration::from_secs(4));
        let s = Schedule::new(3.0, Duration::from_millis(1500));
        assert_eq!(s.total(), 5); // 0, .33, .67, 1.0, 1.33
        assert_eq!(Schedule::new(10.0, Duration::ZERO).total(), 0);
    }

    #[test]
    fn no_drift_over_a_long_run() {
        let s = Schedule::new(333.0, Duration::from_secs(86_400));
        let n = 333 * 86_000;
        let due = s.due(n);
        assert!((due.as_secs_f64() - 86_000.0).abs() < 1e-6, "{due:?}");
    }
}
