//! The MCP tool `mail_search`, typed end to end: its arguments deserialise into a struct, the library's
//! `mail::search::search` answers, and its `SearchOutput` is the structured result, the document of
//! `git jules mail search --json`. A row of the one dispatch table (`super::tools::all`), which parses the
//! arguments and maps the errors as for every tool.

use schemars::JsonSchema;
use serde::Deserialize;

use git_jules::capabilities::mail::search::{self, SearchInput};

use super::session::{ok, Answer, Session};

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

/// Search as the session's persona on its repository.
pub fn call(s: &Session, a: MailSearch) -> anyhow::Result<Answer> {
    let input = SearchInput {
        query: a.query,
        persona: Some(s.persona.clone()),
        from: a.from,
        msg_type: a.msg_type,
        tag: a.tag,
        since: a.since,
        until: a.until,
        limit: a.limit.map(|l| l as usize),
        all_folders: a.all_folders,
    };
    ok(search::search(&s.ws.repo(), &input)?)
}
