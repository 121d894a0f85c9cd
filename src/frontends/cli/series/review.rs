//! `series review`: the buffer, the editor (chosen like git chooses it), the parsed `R:` comments.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};
use git_jules::capabilities::series::{format, review, version};
use git_jules::Error;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The editor is the first of GIT_EDITOR, core.editor, VISUAL (unless TERM is dumb), EDITOR and vi, \
run as `sh -c '$EDITOR \"$@\"'` on .git/JULES_REVIEW_EDITMSG like git runs it. Comments are appended to the notes \
of the patches' commits in refs/notes/jules/review (`git notes --ref=jules/review show COMMIT`).\n\
Exit codes: 0 done, 2 the buffer is malformed (an R: outside a patch, a header that does not match the series, text \
outside a comment) or another error."
)]
pub struct ReviewArgs {
    /// Review only patch N (default: the whole series)
    #[arg(value_name = "N")]
    pub patch: Option<usize>,
    /// Read the edited buffer from FILE (`-` for stdin) instead of opening an editor
    #[arg(long, value_name = "FILE")]
    pub from_file: Option<PathBuf>,
    /// Print the buffer to review on stdout and exit (to edit it elsewhere, then pass it to --from-file)
    #[arg(long, conflicts_with = "from_file")]
    pub print: bool,
    /// Also send the comments as a mail message (type task, tag review) to PERSONA (a persona or a group;
    /// repeatable)
    #[arg(long, value_name = "PERSONA")]
    pub mail_to: Vec<String>,
    /// The persona sending the mail (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub from: Option<String>,
    /// The series (default: the one HEAD is on)
    #[arg(long, value_name = "NAME")]
    pub series: Option<String>,
    /// Measure the series against this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Review a recorded version, from any clone that synced it (PERSONA/NAME[@vN]; default version: the
    /// latest)
    #[arg(long = "version", value_name = "PERSONA/NAME[@vN]", conflicts_with_all = ["series", "base"])]
    pub series_version: Option<String>,
}

/// git's choice of editor (`editor.c`): `GIT_EDITOR`, `core.editor`, `VISUAL` unless the terminal is dumb,
/// `EDITOR`, then `vi` (an error on a dumb terminal).
fn editor(repo: &gix::Repository) -> anyhow::Result<String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let dumb = std::env::var("TERM").map_or(true, |t| t == "dumb");
    let chosen = env("GIT_EDITOR")
        .or_else(|| {
            repo.config_snapshot()
                .string("core.editor")
                .map(|s| s.to_string())
                .filter(|s| !s.is_empty())
        })
        .or_else(|| if dumb { None } else { env("VISUAL") })
        .or_else(|| env("EDITOR"));
    match chosen {
        Some(e) => Ok(e),
        None if dumb => bail!(Error::usage(
            "the terminal is dumb and no editor is set (GIT_EDITOR, core.editor, EDITOR); pass --from-file FILE"
        )),
        None => Ok("vi".to_owned()),
    }
}

/// Run the editor on `file` as git does: through the shell, with the file as `"$@"`. `:` means "do not edit".
fn edit(editor: &str, file: &Path) -> anyhow::Result<()> {
    if editor == ":" {
        return Ok(());
    }
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(editor)
        .arg(file)
        .status()
        .with_context(|| format!("starting the editor {editor:?}"))?;
    if !status.success() {
        bail!(Error::usage(format!(
            "there was a problem with the editor {editor:?} ({status}); the buffer is kept in {}",
            file.display()
        )));
    }
    Ok(())
}

/// The `--json` document: the review, and the id of the mail message sent (`null` without `--mail-to`).
#[derive(serde::Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    review: &'a review::Review,
    mail: Option<String>,
    #[serde(skip)]
    mail_to: &'a [String],
}

