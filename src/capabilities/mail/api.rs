//! The mail use cases, one typed call each: what `git jules mail …`, the MCP server's `mail_*` tools and
//! the web view do, with their checks, in one place.
//!
//! Every call takes the caller's [`Workspace`] and a typed input and returns a typed, serialisable output:
//! the documents of `docs/json.md` (`mail send`, `mail inbox`, `mail read`, …) are these values
//! serialised. Names given where personas are expected are checked here ([`check_names`]); what does not
//! stop a call (an unknown name, with the closest known one) comes back as data in the output's
//! `warnings`, for the frontend to show in its own words. No message here names a command-line flag.
//!
//! This is mail's one way in: the CLI, the MCP server and the web view call these functions, and beside
//! them only mail's projection ([`super::view`]: its filters and types), its search ([`super::search`])
//! and plain values and checks (`message`, `when`, `claim::Outcome`). What the calls are made of (`ops`:
//! the log, the view's lock, sending and marking; `out`: the JSON shapes filled from the view) is private
//! to `src/capabilities/mail/`; the shapes a frontend names are re-exported here. Other capabilities (lease, weave, a
//! series review, the fleet, prompts) mail as a tool, not as a persona, and read counts and headers: the
//! crate-internal calls at the end of this file are theirs (`tests/it/ways_in.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::claim::{self, ClaimReport};
use super::import::ImportReport;
use super::maildir::export::ExportReport;
use super::recipients::{Groups, Known, PersonaCheck};
use super::view::{Filter, Header, Tally};
use super::{message, when, Priority, SendRequest};
use crate::capabilities::workspace::Workspace;
use crate::kit::error::NameProblem;
use crate::store::eventlog::{Appended, NewEvent};
use crate::{Error, Result};

// The implementation the calls below are made of: private to mail, so that no frontend rebuilds a call
// out of its parts (the web once did, and drifted).
use super::ops;
use super::out;
// What a frontend names: the mail documents' types and a mark's kinds.
pub use super::ops::{Mark, PersonaStats, Stats, Unanswered};
pub use super::out::{FileOut, ListOut, MessageOut, StateOut, JSON_VERSION};

/// A name that was given where a persona is expected and that nobody knows: a warning unless strict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct UnknownName {
    pub name: String,
    /// The closest known persona, when one is close.
    pub suggestion: Option<String>,
}

/// The words every frontend warns with: `unknown persona NAME; did you mean OTHER?`.
impl std::fmt::Display for UnknownName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.suggestion {
            Some(s) => write!(f, "unknown persona {}; did you mean {s}?", self.name),
            None => write!(
                f,
                "unknown persona {}; the personas are listed in .jules/schedules.toml",
                self.name
            ),
        }
    }
}

/// Check `names` given where personas are expected against `.jules/schedules.toml`, the groups and the
/// personas seen on the mail log. A group where one persona is expected is an error ([`Error::Persona`]);
/// an unknown name is returned as a warning, and is an error when strict (`ws.strict_personas` or
/// `jules.strictPersonas`). Personas seen on the log are its senders (a recipient there may be an earlier
/// typo). A repository that declares no persona (no schedules file, no group) is not checked, unless strict.
pub fn check_names(
    ws: &Workspace,
    repo: &gix::Repository,
    groups: &Groups,
    names: &[&str],
    groups_ok: bool,
) -> Result<Vec<UnknownName>> {
    let strict = ws.strict_personas
        || crate::kit::settings::boolean(repo, crate::kit::settings::STRICT_PERSONAS, false)?;
    let mut known = Known::load(repo, groups, std::iter::empty())?;
    let declared = !known.personas.is_empty() || !known.groups.is_empty();
    if !declared && !strict {
        // Nothing to check against but the log, which would cost every send a read of it.
        return Ok(Vec::new());
    }
    let mut warnings = Vec::new();
    let mut seen_loaded = false;
    for &name in names {
        let mut verdict = known.check(name);
        if matches!(verdict, PersonaCheck::Unknown { .. }) && !seen_loaded {
            // The log is only read when the declarations do not settle it; senders only: a recipient on
            // the log may be the very typo being checked.
            let log = mail_log(ws, repo)?;
            let seen = ops::with_view(&log, |v| {
                Ok(v.all_headers()?
                    .into_iter()
                    .map(|h| h.from)
                    .collect::<Vec<_>>())
            })?;
            known.personas.extend(seen);
            seen_loaded = true;
            verdict = known.check(name);
        }
        match verdict {
            PersonaCheck::Known => {}
            PersonaCheck::Group if groups_ok => {}
            PersonaCheck::Group => {
                let members = groups
                    .groups
                    .get(name)
                    .map(|m| m.iter().cloned().collect())
                    .unwrap_or_default();
                return Err(Error::Persona {
                    name: name.to_owned(),
                    problem: NameProblem::Group { members },
                });
            }
            PersonaCheck::Unknown { suggestion } if strict => {
                return Err(Error::Persona {
                    name: name.to_owned(),
                    problem: NameProblem::Unknown {
                        suggestion,
                        strict: true,
                    },
                });
            }
            PersonaCheck::Unknown { suggestion } => warnings.push(UnknownName {
                name: name.to_owned(),
                suggestion,
            }),
        }
    }
    Ok(warnings)
}

