//! The search page and `/api/search`: the box and its filters go to the one mail search every frontend calls
//! (`mail::search::search`, the same call as `git jules mail search` and the MCP tool `mail_search`), and its
//! typed answer is what the page renders and the API serves.

use serde::Serialize;

use git_jules::capabilities::mail::search::{SearchInput, SearchOutput};
use git_jules::kit::error::Result;

/// What the search box and its filters send (`/search?q=…&persona=…&from=…&tag=…&since=…`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Query {
    pub q: String,
    pub persona: Option<String>,
    pub from: Option<String>,
    pub tag: Option<String>,
    pub since: Option<String>,
}

/// Search the mail as the box asks; empty filters are no filters. A query that does not parse is bad input
/// (the page shows the position and what was expected).
pub fn search(repo: &gix::Repository, query: &Query) -> Result<SearchOutput> {
    let given = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let input = SearchInput {
        query: query.q.clone(),
        persona: given(&query.persona),
        from: given(&query.from),
        msg_type: None,
        tag: given(&query.tag),
        since: given(&query.since),
        until: None,
        limit: None,
        all_folders: false,
    };
    git_jules::capabilities::mail::search::search(repo, &input)
}
