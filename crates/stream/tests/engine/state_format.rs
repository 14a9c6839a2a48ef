//! The state's format version: a snapshot written in version 1's layout (keys without tenants,
//! no version mark) is converted when the partition opens, and the partition goes on as if it
//! had been written in today's layout.

use std::path::Path;

use beeline_engine::state::values::CorrelationKeyLock;
use beeline_protocol::{DEFAULT_TENANT, RecordType, RejectionType};
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, MemStore, Store, WriteBatch};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, message_ref};

use beeline_protocol::intent::ProcessInstanceIntent as PI;

/// Version 2's families that version 1 kept without the tenant: (its id then, the family now,
/// key parts before the tenant).
const TENANT_KEYED: &[(u16, ColumnFamily, usize)] = &[
    (11, ColumnFamily::MessagesByNameAndCorrelationKey, 0),
    (13, ColumnFamily::MessageIds, 0),
    (21, ColumnFamily::ProcessVersions, 0),
    (22, ColumnFamily::LatestProcessVersions, 0),
    (51, ColumnFamily::ActivatableJobs, 1),
    (71, ColumnFamily::LatestDecisionRequirementsVersions, 0),
    (73, ColumnFamily::DecisionVersions, 0),
    (74, ColumnFamily::LatestDecisionVersions, 0),
    (108, ColumnFamily::ActiveInstancesByCorrelationKey, 0),
    (121, ColumnFamily::FormVersions, 0),
    (122, ColumnFamily::LatestFormVersions, 0),
];

/// The length of the first `n` length-prefixed parts of `key`.
fn parts_len(key: &[u8], n: usize) -> usize {
    let mut at = 0;
    for _ in 0..n {
        at += 4 + u32::from_be_bytes(key[at..at + 4].try_into().unwrap()) as usize;
    }
    at
}

/// The entries of a version-2 state as version 1 wrote them: the tenant (always the default
/// one) out of the keys and the correlation-key locks, and no version mark.
fn as_version_1(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let tenant = KeyBuilder::new(ColumnFamily::Meta)
        .str(DEFAULT_TENANT)
        .build()
        .split_off(2);
    let format_mark = KeyBuilder::new(ColumnFamily::Meta).u32(4).build();
    let mut old = Vec::new();
    for (key, value) in entries {
        let family = u16::from_be_bytes([key[0], key[1]]);
        if key == format_mark {
            continue;
        }
        if let Some(&(old_id, _, before)) = TENANT_KEYED.iter().find(|(_, cf, _)| cf.id() == family)
        {
            let rest = &key[2..];
            let at = parts_len(rest, before);
            assert_eq!(&rest[at..at + tenant.len()], tenant.as_slice());
            let mut old_key = old_id.to_be_bytes().to_vec();
            old_key.extend_from_slice(&rest[..at]);
            old_key.extend_from_slice(&rest[at + tenant.len()..]);
            old.push((old_key, value));
        } else if family == ColumnFamily::DeletedLatestVersions.id() {
            let mut reader = KeyReader::new(ColumnFamily::DeletedLatestVersions, &key).unwrap();
            let latest_id = reader.u32().unwrap() as u16;
            let latest = reader.bytes().unwrap();
            let &(old_id, _, _) = TENANT_KEYED
                .iter()
                .find(|(_, cf, _)| cf.id() == latest_id)
                .unwrap();
            let mut old_latest = old_id.to_be_bytes().to_vec();
            old_latest.extend_from_slice(&latest[2 + tenant.len()..]);
            let old_key = KeyBuilder::new(ColumnFamily::DeletedLatestVersions)
                .u32(u32::from(old_id))
                .bytes(&old_latest)
                .build();
            old.push((old_key, value));
        } else if family == ColumnFamily::CorrelationKeysByInstance.id() {
            // The scenario's only lock: version 1 stored it without the tenant.
            let lock = CorrelationKeyLock {
                bpmn_process_id: "order".into(),
                correlation_key: "customer-1".into(),
                tenant_id: DEFAULT_TENANT.into(),
            };
            assert_eq!(value, beeline_protocol::protobuf::encode_to_vec(&lock));
            let old_lock = CorrelationKeyLock {
                tenant_id: String::new(),
                ..lock
            };
            old.push((key, beeline_protocol::protobuf::encode_to_vec(&old_lock)));
        } else {
            old.push((key, value));
        }
    }
    old
}