/// A persona acting on its own mailbox: a valid name, checked like [`check_names`] (groups refused).
pub fn check_persona(
    ws: &Workspace,
    repo: &gix::Repository,
    persona: &str,
) -> Result<Vec<UnknownName>> {
    message::validate_persona(persona)?;
    let groups = Groups::load(repo)?;
    check_names(ws, repo, &groups, &[persona], false)
}

/// [`check_persona`] when a persona is given.
fn check_optional(
    ws: &Workspace,
    repo: &gix::Repository,
    persona: Option<&str>,
) -> Result<Vec<UnknownName>> {
    match persona {
        Some(p) => check_persona(ws, repo, p),
        None => Ok(Vec::new()),
    }
}

/// The mail log, with the workspace's warm views and its record of passed-over checkpoints.
fn mail_log<'r>(
    ws: &Workspace,
    repo: &'r gix::Repository,
) -> Result<crate::store::eventlog::Log<'r>> {
    Ok(ops::log(repo)?
        .with_warm(ws.warm())
        .with_passed_over(Some(ws.passed_over())))
}

/// An attachment: a link kept as given, or a file's bytes stored in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attachment {
    Link(String),
    File { name: String, bytes: Vec<u8> },
}

impl Attachment {
    /// A link when `arg` has a scheme, else the file at `arg` (relative to `dir`), read now.
    pub fn from_arg(dir: &Path, arg: &str) -> Result<Attachment> {
        if message::is_url(arg) {
            return Ok(Attachment::Link(arg.to_owned()));
        }
        let path = Path::new(arg);
        let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            Error::usage(format!("attachment {arg:?}: not a link or a file name"))
        })?;
        let bytes = std::fs::read(dir.join(path)).map_err(|e| {
            Error::usage(format!(
                "attachment {arg}: {e} (a link needs a scheme, e.g. https://)"
            ))
        })?;
        Ok(Attachment::File {
            name: name.to_owned(),
            bytes,
        })
    }
}

/// What every new message carries besides its recipients and subject.
#[derive(Debug, Clone, Default)]
pub struct Compose {
    pub body: String,
    /// Default: `status` for a send, `response` for a reply.
    pub msg_type: Option<String>,
    pub priority: Option<Priority>,
    pub tags: Vec<String>,
    pub needs_response: bool,
    /// When the message drops out of the views: a duration (30m, 2h, 3d) or a time.
    pub expires: Option<String>,
    pub attachments: Vec<Attachment>,
}

/// A new message.
#[derive(Debug, Clone, Default)]
pub struct SendInput {
    pub from: String,
    pub to: Vec<String>,
    /// Required unless `reply_to` is given (then "Re: …" of the message answered).
    pub subject: Option<String>,
    /// The message this answers: an id or a unique prefix.
    pub reply_to: Option<String>,
    /// A message id (its thread) or a thread name.
    pub thread: Option<String>,
    pub compose: Compose,
}

