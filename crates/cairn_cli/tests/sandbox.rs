//! Confined runs (issue 18, docs/sandbox.md): programs that try to escape — through the C
//! library, as agent-written code could — are contained and reported, and the project tree is
//! byte-identical afterwards. Each attempt runs with `cairn run --sandbox`; bubblewrap comes from
//! scripts/setup.sh, and a run that was not sandboxed fails these tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-sandbox-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// Every file under `dir` with its bytes (what "byte-identical" compares).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read the tree").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
                out.insert(path, Vec::new());
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// Runs `source` confined from a project of its own; the record, and the tree checked unchanged.
fn confined(name: &str, source: &str, timeout: &str) -> serde_json::Value {
    let dir = scratch(name);
    std::fs::write(dir.join("main.cairn"), source).expect("write");
    let before = tree(&dir);
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--sandbox", "--format", "json", "--timeout", timeout, "main.cairn"])
        .current_dir(&dir)
        .output()
        .expect("run cairn");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no record: {}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(tree(&dir), before, "{name}: the tree is byte-identical afterwards");
    assert_eq!(
        record["sandbox"]["sandboxed"], true,
        "{name}: bubblewrap ran it (scripts/setup.sh installs it): {record}"
    );
    std::fs::remove_dir_all(&dir).ok();
    record
}

fn stdout(record: &serde_json::Value) -> &str {
    record["stdout"].as_str().unwrap_or_default()
}

const LIBC: &str = r#"extern "open" fn c_open(path:ro<u8>[n], flags:i32, mode:u32) -> i32 effects(io);
extern "write" fn c_write(fd:i32, buf:ro<u8>[n], n:usize) -> i64 effects(io);
extern "read" fn c_read(fd:i32, buf:rw<u8>[n], n:usize) -> i64 effects(io);
extern "close" fn c_close(fd:i32) -> i32 effects(io);
"#;

