//! The mails weave sends: a `conflict` mail to the author of an input that does not apply, an `alert` to the
//! author of an input `--verify` dropped or that cannot be read.
//!
//! Each mail belongs to a thread named `weave-<40 hex>`: the SHA-256 of what makes the problem the same
//! problem (the kind, the input's change ids, the files and hunks, the counterpart inputs; for a drop, the
//! verify command). Before sending, weave looks the thread up in the mailboxes: if it exists, the mail was sent
//! already (by this replica or, after a sync, by another) and is not sent again. A rerun therefore never
//! spams, and a new conflict of the same input (other lines, other counterpart) is a new mail.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::input::{Input, Kind};
use super::report::{conflict_lines, InputReport, MailNote, Status};
use crate::capabilities::mail::{api, recipients::Groups, SendRequest};
use crate::kit::error::Result;

/// What every mail of one run shares.
pub struct Context<'a> {
    pub from: &'a str,
    /// The integration branch, short name.
    pub into: &'a str,
    pub base_name: &'a str,
}

/// A mail to send.
pub struct Draft {
    pub req: SendRequest,
    pub thread: String,
}

fn thread_key(parts: &[String]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("weave-{}", &hex[..40])
}

/// The mail about `r` (a conflict, a drop or an unusable input), if it has a persona to go to.
pub fn draft(ctx: &Context<'_>, input: &Input, r: &InputReport) -> Option<Draft> {
    let persona = r.persona.as_deref()?;
    let keys: Vec<String> = input.items.iter().map(|i| i.key()).collect();
    let (msg_type, subject, body, mut parts) = match r.status {
        Status::Conflict => {
            let mut parts = vec!["conflict".to_owned()];
            for f in &r.conflicts {
                parts.push(f.path.clone());
                parts.extend(f.hunks.iter().map(|h| h.header.clone()));
                parts.extend(
                    f.hunks
                        .iter()
                        .flat_map(|h| &h.counterparts)
                        .chain(&f.counterparts)
                        .map(|c| c.input.clone()),
                );
            }
            (
                "conflict",
                format!("Conflict weaving {}", shown(input, r)),
                conflict_body(ctx, input, r),
                parts,
            )
        }
        Status::Dropped => {
            let v = r.verify.as_ref()?;
            (
                "alert",
                format!("Verify failed weaving {}", shown(input, r)),
                dropped_body(ctx, input, r),
                vec!["dropped".to_owned(), v.command.clone()],
            )
        }
        Status::Error => (
            "alert",
            format!("Cannot weave {}", shown(input, r)),
            error_body(ctx, input, r),
            vec!["error".to_owned(), r.error.clone().unwrap_or_default()],
        ),
        Status::Applied | Status::Already | Status::Skipped => return None,
    };
    parts.push(r.input.clone());
    parts.extend(keys);
    let thread = thread_key(&parts);
    Some(Draft {
        req: SendRequest {
            from: ctx.from.to_owned(),
            to: vec![persona.to_owned()],
            subject: one_line(&subject),
            body,
            msg_type: msg_type.to_owned(),
            tags: vec!["weave".to_owned()],
            thread: Some(thread.clone()),
            files: if input.kind == Kind::Patch && r.status != Status::Error {
                patch_files(input)
            } else {
                Vec::new()
            },
            ..SendRequest::default()
        },
        thread,
    })
}

/// The input as its author knows it: a patch file by its file name (the path is the weaver's), anything
/// else as given.
fn shown(input: &Input, r: &InputReport) -> String {
    match (input.kind, input.path.as_ref().and_then(|p| p.file_name())) {
        (Kind::Patch, Some(n)) => n.to_string_lossy().into_owned(),
        _ => r.input.clone(),
    }
}

fn one_line(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.len() > 200 {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s
    }
}

