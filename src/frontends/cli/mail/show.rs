//! `git jules mail read`, `show` and `thread`.

use std::fmt::Write as _;
use std::io::Write;

use git_jules::capabilities::mail::api;

use super::{MessageOut, PersonaArg};
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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

/// `Key:              value`, the keys aligned.
fn kv(text: &mut String, k: &str, v: &str) {
    let _ = writeln!(text, "{:<18} {v}", format!("{k}:"));
}

/// One message as `mail read`, `show` and `thread` show it: its headers, its state, its body.
fn write_message(out: &mut dyn Write, style: &Style, m: &MessageOut) -> std::io::Result<()> {
    let mut text = String::new();
    // Everything but the ids and times comes from the message's sender (or a replica's log): each field
    // goes through `style.text`, which escapes it on a terminal.
    let t = |s: &str| style.text(s).into_owned();
    let _ = writeln!(text, "{}", style.yellow(&format!("message {}", t(&m.id))));
    kv(&mut text, "From", &t(&m.from));
    match &m.signature {
        Some(s) if s.is_verified() => kv(&mut text, "Signature", &t(&s.describe())),
        Some(s) => kv(
            &mut text,
            "Signature",
            &style.red(&format!("NOT VERIFIED: {}", t(&s.describe()))),
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
    kv(&mut text, "To", &to.join(", "));
    kv(&mut text, "Date", &t(&m.time));
    kv(&mut text, "Subject", &style.bold(&t(&m.subject)));
    kv(
        &mut text,
        "Type",
        &format!("{}, priority {}", t(&m.msg_type), m.priority),
    );
    if !m.tags.is_empty() {
        kv(&mut text, "Tags", &t(&m.tags.join(", ")));
    }
    if m.needs_response {
        kv(&mut text, "Needs-Response", "yes");
    }
    if let Some(r) = &m.in_reply_to {
        kv(&mut text, "In-Reply-To", &t(r));
    }
    if m.thread != m.id {
        kv(&mut text, "Thread", &t(&m.thread));
    }
    if let Some(e) = &m.expires {
        kv(
            &mut text,
            "Expires",
            &format!("{}{}", t(e), if m.expired { " (expired)" } else { "" }),
        );
    }
    if let Some(c) = &m.claim {
        kv(
            &mut text,
            "Claimed-By",
            &format!(
                "{}{}",
                t(&c.persona),
                if c.lock { "" } else { " (provisional)" }
            ),
        );
    }
    for u in &m.urls {
        kv(&mut text, "Attachment", &t(u));
    }
    for f in &m.files {
        kv(
            &mut text,
            "Attachment",
            &format!("{} ({} bytes)", t(&f.name), f.size),
        );
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
        kv(
            &mut text,
            &format!("State ({})", t(&s.persona)),
            &st.join(", "),
        );
    }
    let _ = writeln!(text);
    if let Some(b) = &m.body {
        let _ = writeln!(text, "{}", style.lines(b.trim_end_matches('\n')));
    }
    out.write_all(text.as_bytes())
}

pub fn show(ctx: &Context, repo: &gix::Repository, a: ShowArgs) -> anyhow::Result<i32> {
    let persona = a.persona.persona.as_deref();
    if let Some(p) = persona {
        git_jules::capabilities::mail::message::validate_persona(p)?;
    }
    let one = api::show(&ctx.workspace_of(repo.clone()), &a.id, persona)?;
    emit(ctx, one);
    Ok(0)
}

fn emit(ctx: &Context, one: api::One) {
    ctx.ui.print(&one);
}

/// `mail read` and `mail show`: the message; names nobody knows as warnings.
impl Print for api::One {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        write_message(out, style, &self.message)
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.iter().map(ToString::to_string).collect()
    }
}

/// `mail thread`: its messages in order, a rule between them; names nobody knows as warnings.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Thread(api::Listing);

impl Print for Thread {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for (i, m) in self.0.list.messages.iter().enumerate() {
            if i > 0 {
                writeln!(out, "{}", style.dim(&"-".repeat(60)))?;
            }
            write_message(out, style, m)?;
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.0.warnings.iter().map(ToString::to_string).collect()
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
        git_jules::capabilities::mail::message::validate_persona(p)?;
    }
    let listing = api::thread(&ctx.workspace_of(repo.clone()), &a.id, persona)?;
    ctx.ui.print(&Thread(listing));
    Ok(0)
}
