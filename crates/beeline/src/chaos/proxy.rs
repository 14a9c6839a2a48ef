//! Fault-injecting TCP proxies between brokers. Each broker reaches each other broker's
//! internal port through its own proxy (its contact points name the proxies). A pair of
//! brokers shares one connection, dialled by either side through its proxy, which carries
//! both directions; so a link is one direction of traffic between two brokers, whichever
//! proxy the pair's connection runs through: the link from broker `a` to broker `b` can be
//! delayed or made lossy without touching the other direction or the other brokers, and
//! cutting either direction of a pair cuts its connection.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What a link does to the traffic through it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// Passes everything at once.
    Healthy,
    /// Holds every chunk this long before passing it on.
    Delay(Duration),
    /// Loses traffic: each chunk, with this probability, breaks its connection (a byte
    /// stream cannot skip bytes, so what is lost takes the connection with it, as a broken
    /// network path does); the sender reconnects.
    Lossy(f64),
    /// Passes nothing: open connections are closed, new ones refused.
    Cut,
}

/// One direction of traffic between two brokers, from `from` to `to`; and the proxy through
/// which `from` dials `to`'s internal port.
struct Link {
    port: u16,
    fault: watch::Sender<Fault>,
}

/// Every link between the brokers, by (from, to).
pub struct Proxies {
    links: BTreeMap<(u64, u64), Link>,
}

impl Proxies {
    /// A proxy for every ordered pair of brokers; `internal[n]` is broker `n`'s internal
    /// address.
    pub async fn start(internal: &[SocketAddr], seed: u64) -> Result<Self, String> {
        let mut links = BTreeMap::new();
        let mut listeners = Vec::new();
        let seed = Arc::new(Mutex::new(seed | 1));
        for (from, _) in internal.iter().enumerate() {
            for (to, &target) in internal.iter().enumerate() {
                if from == to {
                    continue;
                }
                let listener = TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| format!("cannot bind a proxy: {e}"))?;
                let port = listener
                    .local_addr()
                    .map_err(|e| format!("a proxy has no address: {e}"))?
                    .port();
                let (fault, _) = watch::channel(Fault::Healthy);
                let link = (from as u64, to as u64);
                links.insert(link, Link { port, fault });
                listeners.push((link, listener, target));
            }
        }
        for ((from, to), listener, target) in listeners {
            let faults = Faults {
                forward: links[&(from, to)].fault.subscribe(),
                backward: links[&(to, from)].fault.subscribe(),
            };
            tokio::spawn(serve(listener, target, faults, seed.clone()));
        }
        Ok(Self { links })
    }

    /// The address broker `from` reaches broker `to` at.
    pub fn address(&self, from: u64, to: u64) -> Option<SocketAddr> {
        let link = self.links.get(&(from, to))?;
        Some(SocketAddr::from(([127, 0, 0, 1], link.port)))
    }

    /// Sets the fault of the traffic from `from` to `to`, on the pair's connection whichever
    /// side dialled it.
    pub fn set(&self, from: u64, to: u64, fault: Fault) {
        if let Some(link) = self.links.get(&(from, to)) {
            link.fault.send_replace(fault);
        }
    }

    /// Cuts every link to and from `node`.
    pub fn isolate(&self, node: u64) {
        for (&(from, to), link) in &self.links {
            if from == node || to == node {
                link.fault.send_replace(Fault::Cut);
            }
        }
    }

    /// Makes every link healthy again.
    pub fn heal(&self) {
        for link in self.links.values() {
            link.fault.send_replace(Fault::Healthy);
        }
    }

    /// The links, as (from, to).
    pub fn links(&self) -> Vec<(u64, u64)> {
        self.links.keys().copied().collect()
    }
}

