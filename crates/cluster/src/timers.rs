//! The Raft groups' timers, on one grid per broker.
//!
//! openraft runs a tick loop per group: a timer every 13/64 of the heartbeat interval (50 ms at
//! the default 250 ms), with a phase of its own, so a broker holding 8 replicas woke about 160
//! times a second for ticks alone, idle or not (measured with `scripts/idle-cost`: the two
//! runtime workers did nearly all of a broker's ~300 wake-ups a second). Multi-Raft systems
//! drive every group from one base tick instead; openraft's tick is internal, so the groups'
//! runtime ([`GridRuntime`]) puts every wait a group starts (`sleep`, `sleep_until`) on a
//! grid shared by all groups in the process: a deadline is rounded up to the next multiple of
//! the grid's step, so the groups' ticks fall on the same instants and the workers wake once
//! for all of them.
//!
//! The step is the shortest tick interval of the groups opened on a real network
//! ([`share_grid`]); before that (the simulated network's tests) deadlines are kept exact.
//! A wait ends at most one step later than asked: a heartbeat at most one tick later (it was
//! already sent at the first tick at or after its deadline), an election at most one tick
//! later than openraft alone would stand, against an election timeout of 20 ticks or more.
//! Timeouts around a future (`timeout`, `timeout_at`: calls to peers) are kept exact.

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[allow(deprecated)] // openraft re-exports the tokio runtime it is built with; no second copy
use openraft::TokioRuntime;
use openraft::{AsyncRuntime, Instant as _, OptionalSend};

type Tokio = TokioRuntime;
type TokioInstant = <Tokio as AsyncRuntime>::Instant;

/// The grid's step in microseconds; 0 keeps deadlines exact.
static STEP_US: AtomicU64 = AtomicU64::new(0);
/// The grid's origin: the first deadline put on it.
static ORIGIN: OnceLock<TokioInstant> = OnceLock::new();

/// Puts the timers of every group in this process on a grid of `step` (the smallest asked for
/// wins, so that no group's tick grows longer than its own interval).
pub fn share_grid(step: Duration) {
    let step = step.as_micros().clamp(1, u64::MAX as u128) as u64;
    let _ = STEP_US.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |current| {
        (current == 0 || step < current).then_some(step)
    });
}

/// `deadline` rounded up to the grid.
fn on_grid(deadline: TokioInstant) -> TokioInstant {
    match STEP_US.load(Ordering::Relaxed) {
        0 => deadline,
        step => round_up(deadline, *ORIGIN.get_or_init(TokioInstant::now), step),
    }
}

/// `deadline` rounded up to the next multiple of `step_us` after `origin` (a deadline before
/// the origin is kept).
fn round_up(deadline: TokioInstant, origin: TokioInstant, step_us: u64) -> TokioInstant {
    let offset = (deadline - origin).as_micros() as u64;
    origin + Duration::from_micros(offset.div_ceil(step_us).saturating_mul(step_us))
}

/// Tokio, with every sleep of a group ending on the broker's timer grid.
#[derive(Debug)]
pub struct GridRuntime(Tokio);

impl AsyncRuntime for GridRuntime {
    type JoinError = <Tokio as AsyncRuntime>::JoinError;
    type JoinHandle<T: OptionalSend + 'static> = <Tokio as AsyncRuntime>::JoinHandle<T>;
    type Sleep = <Tokio as AsyncRuntime>::Sleep;
    type Instant = TokioInstant;
    type TimeoutError = <Tokio as AsyncRuntime>::TimeoutError;
    type Timeout<R, T: Future<Output = R> + OptionalSend> = <Tokio as AsyncRuntime>::Timeout<R, T>;
    type ThreadLocalRng = <Tokio as AsyncRuntime>::ThreadLocalRng;
    type Mpsc = <Tokio as AsyncRuntime>::Mpsc;
    type Watch = <Tokio as AsyncRuntime>::Watch;
    type Oneshot = <Tokio as AsyncRuntime>::Oneshot;
    type Mutex<T: OptionalSend + 'static> = <Tokio as AsyncRuntime>::Mutex<T>;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        Tokio::spawn(future)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        Tokio::sleep_until(on_grid(TokioInstant::now() + duration))
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        Tokio::sleep_until(on_grid(deadline))
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        Tokio::timeout(duration, future)
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        Tokio::timeout_at(deadline, future)
    }

    fn is_panic(join_error: &Self::JoinError) -> bool {
        Tokio::is_panic(join_error)
    }

    fn thread_rng() -> Self::ThreadLocalRng {
        Tokio::thread_rng()
    }

    fn new(threads: usize) -> Self {
        Self(Tokio::new(threads))
    }

    fn block_on<F, T>(&mut self, future: F) -> T
    where
        F: Future<Output = T>,
    {
        self.0.block_on(future)
    }

    fn spawn_blocking<F, T>(f: F) -> impl Future<Output = Result<T, std::io::Error>> + Send
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        Tokio::spawn_blocking(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_round_up_to_one_grid() {
        let origin = TokioInstant::now();
        let at = |ms: u64| origin + Duration::from_millis(ms);
        let on_grid = |deadline| round_up(deadline, origin, 50_000);
        assert_eq!(on_grid(at(0)), at(0));
        assert_eq!(on_grid(at(1)), at(50));
        assert_eq!(on_grid(at(50)), at(50));
        assert_eq!(on_grid(at(73)), at(100));
        // Two groups' ticks at different phases meet on the same instant.
        assert_eq!(on_grid(at(1013)), on_grid(at(1042)));
    }
}
