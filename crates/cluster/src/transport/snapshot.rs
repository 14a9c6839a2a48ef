//! A partition's snapshot from its leader to a replica that lacks entries the leader has
//! purged: the snapshot directory (a RocksDB checkpoint and its manifest) streamed file by
//! file in chunks of [`CHUNK`] bytes, each with its crc32c, over one client-streaming call.
//!
//! - **Sending** opens every file first (a snapshot pruned meanwhile stays readable through
//!   the open files), then a task reads one chunk at a time into a channel of
//!   [`IN_FLIGHT`] chunks: memory stays at a few chunks whatever the snapshot's size, and a
//!   slow receiver slows the reader (HTTP/2 flow control). A send that makes no progress for
//!   the group's snapshot timeout gives up; openraft tries again later.
//! - **Receiving** writes the chunks into a fresh directory of the partition's snapshot store
//!   (invisible until installed), checks each chunk's crc and that chunks follow each other,
//!   refuses a path that leaves the directory, and at the end has the store check every file
//!   against the snapshot's manifest and rename the directory into place at once. Only then is
//!   the snapshot handed to the group (`Raft::install_full_snapshot`), whose state machine
//!   tells the replica to rebuild from it. A broken or incomplete stream leaves nothing behind.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use beeline_state::snapshot::SnapshotStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tonic::Status;

use super::proto;
use crate::state_machine::SnapshotData;

/// Bytes per chunk.
pub const CHUNK: usize = 256 * 1024;
/// Chunks read ahead of the network.
const IN_FLIGHT: usize = 4;

/// The chunks of `snapshot` after `header`, read as the stream is consumed; the stream ends
/// early (without its `done` chunk) when a file cannot be read or the consumer stalls for
/// `stall`.
pub fn chunks(
    header: proto::SnapshotHeader,
    snapshot: &SnapshotData,
    stall: Duration,
) -> Result<impl tokio_stream::Stream<Item = proto::SnapshotChunk> + Send + 'static, String> {
    let snapshot_dir = beeline_state::snapshot::Snapshot {
        position: snapshot.position,
        path: snapshot.path.clone(),
    };
    let names = snapshot_dir
        .files()
        .map_err(|e| format!("cannot list snapshot {}: {e}", snapshot.path.display()))?;
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let path = snapshot.path.join(&name);
        let file = std::fs::File::open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        files.push((name, file));
    }
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    let first = proto::SnapshotChunk {
        header: Some(header),
        ..Default::default()
    };
    tokio::spawn(async move {
        let send = |chunk: proto::SnapshotChunk| {
            let tx = tx.clone();
            async move {
                matches!(
                    tokio::time::timeout(stall, tx.send(chunk)).await,
                    Ok(Ok(()))
                )
            }
        };
        if !send(first).await {
            return;
        }
        let count = files.len() as u32;
        let mut buf = vec![0u8; CHUNK];
        for (name, file) in files {
            let mut file = tokio::fs::File::from_std(file);
            let mut offset = 0u64;
            loop {
                let mut filled = 0;
                while filled < buf.len() {
                    match file.read(&mut buf[filled..]).await {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(error) => {
                            tracing::warn!(file = %name, %error, "cannot read a snapshot file to send");
                            return;
                        }
                    }
                }
                // Every file gets at least one chunk, so an empty one is created too.
                if filled == 0 && offset > 0 {
                    break;
                }
                let data = buf[..filled].to_vec();
                let chunk = proto::SnapshotChunk {
                    file: name.clone(),
                    offset,
                    crc: crc32c::crc32c(&data),
                    data,
                    ..Default::default()
                };
                if !send(chunk).await {
                    return;
                }
                offset += filled as u64;
                if filled < buf.len() {
                    break;
                }
            }
        }
        let _ = send(proto::SnapshotChunk {
            done: true,
            files: count,
            ..Default::default()
        })
        .await;
    });
    Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// A relative path inside the snapshot directory, or a refusal.
