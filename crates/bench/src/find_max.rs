//! `--find-max`: which rate the engine sustains. A sans-IO search: it proposes a rate, the
//! driver runs a step at that rate and tells it whether the step held; the rate ramps up by a
//! quarter a step until a step fails, then bisects between the best rate that held and the
//! first that failed.
//!
//! A rate fails only when its step fails twice in a row: a failed step is run again at once
//! (after the backlog it left is worked off). One failure can be a transient that says nothing
//! about the rate: a search of one broker ended its ramp at 244/s on a single stall of about a
//! second, and the same build sustained 5,269/s in a search of its own; a cluster's ramp ended
//! at 1,456/s on one step's burst of refusals (backpressure over 1%), and the same cluster held
//! 2,200/s for 20 s with none. The report lists every step, the failed first tries included.
//!
//! A ramp, not doubling: a step far past the capacity leaves the broker's backpressure limit
//! backed off (AIMD gives one place back per second), so the lower steps after it measured
//! the limit's recovery instead of the engine. Measured on one build, minutes apart: after a
//! doubling to 5,000/s the steps at 2,813 and 2,657/s failed (1.3% and 1.0% refused); ramping
//! from 2,000/s, 2,813, 2,969 and 3,047/s held.

use std::time::Duration;

use crate::stats::PhaseSummary;

/// What a step must meet to count as sustained.
#[derive(Debug, Clone, Copy)]
pub struct Criteria {
    pub max_backpressure: f64,
    pub p99_target: Duration,
}

