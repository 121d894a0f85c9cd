//! `series version`, `series versions`, `series show`, `series range-diff`, `series interdiff` and
//! `series list --all`: versions of series on `refs/jules/series/<persona>/<name>`, from any clone.

use git_jules::series::rangediff;
use git_jules::series::version::{self, parse_spec, parse_version, Version};

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
    let repo = ctx.open()?;
    let r = version::record(&repo, &a.persona, a.name.as_deref(), a.base.as_deref())?;
    print_recorded(ctx, &r);
    Ok(0)
}

/// The report of a recorded version (also after `series format`).
pub fn print_recorded(ctx: &Context, r: &version::Recorded) {
    if ctx.ui.json {
        ctx.ui.json(r);
        return;
    }
    let v = &r.version.record;
    if r.recorded {
        ctx.ui.out(format!(
            "{}@v{}: {} patches on {} ({})",
            r.series,
            v.number,
            v.patches.len(),
            v.base.name,
            r.ref_name
        ));
    } else {
        ctx.ui.status(format!(
            "{}@v{} unchanged: already recorded ({})",
            r.series, v.number, r.ref_name
        ));
    }
}

pub fn versions(ctx: &Context, a: VersionsArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let (id, v) = parse_spec(&a.series)?;
    if v.is_some() {
        anyhow::bail!(git_jules::Error::usage(
            "`series versions` takes PERSONA/NAME without @vN"
        ));
    }
    let all = version::versions(&repo, &id)?;
    if ctx.ui.json {
        ctx.ui.json(&all);
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
        ctx.ui.out(format!(
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
    let repo = ctx.open()?;
    let (id, n) = parse_spec(&a.series)?;
    let v = version::find(&repo, &id, n)?;
    let reviews = version::reviews(&repo, &v)?;
    if ctx.ui.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            version: &'a Version,
            reviews: &'a [version::PatchReviews],
        }
        ctx.ui.json(&Doc {
            version: &v,
            reviews: &reviews,
        });
        return Ok(0);
    }
    let r = &v.record;
    ctx.ui.out(format!(
        "{}@v{} ({}), base {} {}, tip {}",
        id,
        r.number,
        v.date,
        r.base.name,
        &r.base.commit[..7],
        &r.tip[..7]
    ));
    if let Some(m) = v.mark() {
        ctx.ui.out(ctx.ui.red(&format!("  {m}")));
    }
    let total = r.patches.len();
    for p in &r.patches {
        let from = match p.previous {
            Some(i) if r.number > 1 => format!("  (v{} {i})", r.number - 1),
            _ if r.number > 1 => "  (new)".to_owned(),
            _ => String::new(),
        };
        ctx.ui.out(format!(
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
                ctx.ui.out(format!(
                    "        R: {} ({}, about {about})",
                    c.text.lines().next().unwrap_or_default(),
                    note.reviewer
                ));
            }
        }
    }
    for d in &r.dropped {
        ctx.ui
            .out(format!("  dropped: v{} patch {d}", r.number - 1));
    }
    if !v.cover.trim().is_empty() {
        ctx.ui.out("");
        ctx.ui.out(ctx.ui.lines(v.cover.trim_end()));
    }
    Ok(0)
}

/// The two versions named by `series old [new]`.
fn two(
    repo: &gix::Repository,
    series: &str,
    old: &str,
    new: Option<&str>,
) -> anyhow::Result<(Version, Version)> {
    let (id, at) = parse_spec(series)?;
    if at.is_some() {
        anyhow::bail!(git_jules::Error::usage(
            "name the versions as separate arguments: PERSONA/NAME vN vM"
        ));
    }
    let old = version::find(repo, &id, Some(parse_version(old)?))?;
    let new = version::find(repo, &id, new.map(parse_version).transpose()?)?;
    Ok((old, new))
}

pub fn range_diff(ctx: &Context, a: RangeDiffArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    if !(0..=10_000).contains(&a.creation_factor) {
        anyhow::bail!(git_jules::Error::usage(
            "--creation-factor is a percentage from 0 to 10000"
        ));
    }
    let (old, new) = two(&repo, &a.series, &a.old, a.new.as_deref())?;
    let rd = version::range_diff(&repo, &old, &new, a.creation_factor, !a.no_patch, a.rebase)?;
    // The range-diff's own lines are git's; what is not its persona's is said on stderr.
    for v in [&old, &new] {
        if let Some(m) = v.mark() {
            ctx.ui.warn(format!("{}: {m}", version::label(v)));
        }
    }
    if ctx.ui.json {
        ctx.ui.json(&rd);
        return Ok(0);
    }
    for (e, h) in rd.entries.iter().zip(&rd.headers) {
        ctx.ui.out(h);
        if let Some(d) = &e.diff {
            for l in d.lines() {
                ctx.ui.out(format!("    {l}"));
            }
        }
    }
    Ok(0)
}

pub fn interdiff(ctx: &Context, a: InterdiffArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let (old, new) = two(&repo, &a.series, &a.old, a.new.as_deref())?;
    let d = version::interdiff(&repo, &old, &new)?;
    for v in [&old, &new] {
        if let Some(m) = v.mark() {
            ctx.ui.warn(format!("{}: {m}", version::label(v)));
        }
    }
    if ctx.ui.json {
        ctx.ui.json(&d);
        return Ok(0);
    }
    if d.bases_differ {
        ctx.ui.status(format!(
            "note: v{} and v{} have different bases; the interdiff shows upstream changes too",
            d.old_version, d.new_version
        ));
    }
    ctx.ui.out_raw(&d.diff);
    Ok(0)
}

/// `series list --all`.
pub fn list_all(ctx: &Context, cmd: Option<&str>) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let (all, skipped) = version::list_all(&repo, cmd)?;
    for s in &skipped {
        ctx.ui.warn(format!("skipped {}: {}", s.name, s.reason));
    }
    if ctx.ui.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            series: &'a [version::Listed],
            skipped: &'a [version::Skipped],
        }
        ctx.ui.json(&Doc {
            series: &all,
            skipped: &skipped,
        });
        return Ok(0);
    }
    if all.is_empty() {
        ctx.ui.status(
            "no series versions: `git jules series format` or `series version` records one",
        );
    }
    for l in &all {
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
        ctx.ui.out(format!(
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
