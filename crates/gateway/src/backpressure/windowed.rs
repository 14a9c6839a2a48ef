//! Feeds a limit averages over a window of samples instead of every sample (Netflix's
//! `WindowedLimit`, which Zeebe wraps around every algorithm by default): one slow commit then
//! does not shrink the limit, and the limit moves at most about once a second.

use std::time::Duration;

use super::Limit;

const MIN_WINDOW: Duration = Duration::from_secs(1);
const MAX_WINDOW: Duration = Duration::from_secs(1);
/// Answers faster than this say nothing about load (they did not touch the disk).
const MIN_RTT: Duration = Duration::from_micros(100);
/// A window needs this many samples to count.
const WINDOW_SIZE: u32 = 10;

#[derive(Debug, Default)]
struct Window {
    min_rtt: Option<Duration>,
    sum_rtt: Duration,
    count: u32,
    max_inflight: usize,
    dropped: bool,
}

#[derive(Debug)]
pub struct Windowed<L> {
    inner: L,
    window: Window,
    next_update: Duration,
}

impl<L: Limit> Windowed<L> {
    pub fn new(inner: L) -> Self {
        Self {
            inner,
            window: Window::default(),
            next_update: Duration::ZERO,
        }
    }
}

impl<L: Limit> Limit for Windowed<L> {
    fn limit(&self) -> usize {
        self.inner.limit()
    }

    fn on_sample(&mut self, start: Duration, rtt: Duration, inflight: usize, dropped: bool) {
        if rtt < MIN_RTT {
            return;
        }
        let window = &mut self.window;
        window.min_rtt = Some(window.min_rtt.map_or(rtt, |min| min.min(rtt)));
        window.sum_rtt = window.sum_rtt.saturating_add(rtt);
        window.count += 1;
        window.max_inflight = window.max_inflight.max(inflight);
        window.dropped |= dropped;

        let end = start.saturating_add(rtt);
        if end > self.next_update {
            let done = std::mem::take(&mut self.window);
            let candidate = done.min_rtt.unwrap_or(MAX_WINDOW);
            self.next_update = end + candidate.saturating_mul(2).clamp(MIN_WINDOW, MAX_WINDOW);
            if done.count >= WINDOW_SIZE {
                let average = done.sum_rtt / done.count;
                self.inner
                    .on_sample(start, average, done.max_inflight, done.dropped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Recorder(Vec<(Duration, usize, bool)>);

    impl Limit for Recorder {
        fn limit(&self) -> usize {
            1
        }
        fn on_sample(&mut self, _start: Duration, rtt: Duration, inflight: usize, dropped: bool) {
            self.0.push((rtt, inflight, dropped));
        }
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn passes_on_one_average_per_full_window() {
        let mut windowed = Windowed::new(Recorder::default());
        // The first sample closes the (empty) initial window.
        windowed.on_sample(Duration::ZERO, MS, 1, false);
        // Twenty samples within the next second: nothing passes until the window ends.
        for i in 0..20u32 {
            windowed.on_sample(100 * MS + i * MS, (i % 2 + 1) * 2 * MS, i as usize, i == 3);
        }
        assert!(windowed.inner.0.is_empty());
        // A sample ending after the window closes it: 21 samples, average of 2 ms and 4 ms.
        windowed.on_sample(1200 * MS, 3 * MS, 2, false);
        assert_eq!(windowed.inner.0.len(), 1);
        let (rtt, inflight, dropped) = windowed.inner.0[0];
        assert_eq!(inflight, 19);
        assert!(dropped);
        assert!(rtt > 2 * MS && rtt < 4 * MS, "{rtt:?}");
    }

    #[test]
    fn sparse_windows_and_tiny_round_trips_are_ignored() {
        let mut windowed = Windowed::new(Recorder::default());
        for i in 0..100u32 {
            windowed.on_sample(i * MS, Duration::from_micros(10), 1, false);
        }
        // Few samples per window.
        for i in 0..5u32 {
            windowed.on_sample(i * 2000 * MS, 2 * MS, 1, false);
        }
        assert!(windowed.inner.0.is_empty());
    }
}
