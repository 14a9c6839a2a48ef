//! `--broker-pid`: the broker's memory and CPU, sampled each second from /proc, and the memory
//! of the cgroup it runs in when that is neither the machine's root nor the tool's own: what a
//! container's memory limit is held against (the page cache the broker's files take included),
//! which RSS does not show. A cgroup the tool shares (a login session's, a container that holds
//! both) counts everything else in it too, so it is not the broker's figure.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One reading of /proc/PID.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds after sampling began.
    pub at_s: f64,
    pub rss_bytes: u64,
    /// CPU used since the previous sample, in % of one core (200% = two cores busy).
    pub cpu_percent: Option<f64>,
    /// Memory charged to the broker's cgroup (`None` in the root cgroup, in the tool's own, or
    /// unreadable).
    pub cgroup_bytes: Option<u64>,
}

/// `VmRSS:   123456 kB` from /proc/PID/status, in bytes.
pub fn parse_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut parts = line["VmRSS:".len()..].split_whitespace();
    let value: u64 = parts.next()?.parse().ok()?;
    let unit = match parts.next() {
        Some("kB") | None => 1024,
        Some("mB") => 1 << 20,
        Some(_) => return None,
    };
    Some(value * unit)
}

/// utime + stime (fields 14 and 15) from /proc/PID/stat, in clock ticks. The command name
/// (field 2) is in parentheses and may itself hold spaces and parentheses, so the fields are
/// counted from the last `)`.
pub fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state), so field n is fields[n - 3].
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// `voluntary_ctxt_switches:  123` from a thread's /proc/PID/task/TID/status: the times it
/// gave up its core to wait (for a lock, a wake-up, I/O).
pub fn parse_voluntary_switches(status: &str) -> Option<u64> {
    let line = status
        .lines()
        .find(|l| l.starts_with("voluntary_ctxt_switches:"))?;
    line["voluntary_ctxt_switches:".len()..].trim().parse().ok()
}

/// What a process has used so far: CPU and the voluntary context switches of all its threads
/// (those of threads that have exited are not counted: a broker's threads live as long as it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessUse {
    pub cpu_ticks: u64,
    pub voluntary_switches: u64,
}

impl ProcessUse {
    /// The process's figures now; `None` if it is gone or /proc is not readable.
    pub fn of(pid: u32) -> Option<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let cpu_ticks = parse_cpu_ticks(&stat)?;
        let mut voluntary_switches = 0;
        for thread in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
            let status = thread
                .ok()
                .and_then(|t| std::fs::read_to_string(t.path().join("status")).ok());
            voluntary_switches += status
                .as_deref()
                .and_then(parse_voluntary_switches)
                .unwrap_or(0);
        }
        Some(Self {
            cpu_ticks,
            voluntary_switches,
        })
    }

    /// What was used between two readings of one process, `earlier` and `self`.
    pub fn since(self, earlier: Self) -> Self {
        Self {
            cpu_ticks: self.cpu_ticks.saturating_sub(earlier.cpu_ticks),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
        }
    }

    /// CPU in milliseconds.
    pub fn cpu_ms(self) -> f64 {
        self.cpu_ticks as f64 * 1000.0 / rustix::param::clock_ticks_per_second() as f64
    }
}

impl std::iter::Sum for ProcessUse {
    fn sum<I: Iterator<Item = Self>>(uses: I) -> Self {
        uses.fold(Self::default(), |a, b| a + b)
    }
}

impl std::ops::Add for ProcessUse {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            cpu_ticks: self.cpu_ticks + other.cpu_ticks,
            voluntary_switches: self.voluntary_switches + other.voluntary_switches,
        }
    }
}

/// Where the memory charged to the cgroup named in /proc/PID/cgroup is read: `memory.current`
/// under a cgroup v2 path, `memory.usage_in_bytes` under a v1 memory controller's. `None` for
/// the root, whose figure is the whole machine's.
pub fn cgroup_memory_file(cgroup: &str) -> Option<String> {
    // Lines `ID:CONTROLLERS:PATH`; v1 names its controllers, v2 has one line with none.
    let mut v2 = None;
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if path == "/" {
            continue;
        }
        if controllers.split(',').any(|c| c == "memory") {
            return Some(format!("/sys/fs/cgroup/memory{path}/memory.usage_in_bytes"));
        }
        if controllers.is_empty() {
            v2 = Some(format!("/sys/fs/cgroup{path}/memory.current"));
        }
    }
    v2
}

/// The memory file of the broker's cgroup (from its /proc/PID/cgroup), unless the tool's own
/// cgroup (from /proc/self/cgroup) is the same one.
pub fn broker_cgroup_file(broker: &str, tool: &str) -> Option<String> {
    let file = cgroup_memory_file(broker)?;
    (cgroup_memory_file(tool).as_ref() != Some(&file)).then_some(file)
}

