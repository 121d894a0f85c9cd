//! The MCP tool `mail_search`, typed end to end: its arguments deserialise into a struct, the library's
//! `mail::search::search` answers, and its `SearchOutput` is the structured result. Unlike the tools of
//! [`super::tools`] no command line is built and no printed text is parsed; the result and the errors have
//! the shape of `git jules mail search --json` all the same (`version` first; `error` and `exit`).

use super::tools::Session;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use git_jules::mail::search::{self, SearchInput};

pub const NAME: &str = "mail_search";

/// `mail_search`: full-text search over what the session's persona received.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailSearch {
    /// Words (all must match), "quoted phrases", prefix*, fields s: f: t: b: (subject, from, to, body),
    /// OR, -word, (groups)
    pub query: String,
    /// Only messages from this sender
    pub from: Option<String>,
    /// Only messages of this type
    #[serde(rename = "type")]
    pub msg_type: Option<String>,
    /// Only messages with this tag (the sender's or the persona's own)
    pub tag: Option<String>,
    /// Only messages sent at or after this: a duration ago (2h, 3d) or a time
    pub since: Option<String>,
    /// Only messages sent at or before this: a duration ago (2h, 3d) or a time
    pub until: Option<String>,
    /// At most this many results (default 20, at most 1000)
    pub limit: Option<u32>,
    /// Archived, trashed, expired and claimed messages too
    #[serde(default)]
    pub all_folders: bool,
}

pub fn tool() -> Tool {
    let schema = match serde_json::to_value(schemars::schema_for!(MailSearch)) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    Tool::new(
        NAME,
        "Search the mail the persona received: words (all must match), \"phrases\", prefix*, s:/f:/t:/b: \
         fields, OR, -word; ranked by relevance, then newest, each with a snippet (like mail search --json)",
        Arc::new(schema),
    )
    .annotate(
        rmcp::model::ToolAnnotations::new()
            .read_only(true)
            .destructive(false),
    )
}

/// Answer a call as the session's persona on its repository (blocking: run it off the async runtime).
pub fn call(session: &Session, arguments: Value) -> CallToolResult {
    let persona = session.persona.as_str();
    let arguments = if arguments.is_null() {
        Value::Object(Default::default())
    } else {
        arguments
    };
    let args: MailSearch = match serde_json::from_value(arguments) {
        Ok(a) => a,
        Err(e) => {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "error: {NAME}: bad arguments: {e}"
            ))])
        }
    };
    let input = SearchInput {
        query: args.query,
        persona: Some(persona.to_owned()),
        from: args.from,
        msg_type: args.msg_type,
        tag: args.tag,
        since: args.since,
        until: args.until,
        limit: args.limit.map(|l| l as usize),
        all_folders: args.all_folders,
    };
    // A panic must not take the server down: it becomes this call's error, as for the other tools.
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let repo = session.ws.repo();
        search::search(&repo, &input)
    }));
    match answer {
        Ok(Ok(out)) => {
            let mut doc = serde_json::json!({ "version": super::super::ui::JSON_VERSION });
            if let (Value::Object(d), Ok(Value::Object(o))) = (&mut doc, serde_json::to_value(&out))
            {
                d.extend(o);
            }
            CallToolResult::structured(doc)
        }
        Ok(Err(e)) => super::failure(&anyhow::Error::from(e)),
        Err(_) => CallToolResult::error(vec![ContentBlock::text(
            "error: internal error: mail_search panicked (a bug; please report it)",
        )]),
    }
}
