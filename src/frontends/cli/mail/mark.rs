//! The per-persona marks: `tag`, `unread`, `trash`, `untrash`, `archive`, `unarchive`.

use std::io::Write;

use git_jules::capabilities::mail::api;
use git_jules::capabilities::mail::api::Mark;

use serde::Serialize;

use super::PersonaArg;
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
pub struct MarkArgs {
    /// The message (an id or unique prefix)
    pub id: String,
    #[command(flatten)]
    pub persona: PersonaArg,
}

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum TagCommand {
    /// Tag a message for the persona
    Add(TagArgs),
    /// Remove the persona's tag from a message
    Rm(TagArgs),
    /// List the sender's and the persona's tags of a message
    Ls(MarkArgs),
}

#[derive(Debug, clap::Args)]
pub struct TagArgs {
    /// The message (an id or unique prefix)
    pub id: String,
    pub tag: String,
    #[command(flatten)]
    pub persona: PersonaArg,
}

#[derive(Debug, Clone, Copy)]
pub enum Simple {
    Unread,
    Trash,
    Untrash,
    Archive,
    Unarchive,
}

fn apply(
    ctx: &Context,
    repo: &gix::Repository,
    id: &str,
    persona: &PersonaArg,
    mark: Mark,
) -> anyhow::Result<i32> {
    let persona = persona.required()?;
    let done = api::mark(&ctx.workspace_of(repo.clone()), id, &persona, mark.clone())?;
    ctx.ui.print(&MarkDone { done, mark });
    Ok(0)
}

/// A mark set (or found already set): a status line for a person; the library's `Marked` in JSON.
struct MarkDone {
    done: api::Marked,
    mark: Mark,
}

impl Serialize for MarkDone {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.done.serialize(s)
    }
}

impl Print for MarkDone {
    fn warnings(&self) -> Vec<String> {
        self.done.warnings.iter().map(ToString::to_string).collect()
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        let done = &self.done;
        let persona = &done.persona;
        if done.changed {
            return vec![format!(
                "{}: {} for {persona}",
                done.action,
                &done.message[..12]
            )];
        }
        let state = match &self.mark {
            Mark::Read => "read".to_owned(),
            Mark::Unread => "unread".to_owned(),
            Mark::Tag(t) => format!("tagged {t}"),
            Mark::Untag(t) => format!("not tagged {t}"),
            Mark::Trash => "in the trash".to_owned(),
            Mark::Untrash => "not in the trash".to_owned(),
            Mark::Archive => "archived".to_owned(),
            Mark::Unarchive => "not archived".to_owned(),
        };
        vec![format!(
            "{} is already {state} for {persona}; nothing changed",
            &done.message[..12]
        )]
    }
}

/// `mail tag ls`: the persona's tags, then the sender's it does not have, marked; the library's `Tags`
/// in JSON.
impl Print for api::Tags {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for t in &self.tags {
            writeln!(out, "{t}")?;
        }
        for t in &self.sender {
            if !self.tags.contains(t) {
                writeln!(out, "{t} {}", style.dim("(sender)"))?;
            }
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.iter().map(ToString::to_string).collect()
    }
}

pub fn mark(
    ctx: &Context,
    repo: &gix::Repository,
    a: MarkArgs,
    what: Simple,
) -> anyhow::Result<i32> {
    let mark = match what {
        Simple::Unread => Mark::Unread,
        Simple::Trash => Mark::Trash,
        Simple::Untrash => Mark::Untrash,
        Simple::Archive => Mark::Archive,
        Simple::Unarchive => Mark::Unarchive,
    };
    apply(ctx, repo, &a.id, &a.persona, mark)
}

pub fn tag(ctx: &Context, repo: &gix::Repository, cmd: TagCommand) -> anyhow::Result<i32> {
    match cmd {
        TagCommand::Add(a) => apply(ctx, repo, &a.id, &a.persona, Mark::Tag(a.tag.clone())),
        TagCommand::Rm(a) => apply(ctx, repo, &a.id, &a.persona, Mark::Untag(a.tag.clone())),
        TagCommand::Ls(a) => {
            let persona = a.persona.persona.as_deref();
            if let Some(p) = persona {
                git_jules::capabilities::mail::message::validate_persona(p)?;
            }
            ctx.ui
                .print(&api::tags(&ctx.workspace_of(repo.clone()), &a.id, persona)?);
            Ok(0)
        }
    }
}
