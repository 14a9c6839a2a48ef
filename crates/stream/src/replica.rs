//! A replica of a replicated partition: it follows the group's committed log into its own
//! state while another replica leads, and processes from that state while it leads.
//!
//! - **Following**: committed entries are replayed into the replica's own state as they are
//!   committed (recovery's replay path, kept live), so the key generator and positions stay
//!   current; the replica takes its own snapshots on the partition's schedule. Commands are
//!   refused with [`PartitionError::NotLeader`] before anything is written.
//! - **Promotion**: the log reports [`Role::Leader`] only once everything before the new
//!   term's first entry is committed; the replayer reads to the end of the committed log, and
//!   the stream processor starts from that state as it is (no restore), with the commands
//!   that have no results yet. Its journal proposes every batch to the group, and its commit
//!   index is the group's quorum commit, so answers and side effects wait for a quorum.
//! - **Demotion** (the role changes, or the group refuses a write or a commit): the processor
//!   stops; commands written and not answered get [`PartitionError::Interrupted`] (they may
//!   still be committed by the next leader), commands not written get
//!   [`PartitionError::NotLeader`]. The processor's state may hold results that are never
//!   committed, so it is dropped: the follower state is rebuilt from the latest snapshot and
//!   the committed log (as Zeebe resets its state on leaving leadership). This costs a replay
//!   since the last snapshot on every demotion, and leaves no way for uncommitted state to
//!   survive; keeping uncommitted batches apart in the write-back overlay would make it
//!   cheaper.
//! - **A snapshot from the leader** (this replica needed entries the leader had purged) is in
//!   the snapshot store once the log reports it installed: the follower drops its state and
//!   rebuilds it from that snapshot and the log after it, as after a demotion. Followers
//!   report their own snapshots to the log, which compacts below them.
//! - The inbox, control channel, metrics and role watch outlive every term, so the handle the
//!   gateway holds stays valid across leadership changes.

use std::sync::{Arc, Mutex};

use beeline_engine::Engine;
use beeline_log::Journal;
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::clock::Clock;
use crate::config::{FlushPolicy, PartitionConfig};
use crate::error::{OpenError, PartitionError};
use crate::exporters::ExporterPositions;
use crate::handback::Yields;
use crate::handle::{CommandRequest, Control, PartitionHandle, PartitionStatus};
use crate::metrics::PartitionMetrics;
use crate::processor::{Recovered, Stop, StreamProcessor, first_needed};
use crate::reader::LogStreamReader;
use crate::recovery::{Partition, Replayer, Restored, StoreOpener, exporter_positions, restore};
use crate::role::{ReplicatedLog, Role, RoleState};
use crate::router::CommandRouter;

type LogReader<L> = <<L as ReplicatedLog>::Journal as Journal>::Reader;

/// A follower's state: the store, the engine over it, and the replayer feeding it.
struct Follower<L: ReplicatedLog> {
    store: Arc<dyn Store>,
    engine: Engine,
    replayer: Replayer<LogReader<L>>,
    /// What the replayer had read (`Replayer::bytes`) at the latest snapshot this follower
    /// took: the log since then is what `PartitionConfig::snapshot_log_size` bounds.
    bytes_at_snapshot: u64,
}

impl<L: ReplicatedLog> Follower<L> {
    /// Bytes of log entries replayed since the state's latest snapshot.
    fn log_since_snapshot(&self) -> u64 {
        self.replayer.bytes.saturating_sub(self.bytes_at_snapshot)
    }
}

impl Partition {
    /// Opens a replica of a replicated partition over its group's `log` and starts it on
    /// the current Tokio runtime: it restores the latest snapshot, replays the committed log,
    /// and then follows or leads as the group decides (see the module documentation).
    pub fn open_replica<L: ReplicatedLog>(
        mut config: PartitionConfig,
        log: Arc<L>,
        snapshots: SnapshotStore,
        store_opener: Arc<dyn StoreOpener + Send + Sync>,
        clock: Arc<dyn Clock>,
        router: Option<Arc<dyn CommandRouter>>,
    ) -> Result<PartitionHandle, OpenError> {
        // An answer waits for the group's commit, never for a local timer.
        config.flush = FlushPolicy::Immediate;
        let partition = config.partition_id;
        let disk = config.disk.clone();
        // Subscribed before the state is restored: a snapshot installed meanwhile is seen.
        let installed = log.installed();
        let follower = follow::<L>(&config, &log, &snapshots, store_opener.as_ref())?;
        let exporters = exporter_positions(&config, follower.store.as_ref())?;
        let (commands_tx, commands_rx) = mpsc::channel(config.inbox_capacity.max(1));
        let (control_tx, control_rx) = mpsc::channel(16);
        let (status_tx, status_rx) = watch::channel(PartitionStatus::Healthy);
        let (role_tx, role_rx) = watch::channel(RoleState::inactive());
        let metrics = Arc::new(PartitionMetrics::default());
        let (jobs_available, _) = broadcast::channel(256);
        let replica = Replica {
            config,
            log,
            snapshots,
            store_opener,
            clock,
            router,
            metrics: metrics.clone(),
            jobs_available: jobs_available.clone(),
            exporters: exporters.clone(),
            role: role_tx,
            status: status_tx,
            step_down: control_tx.clone(),
            yields: Mutex::default(),
        };
        tokio::spawn(replica.run(follower, installed, commands_rx, control_rx));
        Ok(PartitionHandle {
            partition_id: partition,
            commands: commands_tx,
            control: control_tx,
            status: status_rx,
            metrics,
            jobs_available,
            exporters,
            role: role_rx,
            replicated: true,
            disk,
        })
    }
}

