//! The sync's own tests: real bare clones of a real bare remote in a temporary directory, synced through the
//! `git` binary as in production, and the rounds' parts (no-loss check, push, report, view) called directly
//! with what a race or a hostile remote would hand them. tests/it/sync.rs and tests/it/remotes.rs add the
//! races between processes and the real transports; these are what mutation testing can afford
//! (docs/testing.md, *Mutation testing*).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::ledger::PushPolicy;
use super::report::{Action, Published, RefSync, Tally};
use super::*;
use crate::store::eventlog::test_support::event;
use crate::store::eventlog::{Event, Log, NewEvent};

const MAIL: &str = "refs/jules/mail";

/// A bare remote and the clones that sync with it, under one temporary directory.
struct Fleet {
    dir: tempfile::TempDir,
}

impl Fleet {
    fn new() -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "--bare", "remote.git"]);
        Fleet { dir }
    }

    fn remote(&self) -> PathBuf {
        self.dir.path().join("remote.git")
    }

    /// Install `script` as the remote's hook `name` (`pre-receive`, `update`).
    fn hook(&self, name: &str, script: &str) {
        write_script(&self.remote().join("hooks").join(name), script);
    }

    /// A bare clone named `name` whose `origin` is the remote (opened after the remote is configured).
    fn clone(&self, name: &str) -> gix::Repository {
        let path = self.dir.path().join(format!("{name}.git"));
        gix::init_bare(&path).unwrap();
        git(
            &path,
            &["remote", "add", "origin", self.remote().to_str().unwrap()],
        );
        open(&path)
    }

    /// Every ref of the remote with its target.
    fn remote_refs(&self) -> BTreeMap<String, ObjectId> {
        refs_of(&self.remote())
    }

    fn remote_writer_refs(&self) -> Vec<String> {
        self.remote_refs()
            .into_keys()
            .filter(|n| n.contains("/writers/"))
            .collect()
    }
}

/// Write an executable script (a hook, a wrapper) at `path`.
fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn open(path: &Path) -> gix::Repository {
    gix::open(path).unwrap()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = crate::kit::gitcli::run(dir, args).unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A blob of `text` written into `repo`; its id.
fn blob(repo: &gix::Repository, text: &str) -> String {
    repo.write_blob(text.as_bytes()).unwrap().to_string()
}

fn refs_of(dir: &Path) -> BTreeMap<String, ObjectId> {
    git(dir, &["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, id)| (n.to_owned(), id.parse().unwrap()))
        .collect()
}

/// Append event number `i` to `log` of `repo`; the new tip.
fn append(repo: &gix::Repository, log: &str, i: u64) -> ObjectId {
    Log::open(repo, log)
        .unwrap()
        .append(event(i))
        .unwrap()
        .commit
}

/// Append an event of `kind` by `a` with `data` (urgent mail, a marked event) to `log`; the new tip.
fn append_data(repo: &gix::Repository, log: &str, kind: &str, data: serde_json::Value) -> ObjectId {
    Log::open(repo, log)
        .unwrap()
        .append(NewEvent::new(Event::new(kind, "a", data)))
        .unwrap()
        .commit
}

/// The event ids `log` holds at `tip`, sorted.
fn ids_at(repo: &gix::Repository, log: &str, tip: ObjectId) -> Vec<String> {
    let log = Log::open(repo, log).unwrap();
    let mut ids: Vec<String> = log
        .scan(&[tip], &[], false)
        .unwrap()
        .events
        .into_iter()
        .map(|e| e.id.to_string())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

fn local(repo: &gix::Repository, name: &str) -> Option<ObjectId> {
    crate::store::refs::target(&transport::reopen(repo).unwrap(), name).unwrap()
}

fn the_ref<'a>(report: &'a SyncReport, name: &str) -> &'a RefSync {
    report
        .refs
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{name} not in {:?}", report.refs))
}

fn sync_now(repo: &gix::Repository) -> SyncReport {
    sync(&transport::reopen(repo).unwrap(), "origin").unwrap()
}

// --- names -------------------------------------------------------------------------------------------

#[test]
fn writer_refs_and_tracking_names_round_trip_and_other_names_are_not_writer_refs() {
    let w = writer_ref(MAIL, "0123456789abcdef");
    assert_eq!(w, "refs/jules/writers/mail/0123456789abcdef");
    assert_eq!(
        shared_of_writer(&w),
        Some((MAIL.to_owned(), "0123456789abcdef"))
    );
    let n = writer_ref("refs/notes/jules/reviews", "ab");
    assert_eq!(n, "refs/notes/jules/writers/reviews/ab");
    assert_eq!(
        shared_of_writer(&n),
        Some(("refs/notes/jules/reviews".to_owned(), "ab"))
    );
    // A log whose name has a folder: the writer id is the last component.
    assert_eq!(
        shared_of_writer("refs/jules/writers/a/b/cd"),
        Some(("refs/jules/a/b".to_owned(), "cd"))
    );
    // Outside the two prefixes a writer ref hangs under the shared ref itself.
    assert_eq!(writer_ref("refs/x/y", "ab"), "refs/x/y/writers/ab");
    for name in [
        MAIL,
        "refs/jules/writers/mail",
        "refs/jules/writers//ab",
        "refs/jules/writers/mail/",
        "refs/heads/writers/mail/ab",
        "refs/notes/jules/reviews",
    ] {
        assert_eq!(shared_of_writer(name), None, "{name}");
    }
    assert_eq!(
        tracking_name("o", MAIL),
        "refs/remotes/o/jules/mail".to_owned()
    );
    assert_eq!(
        tracking_name("o", "refs/notes/jules/reviews"),
        "refs/remotes/o/notes/jules/reviews"
    );
    assert_eq!(tracking_name("o", "refs/heads/main"), "refs/heads/main");
    assert_eq!(
        writer_refs::tracking_prefixes("o"),
        [
            ("refs/remotes/o/jules/".to_owned(), "refs/jules/"),
            (
                "refs/remotes/o/notes/jules/".to_owned(),
                "refs/notes/jules/"
            ),
        ]
    );
}

#[test]
fn a_writer_id_is_made_once_and_a_damaged_one_is_an_error() {
    let fleet = Fleet::new();
    let repo = fleet.clone("a");
    let id = writer_id(&repo).unwrap();
    assert_eq!(id.len(), 16);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_eq!(writer_id(&repo).unwrap(), id);
    let path = crate::kit::repo::jules_dir(&repo).join("writer-id");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{id}\n"));
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("writer-id"))
        .collect();
    assert_eq!(names, ["writer-id"]);
    // A file kept from before, with its own id, is read as it is.
    std::fs::write(&path, "fedcba9876543210\n").unwrap();
    assert_eq!(writer_id(&repo).unwrap(), "fedcba9876543210");
    for damaged in [
        "xyz\n",
        "0123456789abcdeg\n",
        "0123456789abcde\n",
        "0123456789abcdef0\n",
    ] {
        std::fs::write(&path, damaged).unwrap();
        let err = writer_id(&repo).unwrap_err().to_string();
        assert!(
            err.contains("does not hold a writer id"),
            "{damaged:?}: {err}"
        );
    }
}

#[test]
fn the_default_remote_is_the_coordination_remote_then_the_branchs_then_origin_then_the_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r");
    git(dir.path(), &["init", "-q", "-b", "main", "r"]);
    let err = default_remote(&open(&path)).unwrap_err().to_string();
    assert!(err.contains("no remote configured"), "{err}");
    git(&path, &["remote", "add", "up", "/nowhere/up"]);
    assert_eq!(default_remote(&open(&path)).unwrap(), "up");
    git(&path, &["remote", "add", "fork", "/nowhere/fork"]);
    let err = default_remote(&open(&path)).unwrap_err().to_string();
    assert!(
        err.contains("several remotes and none is `origin`") && err.contains("fork, up"),
        "{err}"
    );
    git(&path, &["remote", "add", "origin", "/nowhere/origin"]);
    assert_eq!(default_remote(&open(&path)).unwrap(), "origin");
    // The current branch's push remote comes before origin.
    git(&path, &["config", "branch.main.remote", "fork"]);
    assert_eq!(default_remote(&open(&path)).unwrap(), "fork");
    // The coordination remote comes first, and must exist.
    git(&path, &["config", "jules.remote", "up"]);
    assert_eq!(default_remote(&open(&path)).unwrap(), "up");
    git(&path, &["config", "jules.remote", "gone"]);
    let err = default_remote(&open(&path)).unwrap_err().to_string();
    assert!(err.contains("jules.remote names \"gone\""), "{err}");
    // `sync_configured` takes it, and an unknown remote is not found before any ref is read.
    assert!(sync_configured(&open(&path), None, false).is_err());
    let err = sync_configured(&open(&path), Some("nope"), false).unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

// --- whole syncs ---------------------------------------------------------------------------------------

/// The life of a log on a remote: the first sync publishes it (and its writer ref, in the same push); a
/// second clone takes it in without a push; that clone's news folds the first clone's writer ref away; an
/// idle clone fast-forwards, then has nothing to do; both end with the same events.
#[test]
fn syncs_publish_news_fold_writer_refs_and_push_nothing_when_idle() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    append(&a, MAIL, 1);
    let a_tip = append(&a, MAIL, 2);

    let r = sync_now(&a);
    assert_eq!(r.remote, "origin");
    assert_eq!(r.rounds, 1);
    assert_eq!(r.push_attempts, 1);
    assert_eq!(the_ref(&r, MAIL).action, Action::Pushed);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert_eq!(the_ref(&r, MAIL).tip, a_tip.to_string());
    assert!(r.changed());
    let remote = fleet.remote_refs();
    assert_eq!(remote.get(MAIL), Some(&a_tip));
    // The fold deleted nothing, so it went out in one push with a's writer ref.
    let a_writer = writer_ref(MAIL, &writer_id(&a).unwrap());
    assert_eq!(remote.get(&a_writer), Some(&a_tip));
    assert_eq!(fleet.remote_writer_refs(), std::slice::from_ref(&a_writer));
    // The push is recorded as the fetch would have.
    assert_eq!(local(&a, &tracking_name("origin", MAIL)), Some(a_tip));

    let r = sync_now(&b);
    assert_eq!(the_ref(&r, MAIL).action, Action::Created);
    assert_eq!(the_ref(&r, MAIL).published, Published::Nothing);
    assert_eq!(r.push_attempts, 0);
    assert_eq!(r.folded, 0);
    assert_eq!(r.rounds, 1, "moving the local ref is no race");
    assert_eq!(local(&b, MAIL), Some(a_tip));

    let b_tip = append(&b, MAIL, 3);
    let r = sync_now(&b);
    assert_eq!(the_ref(&r, MAIL).action, Action::Pushed);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert_eq!(r.folded, 1, "a's writer ref is held by the new value");
    assert_eq!(r.push_attempts, 1);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&b_tip));
    assert!(
        fleet.remote_writer_refs().is_empty(),
        "{:?}",
        fleet.remote_refs()
    );
    assert_eq!(local(&b, &tracking_name("origin", &a_writer)), None);

    let r = sync_now(&a);
    assert_eq!(the_ref(&r, MAIL).action, Action::FastForwarded);
    assert_eq!(the_ref(&r, MAIL).published, Published::Nothing);
    assert_eq!(r.push_attempts, 0);
    assert_eq!(r.rounds, 1);
    assert_eq!(r.pruned, [tracking_name("origin", &a_writer)]);
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, MAIL).action, Action::UpToDate);
    assert!(!r.changed());
    assert!(r.pruned.is_empty());
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&b_tip));
    assert_eq!(ids_at(&a, MAIL, local(&a, MAIL).unwrap()).len(), 3);
    assert_eq!(
        ids_at(&a, MAIL, local(&a, MAIL).unwrap()),
        ids_at(&b, MAIL, local(&b, MAIL).unwrap())
    );
}

