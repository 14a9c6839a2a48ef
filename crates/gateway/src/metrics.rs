//! Request metrics of the gateway, rendered in Prometheus' text format: calls per API (`grpc`,
//! `rest`), operation (`rpc`: the gRPC method's name, which REST operations share) and status
//! code (gRPC's code name, or the HTTP status), call durations per API and operation as a
//! histogram, and each partition's backpressure (commands in flight, the current limit,
//! commands refused).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use beeline_stream::LatencyHistogram;

use crate::dispatch::Dispatcher;

/// Upper bounds of the duration buckets, in seconds (a long poll lands in the last ones).
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Debug, Default)]
pub(crate) struct RequestMetrics {
    rpcs: Mutex<BTreeMap<(Api, &'static str), RpcStats>>,
}

#[derive(Debug)]
struct RpcStats {
    by_code: BTreeMap<&'static str, u64>,
    durations: LatencyHistogram,
}

impl Default for RpcStats {
    fn default() -> Self {
        Self {
            by_code: BTreeMap::new(),
            durations: LatencyHistogram::new(&BUCKETS),
        }
    }
}

/// The API a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Api {
    Grpc,
    Rest,
}

impl Api {
    fn label(self) -> &'static str {
        match self {
            Api::Grpc => "grpc",
            Api::Rest => "rest",
        }
    }
}

impl RequestMetrics {
    /// One answered call of `rpc` through `api`, with its status code (`OK` or the HTTP
    /// success status for success).
    pub fn record(&self, api: Api, rpc: &'static str, code: &'static str, took: Duration) {
        let mut rpcs = self.rpcs.lock().unwrap_or_else(PoisonError::into_inner);
        let stats = rpcs.entry((api, rpc)).or_default();
        *stats.by_code.entry(code).or_default() += 1;
        stats.durations.observe(took);
    }

    fn render(&self, out: &mut String) {
        let rpcs = self.rpcs.lock().unwrap_or_else(PoisonError::into_inner);
        let name = "beeline_gateway_requests_total";
        let _ = writeln!(
            out,
            "# HELP {name} Calls answered, by API, operation and status code.\n# TYPE {name} counter"
        );
        for ((api, rpc), stats) in rpcs.iter() {
            let api = api.label();
            for (code, count) in &stats.by_code {
                let _ = writeln!(
                    out,
                    "{name}{{api=\"{api}\",rpc=\"{rpc}\",code=\"{code}\"}} {count}"
                );
            }
        }
        let name = "beeline_gateway_request_duration_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Time from a call's arrival to its answer (for job streams: to the \
             stream's opening).\n# TYPE {name} histogram"
        );
        for ((api, rpc), stats) in rpcs.iter() {
            let labels = format!("api=\"{}\",rpc=\"{rpc}\"", api.label());
            stats.durations.render(out, name, &labels);
        }
    }
}

/// The gateway's metrics, for the node's `/metrics` endpoint.
#[derive(Clone)]
pub struct GatewayMetrics {
    pub(crate) d: Arc<Dispatcher>,
}

impl GatewayMetrics {
    /// Appends the gateway's metrics to `out` in Prometheus' text format.
    pub fn render(&self, out: &mut String) {
        self.d.metrics.render(out);
        let gauges: [(&str, &str, &str); 3] = [
            (
                "beeline_backpressure_inflight",
                "Commands sent to the partition and not answered yet.",
                "gauge",
            ),
            (
                "beeline_backpressure_limit",
                "The partition's current limit on commands in flight (absent when off).",
                "gauge",
            ),
            (
                "beeline_backpressure_dropped_total",
                "Commands refused with RESOURCE_EXHAUSTED over the partition's limit.",
                "counter",
            ),
        ];
        for (index, (name, help, kind)) in gauges.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (partition, p) in self.d.partitions() {
                let value = match index {
                    0 => Some(p.limiter.inflight() as u64),
                    1 => p.limiter.limit().map(|l| l as u64),
                    _ => Some(p.limiter.rejected()),
                };
                if let Some(value) = value {
                    let _ = writeln!(out, "{name}{{partition=\"{partition}\"}} {value}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_code_and_timed_in_cumulative_buckets() {
        let metrics = RequestMetrics::default();
        let complete = |code, took| metrics.record(Api::Grpc, "CompleteJob", code, took);
        complete("OK", Duration::from_micros(300));
        complete("OK", Duration::from_millis(3));
        complete("NOT_FOUND", Duration::from_secs(30));
        metrics.record(Api::Rest, "CompleteJob", "204", Duration::from_millis(1));
        let mut out = String::new();
        metrics.render(&mut out);
        let grpc = "api=\"grpc\",rpc=\"CompleteJob\"";
        for line in [
            format!("beeline_gateway_requests_total{{{grpc},code=\"OK\"}} 2"),
            format!("beeline_gateway_requests_total{{{grpc},code=\"NOT_FOUND\"}} 1"),
            "beeline_gateway_requests_total{api=\"rest\",rpc=\"CompleteJob\",code=\"204\"} 1"
                .to_owned(),
            format!("beeline_gateway_request_duration_seconds_bucket{{{grpc},le=\"0.0005\"}} 1"),
            format!("beeline_gateway_request_duration_seconds_bucket{{{grpc},le=\"0.005\"}} 2"),
            format!("beeline_gateway_request_duration_seconds_bucket{{{grpc},le=\"10\"}} 2"),
            format!("beeline_gateway_request_duration_seconds_bucket{{{grpc},le=\"+Inf\"}} 3"),
            format!("beeline_gateway_request_duration_seconds_count{{{grpc}}} 3"),
        ] {
            assert!(out.lines().any(|l| l == line), "missing {line} in:\n{out}");
        }
    }
}
