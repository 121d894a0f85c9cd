//! The tools `git jules mcp` offers: each is a typed argument struct (its JSON schema is what the client
//! sees) that becomes the argument vector of the CLI command doing the same job, run in-process with its
//! output captured. A tool and its command therefore share every line of logic, every check and every JSON
//! shape; the server adds only the persona, which it fixes for the whole session.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// One tool: its name, what it does, its schema, and how its arguments become a command line.
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub read_only: bool,
    schema: fn() -> Arc<JsonObject>,
    argv: fn(&str, Value) -> Result<Vec<String>, String>,
}

impl Spec {
    pub fn tool(&self) -> Tool {
        Tool::new(self.name, self.description, (self.schema)()).annotate(
            rmcp::model::ToolAnnotations::new()
                .read_only(self.read_only)
                .destructive(false),
        )
    }

    /// The command line (after the global flags) for a call as `persona`; an error names a bad argument.
    pub fn argv(&self, persona: &str, arguments: Value) -> Result<Vec<String>, String> {
        (self.argv)(persona, arguments)
    }
}

fn schema<T: JsonSchema>() -> Arc<JsonObject> {
    let value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, String> {
    let arguments = if arguments.is_null() {
        Value::Object(Default::default())
    } else {
        arguments
    };
    serde_json::from_value(arguments).map_err(|e| format!("bad arguments: {e}"))
}

macro_rules! spec {
    ($name:literal, $ty:ty, $read_only:expr, $desc:literal, $build:expr) => {
        Spec {
            name: $name,
            description: $desc,
            read_only: $read_only,
            schema: schema::<$ty>,
            argv: |persona, arguments| {
                let args: $ty = parse(arguments)?;
                let build: fn(&str, $ty) -> Vec<String> = $build;
                Ok(build(persona, args))
            },
        }
    };
}

fn s(x: &str) -> String {
    x.to_owned()
}

// Values are always joined to their flag (`--to=VALUE`) and positionals always follow `--`, so that no
// argument a client sends can be read as a flag (for example a `--persona=someone-else` as a message id).
fn opt(flag: &str, value: impl ToString) -> String {
    format!("{flag}={}", value.to_string())
}

fn push_opt(v: &mut Vec<String>, flag: &str, value: Option<impl ToString>) {
    if let Some(value) = value {
        v.push(opt(flag, value));
    }
}

fn push_each(v: &mut Vec<String>, flag: &str, values: &[String]) {
    for value in values {
        v.push(opt(flag, value));
    }
}

/// `words…`, the persona flag, `--`, then the positionals.
fn cmd(
    words: &[&str],
    persona_flag: Option<(&str, &str)>,
    positionals: Vec<String>,
) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|w| s(w)).collect();
    if let Some((flag, persona)) = persona_flag {
        v.push(opt(flag, persona));
    }
    if !positionals.is_empty() {
        v.push(s("--"));
        v.extend(positionals);
    }
    v
}

fn push_flag(v: &mut Vec<String>, flag: &str, on: bool) {
    if on {
        v.push(flag.to_owned());
    }
}

/// `mail_send`: send a message as the session's persona.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailSend {
    /// Recipients: personas, groups, or `__broadcast`
    pub to: Vec<String>,
    /// One line; may be left out with `reply_to` (it becomes "Re: …")
    pub subject: Option<String>,
    /// The body, at most 128 KiB of UTF-8
    pub body: String,
    /// status, alert, task, question, response, report, handoff or conflict (default: status)
    #[serde(rename = "type")]
    pub msg_type: Option<String>,
    /// urgent, normal or low (default: normal)
    pub priority: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub needs_response: bool,
    /// The message this answers (an id or unique prefix)
    pub reply_to: Option<String>,
    /// A thread: a message id or a thread name
    pub thread: Option<String>,
    /// Links (kept as given) or paths of files in the repository's file system (stored in the log)
    #[serde(default)]
    pub attachments: Vec<String>,
    /// Drop out of the views after this: a duration (30m, 2h, 3d) or a time
    pub expires: Option<String>,
}

