#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]
use std::path::Path;

use beeline_rocksdb::{MemoryBudget, RocksDbStore, RocksDbStoreConfig, open_partition_store};
use beeline_state::{Store, conformance};

/// Runs the store contract on stores `open` makes in fresh runtime directories.
fn keeps_the_contract<S: Store>(open: impl Fn(&RocksDbStoreConfig, Option<&Path>) -> S) {
    let dir = tempfile::tempdir().expect("tempdir");
    let budget = MemoryBudget::new(32 * 1024 * 1024, 2);
    let mut n = 0;
    conformance::run(
        || {
            n += 1;
            let config = RocksDbStoreConfig {
                runtime_dir: dir.path().join(format!("runtime-{n}")),
                budget: budget.clone(),
            };
            open(&config, None)
        },
        |checkpoint| {
            // Inside the test's own directory, so that nothing is left behind.
            let name = checkpoint
                .file_name()
                .expect("a checkpoint directory's name");
            let config = RocksDbStoreConfig {
                runtime_dir: dir.path().join(name).with_extension("restored"),
                budget: budget.clone(),
            };
            open(&config, Some(checkpoint))
        },
    );
}

#[test]
fn rocksdb_store_keeps_the_store_contract() {
    keeps_the_contract(|config, checkpoint| RocksDbStore::open(config, checkpoint).expect("open"));
}

#[test]
fn the_partition_store_keeps_the_store_contract() {
    keeps_the_contract(|config, checkpoint| {
        open_partition_store(config, checkpoint).expect("open")
    });
}