/// An answer to a message, to its sender (with `all`, to everyone it went to), in its thread.
#[derive(Debug, Clone, Default)]
pub struct ReplyInput {
    pub from: String,
    /// The message answered: an id or a unique prefix.
    pub id: String,
    pub all: bool,
    /// Default: "Re: " and the original subject.
    pub subject: Option<String>,
    pub compose: Compose,
}

/// A sent message (`mail send --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Sent {
    pub version: u32,
    pub id: String,
    pub commit: String,
    pub lamport: u64,
    /// The sender and recipients nobody knows (sent all the same): data, so that every frontend can
    /// show them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<UnknownName>,
}

/// A `thread` value that names a message rather than a thread: hex digits only, at least 4.
fn looks_like_id(s: &str) -> bool {
    s.len() >= crate::kit::abbrev::MIN_ABBREV && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn fill(req: &mut SendRequest, c: Compose, now: DateTime<Utc>) -> Result<()> {
    req.body = c.body;
    message::validate_body(&req.body)?;
    if let Some(t) = c.msg_type {
        req.msg_type = t;
    }
    if let Some(p) = c.priority {
        req.priority = p;
    }
    req.tags = c.tags;
    req.needs_response = c.needs_response;
    if let Some(e) = &c.expires {
        let t = when::parse_when(e, now, when::Direction::Future)?;
        if t <= now {
            return Err(Error::usage(format!("expiry {e} is not in the future")));
        }
        req.expires = Some(when::format_event_time(t));
    }
    for a in c.attachments {
        match a {
            Attachment::Link(u) => req.urls.push(u),
            Attachment::File { name, bytes } => req.files.push((name, bytes)),
        }
    }
    Ok(())
}

fn finish(ws: &Workspace, repo: &gix::Repository, req: SendRequest) -> Result<Sent> {
    let names: Vec<&str> = req.to.iter().map(String::as_str).collect();
    let groups = Groups::load(repo)?;
    // The sender acts as one persona: a group is refused, an unknown name warned about (refused when
    // strict), as for any persona acting on its mailbox. Recipients may be groups.
    let mut warnings = check_names(ws, repo, &groups, &[req.from.as_str()], false)?;
    warnings.extend(check_names(ws, repo, &groups, &names, true)?);
    let log = mail_log(ws, repo)?;
    let appended = ops::send(&log, req, &groups)?;
    Ok(Sent {
        version: JSON_VERSION,
        id: appended.id.to_hex(),
        commit: appended.commit.to_string(),
        lamport: appended.lamport,
        warnings,
    })
}

/// Send a message: resolve what it answers and its thread, check it, append it.
pub fn send(ws: &Workspace, input: SendInput) -> Result<Sent> {
    let repo = ws.repo();
    message::validate_persona(&input.from)?;
    let now = Utc::now();
    let mut req = SendRequest {
        from: input.from,
        to: input.to,
        msg_type: "status".into(),
        ..SendRequest::default()
    };
    let thread_is_id = input.thread.as_deref().is_some_and(looks_like_id);
    if input.reply_to.is_some() || thread_is_id {
        let log = mail_log(ws, &repo)?;
        ops::with_view(&log, |view| {
            if let Some(r) = &input.reply_to {
                let parent = ops::find(&log, view, r)?;
                req.in_reply_to = Some(parent.id.to_hex());
                if input.subject.is_none() {
                    req.subject = message::reply_subject(&parent.data.subject);
                }
            }
            if let Some(t) = input.thread.as_deref().filter(|t| looks_like_id(t)) {
                // Hex digits name a message when one matches; otherwise they are a thread name.
                match view.resolve(t) {
                    Ok((id, _)) => req.thread = Some(view.thread_of(&id.to_hex())?),
                    Err(Error::NotFound { .. }) => req.thread = Some(t.to_owned()),
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })?;
    }
    if let Some(t) = input.thread.filter(|t| !looks_like_id(t)) {
        req.thread = Some(t);
    }
    match input.subject {
        Some(s) => req.subject = s,
        None if req.in_reply_to.is_some() => {}
        None => return Err(Error::usage("no subject: a new message needs one")),
    }
    message::validate_subject(&req.subject)?;
    fill(&mut req, input.compose, now)?;
    finish(ws, &repo, req)
}

/// Answer a message.
pub fn reply(ws: &Workspace, input: ReplyInput) -> Result<Sent> {
    let repo = ws.repo();
    message::validate_persona(&input.from)?;
    let log = mail_log(ws, &repo)?;
    let parent = ops::with_view(&log, |view| ops::find(&log, view, &input.id))?;
    let mut to: Vec<String> = vec![parent.event.actor.clone()];
    if input.all {
        to.extend(parent.data.to.iter().cloned());
    }
    let mut to: Vec<String> = to.into_iter().filter(|r| *r != input.from).collect();
    to.dedup();
    if to.is_empty() {
        to = parent.data.to.clone();
    }
    let mut req = SendRequest {
        from: input.from,
        to,
        subject: input
            .subject
            .unwrap_or_else(|| message::reply_subject(&parent.data.subject)),
        msg_type: "response".into(),
        in_reply_to: Some(parent.id.to_hex()),
        ..SendRequest::default()
    };
    message::validate_subject(&req.subject)?;
    fill(&mut req, input.compose, Utc::now())?;
    finish(ws, &repo, req)
}

/// A listing with the warnings its persona check gave.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    #[serde(flatten)]
    pub list: ListOut,
    /// Names nobody knows (the call went ahead): data, so that every frontend can show them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<UnknownName>,
}

/// `persona`'s mailbox as `filter` selects it (`mail inbox`).
pub fn inbox(ws: &Workspace, persona: &str, filter: &Filter) -> Result<Listing> {
    let repo = ws.repo();
    let warnings = check_persona(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    let now = Utc::now();
    let list = ops::with_view(&log, |view| {
        let mut list = out::inbox(view, persona, filter, now)?;
        out::sign_listing(&repo, view, &mut list.messages)?;
        Ok(list)
    })?;
    Ok(Listing { list, warnings })
}

/// What `persona` sent, newest first (`mail sent`).
pub fn sent(ws: &Workspace, persona: &str, limit: Option<usize>) -> Result<Listing> {
    let repo = ws.repo();
    let warnings = check_persona(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    let list = ops::with_view(&log, |view| {
        let mut list = out::sent(view, persona, limit, Utc::now())?;
        out::sign_listing(&repo, view, &mut list.messages)?;
        Ok(list)
    })?;
    Ok(Listing { list, warnings })
}

/// One message (`mail show`, `mail read`).
#[derive(Debug, Clone, Serialize)]
pub struct One {
    pub version: u32,
    pub message: MessageOut,
    /// Names nobody knows (the call went ahead): data, so that every frontend can show them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<UnknownName>,
}

/// A message with `persona`'s state of it (when given), without marking it.
pub fn show(ws: &Workspace, id: &str, persona: Option<&str>) -> Result<One> {
    let repo = ws.repo();
    let warnings = check_optional(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    let now = Utc::now();
    let message = ops::with_view(&log, |view| {
        let msg = ops::find(&log, view, id)?;
        let mut m = out::detail(view, &msg, persona, now)?;
        out::sign_messages(&repo, view, std::slice::from_mut(&mut m))?;
        Ok(m)
    })?;
    Ok(One {
        version: JSON_VERSION,
        message,
        warnings,
    })
}

/// A message, marked read for `persona`; its state is shown as it is after reading.
pub fn read(ws: &Workspace, id: &str, persona: &str) -> Result<One> {
    let repo = ws.repo();
    let warnings = check_persona(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    let now = Utc::now();
    let message = ops::with_view(&log, |view| {
        let msg = ops::find(&log, view, id)?;
        let mut out = out::detail(view, &msg, Some(persona), now)?;
        out::sign_messages(&repo, view, std::slice::from_mut(&mut out))?;
        ops::set_mark(&log, view, persona, &msg.id, Mark::Read)?;
        if let Some(s) = &mut out.state {
            if s.unread {
                s.unread = false;
                s.read_at = Some(crate::store::eventlog::event::now_rfc3339());
            }
        }
        Ok(out)
    })?;
    Ok(One {
        version: JSON_VERSION,
        message,
        warnings,
    })
}

/// The whole conversation a message (or a thread name) belongs to, in order (`mail thread`).
pub fn thread(ws: &Workspace, id: &str, persona: Option<&str>) -> Result<Listing> {
    let repo = ws.repo();
    let warnings = check_optional(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    let now = Utc::now();
    let messages = ops::with_view(&log, |view| {
        let mut messages = out::thread(&log, view, id, persona, now)?;
        out::sign_messages(&repo, view, &mut messages)?;
        Ok(messages)
    })?;
    Ok(Listing {
        list: ListOut {
            version: JSON_VERSION,
            persona: persona.map(str::to_owned),
            messages,
        },
        warnings,
    })
}

/// A mark set by a persona on a message (`mail archive`, `trash`, `tag add`, …).
#[derive(Debug, Clone, Serialize)]
pub struct Marked {
    pub version: u32,
    pub message: String,
    pub persona: String,
    /// The mark's name: `read`, `archive`, `tag`, …
    pub action: String,
    /// False when the message already was in that state (nothing was written).
    pub changed: bool,
    /// Names nobody knows (the call went ahead): data, so that every frontend can show them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<UnknownName>,
}

/// Set `mark` on the message `id` for `persona`; writes nothing when it is already so.
pub fn mark(ws: &Workspace, id: &str, persona: &str, mark: Mark) -> Result<Marked> {
    let repo = ws.repo();
    let warnings = check_persona(ws, &repo, persona)?;
    if let Mark::Tag(t) | Mark::Untag(t) = &mark {
        crate::kit::names::validate_name("tag", t)?;
    }
    let log = mail_log(ws, &repo)?;
    let (full, changed) = ops::with_view(&log, |view| {
        let full = ops::find(&log, view, id)?.id;
        let changed = ops::set_mark(&log, view, persona, &full, mark.clone())?.is_some();
        Ok((full, changed))
    })?;
    Ok(Marked {
        version: JSON_VERSION,
        message: full.to_hex(),
        persona: persona.to_owned(),
        action: mark.kind().trim_start_matches("mail.").to_owned(),
        changed,
        warnings,
    })
}

/// The tags of a message (`mail tag ls`).
#[derive(Debug, Clone, Serialize)]
pub struct Tags {
    pub version: u32,
    pub message: String,
    /// The sender's tags, part of the message.
    pub sender: Vec<String>,
    pub persona: Option<String>,
    /// The persona's own tags.
    pub tags: Vec<String>,
    /// Names nobody knows (the call went ahead): data, so that every frontend can show them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<UnknownName>,
}

/// The sender's tags of a message and, with a persona, that persona's own.
pub fn tags(ws: &Workspace, id: &str, persona: Option<&str>) -> Result<Tags> {
    let repo = ws.repo();
    let warnings = check_optional(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    ops::with_view(&log, |view| {
        let msg = ops::find(&log, view, id)?;
        let tags = match persona {
            Some(p) => view.marks(p, &msg.id.to_hex())?.tags.into_iter().collect(),
            None => Vec::new(),
        };
        Ok(Tags {
            version: JSON_VERSION,
            message: msg.id.to_hex(),
            sender: msg.data.tags.clone(),
            persona: persona.map(str::to_owned),
            tags,
            warnings: warnings.clone(),
        })
    })
}

/// A claim's outcome (`mail claim`).
#[derive(Debug, Clone, Serialize)]
pub struct Claimed {
    pub version: u32,
    #[serde(flatten)]
    pub report: ClaimReport,
    /// Names nobody knows (the call went ahead): data, so that every frontend can show them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<UnknownName>,
}

impl Claimed {
    /// Whether `persona` holds the message now.
    pub fn won(&self) -> bool {
        matches!(self.report.outcome, claim::Outcome::Won { .. })
    }
}

/// Claim a group message for `persona`; with `sync`, through the lock on `remote` (default: the
/// coordination remote), and final when it returns.
pub fn claim(
    ws: &Workspace,
    id: &str,
    persona: &str,
    sync: bool,
    remote: Option<&str>,
) -> Result<Claimed> {
    let repo = ws.repo();
    let warnings = check_persona(ws, &repo, persona)?;
    let log = mail_log(ws, &repo)?;
    let report = if sync {
        let remote = match remote {
            Some(r) => r.to_owned(),
            None => crate::store::sync::default_remote(&repo)?,
        };
        claim::claim_synced(&log, &remote, persona, id)?
    } else {
        claim::claim(&log, persona, id)?
    };
    Ok(Claimed {
        version: JSON_VERSION,
        report,
        warnings,
    })
}

/// Messages and unread messages per persona, and the oldest unanswered request (`mail stats`).
pub fn stats(ws: &Workspace) -> Result<ops::Stats> {
    let repo = ws.repo();
    let log = mail_log(ws, &repo)?;
    // The counts a long-running frontend (the MCP server) keeps warm for the same tips.
    Ok(ops::stats_of(&ops::tally(&log, Utc::now())?))
}

/// A message's file attachment, by the message's id (or a unique prefix) and the file's name
/// (`mail attachment`, the web's download link).
pub fn attachment(ws: &Workspace, id: &str, name: &str) -> Result<Vec<u8>> {
    let repo = ws.repo();
    let log = mail_log(ws, &repo)?;
    let msg = ops::with_view(&log, |view| ops::find(&log, view, id))?;
    ops::attachment(&repo, &msg, name)
}

/// The mail log's tips, local and remote-tracking: the mailboxes change only when these move (a frontend
/// that waits for mail looks again then). Empty when nothing was ever sent here.
pub fn tips(ws: &Workspace) -> Result<Vec<gix::ObjectId>> {
    ops::log(&ws.repo())?.tips()
}

/// How many messages each of `personas` has unread at `now` (what `mail inbox --unread` lists then; a
/// tick plans at the time it is given), in one read of the view; empty when nothing was ever sent.
pub fn unread_counts(
    ws: &Workspace,
    personas: &[String],
    now: DateTime<Utc>,
) -> Result<BTreeMap<String, usize>> {
    let repo = ws.repo();
    let log = mail_log(ws, &repo)?;
    if log.tips()?.is_empty() {
        return Ok(BTreeMap::new());
    }
    ops::with_view(&log, |view| {
        personas
            .iter()
            .map(|p| Ok((p.clone(), ops::unread(view, p, now)?.len())))
            .collect()
    })
}

/// A message from a tool acting on the repository (`tick`'s alerts), not from a persona: checked as every
/// message is, but its sender is the tool's name, so no persona check applies and nothing is warned about.
pub fn notice(ws: &Workspace, req: SendRequest) -> Result<Sent> {
    let appended = notice_in(&ws.repo(), req)?;
    Ok(Sent {
        version: JSON_VERSION,
        id: appended.id.to_hex(),
        commit: appended.commit.to_string(),
        lamport: appended.lamport,
        warnings: Vec::new(),
    })
}

/// Import a seed-000 `events.jsonl` (its text); importing twice adds nothing (`mail import`).
pub fn import_jsonl(ws: &Workspace, text: &str) -> Result<ImportReport> {
    let repo = ws.repo();
    super::jsonl::import_jsonl(&ops::log(&repo)?, &Groups::load(&repo)?, text)
}

/// Import a seed-003 maildir; importing twice adds nothing (`mail import --maildir`).
pub fn import_maildir(ws: &Workspace, dir: &Path) -> Result<ImportReport> {
    let repo = ws.repo();
    super::maildir::import::import_maildir(&ops::log(&repo)?, &Groups::load(&repo)?, dir)
}

/// Export every mailbox as a seed-003 maildir into `dir` (new or empty, unless `force`) (`mail export`).
pub fn export_maildir(ws: &Workspace, dir: &Path, force: bool) -> Result<ExportReport> {
    super::maildir::export::export_maildir(&ops::log(&ws.repo())?, dir, force)
}

/// Whether the next search builds its index from the whole log first (once per clone): a frontend may
/// say so before it waits.
pub fn search_needs_index(ws: &Workspace) -> Result<bool> {
    Ok(super::search::index::needs_build(&ops::log(&ws.repo())?))
}

// What other capabilities of the library use. They hold a repository (not a `Workspace`: their own use
// cases take one), mail as a tool rather than as a persona (no persona checks, no warnings), and read
// counts and headers rather than documents: crate-internal, so that no frontend takes these ways around the
// use cases above.

/// The event of a notice (checked, nothing written), for a capability that appends it with others or
/// later ([`append`]): weave's mails, a series review.
pub(crate) fn notice_event(groups: &Groups, req: SendRequest) -> Result<NewEvent> {
    ops::build_send(req, groups)
}

/// Append notices built by [`notice_event`] in one append, in order.
pub(crate) fn append(repo: &gix::Repository, events: Vec<NewEvent>) -> Result<Vec<Appended>> {
    ops::append(&ops::log(repo)?, events)
}

/// Send one notice (a lease's alert): [`notice`] for a capability that holds a repository.
pub(crate) fn notice_in(repo: &gix::Repository, req: SendRequest) -> Result<Appended> {
    ops::send(&ops::log(repo)?, req, &Groups::load(repo)?)
}

/// Whether each thread has a message already (weave's idempotent mails); all false without a mail log.
pub(crate) fn threads_exist(repo: &gix::Repository, threads: &[String]) -> Result<Vec<bool>> {
    let log = ops::log(repo)?;
    if log.local_tip()?.is_none() && log.remote_tips()?.is_empty() {
        return Ok(vec![false; threads.len()]);
    }
    ops::with_view(&log, |v| {
        threads
            .iter()
            .map(|t| Ok(!v.thread(t)?.is_empty()))
            .collect()
    })
}

/// The headers of `persona`'s unread messages (what `mail inbox --unread` lists), for the prompt's and
/// a session's mailbox summary; empty without a mail log.
pub(crate) fn unread_headers(
    repo: &gix::Repository,
    persona: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Header>> {
    let log = ops::log(repo)?;
    if log.tips()?.is_empty() {
        return Ok(Vec::new());
    }
    let items = ops::with_view(&log, |view| ops::unread(view, persona, now))?;
    Ok(items.into_iter().map(|i| i.header).collect())
}

/// Every persona's counts in one pass (the fleet page), kept warm with `warm` (see `ops::tally`); `None`
/// without a mail log.
pub(crate) fn tally(
    repo: &gix::Repository,
    warm: Option<std::sync::Arc<crate::store::eventlog::warm::WarmViews>>,
    now: DateTime<Utc>,
) -> Result<Option<Tally>> {
    let log = ops::log(repo)?.with_warm(warm);
    if log.tips()?.is_empty() {
        return Ok(None);
    }
    ops::tally(&log, now).map(Some)
}

/// The newest `n` messages carrying the sender's tag `tag`, newest first, without bodies or states (the
/// weave page's mails); empty without a mail log.
pub(crate) fn tagged(
    repo: &gix::Repository,
    tag: &str,
    n: usize,
    now: DateTime<Utc>,
) -> Result<Vec<MessageOut>> {
    let log = ops::log(repo)?;
    if log.tips()?.is_empty() {
        return Ok(Vec::new());
    }
    ops::with_view(&log, |view| {
        // The view's tag index, not every header: at 100,000 messages reading them all took ~0.5 s.
        let headers = view.tagged(tag, n)?;
        let abbrev = view.abbrev()?;
        Ok(headers
            .iter()
            .map(|h| MessageOut::new(h, None, None, None, abbrev, now))
            .collect())
    })
}