/// A uniform draw in [0, 1) from the shared generator.
fn roll(seed: &Mutex<u64>) -> f64 {
    let mut state = seed.lock().unwrap_or_else(PoisonError::into_inner);
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// The faults a proxy's connections pass under: `forward` from the dialling broker to the one
/// dialled, `backward` the other way.
#[derive(Clone)]
struct Faults {
    forward: watch::Receiver<Fault>,
    backward: watch::Receiver<Fault>,
}

async fn serve(listener: TcpListener, target: SocketAddr, faults: Faults, seed: Arc<Mutex<u64>>) {
    loop {
        let Ok((inbound, _)) = listener.accept().await else {
            continue;
        };
        if *faults.forward.borrow() == Fault::Cut || *faults.backward.borrow() == Fault::Cut {
            drop(inbound);
            continue;
        }
        let faults = faults.clone();
        let seed = seed.clone();
        tokio::spawn(async move {
            let Ok(outbound) = TcpStream::connect(target).await else {
                return;
            };
            let _ = inbound.set_nodelay(true);
            let _ = outbound.set_nodelay(true);
            let (in_read, in_write) = inbound.into_split();
            let (out_read, out_write) = outbound.into_split();
            // Either direction ending (a cut of either) ends the connection: both halves drop.
            tokio::select! {
                () = pump(in_read, out_write, faults.forward, seed.clone()) => {}
                () = pump(out_read, in_write, faults.backward, seed) => {}
            }
        });
    }
}

/// Copies one direction of a connection under the link's fault, until either side closes or
/// the fault ends the connection.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut faults: watch::Receiver<Fault>,
    seed: Arc<Mutex<u64>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let read = tokio::select! {
            read = from.read(&mut buf) => read,
            changed = faults.changed() => {
                if changed.is_err() || *faults.borrow() == Fault::Cut {
                    return;
                }
                continue;
            }
        };
        let n = match read {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let fault = *faults.borrow();
        match fault {
            Fault::Healthy => {}
            Fault::Cut => return,
            Fault::Delay(delay) => tokio::time::sleep(delay).await,
            Fault::Lossy(probability) => {
                if roll(&seed) < probability {
                    return;
                }
            }
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

    use super::*;

    async fn echo() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                if socket.write_all(&buf[..n]).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    async fn round_trip(addr: SocketAddr) -> std::io::Result<Vec<u8>> {
        let mut socket = TcpStream::connect(addr).await?;
        socket.write_all(b"ping").await?;
        let mut buf = [0u8; 4];
        tokio::time::timeout(Duration::from_secs(2), socket.read_exact(&mut buf))
            .await
            .map_err(|_| std::io::Error::other("timed out"))??;
        Ok(buf.to_vec())
    }

    #[tokio::test]
    async fn a_link_passes_delays_and_cuts_traffic_and_heals() {
        let targets = [echo().await, echo().await];
        let proxies = Proxies::start(&targets, 7).await.unwrap();
        let link = proxies.address(0, 1).unwrap();
        assert_eq!(round_trip(link).await.unwrap(), b"ping");

        // A connection open at the cut is closed.
        let mut open = TcpStream::connect(link).await.unwrap();
        open.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        open.read_exact(&mut buf).await.unwrap();
        proxies.isolate(1);
        let read = tokio::time::timeout(Duration::from_secs(2), open.read(&mut buf))
            .await
            .expect("closed at once");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        assert!(round_trip(link).await.is_err(), "refused while cut");
        // The other direction is cut too; a link not touching broker 1 would not be.
        assert!(round_trip(proxies.address(1, 0).unwrap()).await.is_err());
        proxies.heal();

        // A connection broker 1 dialled (through its proxy to broker 0) carries the traffic
        // from broker 0 to broker 1 too: that link's fault applies to it, and its cut cuts it.
        let back = proxies.address(1, 0).unwrap();
        assert_eq!(round_trip(back).await.unwrap(), b"ping");
        proxies.set(0, 1, Fault::Delay(Duration::from_millis(150)));
        let started = std::time::Instant::now();
        assert_eq!(round_trip(back).await.unwrap(), b"ping");
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "the echo is delayed"
        );
        let mut open = TcpStream::connect(back).await.unwrap();
        open.write_all(b"ping").await.unwrap();
        open.read_exact(&mut buf).await.unwrap();
        proxies.set(0, 1, Fault::Cut);
        let read = tokio::time::timeout(Duration::from_secs(2), open.read(&mut buf))
            .await
            .expect("closed at once");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        assert!(round_trip(back).await.is_err(), "refused while cut");

        proxies.heal();
        proxies.set(0, 1, Fault::Delay(Duration::from_millis(150)));
        let started = std::time::Instant::now();
        assert_eq!(round_trip(link).await.unwrap(), b"ping");
        assert!(started.elapsed() >= Duration::from_millis(150));

        proxies.set(0, 1, Fault::Lossy(1.0));
        assert!(round_trip(link).await.is_err(), "everything lost");
        proxies.set(0, 1, Fault::Healthy);
        assert_eq!(round_trip(link).await.unwrap(), b"ping");
        let seed = Mutex::new(7);
        assert!(
            (0..100)
                .map(|_| roll(&seed))
                .all(|d| (0.0..1.0).contains(&d))
        );
    }
}