/// Whether a step held, and if not, why.
pub fn judge(s: &PhaseSummary, c: &Criteria) -> Result<(), String> {
    if s.backpressure_ratio > c.max_backpressure {
        return Err(format!(
            "backpressure {:.2}% > {:.2}%",
            s.backpressure_ratio * 100.0,
            c.max_backpressure * 100.0
        ));
    }
    if s.completed == 0 {
        return Err("no instance completed".into());
    }
    let target_ms = c.p99_target.as_secs_f64() * 1000.0;
    if let Some(p99) = s.latency.p99_ms
        && p99 > target_ms
    {
        return Err(format!("p99 {p99:.1} ms > {target_ms:.1} ms"));
    }
    // Instances still running after the drain are latencies the histogram never saw.
    if s.incomplete as f64 > 0.01 * s.started as f64 {
        return Err(format!(
            "{} of {} instances did not complete",
            s.incomplete, s.started
        ));
    }
    // The gateway took the starts more slowly than they were due (requests queued at the
    // in-flight bound): the rate was not sustained even without refusals.
    if s.started_per_s < 0.95 * s.target_rate * (1.0 - s.backpressure_ratio) {
        return Err(format!(
            "started {:.1}/s of {:.1}/s",
            s.started_per_s, s.target_rate
        ));
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct Search {
    /// Highest rate that held.
    good: Option<f64>,
    /// Lowest rate that failed.
    bad: Option<f64>,
    bisections_left: u32,
    ramp_steps: u32,
    next: Option<f64>,
    max_rate: f64,
    /// The rate whose step failed once and is being run again.
    retrying: Option<f64>,
}

/// Each step of the ramp tries this many times the rate of the last.
const RAMP: f64 = 1.25;

/// Ramp steps tried before the search gives up looking for a failure (1.25^40: 7,500 times
/// the start rate).
const MAX_RAMP_STEPS: u32 = 40;

impl Search {
    pub fn new(start: f64, bisections: u32, max_rate: f64) -> Search {
        Search {
            good: None,
            bad: None,
            bisections_left: bisections,
            ramp_steps: 0,
            next: Some(start.min(max_rate)),
            max_rate,
            retrying: None,
        }
    }

    /// The rate to try next, or `None` when the search is over.
    pub fn next_rate(&self) -> Option<f64> {
        self.next
    }

    /// The highest rate that held so far.
    pub fn best(&self) -> Option<f64> {
        self.good
    }

    pub fn record(&mut self, rate: f64, held: bool) {
        let retried = self.retrying.take() == Some(rate);
        if !held && !retried {
            self.retrying = Some(rate);
            self.next = Some(rate);
            return;
        }
        if held {
            self.good = Some(self.good.map_or(rate, |g| g.max(rate)));
        } else {
            self.bad = Some(self.bad.map_or(rate, |b| b.min(rate)));
        }
        self.next = match self.bad {
            None => {
                self.ramp_steps += 1;
                if rate >= self.max_rate || self.ramp_steps > MAX_RAMP_STEPS {
                    None
                } else {
                    Some(round_rate(rate * RAMP).min(self.max_rate))
                }
            }
            Some(bad) => {
                if self.bisections_left == 0 {
                    None
                } else {
                    self.bisections_left -= 1;
                    let good = self.good.unwrap_or(0.0);
                    // Close enough: the two bounds are within 5% of each other.
                    if good > 0.0 && bad / good < 1.05 {
                        None
                    } else {
                        let mid = round_rate((good + bad) / 2.0);
                        if mid <= good || mid >= bad {
                            None
                        } else {
                            Some(mid)
                        }
                    }
                }
            }
        };
    }
}

/// Whole rates above 10/s, one decimal below: figures a reader can repeat.
fn round_rate(r: f64) -> f64 {
    if r >= 10.0 {
        r.round()
    } else {
        (r * 10.0).round() / 10.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Percentiles;

    /// Runs a search against an engine that holds any rate up to `capacity`.
    fn search(start: f64, capacity: f64, bisections: u32) -> (Option<f64>, Vec<f64>) {
        let mut s = Search::new(start, bisections, 1_000_000.0);
        let mut tried = Vec::new();
        while let Some(rate) = s.next_rate() {
            tried.push(rate);
            s.record(rate, rate <= capacity);
            assert!(tried.len() < 50, "search does not end: {tried:?}");
        }
        (s.best(), tried)
    }

    #[test]
    fn ramps_by_a_quarter_then_bisects() {
        let (best, tried) = search(50.0, 730.0, 4);
        assert_eq!(
            tried,
            vec![
                50.0, 63.0, 79.0, 99.0, 124.0, 155.0, 194.0, 243.0, 304.0, 380.0, 475.0, 594.0,
                743.0, 743.0, 669.0, 706.0, 725.0
            ]
        );
        assert_eq!(best, Some(725.0));
    }

    #[test]
    fn first_step_failing_searches_below_the_start() {
        let (best, tried) = search(100.0, 30.0, 4);
        assert_eq!(tried[..3], [100.0, 100.0, 50.0]);
        assert_eq!(best, Some(25.0));
        let (best, _) = search(100.0, 0.0, 3);
        assert_eq!(best, None);
    }

    #[test]
    fn a_step_that_fails_once_is_run_again_and_a_transient_does_not_end_the_ramp() {
        let mut s = Search::new(100.0, 4, 1_000_000.0);
        s.record(100.0, true);
        assert_eq!(s.next_rate(), Some(125.0));
        // A transient: the step fails, its repeat holds, and the ramp goes on.
        s.record(125.0, false);
        assert_eq!(s.next_rate(), Some(125.0));
        s.record(125.0, true);
        assert_eq!((s.best(), s.next_rate()), (Some(125.0), Some(156.0)));
        // Failing twice in a row is a failure: the search bisects below it.
        s.record(156.0, false);
        assert_eq!(s.next_rate(), Some(156.0));
        s.record(156.0, false);
        assert_eq!(s.next_rate(), Some(141.0));
        // A bisection step is confirmed the same way.
        s.record(141.0, false);
        assert_eq!(s.next_rate(), Some(141.0));
        s.record(141.0, true);
        assert_eq!(s.best(), Some(141.0));
    }

    #[test]
    fn stops_when_the_bounds_are_close() {
        let (best, tried) = search(100.0, 150.0, 20);
        let best = best.unwrap();
        assert!(best <= 150.0 && best > 140.0, "{best} {tried:?}");
        assert!(tried.len() < 12, "{tried:?}");
    }

    #[test]
    fn never_exceeds_the_cap() {
        let mut s = Search::new(100.0, 4, 300.0);
        let mut tried = Vec::new();
        while let Some(rate) = s.next_rate() {
            tried.push(rate);
            s.record(rate, true);
        }
        assert_eq!(tried, vec![100.0, 125.0, 156.0, 195.0, 244.0, 300.0]);
        assert_eq!(s.best(), Some(300.0));
    }

    fn summary(rate: f64) -> PhaseSummary {
        PhaseSummary {
            target_rate: rate,
            started: 1000,
            completed: 1000,
            started_per_s: rate,
            latency: Percentiles {
                p99_ms: Some(50.0),
                ..Percentiles::default()
            },
            ..PhaseSummary::default()
        }
    }

    #[test]
    fn judging_a_step() {
        let c = Criteria {
            max_backpressure: 0.01,
            p99_target: Duration::from_millis(100),
        };
        assert_eq!(judge(&summary(100.0), &c), Ok(()));
        let mut s = summary(100.0);
        s.backpressure_ratio = 0.02;
        assert!(judge(&s, &c).unwrap_err().contains("backpressure"));
        let mut s = summary(100.0);
        s.latency.p99_ms = Some(150.0);
        assert!(judge(&s, &c).unwrap_err().contains("p99"));
        let mut s = summary(100.0);
        s.incomplete = 20;
        assert!(judge(&s, &c).unwrap_err().contains("did not complete"));
        let mut s = summary(100.0);
        s.started_per_s = 80.0;
        assert!(judge(&s, &c).unwrap_err().contains("started"));
        let mut s = summary(100.0);
        s.completed = 0;
        assert!(judge(&s, &c).is_err());
    }
}