/// Restores the latest snapshot and replays the committed log after it.
fn follow<L: ReplicatedLog>(
    config: &PartitionConfig,
    log: &L,
    snapshots: &SnapshotStore,
    store_opener: &dyn StoreOpener,
) -> Result<Follower<L>, OpenError> {
    let partition = config.partition_id;
    let replay_error = |reason: String| OpenError::Replay { partition, reason };
    let Restored {
        store,
        engine,
        snapshot_position,
    } = restore(config, snapshots, store_opener)?;
    let mut replayer =
        Replayer::new(&engine, store.as_ref(), log.reader()).map_err(replay_error)?;
    replayer
        .catch_up(&engine, store.as_ref())
        .map_err(replay_error)?;
    tracing::info!(
        partition,
        snapshot = snapshot_position,
        replayed_records = replayer.records,
        "replica restored; following the committed log"
    );
    Ok(Follower {
        store,
        engine,
        replayer,
        bytes_at_snapshot: 0,
    })
}

/// A term the replica waits to lead until the commit index passes `commit` or
/// [`HeldBack::RETRY`] has passed (see `Replica::run`).
#[derive(Debug, Clone, Copy)]
struct HeldBack {
    term: u64,
    commit: u64,
    until: tokio::time::Instant,
}

impl HeldBack {
    /// How long a term is held back at most. The group may keep this replica its leader in
    /// the same term after a write was refused (a refusal while a vote went on, which the
    /// group's leadership survived): nothing is written then, so the commit index never
    /// moves, and without a retry the partition would have a leader that never processes.
    const RETRY: std::time::Duration = std::time::Duration::from_millis(500);

    fn now<L: ReplicatedLog>(term: u64, log: &L) -> Self {
        Self {
            term,
            commit: log.commit_index().get(),
            until: tokio::time::Instant::now() + Self::RETRY,
        }
    }

    fn holds(self, term: u64, commit: u64) -> bool {
        term == self.term && commit <= self.commit && tokio::time::Instant::now() < self.until
    }
}

/// What ends following.
enum Next {
    Lead(RoleState),
    /// A snapshot from the leader replaced the log: rebuild the state from it.
    Restore,
    /// Stop for good; answer `done` once stopped.
    Stop(Option<oneshot::Sender<()>>),
}

struct Replica<L: ReplicatedLog> {
    config: PartitionConfig,
    log: Arc<L>,
    snapshots: SnapshotStore,
    store_opener: Arc<dyn StoreOpener + Send + Sync>,
    clock: Arc<dyn Clock>,
    router: Option<Arc<dyn CommandRouter>>,
    metrics: Arc<PartitionMetrics>,
    jobs_available: broadcast::Sender<String>,
    exporters: Arc<ExporterPositions>,
    role: watch::Sender<RoleState>,
    status: watch::Sender<PartitionStatus>,
    /// The control channel's sending side, to stop a leading processor.
    step_down: mpsc::Sender<Control>,
    /// Yields owed to the leader for jobs a processor of this replica activated and never
    /// pushed, or that were handed back while it followed (see `crate::handback`). Only the
    /// replica's task uses it.
    yields: Mutex<Yields>,
}

