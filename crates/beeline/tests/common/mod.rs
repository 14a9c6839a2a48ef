//! The `beeline` binary started as a user starts it, for tests that talk to it from outside.

#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Seek, SeekFrom, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port that was free a moment ago (below the ephemeral range: see `beeline_ports`).
pub fn free_port() -> u16 {
    beeline_ports::free_port().expect("a free port")
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

/// `method path` with a JSON body over HTTP/1.0: (status line, body).
pub fn request(port: u16, method: &str, path: &str, body: &str) -> Option<(String, String)> {
    let (head, body) = exchange(port, method, path, body)?;
    Some((head.lines().next()?.to_owned(), body))
}

/// `method path` with a JSON body over HTTP/1.0: (the whole head, body).
pub fn exchange(port: u16, method: &str, path: &str, body: &str) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    Some((head.to_owned(), body.to_owned()))
}

/// A running broker on free ports, killed (SIGKILL) when dropped.
pub struct Broker {
    child: Child,
    pub grpc: u16,
    pub rest: u16,
    pub monitoring: u16,
    /// Where its standard error (the log) goes.
    stderr: std::fs::File,
}

impl Broker {
    /// Starts `beeline broker` on `data` with `args` added, and waits until it is ready.
    ///
    /// A port found free can be taken before the broker binds it (by another test's broker, or
    /// as the local end of a client's connection); a broker that exits for that is started again
    /// on other ports. Any other early exit fails the test with what the broker printed.
    pub fn start(data: &Path, args: &[&str]) -> Self {
        for _ in 0..5 {
            match Self::try_start(data, args) {
                Ok(broker) => return broker,
                Err(output) if output.contains("cannot listen on") => continue,
                Err(output) => panic!("the broker did not start:\n{output}"),
            }
        }
        panic!("the broker found no free ports in 5 tries")
    }

    fn try_start(data: &Path, args: &[&str]) -> Result<Self, String> {
        let mut broker = Self::spawn(data, args, free_port(), free_port(), free_port());
        broker.wait_ready().map(|()| broker)
    }

    /// Starts `beeline broker` on `data` with `args` added, on these ports, without waiting for
    /// it (brokers of one cluster are ready only once a quorum of them runs).
    pub fn spawn(data: &Path, args: &[&str], grpc: u16, rest: u16, monitoring: u16) -> Self {
        let stderr = tempfile::tempfile().expect("a file for the broker's output");
        let child = Command::new(env!("CARGO_BIN_EXE_beeline"))
            .args(["broker", "--host", "127.0.0.1"])
            .args(args)
            .arg("--data-dir")
            .arg(data)
            .args(["--grpc-port", &grpc.to_string()])
            .args(["--rest-port", &rest.to_string()])
            .args(["--monitoring-port", &monitoring.to_string()])
            .stdout(Stdio::null())
            .stderr(stderr.try_clone().expect("the output file"))
            .spawn()
            .expect("the beeline binary starts");
        Self {
            child,
            grpc,
            rest,
            monitoring,
            stderr,
        }
    }

    /// Waits until the broker is ready; an exit, or no readiness within 60 s, is an error
    /// with what the broker printed.
    pub fn wait_ready(&mut self) -> Result<(), String> {
        let started = Instant::now();
        while get(self.monitoring, "/ready").is_none_or(|(status, _)| !status.contains(" 20")) {
            let exited = self.child.try_wait().expect("the broker's status");
            if exited.is_some() || started.elapsed() > Duration::from_secs(60) {
                let output = self.output();
                return Err(match exited {
                    Some(status) => format!("exited ({status}):\n{output}"),
                    None => format!("not ready after 60 s:\n{output}"),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Its gRPC gateway, as `beeline bench --gateway` takes it.
    pub fn gateway(&self) -> String {
        format!("127.0.0.1:{}", self.grpc)
    }

    /// Its REST API, as `beeline bench --api rest --gateway` takes it.
    pub fn rest_gateway(&self) -> String {
        format!("127.0.0.1:{}", self.rest)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it logged so far.
    pub fn output(&self) -> String {
        let mut output = String::new();
        let mut file = &self.stderr;
        let _ = file.seek(SeekFrom::Start(0));
        let _ = file.read_to_string(&mut output);
        output
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