/// Two clones with news of their own: the second to sync joins (a merge commit) and publishes the union.
#[test]
fn diverged_clones_merge_and_publish_the_union() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    append(&a, MAIL, 1);
    sync_now(&a);
    sync_now(&b);
    append(&a, MAIL, 2);
    append(&b, MAIL, 3);
    sync_now(&a);
    let r = sync_now(&b);
    let joined = local(&b, MAIL).unwrap();
    assert_eq!(the_ref(&r, MAIL).action, Action::Merged);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert_eq!(the_ref(&r, MAIL).tip, joined.to_string());
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&joined));
    assert_eq!(ids_at(&b, MAIL, joined).len(), 3);
    let parents = git(
        &fleet.remote(),
        &["rev-list", "--parents", "-n1", &joined.to_string()],
    );
    assert_eq!(parents.split(' ').count(), 3, "a join of two: {parents}");
    // a takes the join as it is.
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, MAIL).action, Action::FastForwarded);
    assert_eq!(local(&a, MAIL), Some(joined));
}

/// A remote whose log was deleted gets the local copy again (`republished`); one whose log was replaced by
/// a commit that holds no events, too, over it; refs pointing at something else than a commit are named in
/// `skipped`; a local ref that is not a commit is left alone and named; backups and series are not logs.
#[test]
fn a_lost_log_is_republished_and_refs_that_are_not_logs_are_skipped() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let tip = append(&a, MAIL, 1);
    sync_now(&a);
    git(&fleet.remote(), &["update-ref", "-d", MAIL]);
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, MAIL).action, Action::Republished);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&tip));

    // Replaced by an unrelated commit (no event in its history): not joined, published over.
    let tree = git(
        &fleet.remote(),
        &["hash-object", "-w", "-t", "tree", "/dev/null"],
    );
    let plain = git(&fleet.remote(), &["commit-tree", &tree, "-m", "not a log"]);
    git(&fleet.remote(), &["update-ref", MAIL, &plain]);
    // A blob where a log should be, a blob as a writer ref, and a missing object.
    let blob = git(&fleet.remote(), &["hash-object", "-w", "--stdin"]);
    git(&fleet.remote(), &["update-ref", "refs/jules/state", &blob]);
    git(
        &fleet.remote(),
        &["update-ref", "refs/jules/writers/state/ab", &blob],
    );
    // Backups and series versions are not logs: never joined, never published.
    git(
        &fleet.remote(),
        &["update-ref", "refs/jules/backup/x", &plain],
    );
    git(
        &fleet.remote(),
        &["update-ref", "refs/jules/series/p/s", &plain],
    );
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, MAIL).action, Action::Republished);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&tip));
    let mut skipped: Vec<(String, String)> = r
        .skipped
        .iter()
        .map(|s| (s.name.clone(), s.reason.clone()))
        .collect();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            (
                "refs/jules/state".to_owned(),
                format!("points at a blob ({blob}), not a commit")
            ),
            (
                "refs/jules/writers/state/ab".to_owned(),
                format!("points at a blob ({blob}), not a commit")
            ),
        ]
    );
    // The blob shared ref is not a log a clone has: nothing is made of it locally.
    assert!(r.refs.iter().all(|x| x.name == MAIL), "{:?}", r.refs);
    assert_eq!(local(&a, "refs/jules/state"), None);
    assert_eq!(local(&a, "refs/jules/backup/x"), None);

    // A local log ref on a blob: named, and left as it is.
    let b = fleet.clone("b");
    let blob_b = git(b.path(), &["hash-object", "-w", "--stdin"]);
    git(b.path(), &["update-ref", "refs/jules/tasks", &blob_b]);
    let r = sync_now(&b);
    assert!(
        r.skipped.iter().any(|s| s.name == "refs/jules/tasks"
            && s.reason == format!("the local ref points at {blob_b}, which is not a commit")),
        "{:?}",
        r.skipped
    );
    assert_eq!(fleet.remote_refs().get("refs/jules/tasks"), None);
}

