//! The slot for mail search (`git jules mail search`, its own issue): the search page and `/api/search`
//! call [`search`], which answers "not available" until the library's search lands. Wiring it is one
//! change here: call the search function with [`Query`] and return its serialisable result.

use serde::Serialize;

use crate::error::{Error, Result};

/// What the search box and its filters send (`/search?q=…&persona=…&from=…&tag=…&since=…`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Query {
    pub q: String,
    pub persona: Option<String>,
    pub from: Option<String>,
    pub tag: Option<String>,
    pub since: Option<String>,
}

/// The search's answer, as `/api/search` serves it. Placeholder shape until the mail search lands.
pub fn search(_repo: &gix::Repository, _query: &Query) -> Result<serde_json::Value> {
    Err(Error::Refused(
        "mail search is not available in this build yet".into(),
    ))
}
