//! The nine tools driven directly (no transport): write-back rules of protocol §16.4 (files
//! changed since the session opened, a session that already wrote, byte-order marks and line
//! endings, projects), `state` over MCP (§16.5), and the compile cache (§16.6).

mod common;

use std::path::Path;

use cairn_mcp::Server;
use common::{Scratch, call};
use serde_json::{Value, json};

const PROGRAM: &str = "// Doubles.\nfn double(x:u32) -> u32 {\n  return x * 2;\n}\n\nfn main() -> i32 {\n  if double(2) != 4 { return 1; }\n  return 0;\n}\n";

fn body(handle: &str, replacement: &str) -> Value {
    json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement}})
}

fn open(server: &mut Server, path: &str, symbol: &str) -> String {
    let (packet, error) = call(server, "edit_open", json!({"path": path, "symbol": symbol}));
    assert!(!error, "{}", Value::Object(packet));
    assert_eq!(packet["write_back"], path.rsplit('/').next().unwrap_or(path));
    packet["handle"].as_str().expect("handle").to_string()
}

#[test]
fn byte_order_marks_and_crlf_line_endings_are_kept() {
    let scratch = Scratch::new("tools-crlf");
    let text = format!("\u{feff}{}", PROGRAM.replace('\n', "\r\n"));
    std::fs::write(scratch.0.join("p.cairn"), &text).expect("write");
    let mut server = Server::new(&scratch.0);
    let handle = open(&mut server, "p.cairn", "double");
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{\n  let y = x;\n  return y * 2;\n}"));
    assert!(!error, "{}", Value::Object(answer));
    assert_eq!(answer["written"], json!(["p.cairn"]));
    let bytes = std::fs::read(scratch.0.join("p.cairn")).expect("read");
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "the byte-order mark stays");
    let written = String::from_utf8(bytes[3..].to_vec()).expect("utf-8");
    assert!(
        written.contains("{\r\n  let y = x;\r\n  return y * 2;\r\n}"),
        "new lines end as most lines do: {written:?}"
    );
    assert_eq!(written.matches('\n').count(), written.matches("\r\n").count(), "no bare LF anywhere");
}

#[test]
fn lf_files_stay_lf_and_a_crlf_reply_is_normalized() {
    let scratch = Scratch::new("tools-lf");
    std::fs::write(scratch.0.join("p.cairn"), PROGRAM).expect("write");
    let mut server = Server::new(&scratch.0);
    let handle = open(&mut server, "p.cairn", "double");
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{\r\n  return x + x;\r\n}"));
    assert!(!error, "{}", Value::Object(answer));
    let written = std::fs::read_to_string(scratch.0.join("p.cairn")).expect("read");
    assert!(!written.contains('\r'));
    assert!(written.contains("{\n  return x + x;\n}"));
}

