//! The leases page (issue 44): `/leases?persona=P&path=PATTERN`, the live leases, those about to expire and
//! those that ended recently, with holder, paths, reason, task and time left. The filters are query
//! parameters read by the server (`lease list`'s own filter: `--persona`, `--path` with the one overlap rule),
//! so the page works without script.

use serde::Serialize;

use super::{Reply, Req, Shared};
use git_jules::capabilities::lease::{self, Listed};
use git_jules::kit::error::Result;

/// How long after its end a lease is still shown (by its expiry: the view keeps no release time, and a
/// release comes before the expiry it cut short).
const RECENT: i64 = 24 * 3600;
/// The most ended leases shown, newest first.
const ENDED: usize = 50;

#[derive(Debug, Serialize)]
struct LeasesDoc {
    version: u32,
    /// The lease clock (`GIT_COMMITTER_DATE` when pinned, else now), RFC 3339.
    now: String,
    persona: Option<String>,
    path: Option<String>,
    /// `jules.lease.remindBefore`: a live lease with less time left than this is expiring.
    expiring_within: i64,
    /// Live, with more than `expiring_within` left, in the log's order.
    live: Vec<Listed>,
    /// Live, with at most `expiring_within` left, soonest first.
    expiring: Vec<Listed>,
    /// Released, expired, denied or superseded, whose expiry is less than a day ago (or still ahead, for a
    /// release), newest first; at most [`ENDED`].
    ended: Vec<Listed>,
}

pub(super) fn page(shared: &Shared, r: &Req) -> Result<Reply> {
    let ws = super::workspace(shared)?;
    let settings = lease::Settings::from_config(&ws.repo())?;
    let filter = lease::Filter {
        persona: r.param("persona").map(str::to_owned),
        path: r.param("path").map(str::to_owned),
        all: true,
    };
    // `lease list --all`, the use case the CLI calls (signatures read), then the three lists.
    let listing = lease::api::list(&ws, &filter)?;
    let now = listing.now;
    let mut all = listing.leases;
    all.retain(|l| l.live || l.lease.expires > now.saturating_sub(RECENT));
    let (mut live, mut ended): (Vec<Listed>, Vec<Listed>) = all.drain(..).partition(|l| l.live);
    ended.sort_by_key(|l| std::cmp::Reverse((l.lease.expires, l.lease.acquired)));
    ended.truncate(ENDED);
    let (mut expiring, live_rest): (Vec<Listed>, Vec<Listed>) = live
        .drain(..)
        .partition(|l| l.expires_in <= settings.remind_before);
    expiring.sort_by_key(|l| l.expires_in);
    let doc = LeasesDoc {
        version: 1,
        now: lease::format_time(now),
        persona: filter.persona,
        path: filter.path,
        expiring_within: settings.remind_before,
        live: live_rest,
        expiring,
        ended,
    };
    super::reply(r, "leases.html", "leases".into(), &doc)
}
