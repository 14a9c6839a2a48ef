//! The machine's CPU over a run, from /proc/stat: how busy it was, and how much time the host
//! took from it ("steal"). On a shared virtual machine, stolen time shows up as latency that no
//! engine change explains: a run with a few percent of steal is not comparable to a quiet one.
//! The processor's model is reported too: virtual machines of one size can run on hosts that
//! differ severalfold in speed, so figures from two machines compare only with it.

use serde::Serialize;

/// The aggregate `cpu` line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub busy: u64,
    pub idle: u64,
    pub iowait: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Parses `cpu  user nice system idle iowait irq softirq steal ...` (guest time is already
    /// inside user and nice, so it is not added again).
    pub fn parse(stat: &str) -> Option<CpuTimes> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let field = |i: usize| fields.get(i).copied().unwrap_or(0);
        if fields.len() < 4 {
            return None;
        }
        Some(CpuTimes {
            busy: field(0) + field(1) + field(2) + field(5) + field(6),
            idle: field(3),
            iowait: field(4),
            steal: field(7),
        })
    }

    /// This machine's, now; `None` where there is no /proc/stat.
    pub fn read() -> Option<CpuTimes> {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// The first `model name` of /proc/cpuinfo's text.
pub fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        let value = value.trim();
        (key.trim() == "model name" && !value.is_empty()).then(|| value.to_owned())
    })
}

/// This machine's processor model; `None` where /proc/cpuinfo does not name it.
pub fn cpu_model() -> Option<String> {
    parse_cpu_model(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
}

/// Shares of the machine's CPU time between two readings, in %.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MachineReport {
    pub cpus: usize,
    /// The processor, as the (virtual) machine names it.
    pub cpu_model: Option<String>,
    /// Running anything (user, system, interrupts).
    pub busy_percent: f64,
    pub iowait_percent: f64,
    /// Taken by the host for other guests.
    pub steal_percent: f64,
}

impl MachineReport {
    pub fn between(
        before: CpuTimes,
        after: CpuTimes,
        cpus: usize,
        cpu_model: Option<String>,
    ) -> Option<MachineReport> {
        let delta = |a: u64, b: u64| b.saturating_sub(a) as f64;
        let busy = delta(before.busy, after.busy);
        let idle = delta(before.idle, after.idle);
        let iowait = delta(before.iowait, after.iowait);
        let steal = delta(before.steal, after.steal);
        let total = busy + idle + iowait + steal;
        let share = |x: f64| (x / total * 1000.0).round() / 10.0;
        (total > 0.0).then(|| MachineReport {
            cpus,
            cpu_model,
            busy_percent: share(busy),
            iowait_percent: share(iowait),
            steal_percent: share(steal),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_cpu_line_and_shares_the_time_between_two_readings() {
        let before = CpuTimes::parse(
            "cpu  100 0 50 800 20 0 10 20 0 0\ncpu0 50 0 25 400 10 0 5 10 0 0\nintr 1 2\n",
        )
        .unwrap();
        assert_eq!(
            before,
            CpuTimes {
                busy: 160,
                idle: 800,
                iowait: 20,
                steal: 20
            }
        );
        // 200 ticks later: 120 busy, 40 idle, 10 waiting for I/O, 30 stolen.
        let after = CpuTimes::parse("cpu  190 0 70 840 30 0 20 50 0 0\n").unwrap();
        let report = MachineReport::between(before, after, 2, None).unwrap();
        assert_eq!(report.busy_percent, 60.0);
        assert_eq!(report.iowait_percent, 5.0);
        assert_eq!(report.steal_percent, 15.0);
        // Old kernels print fewer columns; garbage is no reading.
        assert!(CpuTimes::parse("cpu  1 2 3 4\n").is_some());
        assert_eq!(CpuTimes::parse("cpu  1 x 3 4\n"), None);
        assert_eq!(CpuTimes::parse("intr 1\n"), None);
        assert_eq!(MachineReport::between(before, before, 2, None), None);
    }

    #[test]
    fn names_the_first_processor() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\n\
                       processor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse_cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(parse_cpu_model("processor\t: 0\nmodel name\t:\n"), None);
        assert_eq!(parse_cpu_model(""), None);
    }

    #[test]
    fn reads_this_machine() {
        if std::path::Path::new("/proc/stat").exists() {
            let now = CpuTimes::read().expect("a reading");
            assert!(now.busy + now.idle > 0);
        }
    }
}
