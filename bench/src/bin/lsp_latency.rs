//! `cairn lsp` latency as an editor sees it: from sending a one-body `didChange` to receiving the
//! `publishDiagnostics` for that version, on a generated program (default 22,000 lines), over the
//! real server's standard input and output.
//!
//! Each edit inserts a pure statement at the top of a random function body (an incremental range
//! edit, as an editor sends while typing), and the next edit of that function removes it again,
//! so the program stays accepted. Also reported: the first diagnostics after `didOpen` (the whole
//! program checked), and hover on a function (row and guard sites) after an edit.
//!
//! `cargo build --release -p cairn_cli && cargo run --release -p cairn_bench --bin lsp_latency --
//! [--lines N] [--edits N] [--json]`

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use cairn_testgen::{Config, Rng};
use serde_json::{Value, json};

struct Lsp {
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    id: u64,
}

impl Lsp {
    fn send(&mut self, value: &Value) {
        let body = value.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.input.flush().expect("flush");
    }

    fn read(&mut self) -> Value {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            self.output.read_line(&mut line).expect("header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = value.parse().expect("length");
            }
        }
        let mut body = vec![0u8; length];
        self.output.read_exact(&mut body).expect("body");
        serde_json::from_slice(&body).expect("json")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.read();
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Waits for the diagnostics of `version`.
    fn diagnostics(&mut self, version: i64) -> Value {
        loop {
            let message = self.read();
            if message["method"] == "textDocument/publishDiagnostics" && message["params"]["version"] == json!(version)
            {
                return message;
            }
        }
    }
}

fn main() {
    let mut lines = 22_000usize;
    let mut edits = 1_000usize;
    let mut json_out = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lines" => lines = args.next().and_then(|v| v.parse().ok()).expect("--lines N"),
            "--edits" => edits = args.next().and_then(|v| v.parse().ok()).expect("--edits N"),
            "--json" => json_out = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let binary = std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("cairn"))).expect("binary dir");
    assert!(binary.exists(), "build the server first: cargo build --release -p cairn_cli");
    let mut text = cairn_testgen::program(Config::with_lines(1, lines));
    let dir = std::env::temp_dir().join(format!("cairn-bench-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("big.cairn");
    std::fs::write(&path, &text).expect("write");
    let uri = format!("file://{}", path.display());

    let mut child = Command::new(&binary)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cairn lsp");
    let mut lsp = Lsp {
        input: child.stdin.take().expect("stdin"),
        output: BufReader::new(child.stdout.take().expect("stdout")),
        id: 0,
    };
    lsp.request("initialize", json!({"capabilities": {}}));
    lsp.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let start = Instant::now();
    lsp.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "cairn", "version": 1, "text": text}}}));
    let first = lsp.diagnostics(1);
    let open_time = start.elapsed();
    assert_eq!(first["params"]["diagnostics"], json!([]), "the generated program is accepted");

    // Body openings: the line after each `fn ... {` line.
    let bodies: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("fn ") && l.trim_end().ends_with('{') && !l.starts_with("fn main"))
        .map(|(i, _)| i + 1)
        .collect();
    let mut inserted: Vec<bool> = vec![false; bodies.len()];
    let mut rng = Rng::new(7);
    let mut times = Vec::with_capacity(edits);
    let mut hovers = Vec::new();
    let statement = "  let zz_bench:u64 = 7;\n";
    for version in 2..(edits as i64 + 2) {
        let k = rng.below(bodies.len() as u64) as usize;
        // Lines shift as statements come and go: count the insertions above.
        let line = bodies[k] + bodies[..k].iter().zip(&inserted).filter(|(_, on)| **on).count();
        let change = if inserted[k] {
            json!({"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}, "text": ""})
        } else {
            json!({"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": statement})
        };
        inserted[k] = !inserted[k];
        let start = Instant::now();
        lsp.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}}));
        let published = lsp.diagnostics(version);
        times.push(start.elapsed());
        assert_eq!(published["params"]["diagnostics"], json!([]), "edit {version} keeps the program accepted");
        if version % 25 == 0 {
            let start = Instant::now();
            let declaration = bodies[k] - 1 + bodies[..k].iter().zip(&inserted).filter(|(_, on)| **on).count();
            let hover = lsp.request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": declaration, "character": 4}}),
            );
            hovers.push(start.elapsed());
            assert!(hover["result"]["contents"]["value"].as_str().is_some_and(|v| v.contains("effects")), "{hover}");
        }
    }
    lsp.request("shutdown", Value::Null);
    lsp.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    text.clear();

    let stats = |samples: &[Duration]| {
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms.get(((ms.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0);
        json!({"n": ms.len(), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)})
    };
    let report = json!({
        "lines": lines,
        "open_to_diagnostics_ms": open_time.as_secs_f64() * 1000.0,
        "change_to_diagnostics": stats(&times),
        "hover_after_edit": stats(&hovers),
    });
    if json_out {
        println!("{report}");
    } else {
        println!("program: generated, {lines} lines requested");
        println!(
            "  didOpen -> publishDiagnostics (whole check): {:.1} ms",
            report["open_to_diagnostics_ms"].as_f64().unwrap_or(0.0)
        );
        let line = |name: &str, v: &Value| {
            println!(
                "  {name:<40} p50 {:>7.3} ms   p99 {:>7.3} ms   (n={})",
                v["p50_ms"].as_f64().unwrap_or(0.0),
                v["p99_ms"].as_f64().unwrap_or(0.0),
                v["n"]
            )
        };
        line("didChange -> publishDiagnostics", &report["change_to_diagnostics"]);
        line("hover on a function after an edit", &report["hover_after_edit"]);
    }
}
