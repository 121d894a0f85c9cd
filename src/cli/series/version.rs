//! `series version`, `series versions`, `series show`, `series range-diff`, `series interdiff` and
//! `series list --all`: versions of series on `refs/jules/series/<persona>/<name>`, from any clone.

use git_jules::series::api;
use git_jules::series::rangediff;
use git_jules::series::version;

use super::super::ui;
use crate::cli::context::Context;

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
    print_recorded(ctx, &r);
    Ok(0)
}

/// The report of a recorded version (also after `series format`).
pub fn print_recorded(ctx: &Context, r: &version::Recorded) {
    if ctx.ui.json {
        ui::json(r);
        return;
    }
    let v = &r.version.record;
    if r.recorded {
        ui::out(format!(
            "{}@v{}: {} patches on {} ({})",
            r.series,
            v.number,
            v.patches.len(),
            v.base.name,
            r.ref_name
        ));
    } else {
        ui::status(format!(
            "{}@v{} unchanged: already recorded ({})",
            r.series, v.number, r.ref_name
        ));
    }
}

pub fn versions(ctx: &Context, a: VersionsArgs) -> anyhow::Result<i32> {
    let all = api::versions(&ctx.workspace()?, &a.series)?;
    if ctx.ui.json {
        ui::json(&all);
        return Ok(0);
    }
    for v in &all {
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
        ui::out(format!(
            "v{:<3} {}  {:>3} patches  base {} {}  {}{change}{}",
            r.number,
            &v.id.to_hex_with_len(7),
            r.patches.len(),
            r.base.name,
            &r.base.commit[..7],
            v.date,
            ctx.ui.red(&mark)
        ));
    }
    Ok(0)
}

pub fn show(ctx: &Context, a: ShowArgs) -> anyhow::Result<i32> {
    let shown = api::show(&ctx.workspace()?, &a.series)?;
    if ctx.ui.json {
        ui::json(&shown);
        return Ok(0);
    }
    let (v, reviews) = (&shown.version, &shown.reviews);
    let r = &v.record;
    ui::out(format!(
        "{}@v{} ({}), base {} {}, tip {}",
        v.series(),
        r.number,
        v.date,
        r.base.name,
        &r.base.commit[..7],
        &r.tip[..7]
    ));
    if let Some(m) = v.mark() {
        ui::out(ctx.ui.red(&format!("  {m}")));
    }
    let total = r.patches.len();
    for p in &r.patches {
        let from = match p.previous {
            Some(i) if r.number > 1 => format!("  (v{} {i})", r.number - 1),
            _ if r.number > 1 => "  (new)".to_owned(),
            _ => String::new(),
        };
        ui::out(format!(
            "  {:>2}/{total} {} {}{from}",
            p.index,
            ctx.ui.yellow(&p.commit[..7]),
            p.summary
        ));
        for note in reviews
            .iter()
            .filter(|r| r.patch == p.index)
            .flat_map(|r| &r.notes)
        {
            let about = note.series_version.as_deref().unwrap_or("this commit");
            for c in &note.comments {
                ui::out(format!(
                    "        R: {} ({}, about {about})",
                    c.text.lines().next().unwrap_or_default(),
                    note.reviewer
                ));
            }
        }
    }
    for d in &r.dropped {
        ui::out(format!("  dropped: v{} patch {d}", r.number - 1));
    }
    if !v.cover.trim().is_empty() {
        ui::out("");
        ui::out(ctx.ui.lines(v.cover.trim_end()));
    }
    Ok(0)
}

fn versions_of(series: String, old: String, new: Option<String>) -> api::Versions {
    api::Versions { series, old, new }
}

/// What a comparison says about versions that are not their persona's: on stderr, the range-diff's and
/// the interdiff's own lines being git's.
fn warn_all(warnings: &[String]) {
    for w in warnings {
        ui::warn(w);
    }
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
    warn_all(&rd.warnings);
    let rd = &rd.diff;
    if ctx.ui.json {
        ui::json(rd);
        return Ok(0);
    }
    for (e, h) in rd.entries.iter().zip(&rd.headers) {
        ui::out(h);
        if let Some(d) = &e.diff {
            for l in d.lines() {
                ui::out(format!("    {l}"));
            }
        }
    }
    Ok(0)
}

pub fn interdiff(ctx: &Context, a: InterdiffArgs) -> anyhow::Result<i32> {
    let d = api::interdiff(&ctx.workspace()?, &versions_of(a.series, a.old, a.new))?;
    warn_all(&d.warnings);
    let d = &d.diff;
    if ctx.ui.json {
        ui::json(d);
        return Ok(0);
    }
    if d.bases_differ {
        ui::status(format!(
            "note: v{} and v{} have different bases; the interdiff shows upstream changes too",
            d.old_version, d.new_version
        ));
    }
    ui::out_raw(&d.diff);
    Ok(0)
}

/// `series list --all`.
pub fn list_all(ctx: &Context, cmd: Option<&str>) -> anyhow::Result<i32> {
    let listed = api::list_versions(&ctx.workspace()?, cmd)?;
    for s in &listed.skipped {
        ui::warn(format!("skipped {}: {}", s.name, s.reason));
    }
    if ctx.ui.json {
        ui::json(&listed);
        return Ok(0);
    }
    let all = &listed.series;
    if all.is_empty() {
        ui::status("no series versions: `git jules series format` or `series version` records one");
    }
    for l in all {
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
        ui::out(format!(
            "{:<32} v{:<3} {:>3} patches  base {:<16} {}{}",
            l.series,
            r.number,
            r.patches.len(),
            r.base.name,
            verify,
            ctx.ui.red(&mark)
        ));
    }
    Ok(0)
}
