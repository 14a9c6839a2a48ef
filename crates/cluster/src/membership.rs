//! Brokers finding each other: every broker pushes its [`BrokerInfo`] to every broker it knows
//! of, and to its contact points, over the internal port, every interval and at once when its
//! info changes (a partition opened, a role or term changed). The answer is the receiver's
//! own info, so one round trip tells both sides about each other. A broker not heard from for
//! the failure timeout counts as gone; it is still sent to, so that it is found again when it
//! comes back, until the forget timeout: then it is dropped, with every address it was known
//! at (a broker that comes back later finds the cluster through its contact points, as at its
//! first start). Addresses other brokers mention and that never answer age out the same way.
//!
//! Each start of a broker has its own incarnation, ordered by start time: a broker's info
//! replaces what was known of its node id only when it comes from the same or a newer
//! incarnation, so a broker restarted at another address replaces its old entry and its old
//! address, and nothing from an older incarnation brings the old one back.
//!
//! A full mesh is enough for the clusters Beeline runs (a handful of brokers); SWIM's
//! indirect probes would only pay for themselves in much larger ones.
//!
//! Each side checks the other's settings ([`check`]): a broker whose cluster name, cluster
//! size, partition count or replication factor contradicts a broker it reaches does not join,
//! and says which setting ([`Membership::refused`]); the broker it reached ignores it. Nothing
//! here depends on the cluster's size being fixed: members are whoever answers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tonic::transport::Channel;

use crate::settings::SettingsError;
use crate::topology::{BrokerInfo, ClusterView, Leader, PartitionState};
use crate::transport::Peers;
use crate::transport::proto;
use crate::transport::proto::internal_client::InternalClient;
use crate::types::NodeId;

/// How often brokers tell each other about themselves, and when one counts as gone.
#[derive(Debug, Clone, Copy)]
pub struct MembershipConfig {
    /// Between two pushes to every broker (changes are pushed at once). Default 1 s.
    pub interval: Duration,
    /// A broker not heard from for this long is gone. Default 5 s.
    pub failure_timeout: Duration,
    /// A broker (or an address another broker mentioned) not heard from for this long is
    /// forgotten: no longer sent to, no longer listed. Default 10 min.
    pub forget_after: Duration,
}

impl Default for MembershipConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            failure_timeout: Duration::from_secs(5),
            forget_after: Duration::from_secs(600),
        }
    }
}

/// A peer heard from within this long is within reach: its session carries HTTP/2 pings every
/// [`crate::transport::session::KEEPALIVE`] (1 s) besides its traffic.
pub const HEARD_WITHIN: Duration = Duration::from_secs(2);

/// What a broker heard lately from a partition's other replicas ([`Membership::replicas_heard`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicasHeard {
    /// The other replicas heard from within [`HEARD_WITHIN`].
    pub heard: usize,
    /// The other replicas.
    pub others: usize,
    /// Whether this broker holds a replica.
    pub local: bool,
}

impl ReplicasHeard {
    /// Whether a leader here can reach a quorum of its group: a majority of the replicas,
    /// itself included.
    pub fn quorum(&self) -> bool {
        let replicas = self.others + usize::from(self.local);
        (self.heard + usize::from(self.local)) * 2 > replicas
    }
}

struct Member {
    info: BrokerInfo,
    incarnation: u64,
    revision: u64,
    last_seen: Instant,
    alive: bool,
}

struct Inner {
    local: BrokerInfo,
    revision: u64,
    members: HashMap<NodeId, Member>,
    /// Contact points and the broker that answered there (this one, for a contact point
    /// that is itself).
    contacts: HashMap<String, NodeId>,
    /// Internal addresses other brokers know of and this one has not heard from yet, with
    /// when they were last mentioned: pushed to like contact points until forgotten.
    discovered: HashMap<String, Instant>,
}

/// This broker's membership in the cluster.
pub struct Membership {
    incarnation: u64,
    config: MembershipConfig,
    peers: Peers,
    contact_points: Vec<String>,
    /// Every partition's replicas, from the cluster's settings (as every broker places them).
    placement: Vec<crate::placement::PartitionPlacement>,
    inner: Mutex<Inner>,
    /// Bumped on every change of the view (a broker came, went, or changed its info).
    changes: watch::Sender<u64>,
    /// Bumped when this broker's own info changes: pushed at once.
    local_changes: watch::Sender<u64>,
    /// Set when this broker's settings contradict a broker it reached.
    refused: watch::Sender<Option<SettingsError>>,
}

