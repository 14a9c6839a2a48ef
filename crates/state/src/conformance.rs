//! The store contract as executable checks, run against every [`Store`] backend:
//! `beeline_state::conformance::run(|| new store, |dir| store opened from a checkpoint)`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a conformance suite: a violation fails the test that runs it, by a panic"
)]

use std::path::Path;

use crate::store::{Store, WriteBatch};
use crate::txn::Transaction;

pub fn run<S: Store, C: Store>(
    mut new_store: impl FnMut() -> S,
    open_checkpoint: impl Fn(&Path) -> C,
) {
    reads_what_was_written(new_store());
    batches_apply_in_order(new_store());
    scans_stay_in_their_prefix_and_order(new_store());
    transactions_merge_with_stored_entries(new_store());
    queue_scans_see_what_plain_scans_see(new_store());
    last_key_is_the_greatest_with_its_prefix(new_store());
    checkpoints_hold_everything_written(new_store(), &open_checkpoint);
}

fn batch(writes: &[(&[u8], Option<&[u8]>)]) -> WriteBatch {
    let mut batch = WriteBatch::default();
    for (k, v) in writes {
        match v {
            Some(v) => batch.put(k.to_vec(), v.to_vec()),
            None => batch.delete(k.to_vec()),
        }
    }
    batch
}

fn scan_all(store: &dyn Store, prefix: &[u8], start: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    store
        .scan(prefix, start)
        .map(|r| r.expect("scan"))
        .collect()
}

fn last_key_is_the_greatest_with_its_prefix<S: Store>(store: S) {
    assert_eq!(store.last_key(b"b").expect("last key"), None);
    store
        .write(batch(&[
            (b"a9", Some(b"x")),
            (b"b1", Some(b"x")),
            (b"b3", Some(b"x")),
            (b"b2", Some(b"x")),
            (b"c0", Some(b"x")),
        ]))
        .expect("write");
    assert_eq!(
        store.last_key(b"b").expect("last key"),
        Some(b"b3".to_vec())
    );
    store.write(batch(&[(b"b3", None)])).expect("write");
    assert_eq!(
        store.last_key(b"b").expect("last key"),
        Some(b"b2".to_vec())
    );
    assert_eq!(store.last_key(b"d").expect("last key"), None);
}

fn reads_what_was_written<S: Store>(store: S) {
    assert_eq!(store.get(b"missing").expect("get"), None);
    store.write(batch(&[(b"k", Some(b"v"))])).expect("write");
    assert_eq!(store.get(b"k").expect("get"), Some(b"v".to_vec()));
    store.write(batch(&[(b"k", None)])).expect("write");
    assert_eq!(
        store.get(b"k").expect("get"),
        None,
        "a delete removes the key"
    );
}

fn batches_apply_in_order<S: Store>(store: S) {
    store
        .write(batch(&[
            (b"a", Some(b"1")),
            (b"a", Some(b"2")),
            (b"b", Some(b"x")),
            (b"b", None),
        ]))
        .expect("write");
    assert_eq!(
        store.get(b"a").expect("get"),
        Some(b"2".to_vec()),
        "the later write wins"
    );
    assert_eq!(store.get(b"b").expect("get"), None);
}

fn scans_stay_in_their_prefix_and_order<S: Store>(store: S) {
    let keys: [&[u8]; 7] = [
        b"\x00\x01a",
        b"\x00\x01b",
        b"\x00\x01c",
        b"\x00\x02a",
        b"\x00\x00z",
        b"\x00\x01\xff",
        b"\x00\x01\xff\xff",
    ];
    let mut writes = WriteBatch::default();
    for key in keys {
        writes.put(key.to_vec(), key.to_vec());
    }
    store.write(writes).expect("write");
    let found: Vec<Vec<u8>> = scan_all(&store, b"\x00\x01", b"\x00\x01")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        found,
        vec![
            b"\x00\x01a".to_vec(),
            b"\x00\x01b".to_vec(),
            b"\x00\x01c".to_vec(),
            b"\x00\x01\xff".to_vec(),
            b"\x00\x01\xff\xff".to_vec()
        ],
        "a scan returns exactly its prefix, in key order"
    );
    let from_b: Vec<Vec<u8>> = scan_all(&store, b"\x00\x01", b"\x00\x01b")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        from_b.first(),
        Some(&b"\x00\x01b".to_vec()),
        "a scan starts at `start`"
    );
    assert_eq!(from_b.len(), 4);
    assert!(scan_all(&store, b"\x00\x03", b"\x00\x03").is_empty());
    for (prefix, start) in [
        (&b"\x00\x01"[..], &b"\x00\x01"[..]),
        (b"\x00\x01", b"\x00\x01b"),
    ] {
        let keys: Vec<(Vec<u8>, Vec<u8>)> = store
            .scan_keys(prefix, start)
            .map(|r| r.expect("scan_keys"))
            .collect();
        let scanned: Vec<(Vec<u8>, Vec<u8>)> = scan_all(&store, prefix, start)
            .into_iter()
            .map(|(k, _)| (k, Vec::new()))
            .collect();
        assert_eq!(
            keys, scanned,
            "scan_keys names the keys scan finds, values left empty"
        );
    }
}

