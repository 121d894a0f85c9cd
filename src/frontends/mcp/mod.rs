//! `git jules mcp`: the personas' tools over the Model Context Protocol, on stdio.
//!
//! The server is a thin adapter, like the rest of `src/frontends/cli/`: every tool deserialises its typed arguments,
//! calls the library's use case for the job and serialises the typed result ([`tools`], [`search`],
//! [`lease_tools`]), so a tool shares the command's logic, checks and JSON shape without running the
//! command, and costs no process start. The session's persona (`--persona` or
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
mod session;
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

use git_jules::Remedy;

use super::ui;
use crate::frontends::context::Context;

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
    git_jules::capabilities::mail::message::validate_persona(&persona)?;
    // Fail before speaking the protocol when this is not a repository. The server acts as one persona: it
    // signs with that persona's key only (checked before serving, pinned on the handle it serves with).
    let repo = ctx.open_as(&persona)?;
    let common_dir = repo.common_dir().to_owned();
    // Calls follow each other in this process: keep the mail view of the current tips in memory between
    // them instead of decoding its cache files on every call (the library decides when it may be reused).
    let mut ws = ctx.workspace_of(repo);
    // The persona policy of every frontend, once for the session: a group cannot act, an unknown name is
    // warned about (refused under --strict or jules.strictPersonas), before speaking the protocol.
    let warnings = git_jules::capabilities::mail::api::check_persona(&ws, &ws.repo(), &persona)?;
    super::cli::mail::warn_unknown(&ctx.ui, &warnings);
    ws.keep_warm();
    // The configuration's warnings (a trust ref naming nothing: nothing is marked NOT VERIFIED), said on
    // stderr at start by the CLI's context and carried in every result, where an agent reads them.
    let config_warnings = git_jules::kit::settings::warnings(&ws.repo());
    let session = Arc::new(session::Session {
        ws,
        persona: persona.clone(),
    });
    let server = Server {
        dir: ctx.dir.clone(),
        persona,
        session,
        tools: Arc::new(tools::all()),
        subscribers: Arc::new(Mutex::new(Vec::new())),
        config_warnings: Arc::new(config_warnings),
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
            server.session.ws.passed_over(),
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
    session: Arc<session::Session>,
    tools: Arc<Vec<tools::Spec>>,
    /// Clients subscribed to the inbox resource.
    subscribers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    /// What the configuration warns about (`settings::warnings`), carried in every tool result.
    config_warnings: Arc<Vec<String>>,
}

impl Server {
    /// `result` with the configuration's warnings appended as text, as the CLI says them on stderr: an
    /// agent reading marks must know when they mean nothing (a trust ref that names no commit). So are
    /// the checkpoints this call's reads passed over under `jules.requireSigned` (each log once a session).
    fn noted(&self, mut result: CallToolResult) -> CallToolResult {
        result.content.extend(
            self.config_warnings
                .iter()
                .map(|w| ContentBlock::text(format!("warning: {w}"))),
        );
        result.content.extend(
            self.session
                .ws
                .passed_over()
                .take()
                .into_iter()
                .map(|i| ContentBlock::text(format!("warning: {i}"))),
        );
        result
    }
}

