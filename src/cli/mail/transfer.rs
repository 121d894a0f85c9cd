//! `git jules mail stats`, `import`, `export` and `attachment`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::mail::{api, message};
use serde::Serialize;

use super::JSON_VERSION;
use crate::cli::context::Context;
use crate::cli::ui;

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["file", "maildir"]))]
pub struct ImportArgs {
    /// A seed-000 events.jsonl (`-`: stdin)
    pub file: Option<PathBuf>,
    /// A seed-003 maildir (`.mail/`) instead
    #[arg(long, value_name = "DIR")]
    pub maildir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Where to write the seed-003 maildir (new or empty)
    #[arg(long, value_name = "DIR", required = true)]
    pub maildir: PathBuf,
    /// Replace the message files of an earlier export in DIR
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, clap::Args)]
pub struct AttachmentArgs {
    /// The message (an id or unique prefix)
    pub id: String,
    /// The attachment's file name
    pub name: String,
    /// Write to FILE instead of stdout
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    version: u32,
    #[serde(flatten)]
    inner: &'a T,
}

fn versioned<T: Serialize>(inner: &T) -> Versioned<'_, T> {
    Versioned {
        version: JSON_VERSION,
        inner,
    }
}

pub fn stats(ctx: &Context, repo: &gix::Repository) -> anyhow::Result<i32> {
    let s = api::stats(&ctx.workspace_of(repo.clone()))?;
    if ctx.ui.json {
        ui::json(&versioned(&s));
        return Ok(0);
    }
    ui::out(format!("{} messages", s.messages));
    ui::out(format!(
        "{:<24} {:>8} {:>8} {:>8}",
        "persona", "received", "unread", "sent"
    ));
    for (p, c) in &s.personas {
        ui::out(format!(
            "{p:<24} {:>8} {:>8} {:>8}",
            c.received, c.unread, c.sent
        ));
    }
    match &s.oldest_unanswered {
        Some(u) => ui::out(format!(
            "{} unanswered; oldest: {} {} from {} to {}: {}",
            s.unanswered,
            &u.id[..12],
            u.time,
            u.from,
            u.to.join(","),
            u.subject
        )),
        None => ui::out("no unanswered messages"),
    }
    Ok(0)
}

pub fn import(ctx: &Context, repo: &gix::Repository, a: ImportArgs) -> anyhow::Result<i32> {
    let ws = ctx.workspace_of(repo.clone());
    let report = match (&a.file, &a.maildir) {
        (_, Some(dir)) => api::import_maildir(&ws, dir)?,
        (Some(f), None) => {
            let bytes = if f.as_os_str() == "-" {
                let mut b = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
                    .context("reading stdin")?;
                b
            } else {
                std::fs::read(f)
                    .map_err(|e| git_jules::Error::io(format!("reading {}", f.display()), e))?
            };
            let text = message::utf8(bytes, &f.display().to_string())?;
            api::import_jsonl(&ws, &text)?
        }
        (None, None) => unreachable!("clap requires a source"),
    };
    for s in &report.skipped {
        ui::warn(format!("skipped {s}"));
    }
    if ctx.ui.json {
        ui::json(&versioned(&report));
    } else {
        ui::out(format!(
            "imported {} records ({} messages): {} events appended, {} already present, {} skipped",
            report.records,
            report.messages,
            report.appended,
            report.duplicates,
            report.skipped.len()
        ));
    }
    Ok(0)
}

pub fn export(ctx: &Context, repo: &gix::Repository, a: ExportArgs) -> anyhow::Result<i32> {
    let report = api::export_maildir(&ctx.workspace_of(repo.clone()), &a.maildir, a.force)?;
    if ctx.ui.json {
        ui::json(&versioned(&report));
    } else {
        ui::out(format!(
            "exported {} messages as {} files ({} attachments) to {}",
            report.messages,
            report.files,
            report.attachments,
            a.maildir.display()
        ));
    }
    Ok(0)
}

pub fn attachment(ctx: &Context, repo: &gix::Repository, a: AttachmentArgs) -> anyhow::Result<i32> {
    let bytes = api::attachment(&ctx.workspace_of(repo.clone()), &a.id, &a.name)?;
    match &a.output {
        Some(p) => std::fs::write(p, &bytes).with_context(|| format!("writing {}", p.display()))?,
        // On a terminal the file is shown as text, escaped: its bytes are someone else's.
        None if ctx.ui.escape => ui::out_raw(&String::from_utf8_lossy(&bytes)),
        None => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(&bytes).and_then(|_| out.flush()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e).context("writing the attachment to stdout");
                }
            }
        }
    }
    Ok(0)
}