/// Queues consumed from the front, refilled below and above it, scanned from the front and
/// from inside: `scan_queue` answers exactly what `scan` does, whatever a store remembers.
fn queue_scans_see_what_plain_scans_see<S: Store>(store: S) {
    // A small deterministic generator (xorshift), so a failure replays.
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    let queues: [&[u8]; 3] = [b"q", b"qa", b"r"];
    let key = |queue: &[u8], n: u64| [queue, &n.to_be_bytes()].concat();
    for round in 0..2000 {
        let queue = queues[(round % 3) as usize];
        let first = scan_all(&store, queue, queue)
            .first()
            .map(|(k, _)| k.clone());
        let mut writes = WriteBatch::default();
        match next(4) {
            // Consume the front.
            0 | 1 => {
                if let Some(first) = first {
                    writes.delete(first);
                }
            }
            // Refill anywhere, often below the current front.
            _ => writes.put(key(queue, next(200)), b"v".to_vec()),
        }
        store.write(writes).expect("write");
        let start = if next(3) == 0 {
            key(queue, next(200))
        } else {
            queue.to_vec()
        };
        let queued: Vec<_> = store
            .scan_queue(queue, &start)
            .map(|r| r.expect("scan"))
            .collect();
        assert_eq!(
            queued,
            scan_all(&store, queue, &start),
            "round {round}: scan_queue of {queue:?} from {start:?}"
        );
        let txn = Transaction::new(&store);
        let queued: Vec<_> = txn.scan_queue(queue).map(|r| r.expect("scan")).collect();
        assert_eq!(queued, scan_all(&store, queue, queue), "round {round}");
    }
}

fn transactions_merge_with_stored_entries<S: Store>(store: S) {
    store
        .write(batch(&[
            (b"p1", Some(b"a")),
            (b"p2", Some(b"b")),
            (b"p3", Some(b"c")),
        ]))
        .expect("write");
    let mut txn = Transaction::new(&store);
    txn.delete(b"p2".to_vec());
    txn.put(b"p4".to_vec(), b"d".to_vec());
    txn.put(b"p1".to_vec(), b"A".to_vec());
    let seen: Vec<(Vec<u8>, Vec<u8>)> = txn.scan(b"p").map(|r| r.expect("scan")).collect();
    assert_eq!(
        seen,
        vec![
            (b"p1".to_vec(), b"A".to_vec()),
            (b"p3".to_vec(), b"c".to_vec()),
            (b"p4".to_vec(), b"d".to_vec())
        ]
    );
    assert_eq!(
        store.get(b"p4").expect("get"),
        None,
        "nothing is stored before commit"
    );
    txn.commit().expect("commit");
    assert_eq!(store.get(b"p4").expect("get"), Some(b"d".to_vec()));
    assert_eq!(store.get(b"p2").expect("get"), None);
}

fn checkpoints_hold_everything_written<S: Store, C: Store>(store: S, open: &impl Fn(&Path) -> C) {
    let mut writes = WriteBatch::default();
    for i in 0u32..2000 {
        writes.put(i.to_be_bytes().to_vec(), vec![(i % 251) as u8; 64]);
    }
    store.write(writes).expect("write");
    let dir = std::env::temp_dir().join(format!(
        "beeline-store-conformance-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    store.checkpoint(&dir).expect("checkpoint");
    store
        .write(batch(&[(b"after", Some(b"x"))]))
        .expect("write after checkpoint");
    let restored = open(&dir);
    assert_eq!(
        scan_all(&restored, b"", b""),
        scan_all(&store, b"", b"")
            .into_iter()
            .filter(|(k, _)| k != b"after")
            .collect::<Vec<_>>(),
        "a checkpoint holds exactly what was written before it"
    );
    drop(restored);
    let _ = std::fs::remove_dir_all(&dir);
}
