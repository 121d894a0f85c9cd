//! The fleet and mailbox tables at 30 personas and more (issue 44): sorted, filtered and paged by the
//! server from query parameters (`sort=COLUMN`, `dir=asc|desc`, `q=TEXT`, `page=N`), so every link and form
//! works without script; the one script only filters the rows of the page shown while the operator types.
//! A page holds [`PER_PAGE`] rows and says how many there are in all, before and after the filter.
//!
//! The fleet also gets a signature-health column where the repository verifies signatures (trust roots or
//! `jules.requireSigned`): per persona, the states of its last [`HEALTH_SAMPLE`] sent messages, counted as
//! verified, unsigned (mail from before the persona had a key: legacy, shown quietly) and likely forged
//! (unsigned although the persona has a key, a bad signature, a key not allowed: shown in red).
//!
//! These shape the HTML only: the JSON documents (`/api/fleet`, `/api/mail/P`) stay whole, in the CLI's
//! shapes. The health column reads each persona's last sent messages through `mail::api::sent`, and is
//! remembered until the mail refs or the trust roots move ([`HealthMemo`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Reply, Req, Shared};
use git_jules::capabilities::fleet::{Fleet, PersonaRow};
use git_jules::capabilities::mail::api::MessageOut;
use git_jules::kit::error::Result;

/// Rows on one page.
pub const PER_PAGE: usize = 50;
/// Sent messages per persona whose signatures make its health.
pub const HEALTH_SAMPLE: usize = 50;

/// Where a page of a table stands, and the links that move it.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Paging {
    pub sort: Option<String>,
    pub desc: bool,
    pub q: String,
    /// 1-based.
    pub page: usize,
    pub pages: usize,
    /// Rows before the filter, and after it.
    pub all: usize,
    pub total: usize,
    /// 1-based positions of the first and last row shown (0 and 0 when none).
    pub from: usize,
    pub to: usize,
    pub prev: Option<String>,
    pub next: Option<String>,
    /// Per sortable column: the link that sorts by it (the other way when it is the current column).
    pub sort_links: BTreeMap<String, String>,
    /// The page's other parameters (a mailbox's folder), for the filter form to keep.
    pub keep: Vec<(String, String)>,
}

/// What the query asks of a table.
struct Ask {
    sort: Option<String>,
    desc: bool,
    q: String,
    page: usize,
    keep: Vec<(String, String)>,
}

fn ask(r: &Req, columns: &[&str], keep: &[&str]) -> Ask {
    Ask {
        sort: r
            .param("sort")
            .filter(|s| columns.contains(s))
            .map(str::to_owned),
        desc: r.param("dir") == Some("desc"),
        q: r.param("q").unwrap_or_default().trim().to_owned(),
        page: r
            .param("page")
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1),
        keep: r
            .query
            .iter()
            .filter(|(k, v)| keep.contains(&k.as_str()) && !v.is_empty())
            .cloned()
            .collect(),
    }
}

fn href(params: &[(String, String)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        s.append_pair(k, v);
    }
    format!("?{}", s.finish())
}