/// A local log created over a remote ref that points at a blob replaces it (under a lease on the blob).
#[test]
fn a_local_log_is_published_over_a_remote_blob() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let blob = git(&fleet.remote(), &["hash-object", "-w", "--stdin"]);
    git(&fleet.remote(), &["update-ref", "refs/jules/state", &blob]);
    let tip = append(&a, "refs/jules/state", 1);
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, "refs/jules/state").action, Action::Republished);
    assert_eq!(fleet.remote_refs().get("refs/jules/state"), Some(&tip));
}

/// Commits from the remote that are not valid events are taken in and named once in `invalid`.
#[test]
fn invalid_commits_from_the_remote_are_named_once() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let tip = append(&a, MAIL, 1);
    sync_now(&a);
    // A commit on top of the log whose message is no event.
    let first = crate::store::eventlog::test_support::commit_on(&a, b"garbage\n", vec![tip]);
    let bad = crate::store::eventlog::test_support::commit_on(&a, b"more garbage\n", vec![first]);
    git(
        a.path(),
        &["push", "-q", "origin", &format!("{bad}:{MAIL}")],
    );
    let r = sync_now(&b);
    let mut named: Vec<String> = r.invalid.iter().map(|i| i.name.clone()).collect();
    named.sort();
    let mut expected = vec![first.to_string(), bad.to_string()];
    expected.sort();
    assert_eq!(named, expected, "{:?}", r.invalid);
    assert!(
        r.invalid
            .iter()
            .all(|i| i.reason.starts_with("refs/jules/mail: ")),
        "{:?}",
        r.invalid
    );
    assert_eq!(local(&b, MAIL), Some(bad));
    // Read again next time? No: the local ref holds it now, and nothing new arrives.
    let r = sync_now(&b);
    assert!(r.invalid.is_empty(), "{:?}", r.invalid);
}

/// Notes refs: a union of both sides' notes (a merge commit) when they diverged, fast-forwards otherwise.
#[test]
fn diverged_notes_are_joined_and_published() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let notes = "refs/notes/jules/reviews";
    let one = blob(&a, "one");
    git(
        a.path(),
        &["notes", "--ref", notes, "add", "-m", "from a", &one],
    );
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, notes).action, Action::Pushed);
    let r = sync_now(&b);
    assert_eq!(the_ref(&r, notes).action, Action::Created);
    let two = blob(&b, "two");
    git(
        b.path(),
        &["notes", "--ref", notes, "add", "-m", "from b", &two],
    );
    let a_notes_before = local(&a, notes).unwrap();
    git(
        a.path(),
        &["notes", "--ref", notes, "append", "-m", "more from a", &one],
    );
    assert_ne!(local(&a, notes), Some(a_notes_before));
    sync_now(&a);
    let r = sync_now(&b);
    assert_eq!(the_ref(&r, notes).action, Action::Merged);
    let joined = local(&b, notes).unwrap();
    assert_eq!(fleet.remote_refs().get(notes), Some(&joined));
    let listed = git(b.path(), &["notes", "--ref", notes, "list"]);
    assert_eq!(listed.lines().count(), 2, "{listed}");
    // Where both annotate the same object, ours is kept (src/store/notes.rs, `union`).
    let shown = git(b.path(), &["notes", "--ref", notes, "show", &one]);
    assert_eq!(shown, "from a");
    let r = sync_now(&a);
    assert_eq!(the_ref(&r, notes).action, Action::FastForwarded);
}

/// Under a push budget a clone with news joins but does not push until its interval has run out, and says
/// when it may; urgent news, and `--now`, do not wait.
#[test]
fn the_push_budget_defers_news_but_not_urgent_news() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    append(&a, MAIL, 1);
    ledger::remember_push(&a, 1);
    let policy = PushPolicy {
        min_interval: Some(std::time::Duration::from_secs(3600)),
        now: false,
    };
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &policy).unwrap();
    let wait = r.push_deferred_secs.expect("deferred");
    assert!((3000..=7200).contains(&wait), "{wait}");
    assert_eq!(the_ref(&r, MAIL).action, Action::UpToDate);
    assert_eq!(the_ref(&r, MAIL).published, Published::Nothing);
    assert_eq!(fleet.remote_refs().get(MAIL), None);
    // Urgent mail goes at once.
    let urgent = append_data(
        &a,
        MAIL,
        "mail.send",
        serde_json::json!({ "priority": "urgent" }),
    );
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &policy).unwrap();
    assert_eq!(r.push_deferred_secs, None);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&urgent));
    // Once the remote has the log: news waits again, urgent news again does not.
    let waiting = append(&a, MAIL, 2);
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &policy).unwrap();
    assert!(r.push_deferred_secs.is_some());
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&urgent));
    let urgent = append_data(
        &a,
        MAIL,
        "mail.send",
        serde_json::json!({ "priority": "urgent", "n": 2 }),
    );
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &policy).unwrap();
    assert_eq!(r.push_deferred_secs, None);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&urgent));
    assert!(ids_at(&a, MAIL, urgent).len() == 4 && waiting != urgent);
    // `now` pushes whatever the interval.
    let tip = append(&a, MAIL, 3);
    let now = PushPolicy {
        now: true,
        ..policy.clone()
    };
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &now).unwrap();
    assert_eq!(r.push_deferred_secs, None);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&tip));
}

#[test]
fn urgent_news_is_an_event_whose_data_says_urgent() {
    let logged = |data: serde_json::Value| {
        let event = Event::new("mail.send", "a", data);
        crate::store::eventlog::LoggedEvent {
            id: event.id().unwrap(),
            lamport: 1,
            commit: ObjectId::null(gix::hash::Kind::Sha1),
            event,
        }
    };
    assert!(news::is_urgent(&logged(
        serde_json::json!({ "priority": "urgent" })
    )));
    for data in [
        serde_json::json!({ "priority": "high" }),
        serde_json::json!({ "priority": ["urgent"] }),
        serde_json::json!({ "urgent": true }),
        serde_json::json!({}),
    ] {
        assert!(!news::is_urgent(&logged(data.clone())), "{data}");
    }
}

// --- a round's parts, given what a race or a hostile remote hands them ----------------------------------

