//! What the last weaves did, as the repository keeps it (`git jules web`'s weave page): the last reports
//! recorded on `refs/jules/weave` ([`super::record`]: what applied, what conflicted, with files, hunks and
//! counterparts), the woven commits on each integration branch (`jules/integration/*`, newest first, with their
//! `Woven-from` input) and the mails weave sent (tagged `weave`: a `conflict` mail names the files, hunks and
//! counterpart inputs; an `alert` a dropped input).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::capabilities::mail::api::{self, MessageOut};
use crate::capabilities::workspace::Workspace;
use crate::kit::error::{Error, Result};

/// Woven commits shown per integration branch.
const COMMITS: usize = 50;
/// Commits looked at per branch before giving up on finding more woven ones.
const WALK: usize = 1000;
/// Weave mails shown.
const MAILS: usize = 50;
/// Recorded reports shown.
pub const REPORTS: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct Recent {
    pub version: u32,
    /// The last [`REPORTS`] recorded weaves, newest first.
    pub reports: Vec<super::record::Recorded>,
    pub branches: Vec<Branch>,
    /// The weave mails, newest first.
    pub mails: Vec<MessageOut>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Branch {
    pub branch: String,
    pub tip: String,
    pub woven: Vec<Woven>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Woven {
    pub commit: String,
    pub summary: String,
    /// The `Woven-from` input (a branch, a range, a patch file).
    pub input: String,
}

/// The weave reports as one read, the use case every frontend calls: the last recorded weaves
/// ([`super::record::last`]), the integration branches and the weave mails, with times relative to `now`.
pub fn read(ws: &Workspace, now: DateTime<Utc>) -> Result<Recent> {
    let repo = &ws.repo();
    let mut branches = Vec::new();
    let mut refs = Vec::new();
    for r in repo
        .references()?
        .prefixed("refs/heads/jules/integration/")?
    {
        let r = r.map_err(|e| Error::wrap("listing integration branches", e))?;
        let name = r.name().as_bstr().to_string();
        if let Some(id) = r.try_id() {
            refs.push((name, id.detach()));
        }
    }
    refs.sort();
    for (name, tip) in refs {
        let mut woven = Vec::new();
        for info in repo.rev_walk([tip]).first_parent_only().all()?.take(WALK) {
            let info = info.map_err(|e| Error::wrap(format!("walking {name}"), e))?;
            let commit = repo.find_commit(info.id)?;
            let message = commit.message_raw_sloppy().to_string();
            let input = crate::kit::trailers::parse(&message)
                .into_iter()
                .find(|t| t.key.eq_ignore_ascii_case(super::trailers::FROM))
                .map(|t| t.value);
            if let Some(input) = input {
                woven.push(Woven {
                    commit: info.id.to_string(),
                    summary: message.lines().next().unwrap_or_default().to_owned(),
                    input,
                });
                if woven.len() == COMMITS {
                    break;
                }
            }
        }
        branches.push(Branch {
            branch: name.trim_start_matches("refs/heads/").to_owned(),
            tip: tip.to_string(),
            woven,
        });
    }
    let mails = api::tagged(repo, "weave", MAILS, now)?;
    Ok(Recent {
        version: 1,
        reports: super::record::last(repo, REPORTS)?,
        branches,
        mails,
    })
}