/// Keep `rows` that match the filter, sorted as asked (stable: the order given breaks ties), cut to the
/// page asked for; the paging that says so. `key` gives a row's sort key for a column.
fn shape<T, K: Ord>(
    rows: &mut Vec<T>,
    a: &Ask,
    columns: &[&str],
    default_desc: &[&str],
    matches: impl Fn(&T, &str) -> bool,
    key: impl Fn(&T, &str) -> K,
) -> Paging {
    let all = rows.len();
    if !a.q.is_empty() {
        let q = a.q.to_lowercase();
        rows.retain(|r| matches(r, &q));
    }
    if let Some(col) = &a.sort {
        rows.sort_by(|x, y| {
            let o = key(x, col).cmp(&key(y, col));
            if a.desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    let total = rows.len();
    let pages = total.div_ceil(PER_PAGE).max(1);
    let page = a.page.min(pages);
    let start = (page - 1) * PER_PAGE;
    rows.truncate((start + PER_PAGE).min(total));
    rows.drain(..start.min(rows.len()));
    let mut base = a.keep.clone();
    if !a.q.is_empty() {
        base.push(("q".into(), a.q.clone()));
    }
    let mut with_sort = base.clone();
    if let Some(s) = &a.sort {
        with_sort.push(("sort".into(), s.clone()));
        with_sort.push(("dir".into(), if a.desc { "desc" } else { "asc" }.into()));
    }
    let at = |n: usize| {
        let mut p = with_sort.clone();
        p.push(("page".into(), n.to_string()));
        href(&p)
    };
    let sort_links = columns
        .iter()
        .map(|c| {
            // A second click on the current column turns it round; a first one sorts numbers and times
            // largest first, names A to Z.
            let desc = if a.sort.as_deref() == Some(*c) {
                !a.desc
            } else {
                default_desc.contains(c)
            };
            let mut p = base.clone();
            p.push(("sort".into(), (*c).to_owned()));
            p.push(("dir".into(), if desc { "desc" } else { "asc" }.into()));
            ((*c).to_owned(), href(&p))
        })
        .collect();
    Paging {
        sort: a.sort.clone(),
        desc: a.desc,
        q: a.q.clone(),
        page,
        pages,
        all,
        total,
        from: if rows.is_empty() { 0 } else { start + 1 },
        to: start + rows.len(),
        prev: (page > 1).then(|| at(page - 1)),
        next: (page < pages).then(|| at(page + 1)),
        sort_links,
        keep: a.keep.clone(),
    }
}

/// Sort keys of any column: numbers, then text.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    N(u64),
    T(String),
}

const FLEET_COLUMNS: &[&str] = &[
    "persona",
    "unread",
    "needs_response",
    "received",
    "sent",
    "last_activity",
    "leases",
];
const FLEET_DESC: &[&str] = &[
    "unread",
    "needs_response",
    "received",
    "sent",
    "last_activity",
    "leases",
];

fn fleet_key(p: &PersonaRow, col: &str) -> Key {
    match col {
        "unread" => Key::N(p.unread),
        "needs_response" => Key::N(p.needs_response),
        "received" => Key::N(p.received),
        "sent" => Key::N(p.sent),
        // RFC 3339 in UTC sorts as text; none sorts first.
        "last_activity" => Key::T(p.last_activity.clone().unwrap_or_default()),
        "leases" => Key::N(p.leases.len() as u64),
        _ => Key::T(p.persona.to_lowercase()),
    }
}

/// A persona's signature health: its last sent messages by state.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Health {
    pub verified: usize,
    /// Unsigned, from before the persona had a key (or a persona with none): legacy.
    pub unsigned: usize,
    /// Unsigned although the persona has a key, a bad signature, a key not allowed: likely forged.
    pub forged: usize,
    /// How many messages were looked at.
    pub sampled: usize,
}

/// The fleet page's data: the fleet (its rows sorted, filtered and paged), the paging, and the health of
/// the personas shown (absent where nothing is verified).
#[derive(Serialize)]
struct FleetPage<'a> {
    #[serde(flatten)]
    fleet: &'a Fleet,
    paging: Paging,
    health: Option<BTreeMap<String, Health>>,
}

/// The fleet as HTML: `fleet` shaped by the query, with the health of the personas on the page.
pub(super) fn fleet_page(
    shared: &Shared,
    repo: &gix::Repository,
    r: &Req,
    mut fleet: Fleet,
) -> Result<Reply> {
    let a = ask(r, FLEET_COLUMNS, &[]);
    let paging = shape(
        &mut fleet.personas,
        &a,
        FLEET_COLUMNS,
        FLEET_DESC,
        |p, q| p.persona.to_lowercase().contains(q),
        fleet_key,
    );
    let names: Vec<&str> = fleet.personas.iter().map(|p| p.persona.as_str()).collect();
    let health = health(shared, repo, &names)?;
    super::reply(
        r,
        "fleet.html",
        "fleet".into(),
        &FleetPage {
            fleet: &fleet,
            paging,
            health,
        },
    )
}

/// Each persona's health as last computed, for the mail log's tips and trust roots it was computed under:
/// reading a persona's sent list reaches into its recipients' mailboxes, which a fleet page must not pay
/// again on every view while nothing moved.
#[derive(Default)]
pub struct HealthMemo {
    state: std::sync::Mutex<(String, BTreeMap<String, Health>)>,
}

