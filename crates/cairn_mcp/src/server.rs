//! The rmcp handler: `initialize`, `ping`, `tools/list` and `tools/call` over the [`Server`]
//! of `tools.rs`.
//!
//! A tool call runs on a blocking thread with the server locked (the wire in front sends one
//! request at a time, so the lock never waits), and a panic inside it becomes a `-32603` error
//! while the server goes on (protocol §16.1).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value};

use crate::tools::Server;

/// The protocol versions served, newest first (protocol §16.1).
pub const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The rmcp face of the server.
#[derive(Clone)]
pub struct Handler {
    pub(crate) server: Arc<Mutex<Server>>,
    tools: Arc<Vec<Tool>>,
}

impl Handler {
    pub fn new(server: Server) -> Handler {
        Handler { server: Arc::new(Mutex::new(server)), tools: Arc::new(descriptors()) }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        let mut tools = rmcp::model::ToolsCapability::default();
        tools.list_changed = Some(false);
        capabilities.tools = Some(tools);
        let mut info = ServerConfig::new(capabilities);
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        let mut implementation = Implementation::default();
        implementation.name = "cairn".into();
        implementation.version = env!("CARGO_PKG_VERSION").into();
        implementation.title = None;
        implementation.description = None;
        implementation.icons = None;
        implementation.website_url = None;
        info.server_info = implementation;
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(vec![
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2025_03_26,
            ProtocolVersion::V_2024_11_05,
        ])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult { tools: self.tools.as_ref().clone(), ..ListToolsResult::default() })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self.server.clone();
        let settle = self.server.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let outcome = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut server = match server.lock() {
                    Ok(guard) => guard,
                    // A panic in an earlier call poisoned the lock; the state is still usable.
                    Err(poisoned) => poisoned.into_inner(),
                };
                server.call(&name, &arguments)
            }))
        })
        .await;
        // What the call left for later runs while the answer travels. A later call may take the
        // lock first: every host entry point settles the host first, and a checkpoint left for
        // later stays due until some settle runs; the tidy takes the program's own lock (a
        // write that gets it first leaves the tidy to the next one).
        tokio::task::spawn_blocking(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let tidy = match settle.lock() {
                    Ok(mut guard) => guard.settle(),
                    Err(poisoned) => poisoned.into_inner().settle(),
                };
                // Outside the server's lock: the next call need not wait for these syncs.
                tidy.run();
            }));
        });
        match outcome {
            Ok(Ok(Ok(result))) => {
                let text = serde_json::to_string(&Value::Object(result.record)).unwrap_or_else(|_| "{}".into());
                let mut answer = CallToolResult::success(vec![ContentBlock::text(text)]);
                answer.is_error = Some(result.is_error);
                Ok(CallToolResponse::Complete(answer))
            }
            Ok(Ok(Err((code, message)))) => Err(ErrorData::new(ErrorCode(code as i32), message, None)),
            Ok(Err(_)) | Err(_) => Err(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                "internal error in the cairn server while answering this call; the session goes on",
                None,
            )),
        }
    }
}

/// What the server tells an agent at `initialize`: what cairn is and the loop that uses it.
pub const INSTRUCTIONS: &str = "cairn checks CAIRN programs (.cairn files) and edits them for you: you never write a \
.cairn file yourself. The loop: `check` a program; `edit_open` the function to change (you get a packet: its source, \
its neighbours' interfaces, rule cards, a draft request); send `edit_request` with the new body in the draft; the \
whole program is re-checked and the edit is admitted (written back for a path) or refused with a code, its card, \
the rule and a repair hint. Fix and resend with the same handle. To speed a function up, `implementation_open` it \
and `implementation_submit` an alternative: it is validated against the original before it is kept. `state` shows the program as [signature, effect \
row] per function, `find` suggests functions to call. Cards and terms are sent once per server: keep them. A \
handle survives a server restart while the files are unchanged; a resent request is answered once, never applied \
twice.";

