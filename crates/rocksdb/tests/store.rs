use beeline_rocksdb::{MemoryBudget, RocksDbStore, RocksDbStoreConfig, open_partition_store};
use beeline_state::conformance;

#[test]
fn rocksdb_store_keeps_the_store_contract() {
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
            RocksDbStore::open(&config, None).expect("open")
        },
        |checkpoint| {
            let config = RocksDbStoreConfig {
                runtime_dir: checkpoint.with_extension("restored"),
                budget: budget.clone(),
            };
            RocksDbStore::open(&config, Some(checkpoint)).expect("open from checkpoint")
        },
    );
}

#[test]
fn the_partition_store_keeps_the_store_contract() {
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
            open_partition_store(&config, None).expect("open")
        },
        |checkpoint| {
            let config = RocksDbStoreConfig {
                runtime_dir: checkpoint.with_extension("restored"),
                budget: budget.clone(),
            };
            open_partition_store(&config, Some(checkpoint)).expect("open from checkpoint")
        },
    );
}
