//! `series version`, `series versions`, `series show`, `series range-diff`, `series interdiff` and
//! `series list --all`: versions of series on `refs/jules/series/<persona>/<name>`, from any clone.

use git_jules::capabilities::series::api;
use git_jules::capabilities::series::rangediff;
use git_jules::capabilities::series::version;

use std::io::Write;

use git_jules::capabilities::series::version::Version;
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
pub struct VersionArgs {
    /// The series (default: the one HEAD is on)
    pub name: Option<String>,
    /// The persona whose version this is (refs/jules/series/PERSONA/NAME)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: String,
    /// Measure the series against this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct VersionsArgs {
    /// PERSONA/NAME
    pub series: String,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// PERSONA/NAME[@vN] (default version: the latest)
    pub series: String,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Pairs the patches of the two versions as `git range-diff BASE1..TIP1 BASE2..TIP2` does on the \
same commits and prints git's header lines (`=` same, `!` changed, `<` dropped, `>` added); under a changed pair, \
the diff of the two patches, indented four spaces."
)]
pub struct RangeDiffArgs {
    /// PERSONA/NAME
    pub series: String,
    /// The older version (vN)
    pub old: String,
    /// The newer version (vM; default: the latest)
    pub new: Option<String>,
    /// Percentage of a patch's size that pairing it may cost before it counts as dropped and added
    #[arg(long, default_value_t = rangediff::CREATION_FACTOR, value_name = "PERCENT")]
    pub creation_factor: i32,
    /// Only the header lines, no diffs
    #[arg(short = 's', long = "no-patch")]
    pub no_patch: bool,
    /// Replay the older version onto the newer one's base first (in memory, no ref moved), so that upstream
    /// changes between the bases do not show as changes
    #[arg(long)]
    pub rebase: bool,
}

#[derive(Debug, clap::Args)]
pub struct InterdiffArgs {
    /// PERSONA/NAME
    pub series: String,
    /// The older version (vN)
    pub old: String,
    /// The newer version (vM; default: the latest)
    pub new: Option<String>,
}

pub fn record(ctx: &Context, a: VersionArgs) -> anyhow::Result<i32> {
    let r = api::record_version(
        &ctx.workspace()?,
        &a.persona,
        a.name.as_deref(),
        a.base.as_deref(),
    )?;
    ctx.ui.print(&r);
    Ok(0)
}

/// The report of a recorded version (also after `series format`): the version on stdout, or on stderr
/// that it was already recorded.
impl Print for version::Recorded {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let v = &self.version.record;
        if self.recorded {
            writeln!(
                out,
                "{}@v{}: {} patches on {} ({})",
                self.series,
                v.number,
                v.patches.len(),
                v.base.name,
                self.ref_name
            )?;
        }
        Ok(())
    }

    fn human_status(&self, _: &Style) -> Vec<String> {
        let v = &self.version.record;
        if self.recorded {
            return Vec::new();
        }
        vec![format!(
            "{}@v{} unchanged: already recorded ({})",
            self.series, v.number, self.ref_name
        )]
    }
}

/// `series versions`: one line a version; a list in JSON (`{"version", "items"}`).
#[derive(Serialize)]
#[serde(transparent)]
struct Versions(Vec<Version>);

impl Print for Versions {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for v in &self.0 {
            let r = &v.record;
            let change = match r.number {
                1 => String::new(),
                _ => {
                    let kept = r.patches.iter().filter(|p| p.previous.is_some()).count();
                    format!(
                        "  ({kept} from v{}, {} new, {} dropped)",
                        r.number - 1,
                        r.patches.len() - kept,
                        r.dropped.len()
                    )
                }
            };
            let mark = v.mark().map(|m| format!("  ({m})")).unwrap_or_default();
            writeln!(
                out,
                "v{:<3} {}  {:>3} patches  base {} {}  {}{change}{}",
                r.number,
                &v.id.to_hex_with_len(7),
                r.patches.len(),
                r.base.name,
                &r.base.commit[..7],
                v.date,
                style.red(&mark)
            )?;
        }
        Ok(())
    }
}

pub fn versions(ctx: &Context, a: VersionsArgs) -> anyhow::Result<i32> {
    ctx.ui
        .print(&Versions(api::versions(&ctx.workspace()?, &a.series)?));
    Ok(0)
}

pub fn show(ctx: &Context, a: ShowArgs) -> anyhow::Result<i32> {
    ctx.ui.print(&api::show(&ctx.workspace()?, &a.series)?);
    Ok(0)
}

