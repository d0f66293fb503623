//! An engine under test as a child process speaking bench/PROTOCOL.md: starting it
//! (optionally inside a memory cgroup), waiting for READY, sending requests, and a
//! reader thread that timestamps every response line as it arrives.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;

use crate::cgroup::MemCgroup;
use crate::queue::{Queue, Taken};
use crate::util::Result;

/// Which engine to start and how (shared by `run`, `capacity` and `realtime`).
#[derive(clap::Args, Debug, Clone)]
pub struct EngineSpec {
    /// needle, lucene, tantivy, or http (a server: give --engine-arg=--url=URL; --index is the index's name).
    #[arg(long)]
    pub engine: String,
    /// A name for this configuration in results and plots (default: the engine), e.g. lucene-random.
    #[arg(long)]
    pub label: Option<String>,
    /// The command that starts the engine's server (default per engine; `--index DIR --threads T` is appended).
    #[arg(long)]
    pub engine_cmd: Option<String>,
    /// Extra arguments appended to the engine's command line (repeatable).
    #[arg(long, allow_hyphen_values = true)]
    pub engine_arg: Vec<String>,
}

impl EngineSpec {
    /// The server's command line (see [`engine_command`]).
    pub fn command(&self) -> Result<Vec<String>> {
        engine_command(&self.engine, self.engine_cmd.as_deref(), &repo_root())
    }

    pub fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.engine.clone())
    }
}

/// One line from the engine.
#[derive(Debug)]
pub enum Reply {
    Answer {
        id: u64,
        at: Instant,
        total: u64,
        ids: Vec<String>,
        /// The hits' scores, when the engine sends them (an optional fourth field).
        scores: Vec<f32>,
        /// An optional fifth field, as sent (`values` mode: JSON of sort values and aggregations).
        extra: String,
    },
    Error {
        id: u64,
        at: Instant,
        message: String,
    },
    Stats(serde_json::Value),
    /// The engine closed its output.
    Closed,
}

/// Called by the reader thread for every answer (request id, arrival) before it
/// is queued, so a driver can react without waiting for its own loop (`realtime`'s probes).
pub type AnswerHook = Box<dyn FnMut(u64, Instant) + Send>;

pub struct EngineProcess {
    child: Child,
    hook: Arc<Mutex<Option<AnswerHook>>>,
    stdin: Option<BufWriter<ChildStdin>>,
    replies: Arc<Queue<Reply>>,
    reader: Option<JoinHandle<()>>,
    pub ready: serde_json::Value,
    pub pid: u32,
    pub cgroup: Option<MemCgroup>,
    /// The first request id the next phase may use (ids are never reused, so a
    /// late answer from an earlier phase cannot be taken for a new one).
    pub id_base: u64,
}

/// The command line that starts an engine's server (before `--index DIR --threads T`).
pub fn engine_command(engine: &str, custom: Option<&str>, root: &Path) -> Result<Vec<String>> {
    if let Some(c) = custom {
        return Ok(c.split_whitespace().map(String::from).collect());
    }
    let p = |rel: &str| root.join(rel).to_string_lossy().into_owned();
    Ok(match engine {
        "needle" => {
            vec![std::env::current_exe()?.to_string_lossy().into_owned(), "serve-needle".to_string()]
        }
        // A server over HTTP: --index names its index, --threads its connections (`serve-http`).
        "http" => vec![std::env::current_exe()?.to_string_lossy().into_owned(), "serve-http".to_string()],
        "lucene" => vec![p("bench/peers/lucene/run.sh"), "needle.bench.Serve".to_string()],
        "tantivy" => vec![p("bench/peers/tantivy/target/release/tantivy-peer"), "serve".to_string()],
        other => {
            return Err(format!(
                "unknown engine `{other}` (needle, lucene, tantivy, http; or give --engine-cmd)"
            )
            .into())
        }
    })
}

