//! The edit host's latency as an agent sees it, and the size of what it reads.
//!
//! 1. Client-measured over the real server: `target/release/cairn mcp` is started in a
//!    temporary directory holding a generated program (default 22,000 lines); each request is
//!    timed from writing its line to reading its answer. Two loops of N iterations each:
//!    - *path*: `edit_open` on the file (a different function each time), then an admitted
//!      `edit_request` (its own body with one pure `let` added), which the server writes back —
//!      so every open reads a file the previous edit changed, as an agent's loop does;
//!    - *source*: one `edit_open` with the text as `source`, then N admitted body edits in that
//!      session (nothing is written).
//!
//!    After the path loop the server's resident memory (now and at its peak) is read from
//!    `/proc`: issue 22 asks for at most 64 MiB on a 10,000-line project after 200 edits.
//! 2. The same host in process (`cairn_agent::edit::EditHost`), without transport or JSON, as
//!    the baseline that shows what the wire costs.
//! 3. Packet sizes over 30 scripted edits of the examples: each step opens a focused and a
//!    component session on the next function and sends an admitted edit; sizes in bytes and
//!    tokens (bytes / 4), for a fresh host (cards and terms included) and for a host that sent
//!    them already.
//!
//! `cargo build --release -p cairn_cli && cargo run --release -p cairn_bench --bin edit_host --
//! [--lines N] [--edits N] [--json]`

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use cairn_agent::edit::{EditHost, OpenRequest, SourceText, Sources};
use cairn_bench::percentiles;
use cairn_testgen::Config;
use serde_json::{Value, json};

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
    let text = cairn_testgen::program(Config::with_lines(1, lines));
    let targets = targets(&text);
    assert!(targets.len() >= edits, "{} editable functions, fewer than {edits}", targets.len());

    let dir = std::env::temp_dir().join(format!("cairn-bench-edit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path_loop = client_path_loop(&binary, &dir, &text, &targets[..edits]);
    let source_loop = client_source_loop(&binary, &dir, &text, &targets[0], edits);
    let in_process = in_process_loop(&text, &targets[..edits]);
    let _ = std::fs::remove_dir_all(&dir);
    let sizes = packet_sizes();
    let generated_sizes = packet_sizes_over(vec![Sources::single("big.cairn", text.clone())]);

    let report = json!({
        "program": {"lines": text.lines().count(), "bytes": text.len(), "functions_edited": edits},
        "client_path": {
            "edit_open": percentiles(&path_loop.0),
            "edit_request_admitted_and_written": percentiles(&path_loop.1),
            "server_rss_mib_after": path_loop.2.0,
            "server_peak_rss_mib": path_loop.2.1,
        },
        "client_source": {"edit_open": percentiles(&source_loop.0), "edit_request_admitted": percentiles(&source_loop.1)},
        "in_process": {"open": percentiles(&in_process.0), "admitted_body": percentiles(&in_process.1)},
        "packets": sizes,
        "packets_generated": generated_sizes,
    });
    if json_out {
        println!("{report}");
        return;
    }
    println!("program: {} lines, {} bytes; {edits} functions edited", report["program"]["lines"], text.len());
    let line = |name: &str, v: &Value| {
        println!(
            "  {name:<44} p50 {:>7.3} ms   p99 {:>7.3} ms   (n={})",
            v["p50_ms"].as_f64().unwrap_or(0.0),
            v["p99_ms"].as_f64().unwrap_or(0.0),
            v["n"]
        )
    };
    println!("client-measured over `cairn mcp` (path sessions, written back):");
    line("edit_open", &report["client_path"]["edit_open"]);
    line("edit_request (admitted, written)", &report["client_path"]["edit_request_admitted_and_written"]);
    println!(
        "  server memory after the loop: {:.1} MiB resident, {:.1} MiB at its peak",
        report["client_path"]["server_rss_mib_after"].as_f64().unwrap_or(0.0),
        report["client_path"]["server_peak_rss_mib"].as_f64().unwrap_or(0.0)
    );
    println!("client-measured over `cairn mcp` (one source session):");
    line("edit_open (600 KB of source in the request)", &report["client_source"]["edit_open"]);
    line("edit_request (admitted)", &report["client_source"]["edit_request_admitted"]);
    println!("in process (EditHost, no transport):");
    line("open", &report["in_process"]["open"]);
    line("admitted body", &report["in_process"]["admitted_body"]);
    for (key, what) in [("packets", "the examples"), ("packets_generated", "the generated program")] {
        println!("packets over 30 scripted edits of {what} (bytes; tokens = bytes/4):");
        for (scope, v) in report[key].as_object().into_iter().flatten() {
            if scope == "focused_over_component" {
                println!(
                    "  focused / component bytes: mean of steps {:.3}, of totals {:.3} (the original: 0.257)",
                    v["mean_of_steps"].as_f64().unwrap_or(0.0),
                    v["of_totals"].as_f64().unwrap_or(0.0)
                );
                continue;
            }
            println!(
                "  {scope:<10} first packet {:>6} B ({:>5} tok)   later packets mean {:>6} B ({:>5} tok)   edit answers mean {:>4} B",
                v["first_bytes"],
                v["first_tokens"],
                v["later_mean_bytes"],
                v["later_mean_tokens"],
                v["answer_mean_bytes"]
            );
        }
    }
}

/// Each function with a block body, and its body with one pure statement added.
fn targets(text: &str) -> Vec<(String, String)> {
    cairn_bench::body_edits(text).into_iter().map(|t| (t.symbol, t.edited)).collect()
}

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    id: u64,
}

