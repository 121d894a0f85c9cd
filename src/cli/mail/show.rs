//! `git jules mail read`, `show` and `thread`.

use git_jules::mail::api;

use super::{MessageOut, PersonaArg};
use crate::cli::context::Context;
use crate::cli::ui;

#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// The message (an id or unique prefix)
    pub id: String,
    #[command(flatten)]
    pub persona: PersonaArg,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The message (an id or unique prefix)
    pub id: String,
    /// Also show this persona's state of the message (default: $JULES_PERSONA)
    #[command(flatten)]
    pub persona: PersonaArg,
}

#[derive(Debug, clap::Args)]
pub struct ThreadArgs {
    /// Any message of the thread (an id or unique prefix)
    pub id: String,
    #[command(flatten)]
    pub persona: PersonaArg,
}

fn print(ctx: &Context, m: &MessageOut) {
    let line = |k: &str, v: &str| ui::out(format!("{:<18} {v}", format!("{k}:")));
    ui::out(ctx.ui.yellow(&format!("message {}", m.id)));
    line("From", &m.from);
    let mut to = Vec::new();
    for r in &m.to {
        match m.groups.get(r) {
            Some(members) => to.push(format!("{r} ({})", members.join(", "))),
            None => to.push(r.clone()),
        }
    }
    line("To", &to.join(", "));
    line("Date", &m.time);
    line("Subject", &ctx.ui.bold(&m.subject));
    line("Type", &format!("{}, priority {}", m.msg_type, m.priority));
    if !m.tags.is_empty() {
        line("Tags", &m.tags.join(", "));
    }
    if m.needs_response {
        line("Needs-Response", "yes");
    }
    if let Some(r) = &m.in_reply_to {
        line("In-Reply-To", r);
    }
    if m.thread != m.id {
        line("Thread", &m.thread);
    }
    if let Some(e) = &m.expires {
        line(
            "Expires",
            &format!("{e}{}", if m.expired { " (expired)" } else { "" }),
        );
    }
    if let Some(c) = &m.claim {
        line(
            "Claimed-By",
            &format!(
                "{}{}",
                c.persona,
                if c.lock { "" } else { " (provisional)" }
            ),
        );
    }
    for u in &m.urls {
        line("Attachment", u);
    }
    for f in &m.files {
        line("Attachment", &format!("{} ({} bytes)", f.name, f.size));
    }
    if let Some(s) = &m.state {
        let mut st = vec![if s.unread { "unread" } else { "read" }.to_owned()];
        if s.archived {
            st.push("archived".into());
        }
        if s.trashed {
            st.push("trashed".into());
        }
        if !s.tags.is_empty() {
            st.push(format!("tags {}", s.tags.join(", ")));
        }
        line(&format!("State ({})", s.persona), &st.join(", "));
    }
    ui::out("");
    if let Some(b) = &m.body {
        ui::out(b.trim_end_matches('\n'));
    }
}

pub fn show(ctx: &Context, repo: &gix::Repository, a: ShowArgs) -> anyhow::Result<i32> {
    let persona = a.persona.persona.as_deref();
    if let Some(p) = persona {
        git_jules::mail::message::validate_persona(p)?;
    }
    let one = api::show(&ctx.workspace_of(repo.clone()), &a.id, persona)?;
    emit(ctx, one);
    Ok(0)
}

fn emit(ctx: &Context, one: api::One) {
    super::warn_unknown(&one.warnings);
    if ctx.ui.json {
        ui::json(&one);
    } else {
        print(ctx, &one.message);
    }
}

pub fn read(ctx: &Context, repo: &gix::Repository, a: ReadArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    let one = api::read(&ctx.workspace_of(repo.clone()), &a.id, &persona)?;
    emit(ctx, one);
    Ok(0)
}

pub fn thread(ctx: &Context, repo: &gix::Repository, a: ThreadArgs) -> anyhow::Result<i32> {
    let persona = a.persona.persona.as_deref();
    if let Some(p) = persona {
        git_jules::mail::message::validate_persona(p)?;
    }
    let listing = api::thread(&ctx.workspace_of(repo.clone()), &a.id, persona)?;
    super::warn_unknown(&listing.warnings);
    if ctx.ui.json {
        ui::json(&listing);
    } else {
        for (i, m) in listing.list.messages.iter().enumerate() {
            if i > 0 {
                ui::out(ctx.ui.dim(&"-".repeat(60)));
            }
            print(ctx, m);
        }
    }
    Ok(0)
}
