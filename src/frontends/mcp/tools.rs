//! The tools `git jules mcp` offers: each is a typed argument struct (its JSON schema is what the client
//! sees), deserialised and handed to the library's use case for the same job (`mail::api`, `tasks`,
//! `series::api`, `sync`, `weave`), whose typed result is serialised. No command line is built and no
//! printed text is parsed: the server and the CLI share the use cases, their checks and their JSON shapes
//! (the documents of `docs/json.md`), not each other's output. The server adds only the persona, which it
//! fixes for the whole session.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use git_jules::capabilities::mail::api::{self as mail, Attachment, Compose, Mark, SendInput};
use git_jules::capabilities::mail::view::{Filter, Folder};
use git_jules::capabilities::mail::{when, Priority};
use git_jules::{capabilities::series, capabilities::sprint_tasks, Error};
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::session::{doc, ok, Answer, Session};
use super::{lease_tools, search};

/// One tool: its name, what it does, its schema, and the use case it calls.
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    pub read_only: bool,
    schema: fn() -> Arc<JsonObject>,
    call: fn(&Session, Value) -> anyhow::Result<Answer>,
}

impl Spec {
    pub fn tool(&self) -> Tool {
        Tool::new(self.name, self.description, (self.schema)()).annotate(
            rmcp::model::ToolAnnotations::new()
                .read_only(self.read_only)
                .destructive(false),
        )
    }

    /// Run the tool for a session; a bad argument is a usage error that names the tool.
    pub fn call(&self, session: &Session, arguments: Value) -> anyhow::Result<Answer> {
        (self.call)(session, arguments)
    }
}