fn cgroup_bytes(pid: u32) -> Option<u64> {
    let broker = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let tool = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let file = broker_cgroup_file(&broker, &tool)?;
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

fn read(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some((parse_rss(&status)?, parse_cpu_ticks(&stat)?))
}

/// Samples a process each second until dropped; the PID can change (a restarted broker).
#[derive(Debug)]
pub struct Sampler {
    pid: Arc<AtomicU32>,
    samples: Arc<Mutex<Samples>>,
    began: Instant,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Samples {
    taken: Vec<Sample>,
    missed: u64,
}

impl Sampler {
    /// Whether /proc/PID can be read at all.
    pub fn check(pid: u32) -> bool {
        read(pid).is_some()
    }

    pub fn start(pid: u32, every: Duration) -> Sampler {
        let pid = Arc::new(AtomicU32::new(pid));
        let samples = Arc::new(Mutex::new(Samples::default()));
        let began = Instant::now();
        let task = tokio::spawn({
            let pid = pid.clone();
            let samples = samples.clone();
            async move {
                let ticks_per_s = rustix::param::clock_ticks_per_second() as f64;
                let mut last: Option<(u32, Instant, u64)> = None;
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let p = pid.load(Ordering::Relaxed);
                    let now = Instant::now();
                    let reading = read(p);
                    let mut s = samples.lock().unwrap_or_else(PoisonError::into_inner);
                    match reading {
                        Some((rss, ticks)) => {
                            let cpu_percent = match last {
                                Some((lp, lt, lticks)) if lp == p && ticks >= lticks => {
                                    let wall = now.duration_since(lt).as_secs_f64();
                                    (wall > 0.0).then(|| {
                                        (ticks - lticks) as f64 / ticks_per_s / wall * 100.0
                                    })
                                }
                                _ => None,
                            };
                            last = Some((p, now, ticks));
                            s.taken.push(Sample {
                                at_s: now.duration_since(began).as_secs_f64(),
                                rss_bytes: rss,
                                cpu_percent,
                                cgroup_bytes: cgroup_bytes(p),
                            });
                        }
                        None => {
                            last = None;
                            s.missed += 1;
                        }
                    }
                }
            }
        });
        Sampler {
            pid,
            samples,
            began,
            task,
        }
    }

    pub fn set_pid(&self, pid: u32) {
        self.pid.store(pid, Ordering::Relaxed);
    }

    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// Seconds from the start of sampling to `at`, for [`Sampler::report`].
    pub fn began_s(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.began).as_secs_f64()
    }

    /// The latest reading, if any.
    pub fn last(&self) -> Option<Sample> {
        self.samples
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .taken
            .last()
            .copied()
    }

    /// Figures over the samples taken since `from_s` seconds after sampling began.
    pub fn report(&self, from_s: f64) -> BrokerReport {
        let s = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        let window: Vec<Sample> = s
            .taken
            .iter()
            .filter(|x| x.at_s >= from_s)
            .copied()
            .collect();
        BrokerReport::of(self.pid(), &window, s.missed)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The broker's memory and CPU over a run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct BrokerReport {
    pub pid: u32,
    pub samples: usize,
    /// Seconds the process could not be read (not running, or restarting).
    pub missed_samples: u64,
    pub peak_rss_mib: Option<f64>,
    pub mean_rss_mib: Option<f64>,
    pub last_rss_mib: Option<f64>,
    pub mean_cpu_percent: Option<f64>,
    /// Mean RSS over the first and the last quarter of the samples (creep check).
    pub first_quartile_rss_mib: Option<f64>,
    pub last_quartile_rss_mib: Option<f64>,
    /// The memory charged to the broker's cgroup (page cache included), when it has one.
    pub peak_cgroup_mib: Option<f64>,
    pub mean_cgroup_mib: Option<f64>,
    pub last_cgroup_mib: Option<f64>,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

impl BrokerReport {
    pub fn of(pid: u32, samples: &[Sample], missed: u64) -> BrokerReport {
        let rss = |xs: &[Sample]| mean(xs.iter().map(|s| s.rss_bytes as f64 / MIB)).map(round1);
        let quarter = samples.len() / 4;
        let (first, last) = if quarter > 0 {
            (
                rss(&samples[..quarter]),
                rss(&samples[samples.len() - quarter..]),
            )
        } else {
            (None, None)
        };
        BrokerReport {
            pid,
            samples: samples.len(),
            missed_samples: missed,
            peak_rss_mib: samples
                .iter()
                .map(|s| s.rss_bytes)
                .max()
                .map(|b| round1(b as f64 / MIB)),
            mean_rss_mib: rss(samples),
            last_rss_mib: samples.last().map(|s| round1(s.rss_bytes as f64 / MIB)),
            mean_cpu_percent: mean(samples.iter().filter_map(|s| s.cpu_percent)).map(round1),
            first_quartile_rss_mib: first,
            last_quartile_rss_mib: last,
            peak_cgroup_mib: samples
                .iter()
                .filter_map(|s| s.cgroup_bytes)
                .max()
                .map(|b| round1(b as f64 / MIB)),
            mean_cgroup_mib: mean(
                samples
                    .iter()
                    .filter_map(|s| s.cgroup_bytes)
                    .map(|b| b as f64 / MIB),
            )
            .map(round1),
            last_cgroup_mib: samples
                .iter()
                .rev()
                .find_map(|s| s.cgroup_bytes)
                .map(|b| round1(b as f64 / MIB)),
        }
    }

    /// Growth of the last quarter's mean RSS over the first quarter's, in %.
    pub fn growth_percent(&self) -> Option<f64> {
        match (self.first_quartile_rss_mib, self.last_quartile_rss_mib) {
            (Some(a), Some(b)) if a > 0.0 => Some(round1((b - a) / a * 100.0)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let status = "Name:\tjava\nVmPeak:\t 9999 kB\nVmRSS:\t  524288 kB\nRssAnon:\t 1 kB\n";
        assert_eq!(parse_rss(status), Some(512 << 20));
        assert_eq!(parse_rss("Name: x\n"), None);
        // Field 2 with spaces and a parenthesis; utime 1500, stime 250.
        let stat = "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 100 0 0 0 1500 250 0 0 20 0 30 0 100 1000 200";
        assert_eq!(parse_cpu_ticks(stat), Some(1750));
        assert_eq!(parse_cpu_ticks("garbage"), None);
        let thread =
            "Name:\tbeeline\nvoluntary_ctxt_switches:\t50280\nnonvoluntary_ctxt_switches:\t12\n";
        assert_eq!(parse_voluntary_switches(thread), Some(50280));
        assert_eq!(parse_voluntary_switches("Name: x\n"), None);
    }

    #[test]
    fn a_process_use_is_read_from_proc_and_counts_forward() {
        let Some(before) = ProcessUse::of(std::process::id()) else {
            panic!("/proc/self is readable where the tests run");
        };
        // Some CPU and a few waits of this thread.
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let used = ProcessUse::of(std::process::id())
            .expect("still readable")
            .since(before);
        assert!(used.voluntary_switches >= 5, "{used:?}");
        assert!(used.cpu_ms() >= 0.0);
        assert_eq!((used + used).cpu_ticks, 2 * used.cpu_ticks);
    }

    #[test]
    fn finds_the_memory_cgroup_of_either_version() {
        let v1 = "12:pids:/bench\n9:cpu,cpuacct:/bench\n7:memory:/bench/broker\n0::/\n";
        assert_eq!(
            cgroup_memory_file(v1).as_deref(),
            Some("/sys/fs/cgroup/memory/bench/broker/memory.usage_in_bytes")
        );
        let v2 = "0::/system.slice/beeline.service\n";
        assert_eq!(
            cgroup_memory_file(v2).as_deref(),
            Some("/sys/fs/cgroup/system.slice/beeline.service/memory.current")
        );
        // The root stands for the whole machine: no figure of the broker's own.
        assert_eq!(cgroup_memory_file("7:memory:/\n0::/\n"), None);
        assert_eq!(cgroup_memory_file("0::/\n"), None);
        assert_eq!(cgroup_memory_file("garbage"), None);
    }

    #[test]
    fn a_cgroup_the_tool_shares_is_not_the_brokers() {
        let session = "4:memory:/process_api/1234\n0::/\n";
        let container = "4:memory:/docker/abcd\n0::/\n";
        assert_eq!(
            broker_cgroup_file(container, session).as_deref(),
            Some("/sys/fs/cgroup/memory/docker/abcd/memory.usage_in_bytes")
        );
        assert_eq!(broker_cgroup_file(session, session), None);
        assert_eq!(broker_cgroup_file(container, container), None);
        assert!(
            broker_cgroup_file(container, "").is_some(),
            "no reading of the tool's own"
        );
    }

    #[test]
    fn reads_its_own_process() {
        let pid = std::process::id();
        assert!(Sampler::check(pid));
        let (rss, _) = read(pid).unwrap();
        assert!(rss > 1 << 20);
    }

    #[test]
    fn report_figures_and_quartiles() {
        let samples: Vec<Sample> = (0..8)
            .map(|i| Sample {
                at_s: i as f64,
                rss_bytes: (100 + i * 10) << 20,
                cpu_percent: if i == 0 { None } else { Some(50.0) },
                cgroup_bytes: (i < 6).then_some((200 + i * 4) << 20),
            })
            .collect();
        let r = BrokerReport::of(7, &samples, 1);
        assert_eq!(r.samples, 8);
        assert_eq!(r.peak_rss_mib, Some(170.0));
        assert_eq!(r.mean_rss_mib, Some(135.0));
        assert_eq!(r.mean_cpu_percent, Some(50.0));
        assert_eq!(r.first_quartile_rss_mib, Some(105.0));
        assert_eq!(r.last_quartile_rss_mib, Some(165.0));
        assert_eq!(r.growth_percent(), Some(57.1));
        assert_eq!(r.peak_cgroup_mib, Some(220.0));
        assert_eq!(r.mean_cgroup_mib, Some(210.0));
        assert_eq!(
            r.last_cgroup_mib,
            Some(220.0),
            "the last sample that had one"
        );
        let empty = BrokerReport::of(7, &[], 3);
        assert_eq!(empty.peak_rss_mib, None);
        assert_eq!(empty.growth_percent(), None);
        assert_eq!(empty.peak_cgroup_mib, None);
    }
}
