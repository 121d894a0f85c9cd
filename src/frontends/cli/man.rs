//! `git jules install-man`: git turns `git jules --help` into `man git-jules`, so we ship man pages that
//! are manuals: the clap-generated synopsis and options, then an example per command, the exit codes, and
//! the command's `--json` shape (the example from docs/json.md, compiled in) or a note that it has none.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::frontends::context::Context;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: git jules install-man; then `git jules --help` and `git jules mail --help` \
open the pages.\nWithout --dir the pages go to <prefix>/share/man/man1 beside <prefix>/bin/git-jules."
)]
pub struct Args {
    /// Where to write the pages (default: `<prefix>/share/man/man1` beside the binary's `bin/`, which man
    /// finds through PATH)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let dir = match args.dir {
        Some(d) => d,
        None => {
            let exe = std::env::current_exe().context("locating the git-jules binary")?;
            let prefix = exe
                .parent()
                .and_then(|bin| bin.parent())
                .context("the binary has no parent directory")?;
            prefix.join("share/man/man1")
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let written = write_pages(&dir)?;
    for p in &written {
        ctx.ui.out(p.display().to_string());
    }
    Ok(0)
}

/// Render `git-jules.1` and `git-jules-<sub>.1` for every subcommand (nested ones joined with `-`).
pub fn write_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut root = crate::frontends::context::command().name("git-jules");
    // Propagate the global options to every subcommand, so each page lists them.
    root.build();
    render(&root, &[], dir, &mut written)?;
    Ok(written)
}

fn render(
    cmd: &clap::Command,
    path: &[&str],
    dir: &Path,
    out: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let page = std::iter::once("git-jules")
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join("-");
    let words = path.join(" ");
    let bin = if words.is_empty() {
        "git jules".to_owned()
    } else {
        format!("git jules {words}")
    };
    let named = cmd.clone().name(page.clone()).bin_name(bin);
    let man = clap_mangen::Man::new(named);
    let mut buf = Vec::new();
    man.render(&mut buf)?;
    let mut text = String::from_utf8(buf)?;
    // clap_mangen prints a short-only option with a value as `[-C ]`; say what it takes.
    text = text.replace("[\\fB\\-C \\fR]", "[\\fB\\-C\\fR \\fIDIR\\fR]");
    text.push_str(&extra_sections(&words, cmd.has_subcommands()));
    let file = dir.join(format!("{page}.1"));
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    out.push(file);
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let mut p = path.to_vec();
        p.push(sub.get_name());
        render(sub, &p, dir, out)?;
    }
    Ok(())
}

/// EXAMPLES, EXIT STATUS and JSON OUTPUT, in roff.
fn extra_sections(words: &str, group: bool) -> String {
    let mut s = String::new();
    let examples = examples(words);
    if !examples.is_empty() {
        s.push_str(".SH EXAMPLES\n");
        for e in examples {
            s.push_str(&format!(".PP\n.nf\n{}\n.fi\n", roff_escape(e)));
        }
    }
    s.push_str(".SH EXIT STATUS\n.TS\nl l.\n");
    for (code, meaning) in EXIT_CODES {
        s.push_str(&format!("{code}\t{}\n", roff_escape(meaning)));
    }
    s.push_str(".TE\n");
    if !group {
        s.push_str(".SH JSON OUTPUT\n");
        match json_example(words) {
            Some(doc) => {
                s.push_str(&format!(
                    ".PP\nWith \\fB\\-\\-json\\fR, one document on stdout (every key is described in docs/json.md, \
                     section \\fI{}\\fR). A failure prints {{\"version\": 1, \"error\": {{...}}, \"exit\": N}} as well.\n.PP\n.nf\n{}\n.fi\n",
                    roff_escape(words),
                    roff_escape(doc.trim_end())
                ));
            }
            None if NO_JSON.contains(&words) => s.push_str(
                ".PP\nThis command has no JSON output: \\fB\\-\\-json\\fR is refused (exit 2).\n",
            ),
            None => s.push_str(&format!(
                ".PP\nThe \\fB\\-\\-json\\fR shape is described in {}.\n",
                if words.starts_with("series") || words == "verify" {
                    "docs/series.md"
                } else if words == "weave" {
                    "docs/weave.md"
                } else if words.starts_with("mail") {
                    "docs/mail.md"
                } else {
                    "docs/json.md"
                }
            )),
        }
    }
    s.push_str(".SH SEE ALSO\n\\fBgit-jules\\fR(1); docs/cli.md, docs/json.md in the source.\n");
    s
}