/// The one mapping of a failed call to its result: `error: …`, `caused by: …` and `hint: …` lines as text,
/// and the JSON error object the CLI's `--json` prints as structured content (`{"version", "error",
/// "exit"}`), with the same kind, message, causes and exit code. Every tool's failure comes here: bad
/// arguments, an unknown tool, a panic and the library's errors alike. The hints are the server's own
/// ([`mcp_hints`]): they name the tools' argument fields, never a CLI flag.
pub fn tool_error(e: &anyhow::Error) -> CallToolResult {
    let err = super::error::CliError::with_hints(e, mcp_hints);
    let mut text = format!("error: {}", err.message);
    for c in &err.causes {
        text.push_str(&format!("\ncaused by: {c}"));
    }
    for h in &err.hints {
        text.push_str(&format!("\nhint: {h}"));
    }
    let doc = serde_json::json!({
        "version": ui::JSON_VERSION,
        "error": err,
        "exit": err.exit_code(),
    });
    let mut result = CallToolResult::structured_error(doc);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// Hints for the library's errors in the server's words: the one place a [`Remedy`] becomes the tools'
/// argument fields (the CLI words the same remedies as flags, in `cli::error::remedy_hint`).
fn mcp_hints(e: &git_jules::Error) -> Vec<String> {
    use git_jules::Error;
    match e {
        Error::Needs { remedy, .. } => vec![remedy_hint(remedy)],
        Error::Race { .. } => {
            vec!["another writer kept the ref busy; call the tool again".to_owned()]
        }
        Error::Ambiguous { .. } => vec!["give more hex digits of the id".to_owned()],
        Error::NotFound { what, .. } => match what {
            git_jules::Thing::Message => vec!["list the ids with `mail_list`".to_owned()],
            git_jules::Thing::Task => vec!["list the tasks with `task_list`".to_owned()],
            git_jules::Thing::BaseBranch => vec!["name the base branch in `base`".to_owned()],
            git_jules::Thing::Remote => {
                vec![
                    "name a configured remote in `remote`, or leave it out for the clone's own"
                        .to_owned(),
                ]
            }
            _ => Vec::new(),
        },
        Error::Persona {
            problem: git_jules::NameProblem::Group { members },
            ..
        } => vec![format!("name one of its members: {}", members.join(", "))],
        Error::Persona {
            problem:
                git_jules::NameProblem::Unknown {
                    suggestion: Some(s),
                    ..
                },
            ..
        } => vec![format!("did you mean {s}?")],
        _ => Vec::new(),
    }
}

/// What fixes a refusal, naming the tools' argument fields in backticks.
fn remedy_hint(remedy: &Remedy) -> String {
    let s = match remedy {
        Remedy::ForceWithReason => {
            "set `force` to true and say why in `reason` to release it (the holder is mailed)"
        }
        Remedy::Reason => "a forced release says why: give `reason`",
        Remedy::Replace => "remove what is there first; this server does not replace it",
        Remedy::Base => "name the base branch in `base`",
        Remedy::RebaseOrMerge => "land the series by rebasing it onto its base, or by a merge",
        Remedy::Merge => "reroll the series onto the new base, or land it by a merge",
        Remedy::Drop { patch } => return format!("drop patch {patch} from the series"),
        Remedy::NoRebase => "compare the versions without replaying onto the newer base",
        Remedy::Rationale => "say why the patch exists: give its rationale",
        Remedy::MessageAlone => "give the whole new message alone, without a summary or rationale",
        Remedy::KeepRationale => {
            "keep the `Rationale:` trailer in the new message, or change only the summary"
        }
        Remedy::Reword { patch } => return format!("change files first, or reword patch {patch}"),
        Remedy::OtherPath => "remove it, or write the key to another path",
        Remedy::Persona => "name the persona (or role) it belongs to",
        Remedy::Label => "give the issue its label",
        Remedy::Issue => "name the issue the plan expands",
        Remedy::SigningKey { persona } => {
            return format!("make a signing key for {persona} and configure it")
        }
        Remedy::CheckWithoutVerify => "a check does not verify; verify the woven branch instead",
        Remedy::Into => "name another branch in `into`",
        Remedy::Inputs => {
            "name branches, ranges or patch files in `inputs`, or patterns in `branches`"
        }
        Remedy::VerifyCommand => {
            "give the command in `cmd`, or set `jules.verify.cmd` in the repository's config"
        }
    };
    s.to_owned()
}

/// The `warnings` of a use case's document (unknown persona names), in the words the CLI warns with.
/// Also the warnings other use cases carry as data: leases a finished task could not release
/// (`release_error`), reminders a sync could not send (`remind_error`).
fn warning_lines(doc: &serde_json::Value) -> Vec<String> {
    let mut lines: Vec<String> = doc
        .get("warnings")
        .cloned()
        .and_then(|w| {
            serde_json::from_value::<Vec<git_jules::capabilities::mail::api::UnknownName>>(w).ok()
        })
        .unwrap_or_default()
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    if let Some(e) = doc.get("release_error").and_then(|e| e.as_str()) {
        lines.push(format!("warning: the task's leases were not released: {e}"));
    }
    if let Some(e) = doc.get("remind_error").and_then(|e| e.as_str()) {
        lines.push(format!("warning: lease reminders not sent: {e}"));
    }
    lines
}

/// A tool's answer as a result: a success carries its document; a failure reported as data (a lost
/// claim, a failed verify, a conflicting weave) is a tool error whose text is that document.
fn answer(outcome: anyhow::Result<session::Answer>) -> CallToolResult {
    match outcome {
        Ok((true, doc)) => {
            let warnings = warning_lines(&doc);
            let mut result = CallToolResult::structured(doc);
            // What the CLI says on stderr, said here too: a client that reads only the text sees it.
            result
                .content
                .extend(warnings.into_iter().map(ContentBlock::text));
            result
        }
        Ok((false, doc)) => {
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            let mut result = CallToolResult::structured_error(doc);
            result.content = vec![ContentBlock::text(text)];
            result
        }
        Err(e) => tool_error(&e),
    }
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
        let all = self.tools.iter().map(tools::Spec::tool).collect();
        Ok(ListToolsResult::with_all_items(all))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The one dispatch table: every tool is a row of `tools::all`.
        let Some(index) = self.tools.iter().position(|t| t.name == request.name) else {
            let unknown = git_jules::Error::usage(format!("no tool named {}", request.name));
            return Ok(self.noted(tool_error(&unknown.into())).into());
        };
        let (tools, session) = (self.tools.clone(), self.session.clone());
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let result = tokio::task::spawn_blocking(move || {
            let spec = &tools[index];
            // A panic must not take the server down with it: it becomes this call's error.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                answer(spec.call(&session, arguments))
            }))
            .unwrap_or_else(|_| {
                tool_error(&anyhow::anyhow!(
                    "internal error: {} panicked (a bug; please report it)",
                    spec.name
                ))
            })
        })
        .await
        .unwrap_or_else(|e| tool_error(&anyhow::anyhow!("internal error: {e}")));
        Ok(self.noted(result).into())
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
        let session = self.session.clone();
        let doc =
            tokio::task::spawn_blocking(move || tools::inbox(&session, tools::MailList::default()))
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
                .map_err(|e| ErrorData::internal_error(format!("{e:#}"), None))?;
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut contents = ResourceContents::text(text, INBOX_URI);
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