fn inside(dir: &Path, name: &str) -> Result<PathBuf, Status> {
    let relative = Path::new(name);
    let plain = !name.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(Status::invalid_argument(format!(
            "snapshot file '{name}' is not a plain relative path"
        )));
    }
    Ok(dir.join(relative))
}

/// What a received stream holds once complete and installed.
pub struct Received {
    pub header: proto::SnapshotHeader,
    pub snapshot: SnapshotData,
}

/// Receives the chunks after `header` into `store` and installs the snapshot there.
pub async fn receive<S>(
    header: proto::SnapshotHeader,
    mut stream: S,
    store: &SnapshotStore,
) -> Result<Received, Status>
where
    S: tokio_stream::Stream<Item = Result<proto::SnapshotChunk, Status>> + Unpin,
{
    let position = header.position;
    let blocking = |e: tokio::task::JoinError| Status::internal(e.to_string());
    let dir = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || store.receiving(position))
            .await
            .map_err(blocking)?
            .map_err(|e| Status::internal(format!("cannot receive a snapshot: {e}")))?
    };
    let received = write_chunks(&dir, &mut stream).await;
    let installed = match received {
        Ok(()) => {
            let store = store.clone();
            let from = dir.clone();
            tokio::task::spawn_blocking(move || store.install(position, &from))
                .await
                .map_err(blocking)?
                .map_err(|e| Status::data_loss(format!("the received snapshot is damaged: {e}")))
        }
        Err(status) => Err(status),
    };
    match installed {
        Ok(snapshot) => Ok(Received {
            header,
            snapshot: SnapshotData {
                position,
                path: snapshot.path,
            },
        }),
        Err(status) => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(status)
        }
    }
}

