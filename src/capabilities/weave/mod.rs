//! Weaving: integrate many personas' branches, commit ranges and patch files onto one integration branch,
//! in memory, and tell the authors of what does not apply. `docs/weave.md` is the user's description.
//!
//! One run: resolve the base (the series base rule) and the integration branch (`--into`, default
//! `jules/integration/sprint-N`); start from the branch's tip when it contains the base tip, else from the
//! base; load the inputs ([`input`]); order them ([`order`]); apply each in turn with the [`engine`] on a
//! repository handle whose object writes stay in memory; with `--verify`, flush, check the tip and bisect
//! out the first input that breaks it ([`bisect`]), then weave again without it; finally write the objects
//! once, move the branch by compare-and-swap (a non-fast-forward move keeps the old tip under
//! `refs/jules/backup/weave/<branch>/<n>`), and mail the authors of skipped inputs ([`notify`]). `--check` stops
//! before anything is written.
//!
//! Inputs: [`input`] (what can be woven), [`mbox`] and [`patch`] (patch files), [`persona`] (who wrote
//! it). Applying: [`engine`], [`apply`] (exact-context hunks with offsets), [`binary`] (`GIT binary patch`),
//! [`trailers`] (`Woven-from`/`Woven-id`), [`footprint`] (who changed which lines, for conflict reports).
//! Output: [`report`]; [`record`] (every report that wrote something, kept on `refs/jules/weave`); [`recent`]
//! (what else outlives a run: woven commits on the integration branches, weave mails).

pub mod apply;
pub mod binary;
pub mod bisect;
pub mod engine;
pub mod footprint;
#[cfg(test)]
mod fuzz_tests;
pub mod input;
pub mod mbox;
pub mod notify;
pub mod order;
pub mod patch;
pub mod persona;
pub mod recent;
pub mod record;
pub mod report;
pub mod store;
pub mod trailers;

use std::sync::atomic::AtomicBool;

use gix::ObjectId;

use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::refs::{self, Relation};
use engine::{Engine, Failure, Outcome};
use input::{Input, Spec};
use persona::PersonaMap;
pub use report::Report;
use report::{InputReport, Status, VerifyFailure, VerifySummary, WovenCommit};

/// What to weave and how. `Options::default()` weaves nothing and sends no mail: set `specs` (or
/// `branch_globs`), and `mail: true` with a `from` persona to mail the authors of skipped inputs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Inputs in the order given.
    pub specs: Vec<Spec>,
    /// `--branches` globs, expanded after `specs`.
    pub branch_globs: Vec<String>,
    /// The base (default: the series base resolution for the integration branch).
    pub base: Option<String>,
    /// The integration branch (default: [`default_into`]).
    pub into: Option<String>,
    /// Write nothing: no objects, no refs, no mail.
    pub check: bool,
    /// `--order smart`.
    pub smart: bool,
    pub persona_map: Option<PersonaMap>,
    pub verify: Option<bisect::Options>,
    /// The sender of the mails.
    pub from: String,
    /// Send mails (the CLI's `--no-mail` clears it).
    pub mail: bool,
    /// Start from the base even when the integration branch contains it.
    pub fresh: bool,
    /// Mails with no diff (`--empty`, as `git am`): drop (report them, the default), keep, stop.
    pub empty: engine::Empty,
    /// `-p<n>` for patch files, as `git apply -p` and `git am -p` (`None`: git's default).
    pub strip: Option<usize>,
}

impl Options {
    /// What `weave --check --no-mail` does with these inputs: everything at its default, nothing written.
    pub fn check_only(
        specs: Vec<Spec>,
        branch_globs: Vec<String>,
        base: Option<String>,
        into: Option<String>,
    ) -> Options {
        Options {
            specs,
            branch_globs,
            base,
            into,
            check: true,
            smart: false,
            persona_map: None,
            verify: None,
            from: "weaver".to_owned(),
            mail: false,
            fresh: false,
            empty: engine::Empty::Drop,
            strip: None,
        }
    }
}

/// `jules/integration/sprint-N` for the current sprint of `refs/jules/state`, else `jules/integration/weave`.
pub fn default_into(repo: &gix::Repository) -> Result<String> {
    let sprint = crate::capabilities::state::State::open(repo)?
        .view()?
        .view
        .current_sprint;
    Ok(match sprint {
        Some(n) => format!("jules/integration/sprint-{n}"),
        None => "jules/integration/weave".to_owned(),
    })
}

