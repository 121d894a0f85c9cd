//! `git jules mcp`: the personas' tools over the Model Context Protocol, on stdio.
//!
//! The server is a thin adapter, like the rest of `src/cli/`: every tool is a CLI command run in-process
//! with `--json` and its output captured ([`tools`]), so a tool shares the command's logic, checks, error
//! messages, hints and JSON shape, and costs no process start; `mail_search` instead calls the library
//! with typed arguments ([`search`]), the way new tools should. The session's persona (`--persona` or
//! `JULES_PERSONA`) is fixed when the server starts; no tool takes a persona argument, so a persona acts
//! only as itself. The inbox is a resource, `jules://mail/inbox`, and clients that subscribe to it are sent
//! `notifications/resources/updated` when new mail arrives, from a local send, a sync or a plain
//! `git fetch` by another process ([`watch`]: inotify on the refs, no polling of the log).
//!
//! The official Rust SDK (`rmcp`) speaks the protocol. The server offers protocol versions up to
//! 2025-11-25, the last with the `initialize` handshake and `resources/subscribe`, which every current
//! client (the Python and TypeScript SDKs, the agent CLIs) speaks.

mod lease_tools;
mod search;
mod tools;
mod watch;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use super::{ui, Context};

/// The one resource: the persona's inbox, as `git jules mail inbox --json` prints it.
pub const INBOX_URI: &str = "jules://mail/inbox";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The persona this server acts as (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let persona = args.persona.ok_or_else(|| {
        git_jules::Error::usage("no persona: pass --persona or set JULES_PERSONA")
    })?;
    git_jules::mail::message::validate_persona(&persona)?;
    // Fail before speaking the protocol when this is not a repository.
    let repo = ctx.open()?;
    // The server acts as one persona: it signs with that persona's key only (checked before serving).
    git_jules::sign::keys::pin_persona(&repo, &persona)?;
    let common_dir = repo.common_dir().to_owned();
    // Calls follow each other in this process: keep the mail view of the current tips in memory between
    // them instead of decoding its cache files on every call (the library decides when it may be reused).
    git_jules::eventlog::warm::keep_warm(true);
    let server = Server {
        dir: ctx.dir.clone(),
        persona,
        tools: Arc::new(tools::all()),
        subscribers: Arc::new(Mutex::new(Vec::new())),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let watcher = watch::spawn(
            common_dir,
            server.dir.clone(),
            server.persona.clone(),
            server.subscribers.clone(),
        )?;
        let service = match server.serve(rmcp::transport::stdio()).await {
            Ok(service) => service,
            // The client went away before the handshake (stdin closed): nothing to serve, not an error.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return anyhow::Ok(0),
            Err(e) => return Err(anyhow::anyhow!("starting the MCP session: {e}")),
        };
        // Ends when the client closes stdin (EOF) or the transport fails: a clean exit either way.
        let _ = service.waiting().await;
        drop(watcher);
        anyhow::Ok(0)
    })
}

#[derive(Clone)]
pub struct Server {
    dir: PathBuf,
    persona: String,
    tools: Arc<Vec<tools::Spec>>,
    /// Clients subscribed to the inbox resource.
    subscribers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
}

