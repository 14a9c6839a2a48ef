//! What the benchmarks share: arguments and the process's memory.

/// The value of `--name N` on the command line, or `default`.
pub fn arg(name: &str, default: u64) -> u64 {
    option(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The value of `--name VALUE` on the command line.
#[allow(dead_code)] // Not every benchmark takes one.
pub fn option(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// A `/proc/self/status` field in KiB (`VmRSS:`, `VmHWM:`), 0 where there is none.
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
