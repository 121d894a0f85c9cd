//! `git jules mail …`: the personas' mailboxes. This module only dispatches and holds what the commands
//! share: the persona argument; the JSON shapes are `git_jules::capabilities::mail::api`'s (docs/mail.md, version 1).

mod claim;
mod list;
mod mark;
mod search;
mod send;
mod show;
mod transfer;
mod wait;

use git_jules::capabilities::mail::{message, when};
// The JSON shapes live in the library, so that every frontend (`git jules web` too) serialises the same types.
pub use git_jules::capabilities::mail::api::MessageOut;

use crate::frontends::context::Context;
use crate::frontends::ui;

pub use git_jules::JSON_VERSION;

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum MailCommand {
    /// Send a message; prints its id
    Send(send::SendArgs),
    /// Answer a message: to its sender (with --all, to everyone it went to), in its thread
    Reply(send::ReplyArgs),
    /// List a persona's mailbox: urgent first, then newest; `*` marks unread
    Inbox(list::InboxArgs),
    /// Show a message and mark it read for the persona
    Read(show::ReadArgs),
    /// Show a message without marking it
    Show(show::ShowArgs),
    /// List what a persona sent, newest first
    Sent(list::SentArgs),
    /// Show a whole conversation in order
    Thread(show::ThreadArgs),
    /// Search every message (or a persona's mailbox): words, "phrases", prefix*, s: f: t: b:, OR, -word
    Search(search::SearchArgs),
    /// Add, remove or list a persona's tags on a message
    #[command(subcommand)]
    Tag(mark::TagCommand),
    /// Mark a message unread again
    Unread(mark::MarkArgs),
    /// Move a message to the persona's trash
    Trash(mark::MarkArgs),
    /// Take a message out of the trash
    Untrash(mark::MarkArgs),
    /// Archive a message (it leaves the inbox)
    Archive(mark::MarkArgs),
    /// Bring an archived message back to the inbox
    Unarchive(mark::MarkArgs),
    /// Claim a group message: exactly one recipient wins
    Claim(claim::ClaimArgs),
    /// Block until the persona has unread mail; exit 1 on timeout
    Wait(wait::WaitArgs),
    /// Messages and unread messages per persona, the oldest unanswered request
    Stats,
    /// Import a seed-000 events.jsonl or a seed-003 maildir; importing twice adds nothing
    Import(transfer::ImportArgs),
    /// Export the mailboxes as a seed-003 maildir, byte-for-byte stable
    Export(transfer::ExportArgs),
    /// Write a message's file attachment to stdout or a file
    Attachment(transfer::AttachmentArgs),
}

pub fn run(ctx: &Context, cmd: MailCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    match cmd {
        MailCommand::Send(a) => send::send(ctx, &repo, a),
        MailCommand::Reply(a) => send::reply(ctx, &repo, a),
        MailCommand::Inbox(a) => list::inbox(ctx, &repo, a),
        MailCommand::Read(a) => show::read(ctx, &repo, a),
        MailCommand::Show(a) => show::show(ctx, &repo, a),
        MailCommand::Sent(a) => list::sent(ctx, &repo, a),
        MailCommand::Thread(a) => show::thread(ctx, &repo, a),
        MailCommand::Search(a) => search::run(ctx, &repo, a),
        MailCommand::Tag(c) => mark::tag(ctx, &repo, c),
        MailCommand::Unread(a) => mark::mark(ctx, &repo, a, mark::Simple::Unread),
        MailCommand::Trash(a) => mark::mark(ctx, &repo, a, mark::Simple::Trash),
        MailCommand::Untrash(a) => mark::mark(ctx, &repo, a, mark::Simple::Untrash),
        MailCommand::Archive(a) => mark::mark(ctx, &repo, a, mark::Simple::Archive),
        MailCommand::Unarchive(a) => mark::mark(ctx, &repo, a, mark::Simple::Unarchive),
        MailCommand::Claim(a) => claim::run(ctx, &repo, a),
        MailCommand::Wait(a) => wait::run(ctx, &repo, a),
        MailCommand::Stats => transfer::stats(ctx, &repo),
        MailCommand::Import(a) => transfer::import(ctx, &repo, a),
        MailCommand::Export(a) => transfer::export(ctx, &repo, a),
        MailCommand::Attachment(a) => transfer::attachment(ctx, &repo, a),
    }
}

// `--persona P`, else `$JULES_PERSONA`. (A plain comment: a doc comment on a flattened struct becomes the
// about of every deferred subcommand that flattens it, over the subcommand's own.)
#[derive(Debug, Clone, clap::Args)]
pub struct PersonaArg {
    /// The persona whose mailbox this is (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

impl PersonaArg {
    /// The persona, checked against the ones the repository knows (see
    /// [`git_jules::capabilities::mail::api::check_names`]); an unknown name is a warning.
    pub fn checked(&self, ctx: &Context, repo: &gix::Repository) -> anyhow::Result<String> {
        let p = self.required()?;
        let ws = ctx.workspace_of(repo.clone());
        warn_unknown(
            &ctx.ui,
            &git_jules::capabilities::mail::api::check_persona(&ws, repo, &p)?,
        );
        Ok(p)
    }

    pub fn checked_optional(
        &self,
        ctx: &Context,
        repo: &gix::Repository,
    ) -> anyhow::Result<Option<String>> {
        match &self.persona {
            Some(_) => Ok(Some(self.checked(ctx, repo)?)),
            None => Ok(None),
        }
    }

    /// The persona as given (or from `$JULES_PERSONA`); the use cases check it.
    pub fn required(&self) -> anyhow::Result<String> {
        let p = self.persona.clone().ok_or_else(|| {
            git_jules::Error::usage("no persona: pass --persona or set JULES_PERSONA")
        })?;
        message::validate_persona(&p)?;
        Ok(p)
    }
}

/// Warn about names nobody knows (a use case returned them: they did not stop it).
/// (The words are the library's, which the web view and the MCP server show too.)
pub fn warn_unknown(ui: &ui::Ui, names: &[git_jules::capabilities::mail::api::UnknownName]) {
    for n in names {
        ui.warn(n.to_string());
    }
}

/// `2026-01-28 15:30` from a stored time.
pub fn short_time(stored: &str) -> String {
    when::parse_stored(stored)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| stored.to_owned())
}

/// The binary also answers as `jules-mail` (a link or a shim installed by the README's install step), so
/// prompts written for seed 000 keep working: `jules-mail inbox --persona X` is `git jules mail inbox
/// --persona X`. Any other program name leaves the arguments as they are.
pub fn jules_mail_args(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let called_as_jules_mail = args.first().is_some_and(|a0| {
        std::path::Path::new(a0)
            .file_name()
            .is_some_and(|n| n == "jules-mail")
    });
    if called_as_jules_mail {
        args[0] = "git-jules".into();
        args.insert(1, "mail".into());
    }
    args
}