/// What one in-process command run gave.
pub struct Outcome {
    pub exit: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `git jules -C DIR --json ARGV…` in this process with its output captured.
pub fn run_command(dir: &std::path::Path, argv: Vec<String>) -> Outcome {
    let mut full: Vec<std::ffi::OsString> = vec![
        "git-jules".into(),
        "-C".into(),
        dir.as_os_str().to_owned(),
        "--json".into(),
        "--color=never".into(),
    ];
    full.extend(argv.into_iter().map(Into::into));
    // A panic in a command must not take the server down with it: it becomes this call's error.
    let (exit, captured) = ui::capture(|| {
        std::panic::catch_unwind(|| super::run_from(full)).unwrap_or_else(|_| {
            ui::err("error: internal error: the command panicked (a bug; please report it)");
            super::error::EXIT_INTERNAL
        })
    });
    Outcome {
        exit,
        stdout: captured.stdout,
        stderr: captured.stderr,
    }
}

impl Server {
    async fn run_tool(&self, argv: Vec<String>) -> CallToolResult {
        let dir = self.dir.clone();
        let outcome = match tokio::task::spawn_blocking(move || run_command(&dir, argv)).await {
            Ok(o) => o,
            Err(e) => {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "error: internal error: {e}"
                ))])
            }
        };
        let json: Option<serde_json::Value> = serde_json::from_str(outcome.stdout.trim()).ok();
        if outcome.exit == 0 {
            match json {
                Some(value) => CallToolResult::structured(value),
                None => CallToolResult::success(vec![ContentBlock::text(outcome.stdout)]),
            }
        } else {
            // The CLI's own words: `error: …` and its `hint: …` lines; a command that reports its
            // failure as data (a lost claim, exit 3) has only its JSON document to say.
            let text = if outcome.stderr.trim().is_empty() {
                outcome.stdout.trim_end().to_owned()
            } else {
                outcome.stderr.trim_end().to_owned()
            };
            let value = json.unwrap_or_else(|| {
                serde_json::json!({
                    "error": { "message": text },
                    "exit": outcome.exit,
                })
            });
            let mut result = CallToolResult::structured_error(value);
            result.content = vec![ContentBlock::text(text)];
            result
        }
    }
}

fn bad_request(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "error: {}",
        message.into()
    ))])
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("git-jules", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "git-jules tools for persona `{}`: mail, sprint, series, verify and weave, on this repository. \
             Subscribe to {INBOX_URI} to be told when new mail arrives; urgent mail lists first.",
            self.persona
        ))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[
            ProtocolVersion::V_2024_11_05,
            ProtocolVersion::V_2025_03_26,
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2025_11_25,
        ])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut all: Vec<_> = self
            .tools
            .iter()
            .map(tools::Spec::tool)
            .chain(lease_tools::tools())
            .collect();
        all.push(search::tool());
        Ok(ListToolsResult::with_all_items(all))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == search::NAME {
            // Typed: the library answers directly (see `search`).
            let (dir, persona) = (self.dir.clone(), self.persona.clone());
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let result =
                tokio::task::spawn_blocking(move || search::call(&dir, &persona, arguments))
                    .await
                    .unwrap_or_else(|e| bad_request(format!("internal error: {e}")));
            return Ok(result.into());
        }
        if lease_tools::NAMES.contains(&&*request.name) {
            let (dir, persona) = (self.dir.clone(), self.persona.clone());
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let name = request.name.to_string();
            let result = tokio::task::spawn_blocking(move || {
                lease_tools::call(&dir, &persona, &name, arguments)
            })
            .await
            .unwrap_or_else(|e| bad_request(format!("internal error: {e}")));
            return Ok(result.into());
        }
        let Some(spec) = self.tools.iter().find(|t| t.name == request.name) else {
            return Ok(bad_request(format!("no tool named {}", request.name)).into());
        };
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let argv = match spec.argv(&self.persona, arguments) {
            Ok(argv) => argv,
            Err(e) => return Ok(bad_request(format!("{}: {e}", spec.name)).into()),
        };
        Ok(self.run_tool(argv).await.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let inbox = Resource::new(INBOX_URI, "inbox")
            .with_description(format!(
                "The inbox of {}: urgent first, then newest (mail inbox --json)",
                self.persona
            ))
            .with_mime_type("application/json");
        Ok(ListResourcesResult::with_all_items(vec![inbox]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != INBOX_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let dir = self.dir.clone();
        let argv = vec![
            "mail".to_owned(),
            "inbox".to_owned(),
            format!("--persona={}", self.persona),
        ];
        let outcome = tokio::task::spawn_blocking(move || run_command(&dir, argv))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        if outcome.exit != 0 {
            return Err(ErrorData::internal_error(outcome.stderr, None));
        }
        let mut contents = ResourceContents::text(outcome.stdout, INBOX_URI);
        if let ResourceContents::TextResourceContents { mime_type, .. } = &mut contents {
            *mime_type = Some("application/json".into());
        }
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)] // resources/subscribe is the mechanism of the protocol versions we offer.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri != INBOX_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.push(context.peer.clone());
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri == INBOX_URI {
            if let Ok(mut subs) = self.subscribers.lock() {
                subs.clear();
            }
        }
        Ok(())
    }
}
