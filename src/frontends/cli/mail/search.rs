//! `git jules mail search QUERY`: full-text search over the mail (the library's `mail::search`).

use std::fmt::Write as _;

use git_jules::capabilities::mail::search::{self, snippet, SearchInput, SearchOutput};

use super::{short_time, PersonaArg};
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    if git_jules::capabilities::mail::api::search_needs_index(&ws)? {
        ctx.ui
            .human_status("building the search index from the mail log (once per clone)");
    }
    let out = search::search(repo, &input)?;
    ctx.ui.print(&Doc {
        version: super::JSON_VERSION,
        out: &out,
    });
    Ok(0)
}

/// The hits, two lines each (the message, then its thread and the snippet with its marks); on stderr how
/// many matched.
impl Print for Doc<'_> {
    fn human(&self, out: &mut dyn std::io::Write, style: &Style) -> std::io::Result<()> {
        let mut text = String::new();
        for h in &self.out.hits {
            let flag = match &h.state {
                Some(s) if s.unread => "*",
                _ => " ",
            };
            let _ = writeln!(
                text,
                "{flag} {}  {}  {:<16} {}",
                style.yellow(&h.id[..12]),
                short_time(&h.time),
                snippet::safe_line(&h.from),
                style.bold(&snippet::safe_line(&h.subject)),
            );
            let thread = if h.thread == h.id {
                String::new()
            } else {
                format!("thread {}  ", snippet::safe_line(short_thread(&h.thread)))
            };
            let _ = writeln!(
                text,
                "    {}{}",
                style.dim(&thread),
                marked(style, &h.snippet)
            );
        }
        if !text.is_empty() {
            out.write_all(text.trim_end_matches('\n').as_bytes())?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        let out = self.out;
        let shown = out.hits.len() as u64;
        vec![if shown < out.total {
            format!("{shown} of {} matches (--limit to see more)", out.total)
        } else {
            format!(
                "{} match{}",
                out.total,
                if out.total == 1 { "" } else { "es" }
            )
        }]
    }
}

fn short_thread(t: &str) -> &str {
    if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        &t[..12]
    } else {
        t
    }
}

/// The snippet with its marks: in colour when the terminal has it, else between `**`.
fn marked(style: &Style, s: &snippet::Snippet) -> String {
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
        let painted = style.bold(&word);
        if painted == word {
            let _ = write!(out, "**{word}**");
        } else {
            out.push_str(&style.yellow(&painted));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::ui::{Buffer, Ui};

    fn output() -> SearchOutput {
        SearchOutput {
            query: "parser".into(),
            persona: None,
            total: 3,
            hits: vec![search::Hit {
                id: "a".repeat(64),
                thread: "b".repeat(64),
                from: "alice".into(),
                to: vec!["bob".into()],
                subject: "the parser".into(),
                msg_type: "note".into(),
                time: "2026-01-28T15:30:00Z".into(),
                lamport: 7,
                score: 1.5,
                snippet: snippet::Snippet {
                    text: "fix the parser now".into(),
                    marks: vec![[8, 14]],
                },
                state: None,
            }],
            index: Default::default(),
        }
    }

    /// `mail search` as a person reads it on a pipe: two lines a hit (the marks between `**` without
    /// colour), then how many matched of how many on stderr; in JSON the document alone. (Catches a
    /// printer whose hit lines or count drift from what `mail search` printed.)
    #[test]
    fn search_hits_print_two_lines_each_and_the_count_after() {
        let out = output();
        let doc = Doc {
            version: super::super::JSON_VERSION,
            out: &out,
        };
        let mut human = Vec::new();
        doc.human(&mut human, &Style::default()).unwrap();
        assert_eq!(
            String::from_utf8(human).unwrap(),
            format!(
                "  aaaaaaaaaaaa  {}  alice            the parser\n    thread bbbbbbbbbbbb  fix the **parser** now\n",
                short_time("2026-01-28T15:30:00Z")
            )
        );

        let (o, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(false, Box::new(o.clone()), Box::new(err.clone())).print(&doc);
        assert_eq!(err.text(), "1 of 3 matches (--limit to see more)\n");

        let (o, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(true, Box::new(o.clone()), Box::new(err.clone())).print(&doc);
        assert_eq!(err.text(), "");
        let v: serde_json::Value = serde_json::from_str(&o.text()).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["total"], 3);
        assert!(o
            .text()
            .starts_with("{\n  \"version\": 1,\n  \"query\": \"parser\","));
    }
}
