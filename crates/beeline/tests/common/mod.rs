//! The `beeline` binary started as a user starts it, for tests that talk to it from outside.

#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("an ephemeral port")
}

/// `GET path` over HTTP/1.0: (status line, body).
pub fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_owned(), body.to_owned()))
}

/// A running broker on free ports, killed when dropped.
pub struct Broker {
    child: Child,
    pub grpc: u16,
    pub monitoring: u16,
}

impl Broker {
    /// Starts `beeline broker` on `data` with `args` added, and waits until it is ready.
    pub fn start(data: &Path, args: &[&str]) -> Self {
        let grpc = free_port();
        let monitoring = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_beeline"))
            .args(["broker", "--host", "127.0.0.1"])
            .args(args)
            .arg("--data-dir")
            .arg(data)
            .args(["--grpc-port", &grpc.to_string()])
            .args(["--rest-port", &free_port().to_string()])
            .args(["--monitoring-port", &monitoring.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the beeline binary starts");
        let broker = Self {
            child,
            grpc,
            monitoring,
        };
        let started = Instant::now();
        while get(monitoring, "/ready").is_none_or(|(status, _)| !status.contains(" 20")) {
            assert!(started.elapsed() < Duration::from_secs(30), "never ready");
            std::thread::sleep(Duration::from_millis(20));
        }
        broker
    }

    /// Its gRPC gateway, as `beeline bench --gateway` takes it.
    pub fn gateway(&self) -> String {
        format!("127.0.0.1:{}", self.grpc)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
