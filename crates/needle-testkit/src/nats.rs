//! A NATS server with JetStream on a free loopback port, for tests of the
//! cluster's ingest log, alone or one of a JetStream cluster of several
//! ([`NatsProcess::cluster`]); it can be stopped and started again on the
//! same port and store (an outage), and is stopped (its store removed) when
//! dropped.

use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::etcd::free_port;

pub struct NatsProcess {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
    /// Its monitoring port (HTTP: `/jsz` tells its streams' state).
    monitor: u16,
    /// In a cluster: its name, its route port and every server's route URL.
    cluster: Option<(String, u16, String)>,
    pub url: String,
}

impl NatsProcess {
    /// Starts `nats-server` from the PATH. `None` when it is not installed
    /// and the run is not CI's (CI installs Debian's `nats-server`: there a
    /// missing server fails the test).
    pub fn start(name: &str) -> Option<NatsProcess> {
        if !crate::etcd::installed("nats-server", "apt-get install nats-server", name) {
            return None;
        }
        for _ in 0..crate::etcd::TRIES {
            let mut nats = NatsProcess::at(free_port(), None);
            if nats.started() {
                return Some(nats);
            }
        }
        panic!(
            "nats-server did not start in {} tries, each on ports another process took",
            crate::etcd::TRIES
        );
    }

    /// Starts `servers` NATS servers routed to each other as one JetStream
    /// cluster (which elects its leaders once most of them run); `None` as
    /// [`NatsProcess::start`].
    pub fn cluster(name: &str, servers: usize) -> Option<Vec<NatsProcess>> {
        if !crate::etcd::installed("nats-server", "apt-get install nats-server", name) {
            return None;
        }
        for _ in 0..crate::etcd::TRIES {
            let routes: Vec<u16> = (0..servers).map(|_| free_port()).collect();
            let urls = routes.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
            let mut all: Vec<NatsProcess> = routes
                .iter()
                .enumerate()
                .map(|(i, &route)| NatsProcess::at(free_port(), Some((format!("n{i}"), route, urls.clone()))))
                .collect();
            // Those started are stopped (dropped) when one did not start.
            if all.iter_mut().all(NatsProcess::started) {
                return Some(all);
            }
        }
        panic!(
            "nats-server did not start in {} tries, each on ports another process took",
            crate::etcd::TRIES
        );
    }

    fn at(port: u16, cluster: Option<(String, u16, String)>) -> NatsProcess {
        let dir = std::env::temp_dir().join(format!("needle-test-nats-{}-{port}", std::process::id()));
        let monitor = free_port();
        NatsProcess { child: None, dir, port, monitor, cluster, url: format!("nats://127.0.0.1:{port}") }
    }

    /// Kills the server (SIGKILL): its clients see it gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on its port and store.
    pub fn resume(&mut self) {
        assert!(self.started(), "nats-server stopped at once on port {}: another process took it", self.port);
    }

    /// Starts the server on its port and store; false when it stopped at
    /// once (a port it was given was taken meanwhile by another process,
    /// which may be what listens there).
    fn started(&mut self) -> bool {
        assert!(self.child.is_none(), "the server runs");
        let mut command = Command::new("nats-server");
        let (port, monitor) = (self.port.to_string(), self.monitor.to_string());
        command.args(["-js", "-a", "127.0.0.1", "-p", &port, "-m", &monitor, "-sd"]).arg(&self.dir);
        if let Some((name, route, routes)) = &self.cluster {
            let own = format!("nats://127.0.0.1:{route}");
            command.args([
                "-n",
                name,
                "--cluster_name",
                "needle-test",
                "--cluster",
                &own,
                "--routes",
                routes,
            ]);
        }
        let mut child =
            command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("nats-server starts");
        let started = Instant::now();
        let addr: SocketAddr = ([127, 0, 0, 1], self.port).into();
        while TcpStream::connect(addr).is_err() {
            if child.try_wait().ok().flatten().is_some() {
                return false;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "nats-server did not listen in 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        // A server whose port (or monitoring or route port) was taken stops a moment after.
        std::thread::sleep(Duration::from_millis(100));
        let running = child.try_wait().ok().flatten().is_none();
        self.child = Some(child);
        running
    }
}

impl NatsProcess {
    /// The first and last sequence of each stream whose name starts with
    /// `prefix`, by name, as the server's monitoring endpoint tells them.
    pub fn stream_sequences(&self, prefix: &str) -> Vec<(String, u64, u64)> {
        let at: SocketAddr = ([127, 0, 0, 1], self.monitor).into();
        let jsz = crate::http::send(at, "GET", "/jsz?streams=true", None, &[]).json();
        let accounts = jsz["account_details"].as_array().cloned().unwrap_or_default();
        let streams =
            accounts.iter().flat_map(|a| a["stream_detail"].as_array().cloned().unwrap_or_default());
        let state = |s: &serde_json::Value, k: &str| s["state"][k].as_u64().unwrap_or(0);
        streams
            .filter_map(|s| {
                let name = s["name"].as_str()?.to_string();
                name.starts_with(prefix).then(|| (name, state(&s, "first_seq"), state(&s, "last_seq")))
            })
            .collect()
    }
}

impl Drop for NatsProcess {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
