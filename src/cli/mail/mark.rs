//! The per-persona marks: `tag`, `unread`, `trash`, `untrash`, `archive`, `unarchive`.

use git_jules::mail::ops::{self, Mark};
use serde::Serialize;

use super::{Context, PersonaArg, JSON_VERSION};
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

#[derive(Serialize)]
struct MarkOut {
    version: u32,
    message: String,
    persona: String,
    action: String,
    /// False when the message already was in that state (nothing was written).
    changed: bool,
}

fn apply(
    ctx: &Context,
    repo: &gix::Repository,
    id: &str,
    persona: &PersonaArg,
    mark: Mark,
) -> anyhow::Result<i32> {
    let persona = persona.checked(ctx, repo)?;
    let log = ops::log(repo)?;
    let (full, changed) = ops::with_view(&log, |view| {
        let full = ops::find(&log, view, id)?.id;
        let changed = ops::set_mark(&log, view, &persona, &full, mark.clone())?.is_some();
        Ok((full, changed))
    })?;
    let action = mark.kind().trim_start_matches("mail.").to_owned();
    if ctx.ui.json {
        ui::json(&MarkOut {
            version: JSON_VERSION,
            message: full.to_hex(),
            persona,
            action,
            changed,
        });
    } else if changed {
        ui::status(format!("{action}: {} for {persona}", full.short(12)));
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
            full.short(12)
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

#[derive(Serialize)]
struct TagsOut {
    version: u32,
    message: String,
    /// The sender's tags, part of the message.
    sender: Vec<String>,
    persona: Option<String>,
    /// The persona's own tags.
    tags: Vec<String>,
}

pub fn tag(ctx: &Context, repo: &gix::Repository, cmd: TagCommand) -> anyhow::Result<i32> {
    match cmd {
        TagCommand::Add(a) => {
            git_jules::names::validate_name("tag", &a.tag)?;
            apply(ctx, repo, &a.id, &a.persona, Mark::Tag(a.tag.clone()))
        }
        TagCommand::Rm(a) => {
            git_jules::names::validate_name("tag", &a.tag)?;
            apply(ctx, repo, &a.id, &a.persona, Mark::Untag(a.tag.clone()))
        }
        TagCommand::Ls(a) => {
            let persona = a.persona.checked_optional(ctx, repo)?;
            let log = ops::log(repo)?;
            let out = ops::with_view(&log, |view| {
                let msg = ops::find(&log, view, &a.id)?;
                let tags = match &persona {
                    Some(p) => view.marks(p, &msg.id.to_hex())?.tags.into_iter().collect(),
                    None => Vec::new(),
                };
                Ok(TagsOut {
                    version: JSON_VERSION,
                    message: msg.id.to_hex(),
                    sender: msg.data.tags.clone(),
                    persona: persona.clone(),
                    tags,
                })
            })?;
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