impl<L: ReplicatedLog> Replica<L> {
    async fn run(
        self,
        follower: Follower<L>,
        mut installed: watch::Receiver<u64>,
        mut commands: mpsc::Receiver<CommandRequest>,
        mut control: mpsc::Receiver<Control>,
    ) {
        let partition = self.config.partition_id;
        let mut roles = self.log.roles();
        let mut state = Some(follower);
        // A term this replica may not lead (again) until the commit index moves past the
        // given one or the role changes: its log held uncommitted entries, or the group
        // refused the term's writes before the role watch showed it. Trying again at once
        // would spin (and rebuild the state each time) while nothing can change.
        let mut held_back: Option<HeldBack> = None;
        loop {
            let mut follower = match state.take() {
                Some(follower) => follower,
                None => match self.rebuild().await {
                    Ok(follower) => follower,
                    Err(reason) => {
                        self.fail(reason, &mut commands, &mut control).await;
                        return;
                    }
                },
            };
            let lead = match self
                .follow(
                    &mut follower,
                    &mut installed,
                    &mut commands,
                    &mut control,
                    &mut roles,
                    held_back,
                )
                .await
            {
                Ok(Next::Lead(lead)) => lead,
                Ok(Next::Restore) => {
                    drop(follower);
                    installed.mark_unchanged();
                    tracing::info!(
                        partition,
                        "a snapshot from the leader was installed; rebuilding the state from it"
                    );
                    continue;
                }
                Ok(Next::Stop(done)) => {
                    self.stop(Some(follower), done).await;
                    return;
                }
                Err(reason) => {
                    drop(follower);
                    self.fail(reason, &mut commands, &mut control).await;
                    return;
                }
            };
            let Some(journal) = self.log.lead(lead.term) else {
                held_back = Some(HeldBack::now(lead.term, self.log.as_ref()));
                state = Some(follower);
                continue;
            };
            held_back = None;
            if let Err(reason) = follower
                .replayer
                .catch_up(&follower.engine, follower.store.as_ref())
            {
                drop(follower);
                self.fail(reason, &mut commands, &mut control).await;
                return;
            }
            tracing::info!(
                partition,
                term = lead.term,
                position = follower.replayer.next_position - 1,
                unprocessed = follower.replayer.unprocessed_len(),
                "leading"
            );
            let unprocessed = match follower.replayer.take_unprocessed() {
                Ok(unprocessed) => unprocessed,
                Err(reason) => {
                    drop(follower);
                    self.fail(reason, &mut commands, &mut control).await;
                    return;
                }
            };
            let log_since_snapshot = follower.log_since_snapshot();
            let Follower {
                store,
                engine,
                replayer,
                ..
            } = follower;
            let processor = StreamProcessor::new(Recovered {
                config: self.config.clone(),
                journal,
                store,
                engine,
                snapshots: self.snapshots.clone(),
                clock: self.clock.clone(),
                metrics: self.metrics.clone(),
                // The replica reports the partition's status, not the processor of one term.
                status: watch::channel(PartitionStatus::Healthy).0,
                next_position: replayer.next_position,
                unprocessed,
                router: self.router.clone(),
                jobs_available: self.jobs_available.clone(),
                exporters: self.exporters.clone(),
                replica: true,
                log_since_snapshot,
                // Everything before this term is committed: the processor yields what is
                // still activated with these deadlines, and its yield refuses the rest.
                undelivered: self.yields().take(),
            });
            self.role.send_replace(lead);
            PartitionMetrics::add(&self.metrics.elections, 1);
            let mut running = tokio::spawn(processor.run(commands, control));
            let mut asked = false;
            let finished = loop {
                tokio::select! {
                    finished = &mut running => break finished,
                    changed = roles.changed(), if !asked => {
                        let now = *roles.borrow_and_update();
                        if changed.is_err() || now.role != Role::Leader || now.term != lead.term {
                            asked = true;
                            let reason = format!("leadership of term {} ended", lead.term);
                            let _ = self.step_down.send(Control::StepDown(reason)).await;
                        }
                    }
                }
            };
            let Ok(Some(finished)) = finished else {
                tracing::error!(partition, "the stream processor task failed");
                let _ = self.status.send(PartitionStatus::Failed(
                    "the stream processor task failed".into(),
                ));
                self.role.send_replace(RoleState::inactive());
                self.log.shutdown().await;
                return;
            };
            commands = finished.commands;
            control = finished.control;
            if !finished.undelivered.is_empty() {
                tracing::info!(
                    partition,
                    jobs = finished.undelivered.len(),
                    "stepped down holding pushes not made; their jobs go back to the next leader"
                );
            }
            self.yields().add(finished.undelivered);
            self.role.send_replace(RoleState {
                role: Role::Follower,
                ..*roles.borrow()
            });
            match finished.stop {
                Stop::Requested(done) | Stop::Halted(done) => {
                    self.stop(None, Some(done)).await;
                    return;
                }
                Stop::HandlesGone => {
                    self.stop(None, None).await;
                    return;
                }
                Stop::SteppedDown(_) => {}
                Stop::Failed(reason) => {
                    let now = *roles.borrow();
                    if now.role == Role::Leader
                        && now.term == lead.term
                        && self.log.leads(lead.term)
                    {
                        // Not a lost leadership: the partition cannot process. It leaves the
                        // group so that another replica leads.
                        self.fail(reason, &mut commands, &mut control).await;
                        return;
                    }
                    tracing::info!(partition, %reason, "stepped down");
                }
            }
            if !self.log.leads(lead.term) {
                held_back = Some(HeldBack::now(lead.term, self.log.as_ref()));
            }
            // `state` is None: the follower state is rebuilt from the snapshot and the
            // committed log, without what the processor did past the commit.
        }
    }

