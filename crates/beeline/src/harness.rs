//! What the tools that run brokers of this binary (`torture`, `chaos`, `bench
//! --compare-cluster`) share: broker processes with the tail of their log kept for a report,
//! the settings a cluster's broker starts with, a gateway client, the test model's instances
//! and their id variable, and a small seeded generator for fault moments.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use beeline_gateway_protocol::proto;
use beeline_gateway_protocol::proto::gateway_client::GatewayClient;
use tonic::transport::{Channel, Endpoint};

/// The two service tasks of the test model, in order.
pub const FIRST: &str = "torture-a";
pub const SECOND: &str = "torture-b";
pub const PROCESS_ID: &str = "torture";

/// A process `torture` with two service tasks (`a`, then `b`); each instance carries a unique
/// `id` variable, which its jobs fetch.
pub fn model() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="torture-definitions" targetNamespace="http://beeline.dev/torture">
  <bpmn:process id="{PROCESS_ID}" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="a"/>
    <bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="{FIRST}"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="a" targetRef="b"/>
    <bpmn:serviceTask id="b"><bpmn:extensionElements><zeebe:taskDefinition type="{SECOND}"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f3" sourceRef="b" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"#
    )
}

/// The deployment of [`model`].
pub fn deployment() -> proto::DeployResourceRequest {
    proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "torture.bpmn".into(),
            content: model().into_bytes(),
        }],
        ..Default::default()
    }
}

/// The `id` variable of a job's or an instance's variables.
pub fn instance_id(variables: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(variables).ok()?;
    Some(value.get("id")?.as_str()?.to_owned())
}

pub use beeline_ports::free_port;

/// A gateway client of the broker on `port` (connects on first use).
pub fn connect(port: u16) -> Result<GatewayClient<Channel>, String> {
    let endpoint = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(2));
    Ok(GatewayClient::new(endpoint.connect_lazy())
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20))
}

/// Where a run (`beeline torture`, `beeline chaos`) starts: its seed (odd, for the
/// generator), its directory (given, or a new one under the system's temporary directory that
/// a passing run removes) and the two-thread runtime it drives the brokers from.
pub struct RunStart {
    pub seed: u64,
    pub dir: std::path::PathBuf,
    pub temporary: bool,
    pub runtime: tokio::runtime::Runtime,
}

impl RunStart {
    /// `name` names the temporary directory (`beeline-<name>-<pid>-<seed>`).
    pub fn new(
        name: &str,
        seed: Option<u64>,
        dir: Option<&std::path::Path>,
    ) -> Result<Self, std::process::ExitCode> {
        let seed = seed.unwrap_or_else(clock_seed) | 1;
        let (dir, temporary) = match dir {
            Some(dir) => (dir.to_path_buf(), false),
            None => (
                std::env::temp_dir().join(format!("beeline-{name}-{}-{seed}", std::process::id())),
                true,
            ),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| {
                eprintln!("error: cannot start the runtime: {e}");
                std::process::ExitCode::FAILURE
            })?;
        Ok(Self {
            seed,
            dir,
            temporary,
            runtime,
        })
    }
}

/// A seed from the clock, odd (the generator needs a non-zero state).
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1
}

/// Small and fast, for fault moments; the seed makes a run's choices repeatable.
pub struct Xorshift(pub u64);

impl Xorshift {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A broker process of this binary, its log's last lines kept for a report.
pub struct BrokerProcess {
    pub child: Child,
    tail: Arc<Mutex<Vec<String>>>,
}

impl BrokerProcess {
    /// Starts `beeline broker` with `args`, its log filtered by `log_filter`; `on_line` sees
    /// every line of its log as it comes.
    pub fn spawn(
        args: &[String],
        log_filter: &str,
        on_line: impl FnMut(&str) + Send + 'static,
    ) -> Result<Self, String> {
        Self::spawn_logged(args, log_filter, None, on_line)
    }

