//! What the gateway knows of the cluster: this node, its partitions, and, in a cluster of
//! several brokers, the membership that says which broker leads the others.

use std::sync::Arc;

use beeline_cluster::Membership;
use beeline_stream::{JobStreams, PartitionHandle, PartitionStatus};

/// The node as the topology reports it.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub node_id: i32,
    /// The address clients should use for this node.
    pub host: String,
    pub port: u16,
    /// The version the broker and gateway report.
    pub version: String,
}

/// One partition as the gateway sees it.
#[derive(Clone)]
pub enum PartitionSlot {
    Open(PartitionHandle),
    /// Not served (it refused to open: a corrupt log or snapshot); requests to it are
    /// answered UNAVAILABLE with this reason.
    Unavailable(String),
    /// No replica on this broker: requests go to the broker that leads it.
    Elsewhere,
}

impl PartitionSlot {
    pub fn handle(&self) -> Option<&PartitionHandle> {
        match self {
            Self::Open(handle) => Some(handle),
            Self::Unavailable(_) | Self::Elsewhere => None,
        }
    }

    /// Healthy and taking commands.
    pub fn is_healthy(&self) -> bool {
        self.handle()
            .is_some_and(|h| h.status() == PartitionStatus::Healthy)
    }
}

/// The node and its partitions `1..=partitions.len()`, in order.
#[derive(Clone)]
pub struct Cluster {
    pub node: NodeInfo,
    pub partitions: Vec<PartitionSlot>,
    /// The registry the partitions push new jobs to (their `PartitionConfig::job_streams`);
    /// without it, job streams activate jobs themselves, as long polls do.
    pub job_streams: Option<Arc<JobStreams>>,
    /// Secondary storage, which the REST API's searches and reads by key are answered from;
    /// without it they answer 503 naming the setting.
    pub search: Option<Arc<dyn beeline_search::SearchStore>>,
    /// The brokers of a cluster: who leads which partition, and the connections to them.
    /// Without it, this node is the whole cluster.
    pub membership: Option<Arc<Membership>>,
}

impl Cluster {
    /// A cluster of this node's open partitions, numbered from 1.
    pub fn single_node(node: NodeInfo, partitions: Vec<PartitionSlot>) -> Self {
        Self {
            node,
            partitions,
            job_streams: None,
            search: None,
            membership: None,
        }
    }

    /// A broker of a cluster: `partitions` are every partition of the cluster, those on
    /// other brokers [`PartitionSlot::Elsewhere`].
    pub fn with_membership(mut self, membership: Arc<Membership>) -> Self {
        self.membership = Some(membership);
        self
    }

    /// Job streams register in `streams`, which the partitions push new jobs to.
    pub fn with_job_streams(mut self, streams: Arc<JobStreams>) -> Self {
        self.job_streams = Some(streams);
        self
    }

    pub fn with_search(mut self, store: Arc<dyn beeline_search::SearchStore>) -> Self {
        self.search = Some(store);
        self
    }
}
