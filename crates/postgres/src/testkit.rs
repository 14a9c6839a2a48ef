//! A real PostgreSQL server for tests and benchmarks, started from the machine's installation
//! with a data directory of its own, on a free loopback port, as the `postgres` user when run
//! as root (the server refuses root); stopped and deleted when dropped.
//!
//! Where PostgreSQL is not installed, [`Server::start`] says so and gives `None`, unless
//! `BEELINE_REQUIRE_POSTGRES=1` (the test command sets it after installing the package): then
//! a missing or failing server fails the test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "the test kit: a failure in it fails the test that uses it"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct Server {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// The server's `-o` options (port, settings), to start it again as it was.
    options: String,
    /// Commands run as `postgres` through runuser (we are root).
    as_postgres: bool,
    databases: AtomicU32,
}

/// The user the tests connect as (trust authentication on loopback).
pub const USER: &str = "beeline";

impl Server {
    /// A server tuned for tests: no fsync, no synchronous commit.
    pub fn start() -> Option<Self> {
        Self::start_with(&[
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
        ])
    }

    /// A server with these `-c` settings (a benchmark leaves durability on: none).
    pub fn start_with(settings: &[&str]) -> Option<Self> {
        let required = std::env::var("BEELINE_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
        match Self::try_start(settings) {
            Ok(server) => Some(server),
            Err(reason) if required => {
                panic!("PostgreSQL is required (BEELINE_REQUIRE_POSTGRES=1): {reason}")
            }
            Err(reason) => {
                eprintln!(
                    "SKIPPED: the PostgreSQL tests need a PostgreSQL installation ({reason}); \
                     ./scripts/test installs one"
                );
                None
            }
        }
    }

    fn try_start(settings: &[&str]) -> Result<Self, String> {
        let bin = binaries().ok_or("no initdb and pg_ctl found in /usr/lib/postgresql/*/bin")?;
        let as_postgres = output("id", &["-u"]).is_ok_and(|uid| uid.trim() == "0");
        static SERVERS: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "beeline-postgres-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut server = Self {
            dir,
            bin,
            port: 0,
            options: String::new(),
            as_postgres,
            databases: AtomicU32::new(0),
        };
        if as_postgres {
            output("chown", &["postgres:", &server.dir.display().to_string()])?;
        }
        let data = server.dir.join("data").display().to_string();
        server.run(
            "initdb",
            &[
                "-D",
                &data,
                "-A",
                "trust",
                "-U",
                USER,
                "--no-sync",
                "-E",
                "UTF8",
            ],
        )?;
        // A free port may be taken between the probe and the start: try a few.
        let mut last = String::new();
        for _ in 0..5 {
            server.port = free_port()?;
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {} -k {}",
                server.port,
                server.dir.display()
            );
            let options = settings.iter().fold(options, |options, setting| {
                format!("{options} -c {setting}")
            });
            server.options = options;
            match server.pg_ctl_start() {
                Ok(_) => return Ok(server),
                Err(error) => {
                    last = format!(
                        "{error}\n{}",
                        std::fs::read_to_string(server.dir.join("log")).unwrap_or_default()
                    )
                }
            }
        }
        Err(last)
    }

    fn pg_ctl_start(&self) -> Result<String, String> {
        let data = self.dir.join("data").display().to_string();
        let log = self.dir.join("log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &data,
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &self.options,
                "start",
            ],
        )
    }

    /// Stops the server as an outage would, keeping its data: its connections drop at once.
    pub fn stop(&self) -> Result<(), String> {
        let data = self.dir.join("data").display().to_string();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])
            .map(|_| ())
    }

    /// Starts the stopped server again, on the same port with the same data.
    pub fn restart(&self) -> Result<(), String> {
        self.pg_ctl_start().map(|_| ())
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let program = self.bin.join(program).display().to_string();
        if self.as_postgres {
            let mut all = vec!["-u", "postgres", "--", program.as_str()];
            all.extend(args);
            output("runuser", &all)
        } else {
            output(&program, args)
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of `database` on this server.
    pub fn url(&self, database: &str) -> String {
        format!("postgresql://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// A new, empty database; its URL.
    pub fn database(&self) -> Result<String, String> {
        let name = format!("beeline_{}", self.databases.fetch_add(1, Ordering::Relaxed));
        let psql = self.bin.join("psql");
        let psql = if psql.exists() {
            psql.display().to_string()
        } else {
            "psql".to_owned()
        };
        output(
            &psql,
            &[
                "-q",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                USER,
                "-d",
                "postgres",
                "-c",
                &format!("CREATE DATABASE {name}"),
            ],
        )?;
        Ok(self.url(&name))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.dir.join("data").display().to_string();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest installed version's binaries.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").exists() && bin.join("pg_ctl").exists()).then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn free_port() -> Result<u16, String> {
    beeline_ports::free_port().map_err(|e| e.to_string())
}

fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{program} {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