    /// [`spawn`](Self::spawn), appending the broker's log to the file `log` too.
    pub fn spawn_logged(
        args: &[String],
        log_filter: &str,
        log: Option<&std::path::Path>,
        mut on_line: impl FnMut(&str) + Send + 'static,
    ) -> Result<Self, String> {
        let mut file = match log {
            Some(path) => Some(std::io::BufWriter::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("cannot open {}: {e}", path.display()))?,
            )),
            None => None,
        };
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
        let mut child = Command::new(exe)
            .arg("broker")
            .args(args)
            .env("BEELINE_LOG", log_filter)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a broker: {e}"))?;
        let stderr = child.stderr.take().ok_or("the broker has no stderr")?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        let kept = tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                on_line(&line);
                if let Some(file) = &mut file {
                    let _ = writeln!(file, "{line}");
                    let _ = file.flush();
                }
                let mut tail = kept.lock().unwrap_or_else(PoisonError::into_inner);
                if tail.len() >= 40 {
                    tail.remove(0);
                }
                tail.push(line);
            }
        });
        Ok(Self { child, tail })
    }

    /// The broker's last log lines.
    pub fn tail(&self) -> String {
        self.tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .join("\n")
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM (a clean stop), and wait up to `grace` for the process to end; SIGKILL after
    /// that. Whether it stopped by itself.
    pub fn stop(&mut self, grace: Duration) -> bool {
        // std sends SIGKILL only; the `kill` command sends SIGTERM.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let started = std::time::Instant::now();
        while started.elapsed() < grace {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    /// Whether the process has ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

/// How a broker of a cluster on this machine starts: its place in the cluster, its ports and
/// its directory. Every broker of a run is started from one of these, so the tools' clusters
/// differ only in what they say here.
pub struct BrokerSettings<'a> {
    pub node: usize,
    pub cluster_size: usize,
    pub replication_factor: usize,
    pub partitions: u16,
    /// Where it reaches the brokers, by node id (its own internal address included).
    pub contact_points: &'a [String],
    pub internal_port: u16,
    pub grpc_port: u16,
    pub monitoring_port: u16,
    pub data_dir: &'a Path,
    /// `--memory-limit`, e.g. `256MiB`.
    pub memory_limit: &'a str,
}

impl BrokerSettings<'_> {
    /// The broker's arguments: these settings (the REST API on a free port), no secondary
    /// storage, no free-disk watermark, then `extra`.
    pub fn args(&self, extra: &[&str]) -> Result<Vec<String>, String> {
        let rest = free_port().map_err(|e| format!("no free port for REST: {e}"))?;
        let mut args: Vec<String> = [
            "--host",
            "127.0.0.1",
            "--secondary-storage",
            "none",
            "--disk-free-min",
            "off",
        ]
        .map(String::from)
        .into();
        args.extend([
            "--node-id".into(),
            self.node.to_string(),
            "--cluster-size".into(),
            self.cluster_size.to_string(),
            "--replication-factor".into(),
            self.replication_factor.to_string(),
            "--partitions".into(),
            self.partitions.to_string(),
            "--memory-limit".into(),
            self.memory_limit.to_string(),
            "--contact-points".into(),
            self.contact_points.join(","),
            "--internal-port".into(),
            self.internal_port.to_string(),
            "--grpc-port".into(),
            self.grpc_port.to_string(),
            "--rest-port".into(),
            rest.to_string(),
            "--monitoring-port".into(),
            self.monitoring_port.to_string(),
            "--data-dir".into(),
            self.data_dir.display().to_string(),
        ]);
        args.extend(extra.iter().map(|a| a.to_string()));
        Ok(args)
    }
}

/// One broker of a cluster run: its process while it runs, and how to start it again.
pub struct Node {
    pub args: Vec<String>,
    pub log: PathBuf,
    pub process: Option<BrokerProcess>,
}

impl Node {
    pub fn start(&mut self) -> Result<(), String> {
        self.process = Some(BrokerProcess::spawn_logged(
            &self.args,
            "info,openraft=warn",
            Some(&self.log),
            |_| {},
        )?);
        Ok(())
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        if let Some(process) = &mut self.process {
            process.kill();
        }
        self.process = None;
    }

    /// The running process's id.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.child.id())
    }

    /// A broker that ended without being told to: its exit and last lines.
    pub fn crashed(&mut self) -> Option<String> {
        let process = self.process.as_mut()?;
        let status = process.exited()?;
        Some(format!("exited ({status}):\n{}", process.tail()))
    }

    /// A clean stop (SIGTERM; SIGKILL after `grace`).
    pub fn stop(&mut self, grace: Duration) {
        if let Some(process) = &mut self.process {
            process.stop(grace);
        }
        self.process = None;
    }
}