fn schema<T: JsonSchema>() -> Arc<JsonObject> {
    let value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn parse<T: DeserializeOwned>(name: &str, arguments: Value) -> anyhow::Result<T> {
    let arguments = if arguments.is_null() {
        Value::Object(Default::default())
    } else {
        arguments
    };
    serde_json::from_value(arguments)
        .map_err(|e| Error::usage(format!("{name}: bad arguments: {e}")).into())
}

macro_rules! spec {
    ($name:literal, $ty:ty, $read_only:expr, $desc:literal, $call:expr) => {
        Spec {
            name: $name,
            description: $desc,
            read_only: $read_only,
            schema: schema::<$ty>,
            call: |session, arguments| {
                let args: $ty = parse($name, arguments)?;
                let call: fn(&Session, $ty) -> anyhow::Result<Answer> = $call;
                call(session, args)
            },
        }
    };
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
    /// The remote for `sync` (default: the coordination remote)
    pub remote: Option<String>,
}

/// `mail_sync`: fetch, join and push every jules log with a remote.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct MailSync {
    /// The remote (default: the coordination remote `jules.remote`, else origin)
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

fn send(s: &Session, a: MailSend) -> anyhow::Result<Answer> {
    let compose = Compose {
        body: a.body,
        msg_type: a.msg_type,
        priority: a.priority.as_deref().map(Priority::parse).transpose()?,
        tags: a.tags,
        needs_response: a.needs_response,
        expires: a.expires,
        attachments: a
            .attachments
            .iter()
            .map(|p| Attachment::from_arg(s.ws.dir(), p))
            .collect::<Result<_, _>>()?,
    };
    ok(mail::send(
        &s.ws,
        SendInput {
            from: s.persona.clone(),
            to: a.to,
            subject: a.subject,
            reply_to: a.reply_to,
            thread: a.thread,
            compose,
        },
    )?)
}

/// The persona's inbox as `mail inbox --json` shows it (also the inbox resource).
pub fn inbox(s: &Session, a: MailList) -> anyhow::Result<Value> {
    let now = chrono::Utc::now();
    let filter = Filter {
        folder: Folder::Inbox,
        unread: a.unread,
        msg_type: a.msg_type,
        priority: a.priority.as_deref().map(Priority::parse).transpose()?,
        tag: a.tag,
        from: a.from,
        since: a
            .since
            .as_deref()
            .map(|w| when::parse_when(w, now, when::Direction::Past))
            .transpose()?,
        limit: a.limit.map(|l| l as usize),
    };
    doc(mail::inbox(&s.ws, &s.persona, &filter)?)
}

fn mark(s: &Session, id: &str, m: Mark) -> anyhow::Result<Answer> {
    ok(mail::mark(&s.ws, id, &s.persona, m)?)
}

fn prompt(s: &Session) -> anyhow::Result<Answer> {
    // The layer, role, workstream and phase a launched run sets in the environment, as `git jules prompt`
    // reads them.
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let opts = git_jules::capabilities::prompt::Options {
        layer: env("JULES_LAYER"),
        role: env("JULES_ROLE"),
        workstream: env("JULES_WORKSTREAM"),
        phase: env("JULES_PHASE"),
        vars: Default::default(),
        now: None,
    };
    let rendered = git_jules::capabilities::prompt::render(&s.ws.repo(), &s.persona, &opts)?;
    ok(rendered)
}

/// Every tool, in the order `tools/list` shows them.
pub fn all() -> Vec<Spec> {
    vec![
        spec!("mail_send", MailSend, false,
            "Send a message as this persona to personas, groups or __broadcast. Returns the new message's id.",
            send),
        spec!("mail_list", MailList, true,
            "List this persona's inbox: urgent first, then newest. Same shape as `git jules mail inbox --json`.",
            |s, a| Ok((true, inbox(s, a)?))),
        spec!("mail_read", MessageId, false,
            "Show a message with its body and mark it read for this persona.",
            |s, a| ok(mail::read(&s.ws, &a.id, &s.persona)?)),
        spec!("mail_mark_read", MessageId, false,
            "Mark a message read for this persona (the message is returned as by mail_read).",
            |s, a| ok(mail::read(&s.ws, &a.id, &s.persona)?)),
        spec!("mail_archive", MessageId, false,
            "Archive a message: it leaves this persona's inbox.",
            |s, a| mark(s, &a.id, Mark::Archive)),
        spec!("mail_trash", MessageId, false,
            "Move a message to this persona's trash.",
            |s, a| mark(s, &a.id, Mark::Trash)),
        spec!("mail_tag", MailTag, false,
            "Add (or with remove: true, remove) one of this persona's tags on a message.",
            |s, a| mark(s, &a.id, if a.remove { Mark::Untag(a.tag) } else { Mark::Tag(a.tag) })),
        spec!("mail_thread", MessageId, true,
            "Show the whole conversation a message belongs to, in order.",
            |s, a| ok(mail::thread(&s.ws, &a.id, Some(&s.persona))?)),
        spec!("mail_claim", MailClaim, false,
            "Claim a group message for this persona; exactly one recipient wins (with sync: across clones).",
            |s, a| {
                let claimed = mail::claim(&s.ws, &a.id, &s.persona, a.sync, a.remote.as_deref())?;
                Ok((claimed.won(), doc(&claimed)?))
            }),
        spec!("mail_sync", MailSync, false,
            "Fetch, join and push every jules log and notes ref with the remote (the mail of other sandboxes arrives).",
            |s, a| ok(git_jules::capabilities::lease::sync_and_remind(&s.ws.repo(), a.remote.as_deref(), false, &s.persona)?)),
        spec!("prompt", NoArgs, true,
            "This persona's prompt: the mailbox check with its unread messages.",
            |s, _a| prompt(s)),
        spec!("sprint_status", NoArgs, true,
            "The current sprint: number, state, tasks and notes.",
            |s, _a| {
                let view = git_jules::capabilities::state::State::open(&s.ws.repo())?
                    .with_passed_over(Some(s.ws.passed_over()))
                    .view()?
                    .view;
                ok(git_jules::capabilities::state::status::sprint_status(&view))
            }),
        spec!("task_list", TaskList, true,
            "The current sprint's tasks, optionally by state or persona.",
            |s, a| ok(sprint_tasks::list(&s.ws, &sprint_tasks::TaskQuery { state: a.state, persona: a.persona })?)),
        spec!("task_done", TaskDone, false,
            "Mark a task of the current sprint done, as this persona.",
            |s, a| ok(sprint_tasks::done(&s.ws, &s.persona, &a.id)?)),
        spec!("series_status", SeriesStatus, true,
            "A patch series: its base, numbered patches and cached verify results.",
            |s, a| ok(series::status::read(&s.ws, &series::status::StatusInput { name: a.name, ..Default::default() })?)),
        spec!("verify", Verify, false,
            "Run the verify command on every commit of base..rev in private worktrees, with the notes cache.",
            |s, a| {
                let input = series::api::VerifyInput {
                    rev: a.rev,
                    base: a.base,
                    cmd: a.cmd,
                    jobs: a.jobs,
                    keep_going: a.keep_going,
                    force: a.force,
                    worktree_dir: None,
                };
                // Nothing interrupts a tool call but the client going away, which ends the session.
                let never = AtomicBool::new(false);
                let verified = series::api::verify(&s.ws, &input, &never, &|_| {})?;
                Ok((verified.report.passed, doc(&verified.report)?))
            }),
        spec!("weave_check", WeaveCheck, true,
            "What weaving these inputs would apply and conflict; writes nothing (no objects, refs or mail).",
            |s, a| {
                let specs = a
                    .inputs
                    .iter()
                    .map(|i| git_jules::capabilities::weave::input::Spec::from_arg(s.ws.dir(), i))
                    .collect();
                let opts = git_jules::capabilities::weave::Options::check_only(specs, a.branches, a.base, a.into);
                let never = AtomicBool::new(false);
                let report = git_jules::capabilities::weave::weave(&s.ws.repo(), &opts, &never)?;
                Ok((report.clean(), doc(&report)?))
            }),
        spec!("lease_acquire", lease_tools::Acquire, false,
            "Lease paths or globs as this persona before changing them. held=false names the holders (paths, reason, expiry). With sync the answer is final.",
            lease_tools::acquire),
        spec!("lease_renew", lease_tools::Renew, false,
            "Extend a live lease of this persona to now + ttl.",
            lease_tools::renew),
        spec!("lease_release", lease_tools::Release, false,
            "Release this persona's leases (by id, task or all); another persona's only with force and a reason (they are mailed).",
            lease_tools::release),
        spec!("lease_list", lease_tools::List, true,
            "List live leases (all: also expired, released, denied), with time left.",
            lease_tools::list),
        spec!("lease_check", lease_tools::Check, true,
            "Check paths, a diff range or the staged paths against other personas' exclusive leases.",
            lease_tools::check),
        spec!("mail_search", search::MailSearch, true,
            "Search the mail the persona received: words (all must match), \"phrases\", prefix*, s:/f:/t:/b: fields, OR, -word; ranked by relevance, then newest, each with a snippet (like mail search --json)",
            search::call),
    ]
}
