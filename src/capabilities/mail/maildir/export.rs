//! Exporting the mailboxes as a seed-003 maildir, byte-for-byte the same for the same events.
//!
//! Every message is written once into the mailbox of each recipient as the sender wrote it (persona, group
//! or `__broadcast`): at the mailbox root when the mailbox owner (the persona of that name) has not read
//! it, in `read/` when it has, in `archive/` when it archived it, and not at all when it trashed it. File
//! names follow seed 003, `{timestamp}_{from}_{type}.md`; a name taken by an earlier message (in the total
//! order) gets `-2`, `-3`, … after the type. File attachments go beside the file in `{stem}.files/`.
//!
//! The frontmatter holds seed 003's fields, then what mail needs to import the file back as the very same
//! event (`subject`, `id`, `nonce`, `attachments`, `files`, `members.<group>`, `source.*`), then the
//! fields an earlier import did not know, as they were.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{base_name, time_field, Folder};
use crate::capabilities::mail::frontmatter::{write_list, write_scalar};
use crate::capabilities::mail::kinds::{self, SendData};
use crate::capabilities::mail::message::BROADCAST;
use crate::capabilities::mail::ops;
use crate::capabilities::mail::view::Marks;
use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::eventlog::{EventId, Log, LoggedEvent};

#[derive(Debug, Clone, Default, Serialize)]
pub struct ExportReport {
    pub messages: usize,
    /// Message files written (a message goes to each of its recipients' mailboxes).
    pub files: usize,
    pub attachments: usize,
}

/// Write the maildir into `dir`, which must be empty or absent unless `force`, in which case the message
/// files and attachment folders of an earlier export there are replaced (nothing else is touched).
pub fn export_maildir(log: &Log<'_>, dir: &Path, force: bool) -> Result<ExportReport> {
    prepare_dir(dir, force)?;
    let (events, _) = log.read_all()?;
    let mut sends: Vec<(&LoggedEvent, SendData)> = Vec::new();
    for e in &events {
        if e.event.kind == kinds::SEND {
            if let Ok(d) = SendData::deserialize(&e.event.data) {
                sends.push((e, d));
            }
        }
    }
    // File names first: replies name their parent's file.
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut names: HashMap<EventId, String> = HashMap::new();
    for (e, d) in &sends {
        let base = base_name(e, d);
        let n = taken.entry(base.clone()).or_insert(0);
        *n += 1;
        let name = if *n == 1 {
            format!("{base}.md")
        } else {
            format!("{base}-{n}.md")
        };
        names.insert(e.id, name);
    }
    let mut report = ExportReport {
        messages: sends.len(),
        ..ExportReport::default()
    };
    ops::with_view(log, |view| {
        let mut r = ExportReport {
            messages: report.messages,
            ..ExportReport::default()
        };
        for (e, d) in &sends {
            let id = e.id.to_hex();
            let file = &names[&e.id];
            let mut mailboxes: Vec<&String> = Vec::new();
            for t in &d.to {
                if !mailboxes.contains(&t) {
                    mailboxes.push(t);
                }
            }
            for owner in mailboxes {
                let marks = if owner == BROADCAST {
                    Marks::default()
                } else {
                    view.marks(owner, &id)?
                };
                if marks.trashed {
                    continue;
                }
                let state = if marks.archived.is_some() {
                    Folder::Archived
                } else if marks.read.is_some() {
                    Folder::Read
                } else {
                    Folder::Unread
                };
                let mut target = dir.join(owner);
                if let Some(sub) = state.subdir() {
                    target.push(sub);
                }
                std::fs::create_dir_all(&target)
                    .map_err(|err| Error::io(format!("creating {}", target.display()), err))?;
                let text = render(e, d, &marks, &names);
                let path = target.join(file);
                std::fs::write(&path, text)
                    .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
                r.files += 1;
                if !e.event.payload.is_empty() {
                    let side = target.join(format!("{}.files", file.trim_end_matches(".md")));
                    std::fs::create_dir_all(&side)
                        .map_err(|err| Error::io(format!("creating {}", side.display()), err))?;
                    let msg = ops::Message {
                        id: e.id,
                        lamport: e.lamport,
                        event: e.event.clone(),
                        data: d.clone(),
                    };
                    for p in &e.event.payload {
                        let bytes = ops::attachment(log.repo(), &msg, &p.name)?;
                        let fp = side.join(&p.name);
                        std::fs::write(&fp, bytes)
                            .map_err(|err| Error::io(format!("writing {}", fp.display()), err))?;
                        r.attachments += 1;
                    }
                }
            }
        }
        report = r;
        Ok(())
    })?;
    Ok(report)
}

