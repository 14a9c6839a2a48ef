//! What the gateway knows of the cluster: this node and its partitions. A single node for now
//! (every partition led here, replication factor 1); the cluster crate will feed it a topology.

use std::sync::Arc;

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
}

impl PartitionSlot {
    pub fn handle(&self) -> Option<&PartitionHandle> {
        match self {
            Self::Open(handle) => Some(handle),
            Self::Unavailable(_) => None,
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
}

impl Cluster {
    /// A cluster of this node's open partitions, numbered from 1.
    pub fn single_node(node: NodeInfo, partitions: Vec<PartitionSlot>) -> Self {
        Self {
            node,
            partitions,
            job_streams: None,
            search: None,
        }
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