/// `mail_list`: the persona's inbox, urgent first, then newest.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct MailList {
    /// Only unread messages
    #[serde(default)]
    pub unread: bool,
    /// At most this many messages
    pub limit: Option<u32>,
    /// Only messages of this type
    #[serde(rename = "type")]
    pub msg_type: Option<String>,
    /// Only messages with this tag
    pub tag: Option<String>,
    /// Only messages of this priority (urgent, normal, low)
    pub priority: Option<String>,
    /// Only messages from this sender
    pub from: Option<String>,
    /// Only messages sent at or after this: a duration ago (2h, 3d) or a time
    pub since: Option<String>,
}

/// A message named by its id (or a unique prefix of it).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageId {
    /// The message id or a unique prefix (at least 4 hex digits)
    pub id: String,
}

/// `mail_tag`: add (or remove) one of the persona's own tags on a message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailTag {
    pub id: String,
    pub tag: String,
    /// Remove the tag instead of adding it
    #[serde(default)]
    pub remove: bool,
}

/// `mail_claim`: claim a group message; exactly one recipient wins.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailClaim {
    pub id: String,
    /// Fetch first and make the claim final on the remote (one winner across clones)
    #[serde(default)]
    pub sync: bool,
    /// The remote for `sync` (default: origin)
    pub remote: Option<String>,
}

/// `mail_sync`: fetch, join and push every jules log with a remote.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct MailSync {
    /// The remote (default: origin)
    pub remote: Option<String>,
}

/// No arguments.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `task_list`: the current sprint's tasks.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct TaskList {
    /// todo, done or canceled
    pub state: Option<String>,
    /// Only tasks of this persona
    pub persona: Option<String>,
}

/// `task_done`: mark a task done, as the session's persona.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskDone {
    /// The task id or a unique prefix
    pub id: String,
}

/// `series_status`: a series' base, patches and cached verify results.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct SeriesStatus {
    /// The series name (default: the one checked out)
    pub name: Option<String>,
}

/// `verify`: run the verify command on every commit of base..rev, with the notes cache.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct Verify {
    /// The tip to verify (default: HEAD)
    pub rev: Option<String>,
    /// The base (default: the series' base, else the upstream)
    pub base: Option<String>,
    /// The command (default: jules.verify.cmd)
    pub cmd: Option<String>,
    /// Parallel jobs
    pub jobs: Option<u32>,
    /// Go on after a failure
    #[serde(default)]
    pub keep_going: bool,
    /// Ignore cached results
    #[serde(default)]
    pub force: bool,
}

/// `weave_check`: what weaving these inputs would apply and conflict; writes nothing.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct WeaveCheck {
    /// Branches, ranges or patch files, in order
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Branch globs to weave, in name order
    #[serde(default)]
    pub branches: Vec<String>,
    /// The base to weave onto
    pub base: Option<String>,
    /// The integration branch
    pub into: Option<String>,
}