/// The state of one pass over the inputs.
struct Run {
    outcomes: Vec<Option<Outcome>>,
    tip: ObjectId,
    tree: ObjectId,
    /// Woven inputs in order, with the tip right after each.
    woven: Vec<(usize, ObjectId)>,
}

#[allow(clippy::too_many_arguments)]
fn weave_all(
    mem: &gix::Repository,
    start: ObjectId,
    base: ObjectId,
    committer: &gix::actor::Signature,
    inputs: &[Input],
    order: &[usize],
    excluded: &[usize],
    map: Option<&PersonaMap>,
    empty: engine::Empty,
) -> Result<Run> {
    let mut engine = Engine::new(mem, start, committer.clone())?;
    engine.empty = empty;
    engine.learn_history(base, map)?;
    let mut outcomes: Vec<Option<Outcome>> = vec![None; inputs.len()];
    let mut woven = Vec::new();
    for &i in order {
        if excluded.contains(&i) {
            continue;
        }
        let outcome = engine.weave(&inputs[i])?;
        if let Outcome::Woven(w) = &outcome {
            woven.push((i, w.after));
        }
        outcomes[i] = Some(outcome);
    }
    Ok(Run {
        outcomes,
        tip: engine.tip,
        tree: engine.tree,
        woven,
    })
}

fn interrupted() -> Error {
    Error::Other("interrupted: the integration branch was not moved and no mail was sent".into())
}

