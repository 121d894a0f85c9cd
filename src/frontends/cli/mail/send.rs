//! `git jules mail send` and `git jules mail reply`.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use git_jules::capabilities::mail::{api, message, Priority};
use git_jules::Error;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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

fn sender(from: &Option<String>) -> anyhow::Result<String> {
    Ok(from
        .clone()
        .ok_or_else(|| Error::usage("no sender: pass --from or set JULES_PERSONA"))?)
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

/// The use case's input from the flags; files named by `--attach` are read relative to the current
/// directory, as the shell that expanded them meant.
fn compose(c: &Compose) -> anyhow::Result<api::Compose> {
    Ok(api::Compose {
        body: read_body(c)?,
        msg_type: c.msg_type.clone(),
        priority: c.priority.as_deref().map(Priority::parse).transpose()?,
        tags: c.tags.clone(),
        needs_response: c.needs_response,
        expires: c.expires.clone(),
        attachments: c
            .attach
            .iter()
            .map(|a| api::Attachment::from_arg(Path::new(""), a))
            .collect::<Result<_, _>>()?,
    })
}

fn finish(ctx: &Context, sent: api::Sent) -> anyhow::Result<i32> {
    ctx.ui.print(&sent);
    Ok(0)
}

/// A message sent: its id on stdout, for scripts; unknown names as warnings in both forms.
impl Print for api::Sent {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "{}", self.id)
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.iter().map(ToString::to_string).collect()
    }
}

pub fn send(ctx: &Context, repo: &gix::Repository, a: SendArgs) -> anyhow::Result<i32> {
    let from = sender(&a.from)?;
    message::validate_persona(&from)?;
    let input = api::SendInput {
        from,
        to: a.to,
        subject: a.subject,
        reply_to: a.reply_to,
        thread: a.thread,
        compose: compose(&a.compose)?,
    };
    let sent = api::send(&ctx.workspace_of(repo.clone()), input)?;
    finish(ctx, sent)
}

pub fn reply(ctx: &Context, repo: &gix::Repository, a: ReplyArgs) -> anyhow::Result<i32> {
    let from = sender(&a.from)?;
    message::validate_persona(&from)?;
    let input = api::ReplyInput {
        from,
        id: a.id,
        all: a.all,
        subject: a.subject,
        compose: compose(&a.compose)?,
    };
    let sent = api::reply(&ctx.workspace_of(repo.clone()), input)?;
    finish(ctx, sent)
}