/// One message file.
fn render(
    e: &LoggedEvent,
    d: &SendData,
    marks: &Marks,
    names: &HashMap<EventId, String>,
) -> String {
    let mut s = String::from("---\n");
    let mut field = |k: &str, v: String| {
        let _ = writeln!(s, "{k}: {v}");
    };
    field("from", write_scalar(&e.event.actor));
    field(
        "to",
        if d.to.len() == 1 {
            write_scalar(&d.to[0])
        } else {
            write_list(&d.to)
        },
    );
    field("type", write_scalar(&d.msg_type));
    field("timestamp", time_field(&e.event.time));
    field("needs_response", d.needs_response.to_string());
    field("priority", d.priority.to_string());
    field("tags", write_list(&d.tags));
    field("subject", write_scalar(&d.subject));
    if let Some(r) = &d.in_reply_to {
        let parent = EventId::from_hex(r).and_then(|id| names.get(&id));
        field("in_reply_to", write_scalar(parent.map_or(r, |n| n)));
    }
    if let Some(t) = &d.thread {
        field("thread_id", write_scalar(t));
    }
    if let Some(x) = &d.expires {
        field("expires", time_field(x));
    }
    if let Some(r) = &marks.read {
        field("read_at", time_field(r));
    }
    if let Some(a) = &marks.archived {
        field("archived_at", time_field(a));
    }
    field("id", e.id.to_hex());
    if let Some(n) = &e.event.nonce {
        field("nonce", write_scalar(n));
    }
    if !d.urls.is_empty() {
        field("attachments", write_list(&d.urls));
    }
    if !e.event.payload.is_empty() {
        let files: Vec<String> = e.event.payload.iter().map(|p| p.name.clone()).collect();
        field("files", write_list(&files));
    }
    for (g, members) in &d.groups {
        field(&format!("members.{g}"), write_list(members));
    }
    if let Some(src) = &d.source {
        field("source.format", write_scalar(&src.format));
        if let Some(id) = &src.event_id {
            field("source.event_id", write_scalar(id));
        }
        if let Some(m) = src.message_id {
            field("source.message_id", m.to_string());
        }
    }
    let extra: BTreeMap<&String, &String> = d.headers.iter().collect();
    for (k, v) in extra {
        field(k, v.clone());
    }
    s.push_str("---\n\n");
    s.push_str(&d.body);
    s
}

fn prepare_dir(dir: &Path, force: bool) -> Result<()> {
    let entries: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e));
        }
        Err(e) => return Err(Error::io(format!("reading {}", dir.display()), e)),
    };
    if entries.is_empty() {
        return Ok(());
    }
    if !force {
        return Err(Error::needs(
            ErrorKind::Usage,
            format!(
                "{} is not empty: export into a new directory, or replace an earlier export there",
                dir.display()
            ),
            Remedy::Replace,
        ));
    }
    for mbox in entries.into_iter().filter(|p| p.is_dir()) {
        for sub in [mbox.clone(), mbox.join("read"), mbox.join("archive")] {
            let Ok(rd) = std::fs::read_dir(&sub) else {
                continue;
            };
            for f in rd.filter_map(|e| e.ok().map(|e| e.path())) {
                let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                let res = if f.is_file() && name.ends_with(".md") {
                    std::fs::remove_file(&f)
                } else if f.is_dir() && name.ends_with(".files") {
                    std::fs::remove_dir_all(&f)
                } else {
                    Ok(())
                };
                res.map_err(|e| Error::io(format!("removing {}", f.display()), e))?;
            }
            let _ = std::fs::remove_dir(&sub);
        }
    }
    Ok(())
}