impl Server {
    fn start(binary: &Path, dir: &Path) -> Server {
        let mut child = Command::new(binary)
            .arg("mcp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cairn mcp");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Server { child, input, output, id: 0 };
        server.send("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        server
    }

    /// One request; its result and the client-measured time.
    fn send(&mut self, method: &str, params: Value) -> (Value, Duration) {
        self.id += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}).to_string();
        let start = Instant::now();
        writeln!(self.input, "{line}").expect("write");
        self.input.flush().expect("flush");
        let mut answer = String::new();
        self.output.read_line(&mut answer).expect("read");
        let elapsed = start.elapsed();
        let value: Value = serde_json::from_str(&answer).expect("an answer");
        (value["result"].clone(), elapsed)
    }

    /// A tool call: the record and whether it was an error.
    fn tool(&mut self, name: &str, arguments: Value) -> (Value, bool, Duration) {
        let (result, time) = self.send("tools/call", json!({"name": name, "arguments": arguments}));
        let record: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or("{}")).expect("record");
        (record, result["isError"].as_bool().unwrap_or(true), time)
    }
}

impl Server {
    /// The server process's resident memory now and at its peak, in MiB (`VmRSS`, `VmHWM`).
    fn memory_mib(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kb| kb.parse::<f64>().ok())
                .map_or(0.0, |kb| kb / 1024.0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client_path_loop(
    binary: &Path,
    dir: &Path,
    text: &str,
    targets: &[(String, String)],
) -> (Vec<Duration>, Vec<Duration>, (f64, f64)) {
    let file: PathBuf = dir.join("big.cairn");
    std::fs::write(&file, text).expect("write program");
    let mut server = Server::start(binary, dir);
    // The first compile is not what an agent waits for again and again.
    let (_, error, _) = server.tool("check", json!({"path": "big.cairn"}));
    assert!(!error);
    let (mut opens, mut edits) = (Vec::new(), Vec::new());
    for (symbol, replacement) in targets {
        let (packet, error, open_time) = server.tool("edit_open", json!({"path": "big.cairn", "symbol": symbol}));
        assert!(!error, "open {symbol}: {packet}");
        let handle = packet["handle"].as_str().expect("handle").to_string();
        let request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement});
        let (answer, error, edit_time) = server.tool("edit_request", json!({"request": request}));
        assert!(!error && answer["written"].is_array(), "edit of {symbol}: {answer}");
        opens.push(open_time);
        edits.push(edit_time);
    }
    // The settling of the last write has run once the next call is answered.
    let _ = server.tool("check", json!({"path": "big.cairn"}));
    (opens, edits, server.memory_mib())
}

fn client_source_loop(
    binary: &Path,
    dir: &Path,
    text: &str,
    target: &(String, String),
    edits: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut server = Server::start(binary, dir);
    let (_, error, _) = server.tool("check", json!({"source": text}));
    assert!(!error);
    let mut opens = Vec::new();
    let mut handle = String::new();
    for _ in 0..50 {
        let (packet, error, time) = server.tool("edit_open", json!({"source": text, "symbol": target.0}));
        assert!(!error);
        handle = packet["handle"].as_str().expect("handle").to_string();
        opens.push(time);
    }
    let mut times = Vec::new();
    for _ in 0..edits {
        let request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": target.1});
        let (answer, error, time) = server.tool("edit_request", json!({"request": request}));
        assert!(!error, "{answer}");
        times.push(time);
    }
    (opens, times)
}