/// `series show`: the version, its patches with their review comments, what it dropped, its cover.
impl Print for api::Shown {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let (v, reviews) = (&self.version, &self.reviews);
        let r = &v.record;
        writeln!(
            out,
            "{}@v{} ({}), base {} {}, tip {}",
            v.series(),
            r.number,
            v.date,
            r.base.name,
            &r.base.commit[..7],
            &r.tip[..7]
        )?;
        if let Some(m) = v.mark() {
            writeln!(out, "{}", style.red(&format!("  {m}")))?;
        }
        let total = r.patches.len();
        for p in &r.patches {
            let from = match p.previous {
                Some(i) if r.number > 1 => format!("  (v{} {i})", r.number - 1),
                _ if r.number > 1 => "  (new)".to_owned(),
                _ => String::new(),
            };
            writeln!(
                out,
                "  {:>2}/{total} {} {}{from}",
                p.index,
                style.yellow(&p.commit[..7]),
                p.summary
            )?;
            for note in reviews
                .iter()
                .filter(|r| r.patch == p.index)
                .flat_map(|r| &r.notes)
            {
                let about = note.series_version.as_deref().unwrap_or("this commit");
                for c in &note.comments {
                    writeln!(
                        out,
                        "        R: {} ({}, about {about})",
                        c.text.lines().next().unwrap_or_default(),
                        note.reviewer
                    )?;
                }
            }
        }
        for d in &r.dropped {
            writeln!(out, "  dropped: v{} patch {d}", r.number - 1)?;
        }
        if !v.cover.trim().is_empty() {
            writeln!(out)?;
            writeln!(out, "{}", style.lines(v.cover.trim_end()))?;
        }
        Ok(())
    }
}

fn versions_of(series: String, old: String, new: Option<String>) -> api::Versions {
    api::Versions { series, old, new }
}

pub fn range_diff(ctx: &Context, a: RangeDiffArgs) -> anyhow::Result<i32> {
    let rd = api::range_diff(
        &ctx.workspace()?,
        &api::RangeDiffInput {
            versions: versions_of(a.series, a.old, a.new),
            creation_factor: a.creation_factor,
            with_diff: !a.no_patch,
            rebase: a.rebase,
        },
    )?;
    ctx.ui.print(&rd);
    Ok(0)
}

/// `series range-diff`: git's header lines, each changed pair's diff under it indented four spaces. What
/// the comparison says about versions that are not their persona's goes to stderr, the range-diff's own
/// lines being git's.
impl Print for api::Compared<version::RangeDiff> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let rd = &self.diff;
        for (e, h) in rd.entries.iter().zip(&rd.headers) {
            writeln!(out, "{h}")?;
            if let Some(d) = &e.diff {
                for l in d.lines() {
                    writeln!(out, "    {l}")?;
                }
            }
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

pub fn interdiff(ctx: &Context, a: InterdiffArgs) -> anyhow::Result<i32> {
    let d = api::interdiff(&ctx.workspace()?, &versions_of(a.series, a.old, a.new))?;
    ctx.ui.print(&d);
    Ok(0)
}

/// `series interdiff`: git's diff as it is, a note on stderr when the bases differ.
impl Print for api::Compared<version::Interdiff> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        out.write_all(self.diff.diff.as_bytes())
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn human_status(&self, _: &Style) -> Vec<String> {
        let d = &self.diff;
        if !d.bases_differ {
            return Vec::new();
        }
        vec![format!(
            "note: v{} and v{} have different bases; the interdiff shows upstream changes too",
            d.old_version, d.new_version
        )]
    }
}

/// `series list --all`.
pub fn list_all(ctx: &Context, cmd: Option<&str>) -> anyhow::Result<i32> {
    ctx.ui.print(&api::list_versions(&ctx.workspace()?, cmd)?);
    Ok(0)
}

/// `series list --all`: one line a series, its latest version and verify results; the refs skipped as
/// warnings.
impl Print for api::AllVersions {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for l in &self.series {
            let r = &l.latest.record;
            let verify = match &l.verify {
                None => "verify: no jules.verify.cmd".to_owned(),
                Some(c) => c
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let mark = l
                .latest
                .mark()
                .map(|m| format!("  ({m})"))
                .unwrap_or_default();
            writeln!(
                out,
                "{:<32} v{:<3} {:>3} patches  base {:<16} {}{}",
                l.series,
                r.number,
                r.patches.len(),
                r.base.name,
                verify,
                style.red(&mark)
            )?;
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|s| format!("skipped {}: {}", s.name, s.reason))
            .collect()
    }

    fn human_status(&self, _: &Style) -> Vec<String> {
        if !self.series.is_empty() {
            return Vec::new();
        }
        vec!["no series versions: `git jules series format` or `series version` records one".into()]
    }
}
