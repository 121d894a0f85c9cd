//! The lease use cases as typed calls on a [`Workspace`]: acquire, renew, release, list, check and remind,
//! what `git jules lease …`, the MCP server's `lease_*` tools and any other frontend do.
//!
//! Each call reads the settings, the clock and the log itself, so a frontend only turns its arguments into
//! the input and presents the answer. The answers serialise as the `--json` documents of docs/json.md; the
//! moment they were made at (`now`, what "time left" is measured from) rides along unserialised where the
//! document does not name it, so a frontend that shows time left shows it from the same moment.

use serde::{Serialize, Serializer};

use super::ops::{self, AcquireReport};
use super::{Changes, Filter, Lease, Listed, PreCommit, Settings};
use crate::capabilities::workspace::Workspace;
use crate::{Error, Result};

/// What to acquire, and as whom.
#[derive(Debug, Clone, Default)]
pub struct AcquireInput {
    pub persona: String,
    /// Paths or globs relative to the top of the work tree.
    pub paths: Vec<String>,
    /// Others may hold shared leases on the same paths (default: exclusive).
    pub shared: bool,
    /// A duration (`2h`); default `jules.lease.ttl`, at most `jules.lease.maxTtl`.
    pub ttl: Option<String>,
    pub reason: Option<String>,
    pub task: Option<String>,
    /// Decide through the remote: the answer is final.
    pub sync: bool,
    /// The remote for `sync` (default: the coordination remote).
    pub remote: Option<String>,
}

/// `lease acquire --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Acquired {
    #[serde(flatten)]
    pub report: AcquireReport,
    /// The moment of the acquire (Unix seconds).
    #[serde(skip)]
    pub now: i64,
}

/// Acquire a lease (see [`ops::acquire`]).
pub fn acquire(ws: &Workspace, input: &AcquireInput) -> Result<Acquired> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let req = ops::AcquireRequest {
        persona: input.persona.clone(),
        paths: input.paths.clone(),
        exclusive: !input.shared,
        ttl: settings.ttl(input.ttl.as_deref())?,
        reason: input.reason.clone(),
        task: input.task.clone(),
    };
    let remote = super::sync_remote(&repo, input.sync, input.remote.clone())?;
    let report = ops::acquire(&log, now, &req, remote.as_deref())?;
    Ok(Acquired { report, now })
}

/// Which lease to renew, by whom, for how long.
#[derive(Debug, Clone, Default)]
pub struct RenewInput {
    pub persona: String,
    /// The lease id or a unique prefix.
    pub id: String,
    pub ttl: Option<String>,
    /// Sync with the remote before and after, so others see the new expiry.
    pub sync: bool,
    pub remote: Option<String>,
}

/// `lease renew --json`: the lease as renewed.
#[derive(Debug, Clone, Serialize)]
pub struct Renewed {
    #[serde(flatten)]
    pub lease: Lease,
    #[serde(skip)]
    pub now: i64,
}

/// Renew a live lease of the persona (see [`ops::renew`]).
pub fn renew(ws: &Workspace, input: &RenewInput) -> Result<Renewed> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let remote = super::sync_remote(&repo, input.sync, input.remote.clone())?;
    let ttl = settings.ttl(input.ttl.as_deref())?;
    let lease = ops::renew(&log, now, &input.persona, &input.id, ttl, remote.as_deref())?;
    Ok(Renewed { lease, now })
}

/// Which leases to release: `ids`, or every held lease of the persona (`all`), or those for `task`.
#[derive(Debug, Clone, Default)]
pub struct ReleaseInput {
    pub persona: String,
    pub ids: Vec<String>,
    pub all: bool,
    pub task: Option<String>,
    /// Release another persona's lease (needs `reason`; the holder is mailed).
    pub force: bool,
    pub reason: Option<String>,
}

/// `lease release --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Released {
    pub released: Vec<Lease>,
    #[serde(skip)]
    pub now: i64,
}

/// Release leases (see [`ops::release`], [`ops::release_all`]). Naming none is bad input.
pub fn release(ws: &Workspace, input: &ReleaseInput) -> Result<Released> {
    let repo = ws.repo();
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let persona = input.persona.as_str();
    let reason = input.reason.as_deref();
    let released = if input.all || input.task.is_some() {
        ops::release_all(&log, now, persona, input.task.as_deref(), reason)?
    } else if input.ids.is_empty() {
        return Err(Error::usage(
            "name the leases to release: their ids, a task, or all",
        ));
    } else {
        input
            .ids
            .iter()
            .map(|id| ops::release(&log, now, persona, id, input.force, reason))
            .collect::<Result<_>>()?
    };
    Ok(Released { released, now })
}

