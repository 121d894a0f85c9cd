//! The push budget (issue 29): [`PushPolicy`], how long this clone must wait before it may push, and the
//! ledger of its last push (`.git/jules/last-push`) that the wait is counted from.

use std::time::Duration;

use super::writer_refs::writer_id;
use crate::kit::error::Result;

/// How a sync may push: the per-clone share of a fleet's push budget (issue 29). A forge recommends a few
/// pushes a minute per repository (GitHub: 6); a fleet of N clones stays within B pushes a minute when each
/// waits N/B minutes between its pushes, batching its events meanwhile (docs/cli.md, "Push budget").
#[derive(Debug, Clone, Default)]
pub struct PushPolicy {
    /// The least time between two pushes of this clone (`jules.sync.minPushInterval`); `None`: no limit.
    pub min_interval: Option<Duration>,
    /// Push whatever the interval (`git jules sync --now`).
    pub now: bool,
}

impl PushPolicy {
    /// `jules.sync.minPushInterval` (`90s`, `10m`, `1h`, or whole seconds), refused with the rule when it
    /// does not parse (`settings::duration`, the one reader of durations in the configuration).
    pub fn from_config(repo: &gix::Repository) -> Result<Self> {
        let secs = crate::kit::settings::duration(repo, "jules.sync.minPushInterval")?.unwrap_or(0);
        Ok(PushPolicy {
            min_interval: (secs > 0).then(|| Duration::from_secs(secs as u64)),
            now: false,
        })
    }

    /// How long this clone must still wait before it may push, if at all.
    ///
    /// Every push spends one interval, a failed attempt too (the forge counted it: a fold that lost its
    /// lease is followed by a second push to the writer ref, and together they spend two). And a clone
    /// pushes on its own *phase*: at a time that is its phase (a share of one interval fixed by its writer
    /// id) past a multiple of the interval, the first such time once the interval has run out. So clones that
    /// pushed together (a fleet that started together, or a burst of urgent mail) spread out again at their
    /// next pushes instead of pushing together forever (measured: ten clones sharing six pushes a minute,
    /// all last pushed at one moment, pushed twelve times in one minute), and a clone that has not pushed yet
    /// waits for its first phase point. In steady state a clone pushes exactly one interval apart.
    pub(super) fn wait(&self, repo: &gix::Repository) -> Option<Duration> {
        let interval = self.min_interval.filter(|_| !self.now)?.as_secs().max(1);
        let now = unix_now();
        let phase = writer_id(repo)
            .ok()
            .and_then(|w| u64::from_str_radix(w.get(..8)?, 16).ok())
            .unwrap_or_default()
            % interval;
        let earliest = match read_ledger(repo) {
            Some((last, pushes)) => last.saturating_add(interval.saturating_mul(pushes.max(1))),
            None => now,
        };
        let due = next_phase_point(earliest, phase, interval);
        (due > now).then(|| Duration::from_secs(due - now))
    }
}

