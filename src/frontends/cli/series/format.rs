//! `series format`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use git_jules::capabilities::series::format::{self, file_stem};
use git_jules::Error;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Markdown (the default): the cover letter, then each patch with its summary, whole rationale and \
diff. --mbox: the patches as `git format-patch` writes them; `git am` on the base recreates the series (the stream \
holds no cover letter, which `git am` could not apply; -o DIR writes it as 0000-cover-letter.patch). --json (the \
global flag): one document, shape in docs/series.md."
)]
pub struct FormatArgs {
    /// The series (default: the one HEAD is on)
    pub name: Option<String>,
    /// Markdown (the default)
    #[arg(long, conflicts_with = "mbox")]
    pub markdown: bool,
    /// An mbox for `git am`
    #[arg(long)]
    pub mbox: bool,
    /// Write one file per patch (and the cover letter) into DIR instead of printing
    #[arg(short = 'o', long = "output-directory", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Measure the series against this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Record this formatting as the next version on refs/jules/series/PERSONA/NAME (when the series
    /// changed since the last version)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

fn write(ctx: &Context, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
    ctx.ui.out(path.display().to_string());
    Ok(())
}

pub fn run(ctx: &Context, a: FormatArgs) -> anyhow::Result<i32> {
    if ctx.ui.json && (a.markdown || a.mbox) {
        bail!(Error::usage(
            "--json, --markdown and --mbox exclude each other"
        ));
    }
    let repo = ctx.open()?;
    let f = format::collect(&repo, a.name.as_deref(), a.base.as_deref(), None)?;
    // A plain branch formatted with --base is no series: it has no versions.
    if let Some(persona) = a
        .persona
        .as_ref()
        .filter(|_| git_jules::capabilities::series::series_of_branch(&f.branch).is_some())
    {
        // The version goes to stderr: stdout stays the formatted series.
        let r = git_jules::capabilities::series::version::record(
            &repo,
            persona,
            Some(&f.series),
            a.base.as_deref(),
        )?;
        let v = &r.version.record;
        ctx.ui.status(format!(
            "{}@v{}{} ({})",
            r.series,
            v.number,
            if r.recorded {
                " recorded"
            } else {
                " (unchanged)"
            },
            r.ref_name
        ));
    }
    let Some(dir) = &a.output else {
        ctx.ui.print(&Printed {
            formatted: &f,
            mbox: a.mbox,
        });
        return Ok(0);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if ctx.ui.json {
        let text = serde_json::to_string_pretty(&f).context("encoding JSON")?;
        write(
            ctx,
            &dir.join("series.json"),
            format!("{text}\n").as_bytes(),
        )?;
    } else if a.mbox {
        let me = git_jules::kit::repo::committer(&repo);
        write(
            ctx,
            &dir.join("0000-cover-letter.patch"),
            &f.mbox_cover(&me),
        )?;
        for p in &f.patches {
            write(
                ctx,
                &dir.join(format!("{}.patch", file_stem(p.index, &p.summary))),
                &f.mbox_patch(p),
            )?;
        }
    } else {
        write(
            ctx,
            &dir.join("0000-cover-letter.md"),
            f.cover_markdown().as_bytes(),
        )?;
        for p in &f.patches {
            write(
                ctx,
                &dir.join(format!("{}.md", file_stem(p.index, &p.summary))),
                f.patch_markdown(p).as_bytes(),
            )?;
        }
    }
    Ok(0)
}

/// The formatted series on stdout: its document in JSON; Markdown, or with `--mbox` the patches as git
/// writes them (bytes as they are on a pipe; on a terminal the Ui escapes them, the patches' text can hold
/// anything).
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Printed<'a> {
    formatted: &'a format::Formatted,
    #[serde(skip)]
    mbox: bool,
}

impl Print for Printed<'_> {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        if self.mbox {
            out.write_all(&format::mbox(self.formatted))
        } else {
            writeln!(out, "{}", self.formatted.markdown().trim_end())
        }
    }
}