#[test]
fn writing_or_reading_outside_the_workspace_finds_nothing_there() {
    // A file beside the project the program must not read, and a place it must not write.
    let secret = std::env::temp_dir().join(format!("cairn-sandbox-secret-{}", std::process::id()));
    std::fs::write(&secret, "the secret").expect("write");
    // The project's own directory, by its absolute path (the tree check catches a write there).
    let outside = std::env::temp_dir().join(format!("cairn-sandbox-files-{}", std::process::id())).join("escaped.txt");
    let source = format!(
        "{LIBC}
fn main() -> i32 {{
  unsafe {{
    let w = c_open(\"{outside}\\0\", 65, 420);
    println(\"write outside: \", w);
    let r = c_open(\"{secret}\\0\", 0, 0);
    println(\"read outside: \", r);
    let h = c_open(\"/root/cairn-escaped.txt\\0\", 65, 420);
    println(\"write home: \", h);
    let mine = c_open(\"mine.txt\\0\", 65, 420);
    if mine >= 0 {{ let _ = c_write(mine, \"kept? no\", 8); let _ = c_close(mine); }}
    println(\"own file: \", mine >= 0);
  }}
  return 0;
}}
",
        outside = outside.display(),
        secret = secret.display()
    );
    let record = confined("files", &source, "30");
    assert_eq!(record["status"], "program-exited", "{record}");
    let out = stdout(&record);
    assert!(out.contains("write outside: -1"), "{out}");
    assert!(out.contains("read outside: -1"), "{out}");
    assert!(out.contains("write home: -1"), "{out}");
    assert!(!Path::new("/root/cairn-escaped.txt").exists());
    assert!(!outside.exists(), "nothing was written outside");
    // Its own workspace is writable; what it wrote is reported, not applied.
    assert!(out.contains("own file: true"), "{out}");
    assert_eq!(record["sandbox"]["changeset"]["added"], serde_json::json!(["mine.txt"]), "{record}");
    std::fs::remove_file(&secret).ok();
}

#[test]
fn a_local_port_cannot_be_reached() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("an address").port();
    let source = format!(
        "extern \"socket\" fn c_socket(domain:i32, kind:i32, protocol:i32) -> i32 effects(io);
extern \"connect\" fn c_connect(fd:i32, address:ro<u8>[n], n:u32) -> i32 effects(io);
fn main() -> i32 {{
  stack address:u8[16] = zeroed;
  address[0] = 2;
  address[2] = {high};
  address[3] = {low};
  address[4] = 127;
  address[7] = 1;
  unsafe {{
    let fd = c_socket(2, 1, 0);
    println(\"socket: \", fd >= 0);
    let c = c_connect(fd, address, 16);
    println(\"connect: \", c);
  }}
  return 0;
}}
",
        high = port >> 8,
        low = port & 0xff
    );
    let record = confined("network", &source, "30");
    assert!(stdout(&record).contains("connect: -1"), "{record}");
    assert!(listener.accept().is_err(), "no connection reached the listener");
}

#[test]
fn a_fork_bomb_meets_the_process_limit_and_ends() {
    let source = "extern \"fork\" fn c_fork() -> i32 effects(io);
fn main() -> i32 {
  let mut made:u64 = 0;
  unsafe {
    while true {
      let p = c_fork();
      if p < 0 { break; }
      made = made + 1;
    }
  }
  return 0;
}
";
    let record = confined("fork", source, "20");
    // It ended — by the limit on processes, not by running out the clock.
    assert_eq!(record["status"], "program-exited", "{record}");
    assert_eq!(record["sandbox"]["limits"]["processes"], 64);
    // Children that stay alive: at most the limit exist at once (the toolchain itself may run as
    // root, whose processes the kernel exempts; the sandbox runs as `nobody` then).
    let alive = "extern \"fork\" fn c_fork() -> i32 effects(io);
extern \"sleep\" fn c_sleep(s:u32) -> u32 effects(io);
fn main() -> i32 {
  let mut made:u32 = 0;
  unsafe {
    while made < 200 {
      let p = c_fork();
      if p < 0 { break; }
      if p == 0 { let _ = c_sleep(2); return 0; }
      made = made + 1;
    }
  }
  println(\"made \", made);
  return 0;
}
";
    let record = confined("alive", alive, "20");
    let made: u32 = stdout(&record).trim().trim_start_matches("made ").parse().expect("a count");
    assert!(made < 64, "{made} processes at once: {record}");
}

#[test]
fn a_log_flood_is_stopped_at_the_cap() {
    let source = "fn main() -> i32 {
  while true { println(\"flood flood flood flood flood flood flood flood flood flood flood flood\"); }
  return 0;
}
";
    let record = confined("flood", source, "60");
    assert_eq!(record["status"], "program-stopped", "{record}");
    assert!(record["sandbox"]["stopped"].as_str().is_some_and(|s| s.contains("bytes")), "{record}");
    assert_eq!(record["stdout"].as_str().map(str::len), Some(16 << 20), "the first 16 MiB are kept");
}

#[test]
fn a_disk_fill_meets_the_file_size_limit_and_the_workspace_cap() {
    // One file past the 64 MiB a file may have: the kernel refuses (SIGXFSZ or a short write).
    // Then files of 48 MiB each, past the workspace's 256 MiB: the watch stops it.
    let source = format!(
        "{LIBC}
fn main() -> i32 {{
  buffer chunk:u8[1048576] = zeroed;
  stack name:u8[8] = zeroed;
  name[0] = 102;
  let mut files:u32 = 0;
  unsafe {{
    while files < 40 {{
      name[1] = u8(48 + files % 10);
      name[2] = u8(48 + files / 10);
      let fd = c_open(name, 65, 420);
      if fd < 0 {{ println(\"open failed\"); return 1; }}
      let mut k:u32 = 0;
      while k < 48 {{ let _ = c_write(fd, chunk, 1048576); k = k + 1; }}
      let _ = c_close(fd);
      files = files + 1;
    }}
  }}
  println(\"filled \", files);
  return 0;
}}
"
    );
    let record = confined("disk", &source, "120");
    assert!(!stdout(&record).contains("filled 40"), "the workspace cap stopped it: {record}");
    assert_eq!(record["status"], "program-stopped", "{record}");
    assert!(record["sandbox"]["stopped"].as_str().is_some_and(|s| s.contains("MiB")), "{record}");
    let big = source.replace("while k < 48", "while k < 80").replace("while files < 40", "while files < 1");
    let record = confined("file", &big, "60");
    assert_ne!(record["exit_code"], 0, "a 80 MiB file is past the limit: {record}");
}

#[test]
fn an_infinite_loop_is_stopped_at_the_deadline() {
    let source = "fn main() -> i32 {
  let mut k:u64 = 0;
  while true { k = add_wrap(k, 1); }
  return 0;
}
";
    let record = confined("loop", source, "5");
    assert_eq!(record["status"], "program-stopped", "{record}");
}

#[test]
fn a_huge_allocation_is_refused() {
    let source = "extern \"malloc\" fn c_malloc(size:usize) -> u64 effects(io);
fn main() -> i32 {
  unsafe {
    let p = c_malloc(107374182400);
    println(\"pointer \", p);
  }
  return 0;
}
";
    let record = confined("memory", source, "30");
    assert!(stdout(&record).contains("pointer 0"), "100 GiB is past the address-space limit: {record}");
}

#[test]
fn test_blocks_run_confined_in_a_copy_of_the_project() {
    let dir = scratch("blocks");
    std::fs::create_dir_all(dir.join("src")).expect("src");
    std::fs::write(
        dir.join("cairn.toml"),
        "[project]\nname = \"blocks\"\nsources = [\"src/main.cairn\"]\n\n[build]\nkind = \"exe\"\n",
    )
    .expect("manifest");
    std::fs::write(dir.join("data.txt"), "12345").expect("data");
    let source = format!(
        "{LIBC}
fn main() -> i32 {{ return 0; }}

test reads_its_project_and_writes_a_file {{
  stack bytes:u8[8] = zeroed;
  unsafe {{
    let fd = c_open(\"data.txt\\0\", 0, 0);
    assert(fd >= 0);
    let n = c_read(fd, bytes, 8);
    assert(n == 5);
    let _ = c_close(fd);
    let out = c_open(\"out.txt\\0\", 65, 420);
    assert(out >= 0);
    let _ = c_write(out, \"written\", 7);
    let _ = c_close(out);
    let gone = c_open(\"/root/x\\0\", 65, 420);
    assert(gone < 0);
  }}
}}
"
    );
    std::fs::write(dir.join("src/main.cairn"), source).expect("write");
    let before = tree(&dir);
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["test", "--sandbox", "--format", "json", "."])
        .current_dir(&dir)
        .output()
        .expect("run cairn");
    let record: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no record: {}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(output.status.code(), Some(0), "{record}");
    assert_eq!(record["security_sandbox"], true, "{record}");
    let test = &record["blocks"]["tests"][0];
    assert_eq!(test["status"], "passed", "{record}");
    assert_eq!(test["sandbox"]["changeset"]["added"], serde_json::json!(["out.txt"]), "{record}");
    assert_eq!(tree(&dir), before, "the project is byte-identical: no build directory, no out.txt");
    std::fs::remove_dir_all(&dir).ok();
}