#[test]
fn a_file_saved_since_the_open_refuses_the_write_and_stays() {
    let scratch = Scratch::new("tools-saved");
    std::fs::write(scratch.0.join("p.cairn"), PROGRAM).expect("write");
    let mut server = Server::new(&scratch.0);
    let handle = open(&mut server, "p.cairn", "double");
    let saved = PROGRAM.replace("// Doubles.", "// Doubles its argument.");
    std::fs::write(scratch.0.join("p.cairn"), &saved).expect("save");
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{ return x + x; }"));
    assert!(error);
    assert_eq!((answer["code"].as_str(), &answer["files"]), (Some("E-SESSION"), &json!(["p.cairn"])));
    assert_eq!(std::fs::read_to_string(scratch.0.join("p.cairn")).expect("read"), saved);
    // A request that writes nothing is still answered.
    let (state, error) = call(
        &mut server,
        "edit_request",
        json!({"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "state"}}),
    );
    assert!(!error, "{}", Value::Object(state));
}

#[test]
fn a_session_writes_once() {
    let scratch = Scratch::new("tools-once");
    std::fs::write(scratch.0.join("p.cairn"), PROGRAM).expect("write");
    let mut server = Server::new(&scratch.0);
    let handle = open(&mut server, "p.cairn", "double");
    let (_, error) = call(&mut server, "edit_request", body(&handle, "{ return x + x; }"));
    assert!(!error);
    let after = std::fs::read_to_string(scratch.0.join("p.cairn")).expect("read");
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{ return x * 2; }"));
    assert!(error);
    assert_eq!((answer["code"].as_str(), &answer["files"]), (Some("E-SESSION"), &json!(["p.cairn"])));
    assert_eq!(std::fs::read_to_string(scratch.0.join("p.cairn")).expect("read"), after);
    // A new session on the files as they are now writes again, from the advanced compile.
    let (check, _) = call(&mut server, "check", json!({"path": "p.cairn"}));
    assert_eq!(check["cached"], true, "the admitted edit's compile serves the new text");
    let handle = open(&mut server, "p.cairn", "double");
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{\n  return x * 2;\n}"));
    assert!(!error, "{}", Value::Object(answer));
    assert_eq!(std::fs::read_to_string(scratch.0.join("p.cairn")).expect("read"), PROGRAM);
}

#[test]
fn a_source_session_never_writes() {
    let scratch = Scratch::new("tools-source");
    let mut server = Server::new(&scratch.0);
    let (packet, error) = call(&mut server, "edit_open", json!({"source": PROGRAM, "symbol": "double"}));
    assert!(!error);
    assert!(packet.get("write_back").is_none());
    let (answer, error) = call(&mut server, "edit_request", body("e1", "{ return x + x; }"));
    assert!(!error);
    assert!(answer.get("written").is_none());
    assert_eq!(std::fs::read_dir(&scratch.0).expect("dir").count(), 0, "nothing was written anywhere");
}

fn project(root: &Path) {
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(
        root.join("cairn.toml"),
        "[project]\nname = \"twice\"\nsources = [\"src/lib.cairn\", \"src/main.cairn\"]\n",
    )
    .expect("manifest");
    std::fs::write(
        root.join("src/lib.cairn"),
        "module twice.lib;\n\npub fn double(x:u32) -> u32 {\n  return x * 2;\n}\n",
    )
    .expect("lib");
    std::fs::write(root.join("src/main.cairn"), "module twice.app;\nimport twice.lib as lib;\n\npub fn main() -> i32 {\n  if lib.double(2) != 4 { return 1; }\n  return 0;\n}\n").expect("main");
}

#[test]
fn a_project_writes_the_function_s_file_and_watches_the_manifest() {
    let scratch = Scratch::new("tools-project");
    project(&scratch.0);
    let mut server = Server::new(&scratch.0);
    let (packet, error) = call(&mut server, "edit_open", json!({"path": ".", "symbol": "twice.lib.double"}));
    assert!(!error, "{}", Value::Object(packet));
    assert_eq!(packet["write_back"], "src/lib.cairn");
    let (answer, error) = call(&mut server, "edit_request", body("e1", "{ return x + x; }"));
    assert!(!error, "{}", Value::Object(answer));
    assert_eq!(answer["written"], json!(["src/lib.cairn"]));
    assert!(std::fs::read_to_string(scratch.0.join("src/lib.cairn")).expect("read").contains("return x + x;"));
    // The manifest is pinned too.
    let (_, error) = call(&mut server, "edit_open", json!({"path": ".", "symbol": "twice.lib.double"}));
    assert!(!error);
    std::fs::write(
        scratch.0.join("cairn.toml"),
        "[project]\nname = \"twice\"\nsources = [\"src/lib.cairn\", \"src/main.cairn\"]\n# saved\n",
    )
    .expect("save");
    let (answer, error) = call(&mut server, "edit_request", body("e2", "{ return x * 2; }"));
    assert!(error);
    assert_eq!(answer["files"], json!(["(manifest)"]));
    // A reply may not add a `// source:` separator to a project's file (protocol §16.4 rule 7).
    let (_, error) = call(&mut server, "edit_open", json!({"path": ".", "symbol": "twice.lib.double"}));
    assert!(!error);
    let before = std::fs::read_to_string(scratch.0.join("src/lib.cairn")).expect("read");
    let (answer, error) =
        call(&mut server, "edit_request", body("e3", "{\n  // source: src/main.cairn\n  return x * 2;\n}"));
    assert!(error);
    assert_eq!(answer["code"], "E-PROJECT-OR-ENVIRONMENT");
    assert_eq!(std::fs::read_to_string(scratch.0.join("src/lib.cairn")).expect("read"), before);
    // The same project named two ways is one program for implicit deltas.
    let (first, _) = call(&mut server, "state", json!({"path": "."}));
    assert_eq!(first["protocol"], "cairn.state/1");
    let (second, _) = call(&mut server, "state", json!({"path": "cairn.toml"}));
    assert_eq!(second["protocol"], "cairn.state-delta/1");
}

#[test]
fn state_over_mcp_answers_deltas_per_path() {
    let scratch = Scratch::new("tools-state");
    std::fs::write(scratch.0.join("p.cairn"), PROGRAM).expect("write");
    let mut server = Server::new(&scratch.0);
    let (first, error) = call(&mut server, "state", json!({"path": "p.cairn"}));
    assert!(!error);
    assert_eq!(first["protocol"], "cairn.state/1");
    let (second, _) = call(&mut server, "state", json!({"path": "p.cairn"}));
    assert_eq!(second["protocol"], "cairn.state-delta/1", "an implicit delta for the same path");
    let (whole, _) = call(&mut server, "state", json!({"path": "p.cairn", "whole": true}));
    assert_eq!(whole["protocol"], "cairn.state/1");
    let (by_source, _) = call(&mut server, "state", json!({"source": PROGRAM}));
    let (again, _) = call(&mut server, "state", json!({"source": PROGRAM}));
    assert_eq!(
        (by_source["protocol"].as_str(), again["protocol"].as_str()),
        (Some("cairn.state/1"), Some("cairn.state/1")),
        "no implicit delta for source"
    );
    let (delta, _) = call(&mut server, "state", json!({"source": PROGRAM, "since": first["digest"]}));
    assert_eq!(delta["protocol"], "cairn.state-delta/1");
    for (arguments, code) in [
        (json!({"path": "p.cairn", "whole": true, "since": first["digest"]}), "E-REQUEST"),
        (json!({"path": "p.cairn", "whole": "yes"}), "E-REQUEST"),
        (json!({"path": "p.cairn", "since": "f".repeat(64)}), "E-SESSION"),
        (json!({"source": PROGRAM, "symbol": "double"}), "E-REQUEST"),
        (json!({}), "E-REQUEST"),
        (json!({"path": ""}), "E-REQUEST"),
    ] {
        let (answer, error) = call(&mut server, "state", arguments.clone());
        assert!(error, "{arguments}");
        assert_eq!(answer["code"], code, "{arguments}");
    }
    let (refused, error) = call(&mut server, "state", json!({"source": "fn f() -> u32 { return true; }"}));
    assert!(error, "a state whose status is not typed is an error");
    assert_eq!(refused["status"], "rejected");
}

#[test]
fn unknown_tools_and_non_object_arguments_are_protocol_errors() {
    let scratch = Scratch::new("tools-errors");
    let mut server = Server::new(&scratch.0);
    assert_eq!(server.call("compile", &json!({})).err().map(|e| e.0), Some(-32602));
    assert_eq!(server.call("check", &json!("p.cairn")).err().map(|e| e.0), Some(-32602));
    let (answer, error) = call(&mut server, "edit_open", json!({"source": PROGRAM}));
    assert!(error && answer["code"] == "E-REQUEST", "symbol is required");
}

/// A method of a trait's impl is a function an edit session takes, named as `state` names it
/// (`Area.Rect.area`, protocol §7): its packet, an admitted body written into the impl, and its
/// callers' packets listing it among their dependencies and the trait and impl among their types. A method of a generic impl is a
/// template: `E-EDIT-PROFILE`.
#[test]
fn a_trait_impl_method_is_an_edit_target() {
    let scratch = Scratch::new("tools-impl-method");
    let program = "trait Area { fn area(s:ro<Self>) -> u64; }\nstruct Rect { w:u64; h:u64; }\nstruct Pair[T:copy] { a:T; b:T; }\nimpl Area for Rect {\n  fn area(s:ro<Rect>) -> u64 { return s.w * s.h; }\n}\nimpl[T:copy] Area for Pair[T] {\n  fn area(s:ro<Pair[T]>) -> u64 { return 2; }\n}\nfn total(r:Rect) -> u64 = r.area();\nfn main() -> i32 {\n  if total(Rect(2, 3)) != 6 { return 1; }\n  return 0;\n}\n";
    std::fs::write(scratch.0.join("p.cairn"), program).expect("write");
    let mut server = Server::new(&scratch.0);
    let (state, _) = call(&mut server, "state", json!({"path": "p.cairn"}));
    assert!(state["modules"][""].get("Area.Rect.area").is_some(), "{}", Value::Object(state.clone()));
    // A generic impl's method shows as written (its parameter by name, not by index).
    assert_eq!(
        state["modules"][""]["Area.Pair[T].area"][0],
        "fn area(s:ro<Pair[T]>) -> u64",
        "{}",
        Value::Object(state.clone())
    );
    let handle = open(&mut server, "p.cairn", "Area.Rect.area");
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{ return s.h * s.w; }"));
    assert!(!error, "{}", Value::Object(answer));
    assert_eq!(answer["written"], json!(["p.cairn"]));
    let written = std::fs::read_to_string(scratch.0.join("p.cairn")).expect("read");
    assert!(
        written.contains("impl Area for Rect {\n  fn area(s:ro<Rect>) -> u64 { return s.h * s.w; }\n}"),
        "{written}"
    );
    let (packet, error) = call(&mut server, "edit_open", json!({"path": "p.cairn", "symbol": "total"}));
    assert!(!error, "{}", Value::Object(packet));
    assert!(packet["dependencies"].get("Area.Rect.area").is_some(), "{}", Value::Object(packet.clone()));
    // The trait and the impl it dispatches through are among its types.
    let types = packet["types"].as_str().unwrap_or_default();
    assert!(
        types.lines().any(|l| l.starts_with("trait Area {")) && types.lines().any(|l| l == "impl Area for Rect"),
        "{types}"
    );
    // A component session over a caller holds the method too: a reply calling it is admitted.
    let (component, error) =
        call(&mut server, "edit_open", json!({"path": "p.cairn", "symbol": "total", "scope": "component"}));
    assert!(!error, "{}", Value::Object(component));
    let handle = component["handle"].as_str().expect("handle").to_string();
    let (answer, error) = call(&mut server, "edit_request", body(&handle, "{ return r.area() + 0; }"));
    assert!(!error, "{}", Value::Object(answer));
    let (refused, error) = call(&mut server, "edit_open", json!({"path": "p.cairn", "symbol": "Area.Pair[T].area"}));
    assert!(error);
    assert_eq!(refused["code"], "E-EDIT-PROFILE", "{}", Value::Object(refused.clone()));
}
