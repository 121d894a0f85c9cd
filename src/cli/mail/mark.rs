//! The per-persona marks: `tag`, `unread`, `trash`, `untrash`, `archive`, `unarchive`.

use git_jules::mail::api;
use git_jules::mail::api::Mark;

use super::PersonaArg;
use crate::cli::context::Context;
use crate::cli::ui;

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
    super::warn_unknown(&done.warnings);
    if ctx.ui.json {
        ui::json(&done);
    } else if done.changed {
        ui::status(format!(
            "{}: {} for {persona}",
            done.action,
            &done.message[..12]
        ));
    } else {
        let state = match &mark {
            Mark::Read => "read".to_owned(),
            Mark::Unread => "unread".to_owned(),
            Mark::Tag(t) => format!("tagged {t}"),
            Mark::Untag(t) => format!("not tagged {t}"),
            Mark::Trash => "in the trash".to_owned(),
            Mark::Untrash => "not in the trash".to_owned(),
            Mark::Archive => "archived".to_owned(),
            Mark::Unarchive => "not archived".to_owned(),
        };
        ui::status(format!(
            "{} is already {state} for {persona}; nothing changed",
            &done.message[..12]
        ));
    }
    Ok(0)
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
                git_jules::mail::message::validate_persona(p)?;
            }
            let out = api::tags(&ctx.workspace_of(repo.clone()), &a.id, persona)?;
            super::warn_unknown(&out.warnings);
            if ctx.ui.json {
                ui::json(&out);
            } else {
                for t in &out.tags {
                    ui::out(t);
                }
                for t in &out.sender {
                    if !out.tags.contains(t) {
                        ui::out(format!("{t} {}", ctx.ui.dim("(sender)")));
                    }
                }
            }
            Ok(0)
        }
    }
}