/// The repository root: `WSBENCH_ROOT`, else the nearest ancestor of the
/// current directory holding bench/PROTOCOL.md, else the current directory.
pub fn repo_root() -> PathBuf {
    if let Ok(r) = std::env::var("WSBENCH_ROOT") {
        return PathBuf::from(r);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut d = cwd.as_path();
    loop {
        if d.join("bench/PROTOCOL.md").exists() {
            return d.to_path_buf();
        }
        match d.parent() {
            Some(p) => d = p,
            None => return cwd,
        }
    }
}

impl EngineProcess {
    /// Starts `cmd --index DIR --threads T extra...` and waits (up to `timeout`) for READY.
    pub fn start(
        cmd: &[String],
        index: &Path,
        threads: usize,
        extra: &[String],
        cgroup: Option<MemCgroup>,
        timeout: Duration,
    ) -> Result<EngineProcess> {
        let mut args: Vec<String> = cmd[1..].to_vec();
        args.extend(["--index".to_string(), index.to_string_lossy().into_owned()]);
        args.extend(["--threads".to_string(), threads.to_string()]);
        args.extend(extra.iter().cloned());
        let mut command = match &cgroup {
            // The shell joins the cgroup, then execs the engine: every page the
            // engine touches, from its first, is charged to the cgroup.
            Some(cg) => {
                let mut c = Command::new("/bin/sh");
                c.arg("-c")
                    .arg(format!("echo $$ > '{}' && exec \"$@\"", cg.procs_file().display()))
                    .arg("sh")
                    .arg(&cmd[0])
                    .args(&args);
                c
            }
            None => {
                let mut c = Command::new(&cmd[0]);
                c.args(&args);
                c
            }
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", cmd[0]))?;
        let pid = child.id();
        let stdin = BufWriter::with_capacity(1 << 16, child.stdin.take().unwrap());
        let stdout = child.stdout.take().unwrap();
        let replies = Arc::new(Queue::default());
        let tx = Arc::clone(&replies);
        let (ready_tx, ready_rx) = unbounded::<std::result::Result<String, String>>();
        let hook: Arc<Mutex<Option<AnswerHook>>> = Arc::default();
        let reader_hook = hook.clone();
        let reader = std::thread::spawn(move || {
            let mut r = BufReader::with_capacity(1 << 16, stdout);
            let mut line = String::new();
            let mut ready_sent = false;
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        if !ready_sent {
                            let _ = ready_tx.send(Err("the engine exited before READY".into()));
                        }
                        tx.push(Reply::Closed);
                        tx.close();
                        return;
                    }
                    Ok(_) => {}
                }
                let at = Instant::now();
                let l = line.trim_end_matches(['\n', '\r']);
                if !ready_sent {
                    if let Some(rest) = l.strip_prefix("READY") {
                        ready_sent = true;
                        let _ = ready_tx.send(Ok(rest.trim().to_string()));
                    } else {
                        eprintln!("engine: {l}");
                    }
                    continue;
                }
                if let Some(rest) = l.strip_prefix("STATS\t") {
                    let v = serde_json::from_str(rest).unwrap_or(serde_json::Value::String(rest.into()));
                    tx.push(Reply::Stats(v));
                    continue;
                }
                let reply = parse_answer(l, at);
                if let Reply::Answer { id, at, .. } = &reply {
                    if let Some(f) = reader_hook.lock().unwrap().as_mut() {
                        f(*id, *at);
                    }
                }
                tx.push(reply);
            }
        });
        let ready = match ready_rx.recv_timeout(timeout) {
            Ok(Ok(s)) => serde_json::from_str(&s).unwrap_or(serde_json::Value::String(s)),
            Ok(Err(e)) => {
                let _ = child.wait();
                return Err(e.into());
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the engine did not print READY within {timeout:?}").into());
            }
        };
        Ok(EngineProcess {
            child,
            hook,
            stdin: Some(stdin),
            replies,
            reader: Some(reader),
            ready,
            pid,
            cgroup,
            id_base: 0,
        })
    }

    /// Installs the reader thread's [`AnswerHook`].
    pub fn on_answer(&self, f: AnswerHook) {
        *self.hook.lock().unwrap() = Some(f);
    }

    /// Queues one request (not flushed).
    pub fn send(&mut self, id: u64, count: bool, k: usize, query: &str) -> Result<()> {
        self.send_mode(id, if count { "count" } else { "top" }, k, query)
    }

    /// Queues one request of any mode (not flushed).
    pub fn send_mode(&mut self, id: u64, mode: &str, k: usize, query: &str) -> Result<()> {
        let w = self.stdin.as_mut().ok_or("the engine's input is closed")?;
        writeln!(w, "{id}\t{mode}\t{k}\t{query}")?;
        Ok(())
    }

    pub fn flush(&mut self) -> Result<()> {
        if let Some(w) = self.stdin.as_mut() {
            w.flush()?;
        }
        Ok(())
    }

    /// A writer to the engine's input that another thread may own (open loop).
    pub fn take_input(&mut self) -> Option<BufWriter<ChildStdin>> {
        self.stdin.take()
    }

    pub fn put_input(&mut self, w: BufWriter<ChildStdin>) {
        self.stdin = Some(w);
    }

    pub fn recv(&self, timeout: Duration) -> Result<Reply> {
        match self.replies.take_within(timeout) {
            Taken::Item(r) => Ok(r),
            Taken::TimedOut => Err(format!("no answer from the engine in {timeout:?}").into()),
            Taken::Closed => Ok(Reply::Closed),
        }
    }

    /// Asks for STATS (answered after every earlier request); other replies that
    /// arrive meanwhile are dropped.
    pub fn stats(&mut self, timeout: Duration) -> Result<serde_json::Value> {
        let w = self.stdin.as_mut().ok_or("the engine's input is closed")?;
        w.write_all(b"STATS\n")?;
        w.flush()?;
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left)? {
                Reply::Stats(v) => return Ok(v),
                Reply::Closed => return Err("the engine exited".into()),
                _ => {}
            }
        }
    }

    /// Closes the engine's input and waits for it to exit.
    pub fn finish(mut self) -> Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        if let Some(cg) = self.cgroup.take() {
            cg.remove();
        }
        if !status.success() {
            return Err(format!("the engine exited with {status}").into());
        }
        Ok(())
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        if self.stdin.is_some() || self.reader.is_some() {
            drop(self.stdin.take());
            let _ = self.child.kill();
            let _ = self.child.wait();
            if let Some(cg) = self.cgroup.take() {
                cg.remove();
            }
        }
    }
}

fn parse_answer(l: &str, at: Instant) -> Reply {
    let mut parts = l.splitn(4, '\t');
    let id = parts.next().and_then(|s| s.parse::<u64>().ok());
    let total = parts.next().unwrap_or("");
    let rest = parts.next().unwrap_or("");
    let Some(id) = id else {
        return Reply::Error { id: u64::MAX, at, message: format!("unparsable line: {l}") };
    };
    if total == "ERROR" {
        let message = l.splitn(3, '\t').nth(2).unwrap_or("").to_string();
        return Reply::Error { id, at, message };
    }
    let list = |s: &str| -> Vec<String> {
        if s.is_empty() {
            Vec::new()
        } else {
            s.split(',').map(String::from).collect()
        }
    };
    let tail = parts.next().unwrap_or("");
    let (scores, extra) = tail.split_once('\t').unwrap_or((tail, ""));
    let scores: Option<Vec<f32>> = list(scores).iter().map(|s| s.parse().ok()).collect();
    match (total.parse::<u64>(), scores) {
        (Ok(total), Some(scores)) => {
            Reply::Answer { id, at, total, ids: list(rest), scores, extra: extra.into() }
        }
        _ => Reply::Error { id, at, message: format!("unparsable line: {l}") },
    }
}