/// Replaces the latest snapshot in `dir` with one of the same position holding `entries`,
/// its manifest naming no state format (as manifests before the version was recorded).
fn replace_snapshot(dir: &Path, entries: Vec<(Vec<u8>, Vec<u8>)>) {
    let snapshots = SnapshotStore::open(dir, 2).unwrap();
    let latest = snapshots.latest().unwrap().unwrap();
    std::fs::remove_dir_all(&latest.path).unwrap();
    let store = MemStore::new();
    let mut batch = WriteBatch::default();
    for (key, value) in entries {
        batch.put(key, value);
    }
    store.write(batch).unwrap();
    snapshots
        .naming_state_format(None)
        .take(latest.position, &store)
        .unwrap();
}

#[test]
fn a_version_1_state_is_converted_at_open_and_the_partition_goes_on() {
    let mut harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .message("placed", None)
            .start_event_with("placed", &message_ref("placed"))
            .service_task("t", "w")
            .end_event("e"),
    );
    harness.deploy_process(
        &ProcessBuilder::new("plain")
            .start_event("s")
            .service_task("t", "v")
            .end_event("e"),
    );
    // An instance holds customer-1's correlation key; the second message waits for it.
    for n in [1, 2] {
        harness
            .publish_message(
                "placed",
                "customer-1",
                600_000,
                "",
                &format!(r#"{{"n": {n}}}"#),
            )
            .unwrap();
    }
    harness
        .publish_message("unheard", "nobody", 600_000, "id-1", "{}")
        .unwrap();
    harness.create_instance("plain", "{}");
    harness.snapshot(1).unwrap();
    let written = harness.state(1);
    let old = as_version_1(written.clone());
    assert!(
        old.iter().any(|(key, _)| key[..2] == 51u16.to_be_bytes()),
        "the scenario has activatable jobs in version 1's family"
    );

    harness.crash_and_edit(1, |dir| replace_snapshot(dir, old));

    // Converted, the state is exactly what today's build would have written.
    assert_eq!(harness.state(1), written);
    // The message id, the latest versions, the lock and the buffered message all hold.
    let duplicate = harness
        .publish_message("unheard", "nobody", 600_000, "id-1", "{}")
        .unwrap();
    assert_eq!(duplicate.rejection_type, RejectionType::AlreadyExists);
    let redeployed = harness.deploy_process(
        &ProcessBuilder::new("plain")
            .start_event("s")
            .service_task("t2", "v")
            .end_event("e"),
    );
    assert_eq!(redeployed.record_type, RecordType::Event);
    let deployed = redeployed
        .value_as::<beeline_protocol::value::DeploymentRecord>()
        .unwrap();
    assert_eq!(
        deployed.processes_metadata[0].version, 2,
        "the next version follows the converted latest"
    );
    assert_eq!(harness.activate_jobs("v", 10).len(), 1);
    let started = |harness: &Harness| {
        harness
            .records()
            .with_element("order")
            .with_intent(PI::ElementActivated)
            .len()
    };
    // (The log before the snapshot is compacted: only what happens from here on is counted.)
    assert_eq!(
        started(&harness),
        0,
        "the lock holds the buffered message back"
    );
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    assert_eq!(
        started(&harness),
        1,
        "the lock is released and the buffered message starts the next instance"
    );

    // The next snapshot is of today's format; opening it again converts nothing.
    harness.snapshot(1).unwrap();
    let snapshots = SnapshotStore::look(harness.snapshot_dir(1));
    let latest = snapshots.latest().unwrap().unwrap();
    assert_eq!(
        SnapshotStore::state_format(&latest).unwrap(),
        Some(beeline_state::STATE_FORMAT_VERSION)
    );
    let before = harness.state(1);
    harness.crash(1);
    assert_eq!(harness.state(1), before);
}