/// The signature health of `personas` (their last [`HEALTH_SAMPLE`] sent messages each, through the use
/// case `mail sent` calls), `None` when the repository verifies nothing or no mail was ever sent.
fn health(
    shared: &Shared,
    repo: &gix::Repository,
    personas: &[&str],
) -> Result<Option<BTreeMap<String, Health>>> {
    let Some(verifier) = git_jules::store::eventlog::Verifier::open(repo)? else {
        return Ok(None);
    };
    drop(verifier);
    // What the states depend on: the mail log's tips (a sent list changes only when they move) and the
    // trust roots (the allowed-signers blob the verifier reads).
    let tips = git_jules::store::eventlog::Log::open(repo, "mail")?.tips()?;
    if tips.is_empty() {
        return Ok(None);
    }
    let trust = git_jules::store::sign::verdict::trust_blob(repo);
    let key = format!("{tips:?} {trust:?}");
    let mut memo = shared
        .health
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if memo.0 != key {
        *memo = (key, BTreeMap::new());
    }
    let ws = super::workspace(shared)?;
    for p in personas {
        if memo.1.contains_key(*p) {
            continue;
        }
        let sent = git_jules::capabilities::mail::api::sent(&ws, p, Some(HEALTH_SAMPLE))?;
        let mut h = Health {
            sampled: sent.list.messages.len(),
            ..Health::default()
        };
        for m in &sent.list.messages {
            match &m.signature {
                Some(git_jules::store::sign::State::Verified { .. }) => h.verified += 1,
                Some(git_jules::store::sign::State::Unsigned) => h.unsigned += 1,
                Some(_) => h.forged += 1,
                None => {}
            }
        }
        memo.1.insert((*p).to_owned(), h);
    }
    Ok(Some(
        personas
            .iter()
            .filter_map(|p| memo.1.get(*p).map(|h| ((*p).to_owned(), h.clone())))
            .collect(),
    ))
}

const MAIL_COLUMNS: &[&str] = &["time", "from", "subject"];
const MAIL_DESC: &[&str] = &["time"];

fn mail_key(m: &MessageOut, col: &str) -> Key {
    match col {
        "time" => Key::T(m.time.clone()),
        "from" => Key::T(m.from.to_lowercase()),
        _ => Key::T(m.subject.to_lowercase()),
    }
}

/// A mailbox listing as its HTML page shows it: filtered (`q` in the subject, the sender or a recipient),
/// sorted (default: the CLI's order, urgent first, then newest) and cut to the page asked for. (The use
/// case has read the signatures of the whole folder already; reading only the page's would need a paged
/// use case in `mail::api`.)
pub(super) fn mail_table(r: &Req, messages: &mut Vec<MessageOut>) -> Paging {
    let a = ask(r, MAIL_COLUMNS, &["folder"]);
    shape(
        messages,
        &a,
        MAIL_COLUMNS,
        MAIL_DESC,
        |m, q| {
            m.subject.to_lowercase().contains(q)
                || m.from.to_lowercase().contains(q)
                || m.to.iter().any(|t| t.to_lowercase().contains(q))
        },
        mail_key,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask_of(q: &str) -> Ask {
        let query: Vec<(String, String)> =
            form_urlencoded::parse(q.as_bytes()).into_owned().collect();
        let r = Req {
            method: tiny_http::Method::Get,
            path: "/".into(),
            query,
            form: Vec::new(),
            json: false,
        };
        ask(&r, &["n", "name"], &["folder"])
    }

    fn run(q: &str, rows: usize) -> (Vec<usize>, Paging) {
        let mut v: Vec<usize> = (1..=rows).collect();
        let p = shape(
            &mut v,
            &ask_of(q),
            &["n", "name"],
            &["n"],
            |n, q| n.to_string().contains(q),
            |n, col| match col {
                "n" => Key::N(*n as u64),
                _ => Key::T(n.to_string()),
            },
        );
        (v, p)
    }

    #[test]
    fn pages_hold_fifty_rows_and_keep_the_counts() {
        let (rows, p) = run("", 120);
        assert_eq!(
            (rows.len(), rows[0], p.pages, p.total, p.from, p.to),
            (50, 1, 3, 120, 1, 50)
        );
        assert_eq!(
            (p.prev.as_deref(), p.next.as_deref()),
            (None, Some("?page=2"))
        );
        let (rows, p) = run("page=3", 120);
        assert_eq!(
            (rows, p.from, p.to),
            ((101..=120).collect::<Vec<_>>(), 101, 120)
        );
        // A page past the end is the last one.
        assert_eq!(run("page=99", 120).1.page, 3);
        assert_eq!(run("page=x", 120).1.page, 1);
    }

    #[test]
    fn sorting_and_filtering_are_query_parameters_the_links_keep() {
        let (rows, p) = run("sort=n&dir=desc&folder=all", 120);
        assert_eq!(rows[0], 120);
        assert_eq!(
            p.next.as_deref(),
            Some("?folder=all&sort=n&dir=desc&page=2")
        );
        // The current column's link turns the order round; another's sorts numbers largest first.
        assert_eq!(p.sort_links["n"], "?folder=all&sort=n&dir=asc");
        assert_eq!(p.sort_links["name"], "?folder=all&sort=name&dir=asc");
        let (rows, p) = run("q=11&sort=name", 120);
        assert_eq!(rows, [11, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119]);
        assert_eq!((p.all, p.total, p.pages), (120, 11, 1));
        // An unknown column is no sort.
        assert_eq!(run("sort=evil", 3).1.sort, None);
        assert_eq!(run("", 0).1.from, 0);
    }
}
