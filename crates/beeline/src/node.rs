//! A node: its partitions (journal, RocksDB state, stream processor), the gateway (gRPC and REST) and
//! monitoring.

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use beeline_gateway::{
    AuthConfig, Cluster, Gateway, GatewayConfig, JwksSource, NodeInfo, OidcConfig, TenancyConfig,
    TlsConfig,
};
use beeline_log::{FileJournal, FileJournalConfig, Recovery};
use beeline_rocksdb::{MemoryBudget, RocksDbStoreConfig, open_partition_store};
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use beeline_stream::disk::{self, DiskSpace};
use beeline_stream::{
    CommandRouter, JobStreams, LocalRouter, Partition, PartitionConfig, PartitionHandle,
    PartitionStatus, StoreOpener, SystemClock,
};

use crate::config::BrokerConfig;
use crate::monitoring;
use crate::read_side::{ReadSide, ReadSideMetrics};
use crate::replication::{self, Replication};

/// Snapshots kept per partition.
const SNAPSHOTS_RETAINED: usize = 2;

/// How long calls in flight may take to finish once the node is asked to stop.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("cannot listen on {address} ({setting}): {source}")]
    Listen {
        address: String,
        setting: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open secondary storage: {0}")]
    SecondaryStorage(String),
    #[error("{0} (--tls-certificate / --tls-private-key)")]
    Tls(beeline_gateway::TlsError),
    #[error("{0} (--auth-oidc-jwks)")]
    Auth(beeline_gateway::AuthError),
    #[error("{0}")]
    Cluster(String),
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// One partition as the node sees it.
#[derive(Clone)]
pub enum PartitionSlot {
    Opening,
    Open(PartitionHandle),
    /// Refused to open (e.g. a corrupt log or snapshot): the node does not serve it.
    Failed(String),
    /// Placed on another broker of the cluster.
    Elsewhere,
}

/// What the monitoring endpoints report on.
pub struct NodeState {
    pub partitions: RwLock<Vec<PartitionSlot>>,
    pub started: std::sync::atomic::AtomicBool,
    pub budget: MemoryBudget,
    /// Set once the gateway is made.
    pub gateway: std::sync::OnceLock<beeline_gateway::GatewayMetrics>,
    /// Set once the exporters run (not with `--secondary-storage none`).
    pub read_side: std::sync::OnceLock<ReadSideMetrics>,
    /// The free-disk watermark for processing, unless `--disk-free-min off`.
    pub disk: Option<Arc<DiskSpace>>,
    /// The one for replication, on a broker of a cluster unless
    /// `--disk-free-replication-min off`.
    pub replication_disk: Option<Arc<DiskSpace>>,
    /// The cluster as this broker sees it, in a cluster of several brokers.
    pub membership: std::sync::OnceLock<Arc<beeline_cluster::Membership>>,
    /// This broker's Raft groups, in a replicated cluster (their metrics).
    pub raft_groups: std::sync::OnceLock<beeline_cluster::transport::Groups>,
    /// The flusher that syncs those groups' journals (its figures).
    pub raft_flusher: std::sync::OnceLock<beeline_cluster::NodeFlusher>,
}

impl NodeState {
    pub fn slots(&self) -> Vec<PartitionSlot> {
        self.partitions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every partition of this broker open and healthy.
    pub fn is_healthy(&self) -> bool {
        self.slots().iter().all(|slot| match slot {
            PartitionSlot::Open(handle) => handle.status() == PartitionStatus::Healthy,
            PartitionSlot::Elsewhere => true,
            _ => false,
        })
    }

    pub fn is_started(&self) -> bool {
        self.started.load(std::sync::atomic::Ordering::Acquire)
    }
}

pub async fn run(config: BrokerConfig) -> Result<(), NodeError> {
    // Read now, so that a wrong certificate or key stops the node before anything opens.
    if let Some(tls) = tls(&config) {
        tls.check().map_err(NodeError::Tls)?;
    }
    auth(&config).check().await.map_err(NodeError::Auth)?;
    std::fs::create_dir_all(&config.data_dir).map_err(|source| NodeError::DataDir {
        path: config.data_dir.display().to_string(),
        source,
    })?;
    let disk = config.disk_free_min.0.map(DiskSpace::new);
    // Only brokers of a cluster take replicated entries.
    let replication_disk = config
        .disk_free_replication_min
        .0
        .filter(|_| config.cluster_size > 1)
        .map(|min| DiskSpace::guarding(disk::Guard::Replication, min));
    let watermarks: Vec<Arc<DiskSpace>> = disk.iter().chain(&replication_disk).cloned().collect();
    if !watermarks.is_empty() {
        // Measured once before the partitions open, so the first commands already see it.
        match disk::available_bytes(&config.data_dir) {
            Ok(free) => watermarks.iter().for_each(|space| space.update(free)),
            Err(error) => tracing::warn!(%error, "cannot measure free disk space"),
        }
        tokio::spawn(disk::monitor(
            watermarks,
            config.data_dir.clone(),
            disk::CHECK_INTERVAL,
        ));
    }
    let state = Arc::new(NodeState {
        partitions: RwLock::new(vec![PartitionSlot::Opening; usize::from(config.partitions)]),
        started: false.into(),
        budget: MemoryBudget::new(
            config.state_memory() as usize,
            usize::from(config.partitions),
        ),
        gateway: std::sync::OnceLock::new(),
        read_side: std::sync::OnceLock::new(),
        disk: disk.clone(),
        replication_disk: replication_disk.clone(),
        membership: std::sync::OnceLock::new(),
        raft_groups: std::sync::OnceLock::new(),
        raft_flusher: std::sync::OnceLock::new(),
    });
    let address = std::net::SocketAddr::new(config.host, config.monitoring_port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| NodeError::Listen {
            address: address.to_string(),
            setting: "--monitoring-port / BEELINE_MONITORING_PORT",
            source,
        })?;
    // The bound address, which differs from the configured one for port 0.
    let address = listener.local_addr().unwrap_or(address);
    tokio::spawn(monitoring::serve(listener, state.clone()));
    tracing::info!(%address, "monitoring endpoints listening");
    // Bound before the partitions open, so a taken port fails the start at once; calls wait
    // in the accept queue until the partitions are open.
    let grpc_address = std::net::SocketAddr::new(config.host, config.grpc_port);
    let grpc_listener = tokio::net::TcpListener::bind(grpc_address)
        .await
        .map_err(|source| NodeError::Listen {
            address: grpc_address.to_string(),
            setting: "--grpc-port / BEELINE_GRPC_PORT",
            source,
        })?;
    let grpc_address = grpc_listener.local_addr().unwrap_or(grpc_address);
    let rest_address = std::net::SocketAddr::new(config.host, config.rest_port);
    let rest_listener = tokio::net::TcpListener::bind(rest_address)
        .await
        .map_err(|source| NodeError::Listen {
            address: rest_address.to_string(),
            setting: "--rest-port / BEELINE_REST_PORT",
            source,
        })?;
    let rest_address = rest_listener.local_addr().unwrap_or(rest_address);

    let mut read_side = ReadSide::open(&config)
        .await
        .map_err(NodeError::SecondaryStorage)?;
    let settings = config
        .cluster()
        .map_err(|e| NodeError::Cluster(e.to_string()))?;
    let timing = config
        .raft_timing()
        .map_err(|e| NodeError::Cluster(e.to_string()))?;
    // Partitions reach each other (deployment distribution) through the router, and push new
    // jobs to the gateway's job streams through the registry.
    let router = LocalRouter::new();
    let job_streams = JobStreams::new();
    // In a cluster of several brokers: the internal API, the membership, this broker's replicas
    // and the way to the partitions led elsewhere, whatever the replication factor.
    let roles_changed = Arc::new(tokio::sync::Notify::new());
    let (broker, replication) = if settings.cluster_size > 1 {
        let groups = beeline_cluster::transport::Groups::of_node(settings.node_id)
            .with_replication_disk(replication_disk.clone());
        let broker = crate::cluster::join(
            &config,
            &settings,
            groups.clone(),
            router.clone(),
            job_streams.clone(),
        )
        .await?;
        let local = settings.local_partitions();
        let mut slots = state.partitions.write().unwrap_or_else(|e| e.into_inner());
        for (index, slot) in slots.iter_mut().enumerate() {
            if !local.contains(&(index as u32 + 1)) {
                *slot = PartitionSlot::Elsewhere;
            }
        }
        drop(slots);
        crate::cluster::publish_partitions(
            broker.membership.clone(),
            state.clone(),
            roles_changed.clone(),
        );
        let _ = state.membership.set(broker.membership.clone());
        let replication = if settings.replication_factor > 1 {
            let _ = state.raft_groups.set(groups.clone());
            let replication = Replication::new(
                settings.clone(),
                timing,
                groups,
                broker.membership.peers().clone(),
                config.recent_entries_memory(),
            )
            .map_err(NodeError::Cluster)?;
            let _ = state.raft_flusher.set(replication.flusher.clone());
            Some(Arc::new(replication))
        } else {
            None
        };
        (Some(broker), replication)
    } else {
        (None, None)
    };
    let routes: Arc<dyn CommandRouter> = match &broker {
        Some(broker) => broker.router.clone(),
        None => router.clone(),
    };
    let mut opening = Vec::new();
    for partition in 1..=config.partitions {
        if matches!(
            state.slots()[usize::from(partition) - 1],
            PartitionSlot::Elsewhere
        ) {
            opening.push(None);
            continue;
        }
        let config = config.clone();
        let budget = state.budget.clone();
        let router = routes.clone();
        let job_streams = job_streams.clone();
        let disk = disk.clone();
        let Some(replication) = replication.clone() else {
            opening.push(Some(tokio::task::spawn_blocking(move || {
                open_partition(&config, partition, budget, router, job_streams, disk)
            })));
            continue;
        };
        opening.push(Some(tokio::spawn(async move {
            if !replication.holds(partition) {
                return Err(format!(
                    "partition {partition} has no replica on this broker"
                ));
            }
            let parts = partition_parts(&config, partition, budget, job_streams, disk)?;
            let PartitionParts {
                dir,
                journal,
                snapshots,
                opener,
                config,
            } = parts;
            replication
                .open_partition(
                    partition,
                    dir,
                    journal,
                    snapshots.clone(),
                    config,
                    move |log, config| {
                        replication::open_replica(log, config, snapshots, opener, Some(router))
                    },
                )
                .await
        })));
    }
    for (index, task) in opening.into_iter().enumerate() {
        let Some(task) = task else { continue };
        let slot = match task.await {
            Ok(Ok(handle)) => {
                router.set_partition(handle.clone());
                crate::cluster::watch_roles(&handle, roles_changed.clone());
                PartitionSlot::Open(handle)
            }
            Ok(Err(reason)) => {
                tracing::error!(partition = index + 1, %reason, "partition refused to open; not serving it");
                PartitionSlot::Failed(reason)
            }
            Err(e) => PartitionSlot::Failed(format!("opening task failed: {e}")),
        };
        state.partitions.write().unwrap_or_else(|e| e.into_inner())[index] = slot;
        roles_changed.notify_one();
    }
    if let Some(read_side) = &mut read_side {
        for slot in state.slots() {
            if let PartitionSlot::Open(handle) = slot
                && let Err(reason) = read_side.export(handle)
            {
                tracing::error!(%reason, "cannot start exporting a partition");
            }
        }
        let _ = state.read_side.set(read_side.metrics());
    }
    let gateway = gateway(
        &config,
        &state.slots(),
        job_streams,
        read_side.as_ref().map(ReadSide::search),
        broker.as_ref(),
    );
    let _ = state.gateway.set(gateway.metrics());
    if let Some(broker) = &broker {
        let _ = broker.services.executor.set(gateway.executor());
        let handles = state.slots().into_iter().filter_map(|slot| match slot {
            PartitionSlot::Open(handle) => Some(handle),
            _ => None,
        });
        broker
            .router
            .exchange_job_notices(handles, gateway.jobs_available());
    }
    let (stop_gateway, gateway_stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        let stopped = async {
            let _ = gateway_stopped.await;
        };
        if let Err(e) = gateway
            .serve(grpc_listener, Some(rest_listener), stopped)
            .await
        {
            tracing::error!(error = %e, "the gateway failed");
        }
    });
    tracing::info!(address = %grpc_address, "gRPC gateway listening");
    tracing::info!(address = %rest_address, "REST API listening under /v2");
    state
        .started
        .store(true, std::sync::atomic::Ordering::Release);
    tracing::info!(
        partitions = config.partitions,
        healthy = state.is_healthy(),
        data_dir = %config.data_dir.display(),
        "node started"
    );

    let mut refused = match &broker {
        Some(broker) => broker.membership.refused(),
        None => tokio::sync::watch::channel(None).1,
    };
    let refusal = tokio::select! {
        () = shutdown_signal() => None,
        Ok(refusal) = refused.wait_for(Option::is_some) => refusal.clone(),
    };
    tracing::info!("shutting down");
    // The gateway first: it stops accepting and lets calls in flight finish (their commands
    // still need the partitions); then the partitions stop.
    let _ = stop_gateway.send(());
    if tokio::time::timeout(DRAIN_TIMEOUT, serving).await.is_err() {
        tracing::warn!(
            timeout_secs = DRAIN_TIMEOUT.as_secs(),
            "calls still in flight after the drain timeout; stopping anyway"
        );
    }
    // The exporters next: what they hand over is written before the partitions keep their
    // positions in the closing snapshots.
    if let Some(read_side) = read_side {
        read_side.stop().await;
    }
    for slot in state.slots() {
        if let PartitionSlot::Open(handle) = slot {
            handle.shutdown().await;
        }
    }
    tracing::info!("stopped");
    match refusal {
        Some(error) => Err(NodeError::Cluster(format!(
            "this broker does not join the cluster: {error}"
        ))),
        None => Ok(()),
    }
}

/// The gateway over the node's partitions: open ones are served, the others answered
/// UNAVAILABLE with the reason they did not open.
fn gateway(
    config: &BrokerConfig,
    slots: &[PartitionSlot],
    job_streams: Arc<JobStreams>,
    search: Option<Arc<dyn beeline_search::SearchStore>>,
    broker: Option<&crate::cluster::Broker>,
) -> Gateway {
    let partitions = slots
        .iter()
        .map(|slot| match slot {
            PartitionSlot::Open(handle) => beeline_gateway::PartitionSlot::Open(handle.clone()),
            PartitionSlot::Failed(reason) => {
                beeline_gateway::PartitionSlot::Unavailable(reason.clone())
            }
            PartitionSlot::Opening => {
                beeline_gateway::PartitionSlot::Unavailable("still opening".into())
            }
            PartitionSlot::Elsewhere => beeline_gateway::PartitionSlot::Elsewhere,
        })
        .collect();
    let host = match broker {
        Some(_) => crate::cluster::advertised_host(config),
        None if config.host.is_unspecified() => "localhost".to_owned(),
        None => config.host.to_string(),
    };
    let node = NodeInfo {
        node_id: i32::try_from(config.node_id).unwrap_or(i32::MAX),
        host,
        port: config.grpc_port,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let mut cluster = Cluster::single_node(node, partitions).with_job_streams(job_streams);
    if let Some(broker) = broker {
        cluster = cluster.with_membership(broker.membership.clone());
    }
    if let Some(search) = search {
        cluster = cluster.with_search(search);
    }
    Gateway::new(
        cluster,
        GatewayConfig {
            max_message_size: message_size(config),
            backpressure: config.backpressure,
            forwarding_memory: usize::try_from(config.forwarding_memory()).unwrap_or(usize::MAX),
            tls: tls(config),
            auth: auth(config),
            tenancy: TenancyConfig {
                enabled: config.multi_tenancy,
                assignments: config
                    .tenant_assignments
                    .as_ref()
                    .map(|a| a.0.clone())
                    .unwrap_or_default(),
            },
            ..GatewayConfig::default()
        },
    )
}

/// Who may call the APIs: basic users, OIDC tokens, or everyone.
fn auth(config: &BrokerConfig) -> AuthConfig {
    if let Some(users) = &config.auth_basic_users {
        return AuthConfig::Basic(users.0.clone());
    }
    match &config.auth_oidc_jwks {
        Some(jwks) => AuthConfig::Oidc(OidcConfig {
            jwks: if jwks.starts_with("http://") || jwks.starts_with("https://") {
                JwksSource::Url(jwks.clone())
            } else {
                JwksSource::File(jwks.into())
            },
            jwks_ca: config.auth_oidc_jwks_ca.clone(),
            issuer: config.auth_oidc_issuer.clone(),
            audience: config.auth_oidc_audience.clone(),
            username_claim: config.auth_oidc_username_claim.clone(),
            client_id_claim: config.auth_oidc_client_id_claim.clone(),
        }),
        None => AuthConfig::None,
    }
}

/// The APIs' TLS, when both files are given.
fn tls(config: &BrokerConfig) -> Option<TlsConfig> {
    Some(TlsConfig {
        certificate: config.tls_certificate.clone()?,
        private_key: config.tls_private_key.clone()?,
    })
}

/// The gateway's maximum message size (`--grpc-max-message-size` is at most 1 GiB).
fn message_size(config: &BrokerConfig) -> usize {
    usize::try_from(config.grpc_max_message_size).unwrap_or(usize::MAX)
}

/// What opening a partition takes, on a single node or as a replica.
struct PartitionParts {
    dir: std::path::PathBuf,
    journal: FileJournalConfig,
    snapshots: SnapshotStore,
    opener: Arc<dyn StoreOpener + Send + Sync>,
    config: PartitionConfig,
}

fn partition_parts(
    config: &BrokerConfig,
    partition: u16,
    budget: MemoryBudget,
    job_streams: Arc<JobStreams>,
    disk: Option<Arc<DiskSpace>>,
) -> Result<PartitionParts, String> {
    let dir = config
        .data_dir
        .join("partitions")
        .join(partition.to_string());
    // One batch is one journal entry: the largest batch fits a segment with room to spare.
    let max_entry_size = (4usize << 20).min(config.log_segment_size as usize / 2);
    let journal = FileJournalConfig {
        segment_size: config.log_segment_size,
        max_entry_size,
        recovery: Recovery::Strict,
        ..FileJournalConfig::default()
    };
    let snapshots = SnapshotStore::open(dir.join("snapshots"), SNAPSHOTS_RETAINED)
        .map_err(|e| e.to_string())?;
    let store_config = RocksDbStoreConfig {
        runtime_dir: dir.join("runtime"),
        budget,
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let mut partition_config = PartitionConfig::new(partition);
    partition_config.partition_count = config.partitions;
    partition_config.max_batch_bytes = max_entry_size;
    partition_config.max_message_size = message_size(config);
    partition_config.flush = config.log_flush;
    partition_config.snapshot_period = config.snapshot_period.0;
    partition_config.snapshot_log_size = config.snapshot_log_size.0;
    partition_config.snapshot_slot =
        PartitionConfig::snapshot_slot_of(config.node_id, partition, config.partitions);
    partition_config.job_streams = Some(job_streams);
    partition_config.exporters = ReadSide::exporter_ids(config);
    partition_config.disk = disk;
    Ok(PartitionParts {
        dir,
        journal,
        snapshots,
        opener: Arc::new(opener),
        config: partition_config,
    })
}

fn open_partition(
    config: &BrokerConfig,
    partition: u16,
    budget: MemoryBudget,
    router: Arc<dyn CommandRouter>,
    job_streams: Arc<JobStreams>,
    disk: Option<Arc<DiskSpace>>,
) -> Result<PartitionHandle, String> {
    let parts = partition_parts(config, partition, budget, job_streams, disk)?;
    let journal =
        FileJournal::open(parts.dir.join("log"), parts.journal).map_err(|e| e.to_string())?;
    if let Some((path, offset, reason)) = &journal.recovery_report().truncated {
        tracing::warn!(partition, path = %path.display(), offset, %reason, "cut a torn log tail");
    }
    Partition::open(
        parts.config,
        journal,
        parts.snapshots,
        parts.opener.as_ref(),
        Arc::new(SystemClock),
        Some(router),
    )
    .map_err(|e| e.to_string())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
