//! A one-member etcd on free loopback ports, or a cluster of several
//! ([`EtcdProcess::cluster`]), for tests of the cluster layer; stopped (and
//! its data removed) when dropped.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct EtcdProcess {
    child: Child,
    dir: PathBuf,
    pub url: String,
}

/// Starts tried before giving up (see [`EtcdProcess::spawn`]).
pub(crate) const TRIES: usize = 5;

impl EtcdProcess {
    /// Starts `etcd` from the PATH. `None` when it is not installed and the
    /// run is not CI's (CI installs Debian's `etcd-server`: there a missing
    /// etcd fails the test).
    pub fn start(name: &str) -> Option<EtcdProcess> {
        if !installed("etcd", "apt-get install etcd-server", name) {
            return None;
        }
        for _ in 0..TRIES {
            let (client, peer) = (free_port(), free_port());
            let spawned = EtcdProcess::spawn("test", client, peer, &format!("test=http://127.0.0.1:{peer}"));
            if spawned.is_some() {
                return spawned;
            }
        }
        panic!("etcd did not start in {TRIES} tries, each on ports another process took");
    }

    /// Starts `members` etcd members as one cluster (which answers once most
    /// of them run); `None` as [`EtcdProcess::start`].
    pub fn cluster(name: &str, members: usize) -> Option<Vec<EtcdProcess>> {
        if !installed("etcd", "apt-get install etcd-server", name) {
            return None;
        }
        for _ in 0..TRIES {
            let ports: Vec<(u16, u16)> = (0..members).map(|_| (free_port(), free_port())).collect();
            let initial: Vec<String> = ports
                .iter()
                .enumerate()
                .map(|(i, (_, peer))| format!("e{i}=http://127.0.0.1:{peer}"))
                .collect();
            let initial = initial.join(",");
            let spawned = ports.iter().enumerate();
            // Those started are stopped (dropped) when one did not start.
            let all: Option<Vec<EtcdProcess>> = spawned
                .map(|(i, &(client, peer))| EtcdProcess::spawn(&format!("e{i}"), client, peer, &initial))
                .collect();
            if all.is_some() {
                return all;
            }
        }
        panic!("etcd did not start in {TRIES} tries, each on ports another process took");
    }

    /// Kills the member (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// A member listening on `client`; `None` when it stopped at once: a
    /// port it was given was taken meanwhile (tests running at once draw
    /// free ports from the same system), and the process listening there
    /// is not this one.
    fn spawn(member: &str, client: u16, peer: u16, initial_cluster: &str) -> Option<EtcdProcess> {
        let dir = std::env::temp_dir().join(format!("needle-test-etcd-{}-{client}", std::process::id()));
        let peer_url = format!("http://127.0.0.1:{peer}");
        let url = format!("http://127.0.0.1:{client}");
        let child = Command::new("etcd")
            .arg(format!("--name={member}"))
            .arg(format!("--data-dir={}", dir.display()))
            .arg(format!("--listen-client-urls={url}"))
            .arg(format!("--advertise-client-urls={url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster={initial_cluster}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("etcd starts");
        let mut etcd = EtcdProcess { child, dir, url };
        let started = Instant::now();
        let addr: SocketAddr = ([127, 0, 0, 1], client).into();
        // Listening there, with its own data folder made (not another process).
        while TcpStream::connect(addr).is_err() || !etcd.dir.join("member").exists() {
            if etcd.child.try_wait().ok().flatten().is_some() {
                return None;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "etcd did not listen in 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        // A member whose port was taken stops a moment after it made its folder.
        std::thread::sleep(Duration::from_millis(100));
        etcd.child.try_wait().ok().flatten().is_none().then_some(etcd)
    }
}

impl Drop for EtcdProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `program` is on the PATH. When it is not, a test named `name`
/// is skipped with a message, but not in CI, which installs it (`install`
/// says how): there a missing program fails the test.
pub(crate) fn installed(program: &str, install: &str, name: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
    if !found {
        assert!(std::env::var_os("CI").is_none(), "{program} is not installed ({install})");
        eprintln!("{name}: skipped, {program} is not installed ({install})");
    }
    found
}

/// A loopback port no one listens on now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}