/// The fold loses its lease (another clone folded between this round's fetch and its push): the union goes
/// to this clone's own writer ref instead, which nobody else moves.
#[test]
fn a_fold_that_loses_its_lease_publishes_to_the_writer_ref() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let c = fleet.clone("c");
    append(&a, MAIL, 1);
    sync_now(&a);
    sync_now(&b);
    sync_now(&c);
    // c folds a's writer ref away: the remote now has only the shared ref, with c's event.
    append(&c, MAIL, 2);
    let c_tip = local(&c, MAIL).unwrap();
    sync_now(&c);
    assert!(fleet.remote_writer_refs().is_empty());
    // b has news and still sees the remote as before c's sync: its fold's leases are stale.
    let b_tip = append(&b, MAIL, 3);
    let me = writer_id(&b).unwrap();
    let a_writer = writer_ref(MAIL, &writer_id(&a).unwrap());
    let before = local(&b, &tracking_name("origin", MAIL)).unwrap();
    let a_writer_seen = local(&b, &tracking_name("origin", &a_writer)).unwrap();
    let plan = plan::Plan {
        fold: vec![
            (a_writer.clone(), None, Some(a_writer_seen)),
            (MAIL.to_owned(), Some(b_tip), Some(before)),
        ],
        own: vec![(writer_ref(MAIL, &me), Some(b_tip), None)],
        ..Default::default()
    };
    let mut tally = Tally::new("origin");
    tally.take_round(
        1,
        vec![RefSync {
            name: MAIL.to_owned(),
            action: Action::Pushed,
            tip: b_tip.to_string(),
            published: Published::Nothing,
        }],
    );
    let mut gate = crate::store::heldback::Gate::open(&b, "origin");
    let fetched = |s: &str| (s == MAIL).then_some(before);
    let p = publish::Publish {
        repo: &b,
        remote: "origin",
        policy: &PushPolicy::default(),
        round: 1,
        me: &me,
        urgent: false,
        fetched_shared: &fetched,
        before_round: &BTreeMap::new(),
    };
    let publish::Outcome::Done(report) =
        publish::publish(&p, &plan, Vec::new(), &mut gate, &mut tally).unwrap()
    else {
        panic!("not done")
    };
    assert_eq!(report.push_attempts, 2, "the fold, then the writer ref");
    assert_eq!(the_ref(&report, MAIL).published, Published::Writer);
    assert_eq!(report.folded, 0);
    let remote = fleet.remote_refs();
    assert_eq!(remote.get(MAIL), Some(&c_tip), "the fold did not land");
    assert_eq!(remote.get(&writer_ref(MAIL, &me)), Some(&b_tip));
    assert_eq!(
        local(&b, &tracking_name("origin", &writer_ref(MAIL, &me))),
        Some(b_tip)
    );
    // And the writer ref lost its lease too (another sync of b moved it): raced, nothing recorded.
    let b_tip2 = append(&b, MAIL, 4);
    let plan = plan::Plan {
        fold: vec![(MAIL.to_owned(), Some(b_tip2), Some(before))],
        own: vec![(writer_ref(MAIL, &me), Some(b_tip2), None)],
        ..Default::default()
    };
    let outcome = publish::publish(&p, &plan, Vec::new(), &mut gate, &mut tally).unwrap();
    assert!(matches!(outcome, publish::Outcome::Raced));
    let plan = plan::Plan {
        fold: vec![
            (a_writer.clone(), None, Some(a_writer_seen)),
            (MAIL.to_owned(), Some(b_tip2), Some(before)),
        ],
        own: vec![(writer_ref(MAIL, &me), Some(b_tip2), None)],
        ..Default::default()
    };
    let outcome = publish::publish(&p, &plan, Vec::new(), &mut gate, &mut tally).unwrap();
    assert!(matches!(outcome, publish::Outcome::Raced));
    assert_eq!(
        fleet.remote_refs().get(&writer_ref(MAIL, &me)),
        Some(&b_tip)
    );
    // The next real sync settles it all: one fold of b's writer ref and its news.
    let r = sync_now(&b);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert!(fleet.remote_writer_refs().is_empty());
    let shared = fleet.remote_refs()[MAIL];
    assert_eq!(ids_at(&b, MAIL, shared).len(), 4);
}

/// A fold that only deletes writer refs the shared ref already holds is cleanup: no push. And one whose only
/// change is cleanup that loses its lease has nothing of ours unpublished.
#[test]
fn cleanup_alone_is_not_pushed() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    append(&a, MAIL, 1);
    sync_now(&a);
    let a_writer = writer_ref(MAIL, &writer_id(&a).unwrap());
    let seen = fleet.remote_refs()[&a_writer];
    let me = writer_id(&a).unwrap();
    let mut gate = crate::store::heldback::Gate::open(&a, "origin");
    let mut tally = Tally::new("origin");
    let fetched = |_: &str| None;
    let p = publish::Publish {
        repo: &a,
        remote: "origin",
        policy: &PushPolicy::default(),
        round: 1,
        me: &me,
        urgent: false,
        fetched_shared: &fetched,
        before_round: &BTreeMap::new(),
    };
    let plan = plan::Plan {
        fold: vec![(a_writer.clone(), None, Some(seen))],
        ..Default::default()
    };
    let publish::Outcome::Done(r) =
        publish::publish(&p, &plan, Vec::new(), &mut gate, &mut tally).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.push_attempts, 0);
    assert_eq!(fleet.remote_refs().get(&a_writer), Some(&seen));
    // With a shared ref that moves and a stale lease on the writer ref, nothing of ours left: done, one push.
    let shared = fleet.remote_refs()[MAIL];
    let tip = append(&a, MAIL, 2);
    let plan = plan::Plan {
        fold: vec![
            (a_writer.clone(), None, Some(tip)),
            (MAIL.to_owned(), Some(tip), Some(shared)),
        ],
        ..Default::default()
    };
    let fetched = |s: &str| (s == MAIL).then_some(shared);
    let p = publish::Publish {
        fetched_shared: &fetched,
        ..p
    };
    let publish::Outcome::Done(r) =
        publish::publish(&p, &plan, Vec::new(), &mut gate, &mut tally).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.push_attempts, 1);
    assert_eq!(
        fleet.remote_refs().get(MAIL),
        Some(&shared),
        "atomic: nothing moved"
    );
}

/// The no-loss check refuses, before anything is sent, a push whose new value drops an event of the value
/// it replaces; it accepts one that keeps them (also when an event sits in two commits), a writer ref deleted
/// under a shared ref that holds it, and anything over a value that is not a commit.
#[test]
fn no_push_may_lose_an_event() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let one = append(&a, MAIL, 1);
    let two = append(&a, MAIL, 2);
    // A sibling of `two`: holds event 1 and event 3, not event 2.
    git(
        a.path(),
        &["update-ref", "refs/jules/sibling", &one.to_string()],
    );
    let three = append(&a, "refs/jules/sibling", 3);
    let none = |_: &str| None;
    let check = |updates: &[transport::Update]| no_loss::check_no_loss(&a, updates, &none);
    assert!(check(&[(MAIL.into(), Some(two), Some(one))]).is_ok());
    assert!(check(&[(MAIL.into(), Some(two), None)]).is_ok());
    let err = check(&[(MAIL.into(), Some(three), Some(two))]).unwrap_err();
    assert!(
        matches!(err, crate::kit::error::Error::Refused(_)),
        "{err:?}"
    );
    let text = err.to_string();
    let lost = ids_at(&a, MAIL, two)
        .into_iter()
        .find(|id| !ids_at(&a, MAIL, three).contains(id))
        .unwrap();
    assert!(
        text.contains(&format!("refusing to push {MAIL}: its value on the remote ({two}) holds 1 event(s) that {three} lacks ({lost})")),
        "{text}"
    );
    // Deleting a log ref: nothing keeps its history.
    let text = check(&[(MAIL.into(), None, Some(one))])
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("holds history that no new value keeps"),
        "{text}"
    );
    // A writer ref deleted: kept by its shared ref's new value in the same push, or the fetched value.
    let w = writer_ref(MAIL, "ab");
    assert!(check(&[
        (w.clone(), None, Some(two)),
        (MAIL.into(), Some(two), Some(one))
    ])
    .is_ok());
    let text = check(&[
        (w.clone(), None, Some(two)),
        (MAIL.into(), Some(three), Some(one)),
    ])
    .unwrap_err()
    .to_string();
    assert!(text.contains(&format!("refusing to push {w}")), "{text}");
    let fetched_two = |s: &str| (s == MAIL).then_some(two);
    assert!(no_loss::check_no_loss(&a, &[(w.clone(), None, Some(one))], &fetched_two).is_ok());
    let fetched_three = |s: &str| (s == MAIL).then_some(three);
    assert!(no_loss::check_no_loss(&a, &[(w.clone(), None, Some(two))], &fetched_three).is_err());
    assert!(no_loss::check_no_loss(&a, &[(w.clone(), None, Some(two))], &none).is_err());
    // A value that is not a commit holds no event.
    let blob: ObjectId = git(a.path(), &["hash-object", "-w", "--stdin"])
        .parse()
        .unwrap();
    assert!(check(&[(MAIL.into(), Some(one), Some(blob))]).is_ok());
    assert!(check(&[(MAIL.into(), None, Some(blob))]).is_ok());
    // The same event in two commits: a new value that holds it in another commit loses nothing.
    let raw = git(a.path(), &["cat-file", "commit", &two.to_string()]);
    let dup = crate::store::eventlog::test_support::commit_on(
        &a,
        format!("{}\n", raw.split_once("\n\n").unwrap().1).as_bytes(),
        vec![three],
    );
    assert_ne!(dup, two);
    assert_eq!(
        ids_at(&a, MAIL, dup),
        ids_at(&a, MAIL, two)
            .into_iter()
            .chain(ids_at(&a, MAIL, three))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert!(
        check(&[(MAIL.into(), Some(dup), Some(two))]).is_ok(),
        "event 2 is kept in {dup}"
    );
}