async fn write_chunks<S>(dir: &Path, stream: &mut S) -> Result<(), Status>
where
    S: tokio_stream::Stream<Item = Result<proto::SnapshotChunk, Status>> + Unpin,
{
    let mut current: Option<(String, tokio::fs::File, u64)> = None;
    let mut files = 0u32;
    let io = |path: &Path, e: std::io::Error| {
        Status::internal(format!("cannot write {}: {e}", path.display()))
    };
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if chunk.done {
            if let Some((name, mut file, _)) = current.take() {
                file.flush().await.map_err(|e| io(Path::new(&name), e))?;
            }
            if chunk.files != files {
                return Err(Status::data_loss(format!(
                    "the snapshot stream ended with {files} files of {}",
                    chunk.files
                )));
            }
            return Ok(());
        }
        if crc32c::crc32c(&chunk.data) != chunk.crc {
            return Err(Status::data_loss(format!(
                "snapshot file '{}': checksum mismatch in the chunk at offset {}",
                chunk.file, chunk.offset
            )));
        }
        let same = current
            .as_ref()
            .is_some_and(|(name, _, _)| *name == chunk.file);
        if !same {
            if let Some((name, mut file, _)) = current.take() {
                file.flush().await.map_err(|e| io(Path::new(&name), e))?;
            }
            let path = inside(dir, &chunk.file)?;
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(|e| io(parent, e))?;
            }
            let file = tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .await
                .map_err(|e| io(&path, e))?;
            files += 1;
            current = Some((chunk.file.clone(), file, 0));
        }
        let Some((name, file, written)) = current.as_mut() else {
            return Err(Status::internal("no file to write the chunk into"));
        };
        if chunk.offset != *written {
            return Err(Status::data_loss(format!(
                "snapshot file '{name}': a chunk at offset {} where {} was expected",
                chunk.offset, written
            )));
        }
        file.write_all(&chunk.data)
            .await
            .map_err(|e| io(Path::new(name.as_str()), e))?;
        *written += chunk.data.len() as u64;
    }
    Err(Status::data_loss(
        "the snapshot stream ended before its last chunk",
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

    use beeline_state::{MemStore, Store, WriteBatch};
    use tokio_stream::StreamExt;

    use super::*;

    fn header() -> proto::SnapshotHeader {
        proto::SnapshotHeader {
            partition_id: 1,
            to_node: 2,
            position: 7,
            ..Default::default()
        }
    }

    /// A snapshot of ~1 MiB of state: several chunks.
    fn source() -> (tempfile::TempDir, SnapshotData) {
        let dir = tempfile::tempdir().unwrap();
        let store = MemStore::new();
        let mut batch = WriteBatch::default();
        for i in 0..10_000u32 {
            batch.put(i.to_be_bytes().to_vec(), vec![i as u8; 100]);
        }
        store.write(batch).unwrap();
        let snapshot = SnapshotStore::open(dir.path(), 2)
            .unwrap()
            .take(7, &store)
            .unwrap();
        let data = SnapshotData {
            position: snapshot.position,
            path: snapshot.path,
        };
        (dir, data)
    }

    async fn sent(data: &SnapshotData) -> Vec<proto::SnapshotChunk> {
        chunks(header(), data, Duration::from_secs(5))
            .unwrap()
            .collect()
            .await
    }

    async fn deliver(
        chunks: Vec<proto::SnapshotChunk>,
        store: &SnapshotStore,
    ) -> Result<Received, Status> {
        let mut chunks = chunks.into_iter();
        let header = chunks.next().unwrap().header.unwrap();
        receive(header, tokio_stream::iter(chunks.map(Ok)), store).await
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[tokio::test]
    async fn a_snapshot_streams_in_chunks_and_installs_whole() {
        let (_source, data) = source();
        let chunks = sent(&data).await;
        let files = beeline_state::snapshot::Snapshot {
            position: 7,
            path: data.path.clone(),
        }
        .files()
        .unwrap();
        assert!(chunks.len() > files.len() + 2, "{} chunks", chunks.len());
        assert!(chunks.iter().all(|c| c.data.len() <= CHUNK));
        let target = tempfile::tempdir().unwrap();
        let store = SnapshotStore::open(target.path(), 2).unwrap();
        let received = deliver(chunks, &store).await.unwrap();
        let installed = store.latest().unwrap().unwrap();
        assert_eq!(received.snapshot.path, installed.path);
        assert_eq!(installed.position, 7);
        assert_eq!(installed.files().unwrap(), files);
        for name in files {
            assert_eq!(
                std::fs::read(installed.path.join(&name)).unwrap(),
                std::fs::read(data.path.join(&name)).unwrap(),
                "{name}"
            );
        }
    }

    #[tokio::test]
    async fn a_damaged_or_cut_stream_installs_nothing_and_leaves_nothing() {
        let (_source, data) = source();
        let target = tempfile::tempdir().unwrap();
        let store = SnapshotStore::open(target.path(), 2).unwrap();

        // A chunk whose bytes do not match its checksum.
        let mut damaged = sent(&data).await;
        let chunk = damaged.iter_mut().find(|c| c.data.len() > 10).unwrap();
        chunk.data[5] ^= 0xff;
        let refused = deliver(damaged, &store).await.err().unwrap();
        assert_eq!(refused.code(), tonic::Code::DataLoss, "{refused}");
        assert!(refused.message().contains("checksum"), "{refused}");

        // Bytes changed with their checksum: the manifest finds it.
        let mut forged = sent(&data).await;
        let chunk = forged
            .iter_mut()
            .find(|c| c.file.starts_with("data") && c.data.len() > 10)
            .unwrap();
        chunk.data[5] ^= 0xff;
        chunk.crc = crc32c::crc32c(&chunk.data);
        let refused = deliver(forged, &store).await.err().unwrap();
        assert_eq!(refused.code(), tonic::Code::DataLoss, "{refused}");

        // A stream cut before its end.
        let mut cut = sent(&data).await;
        cut.pop();
        let refused = deliver(cut, &store).await.err().unwrap();
        assert_eq!(refused.code(), tonic::Code::DataLoss, "{refused}");

        // A path out of the snapshot's directory.
        let mut escaping = sent(&data).await;
        escaping[1].file = "../escaped".into();
        let refused = deliver(escaping, &store).await.err().unwrap();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused}");

        assert_eq!(store.latest().unwrap(), None);
        assert_eq!(leftovers(target.path()), Vec::<String>::new());
    }
}
