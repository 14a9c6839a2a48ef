//! A local TCP port for a server started a moment later (a broker of `beeline chaos`, a
//! PostgreSQL server of the tests, a node a test starts as a user would).
//!
//! Asking the kernel for port 0 and closing the listener again is not enough: the port it
//! gives comes from the ephemeral range, the range every outgoing connection takes its local
//! port from, so between the check and the server's bind another connection of the same run
//! (a broker dialling its peers, a proxy, a client) may hold it, and the server fails with
//! "address already in use". [`free_port`] therefore hands out ports below that range, which
//! only an explicit bind takes, checks each is free on every local address, and never hands
//! the same port out twice in one process. Where the range leaves too little room below it,
//! the kernel's choice is the fallback.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// The lowest port handed out: above the registered ports most services listen on.
const LOWEST: u16 = 10_000;

/// The lowest port the kernel hands to outgoing connections when the system does not say.
const EPHEMERAL_DEFAULT: u16 = 32_768;

/// Ports this process handed out already.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A port no socket is bound to now, below the ephemeral range, not handed out before by this
/// process.
pub fn free_port() -> std::io::Result<u16> {
    let below = ephemeral_low().unwrap_or(EPHEMERAL_DEFAULT);
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    if below > LOWEST {
        let span = u32::from(below - LOWEST);
        // Processes started together begin at different places, so they seldom probe the
        // same ports; the bind check settles the rest.
        let start = seed() % span;
        for step in 0..span {
            let port = LOWEST + ((start + step) % span) as u16;
            if !handed_out.contains(&port) && bindable(port) {
                handed_out.insert(port);
                return Ok(port);
            }
        }
    }
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port();
    handed_out.insert(port);
    Ok(port)
}

/// Whether a listener can bind `port` on every address (which also fails when one address
/// holds it).
fn bindable(port: u16) -> bool {
    TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok()
}

/// The low end of the kernel's ephemeral port range, where the system says it.
fn ephemeral_low() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
}

/// A number that differs between processes and between runs.
fn seed() -> u32 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos ^ std::process::id().wrapping_mul(2_654_435_761)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_below_the_ephemeral_range_free_and_never_twice() {
        let ports: Vec<u16> = (0..200).map(|_| free_port().unwrap()).collect();
        let distinct: BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "a port was handed out twice");
        let below = ephemeral_low().unwrap_or(EPHEMERAL_DEFAULT);
        for port in &ports {
            assert!(
                (LOWEST..below).contains(port),
                "{port} is not in {LOWEST}..{below}"
            );
        }
        // Each can be bound by the server it is for.
        for port in ports.iter().take(20) {
            TcpListener::bind((Ipv4Addr::LOCALHOST, *port)).unwrap();
        }
    }

    #[test]
    fn a_port_someone_listens_on_is_skipped() {
        let taken = free_port().unwrap();
        let _listener = TcpListener::bind((Ipv4Addr::LOCALHOST, taken)).unwrap();
        assert!(!bindable(taken));
    }
}