/// More than five lost events are listed by their first five.
#[test]
fn a_refusal_names_at_most_five_lost_events() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let tips: Vec<ObjectId> = (0..=6).map(|i| append(&a, MAIL, i)).collect();
    let listed = |new: ObjectId| {
        let text =
            no_loss::check_no_loss(&a, &[(MAIL.into(), Some(new), Some(tips[6]))], &|_| None)
                .unwrap_err()
                .to_string();
        let lost: Vec<String> = ids_at(&a, MAIL, tips[6])
            .into_iter()
            .filter(|id| !ids_at(&a, MAIL, new).contains(id))
            .collect();
        assert!(
            text.contains(&format!("holds {} event(s) that {new} lacks (", lost.len())),
            "{text}"
        );
        let listed = text
            .split("lacks (")
            .nth(1)
            .unwrap()
            .split(')')
            .next()
            .unwrap()
            .to_owned();
        (lost, listed)
    };
    // Six lost: the first five in order, then an ellipsis.
    let (lost, text) = listed(tips[0]);
    assert_eq!(lost.len(), 6);
    assert_eq!(text, format!("{}, …", lost[..5].join(", ")));
    // Five lost: all of them.
    let (lost, text) = listed(tips[1]);
    assert_eq!(lost.len(), 5);
    assert_eq!(text, lost.join(", "));
}

/// Notes: a value whose history does not contain the old one loses notes.
#[test]
fn no_push_may_lose_notes() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let notes = "refs/notes/jules/reviews";
    let obj = git(a.path(), &["hash-object", "-w", "--stdin"]);
    git(a.path(), &["notes", "--ref", notes, "add", "-m", "1", &obj]);
    let one = local(&a, notes).unwrap();
    git(
        a.path(),
        &["notes", "--ref", notes, "add", "-f", "-m", "2", &obj],
    );
    let two = local(&a, notes).unwrap();
    let none = |_: &str| None;
    assert!(no_loss::check_no_loss(&a, &[(notes.into(), Some(two), Some(one))], &none).is_ok());
    assert!(no_loss::check_no_loss(&a, &[(notes.into(), Some(one), Some(one))], &none).is_ok());
    let text = no_loss::check_no_loss(&a, &[(notes.into(), Some(one), Some(two))], &none)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains(&format!("holds notes that {one} does not keep")),
        "{text}"
    );
}

/// `push_leased` is a compare-and-swap on the remote ref: it lands only on the expected value, and records
/// what landed in the remote-tracking ref.
#[test]
fn a_leased_push_lands_only_on_the_expected_value() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let one = append(&a, MAIL, 1);
    let two = append(&a, MAIL, 2);
    assert!(push_leased(&a, "origin", MAIL, one, None).unwrap());
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&one));
    assert_eq!(local(&a, &tracking_name("origin", MAIL)), Some(one));
    // Stale: the remote holds one, the lease says absent.
    assert!(!push_leased(&a, "origin", MAIL, two, None).unwrap());
    assert!(!push_leased(&a, "origin", MAIL, two, Some(two)).unwrap());
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&one));
    assert!(push_leased(&a, "origin", MAIL, two, Some(one)).unwrap());
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&two));
    assert_eq!(local(&a, &tracking_name("origin", MAIL)), Some(two));
    // A push that would lose an event is refused before it is sent.
    let err = push_leased(&a, "origin", MAIL, one, Some(two)).unwrap_err();
    assert!(err.to_string().contains("refusing to push"), "{err}");
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&two));
    // A remote that refuses (a hook): the remote's words, as a refusal the user fixes.
    fleet.hook(
        "pre-receive",
        "#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n",
    );
    let three = append(&a, MAIL, 3);
    let err = push_leased(&a, "origin", MAIL, three, Some(two)).unwrap_err();
    assert!(
        matches!(err, crate::kit::error::Error::Refused(_)),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with("cannot push to remote origin: ") && text.contains("no pushes today"),
        "{text}"
    );
    let err = sync(&transport::reopen(&a).unwrap(), "origin")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no pushes today"), "{err}");
}

#[test]
fn a_fetch_names_the_remote_and_gits_reason() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let err = fetch(&a, "nope").unwrap_err().to_string();
    assert!(err.contains("nope"), "{err}");
    git(
        a.path(),
        &["remote", "add", "gone", "/nonexistent/remote.git"],
    );
    let a = open(a.path());
    let err = fetch(&a, "gone").unwrap_err();
    assert!(
        matches!(err, crate::kit::error::Error::Refused(_)),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with("cannot fetch from remote gone: "),
        "{text}"
    );
    assert!(!text.contains("fatal: "), "{text}");
    assert!(text.contains("; "), "git's lines joined: {text}");
    let err = sync(&a, "gone").unwrap_err().to_string();
    assert!(err.contains("cannot fetch from remote gone"), "{err}");
}

#[test]
fn git_failing_without_a_reason_is_not_the_users_to_fix() {
    let e = transport::remote_error("o", "push to", b"\n  \n");
    assert!(matches!(e, crate::kit::error::Error::Other(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "cannot push to remote o: git failed without saying why"
    );
    let e = transport::remote_error("o", "fetch from", b"fatal: one\n\n  two  \n");
    assert!(matches!(e, crate::kit::error::Error::Refused(_)), "{e:?}");
    assert_eq!(e.to_string(), "cannot fetch from remote o: one; two");
}

/// How `git push --porcelain` says a ref lost a race, against a refusal.
#[test]
fn lost_races_are_told_from_refusals() {
    let to = "refs/jules/mail";
    for line in [
        "!\tabc:refs/jules/mail\t[rejected] (stale info)",
        "!\tabc:refs/jules/mail\t[rejected] (fetch first)",
        "!\tabc:refs/jules/mail\t[rejected] (non-fast-forward)",
        "!\tabc:refs/jules/mail\t[rejected] (atomic push failed)",
        "!\tabc:refs/jules/mail\t[remote rejected] (failed to lock)",
        "!\tabc:refs/jules/mail\t[remote rejected] (cannot lock ref 'x')",
    ] {
        assert!(transport::lost_a_race(line, to, ""), "{line}");
    }
    let failed = "!\tabc:refs/jules/mail\t[remote rejected] (failed to update ref)";
    assert!(transport::lost_a_race(
        failed,
        to,
        "error: cannot lock ref 'refs/jules/mail': is at 1 but expected 2"
    ));
    assert!(!transport::lost_a_race(
        failed,
        to,
        "error: cannot lock ref 'refs/jules/other': is at 1 but expected 2"
    ));
    assert!(!transport::lost_a_race(failed, to, ""));
    assert!(!transport::lost_a_race(
        "!\tabc:refs/jules/mail\t[remote rejected] (pre-receive hook declined)",
        to,
        "cannot lock ref 'refs/jules/mail':"
    ));
}

// --- the report -----------------------------------------------------------------------------------------

fn result(name: &str, action: Action) -> RefSync {
    RefSync {
        name: name.into(),
        action,
        tip: format!("tip-of-{name}-{}", action.as_str()),
        published: Published::Nothing,
    }
}

#[test]
fn a_report_keeps_each_refs_strongest_action_across_rounds() {
    assert_eq!(
        [
            Action::UpToDate,
            Action::Created,
            Action::FastForwarded,
            Action::Pushed,
            Action::Republished,
            Action::Merged,
        ]
        .map(|a| a.as_str()),
        [
            "up-to-date",
            "created",
            "fast-forwarded",
            "pushed",
            "republished",
            "merged"
        ]
    );
    let mut t = Tally::new("o");
    // Round 0 only moved local refs: what it would publish is not said.
    t.take_round(
        0,
        vec![
            result("a", Action::UpToDate),
            result("b", Action::Pushed),
            result("c", Action::Republished),
            result("d", Action::FastForwarded),
            result("e", Action::Created),
            result("f", Action::Merged),
        ],
    );
    assert_eq!(
        t.results.keys().cloned().collect::<Vec<_>>(),
        ["d", "e", "f"]
    );
    t.take_round(
        1,
        vec![
            result("a", Action::UpToDate),
            result("d", Action::UpToDate),
            result("f", Action::Pushed),
        ],
    );
    assert_eq!(t.results["a"].action, Action::UpToDate);
    assert_eq!(t.results["d"].action, Action::FastForwarded);
    assert_eq!(t.results["d"].tip, "tip-of-d-up-to-date", "the latest tip");
    assert_eq!(t.results["f"].action, Action::Merged);
    let before = t.results.clone();
    t.take_round(
        2,
        vec![
            result("a", Action::Pushed),
            result("g", Action::Republished),
        ],
    );
    t.unsay_pushes(&before);
    assert_eq!(t.results["a"].action, Action::UpToDate);
    assert_eq!(t.results["g"].action, Action::UpToDate);
    assert_eq!(t.results["f"].action, Action::Merged);
    t.pruned.push("p".into());
    t.folded = 3;
    let r = t.report(2, Vec::new(), Vec::new());
    assert_eq!(r.rounds, 2);
    assert_eq!(r.folded, 3);
    assert_eq!(r.pruned, ["p"]);
    assert_eq!(r.remote, "o");
    assert_eq!(r.push_attempts, 0);
    assert_eq!(
        r.refs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
        ["a", "d", "e", "f", "g"]
    );
    assert!(r.changed());
    let quiet = Tally::new("o").report(1, Vec::new(), Vec::new());
    assert!(!quiet.changed());
    let mut t = Tally::new("o");
    t.take_round(1, vec![result("a", Action::UpToDate)]);
    assert!(!t.report(1, Vec::new(), Vec::new()).changed());
}

// --- news -----------------------------------------------------------------------------------------------

/// The memo of "no news": the local tip and the remote commits, sorted and each once; any other set asks
/// again.
#[test]
fn the_no_news_memo_answers_only_for_the_same_commits() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let x = append(&a, MAIL, 1);
    let y = append(&a, MAIL, 2);
    let z = append(&a, MAIL, 3);
    let memo = news::HeldMemo::of(&a, MAIL);
    assert!(!memo.holds(x, &[y, z]));
    memo.remember(x, &[z, y, z]);
    let path = crate::kit::repo::jules_dir(&a)
        .join("held")
        .join("jules%mail");
    let mut sorted = [y, z];
    sorted.sort();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{x}\n{}\n{}\n", sorted[0], sorted[1])
    );
    let memo = news::HeldMemo::of(&a, MAIL);
    assert!(memo.holds(x, &[y, z]));
    assert!(memo.holds(x, &[z, y]));
    assert!(!memo.holds(y, &[x, z]));
    assert!(!memo.holds(x, &[y]));
    assert!(!memo.holds(x, &[y, z, x]));
    // A memo of other commits is replaced.
    memo.remember(y, &[z]);
    assert!(news::HeldMemo::of(&a, MAIL).holds(y, &[z]));
    assert!(!news::HeldMemo::of(&a, MAIL).holds(x, &[y, z]));
}