fn in_process_loop(text: &str, targets: &[(String, String)]) -> (Vec<Duration>, Vec<Duration>) {
    let sources = Sources::single("big.cairn", text);
    let mut host = EditHost::new();
    let (_, refused, _) = host.check(sources.clone());
    assert!(!refused);
    let (mut opens, mut edits) = (Vec::new(), Vec::new());
    for (symbol, replacement) in targets {
        let start = Instant::now();
        let packet = host.open(sources.clone(), OpenRequest { symbol: symbol.clone(), ..OpenRequest::default() });
        opens.push(start.elapsed());
        assert!(!packet.refused);
        let handle = packet.record["handle"].as_str().expect("handle").to_string();
        let request = json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement});
        let start = Instant::now();
        let answer = host.request(&request);
        edits.push(start.elapsed());
        assert!(!answer.refused, "{}", Value::Object(answer.record));
    }
    (opens, edits)
}

/// Thirty scripted steps over the examples' functions: sizes of focused and component packets.
fn packet_sizes() -> Value {
    packet_sizes_over(example_programs())
}

/// The example programs the packet steps walk.
fn example_programs() -> Vec<Sources> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut programs: Vec<Sources> = Vec::new();
    for name in ["hello.cairn", "bits.cairn", "signals.cairn"] {
        programs.push(Sources::single(name, std::fs::read_to_string(root.join(name)).expect("example")));
    }
    let weather = root.join("weather");
    programs.push(Sources {
        files: ["src/units.cairn", "src/main.cairn"]
            .iter()
            .map(|n| SourceText { name: n.to_string(), text: std::fs::read_to_string(weather.join(n)).expect("file") })
            .collect(),
        project: true,
    });
    programs
}

/// Thirty scripted steps over the functions of `programs`, in order: each opens a focused and a
/// component session (each scope on a host of its own) and sends an admitted edit.
fn packet_sizes_over(programs: Vec<Sources>) -> Value {
    let mut steps: Vec<(usize, String, String)> = Vec::new();
    for (index, sources) in programs.iter().enumerate() {
        let mut workspace = cairn_hir::Workspace::new(sources.files.clone());
        workspace.check();
        for file in workspace.files().iter().filter(|f| !f.library) {
            for entry in file.items.iter().filter(|e| e.key.kind == cairn_hir::ItemKind::Fn) {
                let source = entry.item.syntax(workspace.db()).syntax_node().text().to_string();
                let body = match source.find('{') {
                    Some(open) if !source[..open].contains('=') => source[open..].trim_end().to_string(),
                    _ => format!("= {};", source.split_once('=').map_or("", |(_, e)| e.trim().trim_end_matches(';'))),
                };
                steps.push((index, workspace.full_name(entry.item).to_string(), body));
            }
        }
    }
    let mut out = serde_json::Map::new();
    let mut every: Vec<Vec<usize>> = Vec::new();
    for scope in ["focused", "component"] {
        let mut host = EditHost::new();
        let (mut first, mut later, mut answers, mut all) = (0usize, Vec::new(), Vec::new(), Vec::new());
        for step in 0..30 {
            let (program, symbol, body) = &steps[step % steps.len()];
            let packet = host.open(
                programs[*program].clone(),
                OpenRequest { symbol: symbol.clone(), scope: Some(scope.into()), ..OpenRequest::default() },
            );
            assert!(!packet.refused, "{symbol}: {}", Value::Object(packet.record));
            let bytes = Value::Object(packet.record.clone()).to_string().len();
            all.push(bytes);
            if step == 0 {
                first = bytes;
            } else {
                later.push(bytes);
            }
            let handle = packet.record["handle"].as_str().expect("handle");
            let answer = host
                .request(&json!({"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": body}));
            answers.push(Value::Object(answer.record).to_string().len());
        }
        let mean = |v: &[usize]| v.iter().sum::<usize>() / v.len().max(1);
        out.insert(
            scope.into(),
            json!({"first_bytes": first, "first_tokens": first / 4, "later_mean_bytes": mean(&later), "later_mean_tokens": mean(&later) / 4, "answer_mean_bytes": mean(&answers)}),
        );
        every.push(all);
    }
    // Focused over component bytes, step by step on the same target (the original measured 0.257
    // on its corpus), and over the thirty steps' totals.
    let steps = every[0].len().min(every[1].len());
    let per_step: f64 =
        (0..steps).map(|i| every[0][i] as f64 / every[1][i].max(1) as f64).sum::<f64>() / steps.max(1) as f64;
    let totals = every[0].iter().sum::<usize>() as f64 / every[1].iter().sum::<usize>().max(1) as f64;
    out.insert("focused_over_component".into(), json!({"mean_of_steps": per_step, "of_totals": totals}));
    Value::Object(out)
}
