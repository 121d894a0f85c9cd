//! `git jules mail wait`: block until a persona has unread mail, for watchdogs.
//!
//! It polls the mail ref and its remote-tracking copies (a few file reads) and refreshes the view only
//! when one of them moved; with `--fetch` it fetches the remote's logs before each look.

use std::time::{Duration, Instant};

use git_jules::capabilities::mail::api;
use git_jules::capabilities::mail::view::Filter;

use super::list::Inbox;
use super::PersonaArg;
use crate::frontends::context::Context;
use crate::frontends::context::EXIT_CHECK_FAILED;

#[derive(Debug, clap::Args)]
pub struct WaitArgs {
    #[command(flatten)]
    pub persona: PersonaArg,
    /// Give up after SECONDS (fractions allowed) and exit 1; default: wait for ever
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// How often to look, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub interval: u64,
    /// Fetch the remote's logs before each look (see --remote)
    #[arg(long)]
    pub fetch: bool,
    /// The remote for --fetch (default: the current branch's push remote, else `origin`)
    #[arg(long, value_name = "REMOTE", requires = "fetch")]
    pub remote: Option<String>,
}

pub fn run(ctx: &Context, repo: &gix::Repository, a: WaitArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    // A long wait fetches many times: each look after a fetch uses a fresh handle whose object store was
    // sized for the packs on disk now (see `git_jules::store::sync::reopen`).
    let mut fresh = None;
    let remote = match (a.fetch, &a.remote) {
        (false, _) => None,
        (true, Some(r)) => Some(r.clone()),
        (true, None) => Some(git_jules::store::sync::default_remote(repo)?),
    };
    let timeout = match a.timeout {
        Some(t) if !(t.is_finite() && t >= 0.0) => {
            return Err(git_jules::Error::usage(format!(
                "--timeout {t} is not a number of seconds"
            ))
            .into())
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let started = Instant::now();
    let mut seen = None;
    loop {
        if let Some(r) = &remote {
            if let Err(e) = git_jules::store::sync::fetch(repo, r) {
                ctx.ui.warn(format!("fetching from {r}: {e}"));
            }
            fresh = Some(git_jules::store::sync::reopen(repo)?);
        }
        let ws = ctx.workspace_of(fresh.as_ref().unwrap_or(repo).clone());
        let tips = api::tips(&ws)?;
        if seen.as_ref() != Some(&tips) {
            // What `mail inbox --unread` lists, through the same use case.
            let unread = Filter {
                unread: true,
                ..Filter::default()
            };
            let mut listing = api::inbox(&ws, &persona, &unread)?;
            // Names nobody knows are said once, at the first look (with the answer, when it is the first).
            if seen.is_some() {
                listing.warnings.clear();
            }
            if !listing.list.messages.is_empty() {
                ctx.ui.print(&Inbox(&listing));
                return Ok(0);
            }
            super::warn_unknown(&ctx.ui, &listing.warnings);
            if seen.is_none() && ctx.ui.interactive {
                ctx.ui.status(format!("waiting for mail to {persona}…"));
            }
            seen = Some(tips);
        }
        if timeout.is_some_and(|t| started.elapsed() >= t) {
            ctx.ui.status(format!(
                "no unread mail for {persona} after {:.1} s",
                started.elapsed().as_secs_f64()
            ));
            return Ok(EXIT_CHECK_FAILED);
        }
        let mut nap = Duration::from_millis(a.interval.max(10));
        if let Some(t) = timeout {
            nap = nap.min(t.saturating_sub(started.elapsed()));
        }
        std::thread::sleep(nap);
    }
}