impl Membership {
    pub fn new(
        local: BrokerInfo,
        contact_points: Vec<String>,
        peers: Peers,
        config: MembershipConfig,
    ) -> Arc<Self> {
        let incarnation = peers.incarnation();
        let members: Vec<NodeId> = (0..u64::from(local.cluster_size)).collect();
        let placement = crate::placement::round_robin(
            &members,
            local.partitions_count,
            local.replication_factor,
        );
        Arc::new(Self {
            incarnation,
            config,
            peers,
            contact_points,
            placement,
            inner: Mutex::new(Inner {
                local,
                revision: 0,
                members: HashMap::new(),
                contacts: HashMap::new(),
                discovered: HashMap::new(),
            }),
            changes: watch::channel(0).0,
            local_changes: watch::channel(0).0,
            refused: watch::channel(None).0,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The primary (the preferred leader) of `partition_id`, as every broker places it.
    pub fn primary(&self, partition_id: u32) -> Option<NodeId> {
        self.placement
            .iter()
            .find(|p| p.partition_id == partition_id)
            .and_then(|p| p.primary())
    }

    pub fn local_id(&self) -> NodeId {
        self.lock().local.node_id
    }

    /// The peers' channels, one per broker, and their addresses as learnt from the brokers.
    pub fn peers(&self) -> &Peers {
        &self.peers
    }

    /// Replaces this broker's partitions' states; pushed to the others at once when they
    /// changed.
    pub fn set_partitions(&self, mut partitions: Vec<PartitionState>) {
        partitions.sort_by_key(|p| p.partition_id);
        let mut inner = self.lock();
        if inner.local.partitions == partitions {
            return;
        }
        inner.local.partitions = partitions;
        inner.revision += 1;
        drop(inner);
        self.local_changes.send_modify(|v| *v += 1);
        self.changes.send_modify(|v| *v += 1);
    }

    /// The cluster as this broker sees it now.
    pub fn view(&self) -> ClusterView {
        let inner = self.lock();
        let mut brokers: Vec<BrokerInfo> = inner
            .members
            .values()
            .filter(|m| m.alive)
            .map(|m| m.info.clone())
            .collect();
        brokers.push(inner.local.clone());
        brokers.sort_by_key(|b| b.node_id);
        ClusterView {
            brokers,
            cluster_size: inner.local.cluster_size,
            partitions_count: inner.local.partitions_count,
            replication_factor: inner.local.replication_factor,
        }
    }

    /// The leader of `partition_id` (the live broker leading it in the highest term).
    pub fn leader(&self, partition_id: u32) -> Option<Leader> {
        self.view().leader(partition_id)
    }

    /// Bumped on every change of the view: wait on it for a new leader.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Set when this broker's settings contradict the cluster's: it must not join.
    pub fn refused(&self) -> watch::Receiver<Option<SettingsError>> {
        self.refused.subscribe()
    }

    /// Whether broker `node` went quiet: a session with it exists, but nothing came over it for
    /// [`HEARD_WITHIN`] (a live peer is heard from every second). A broker with no session yet
    /// is not quiet: the next call dials it, and fails at once if nothing answers.
    pub fn quiet(&self, node: NodeId) -> Option<Duration> {
        self.peers
            .silence(node)
            .filter(|silence| *silence > HEARD_WITHIN)
    }

    /// How many of the other replicas of `partition_id` this broker heard from within
    /// [`HEARD_WITHIN`], of how many there are, and whether it holds a replica itself (the
    /// placement every broker computes from the cluster's settings).
    pub fn replicas_heard(&self, partition_id: u32) -> ReplicasHeard {
        let local = self.peers.local();
        let mut reach = ReplicasHeard {
            heard: 0,
            others: 0,
            local: false,
        };
        let replicas = self
            .placement
            .iter()
            .find(|p| p.partition_id == partition_id)
            .map_or(&[][..], |p| &p.replicas[..]);
        for replica in replicas {
            if replica.node == local {
                reach.local = true;
            } else {
                reach.others += 1;
                if self
                    .peers
                    .silence(replica.node)
                    .is_some_and(|silence| silence <= HEARD_WITHIN)
                {
                    reach.heard += 1;
                }
            }
        }
        reach
    }

    /// The channel to live broker `node`.
    pub fn channel(&self, node: NodeId) -> Option<Channel> {
        let address = {
            let inner = self.lock();
            inner.members.get(&node).filter(|m| m.alive)?;
            self.route(&inner, node)?
        };
        self.peers.channel_to(&address).ok()
    }

    /// Where this broker reaches broker `node`: through the contact point it was given for it
    /// (its own route, e.g. through a proxy), else at the address the broker gives itself.
    fn route(&self, inner: &Inner, node: NodeId) -> Option<String> {
        self.contact_points
            .iter()
            .find(|point| inner.contacts.get(*point) == Some(&node))
            .cloned()
            .or_else(|| {
                inner
                    .members
                    .get(&node)
                    .map(|m| m.info.internal_address.clone())
            })
    }

    /// The incarnation (start) of live broker `node` this broker knows of: it changes when
    /// the broker restarts.
    pub fn incarnation(&self, node: NodeId) -> Option<u64> {
        let inner = self.lock();
        inner
            .members
            .get(&node)
            .filter(|m| m.alive)
            .map(|m| m.incarnation)
    }

    /// Every broker this one knows of, live or gone and not yet forgotten, with its internal
    /// address; then the addresses mentioned by others and not heard from.
    pub fn known(&self) -> (Vec<(NodeId, String)>, Vec<String>) {
        let inner = self.lock();
        let mut members: Vec<(NodeId, String)> = inner
            .members
            .iter()
            .map(|(node, m)| (*node, m.info.internal_address.clone()))
            .collect();
        members.sort_unstable();
        let mut discovered: Vec<String> = inner.discovered.keys().cloned().collect();
        discovered.sort_unstable();
        (members, discovered)
    }

    /// The other live brokers.
    pub fn alive_members(&self) -> Vec<NodeId> {
        let inner = self.lock();
        let mut nodes: Vec<NodeId> = inner
            .members
            .iter()
            .filter(|(_, m)| m.alive)
            .map(|(id, _)| *id)
            .collect();
        nodes.sort_unstable();
        nodes
    }

    fn local_proto(&self) -> proto::BrokerInfo {
        let inner = self.lock();
        let mut info = inner.local.to_proto(self.incarnation, inner.revision);
        info.known_brokers = inner
            .members
            .values()
            .filter(|m| m.alive)
            .map(|m| m.info.internal_address.clone())
            .collect();
        info
    }

    /// Takes in another broker's info (the Gossip RPC, or the answer to ours). A broker
    /// whose settings contradict ours is not taken in.
    pub fn receive(&self, info: &proto::BrokerInfo) -> Result<(), SettingsError> {
        let broker = BrokerInfo::from_proto(info).map_err(|e| SettingsError {
            setting: "internal-port",
            reason: e.to_string(),
        })?;
        let mut inner = self.lock();
        if broker.node_id == inner.local.node_id {
            if info.incarnation == self.incarnation {
                return Ok(());
            }
            return Err(SettingsError {
                setting: "node-id",
                reason: format!(
                    "the broker at {} has node id {} too; each broker needs its own",
                    broker.internal_address, broker.node_id
                ),
            });
        }
        check(&inner.local, &broker)?;
        if inner
            .members
            .get(&broker.node_id)
            .is_some_and(|m| info.incarnation < m.incarnation)
        {
            // From a start of that broker before the one known: stale.
            tracing::debug!(node = broker.node_id, address = %broker.internal_address, "ignoring the info of an older incarnation of a broker");
            return Ok(());
        }
        let now = Instant::now();
        for address in &info.known_brokers {
            let member = *address == inner.local.internal_address
                || inner
                    .members
                    .values()
                    .any(|m| m.info.internal_address == *address);
            if !member {
                inner.discovered.insert(address.clone(), now);
            }
        }
        inner.discovered.remove(&broker.internal_address);
        // The address book of every connection to the broker (Raft's too): the address it
        // gives itself, unless this broker was given its own route to it.
        let routed = self
            .contact_points
            .iter()
            .any(|point| inner.contacts.get(point) == Some(&broker.node_id));
        if !routed {
            self.peers
                .set_address(broker.node_id, broker.internal_address.clone());
        }
        let mut guard = inner;
        let inner = &mut *guard;
        let changed = match inner.members.get_mut(&broker.node_id) {
            Some(member) => {
                // Older incarnations were turned away above.
                let newer =
                    member.incarnation < info.incarnation || member.revision <= info.revision;
                member.last_seen = now;
                let changed = (newer && member.info != broker) || !member.alive;
                if newer && member.info.internal_address != broker.internal_address {
                    let old = &member.info.internal_address;
                    tracing::info!(node = broker.node_id, %old, address = %broker.internal_address, "a broker moved to another address");
                    inner
                        .contacts
                        .retain(|address, node| !(address == old && *node == broker.node_id));
                    inner.discovered.remove(old);
                    self.peers.forget_address(old);
                }
                if newer {
                    member.info = broker;
                    member.incarnation = info.incarnation;
                    member.revision = info.revision;
                }
                member.alive = true;
                changed
            }
            None => {
                tracing::info!(node = broker.node_id, address = %broker.internal_address, "a broker joined");
                inner.members.insert(
                    broker.node_id,
                    Member {
                        info: broker,
                        incarnation: info.incarnation,
                        revision: info.revision,
                        last_seen: now,
                        alive: true,
                    },
                );
                true
            }
        };
        drop(guard);
        if changed {
            self.changes.send_modify(|v| *v += 1);
        }
        Ok(())
    }

    /// The Gossip RPC's server side: takes in the sender's info and answers with ours.
    pub fn answer(&self, info: &proto::BrokerInfo) -> proto::BrokerInfo {
        if let Err(error) = self.receive(info) {
            tracing::warn!(node = info.node_id, address = %info.internal_address, %error, "ignoring a broker whose settings contradict this one's");
        }
        self.local_proto()
    }

    /// Marks brokers not heard from for the failure timeout as gone, and forgets those (and
    /// the mentioned addresses) not heard from for the forget timeout.
    fn expire(&self) {
        let now = Instant::now();
        let mut changed = false;
        let mut guard = self.lock();
        let inner = &mut *guard;
        for (node, member) in inner.members.iter_mut() {
            if member.alive && now.duration_since(member.last_seen) > self.config.failure_timeout {
                tracing::warn!(
                    node,
                    "a broker is gone: not heard from within the failure timeout"
                );
                member.alive = false;
                changed = true;
            }
        }
        let forget_after = self.config.forget_after;
        let forgotten: Vec<(NodeId, String)> = inner
            .members
            .iter()
            .filter(|(_, m)| now.duration_since(m.last_seen) > forget_after)
            .map(|(node, m)| (*node, m.info.internal_address.clone()))
            .collect();
        for (node, address) in forgotten {
            tracing::info!(node, %address, "a broker is forgotten: not heard from within the forget timeout");
            inner.members.remove(&node);
            // Configured contact points stay, to be found again; what they led to is unknown.
            inner.contacts.retain(|_, n| *n != node);
            inner.discovered.remove(&address);
            // Its address, channels and session go too.
            self.peers.forget(node);
        }
        inner.discovered.retain(|address, mentioned| {
            let kept = now.duration_since(*mentioned) <= forget_after;
            if !kept {
                self.peers.forget_address(address);
            }
            kept
        });
        drop(guard);
        if changed {
            self.changes.send_modify(|v| *v += 1);
        }
    }

    /// Where to push: every known broker, and the contact points not known to be one of them.
    fn targets(&self) -> Vec<String> {
        let inner = self.lock();
        let mut targets: Vec<String> = inner
            .members
            .keys()
            .filter_map(|node| self.route(&inner, *node))
            .collect();
        for point in self.contact_points.iter().chain(inner.discovered.keys()) {
            let known = match inner.contacts.get(point) {
                Some(node) if *node == inner.local.node_id => true,
                Some(node) => inner.members.get(node).is_some_and(|m| m.alive),
                None => false,
            };
            if !known && !targets.contains(point) {
                targets.push(point.clone());
            }
        }
        targets
    }

    async fn push(&self, address: String, info: proto::BrokerInfo) {
        let Ok(channel) = self.peers.channel_to(&address) else {
            return;
        };
        let mut request = tonic::Request::new(info);
        request.set_timeout(self.config.interval.max(Duration::from_millis(200)));
        let answer = match InternalClient::new(channel).gossip(request).await {
            Ok(answer) => answer.into_inner(),
            Err(status) => {
                let local = self.local_id();
                if self.peers.node_at(&address) == Some(local) {
                    // A contact point that is this broker itself (its session hello says so).
                    self.lock().contacts.insert(address.clone(), local);
                    self.peers.forget_address(&address);
                }
                tracing::trace!(%address, %status, "no answer to gossip");
                return;
            }
        };
        let local = {
            let mut inner = self.lock();
            inner.contacts.insert(address.clone(), answer.node_id);
            inner.local.node_id
        };
        if answer.node_id != local && self.contact_points.contains(&address) {
            self.peers.set_address(answer.node_id, address.clone());
        }
        if let Err(error) = self.receive(&answer) {
            tracing::error!(%address, %error, "this broker's settings contradict the cluster's; it does not join");
            self.refused.send_replace(Some(error));
        }
    }

    /// Pushes this broker's info to every target once, and takes in their answers.
    pub async fn gossip_round(&self) {
        let info = self.local_proto();
        let pushes = self
            .targets()
            .into_iter()
            .map(|address| self.push(address, info.clone()));
        futures_util::future::join_all(pushes).await;
        self.expire();
    }

    /// Pushes this broker's info to every target, every interval and at once on a change,
    /// until dropped. Each target has a pusher of its own, so a peer that does not answer
    /// (its push waits out its timeout) delays nothing the others learn.
    pub async fn run(self: Arc<Self>) {
        let mut changes = self.changes.subscribe();
        // Dropped with this future: every pusher ends with it.
        let mut pushers = tokio::task::JoinSet::new();
        let mut running: HashMap<String, tokio::task::AbortHandle> = HashMap::new();
        loop {
            changes.borrow_and_update();
            let targets = self.targets();
            running.retain(|address, pusher| {
                let kept = targets.contains(address);
                if !kept {
                    pusher.abort();
                }
                kept
            });
            for address in targets {
                if let std::collections::hash_map::Entry::Vacant(slot) = running.entry(address) {
                    let pusher = pushers.spawn(self.clone().push_to(slot.key().clone()));
                    slot.insert(pusher);
                }
            }
            while pushers.try_join_next().is_some() {}
            self.expire();
            tokio::select! {
                _ = tokio::time::sleep(self.config.interval) => {}
                // A broker came or went: its target starts or stops at once.
                _ = changes.changed() => {}
            }
        }
    }

    /// Pushes this broker's info to `address` every interval, and again as soon as it changes
    /// (also while a push is on its way: the next one follows it at once).
    async fn push_to(self: Arc<Self>, address: String) {
        let mut local_changes = self.local_changes.subscribe();
        loop {
            local_changes.borrow_and_update();
            self.push(address.clone(), self.local_proto()).await;
            tokio::select! {
                _ = tokio::time::sleep(self.config.interval) => {}
                _ = local_changes.changed() => {}
            }
        }
    }
}

/// Checks another broker's settings against this one's, naming the first that differs.
pub fn check(local: &BrokerInfo, other: &BrokerInfo) -> Result<(), SettingsError> {
    let differs = |setting: &'static str, ours: String, theirs: String| {
        Err(SettingsError {
            setting,
            reason: format!(
                "this broker has {ours}, but broker {} at {} has {theirs}: every broker of a \
                 cluster needs the same value",
                other.node_id, other.internal_address
            ),
        })
    };
    if local.cluster_name != other.cluster_name {
        return differs(
            "cluster-name",
            format!("'{}'", local.cluster_name),
            format!("'{}'", other.cluster_name),
        );
    }
    if local.cluster_size != other.cluster_size {
        return differs(
            "cluster-size",
            local.cluster_size.to_string(),
            other.cluster_size.to_string(),
        );
    }
    if local.partitions_count != other.partitions_count {
        return differs(
            "partitions",
            local.partitions_count.to_string(),
            other.partitions_count.to_string(),
        );
    }
    if local.replication_factor != other.replication_factor {
        return differs(
            "replication-factor",
            local.replication_factor.to_string(),
            other.replication_factor.to_string(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broker(node_id: NodeId, address: &str) -> BrokerInfo {
        BrokerInfo {
            node_id,
            cluster_name: "test".into(),
            cluster_size: 3,
            partitions_count: 1,
            replication_factor: 1,
            version: "test".into(),
            host: "127.0.0.1".into(),
            grpc_port: 26500,
            rest_port: 0,
            internal_address: address.into(),
            partitions: Vec::new(),
        }
    }

    /// `membership` hears from broker `node` at `address`, which knows of `known`.
    fn hears(
        membership: &Membership,
        node: NodeId,
        address: &str,
        incarnation: u64,
        known: &[&str],
    ) {
        let mut info = broker(node, address).to_proto(incarnation, 0);
        info.known_brokers = known.iter().map(|a| a.to_string()).collect();
        membership.receive(&info).unwrap();
    }

    fn known(membership: &Membership) -> (Vec<(NodeId, String)>, Vec<String>) {
        membership.known()
    }

    #[test]
    fn a_restarted_broker_replaces_its_old_address_and_an_older_start_is_ignored() {
        let membership = Membership::new(
            broker(0, "10.0.0.1:26502"),
            Vec::new(),
            Peers::new(0),
            MembershipConfig::default(),
        );
        hears(&membership, 1, "10.0.0.2:26502", 10, &["10.0.0.3:26502"]);
        assert_eq!(
            known(&membership),
            (
                vec![(1, "10.0.0.2:26502".into())],
                vec!["10.0.0.3:26502".into()]
            )
        );
        // Broker 1 restarts at another address: its entry and its address are replaced.
        hears(&membership, 1, "10.0.0.9:26502", 11, &[]);
        assert_eq!(known(&membership).0, vec![(1, "10.0.0.9:26502".into())]);
        assert_eq!(membership.incarnation(1), Some(11));
        assert_eq!(
            membership.peers().address(1).as_deref(),
            Some("10.0.0.9:26502")
        );
        assert!(
            !membership.targets().contains(&"10.0.0.2:26502".to_string()),
            "{:?}",
            membership.targets()
        );
        // A late message of its earlier start changes nothing.
        hears(&membership, 1, "10.0.0.2:26502", 10, &[]);
        assert_eq!(known(&membership).0, vec![(1, "10.0.0.9:26502".into())]);
        assert_eq!(membership.incarnation(1), Some(11));
        assert_eq!(
            membership.peers().address(1).as_deref(),
            Some("10.0.0.9:26502")
        );
        // The mentioned address answers: it is a broker now, no longer a mere mention.
        hears(&membership, 2, "10.0.0.3:26502", 5, &[]);
        assert_eq!(
            known(&membership),
            (
                vec![(1, "10.0.0.9:26502".into()), (2, "10.0.0.3:26502".into())],
                Vec::new()
            )
        );
    }

    #[test]
    fn brokers_and_addresses_not_heard_from_are_forgotten() {
        let membership = Membership::new(
            broker(0, "10.0.0.1:26502"),
            vec!["10.0.0.2:26502".into()],
            Peers::new(0),
            MembershipConfig {
                interval: Duration::from_millis(10),
                failure_timeout: Duration::from_millis(20),
                forget_after: Duration::from_millis(100),
            },
        );
        hears(&membership, 1, "10.0.0.2:26502", 10, &["10.0.0.3:26502"]);
        hears(&membership, 4, "10.0.0.4:26502", 10, &[]);
        std::thread::sleep(Duration::from_millis(60));
        membership.expire();
        // Gone, not forgotten: still sent to, so that it is found again.
        assert!(membership.alive_members().is_empty());
        assert_eq!(known(&membership).0.len(), 2);
        assert!(membership.targets().contains(&"10.0.0.4:26502".to_string()));
        // Broker 1 is heard from again; broker 4 and the address only mentioned are not.
        hears(&membership, 1, "10.0.0.2:26502", 10, &[]);
        std::thread::sleep(Duration::from_millis(60));
        hears(&membership, 1, "10.0.0.2:26502", 10, &[]);
        membership.expire();
        assert_eq!(
            known(&membership),
            (vec![(1, "10.0.0.2:26502".into())], Vec::new())
        );
        // Nothing heard at all: the configured contact point alone is left to try.
        std::thread::sleep(Duration::from_millis(120));
        membership.expire();
        assert_eq!(known(&membership), (Vec::new(), Vec::new()));
        assert_eq!(membership.targets(), vec!["10.0.0.2:26502".to_string()]);
        assert_eq!(membership.view().brokers.len(), 1, "only this broker");
    }
}
