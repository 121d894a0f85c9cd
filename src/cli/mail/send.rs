//! `git jules mail send` and `git jules mail reply`.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use git_jules::mail::recipients::Groups;
use git_jules::mail::{message, ops, when, Priority, SendRequest};
use git_jules::Error;
use serde::Serialize;

use super::{Context, JSON_VERSION};
use crate::cli::ui;

// What every new message can carry besides its recipients and subject. (A plain comment, as on PersonaArg.)
#[derive(Debug, clap::Args)]
#[group(skip)]
pub struct Compose {
    /// The body (default: --body-file, else stdin; at most 128 KiB of UTF-8)
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the body from FILE (`-`: stdin)
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// status, alert, task, question, response, report, handoff or conflict (send: status, reply: response)
    #[arg(long = "type", value_name = "TYPE")]
    pub msg_type: Option<String>,
    #[arg(long, value_parser = ["urgent", "normal", "low"], value_name = "PRIORITY")]
    pub priority: Option<String>,
    /// A tag on the message (repeatable)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// The sender expects an answer
    #[arg(long)]
    pub needs_response: bool,
    /// Drop out of the views after WHEN: a duration (30m, 2h, 3d, 1w) or a time
    #[arg(long, value_name = "WHEN")]
    pub expires: Option<String>,
    /// A link (kept as given) or a file (stored in the log) to attach (repeatable)
    #[arg(long = "attach", value_name = "URL_OR_FILE")]
    pub attach: Vec<String>,
}

#[derive(Debug, clap::Args)]
#[group(skip)]
pub struct SendArgs {
    /// A persona, a group, or __broadcast (repeatable)
    #[arg(long = "to", value_name = "RECIPIENT", required = true)]
    pub to: Vec<String>,
    /// The sender (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub from: Option<String>,
    /// One line (required unless --reply-to, which defaults it to "Re: …")
    #[arg(long)]
    pub subject: Option<String>,
    /// The message this answers (an id or unique prefix)
    #[arg(long = "reply-to", value_name = "ID")]
    pub reply_to: Option<String>,
    /// Put the message in a thread: a message id (its thread) or a thread name
    #[arg(long, value_name = "ID_OR_NAME")]
    pub thread: Option<String>,
    #[command(flatten)]
    pub compose: Compose,
}

#[derive(Debug, clap::Args)]
pub struct ReplyArgs {
    /// The message to answer (an id or unique prefix)
    pub id: String,
    /// The sender (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub from: Option<String>,
    /// Answer everyone the message went to, not only its sender
    #[arg(long)]
    pub all: bool,
    /// Default: "Re: " and the original subject
    #[arg(long)]
    pub subject: Option<String>,
    #[command(flatten)]
    pub compose: Compose,
}

#[derive(Serialize)]
struct SentOut {
    version: u32,
    id: String,
    commit: String,
    lamport: u64,
}

fn sender(from: &Option<String>) -> anyhow::Result<String> {
    let f = from
        .clone()
        .ok_or_else(|| Error::usage("no sender: pass --from or set JULES_PERSONA"))?;
    message::validate_persona(&f)?;
    Ok(f)
}

fn read_body(c: &Compose) -> anyhow::Result<String> {
    if let Some(b) = &c.body {
        return Ok(b.clone());
    }
    let mut bytes = Vec::new();
    match &c.body_file {
        Some(p) if p.as_os_str() == "-" => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("reading the body from stdin")?;
        }
        Some(p) => {
            bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        }
        None if std::io::stdin().is_terminal() => {
            return Err(Error::usage(
                "no body: give --body TEXT, --body-file FILE, or pipe it on stdin",
            )
            .into())
        }
        None => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("reading the body from stdin")?;
        }
    }
    Ok(message::utf8(bytes, "the body")?)
}

