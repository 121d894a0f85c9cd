//! The series versions of every persona (issue 44): what `series list --all`, `series versions` and
//! `series range-diff` show, as pages. `/series` lists every persona's recorded series next to the local
//! staging branches; `/series/PERSONA/NAME` shows each version (cover letter, patches, the review comments on
//! them, and the weaves that took that version as an input); `/series/PERSONA/NAME/range-diff?old=vN&new=vM`
//! the range-diff of two versions, line for line what `git range-diff` prints, each line classed as git
//! colours it.
//!
//! Everything here is read through the series use cases (`series::api`: `versions`, `range_diff`,
//! `list_versions`, the calls `git jules series` makes) and the review notes of each version
//! (`series::version::reviews`, as `series show` reads them); the page only classifies lines for the
//! stylesheet, and every text it shows goes through the template's autoescape.

use serde::Serialize;

use super::{Reply, Req, Shared};
use git_jules::capabilities::series::api;
use git_jules::capabilities::series::rangediff;
use git_jules::capabilities::series::version::{self, SeriesId, Version};
use git_jules::kit::error::Result;

/// Weave reports looked at for the weaves of a version (the newest first).
const WEAVES: usize = 50;

/// One version as its page shows it.
#[derive(Debug, Serialize)]
struct VersionOut {
    #[serde(flatten)]
    version: Version,
    /// `PERSONA/NAME@vN`.
    label: String,
    /// The review notes on its patches (each note names the version it was written about, when it does).
    reviews: Vec<version::PatchReviews>,
    /// The recorded weaves that took this version as an input.
    weaves: Vec<WeaveOut>,
}

/// A weave that took a version as an input: which run, onto what, and what became of the input.
#[derive(Debug, Serialize)]
struct WeaveOut {
    id: String,
    time: String,
    actor: String,
    into: String,
    status: String,
}

#[derive(Debug, Serialize)]
struct VersionsDoc {
    version: u32,
    series: String,
    persona: String,
    name: String,
    /// Oldest first.
    versions: Vec<VersionOut>,
}

fn series_id(persona: &str, name: &str) -> Result<SeriesId> {
    git_jules::kit::names::validate_name("persona", persona)?;
    git_jules::kit::names::validate_name("series", name)?;
    Ok(SeriesId {
        persona: persona.to_owned(),
        name: name.to_owned(),
    })
}

/// Every input of the last [`WEAVES`] recorded weaves, as (report, input label, status).
fn weave_inputs(repo: &gix::Repository) -> Result<Vec<(WeaveOut, String)>> {
    let mut out = Vec::new();
    for w in git_jules::capabilities::weave::record::last(repo, WEAVES)? {
        let Some(report) = &w.report else { continue };
        let into = w.summary["into"].as_str().unwrap_or_default().to_owned();
        for list in [
            "applied",
            "already",
            "conflicted",
            "dropped",
            "failed",
            "skipped",
        ] {
            for i in report[list].as_array().into_iter().flatten() {
                let Some(input) = i["input"].as_str() else {
                    continue;
                };
                out.push((
                    WeaveOut {
                        id: w.id.clone(),
                        time: w.time.clone(),
                        actor: w.actor.clone(),
                        into: into.clone(),
                        status: i["status"].as_str().unwrap_or(list).to_owned(),
                    },
                    input.to_owned(),
                ));
            }
        }
    }
    Ok(out)
}

/// `/series/PERSONA/NAME`: every version, oldest first.
pub(super) fn versions(shared: &Shared, r: &Req, persona: &str, name: &str) -> Result<Reply> {
    let ws = super::workspace(shared)?;
    let repo = ws.repo();
    let id = series_id(persona, name)?;
    let all = api::versions(&ws, &id.to_string())?;
    let weaves = weave_inputs(&repo)?;
    let mut out = Vec::new();
    for v in all {
        let label = version::label(&v);
        let reviews = version::reviews(&repo, &v)?;
        let weaves = weaves
            .iter()
            .filter(|(_, input)| *input == label)
            .map(|(w, _)| WeaveOut {
                id: w.id.clone(),
                time: w.time.clone(),
                actor: w.actor.clone(),
                into: w.into.clone(),
                status: w.status.clone(),
            })
            .collect();
        out.push(VersionOut {
            version: v,
            label,
            reviews,
            weaves,
        });
    }
    let doc = VersionsDoc {
        version: 1,
        series: id.to_string(),
        persona: id.persona.clone(),
        name: id.name.clone(),
        versions: out,
    };
    super::reply(
        r,
        "series_versions.html",
        format!(
            "series {}",
            super::render::visible(&doc.series, super::render::MAX_SUBJECT)
        ),
        &doc,
    )
}

/// How the stylesheet colours one line of a range-diff, as `git range-diff --color` does.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum LineClass {
    /// A `@@ section` line (git: fragment colour).
    Section,
    /// `+`: added in the newer patch (outer diff).
    Add,
    /// `-`: gone from the older patch.
    Del,
    /// `+` inside the outer `+`/`-`: a line of the newer patch's own diff that changed (git: bold).
    AddAdd,
    AddDel,
    DelAdd,
    DelDel,
    /// Unchanged context.
    Context,
}