/// `lease list --json`: the leases at a moment. (Fields in the order of the sorted map this document
/// was before it was a struct: the bytes `--json` prints are kept.)
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    pub leases: Vec<Listed>,
    /// The moment the list is made at; `live` and `expires_in` are measured from it.
    #[serde(serialize_with = "rfc3339")]
    pub now: i64,
}

fn rfc3339<S: Serializer>(t: &i64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&super::format_time(*t))
}

/// The leases `filter` selects (live ones unless `filter.all`), with their signatures' states.
pub fn list(ws: &Workspace, filter: &Filter) -> Result<Listing> {
    let repo = ws.repo();
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let v = super::view(&log)?;
    let mut leases = super::list(&v, now, filter)?;
    super::sign_listed(&log, &mut leases)?;
    Ok(Listing { leases, now })
}

/// What to check, for whom.
#[derive(Debug, Clone, Default)]
pub struct CheckInput {
    /// Whose leases do not count (none: every exclusive lease counts).
    pub persona: Option<String>,
    /// Paths or globs; or leave empty and name `changes`.
    pub paths: Vec<String>,
    pub changes: Option<Changes>,
}

/// `lease check --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    #[serde(flatten)]
    pub report: super::held::CheckReport,
    #[serde(skip)]
    pub now: i64,
}

impl Checked {
    /// No path is under another persona's exclusive lease.
    pub fn clean(&self) -> bool {
        self.report.conflicts.is_empty()
    }
}

/// Check paths, a diff range or the staged change against others' exclusive leases (see
/// [`super::held::check_request`]).
pub fn check(ws: &Workspace, input: &CheckInput) -> Result<Checked> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let report = super::held::check_request(
        &log,
        now,
        input.persona.as_deref(),
        &input.paths,
        input.changes.as_ref(),
        settings.ignore_case,
    )?;
    Ok(Checked { report, now })
}

/// What the pre-commit hook does with a conflict (`jules.lease.preCommit`).
pub fn pre_commit(ws: &Workspace) -> Result<PreCommit> {
    Ok(Settings::from_config(&ws.repo())?.pre_commit)
}

/// Who reminds, how long ahead.
#[derive(Debug, Clone, Default)]
pub struct RemindInput {
    /// The sender of the reminders.
    pub from: String,
    /// A duration (default: `jules.lease.remindBefore`).
    pub lead: Option<String>,
}

/// `lease remind --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Reminded {
    pub reminded: Vec<Lease>,
    #[serde(skip)]
    pub now: i64,
}

/// Mail the holders whose leases expire within the lead time (see [`ops::remind`]).
pub fn remind(ws: &Workspace, input: &RemindInput) -> Result<Reminded> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let lead = match &input.lead {
        Some(l) => super::parse_ttl(l)?,
        None => settings.remind_before,
    };
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let reminded = ops::remind(&log, now, lead, &input.from)?;
    Ok(Reminded { reminded, now })
}

/// The typed calls on a real bare repository whose clock is pinned in its configuration (what `lease::now`
/// reads), so each answer's `now` and every time in it is known: what each takes from the settings and the
/// input, and what it hands back.
#[cfg(test)]
mod tests {
    use super::super::test_support::{
        bare_with, clone, git, lease_events, mails, PINNED, PINNED_AT,
    };
    use super::*;
    use crate::kit::error::ErrorKind;

    const NOW: i64 = PINNED_AT;

    fn workspace(dir: &std::path::Path, config: &[(&str, &str)]) -> Workspace {
        let mut all = vec![PINNED];
        all.extend_from_slice(config);
        let repo = bare_with(dir, "r", &all);
        Workspace::from_repo(&dir.join("r.git"), repo)
    }

    fn acquire_input(persona: &str, paths: &[&str]) -> AcquireInput {
        AcquireInput {
            persona: persona.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..AcquireInput::default()
        }
    }