/// A person reads each patch's comments as the buffer had them, then what was mailed and stored.
impl Print for Out<'_> {
    fn human(&self, out: &mut dyn std::io::Write, style: &Style) -> std::io::Result<()> {
        for p in &self.review.patches {
            writeln!(
                out,
                "### Patch [{}/{}] ### {} {}",
                p.index,
                p.total,
                style.yellow(&p.commit.to_hex_with_len(7).to_string()),
                p.summary
            )?;
            for c in &p.comments {
                let mut lines = c.text.lines();
                writeln!(out, "R: {}", lines.next().unwrap_or_default())?;
                for l in lines {
                    writeln!(out, "   {l}")?;
                }
                if let Some(path) = &c.path {
                    let at = c
                        .line
                        .as_deref()
                        .map(|l| format!(", after {:?}", l.chars().take(60).collect::<String>()))
                        .unwrap_or_default();
                    writeln!(out, "{}", style.dim(&format!("   ({path}{at})")))?;
                }
            }
        }
        Ok(())
    }
    fn human_status_after(&self, _: &Style) -> Vec<String> {
        let r = self.review;
        if r.patches.is_empty() {
            return vec!["no R: comments: nothing stored".into()];
        }
        let mut lines = Vec::new();
        if let Some(id) = &self.mail {
            lines.push(format!(
                "mailed to {}: message {id}",
                self.mail_to.join(", ")
            ));
        }
        lines.push(format!(
            "stored {} comment{} on {} patch{} in {}",
            r.comment_count(),
            if r.comment_count() == 1 { "" } else { "s" },
            r.patches.len(),
            if r.patches.len() == 1 { "" } else { "es" },
            review::NOTES_REF
        ));
        lines
    }
}

pub fn run(ctx: &Context, a: ReviewArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    // The version the comments are about: the one named, or the recorded one whose base and tip these are.
    let (f, version) = match &a.series_version {
        Some(spec) => {
            let (id, n) = version::parse_spec(spec)?;
            let v = version::find(&repo, &id, n)?;
            (
                version::collect(&repo, &v, a.patch)?,
                Some(version::label(&v)),
            )
        }
        None => {
            let f = format::collect(&repo, a.series.as_deref(), a.base.as_deref(), a.patch)?;
            let v = version::naming(&repo, &f.series, f.base.commit, f.tip)?;
            (f, v.as_ref().map(version::label))
        }
    };
    let buffer = review::buffer(&f);
    if a.print {
        ctx.ui.out(buffer.trim_end());
        return Ok(0);
    }
    let (text, source) = match &a.from_file {
        Some(p) if p.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the review from stdin (it must be UTF-8)")?;
            (text, "stdin".to_owned())
        }
        Some(p) => (
            std::fs::read_to_string(p)
                .with_context(|| format!("reading the review from {}", p.display()))?,
            p.display().to_string(),
        ),
        None => {
            let path = repo.git_dir().join(review::EDIT_FILE);
            std::fs::write(&path, &buffer)
                .with_context(|| format!("writing {}", path.display()))?;
            edit(&editor(&repo)?, &path)?;
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {} back (it must be UTF-8)", path.display()))?;
            (text, path.display().to_string())
        }
    };
    let allowed: Vec<usize> = f.patches.iter().map(|p| p.index).collect();
    let parsed = review::parse(&text, f.total(), &allowed).map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("{m} (in {source})")),
        e => e,
    })?;
    let me = git_jules::kit::repo::committer(&repo);
    let reviewer = format!("{} <{}>", me.name, me.email);
    let mut r = review::review(&f, parsed, reviewer);
    r.series_version = version;
    let sender = match (&a.mail_to[..], &a.from) {
        ([], _) => None,
        (_, Some(from)) => Some(from.clone()),
        (_, None) => bail!(Error::usage(
            "--mail-to needs a sender: pass --from PERSONA or set JULES_PERSONA"
        )),
    };
    let event = match sender {
        Some(from) if r.comment_count() > 0 => {
            Some(review::mail_event(&repo, &r, &from, &a.mail_to)?)
        }
        _ => None,
    };
    if r.comment_count() > 0 {
        review::store(&repo, &r)?;
    }
    let mail = match event {
        Some(e) => Some(review::send_mail(&repo, e)?.id.to_hex()),
        None => None,
    };
    ctx.ui.print(&Out {
        review: &r,
        mail,
        mail_to: &a.mail_to,
    });
    Ok(0)
}