#[derive(Debug, Serialize)]
struct DiffLine {
    class: LineClass,
    text: String,
}

#[derive(Debug, Serialize)]
struct EntryOut {
    #[serde(flatten)]
    entry: rangediff::Entry,
    /// The header line, as `git range-diff` prints it.
    header: String,
    /// `same`, `changed`, `dropped`, `added` (the entry's status), for the header's colour.
    sign: char,
    lines: Vec<DiffLine>,
}

#[derive(Debug, Serialize)]
struct RangeDiffDoc {
    version: u32,
    series: String,
    persona: String,
    name: String,
    old_version: u32,
    new_version: u32,
    /// Every version number, for the two pickers.
    numbers: Vec<u32>,
    rebased: bool,
    creation_factor: i32,
    old_signature: Option<git_jules::store::sign::State>,
    new_signature: Option<git_jules::store::sign::State>,
    /// Each version that is not its persona's (`PERSONA/NAME@vN: NOT VERIFIED: …`), as the CLI warns.
    marks: Vec<String>,
    entries: Vec<EntryOut>,
}

/// The class of one line of an inner diff (the diff of two patch texts): its first sign is the outer
/// diff's, its second (after the outer one) the patch's own.
fn classify(line: &str) -> LineClass {
    let mut chars = line.chars();
    let outer = chars.next();
    let inner = chars.next();
    match (outer, inner) {
        (Some('@'), Some('@')) => LineClass::Section,
        (Some('+'), Some('+')) => LineClass::AddAdd,
        (Some('+'), Some('-')) => LineClass::AddDel,
        (Some('-'), Some('+')) => LineClass::DelAdd,
        (Some('-'), Some('-')) => LineClass::DelDel,
        (Some('+'), _) => LineClass::Add,
        (Some('-'), _) => LineClass::Del,
        _ => LineClass::Context,
    }
}

/// `/series/PERSONA/NAME/range-diff?old=vN&new=vM[&rebase=1]`: the range-diff of two versions (default: the
/// one before the latest and the latest).
pub(super) fn range_diff(shared: &Shared, r: &Req, persona: &str, name: &str) -> Result<Reply> {
    let ws = super::workspace(shared)?;
    let id = series_id(persona, name)?;
    // The version numbers, for the pickers and the defaults (the one before the latest, and the latest).
    let latest = api::versions(&ws, &id.to_string())?.len() as u32;
    let new = r.param("new").map_or(format!("v{latest}"), str::to_owned);
    let old = match r.param("old") {
        Some(o) => o.to_owned(),
        None => format!(
            "v{}",
            version::parse_version(&new)?.saturating_sub(1).max(1)
        ),
    };
    let compared = api::range_diff(
        &ws,
        &api::RangeDiffInput {
            versions: api::Versions {
                series: id.to_string(),
                old,
                new: Some(new),
            },
            creation_factor: rangediff::CREATION_FACTOR,
            with_diff: true,
            rebase: r.param("rebase").is_some(),
        },
    )?;
    let warnings = compared.warnings;
    let rd = compared.diff;
    let numbers = (1..=latest).collect();
    let entries = rd
        .entries
        .into_iter()
        .zip(rd.headers)
        .map(|(entry, header)| EntryOut {
            sign: entry.status.sign(),
            lines: entry
                .diff
                .as_deref()
                .unwrap_or_default()
                .lines()
                .map(|l| DiffLine {
                    class: classify(l),
                    text: l.to_owned(),
                })
                .collect(),
            entry,
            header,
        })
        .collect();
    let doc = RangeDiffDoc {
        version: 1,
        series: id.to_string(),
        persona: id.persona.clone(),
        name: id.name.clone(),
        old_version: rd.old_version,
        new_version: rd.new_version,
        numbers,
        rebased: rd.rebased,
        creation_factor: rd.creation_factor,
        old_signature: rd.old_signature,
        new_signature: rd.new_signature,
        marks: warnings,
        entries,
    };
    super::reply(
        r,
        "range_diff.html",
        format!(
            "range-diff {} v{} v{}",
            super::render::visible(&doc.series, super::render::MAX_SUBJECT),
            doc.old_version,
            doc.new_version
        ),
        &doc,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of an inner diff get git range-diff's colour classes by their two leading signs.
    #[test]
    fn range_diff_lines_are_classed_like_gits_colours() {
        assert_eq!(classify("@@ src/a.rs: fn main"), LineClass::Section);
        assert_eq!(classify("+    +new line"), LineClass::Add);
        assert_eq!(classify("++new line"), LineClass::AddAdd);
        assert_eq!(classify("+-old line"), LineClass::AddDel);
        assert_eq!(classify("-+new line"), LineClass::DelAdd);
        assert_eq!(classify("--old line"), LineClass::DelDel);
        assert_eq!(classify("-  context"), LineClass::Del);
        assert_eq!(classify("   context"), LineClass::Context);
        assert_eq!(classify(""), LineClass::Context);
    }
}