fn fill(req: &mut SendRequest, c: &Compose) -> anyhow::Result<()> {
    req.body = read_body(c)?;
    message::validate_body(&req.body)?;
    if let Some(t) = &c.msg_type {
        req.msg_type = t.clone();
    }
    if let Some(p) = &c.priority {
        req.priority = Priority::parse(p)?;
    }
    req.tags = c.tags.clone();
    req.needs_response = c.needs_response;
    if let Some(e) = &c.expires {
        let now = chrono::Utc::now();
        let t = when::parse_when(e, now, when::Direction::Future)?;
        if t <= now {
            return Err(Error::usage(format!("--expires {e} is not in the future")).into());
        }
        req.expires = Some(when::format_event_time(t));
    }
    for a in &c.attach {
        if message::is_url(a) {
            req.urls.push(a.clone());
        } else {
            let path = Path::new(a);
            let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                Error::usage(format!("--attach {a:?}: not a link or a file name"))
            })?;
            let bytes = std::fs::read(path).map_err(|e| {
                Error::usage(format!(
                    "--attach {a}: {e} (a link needs a scheme, e.g. https://)"
                ))
            })?;
            req.files.push((name.to_owned(), bytes));
        }
    }
    Ok(())
}

fn finish(
    ctx: &Context,
    log: &git_jules::eventlog::Log<'_>,
    req: SendRequest,
    groups: &Groups,
) -> anyhow::Result<i32> {
    let appended = ops::send(log, req, groups)?;
    if ctx.ui.json {
        ui::json(&SentOut {
            version: JSON_VERSION,
            id: appended.id.to_hex(),
            commit: appended.commit.to_string(),
            lamport: appended.lamport,
        });
    } else {
        ui::out(appended.id.to_hex());
    }
    Ok(0)
}

pub fn send(ctx: &Context, repo: &gix::Repository, a: SendArgs) -> anyhow::Result<i32> {
    let log = ops::log(repo)?;
    let mut req = SendRequest {
        from: sender(&a.from)?,
        to: a.to.clone(),
        msg_type: "status".into(),
        ..SendRequest::default()
    };
    if a.reply_to.is_some() || a.thread.as_deref().is_some_and(looks_like_id) {
        ops::with_view(&log, |view| {
            if let Some(r) = &a.reply_to {
                let parent = ops::find(&log, view, r)?;
                req.in_reply_to = Some(parent.id.to_hex());
                if a.subject.is_none() {
                    req.subject = message::reply_subject(&parent.data.subject);
                }
            }
            if let Some(t) = a.thread.as_deref().filter(|t| looks_like_id(t)) {
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
    if let Some(t) = a.thread.as_deref().filter(|t| !looks_like_id(t)) {
        req.thread = Some(t.to_owned());
    }
    match &a.subject {
        Some(s) => req.subject = s.clone(),
        None if req.in_reply_to.is_some() => {}
        None => return Err(Error::usage("no subject: pass --subject").into()),
    }
    message::validate_subject(&req.subject)?;
    fill(&mut req, &a.compose)?;
    let names: Vec<&str> = req.to.iter().map(String::as_str).collect();
    let groups = Groups::load(repo)?;
    super::check_names(ctx, repo, &groups, &names, true)?;
    finish(ctx, &log, req, &groups)
}

/// A `--thread` value that names a message rather than a thread: hex digits only, at least 4.
fn looks_like_id(s: &str) -> bool {
    s.len() >= git_jules::abbrev::MIN_ABBREV && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub fn reply(ctx: &Context, repo: &gix::Repository, a: ReplyArgs) -> anyhow::Result<i32> {
    let log = ops::log(repo)?;
    let from = sender(&a.from)?;
    let parent = ops::with_view(&log, |view| ops::find(&log, view, &a.id))?;
    let mut to: Vec<String> = vec![parent.event.actor.clone()];
    if a.all {
        to.extend(parent.data.to.iter().cloned());
    }
    let mut to: Vec<String> = to.into_iter().filter(|r| *r != from).collect();
    to.dedup();
    if to.is_empty() {
        to = parent.data.to.clone();
    }
    let mut req = SendRequest {
        from,
        to,
        subject: a
            .subject
            .clone()
            .unwrap_or_else(|| message::reply_subject(&parent.data.subject)),
        msg_type: "response".into(),
        in_reply_to: Some(parent.id.to_hex()),
        ..SendRequest::default()
    };
    message::validate_subject(&req.subject)?;
    fill(&mut req, &a.compose)?;
    let names: Vec<&str> = req.to.iter().map(String::as_str).collect();
    let groups = Groups::load(repo)?;
    super::check_names(ctx, repo, &groups, &names, true)?;
    finish(ctx, &log, req, &groups)
}