/// Every tool, in the order `tools/list` shows them.
pub fn all() -> Vec<Spec> {
    vec![
        spec!("mail_send", MailSend, false,
            "Send a message as this persona to personas, groups or __broadcast. Returns the new message's id.",
            |p, a| {
                let mut v = vec![s("mail"), s("send"), opt("--from", p)];
                push_each(&mut v, "--to", &a.to);
                push_opt(&mut v, "--subject", a.subject);
                v.push(opt("--body", a.body));
                push_opt(&mut v, "--type", a.msg_type);
                push_opt(&mut v, "--priority", a.priority);
                push_each(&mut v, "--tag", &a.tags);
                push_flag(&mut v, "--needs-response", a.needs_response);
                push_opt(&mut v, "--reply-to", a.reply_to);
                push_opt(&mut v, "--thread", a.thread);
                push_each(&mut v, "--attach", &a.attachments);
                push_opt(&mut v, "--expires", a.expires);
                v
            }),
        spec!("mail_list", MailList, true,
            "List this persona's inbox: urgent first, then newest. Same shape as `git jules mail inbox --json`.",
            |p, a| {
                let mut v = vec![s("mail"), s("inbox"), opt("--persona", p)];
                push_flag(&mut v, "--unread", a.unread);
                push_opt(&mut v, "--limit", a.limit);
                push_opt(&mut v, "--type", a.msg_type);
                push_opt(&mut v, "--tag", a.tag);
                push_opt(&mut v, "--priority", a.priority);
                push_opt(&mut v, "--from", a.from);
                push_opt(&mut v, "--since", a.since);
                v
            }),
        spec!("mail_read", MessageId, false,
            "Show a message with its body and mark it read for this persona.",
            |p, a| cmd(&["mail", "read"], Some(("--persona", p)), vec![a.id])),
        spec!("mail_mark_read", MessageId, false,
            "Mark a message read for this persona (the message is returned as by mail_read).",
            |p, a| cmd(&["mail", "read"], Some(("--persona", p)), vec![a.id])),
        spec!("mail_archive", MessageId, false,
            "Archive a message: it leaves this persona's inbox.",
            |p, a| cmd(&["mail", "archive"], Some(("--persona", p)), vec![a.id])),
        spec!("mail_trash", MessageId, false,
            "Move a message to this persona's trash.",
            |p, a| cmd(&["mail", "trash"], Some(("--persona", p)), vec![a.id])),
        spec!("mail_tag", MailTag, false,
            "Add (or with remove: true, remove) one of this persona's tags on a message.",
            |p, a| {
                let verb = if a.remove { "rm" } else { "add" };
                cmd(&["mail", "tag", verb], Some(("--persona", p)), vec![a.id, a.tag])
            }),
        spec!("mail_thread", MessageId, true,
            "Show the whole conversation a message belongs to, in order.",
            |p, a| cmd(&["mail", "thread"], Some(("--persona", p)), vec![a.id])),
        spec!("mail_claim", MailClaim, false,
            "Claim a group message for this persona; exactly one recipient wins (with sync: across clones).",
            |p, a| {
                let mut v = vec![s("mail"), s("claim"), opt("--persona", p)];
                push_flag(&mut v, "--sync", a.sync);
                push_opt(&mut v, "--remote", a.remote);
                v.push(s("--"));
                v.push(a.id);
                v
            }),
        spec!("mail_sync", MailSync, false,
            "Fetch, join and push every jules log and notes ref with the remote (the mail of other sandboxes arrives).",
            |_p, a| {
                cmd(&["sync"], None, a.remote.into_iter().collect())
            }),
        spec!("prompt", NoArgs, true,
            "This persona's prompt: the mailbox check with its unread messages.",
            |p, _a| cmd(&["prompt"], None, vec![s(p)])),
        spec!("sprint_status", NoArgs, true,
            "The current sprint: number, state, tasks and notes.",
            |_p, _a| vec![s("sprint"), s("status")]),
        spec!("task_list", TaskList, true,
            "The current sprint's tasks, optionally by state or persona.",
            |_p, a| {
                let mut v = vec![s("task"), s("ls")];
                push_opt(&mut v, "--state", a.state);
                push_opt(&mut v, "--persona", a.persona);
                v
            }),
        spec!("task_done", TaskDone, false,
            "Mark a task of the current sprint done, as this persona.",
            |p, a| cmd(&["task", "done"], Some(("--actor", p)), vec![a.id])),
        spec!("series_status", SeriesStatus, true,
            "A patch series: its base, numbered patches and cached verify results.",
            |_p, a| {
                cmd(&["series", "status"], None, a.name.into_iter().collect())
            }),
        spec!("verify", Verify, false,
            "Run the verify command on every commit of base..rev in private worktrees, with the notes cache.",
            |_p, a| {
                let mut v = vec![s("verify")];
                push_opt(&mut v, "--base", a.base);
                push_opt(&mut v, "--cmd", a.cmd);
                push_opt(&mut v, "--jobs", a.jobs);
                push_flag(&mut v, "--keep-going", a.keep_going);
                push_flag(&mut v, "--force", a.force);
                if let Some(rev) = a.rev {
                    v.push(s("--"));
                    v.push(rev);
                }
                v
            }),
        spec!("weave_check", WeaveCheck, true,
            "What weaving these inputs would apply and conflict; writes nothing (no objects, refs or mail).",
            |_p, a| {
                let mut v = vec![s("weave"), s("--check"), s("--no-mail")];
                push_each(&mut v, "--branches", &a.branches);
                push_opt(&mut v, "--base", a.base);
                push_opt(&mut v, "--into", a.into);
                if !a.inputs.is_empty() {
                    v.push(s("--"));
                    v.extend(a.inputs);
                }
                v
            }),
    ]
}
