//! The gateway's settings, with Zeebe's defaults where Zeebe has one.

use std::time::Duration;

use crate::auth::AuthConfig;
use crate::backpressure::BackpressureConfig;
use crate::tenancy::TenancyConfig;
use crate::tls::TlsConfig;

/// Zeebe's default `maxMessageSize`: 4 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 << 20;

#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Largest request (and response message) in bytes; larger requests are refused with
    /// RESOURCE_EXHAUSTED. Default 4 MiB.
    pub max_message_size: usize,
    /// The per-partition in-flight limit. Default AIMD.
    pub backpressure: BackpressureConfig,
    /// How long a command may wait for its answer before DEADLINE_EXCEEDED; also the default
    /// wait of CreateProcessInstanceWithResult. Default 15 s (Zeebe's `requestTimeout`).
    pub request_timeout: Duration,
    /// How long an ActivateJobs call with `requestTimeout` 0 waits for jobs. Default 10 s.
    pub long_polling_timeout: Duration,
    /// How often a waiting ActivateJobs or StreamActivatedJobs call looks for jobs again when
    /// no notification wakes it (a fallback: each look writes a command to every partition).
    /// Default 5 s.
    pub job_probe_interval: Duration,
    /// HTTP/2 pings to find dead connections (a waiting long poll would not notice one).
    /// Default 30 s.
    pub keep_alive_interval: Duration,
    /// What the commands forwarded to partition leaders on other brokers may hold in memory
    /// while they wait for their answers (each its encoded command and its call's buffers);
    /// past it, a command is refused with RESOURCE_EXHAUSTED. Default 16 MiB (the broker
    /// sets a sixteenth of its memory limit).
    pub forwarding_memory: usize,
    /// Concurrent calls per connection. Default 1024.
    pub max_concurrent_streams: u32,
    /// TLS for both APIs; `None` (the default) serves plaintext.
    pub tls: Option<TlsConfig>,
    /// Who may call the APIs; off by default.
    pub auth: AuthConfig,
    /// Multi-tenancy (which needs `auth`); off by default.
    pub tenancy: TenancyConfig,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            backpressure: BackpressureConfig::default(),
            request_timeout: Duration::from_secs(15),
            long_polling_timeout: Duration::from_secs(10),
            job_probe_interval: Duration::from_secs(5),
            keep_alive_interval: Duration::from_secs(30),
            forwarding_memory: 16 << 20,
            max_concurrent_streams: 1024,
            tls: None,
            auth: AuthConfig::None,
            tenancy: TenancyConfig::default(),
        }
    }
}
