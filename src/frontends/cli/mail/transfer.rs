//! `git jules mail stats`, `import`, `export` and `attachment`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::capabilities::mail::import::ImportReport;
use git_jules::capabilities::mail::maildir::export;
use git_jules::capabilities::mail::{api, message};
use serde::Serialize;

use super::JSON_VERSION;
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    ctx.ui.print(&versioned(&s));
    Ok(0)
}

/// `mail stats`: the counts per persona and the oldest unanswered message.
impl Print for Versioned<'_, api::Stats> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let s = self.inner;
        writeln!(out, "{} messages", s.messages)?;
        writeln!(
            out,
            "{:<24} {:>8} {:>8} {:>8}",
            "persona", "received", "unread", "sent"
        )?;
        for (p, c) in &s.personas {
            writeln!(
                out,
                "{p:<24} {:>8} {:>8} {:>8}",
                c.received, c.unread, c.sent
            )?;
        }
        match &s.oldest_unanswered {
            Some(u) => writeln!(
                out,
                "{} unanswered; oldest: {} {} from {} to {}: {}",
                s.unanswered,
                &u.id[..12],
                u.time,
                u.from,
                u.to.join(","),
                u.subject
            ),
            None => writeln!(out, "no unanswered messages"),
        }
    }
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
    ctx.ui.print(&versioned(&report));
    Ok(0)
}

/// `mail import`: one line of counts; what was skipped as warnings.
impl Print for Versioned<'_, ImportReport> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let r = self.inner;
        writeln!(
            out,
            "imported {} records ({} messages): {} events appended, {} already present, {} skipped",
            r.records,
            r.messages,
            r.appended,
            r.duplicates,
            r.skipped.len()
        )
    }
    fn warnings(&self) -> Vec<String> {
        self.inner
            .skipped
            .iter()
            .map(|s| format!("skipped {s}"))
            .collect()
    }
}

pub fn export(ctx: &Context, repo: &gix::Repository, a: ExportArgs) -> anyhow::Result<i32> {
    let report = api::export_maildir(&ctx.workspace_of(repo.clone()), &a.maildir, a.force)?;
    ctx.ui.print(&Exported {
        doc: versioned(&report),
        dir: &a.maildir,
    });
    Ok(0)
}

/// `mail export`: one line of counts and where they went.
struct Exported<'a> {
    doc: Versioned<'a, export::ExportReport>,
    dir: &'a std::path::Path,
}

impl Serialize for Exported<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.doc.serialize(s)
    }
}

impl Print for Exported<'_> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let r = self.doc.inner;
        writeln!(
            out,
            "exported {} messages as {} files ({} attachments) to {}",
            r.messages,
            r.files,
            r.attachments,
            self.dir.display()
        )
    }
}

pub fn attachment(ctx: &Context, repo: &gix::Repository, a: AttachmentArgs) -> anyhow::Result<i32> {
    let bytes = api::attachment(&ctx.workspace_of(repo.clone()), &a.id, &a.name)?;
    match &a.output {
        Some(p) => std::fs::write(p, &bytes).with_context(|| format!("writing {}", p.display()))?,
        // On a terminal the file is shown as text, escaped: its bytes are someone else's.
        None if ctx.ui.escape => ctx.ui.out_raw(&String::from_utf8_lossy(&bytes)),
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
