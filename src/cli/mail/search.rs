//! `git jules mail search QUERY`: full-text search over the mail (the library's `mail::search`).

use std::fmt::Write as _;

use git_jules::mail::search::{self, snippet, SearchInput, SearchOutput};

use super::{short_time, PersonaArg};
use crate::cli::context::Context;
use crate::cli::ui;

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Words (all must match), "quoted phrases", prefix*, fields s: f: t: b: (subject, from, to, body),
    /// OR, -word, (groups)
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,
    // Only what this persona received, in its inbox (see --all-folders), with its states; default: every
    // message. Unlike other mail commands, $JULES_PERSONA is not read: an operator searches everything.
    /// Search as this persona: what it received, with its folders and states
    #[arg(long, value_name = "PERSONA")]
    pub persona: Option<String>,
    /// Only messages from this sender
    #[arg(long, value_name = "PERSONA")]
    pub from: Option<String>,
    /// Only messages of this type
    #[arg(long = "type", value_name = "TYPE")]
    pub msg_type: Option<String>,
    /// Only messages with this tag (the sender's, and with --persona the persona's own)
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Only messages sent at or after WHEN: a duration ago (2h, 3d) or a time
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only messages sent at or before WHEN: a duration ago (2h, 3d) or a time
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// At most N results (default 20, at most 1000)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// With --persona: archived, trashed, expired and claimed messages too
    #[arg(long, requires = "persona")]
    pub all_folders: bool,
}

pub fn run(ctx: &Context, repo: &gix::Repository, a: SearchArgs) -> anyhow::Result<i32> {
    let persona = PersonaArg {
        persona: a.persona.clone(),
    }
    .checked_optional(ctx, repo)?;
    let input = SearchInput {
        query: a.query.join(" "),
        persona,
        from: a.from,
        msg_type: a.msg_type,
        tag: a.tag,
        since: a.since,
        until: a.until,
        limit: a.limit,
        all_folders: a.all_folders,
    };
    // Refuse a bad query before anything is built.
    search::query::parse(&input.query)?;
    let ws = ctx.workspace_of(repo.clone());
    if git_jules::mail::api::search_needs_index(&ws)? && !ctx.ui.json {
        ui::status("building the search index from the mail log (once per clone)");
    }
    let out = search::search(repo, &input)?;
    print(ctx, &out);
    Ok(0)
}

fn print(ctx: &Context, out: &SearchOutput) {
    if ctx.ui.json {
        ui::json(&Doc {
            version: super::JSON_VERSION,
            out,
        });
        return;
    }
    let mut text = String::new();
    for h in &out.hits {
        let flag = match &h.state {
            Some(s) if s.unread => "*",
            _ => " ",
        };
        let _ = writeln!(
            text,
            "{flag} {}  {}  {:<16} {}",
            ctx.ui.yellow(&h.id[..12]),
            short_time(&h.time),
            snippet::safe_line(&h.from),
            ctx.ui.bold(&snippet::safe_line(&h.subject)),
        );
        let thread = if h.thread == h.id {
            String::new()
        } else {
            format!("thread {}  ", snippet::safe_line(short_thread(&h.thread)))
        };
        let _ = writeln!(
            text,
            "    {}{}",
            ctx.ui.dim(&thread),
            marked(ctx, &h.snippet)
        );
    }
    if !text.is_empty() {
        ui::out(text.trim_end_matches('\n'));
    }
    let shown = out.hits.len() as u64;
    ui::status(if shown < out.total {
        format!("{shown} of {} matches (--limit to see more)", out.total)
    } else {
        format!(
            "{} match{}",
            out.total,
            if out.total == 1 { "" } else { "es" }
        )
    });
}

fn short_thread(t: &str) -> &str {
    if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        &t[..12]
    } else {
        t
    }
}

/// The snippet with its marks: in colour when the terminal has it, else between `**`.
fn marked(ctx: &Context, s: &snippet::Snippet) -> String {
    let chars: Vec<char> = s.text.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    for [a, b] in &s.marks {
        let (a, b) = ((*a).min(chars.len()), (*b).min(chars.len()));
        if a < at {
            continue;
        }
        out.extend(&chars[at..a]);
        let word: String = chars[a..b].iter().collect();
        let painted = ctx.ui.bold(&word);
        if painted == word {
            let _ = write!(out, "**{word}**");
        } else {
            out.push_str(&ctx.ui.yellow(&painted));
        }
        at = b;
    }
    out.extend(&chars[at..]);
    out
}

/// The JSON document: `version`, then the library's output as it is.
#[derive(serde::Serialize)]
struct Doc<'a> {
    version: u32,
    #[serde(flatten)]
    out: &'a SearchOutput,
}
