//! RocksDB-backed partition state (work in progress).