/// Weave `opts.specs` (and `--branches`) onto the integration branch. The library never prints; the report
/// says everything, and `report.clean()` is false when an input was skipped or dropped.
pub fn weave(repo: &gix::Repository, opts: &Options, interrupt: &AtomicBool) -> Result<Report> {
    if opts.check && opts.verify.is_some() {
        return Err(Error::needs(
            ErrorKind::Usage,
            "a dry run cannot verify: verifying needs the woven commits on disk",
            Remedy::CheckWithoutVerify,
        ));
    }
    if opts.mail && !opts.check {
        crate::capabilities::mail::message::validate_persona(&opts.from)?;
    }
    let into = match &opts.into {
        Some(i) => i.clone(),
        None => default_into(repo)?,
    };
    let into_short = into.strip_prefix("refs/heads/").unwrap_or(&into).to_owned();
    let into_ref = if into.starts_with("refs/") {
        into.clone()
    } else {
        format!("refs/heads/{into}")
    };
    gix::refs::FullName::try_from(into_ref.as_str())
        .map_err(|e| Error::usage(format!("bad integration branch name {into}: {e}")))?;
    if !opts.check
        && repo
            .head_name()?
            .is_some_and(|h| h.as_bstr() == into_ref.as_str())
    {
        return Err(Error::needs(
            ErrorKind::Usage,
            format!(
                "refusing to weave onto {into_short}: it is checked out here, and weave never touches the working \
                 tree; switch to another branch or pick another to weave into"
            ),
            Remedy::Into,
        ));
    }
    let base =
        crate::capabilities::series::base::resolve(repo, opts.base.as_deref(), Some(&into_short))?;
    let previous = refs::target(repo, &into_ref)?;
    let start = match previous {
        Some(p)
            if !opts.fresh
                && matches!(
                    refs::relation(repo, p, base.commit)?,
                    Relation::Same | Relation::Ahead
                ) =>
        {
            p
        }
        _ => base.commit,
    };

    let mut specs = opts.specs.clone();
    for g in &opts.branch_globs {
        let found = input::expand_branches(repo, g, &into_ref)?;
        if found.is_empty() {
            return Err(Error::usage(format!("branch glob {g:?} matches no branch")));
        }
        specs.extend(found.into_iter().map(Spec::Rev));
    }
    if specs.is_empty() {
        return Err(Error::needs(
            ErrorKind::Usage,
            "nothing to weave: name branches, ranges or patch files, or a pattern of branches",
            Remedy::Inputs,
        ));
    }

    let mem = repo.clone().with_object_memory();
    let committer = crate::kit::repo::committer(repo);
    let map = opts.persona_map.as_ref();
    // `git am` reads `mailinfo.scissors`; so does weave, for the same mails to give the same commits.
    let read = mbox::ReadOptions {
        scissors: repo
            .config_snapshot()
            .boolean("mailinfo.scissors")
            .unwrap_or(false),
        strip: opts.strip,
    };
    let inputs = input::load(&mem, &specs, base.commit, start, map, read)?;
    let footprints = inputs
        .iter()
        .map(|i| {
            if i.error.is_some() {
                Ok(Vec::new())
            } else {
                order::footprint(&mem, i)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let (order, predictions) = order::plan(&inputs, &footprints, opts.smart);

    let mut dropped: Vec<(usize, VerifyFailure, Vec<WovenCommit>)> = Vec::new();
    let mut verify_summary = None;
    let mut verifier = opts.verify.as_ref().map(|o| bisect::Verifier {
        repo,
        opts: o,
        interrupt,
        checks: 0,
    });
    let run = loop {
        let excluded: Vec<usize> = dropped.iter().map(|d| d.0).collect();
        let run = weave_all(
            &mem,
            start,
            base.commit,
            &committer,
            &inputs,
            &order,
            &excluded,
            map,
            opts.empty,
        )?;
        let Some(v) = verifier.as_mut() else {
            break run;
        };
        let summary = |passed, start_fails, checks| VerifySummary {
            command: v.opts.command.clone(),
            passed,
            checks,
            start_fails,
        };
        if run.tip == start {
            verify_summary = Some(summary(true, false, v.checks));
            break run;
        }
        store::flush(&mem, repo)?;
        let Some(verdict) = v.check(run.tip)? else {
            return Err(interrupted());
        };
        if verdict.pass {
            verify_summary = Some(summary(true, false, v.checks));
            break run;
        }
        let mut boundaries = vec![start];
        boundaries.extend(run.woven.iter().map(|(_, after)| *after));
        match v.culprit(&boundaries, verdict)? {
            Err(()) => return Err(interrupted()),
            Ok(None) => {
                verify_summary = Some(summary(false, true, v.checks));
                break run;
            }
            Ok(Some((k, verdict))) => {
                let idx = run.woven[k - 1].0;
                let commits = match &run.outcomes[idx] {
                    Some(Outcome::Woven(w)) => w.commits.clone(),
                    _ => Vec::new(),
                };
                dropped.push((
                    idx,
                    VerifyFailure {
                        command: v.opts.command.clone(),
                        commit: boundaries[k],
                        exit_code: verdict.exit_code,
                        tail: verdict.tail,
                    },
                    commits,
                ));
            }
        }
    };

    // The report, in the order tried.
    let show_predictions = opts.smart || opts.check;
    let mut entries: Vec<(usize, InputReport)> = Vec::new();
    for (pos, &i) in order.iter().enumerate() {
        let input = &inputs[i];
        let mut r = InputReport {
            given: input.given,
            tried: pos + 1,
            input: input.label.clone(),
            kind: input.kind,
            persona: input.persona.as_ref().map(|(p, _)| p.clone()),
            persona_from: input.persona.as_ref().map(|(_, s)| *s),
            status: Status::Applied,
            commits: Vec::new(),
            notes: Vec::new(),
            conflicts: Vec::new(),
            skipped: if opts.empty == engine::Empty::Keep {
                Vec::new()
            } else {
                input
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        input::Item::Skipped(s) => Some((**s).clone()),
                        _ => None,
                    })
                    .collect()
            },
            error: None,
            verify: None,
            prediction: show_predictions.then(|| predictions[i].clone()),
            mail: None,
        };
        if let Some((_, failure, commits)) = dropped.iter().find(|d| d.0 == i) {
            r.status = Status::Dropped;
            r.verify = Some(failure.clone());
            r.commits = commits.clone();
        } else {
            match run.outcomes[i].clone() {
                Some(Outcome::Woven(w)) => {
                    r.commits = w.commits;
                    r.notes = w.notes;
                }
                Some(Outcome::Already { notes }) => {
                    let only_skipped = !input.items.is_empty()
                        && input
                            .items
                            .iter()
                            .all(|it| matches!(it, input::Item::Skipped(_)));
                    r.status = if only_skipped {
                        Status::Skipped
                    } else {
                        Status::Already
                    };
                    r.notes = notes;
                }
                Some(Outcome::Failed(Failure::Conflict(mut c))) => {
                    r.status = Status::Conflict;
                    annotate_leases(repo, &mut c);
                    r.conflicts = c;
                }
                Some(Outcome::Failed(Failure::Error(e))) => {
                    r.status = Status::Error;
                    r.error = Some(e);
                }
                None => unreachable!("every input not dropped was tried"),
            }
        }
        entries.push((i, r));
    }

    // Mails: drafted for every skipped input with a persona.
    let ctx = notify::Context {
        from: &opts.from,
        into: &into_short,
        base_name: &base.name,
    };
    let mut drafts = Vec::new();
    for (k, (i, r)) in entries.iter().enumerate() {
        if let Some(d) = notify::draft(&ctx, &inputs[*i], r) {
            drafts.push((k, d));
        }
    }

    let mut backup = None;
    if !opts.check {
        store::flush(&mem, repo)?;
        let applied = entries
            .iter()
            .filter(|(_, r)| r.status == Status::Applied)
            .count();
        backup = publish(repo, &into_ref, previous, run.tip, applied)?;
    }
    if opts.check || !opts.mail {
        for (k, d) in &drafts {
            entries[*k].1.mail = Some(notify::unsent(d));
        }
    } else {
        let (slots, ds): (Vec<usize>, Vec<notify::Draft>) = drafts.into_iter().unzip();
        for (k, note) in slots.into_iter().zip(notify::send(repo, ds)?) {
            entries[k].1.mail = Some(note);
        }
    }

    let mut report = Report {
        version: report::REPORT_VERSION,
        check: opts.check,
        base,
        into: into_short,
        into_ref,
        previous,
        start,
        tip: run.tip,
        tree: run.tree,
        backup,
        order: if opts.smart { "smart" } else { "given" }.to_owned(),
        verify: verify_summary,
        applied: Vec::new(),
        already: Vec::new(),
        conflicted: Vec::new(),
        dropped: Vec::new(),
        failed: Vec::new(),
        skipped: Vec::new(),
    };
    for (_, r) in entries {
        match r.status {
            Status::Applied => report.applied.push(r),
            Status::Already => report.already.push(r),
            Status::Conflict => report.conflicted.push(r),
            Status::Dropped => report.dropped.push(r),
            Status::Error => report.failed.push(r),
            Status::Skipped => report.skipped.push(r),
        }
    }
    if !opts.check {
        // Kept on `refs/jules/weave` so that every clone sees what this run did after a sync. The actor is
        // the mails' sender; with `--no-mail` that name was never checked, and a bad one records as `weaver`.
        let actor = if crate::capabilities::mail::message::validate_persona(&opts.from).is_ok() {
            opts.from.as_str()
        } else {
            "weaver"
        };
        record::record(repo, actor, &report)?;
    }
    Ok(report)
}

/// Move the integration branch to `tip`. Creating it or fast-forwarding is a plain compare-and-swap; any
/// other move also creates `refs/jules/backup/weave/<branch>/<n>` at the old tip, in the same transaction.
fn publish(
    repo: &gix::Repository,
    into_ref: &str,
    previous: Option<ObjectId>,
    tip: ObjectId,
    applied: usize,
) -> Result<Option<String>> {
    let msg = format!("jules weave: {applied} input(s) woven");
    let moved = || {
        Error::Conflict(format!(
            "{into_ref} moved while weaving; nothing was changed: run weave again"
        ))
    };
    let Some(old) = previous else {
        return if refs::cas(repo, into_ref, None, tip, &msg)? {
            Ok(None)
        } else {
            Err(moved())
        };
    };
    if old == tip {
        return Ok(None);
    }
    if refs::relation(repo, tip, old)? == Relation::Ahead {
        return if refs::cas(repo, into_ref, Some(old), tip, &msg)? {
            Ok(None)
        } else {
            Err(moved())
        };
    }
    let edits = vec![crate::store::backup::update(
        into_ref,
        Some(old),
        tip,
        false,
        &format!("{msg} (not a fast-forward; old tip backed up)"),
    )?];
    let backup = crate::store::backup::transaction(
        repo,
        crate::store::backup::Owner::Weave(into_ref),
        old,
        edits,
        &format!("jules weave: backup of {into_ref}"),
        moved,
    )?;
    Ok(Some(backup.name))
}

/// Name, on each conflicting path, the live exclusive leases covering it (whose work it is). Best effort: a
/// lease log that cannot be read leaves the report as it was.
fn annotate_leases(repo: &gix::Repository, conflicts: &mut [report::FileConflict]) {
    let Ok(log) = crate::capabilities::lease::open(repo) else {
        return;
    };
    let Ok(v) = crate::capabilities::lease::view(&log) else {
        return;
    };
    let now = crate::capabilities::lease::now(repo);
    for c in conflicts {
        c.leases = crate::capabilities::lease::covering(&v, now, &c.path)
            .into_iter()
            .map(|l| report::LeaseNote {
                lease: l.id.clone(),
                persona: l.persona.clone(),
                expires_at: crate::capabilities::lease::format_time(l.expires),
                reason: l.reason.clone(),
            })
            .collect();
    }
}