    /// Replays committed entries as they come, takes snapshots, and refuses commands, until
    /// this replica may lead or is stopped.
    async fn follow(
        &self,
        follower: &mut Follower<L>,
        installed: &mut watch::Receiver<u64>,
        commands: &mut mpsc::Receiver<CommandRequest>,
        control: &mut mpsc::Receiver<Control>,
        roles: &mut watch::Receiver<RoleState>,
        held_back: Option<HeldBack>,
    ) -> Result<Next, String> {
        let partition = self.config.partition_id;
        let commit_index = self.log.commit_index();
        let mut commits = commit_index.subscribe();
        // A commit between the state's restore and this subscription wakes nothing: replayed
        // now, and the position shown is the state's (a rebuilt state's too).
        let mut replayed = self.catch_up(follower)?;
        let mut snapshot_timer = self.config.snapshot_timer();
        let mut roles_open = true;
        loop {
            // The state is replaced before anything more is read into it or snapshotted.
            if installed.has_changed().unwrap_or(false) {
                return Ok(Next::Restore);
            }
            let mut now = *roles.borrow_and_update();
            // When a held-back term is tried again.
            let mut retry = None;
            if now.role == Role::Leader {
                match held_back {
                    Some(held) if held.holds(now.term, commit_index.get()) => {
                        retry = Some(held.until);
                    }
                    _ => return Ok(Next::Lead(now)),
                }
                // The group's leader, not processing: shown as a follower that knows no
                // leader, so that requests are not sent here.
                now.role = Role::Follower;
                now.leader = None;
            }
            self.role.send_if_modified(|role| {
                let changed = *role != now;
                *role = now;
                changed
            });
            let resend = self.send_yields(follower, replayed)?;
            tokio::select! {
                biased;
                Ok(()) = installed.changed() => return Ok(Next::Restore),
                request = control.recv() => match request {
                    Some(Control::Shutdown(done)) => {
                        if self.config.snapshot_period.is_some()
                            && let Err(reason) = self.snapshot(follower)
                        {
                            tracing::warn!(partition, %reason, "snapshot at shutdown failed");
                        }
                        return Ok(Next::Stop(Some(done)));
                    }
                    Some(Control::Halt(done)) => return Ok(Next::Stop(Some(done))),
                    Some(Control::Snapshot(respond)) => {
                        let _ = respond.send(self.snapshot(follower));
                    }
                    Some(Control::RunScheduler(respond)) => {
                        let _ = respond.send(());
                    }
                    // A follower writes nothing.
                    Some(Control::Sync(respond)) => {
                        let _ = respond.send(Ok(()));
                    }
                    Some(Control::Reader(respond)) => {
                        let reader = LogStreamReader::new(
                            Box::new(self.log.reader()),
                            self.log.commit_index().subscribe(),
                        );
                        let _ = respond.send(reader);
                    }
                    Some(Control::StepDown(_)) | Some(Control::HoldSideEffects(_)) => {}
                    Some(Control::HandBack(jobs)) => self.yields().add(jobs),
                    None => return Ok(Next::Stop(None)),
                },
                changed = roles.changed(), if roles_open => {
                    roles_open = changed.is_ok();
                }
                _ = commits.changed() => {
                    replayed = self.catch_up(follower)?;
                    if self
                        .config
                        .snapshot_log_limit()
                        .is_some_and(|limit| follower.log_since_snapshot() >= limit)
                        && let Err(reason) = self.snapshot(follower)
                    {
                        tracing::warn!(partition, %reason, "snapshot failed");
                    }
                }
                _ = async {
                    match retry {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {}
                _ = tick(&mut snapshot_timer) => {
                    if let Err(reason) = self.snapshot(follower) {
                        tracing::warn!(partition, %reason, "snapshot failed");
                    }
                }
                () = sleep_until(resend) => {}
                request = commands.recv() => match request {
                    Some(request) => {
                        let _ = request.respond.send(Err(PartitionError::NotLeader {
                            partition,
                            leader: now.leader,
                        }));
                    }
                    None => return Ok(Next::Stop(None)),
                },
            }
        }
    }

    fn yields(&self) -> std::sync::MutexGuard<'_, Yields> {
        self.yields.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends the leader the yields that are due (see `crate::handback`); returns when to look
    /// again.
    fn send_yields(
        &self,
        follower: &Follower<L>,
        replayed: u64,
    ) -> Result<Option<tokio::time::Instant>, String> {
        let mut yields = self.yields();
        if yields.is_empty() {
            return Ok(None);
        }
        yields.send(
            &follower.engine,
            follower.store.as_ref(),
            replayed,
            self.clock.now_ms(),
            self.router.as_deref(),
        )?;
        Ok(yields.next_resend())
    }

    /// Replays what was committed since the last call; returns the commit index read before,
    /// which the state now holds everything up to.
    fn catch_up(&self, follower: &mut Follower<L>) -> Result<u64, String> {
        let commit = self.log.commit_index().get();
        follower
            .replayer
            .catch_up(&follower.engine, follower.store.as_ref())?;
        self.metrics.last_position.store(
            follower.replayer.next_position - 1,
            std::sync::atomic::Ordering::Relaxed,
        );
        Ok(commit)
    }

    /// A follower's snapshot of what it replayed (everything in it is committed). A failed
    /// one is tried again by size only after as much log again.
    fn snapshot(&self, follower: &mut Follower<L>) -> Result<Option<i64>, String> {
        follower.bytes_at_snapshot = follower.replayer.bytes;
        let store = follower.store.as_ref();
        let position = follower
            .engine
            .last_processed_position(store)
            .map_err(|e| e.to_string())?;
        if position < 0 {
            return Ok(None);
        }
        let latest = self.snapshots.latest().map_err(|e| e.to_string())?;
        if latest.is_some_and(|s| s.position >= position) {
            return Ok(None);
        }
        let started = std::time::Instant::now();
        let (snapshot, slowest_exporter) = crate::blocking::off_worker(|| {
            crate::processor::checkpoint(&self.exporters, &self.snapshots, store, position)
        })?;
        PartitionMetrics::add(&self.metrics.snapshots, 1);
        if let Some(keep_from) = first_needed(self.log.reader(), position, slowest_exporter)? {
            self.log.snapshot_taken(keep_from);
        }
        tracing::info!(
            partition = self.config.partition_id,
            position = snapshot.position,
            millis = started.elapsed().as_millis() as u64,
            "follower took snapshot"
        );
        Ok(Some(snapshot.position))
    }

    /// The follower state again, from the latest snapshot and the committed log.
    async fn rebuild(&self) -> Result<Follower<L>, String> {
        let config = self.config.clone();
        let log = self.log.clone();
        let snapshots = self.snapshots.clone();
        let opener = self.store_opener.clone();
        tokio::task::spawn_blocking(move || {
            follow::<L>(&config, &log, &snapshots, opener.as_ref()).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("restoring the replica failed: {e}"))?
    }

    /// Leaves the group and answers `done`.
    async fn stop(&self, follower: Option<Follower<L>>, done: Option<oneshot::Sender<()>>) {
        drop(follower);
        self.role.send_replace(RoleState::inactive());
        self.log.shutdown().await;
        let _ = self.status.send(PartitionStatus::Stopped);
        if let Some(done) = done {
            let _ = done.send(());
        }
    }

    /// The replica cannot go on: it leaves the group (so another replica leads), reports
    /// the failure and refuses everything until stopped.
    async fn fail(
        &self,
        reason: String,
        commands: &mut mpsc::Receiver<CommandRequest>,
        control: &mut mpsc::Receiver<Control>,
    ) {
        let partition = self.config.partition_id;
        tracing::error!(partition, %reason, "replica failed; leaving the group");
        self.role.send_replace(RoleState::inactive());
        self.log.shutdown().await;
        let _ = self.status.send(PartitionStatus::Failed(reason.clone()));
        let unavailable = || PartitionError::Unavailable {
            partition,
            reason: reason.clone(),
        };
        loop {
            tokio::select! {
                request = control.recv() => match request {
                    Some(Control::Shutdown(done)) | Some(Control::Halt(done)) => {
                        let _ = done.send(());
                        return;
                    }
                    Some(_) => {}
                    None => return,
                },
                request = commands.recv() => match request {
                    Some(request) => {
                        let _ = request.respond.send(Err(unavailable()));
                    }
                    None => return,
                },
            }
        }
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}
