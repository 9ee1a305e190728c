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
    server: Arc<Mutex<Server>>,
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
        info.instructions = None;
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
        // What the call left for later runs while the answer travels; the next call waits for
        // the lock, so it always sees the work done.
        tokio::task::spawn_blocking(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match settle.lock() {
                Ok(mut guard) => guard.settle(),
                Err(poisoned) => poisoned.into_inner().settle(),
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

/// The nine tool descriptors, in `tools/list` order (protocol §16.2).
pub fn descriptors() -> Vec<Tool> {
    let program = |text: &str| -> Value { serde_json::json!({"type": "string", "description": text}) };
    let path = program("A .cairn file, a project directory or a manifest, relative to where the server started.");
    let source = program("Program text (a session on source never writes files).");
    let symbol = program("A function, qualified with its module when it has one (lib.spread).");
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
            "Check a program and report every refusal.",
            schema(serde_json::json!({"path": path, "source": source}), &[]),
            true,
        ),
        (
            "edit_open",
            "Open an edit session on one function: the packet of what the agent may rely on.",
            schema(
                serde_json::json!({"path": path, "source": source, "symbol": symbol,
                    "scope": {"enum": ["focused", "component"]},
                    "site": {"type": "string", "description": "An expression site of the packet (x3)."},
                    "preserve": {"enum": ["equivalent", "identical"], "description": "Admit only edits keeping behaviour (equivalent) or code (identical)."}}),
                &["symbol"],
            ),
            true,
        ),
        (
            "edit_request",
            "Send one cairn.edit/2 request of a session: body, expr, expand, explain, predict, shot, state or delta.",
            schema(
                serde_json::json!({"request": {"type": "object", "description": "Shaped as the packet's draft_protocol."}}),
                &["request"],
            ),
            false,
        ),
        (
            "plan_open",
            "Open a plan session on a function with parallel regions.",
            schema(
                serde_json::json!({"path": path, "source": source, "symbol": symbol,
                    "sizes": {"type": "array", "items": {"type": "object"}, "description": "Price at these sizes ([{\"n\": 1e7}])."}}),
                &["symbol"],
            ),
            true,
        ),
        (
            "plan_reply",
            "Send one cairn.plan/1 reply.",
            schema(
                serde_json::json!({"reply": {"type": "object", "description": "The packet's reply with items set."}}),
                &["reply"],
            ),
            false,
        ),
        (
            "implementation_open",
            "Open an implementation session against a reference function.",
            schema(
                serde_json::json!({"path": path, "source": source,
                    "reference": {"type": "string"},
                    "policy": {"type": "object", "description": "Tolerance, domain, budget, seed, probes, seconds."},
                    "emulate": {"type": "string", "description": "A device target (sm_120) validated on host threads."}}),
                &["reference"],
            ),
            true,
        ),
        (
            "implementation_submit",
            "Submit one cairn.implementation/1 request.",
            schema(
                serde_json::json!({"request": {"type": "object", "description": "The packet's reply with its source."}}),
                &["request"],
            ),
            false,
        ),
        (
            "state",
            "The program as it stands (per module, each function as [signature, row]), or the delta since a state this server sent.",
            schema(
                serde_json::json!({"path": path, "source": source, "symbol": symbol,
                    "since": {"type": "string", "description": "A digest this server returned."},
                    "whole": {"type": "boolean", "description": "The whole state even if one was sent for this path."}}),
                &[],
            ),
            true,
        ),
        (
            "find",
            "Suggest callable functions from words or from the types of values held.",
            schema(
                serde_json::json!({"path": path, "source": source,
                    "words": {"type": "string"},
                    "takes": {"type": "array", "items": {"type": "string"}, "description": "Types such as ro<u8>[n], Vec[i64]."},
                    "returns": {"type": "string"},
                    "effects": {"type": "string", "description": "A ceiling such as pure."},
                    "limit": {"type": "integer"}}),
                &[],
            ),
            true,
        ),
    ];
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
