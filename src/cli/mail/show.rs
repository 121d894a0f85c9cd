//! `git jules mail read`, `show` and `thread`.

use git_jules::mail::api;

use super::{MessageOut, PersonaArg};
use crate::cli::context::Context;

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
    let line = |k: &str, v: &str| ctx.ui.out(format!("{:<18} {v}", format!("{k}:")));
    // Everything but the ids and times comes from the message's sender (or a replica's log): each field
    // goes through `ctx.ui.text`, which escapes it on a terminal.
    let t = |s: &str| ctx.ui.text(s).into_owned();
    ctx.ui.out(ctx.ui.yellow(&format!("message {}", t(&m.id))));
    line("From", &t(&m.from));
    match &m.signature {
        Some(s) if s.is_verified() => line("Signature", &t(&s.describe())),
        Some(s) => line(
            "Signature",
            &ctx.ui.red(&format!("NOT VERIFIED: {}", t(&s.describe()))),
        ),
        None => {}
    }
    let mut to = Vec::new();
    for r in &m.to {
        match m.groups.get(r) {
            Some(members) => to.push(format!("{} ({})", t(r), t(&members.join(", ")))),
            None => to.push(t(r)),
        }
    }
    line("To", &to.join(", "));
    line("Date", &t(&m.time));
    line("Subject", &ctx.ui.bold(&t(&m.subject)));
    line(
        "Type",
        &format!("{}, priority {}", t(&m.msg_type), m.priority),
    );
    if !m.tags.is_empty() {
        line("Tags", &t(&m.tags.join(", ")));
    }
    if m.needs_response {
        line("Needs-Response", "yes");
    }
    if let Some(r) = &m.in_reply_to {
        line("In-Reply-To", &t(r));
    }
    if m.thread != m.id {
        line("Thread", &t(&m.thread));
    }
    if let Some(e) = &m.expires {
        line(
            "Expires",
            &format!("{}{}", t(e), if m.expired { " (expired)" } else { "" }),
        );
    }
    if let Some(c) = &m.claim {
        line(
            "Claimed-By",
            &format!(
                "{}{}",
                t(&c.persona),
                if c.lock { "" } else { " (provisional)" }
            ),
        );
    }
    for u in &m.urls {
        line("Attachment", &t(u));
    }
    for f in &m.files {
        line("Attachment", &format!("{} ({} bytes)", t(&f.name), f.size));
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
            st.push(format!("tags {}", t(&s.tags.join(", "))));
        }
        line(&format!("State ({})", t(&s.persona)), &st.join(", "));
    }
    ctx.ui.out("");
    if let Some(b) = &m.body {
        ctx.ui.out(ctx.ui.lines(b.trim_end_matches('\n')));
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
    super::warn_unknown(&ctx.ui, &one.warnings);
    if ctx.ui.json {
        ctx.ui.json(&one);
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
    super::warn_unknown(&ctx.ui, &listing.warnings);
    if ctx.ui.json {
        ctx.ui.json(&listing);
    } else {
        for (i, m) in listing.list.messages.iter().enumerate() {
            if i > 0 {
                ctx.ui.out(ctx.ui.dim(&"-".repeat(60)));
            }
            print(ctx, m);
        }
    }
    Ok(0)
}