/// The first time at or after `at` that is `phase` past a multiple of `interval`.
fn next_phase_point(at: u64, phase: u64, interval: u64) -> u64 {
    let r = at % interval;
    let base = at - r;
    if r <= phase {
        base + phase
    } else {
        base.saturating_add(interval) + phase
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// The push ledger: when this clone last pushed (unix seconds) and how many pushes that sync made. Derived
/// data: a missing file counts as a clone that has not pushed (it waits its phase), a damaged one only
/// allows a push. Older builds wrote the time alone (one push).
fn ledger_path(repo: &gix::Repository) -> std::path::PathBuf {
    crate::kit::repo::jules_dir(repo).join("last-push")
}

fn read_ledger(repo: &gix::Repository) -> Option<(u64, u64)> {
    let text = match std::fs::read_to_string(ledger_path(repo)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(_) => return Some((0, 1)),
    };
    let mut words = text.split_whitespace();
    let last = words.next().and_then(|w| w.parse().ok());
    let pushes = words.next().map_or(Some(1), |w| w.parse().ok());
    Some(match (last, pushes) {
        (Some(last), Some(pushes)) => (last, pushes),
        _ => (0, 1),
    })
}

fn write_ledger(repo: &gix::Repository, last: u64, pushes: u64) {
    let _ = std::fs::create_dir_all(crate::kit::repo::jules_dir(repo));
    let _ = std::fs::write(ledger_path(repo), format!("{last} {pushes}\n"));
}

/// Record that this sync made `pushes` push attempts (each one the forge counts).
pub(super) fn remember_push(repo: &gix::Repository, pushes: u64) {
    if pushes > 0 {
        write_ledger(repo, unix_now(), pushes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(secs: u64) -> PushPolicy {
        PushPolicy {
            min_interval: Some(Duration::from_secs(secs)),
            now: false,
        }
    }

    fn repo() -> (tempfile::TempDir, gix::Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init(dir.path()).unwrap();
        (dir, repo)
    }

    /// A clone that has not pushed waits for its first phase point (its writer id's share of one interval),
    /// and says the same due time on the next sync: a fleet that starts together spreads its first pushes.
    #[test]
    fn a_clone_that_never_pushed_waits_for_its_phase_point() {
        let (_d, repo) = repo();
        let interval = 600;
        let phase = u64::from_str_radix(&writer_id(&repo).unwrap()[..8], 16).unwrap() % interval;
        let now = unix_now();
        let due = next_phase_point(now, phase, interval);
        let first = policy(interval).wait(&repo).map_or(0, |d| d.as_secs());
        assert!(
            first.abs_diff(due - now) <= 1,
            "waited {first}, due in {}",
            due - now
        );
        assert!(first < interval);
        let again = policy(interval).wait(&repo).map_or(0, |d| d.as_secs());
        assert!(again.abs_diff(first) <= 1, "{again} then {first}");
        // `--now`, and no interval at all, never wait.
        let now = PushPolicy {
            now: true,
            ..policy(interval)
        };
        assert_eq!(now.wait(&repo), None);
        assert_eq!(PushPolicy::default().wait(&repo), None);
    }

    #[test]
    fn phase_points_are_phase_past_a_multiple_of_the_interval() {
        assert_eq!(next_phase_point(1000, 30, 100), 1030);
        assert_eq!(next_phase_point(1030, 30, 100), 1030);
        assert_eq!(next_phase_point(1031, 30, 100), 1130);
        assert_eq!(next_phase_point(1099, 0, 100), 1100);
        assert_eq!(next_phase_point(1100, 0, 100), 1100);
    }

    /// Every push attempt of a sync spends one interval: two (a lost fold, then the writer ref) spend two;
    /// then the clone waits for its phase point. Clones that pushed at one moment come apart.
    #[test]
    fn each_push_attempt_spends_one_interval_then_the_phase_point() {
        let (_d, repo) = repo();
        let interval = 100;
        let phase = u64::from_str_radix(&writer_id(&repo).unwrap()[..8], 16).unwrap() % interval;
        let expect = |pushes: u64| {
            let now = unix_now();
            next_phase_point(now + pushes * interval, phase, interval) - now
        };
        remember_push(&repo, 1);
        let one = policy(interval).wait(&repo).unwrap().as_secs();
        assert!(one.abs_diff(expect(1)) <= 1 && one + 1 >= interval, "{one}");
        remember_push(&repo, 2);
        let two = policy(interval).wait(&repo).unwrap().as_secs();
        assert!(
            two.abs_diff(expect(2)) <= 1 && two + 1 >= 2 * interval,
            "{two}"
        );
        // What older builds wrote, the time alone, is one push; a damaged ledger allows a push at the next
        // phase point.
        std::fs::write(ledger_path(&repo), format!("{}\n", unix_now())).unwrap();
        assert!(policy(interval).wait(&repo).unwrap().as_secs() + 1 >= interval);
        std::fs::write(ledger_path(&repo), "garbage").unwrap();
        assert!(policy(interval).wait(&repo).map_or(0, |d| d.as_secs()) < interval);
    }

    /// No push attempt, no ledger; a push due this very second is not deferred; a ledger that cannot be
    /// read (not a missing one) allows a push.
    #[test]
    fn the_ledger_is_written_for_attempts_only_and_read_leniently() {
        let (_d, repo) = repo();
        remember_push(&repo, 0);
        assert!(!ledger_path(&repo).exists());
        assert_eq!(read_ledger(&repo), None);
        // Interval 1: every second is a phase point, so a push is due exactly one interval after the last.
        write_ledger(&repo, unix_now() - 1, 1);
        assert_eq!(policy(1).wait(&repo), None);
        write_ledger(&repo, unix_now() + 5, 1);
        assert!(policy(1).wait(&repo).is_some());
        // A ledger that is a directory: damaged, so a push is allowed (a missing one waits for the phase).
        std::fs::remove_file(ledger_path(&repo)).unwrap();
        std::fs::create_dir_all(ledger_path(&repo)).unwrap();
        assert_eq!(read_ledger(&repo), Some((0, 1)));
        assert_eq!(policy(600).wait(&repo), None);
    }
}