pub const EXIT_CODES: [(&str, &str); 6] = [
    ("0", "success (also when the reader of stdout went away)"),
    (
        "1",
        "a check ran and failed (verify, log fsck, mail wait timed out, sync held back events the remote refuses)",
    ),
    (
        "2",
        "bad input: usage, an unknown or ambiguous id or name; nothing was written",
    ),
    ("3", "a conflict stopped the operation; nothing was changed"),
    (
        "4",
        "internal: git, the disk or the repository failed, or a bug",
    ),
    ("130", "interrupted"),
];

const NO_JSON: [&str; 5] = [
    "demo",
    "completions",
    "install-man",
    "hooks show",
    "mail attachment",
];

/// The example under `### \`words\`` in docs/json.md.
fn json_example(words: &str) -> Option<&'static str> {
    const DOC: &str = include_str!("../../../docs/json.md");
    let heading = format!("### `{words}`\n");
    let start = DOC.find(&heading)? + heading.len();
    let rest = &DOC[start..];
    let open = rest.find("```json\n")? + "```json\n".len();
    let body = &rest[open..];
    let close = body.find("\n```")?;
    Some(&body[..close])
}

fn roff_escape(s: &str) -> String {
    s.replace('\\', "\\e")
        .replace('-', "\\-")
        .lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An example (or a few) per command.
fn examples(words: &str) -> &'static [&'static str] {
    match words {
        "" => &[
            "git jules init && git jules sync",
            "JULES_PERSONA=weaver git jules mail send --to curator --subject 'Conflict' --body 'Rebase please'",
            "git jules demo --keep",
        ],
        "init" => &["git jules init            # every remote", "git jules init origin"],
        "sync" => &["git jules sync", "git jules --json sync upstream"],
        "log" => &["git jules log list", "git jules log show mail --limit 20"],
        "log append" => &[
            "git jules log append mail --kind note.x --actor alice --data '{\"n\": 1}'",
            "printf '{\"n\":1}\\n{\"n\":2}\\n' | git jules log append mail --kind note.x --batch",
        ],
        "log show" => &["git jules log show mail --kind mail.send --limit 5"],
        "log get" => &["git jules log get mail 3217da5"],
        "log stats" => &["git jules log stats mail"],
        "log fsck" => &["git jules log fsck            # every log; exit 1 if a commit is invalid"],
        "log list" => &["git jules log list"],
        "log held-back" => &["git jules log held-back        # what the last sync held back, and why"],
        "log held-back drop" => &[
            "git jules log held-back drop --all      # leave them out of the local log; a backup keeps it",
            "git jules log held-back drop 3b524b83",
        ],
        "log held-back resign" => &[
            "git jules keys new carol --configure && git jules log held-back resign --all",
        ],
        "log checkpoint" => &[
            "git jules log checkpoint mail             # a checkpoint at the tip, for fresh clones",
            "git jules log checkpoint mail --every 10000",
        ],
        "state" => &["git jules state show"],
        "state show" => &["git jules state show --json > .jules/cycle_state.json"],
        "state import" => &["git jules state import .jules/cycle_state.json"],
        "state record" => &["git jules state record --persona curator --session S123 --track docs"],
        "state done" => &["git jules state done --session S123 --status failed"],
        "sprint" => &["git jules sprint status"],
        "sprint start" => &["git jules sprint start", "git jules sprint start 7"],
        "sprint status" => &["git jules sprint status --json"],
        "sprint close" => &["git jules sprint close"],
        "sprint note" => &["git jules sprint note --persona curator --kind plan --text 'Tidy the docs'"],
        "sprint stats" => &["git jules sprint stats"],
        "task" => &["git jules task ls --state todo"],
        "task add" => &["git jules task add 'Split view.rs' --persona refactor"],
        "task done" => &["git jules task done 3f2a"],
        "task cancel" => &["git jules task cancel 3f2a"],
        "task ls" => &["git jules task ls --persona refactor"],
        "mail" => &["git jules mail inbox --persona curator --unread"],
        "mail send" => &[
            "git jules mail send --from weaver --to curator --subject 'Conflict in PR #12' --body 'Rebase please'",
            "git jules mail send --to reviewers --subject Review --body-file notes.md --attach https://example.com/1.patch",
        ],
        "mail reply" => &["git jules mail reply 3f2a --from curator --body 'Done'"],
        "mail inbox" => &["git jules mail inbox --persona curator --unread", "jules-mail inbox --persona curator --json"],
        "mail read" => &["git jules mail read 3f2a --persona curator", "jules-mail read 42 --persona curator   # a seed-000 message_id"],
        "mail show" => &["git jules mail show 3f2a"],
        "mail sent" => &["git jules mail sent --persona weaver"],
        "mail thread" => &["git jules mail thread 3f2a"],
        "mail search" => &["git jules mail search 'flaky s:quokka -fixed'", "git jules mail search '\"parser refactor\" OR refact*' --persona curator --json"],
        "mail tag" => &["git jules mail tag ls 3f2a --persona curator"],
        "mail tag add" => &["git jules mail tag add 3f2a needs-action --persona curator"],
        "mail tag rm" => &["git jules mail tag rm 3f2a needs-action --persona curator"],
        "mail tag ls" => &["git jules mail tag ls 3f2a --persona curator"],
        "mail unread" => &["git jules mail unread 3f2a --persona curator"],
        "mail trash" => &["git jules mail trash 3f2a --persona curator"],
        "mail untrash" => &["git jules mail untrash 3f2a --persona curator"],
        "mail archive" => &["git jules mail archive 3f2a --persona curator"],
        "mail unarchive" => &["git jules mail unarchive 3f2a --persona curator"],
        "mail claim" => &["git jules mail claim 3f2a --persona worker-1 --sync"],
        "mail wait" => &["git jules mail wait --persona curator --timeout 60 --fetch"],
        "mail stats" => &["git jules mail stats"],
        "mail import" => &["git jules mail import .jules/mail/events.jsonl", "git jules mail import --maildir .mail"],
        "mail export" => &["git jules mail export --maildir /tmp/mail"],
        "mail attachment" => &["git jules mail attachment 3f2a fix.patch -o fix.patch"],
        "tick" => &["git jules tick --dry-run", "git jules tick --launch './launch.sh'"],
        "prompt" => &["git jules prompt curator >> prompt.md"],
        "install-man" => &["git jules install-man", "git jules install-man --dir ~/.local/share/man/man1"],
        "demo" => &["git jules demo", "git jules demo --keep"],
        "completions" => &[
            "git jules completions bash > ~/.local/share/bash-completion/completions/git-jules",
            "git jules completions zsh > \"${fpath[1]}/_git-jules\"",
            "git jules completions fish > ~/.config/fish/completions/git-jules.fish",
        ],
        "series" => &["git jules series start feat && git jules series commit -s 'Add x' -r 'x is needed'"],
        "series start" => &["git jules series start feat --base main"],
        "series commit" => &["git jules series commit --summary 'Add the flag' --rationale 'The feature needs a switch'"],
        "series status" => &["git jules series status --cmd 'make test'"],
        "series list" => &["git jules series list", "git jules series list --all   # every persona's versions"],
        "series version" => &["JULES_PERSONA=refactor git jules series version"],
        "series versions" => &["git jules series versions refactor/rename"],
        "series show" => &["git jules series show refactor/rename@v2"],
        "series range-diff" => &["git jules series range-diff refactor/rename v2 v3"],
        "series interdiff" => &["git jules series interdiff refactor/rename v1 v2"],
        "series reroll" => &["git jules series reroll 2          # fold the work tree into patch 2"],
        "series undo" => &["git jules series undo"],
        "series format" => &["git jules series format --markdown"],
        "series review" => &["git jules series review 2 --approve"],
        "series finalize" => &["git jules series finalize --cmd 'make test'"],
        "series abort" => &["git jules series abort"],
        "verify" => &["git jules verify --cmd 'make test' -j 4", "git jules verify --base main --keep-going"],
        "hooks" => &["git jules hooks install"],
        "hooks install" => &[
            "git jules hooks install && git config jules.verify.cmd 'make test'",
            "git jules hooks install --hook pre-commit   # refuse commits under others' leases",
        ],
        "hooks show" => &["git jules hooks show >> .git/hooks/pre-push"],
        "weave" => &["git jules weave --branches 'jules/*/sprint-5'"],
        "guard" => &[
            "git -C /srv/git/project.git jules guard --install   # the remote's pre-receive hook",
            "git -C /srv/git/project.git jules guard --install --require-signed   # and refuse forged events",
        ],
        "mcp" => &[
            "claude mcp add jules -- git jules -C /path/to/repo mcp --persona curator",
            "JULES_PERSONA=curator git jules mcp",
        ],
        "web" => &[
            "git jules web --as overseer     # prints http://127.0.0.1:PORT/?token=…",
            "git jules web --read-only --listen 127.0.0.1:8080",
        ],
        "roles" => &["git jules roles", "git jules roles --check"],
        "exchange" => &["git jules exchange list --workstream generic"],
        "exchange add" => &["git jules exchange add --workstream generic --kind events --file event.yml --actor observer-qa"],
        "exchange decide" => &["git jules exchange decide --workstream generic --file issue.yml --label bug --actor decider"],
        "exchange expand" => &["git jules exchange expand --workstream generic --issue 3f2a --file plan.yml --actor planner"],
        "exchange take" => &["git jules exchange take --workstream generic --issue 3f2a --persona implementer --sync origin"],
        "exchange close" => &["git jules exchange close --workstream generic --issue 3f2a --persona implementer --commit HEAD"],
        "exchange list" => &["git jules exchange list --workstream generic --json"],
        "exchange export" => &["git jules exchange export --dir .jules/workstreams"],
        "exchange import" => &["git jules exchange import --dir .jules/workstreams"],
        "lease" => &["git jules lease list"],
        "lease acquire" => &[
            "git jules lease acquire src/lease/ 'src/**/lease*.rs' --ttl 2h --reason 'issue 25' --sync",
        ],
        "lease renew" => &["git jules lease renew 3f2a9c --ttl 1h"],
        "lease release" => &[
            "git jules lease release 3f2a9c",
            "git jules lease release 3f2a9c --force --reason 'holder offline since yesterday'",
        ],
        "lease list" => &["git jules lease list --path src/lib.rs --all"],
        "lease check" => &["git jules lease check --staged", "git jules lease check --diff main..HEAD"],
        "lease remind" => &["git jules lease remind --lead 15m   # from cron"],
        "agent" => &["git jules agent setup claude --persona curator && git jules agent status"],
        "agent hook" => &[
            "git jules agent hook pre-edit --harness claude --persona curator < payload.json",
        ],
        "agent setup" => &[
            "git jules agent setup claude --persona curator --dry-run",
            "git jules agent setup codex --persona curator --scope user",
        ],
        "agent remove" => &["git jules agent remove gemini"],
        "agent status" => &["git jules --json agent status --scope user"],
        "keys" => &["git jules keys check"],
        "keys new" => &[
            "git jules keys new reviewer --configure   # then commit its line to .jules/allowed_signers on main",
            "git jules keys new reviewer --out ~/.config/jules/reviewer",
        ],
        "keys check" => &["JULES_SIGNING_KEY=~/.config/jules/reviewer git jules keys check reviewer"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_command_has_an_example() {
        fn walk(cmd: &clap::Command, path: &mut Vec<String>, missing: &mut Vec<String>) {
            let words = path.join(" ");
            if super::examples(&words).is_empty() {
                missing.push(words);
            }
            for sub in cmd.get_subcommands() {
                if sub.get_name() == "help" {
                    continue;
                }
                path.push(sub.get_name().to_owned());
                walk(sub, path, missing);
                path.pop();
            }
        }
        let mut missing = Vec::new();
        walk(
            &crate::frontends::context::command(),
            &mut Vec::new(),
            &mut missing,
        );
        assert!(
            missing.is_empty(),
            "commands without an example: {missing:?}"
        );
    }
}