/// The tool descriptors offered, in `tools/list` order (protocol §16.2): each says what the tool
/// is for and what it returns, with a worked example of its arguments.
pub fn descriptors() -> Vec<Tool> {
    let text = |text: &str| -> Value { serde_json::json!({"type": "string", "description": text}) };
    let path = text("File, project dir or cairn.toml.");
    let source = text("Program text.");
    let symbol = text("A function (lib.spread).");
    let schema = |properties: Value, required: &[&str]| -> Map<String, Value> {
        let mut schema = Map::new();
        schema.insert("type".into(), Value::String("object".into()));
        schema.insert("properties".into(), properties);
        if !required.is_empty() {
            schema.insert("required".into(), serde_json::json!(required));
        }
        schema
    };
    let entries: Vec<(&str, &str, Map<String, Value>, bool)> = vec![
        (
            "check",
            "Check a whole program. Returns {status:\"typed\",functions,...} or the first refusal \
             {status:\"rejected\",code,message,file,line,card,repair_hint,further:[...]}. \
             Example: {\"path\":\"src/main.cairn\"}",
            schema(serde_json::json!({"path": path, "source": source}), &[]),
            true,
        ),
        (
            "edit_open",
            "Open an edit session on a function. Returns a packet: handle, context (its source), \
             dependencies, rule_cards, terms, draft_protocol (to fill). \
             Example: {\"path\":\"clip.cairn\",\"symbol\":\"clip\"}",
            schema(
                serde_json::json!({"path": path, "source": source, "symbol": symbol,
                    "scope": {"enum": ["focused", "component"]},
                    "site": {"type": "string", "description": "An expression site (x3)."},
                    "preserve": {"enum": ["equivalent", "identical"]}}),
                &["symbol"],
            ),
            true,
        ),
        (
            "edit_request",
            "Send one request of a session opened by edit_open (its handle); kind: body (new body), expr (a site), expand \
             (show more functions), state, delta. Returns the admission \
             {status:\"typed\",effects,written} or a refusal with code, card, rule, repair_hint. \
             Example: {\"request\":{\"protocol\":\"cairn.edit/2\",\"handle\":\"e1\",\"kind\":\"body\",\
             \"replacement\":\"{ return max(lo, min(v, hi)); }\"}}",
            schema(
                serde_json::json!({"request": {"type": "object", "description": "The packet's draft_protocol with replacement set."}}),
                &["request"],
            ),
            false,
        ),
        (
            "plan_open",
            "Choose how a function's parallel regions are split (never what they compute). Returns a \
             packet: session, items with ranges, current plan, reply. Example: {\"path\":\"clip.cairn\",\"symbol\":\"fill\"}",
            schema(serde_json::json!({"path": path, "source": source, "symbol": symbol}), &["symbol"]),
            false,
        ),
        (
            "plan_reply",
            "Send the packet's reply with items set (0: the runtime's choice). Returns {status:\"admitted\",plan,\
             next_session} or E-PLAN. Example: {\"reply\":{\"protocol\":\"cairn.plan/1\",\"session\":\"<from plan_open>\",\
             \"items\":{\"grain\":4096}}}",
            schema(serde_json::json!({"reply": {"type": "object"}}), &["reply"]),
            false,
        ),
        (
            "implementation_open",
            "Open a session to write a faster version of a function. Returns a packet: handle, reference \
             (source, effects), pinned policy, rule_cards, reply. Example: {\"path\":\"clip.cairn\",\"reference\":\"clip\"}",
            schema(
                serde_json::json!({"path": path, "source": source, "reference": symbol,
                    "policy": {"type": "object"}}),
                &["reference"],
            ),
            false,
        ),
        (
            "implementation_submit",
            "Submit `fn g(..) implements f when c {..}` (and helpers); g is checked and validated against f. \
             Returns {status:\"validated\",select_with} or a refusal (E-VALIDATION: failing inputs). \
             Example: {\"request\":{\"protocol\":\"cairn.implementation/1\",\"handle\":\"<from implementation_open>\",\"kind\":\"submit\",\
             \"source\":\"fn clip2(v:i32, lo:i32, hi:i32) -> i32 implements clip when lo <= hi { return max(lo, min(v, hi)); }\"}}",
            schema(
                serde_json::json!({"request": {"type": "object", "description": "The packet's reply with source set."}}),
                &["request"],
            ),
            false,
        ),
        (
            "state",
            "Show the program. Returns per module each function as [signature, effect row], with a \
             digest; with since, what changed. Example: {\"path\":\"clip.cairn\"}",
            schema(
                serde_json::json!({"path": path, "source": source, "symbol": symbol,
                    "since": {"type": "string"},
                    "whole": {"type": "boolean"}}),
                &[],
            ),
            true,
        ),
        (
            "find",
            "Suggest functions to call, from words or types. Returns {hits:[\"signature  effects\"],more}. \
             Example: {\"path\":\"clip.cairn\",\"words\":\"limit range\",\"returns\":\"i32\"}",
            schema(
                serde_json::json!({"path": path, "source": source,
                    "words": {"type": "string"},
                    "takes": {"type": "array", "items": {"type": "string"}, "description": "Types held, e.g. ro<u8>[n]."},
                    "returns": {"type": "string"},
                    "effects": {"type": "string", "description": "A ceiling, e.g. pure."},
                    "limit": {"type": "integer"}}),
                &[],
            ),
            true,
        ),
    ];
    debug_assert!(
        entries.iter().map(|e| e.0).eq(crate::tools::TOOLS.iter().filter(|t| t.offered).map(|t| t.name)),
        "the descriptors are the offered tools, in order"
    );
    entries
        .into_iter()
        .map(|(name, description, schema, read_only)| {
            let mut tool = Tool::new(name, description, Arc::new(schema));
            if read_only {
                let mut annotations = ToolAnnotations::default();
                annotations.read_only_hint = Some(true);
                tool.annotations = Some(annotations);
            }
            tool
        })
        .collect()
}