/// An idle clone whose local tip is its own join (never pushed) has no news: it publishes nothing, and the
/// answer is remembered for those very commits; news of its own is published as ever.
#[test]
fn a_clone_with_only_the_remotes_events_publishes_nothing() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let c = fleet.clone("c");
    let e1 = append(&a, MAIL, 1);
    sync_now(&a);
    sync_now(&b);
    sync_now(&c);
    // a and c each publish an event to their writer refs only (their folds lost the race).
    let push_writer = |repo: &gix::Repository, tip: ObjectId| {
        let w = writer_ref(MAIL, &writer_id(repo).unwrap());
        git(
            repo.path(),
            &["push", "-q", "-f", "origin", &format!("{tip}:{w}")],
        );
    };
    push_writer(&a, append(&a, MAIL, 2));
    push_writer(&c, append(&c, MAIL, 3));
    let before = fleet.remote_refs();
    assert_eq!(before[MAIL], e1);
    let r = sync_now(&b);
    assert_eq!(r.push_attempts, 0, "{:?}", r.refs);
    assert_eq!(the_ref(&r, MAIL).action, Action::FastForwarded);
    assert_eq!(the_ref(&r, MAIL).published, Published::Nothing);
    assert_eq!(fleet.remote_refs(), before);
    let joined = local(&b, MAIL).unwrap();
    assert!(!before.values().any(|v| *v == joined), "b's own join");
    let memo = crate::kit::repo::jules_dir(&b)
        .join("held")
        .join("jules%mail");
    let mut remote_commits: Vec<ObjectId> = before
        .iter()
        .filter(|(n, _)| n.starts_with("refs/jules/"))
        .map(|(_, v)| *v)
        .collect();
    remote_commits.sort();
    remote_commits.dedup();
    let expected: String = std::iter::once(joined)
        .chain(remote_commits)
        .map(|id| format!("{id}\n"))
        .collect();
    assert_eq!(std::fs::read_to_string(&memo).unwrap(), expected);
    let r = sync_now(&b);
    assert_eq!(r.push_attempts, 0);
    assert_eq!(the_ref(&r, MAIL).action, Action::UpToDate);
    assert_eq!(fleet.remote_refs(), before);
    // News of its own: published, folding both writer refs.
    append(&b, MAIL, 4);
    let r = sync_now(&b);
    assert_eq!(r.push_attempts, 1);
    assert_eq!(r.folded, 2, "a's and c's writer refs");
    let shared = fleet.remote_refs()[MAIL];
    assert_eq!(ids_at(&b, MAIL, shared).len(), 4);
    assert!(
        fleet.remote_writer_refs().is_empty(),
        "{:?}",
        fleet.remote_refs()
    );
}

