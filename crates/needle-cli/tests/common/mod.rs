//! What the tests that run `needle serve` share.

#[allow(dead_code)] // Not every test starts a cluster.
pub mod cluster;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// Starts `needle serve` on a free port with `args` added; its stderr is drained by a thread.
#[allow(dead_code)] // Not every test starts a server on a free port.
pub fn serve(data: &std::path::Path, args: &[&str]) -> (Child, SocketAddr) {
    serve_at(data, "127.0.0.1:0", args)
}

/// [`serve`] bound to `bind`.
pub fn serve_at(data: &std::path::Path, bind: &str, args: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["serve", "--bind", bind, "--data"])
        .arg(data)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    let addr = loop {
        let Some(line) = lines.next() else { panic!("needle serve never said where it listens: {said:?}") };
        let line = line.unwrap();
        said.push(line.clone());
        if let Some(at) = line.find("on http://") {
            let rest = &line[at + "on http://".len()..];
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr)
}