fn fix_steps(ctx: &Context<'_>, input: &Input) -> String {
    let into = ctx.into;
    match input.kind {
        Kind::Branch => {
            let branch = input
                .label
                .strip_prefix("refs/heads/")
                .unwrap_or(&input.label);
            format!(
                "Rebase your branch onto the integration branch, resolve the conflicts, and submit it again:\n\n\
                 ```sh\n\
                 git fetch origin                      # when the integration branch comes from the remote\n\
                 git rebase {into} {branch}\n\
                 # resolve the conflicts, `git add` them, then `git rebase --continue`\n\
                 git push --force-with-lease origin {branch}   # when you share the branch\n\
                 ```\n\n\
                 The next weave takes only your new commits (what is already on `{into}` is skipped)."
            )
        }
        Kind::Range => {
            let from = input.range_from.as_deref().unwrap_or("A");
            let to = input.label.split_once("..").map_or("B", |(_, b)| b);
            format!(
                "Replay the range onto the integration branch, resolve the conflicts, and submit the new range:\n\n\
                 ```sh\n\
                 git rebase --onto {into} {from} {to}\n\
                 # resolve the conflicts, `git add` them, then `git rebase --continue`\n\
                 ```"
            )
        }
        Kind::Series => format!(
            "Rebase the series onto the integration branch, resolve the conflicts, and record its next version:\n\n\
             ```sh\n\
             git jules series reroll --base {into}   # on the series branch; resolve what conflicts\n\
             git jules series format                 # records the next version of {}\n\
             git jules sync\n\
             ```",
            input.label
        ),
        Kind::Commit => format!(
            "Replay the change onto the integration branch and submit the result:\n\n\
             ```sh\n\
             git switch -c fix {into}\n\
             git cherry-pick {}   # resolve, `git add`, `git cherry-pick --continue`\n\
             ```",
            input.label
        ),
        Kind::Patch => {
            let names: Vec<String> = patch_files(input).into_iter().map(|(n, _)| n).collect();
            let first = names
                .first()
                .cloned()
                .unwrap_or_else(|| "the.patch".to_owned());
            let fetch: String = names
                .iter()
                .map(|n| format!("git jules mail attachment ID {n} -o {n}\n"))
                .collect();
            format!(
                "The patch is attached to this mail ({}). Save it, apply it on top of the integration branch, \
                 resolve the conflicts, and send the new patch (ID is this mail's id, as `git jules mail inbox` \
                 shows it):\n\n\
                 ```sh\n\
                 {fetch}\
                 git switch -c fix {into}\n\
                 git am -3 {first}      # resolve, `git add`, then `git am --continue`\n\
                 git format-patch -o outgoing/ {into}..fix\n\
                 ```",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// The patch files of a patch input, named by their file names, as they ride with the mail: never a path
/// of the weaver's machine. A directory gives its patch files in name order; files too large to attach
/// are left out.
fn patch_files(input: &Input) -> Vec<(String, Vec<u8>)> {
    let Some(path) = input.path.as_ref() else {
        return Vec::new();
    };
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.is_file()
                            && p.extension().is_some_and(|x| {
                                matches!(x.to_str(), Some("patch" | "diff" | "mbox" | "eml"))
                            })
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    } else {
        vec![path.clone()]
    };
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    for f in files
        .into_iter()
        .take(crate::capabilities::mail::message::MAX_ATTACHMENTS)
    {
        let Some(name) = f.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let name: String = name
            .chars()
            .map(|c| if c.is_control() || c == '/' { '_' } else { c })
            .collect();
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        match std::fs::read(&f) {
            Ok(b) if b.len() <= crate::capabilities::mail::message::MAX_ATTACHMENT_BYTES => {
                out.push((name, b))
            }
            _ => {}
        }
    }
    out
}

fn conflict_body(ctx: &Context<'_>, input: &Input, r: &InputReport) -> String {
    let mut b = format!(
        "Your input `{}` does not apply to the integration branch `{}` (base `{}`); it was skipped, \
         the other inputs were woven.\n\n## Conflicts\n\n",
        shown(input, r), ctx.into, ctx.base_name
    );
    b.push_str(&conflict_lines(&r.conflicts));
    let counterparts: BTreeMap<&str, Option<&str>> = r
        .conflicts
        .iter()
        .flat_map(|f| {
            f.hunks
                .iter()
                .flat_map(|h| &h.counterparts)
                .chain(&f.counterparts)
        })
        .map(|c| (c.input.as_str(), c.persona.as_deref()))
        .collect();
    if counterparts.is_empty() {
        b.push_str(
            "\nNo input woven earlier touched these lines: the base moved since you started, or the \
             change does not fit the file as it is now.\n",
        );
    } else {
        b.push_str("\nWoven earlier and in your way: ");
        b.push_str(
            &counterparts
                .iter()
                .map(|(i, p)| match p {
                    Some(p) => format!("`{i}` ({p})"),
                    None => format!("`{i}`"),
                })
                .collect::<Vec<_>>()
                .join(", "),
        );
        b.push_str(".\n");
    }
    b.push_str("\n## How to fix it\n\n");
    b.push_str(&fix_steps(ctx, input));
    b.push('\n');
    b
}

fn dropped_body(ctx: &Context<'_>, input: &Input, r: &InputReport) -> String {
    let v = r.verify.as_ref().expect("checked by the caller");
    let mut b = format!(
        "Your input `{}` applied to `{}`, but `{}` fails once it is woven (exit {}, on commit {}); \
         bisection over the woven inputs found yours to be the first that breaks it, so it was \
         dropped and the others were woven again without it.\n\n",
        shown(input, r),
        ctx.into,
        v.command,
        v.exit_code.map_or("?".to_owned(), |c| c.to_string()),
        v.commit.to_hex_with_len(7)
    );
    if let Some(t) = v.tail.as_deref().filter(|t| !t.trim().is_empty()) {
        b.push_str("## Output (last lines)\n\n```text\n");
        b.push_str(&t.replace("```", "'''"));
        b.push_str("\n```\n\n");
    }
    b.push_str("## How to fix it\n\nReproduce on top of the integration branch, fix, and submit again.\n\n");
    b.push_str(&fix_steps(ctx, input));
    b.push('\n');
    b
}

fn error_body(ctx: &Context<'_>, input: &Input, r: &InputReport) -> String {
    format!(
        "Your input `{}` cannot be woven into `{}`: {}.\n\nIt was skipped; fix the input and submit it again.\n",
        shown(input, r),
        ctx.into,
        r.error.as_deref().unwrap_or("unknown error")
    )
}

/// Send the drafts that were not sent before (one append for all); returns a note per draft, in order.
pub fn send(repo: &gix::Repository, drafts: Vec<Draft>) -> Result<Vec<MailNote>> {
    if drafts.is_empty() {
        return Ok(Vec::new());
    }
    let threads: Vec<String> = drafts.iter().map(|d| d.thread.clone()).collect();
    let existing = api::threads_exist(repo, &threads)?;
    let groups = Groups::load(repo)?;
    let mut notes = Vec::with_capacity(drafts.len());
    let mut events = Vec::new();
    let mut slots = Vec::new();
    for (d, exists) in drafts.into_iter().zip(existing) {
        let note = MailNote {
            to: d.req.to.join(", "),
            subject: d.req.subject.clone(),
            msg_type: d.req.msg_type.clone(),
            thread: d.thread.clone(),
            status: if exists { "already-sent" } else { "sent" }.to_owned(),
            id: None,
        };
        if !exists {
            events.push(api::notice_event(&groups, d.req)?);
            slots.push(notes.len());
        }
        notes.push(note);
    }
    if !events.is_empty() {
        let appended = api::append(repo, events)?;
        for (slot, a) in slots.into_iter().zip(appended) {
            notes[slot].id = Some(a.id.to_hex());
        }
    }
    Ok(notes)
}

/// The note for a mail that is not sent (`--check`, `--no-mail`).
pub fn unsent(d: &Draft) -> MailNote {
    MailNote {
        to: d.req.to.join(", "),
        subject: d.req.subject.clone(),
        msg_type: d.req.msg_type.clone(),
        thread: d.thread.clone(),
        status: "not-sent".to_owned(),
        id: None,
    }
}