/// A remote-tracking ref written by a plain `git fetch` before the sync is taken in by round 0, so that the
/// sync's own fetch pruning it loses nothing.
#[test]
fn what_a_plain_fetch_brought_is_taken_in_before_pruning() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let tip = append(&a, MAIL, 1);
    sync_now(&a);
    // a's next event reaches the remote in its writer ref only.
    let w = writer_ref(MAIL, &writer_id(&a).unwrap());
    let only_there = append(&a, MAIL, 2);
    git(
        a.path(),
        &["push", "-q", "-f", "origin", &format!("{only_there}:{w}")],
    );
    git(
        b.path(),
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/jules/*:refs/remotes/origin/jules/*",
        ],
    );
    // The remote loses the writer ref; the shared ref stays.
    git(&fleet.remote(), &["update-ref", "-d", &w]);
    let r = sync_now(&b);
    assert_eq!(r.pruned, [tracking_name("origin", &w)]);
    // Round 0 took the event in from the remote-tracking ref before the fetch pruned it, and the sync
    // published it again.
    assert_eq!(local(&b, MAIL), Some(only_there));
    assert_eq!(the_ref(&r, MAIL).action, Action::Pushed);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&only_there));
    assert_ne!(tip, only_there);
    let seen: BTreeSet<String> = refs_of(b.path()).into_keys().collect();
    assert!(!seen.contains(&tracking_name("origin", &w)), "{seen:?}");
}

fn ledger_pushes(repo: &gix::Repository) -> Option<u64> {
    let text = std::fs::read_to_string(crate::kit::repo::jules_dir(repo).join("last-push")).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Series version refs ride on the logs' pushes: pushed with them (one more push in the ledger), deferred
/// with them under the push budget, and a refusal of the remote named per ref.
#[test]
fn series_versions_are_pushed_with_the_logs_and_wait_with_them() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let series = "refs/jules/series/ann/s";
    let tree = git(a.path(), &["hash-object", "-w", "-t", "tree", "/dev/null"]);
    // Each version on the one before (the remote takes fast-forwards only).
    let commit = |m: &str, parent: Option<&str>| match parent {
        Some(p) => git(a.path(), &["commit-tree", &tree, "-p", p, "-m", m]),
        None => git(a.path(), &["commit-tree", &tree, "-m", m]),
    };
    let remote_series = || fleet.remote_refs().get(series).map(|v| v.to_string());
    let v1 = commit("v1", None);
    git(a.path(), &["update-ref", series, &v1]);
    append(&a, MAIL, 1);
    let r = sync_now(&a);
    assert_eq!(r.series_pushed, [series]);
    assert!(r.series_deferred.is_empty() && r.series_refused.is_empty());
    assert_eq!(remote_series(), Some(v1.clone()));
    assert_eq!(r.push_attempts, 1);
    assert_eq!(
        ledger_pushes(&a),
        Some(2),
        "the logs' push and the versions'"
    );
    // Nothing pending: nothing pushed.
    let r = sync_now(&a);
    assert!(r.series_pushed.is_empty());

    // Under a push budget, with no news in the logs, a new version waits with the logs.
    let policy = PushPolicy {
        min_interval: Some(std::time::Duration::from_secs(3600)),
        now: false,
    };
    ledger::remember_push(&a, 1);
    let v2 = commit("v2", Some(&v1));
    git(a.path(), &["update-ref", series, &v2]);
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &policy).unwrap();
    assert_eq!(r.series_deferred, [series]);
    assert!(r.series_pushed.is_empty());
    assert!(
        r.push_deferred_secs.is_some_and(|s| s > 60),
        "{:?}",
        r.push_deferred_secs
    );
    assert_eq!(remote_series(), Some(v1.clone()));
    assert_eq!(ledger_pushes(&a), Some(1));
    // Urgent news in the logs goes out, and the version with it.
    append_data(
        &a,
        MAIL,
        "mail.send",
        serde_json::json!({ "priority": "urgent" }),
    );
    let r = sync_with(&transport::reopen(&a).unwrap(), "origin", &policy).unwrap();
    assert_eq!(r.push_deferred_secs, None, "{r:?}");
    assert_eq!(r.series_pushed, [series], "{r:?}");
    assert_eq!(remote_series(), Some(v2.clone()));
    assert_eq!(ledger_pushes(&a), Some(r.push_attempts + 1));

    // A remote that refuses versions: named per ref with its reason; the attempt spends the budget too.
    fleet.hook("pre-receive", "#!/bin/sh\nwhile read o n r; do case $r in refs/jules/series/*) echo \"$r: no versions here\" >&2; exit 1;; esac; done\n");
    std::fs::remove_file(crate::kit::repo::jules_dir(&a).join("last-push")).unwrap();
    let v3 = commit("v3", Some(&v2));
    git(a.path(), &["update-ref", series, &v3]);
    let r = sync_now(&a);
    assert!(r.series_pushed.is_empty());
    assert_eq!(r.series_refused.len(), 1, "{:?}", r.series_refused);
    assert_eq!(r.series_refused[0].name, series);
    assert!(
        r.series_refused[0].reason.contains("no versions here"),
        "{:?}",
        r.series_refused
    );
    assert_eq!(
        ledger_pushes(&a),
        Some(1),
        "a refused push spends the budget too"
    );
}

/// `sync_configured` reads the push interval from `jules.sync.minPushInterval`; `0` is no interval, and
/// `now` pushes whatever it says.
#[test]
fn the_configured_push_interval_is_read() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    git(a.path(), &["config", "jules.sync.minPushInterval", "1h"]);
    let a = open(a.path());
    let tip = append(&a, MAIL, 1);
    ledger::remember_push(&a, 1);
    let r = sync_configured(&a, None, false).unwrap();
    assert!(
        r.push_deferred_secs.is_some_and(|s| s > 60),
        "{:?}",
        r.push_deferred_secs
    );
    assert_eq!(fleet.remote_refs().get(MAIL), None);
    let r = sync_configured(&a, Some("origin"), true).unwrap();
    assert_eq!(r.push_deferred_secs, None);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&tip));
    git(a.path(), &["config", "jules.sync.minPushInterval", "0"]);
    let a = open(a.path());
    let tip = append(&a, MAIL, 2);
    let r = sync_configured(&a, None, false).unwrap();
    assert_eq!(r.push_deferred_secs, None);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&tip));
    git(a.path(), &["config", "jules.sync.minPushInterval", "soon"]);
    assert!(sync_configured(&open(a.path()), None, false).is_err());
}

/// The no-news memo is what an idle sync reads instead of a walk: for the very commits it names, its
/// answer is taken as it is (so the test plants one that a walk would contradict: the local tip has news),
/// and for any other commits it is not read.
#[test]
fn an_idle_sync_answers_from_the_memo_not_a_walk() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let e1 = append(&a, MAIL, 1);
    sync_now(&a);
    let e2 = append(&a, MAIL, 2);
    news::HeldMemo::of(&a, MAIL).remember(e2, &[e1]);
    let r = sync_now(&a);
    assert_eq!(r.push_attempts, 0, "the memo said: no news");
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&e1));
    // A memo of other commits is not read: the walk finds the news.
    news::HeldMemo::of(&a, MAIL).remember(e2, &[e2]);
    let r = sync_now(&a);
    assert_eq!(r.push_attempts, 1);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&e2));
}

/// An event the remote refused before (remembered by the gate) is held back: the rest of the news is
/// published without it, as new commits with the same event ids; with nothing else, nothing is pushed.
#[test]
fn events_the_remote_refuses_are_held_back_and_the_rest_published() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let e1 = append(&a, MAIL, 1);
    sync_now(&a);
    let bad = append(&a, MAIL, 2);
    let bad_id = ids_at(&a, MAIL, bad)
        .into_iter()
        .find(|id| !ids_at(&a, MAIL, e1).contains(id))
        .unwrap();
    let mut gate = crate::store::heldback::Gate::open(&a, "origin");
    let refusal = format!(
        "remote: refs/jules/mail: commit {bad} holds event {} by a, not verified for a: unsigned (the remote requires signed events)",
        &bad_id[..12]
    );
    assert!(gate.learn(&a, &refusal).unwrap());
    // Only the refused event is news: nothing to publish.
    let r = sync_now(&a);
    assert_eq!(r.held_back.len(), 1, "{r:?}");
    assert_eq!(r.held_back[0].id, bad_id);
    assert_eq!(r.push_attempts, 0);
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&e1));
    // Another event: published without the refused one.
    let good = append(&a, MAIL, 3);
    let r = sync_now(&a);
    assert_eq!(r.held_back.len(), 1, "{r:?}");
    assert_eq!(r.push_attempts, 1);
    let published = fleet.remote_refs()[MAIL];
    assert_ne!(
        published, good,
        "rebuilt on the remote's tip, not the local one"
    );
    let on_remote = ids_at(&a, MAIL, published);
    assert!(!on_remote.contains(&bad_id), "{on_remote:?}");
    assert_eq!(on_remote.len(), 2);
    assert!(ids_at(&a, MAIL, good)
        .iter()
        .all(|id| *id == bad_id || on_remote.contains(id)));
    assert_eq!(
        local(&a, MAIL).map(|t| ids_at(&a, MAIL, t).len()),
        Some(3),
        "the local log keeps it"
    );
}

/// A real race: another clone moves the shared ref after this sync's fetch, while its fold waits at the
/// remote (its `pre-receive` hook holds the first push until the test has moved the ref). The fold loses
/// its lease, and the union goes to this clone's writer ref, leased on the value the remote holds for it,
/// in the same round.
#[test]
fn a_fold_that_loses_a_real_race_publishes_to_the_writer_ref_in_the_same_round() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let c = fleet.clone("c");
    let e1 = append(&a, MAIL, 1);
    sync_now(&a);
    sync_now(&b);
    sync_now(&c);
    // b published once to its writer ref only (an earlier lost fold).
    let e2 = append(&b, MAIL, 2);
    let b_writer = writer_ref(MAIL, &writer_id(&b).unwrap());
    git(
        b.path(),
        &["push", "-q", "origin", &format!("{e2}:{b_writer}")],
    );
    // What c will have folded meanwhile, its objects already on the remote.
    let e4 = append(&c, MAIL, 4);
    git(
        c.path(),
        &["push", "-q", "origin", &format!("{e4}:refs/heads/c")],
    );
    let e3 = append(&b, MAIL, 3);
    let gate = fleet.dir.path().join("gate");
    std::fs::create_dir(&gate).unwrap();
    fleet.hook("pre-receive", &format!(
            "#!/bin/sh\ncat >/dev/null\ng={}\nif mkdir \"$g/held\" 2>/dev/null; then\n  touch \"$g/arrived\"\n  i=0; while [ ! -e \"$g/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\nfi\n",
            gate.display()
        ));
    let b_path = b.path().to_owned();
    let syncing = std::thread::spawn(move || sync(&open(&b_path), "origin"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !gate.join("arrived").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the fold never reached the remote"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    git(
        &fleet.remote(),
        &["update-ref", MAIL, &e4.to_string(), &e1.to_string()],
    );
    std::fs::write(gate.join("release"), "").unwrap();
    let r = syncing.join().unwrap().unwrap();
    assert_eq!(the_ref(&r, MAIL).published, Published::Writer, "{r:?}");
    assert_eq!(r.rounds, 1, "{r:?}");
    assert_eq!(r.push_attempts, 2);
    let remote = fleet.remote_refs();
    assert_eq!(remote.get(MAIL), Some(&e4), "c's fold stands");
    assert_eq!(remote.get(&b_writer), Some(&e3));
    assert_eq!(
        remote.get(&writer_ref(MAIL, &writer_id(&a).unwrap())),
        Some(&e1)
    );
}

/// A remote whose guard refuses an event (its words name the commit): the sync learns it, builds the round
/// again without it, publishes the rest, and reports it held back.
#[test]
fn a_refusal_naming_an_event_is_learned_and_the_rest_published() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let e1 = append(&a, MAIL, 1);
    sync_now(&a);
    // The guard's words (src/store/guard.rs) for every pushed commit whose event is marked bad.
    fleet.hook("pre-receive", "#!/bin/sh\nbad=0\nwhile read o n r; do\n  [ \"$n\" = 0000000000000000000000000000000000000000 ] && continue\n  for c in $(git rev-list \"$n\" --not --all); do\n    if git cat-file commit \"$c\" | grep -q refused-here; then\n      echo \"$r: commit $c holds event 0123456789ab by a, not verified for a: unsigned (the remote requires signed events)\" >&2; bad=1\n    fi\n  done\ndone\nexit $bad\n");
    let bad = append_data(
        &a,
        MAIL,
        "t.x",
        serde_json::json!({ "mark": "refused-here" }),
    );
    let bad_id = ids_at(&a, MAIL, bad)
        .into_iter()
        .find(|id| !ids_at(&a, MAIL, e1).contains(id))
        .unwrap();
    let good = append(&a, MAIL, 3);
    let r = sync_now(&a);
    assert_eq!(r.rounds, 2, "{r:?}");
    assert_eq!(r.push_attempts, 2, "the refused push counts");
    assert_eq!(r.held_back.len(), 1, "{r:?}");
    assert_eq!(r.held_back[0].id, bad_id);
    assert_eq!(the_ref(&r, MAIL).published, Published::Shared);
    let published = fleet.remote_refs()[MAIL];
    let on_remote = ids_at(&a, MAIL, published);
    assert_eq!(on_remote.len(), 2);
    assert!(!on_remote.contains(&bad_id));
    assert!(ids_at(&a, MAIL, good)
        .iter()
        .all(|id| *id == bad_id || on_remote.contains(id)));
}

/// The fetch tells the remote what it has from the logs' refs (and HEAD) only, not from every branch of
/// the clone (issue 29): the remote's upload-pack, wrapped, logs the `have` lines it is sent.
#[test]
fn a_fetch_negotiates_from_the_logs_refs_only() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    append(&a, MAIL, 1);
    sync_now(&a);
    sync_now(&b);
    let known = local(&b, MAIL).unwrap();
    // A branch of b's own that the remote has never seen.
    let tree = git(b.path(), &["hash-object", "-w", "-t", "tree", "/dev/null"]);
    let noise = git(b.path(), &["commit-tree", &tree, "-m", "noise"]);
    git(b.path(), &["update-ref", "refs/heads/noise", &noise]);
    append(&a, MAIL, 2);
    sync_now(&a);
    let log = fleet.dir.path().join("upload-pack.log");
    let wrapper = fleet.dir.path().join("upload-pack");
    write_script(
        &wrapper,
        &format!(
            "#!/bin/sh\ntee -a {} | git-upload-pack \"$@\"\n",
            log.display()
        ),
    );
    git(
        b.path(),
        &[
            "config",
            "remote.origin.uploadpack",
            wrapper.to_str().unwrap(),
        ],
    );
    sync_now(&open(b.path()));
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(sent.contains(&format!("have {known}")), "{sent}");
    assert!(!sent.contains(&format!("have {noise}")), "{sent}");
}

/// A push where one ref lost a race and the remote refused another is a refusal, not a race: retrying
/// would be refused again.
#[test]
fn a_refusal_beside_a_lost_race_is_a_refusal() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let one = append(&a, MAIL, 1);
    sync_now(&a);
    let two = append(&a, MAIL, 2);
    // The remote's `update` hook refuses writer refs, ref by ref.
    fleet.hook("update", "#!/bin/sh\ncase $1 in refs/jules/writers/*) echo \"no writer refs: $1\" >&2; exit 1;; esac\n");
    let mut gate = crate::store::heldback::Gate::open(&a, "origin");
    let w = writer_ref(MAIL, "00000000000000ff");
    let push = |updates: &[transport::Update], gate: &mut crate::store::heldback::Gate| {
        transport::push_gated(&a, "origin", updates, transport::Atomicity::EachRef, gate)
    };
    // Each alone: a lost race lands nothing; a refusal is an error with the remote's words.
    let stale = (MAIL.to_owned(), Some(two), Some(two));
    assert_eq!(
        push(std::slice::from_ref(&stale), &mut gate).unwrap(),
        Some(BTreeSet::new())
    );
    let refused = (w.clone(), Some(two), None);
    let err = push(std::slice::from_ref(&refused), &mut gate)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no writer refs"), "{err}");
    let err = push(&[stale, refused], &mut gate).unwrap_err().to_string();
    assert!(err.contains("no writer refs"), "{err}");
    // What lands beside a lost race is named.
    let fresh = (MAIL.to_owned(), Some(two), Some(one));
    let other = ("refs/jules/other".to_owned(), Some(one), Some(two));
    assert_eq!(
        push(&[fresh, other], &mut gate).unwrap(),
        Some(BTreeSet::from([MAIL.to_owned()]))
    );
    assert_eq!(fleet.remote_refs().get(MAIL), Some(&two));
}

/// Backups and writer refs are not logs, on either side: a local backup or writer ref is never published
/// or reported, and a remote ref under `writers/` that names no writer is not taken for a log.
#[test]
fn backups_and_writer_refs_are_not_logs() {
    let fleet = Fleet::new();
    let a = fleet.clone("a");
    let b = fleet.clone("b");
    let tip = append(&a, MAIL, 1);
    git(
        a.path(),
        &[
            "update-ref",
            "refs/jules/backup/log/mail/1",
            &tip.to_string(),
        ],
    );
    git(
        a.path(),
        &[
            "update-ref",
            "refs/jules/writers/mail/0123456789abcdef",
            &tip.to_string(),
        ],
    );
    let r = sync_now(&a);
    assert_eq!(
        r.refs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
        [MAIL]
    );
    let remote = fleet.remote_refs();
    assert!(
        !remote.contains_key("refs/jules/backup/log/mail/1"),
        "{remote:?}"
    );
    assert!(
        !remote.contains_key("refs/jules/writers/mail/0123456789abcdef"),
        "{remote:?}"
    );
    // On the remote: a ref under writers/ without a writer id.
    git(
        &fleet.remote(),
        &["update-ref", "refs/jules/writers/state", &tip.to_string()],
    );
    let r = sync_now(&b);
    assert_eq!(
        r.refs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
        [MAIL]
    );
    assert_eq!(local(&b, "refs/jules/writers/state"), None);
}