    /// An acquire is exclusive unless `shared`, lives `jules.lease.ttl` (2 h by default) unless given a TTL,
    /// at most `jules.lease.maxTtl`, at the repository's clock. Catches `exclusive: !input.shared` with the
    /// `!` deleted (53).
    #[test]
    fn acquire_is_exclusive_unless_shared_and_takes_its_ttl_from_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[("jules.lease.maxTtl", "1d")]);
        let a = acquire(&ws, &acquire_input("ann", &["src/"])).unwrap();
        assert_eq!(a.now, NOW);
        let l = a.report.lease.unwrap();
        assert!(l.exclusive && !l.lock);
        assert_eq!((l.acquired, l.expires), (NOW, NOW + 7200));
        let b = acquire(
            &ws,
            &AcquireInput {
                shared: true,
                ttl: Some("30m".into()),
                reason: Some("docs".into()),
                task: Some("t1".into()),
                ..acquire_input("bob", &["docs/"])
            },
        )
        .unwrap();
        let l = b.report.lease.unwrap();
        assert!(!l.exclusive);
        assert_eq!(l.expires, NOW + 1800);
        assert_eq!(
            (l.reason.as_deref(), l.task.as_deref()),
            (Some("docs"), Some("t1"))
        );
        let e = acquire(
            &ws,
            &AcquireInput {
                ttl: Some("2d".into()),
                ..acquire_input("cat", &["c"])
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert_eq!(
            e.to_string(),
            "the lease TTL 2d is too long: leases last at most 1d (jules.lease.maxTtl)"
        );
        let denied = acquire(&ws, &acquire_input("cat", &["src/x"])).unwrap();
        assert!(!denied.report.held);
        // `--sync` without a remote to go through.
        let e = acquire(
            &ws,
            &AcquireInput {
                sync: true,
                ..acquire_input("cat", &["c"])
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage, "{e}");
        assert_eq!(lease_events(&ws.repo()).len(), 2);
    }

    /// `sync` goes through the named remote (or the default one): the lease is a lock, final.
    #[test]
    fn acquire_with_sync_goes_through_the_remote() {
        let dir = tempfile::tempdir().unwrap();
        let repo = clone(dir.path(), "a");
        git(repo.path(), &["config", PINNED.0, PINNED.1]);
        let ws = Workspace::from_repo(repo.path(), gix::open(repo.path()).unwrap());
        let a = acquire(
            &ws,
            &AcquireInput {
                sync: true,
                ..acquire_input("ann", &["src/"])
            },
        )
        .unwrap();
        assert!(a.report.held && a.report.is_final);
        assert_eq!(a.report.remote.as_deref(), Some("origin"));
        let remote = gix::open(dir.path().join("remote.git")).unwrap();
        assert_eq!(lease_events(&remote).len(), 1);
    }

    /// Renew takes its TTL as acquire does, at the repository's clock.
    #[test]
    fn renew_takes_its_ttl_from_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[("jules.lease.ttl", "1h")]);
        let id = acquire(&ws, &acquire_input("ann", &["src/"]))
            .unwrap()
            .report
            .lease
            .unwrap()
            .id;
        let r = renew(
            &ws,
            &RenewInput {
                persona: "ann".into(),
                id: id.clone(),
                ..RenewInput::default()
            },
        )
        .unwrap();
        assert_eq!((r.now, r.lease.expires), (NOW, NOW + 3600));
        let r = renew(
            &ws,
            &RenewInput {
                persona: "ann".into(),
                id,
                ttl: Some("90s".into()),
                ..RenewInput::default()
            },
        )
        .unwrap();
        assert_eq!(r.lease.expires, NOW + 90);
    }

    /// Release by ids, by task, or all of the persona's; naming none is bad input. Catches `input.all ||
    /// input.task.is_some()` as `&&` (123).
    #[test]
    fn release_takes_ids_a_task_or_all_and_refuses_nothing_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[]);
        let lease = |persona: &str, path: &str, task: Option<&str>| {
            acquire(
                &ws,
                &AcquireInput {
                    task: task.map(str::to_owned),
                    ..acquire_input(persona, &[path])
                },
            )
            .unwrap()
            .report
            .lease
            .unwrap()
            .id
        };
        let (a, b, c, d) = (
            lease("ann", "a", Some("t1")),
            lease("ann", "b", None),
            lease("ann", "c", None),
            lease("bob", "d", None),
        );
        let input = |all, task: Option<&str>, ids: &[&str]| ReleaseInput {
            persona: "ann".into(),
            ids: ids.iter().map(|i| i.to_string()).collect(),
            all,
            task: task.map(str::to_owned),
            ..ReleaseInput::default()
        };
        let e = release(&ws, &input(false, None, &[])).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (
                ErrorKind::Usage,
                "name the leases to release: their ids, a task, or all"
            )
        );
        let ids = |r: Released| r.released.into_iter().map(|l| l.id).collect::<Vec<_>>();
        let r = release(&ws, &input(false, Some("t1"), &[])).unwrap();
        assert_eq!(r.now, NOW);
        assert_eq!(ids(r), [a.as_str()]);
        let r = release(&ws, &input(false, None, &[&b[..8]])).unwrap();
        assert_eq!(ids(r), [b.as_str()]);
        let r = release(&ws, &input(true, None, &[])).unwrap();
        assert_eq!(ids(r), [c.as_str()]);
        // Another's, by id: forced, with a reason; the holder is mailed.
        let forced = ReleaseInput {
            force: true,
            reason: Some("stuck".into()),
            ..input(false, None, &[&d])
        };
        let r = release(&ws, &forced).unwrap();
        assert!(r.released[0].forced);
        assert_eq!(mails(&ws.repo())[0].to, ["bob"]);
    }

    /// The listing is made at the repository's clock, and says that moment in RFC 3339.
    #[test]
    fn list_is_made_at_the_repositorys_clock() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[]);
        acquire(&ws, &acquire_input("ann", &["src/"])).unwrap();
        acquire(&ws, &acquire_input("bob", &["docs/"])).unwrap();
        let l = list(
            &ws,
            &Filter {
                persona: Some("bob".into()),
                ..Filter::default()
            },
        )
        .unwrap();
        assert_eq!(l.now, NOW);
        assert_eq!(l.leases.len(), 1);
        assert_eq!(l.leases[0].lease.persona, "bob");
        assert_eq!((l.leases[0].expires_in, l.leases[0].live), (7200, true));
        let json = serde_json::to_value(&l).unwrap();
        assert_eq!(json["now"], "2030-01-01T00:00:00Z");
    }

    /// A check is clean exactly when no path meets another persona's exclusive lease. Catches `clean`
    /// answering `true` or `false` (186).
    #[test]
    fn a_check_is_clean_only_without_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[]);
        acquire(&ws, &acquire_input("ann", &["src/"])).unwrap();
        let check_as = |persona: &str, path: &str| {
            check(
                &ws,
                &CheckInput {
                    persona: Some(persona.into()),
                    paths: vec![path.into()],
                    changes: None,
                },
            )
            .unwrap()
        };
        let c = check_as("bob", "src/a.rs");
        assert!(!c.clean());
        assert_eq!(c.now, NOW);
        assert_eq!(c.report.conflicts.len(), 1);
        assert!(check_as("bob", "docs/a.md").clean());
        assert!(check_as("ann", "src/a.rs").clean());
    }

    /// `pre_commit` reads `jules.lease.preCommit`.
    #[test]
    fn pre_commit_follows_the_setting() {
        for (value, want) in [
            (None, PreCommit::Refuse),
            (Some("warn"), PreCommit::Warn),
            (Some("off"), PreCommit::Off),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let config: Vec<(&str, &str)> = value
                .map(|v| ("jules.lease.preCommit", v))
                .into_iter()
                .collect();
            assert_eq!(pre_commit(&workspace(dir.path(), &config)).unwrap(), want);
        }
    }

    /// Remind looks ahead `jules.lease.remindBefore` (15 min by default) unless given a lead time.
    #[test]
    fn remind_takes_its_lead_time_from_the_input_or_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[("jules.lease.ttl", "20m")]);
        acquire(&ws, &acquire_input("ann", &["src/"])).unwrap();
        let input = |lead: Option<&str>| RemindInput {
            from: "clerk".into(),
            lead: lead.map(str::to_owned),
        };
        let r = remind(&ws, &input(None)).unwrap();
        assert_eq!((r.now, r.reminded.len()), (NOW, 0));
        assert_eq!(remind(&ws, &input(Some("20m"))).unwrap().reminded.len(), 1);
        let e = remind(&ws, &input(Some("soon"))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[("jules.lease.remindBefore", "30m")]);
        acquire(&ws, &acquire_input("ann", &["src/"])).unwrap();
        assert!(remind(&ws, &input(None)).unwrap().reminded.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path(), &[("jules.lease.remindBefore", "3h")]);
        acquire(&ws, &acquire_input("ann", &["src/"])).unwrap();
        assert_eq!(remind(&ws, &input(None)).unwrap().reminded.len(), 1);
    }
}
