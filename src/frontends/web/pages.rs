//! The routes: each one calls a typed read of the library and hands back its serialisable value, which
//! is the JSON document and the template's data at once.

use chrono::Utc;
use serde::Serialize;
use serde_json::json;
use tiny_http::{Method, StatusCode};

use super::render;
use super::{reply, repo, workspace, Reply, Req, Shared};
use git_jules::capabilities::mail::api::{self, Mark};
use git_jules::capabilities::mail::view::{Filter, Folder};
use git_jules::capabilities::mail::Priority;
use git_jules::kit::error::{Error, ErrorKind, Result};

pub(super) fn route(shared: &Shared, r: &Req) -> Reply {
    let segs: Vec<String> = r
        .path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let result = match (&r.method, segs.as_slice()) {
        (Method::Get, ["static", "app.js"]) => {
            return Reply::Static("text/javascript; charset=utf-8", render::APP_JS)
        }
        (Method::Get, ["static", "style.css"]) => {
            return Reply::Static("text/css; charset=utf-8", render::STYLE_CSS)
        }
        (Method::Get, [] | ["fleet"]) => fleet(shared, r),
        (Method::Get, ["mail", persona]) => mailbox(shared, r, persona),
        (Method::Get, ["message", id]) => thread(shared, r, id),
        (Method::Get, ["message", id, "raw"]) => raw(shared, id),
        (Method::Get, ["message", id, "file", name]) => attachment(shared, id, name),
        (Method::Get, ["series"]) => series(shared),
        (Method::Get, ["series", persona, name]) => {
            super::series::versions(shared, r, persona, name)
        }
        (Method::Get, ["series", persona, name, "range-diff"]) => {
            super::series::range_diff(shared, r, persona, name)
        }
        (Method::Get, ["leases"]) => super::leases::page(shared, r),
        (Method::Get, ["weave"]) => weave(shared),
        (Method::Get, ["search"]) => search(shared, r),
        (Method::Post, ["send"]) => send(shared, r),
        (Method::Post, ["mark"]) => mark(shared, r),
        _ => return Reply::Error(StatusCode(404), format!("no page at {}", r.path)),
    };
    result.unwrap_or_else(|e| {
        let status = match e.kind() {
            ErrorKind::NotFound => 404,
            ErrorKind::Usage => 400,
            ErrorKind::Conflict => 409,
            _ => 500,
        };
        // The page has room for one line: the message and its causes.
        Reply::Error(StatusCode(status), format!("{e:#}"))
    })
}

fn percent_decode(s: &str) -> String {
    form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

fn value(v: impl Serialize) -> Result<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| Error::wrap("serialising", e))
}

/// A listing of the mail use cases with what its page adds to the document (the folder shown, the message
/// selected, what may be marked).
#[derive(Serialize)]
struct Listing<'a> {
    /// The use case's document with its `warnings` (what the persona check said), as `mail inbox --json`.
    #[serde(flatten)]
    doc: &'a api::Listing,
    #[serde(skip_serializing_if = "Option::is_none")]
    folder: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    selected: Option<&'a str>,
    /// The messages the `--as` persona may mark (it received them): the page offers marking on those only.
    #[serde(skip_serializing_if = "Option::is_none")]
    markable: Option<Vec<&'a str>>,
    /// The HTML page's place in a long listing (`web::tables`); never in JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    paging: Option<super::tables::Paging>,
}

fn fleet(shared: &Shared, r: &Req) -> Result<Reply> {
    let repo = repo(shared)?;
    let f = git_jules::capabilities::fleet::read(&repo, Some(shared.warm.clone()), Utc::now())?;
    if r.json {
        return reply(r, "fleet.html", "fleet".into(), &f);
    }
    super::tables::fleet_page(shared, &repo, r, f)
}

/// A persona's folder: the mail use cases `mail inbox` and `mail sent` call, with their persona policy (a
/// group has no mailbox: 400; an unknown name is shown with its warning, 400 when strict).
fn mailbox(shared: &Shared, r: &Req, persona: &str) -> Result<Reply> {
    let ws = workspace(shared)?;
    let folder = r.param("folder").unwrap_or("inbox");
    let mut doc = if folder == "sent" {
        api::sent(&ws, persona, None)?
    } else {
        let filter = Filter {
            folder: match folder {
                "inbox" => Folder::Inbox,
                "archive" => Folder::Archive,
                "trash" => Folder::Trash,
                "all" => Folder::All,
                other => return Err(Error::usage(format!("unknown folder {other:?}"))),
            },
            unread: r.param("unread").is_some(),
            msg_type: r.param("type").map(str::to_owned),
            priority: r.param("priority").map(Priority::parse).transpose()?,
            tag: r.param("tag").map(str::to_owned),
            from: r.param("from").map(str::to_owned),
            since: None,
            limit: r.param("limit").and_then(|l| l.parse().ok()),
        };
        api::inbox(&ws, persona, &filter)?
    };
    // The HTML table is filtered, sorted and paged; the JSON document stays the use case's, whole.
    let paging = (!r.json).then(|| super::tables::mail_table(r, &mut doc.list.messages));
    let title = format!("mail of {}", render::visible(persona, render::MAX_NAME));
    let listing = Listing {
        doc: &doc,
        folder: Some(folder),
        selected: None,
        markable: None,
        paging,
    };
    reply(r, "mailbox.html", title, &listing)
}

/// A conversation: the use case `mail thread` calls.
fn thread(shared: &Shared, r: &Req, id: &str) -> Result<Reply> {
    let doc = api::thread(&workspace(shared)?, id, r.param("persona"))?;
    // Marking is the recipients' (`api::mark` refuses anyone else): no button that can only fail.
    let markable = match (&shared.opts.as_persona, r.json) {
        (Some(p), false) if shared.can_write() => Some(
            doc.list
                .messages
                .iter()
                .filter(|m| m.reaches(p))
                .map(|m| m.id.as_str())
                .collect(),
        ),
        _ => None,
    };
    let listing = Listing {
        doc: &doc,
        folder: None,
        selected: Some(id),
        markable,
        paging: None,
    };
    reply(r, "thread.html", "thread".into(), &listing)
}

/// The whole body as plain text (the use case `mail show` calls, with no persona): the browser shows it,
/// never renders or sniffs it.
fn raw(shared: &Shared, id: &str) -> Result<Reply> {
    let one = api::show(&workspace(shared)?, id, None)?;
    Ok(Reply::Bytes {
        content_type: "text/plain; charset=utf-8",
        disposition: "inline".into(),
        bytes: one.message.body.unwrap_or_default().into_bytes(),
    })
}

fn attachment(shared: &Shared, id: &str, name: &str) -> Result<Reply> {
    let bytes = api::attachment(&workspace(shared)?, id, name)?;
    // The file name goes into a header: keep only characters that cannot end or bend it.
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(Reply::Bytes {
        content_type: "application/octet-stream",
        disposition: format!("attachment; filename=\"{safe}\""),
        bytes,
    })
}

#[derive(Serialize)]
struct PatchOut {
    index: usize,
    commit: String,
    short: String,
    summary: String,
    verify: git_jules::capabilities::series::status::VerifyState,
    rationale: Vec<String>,
    reviews: Vec<git_jules::capabilities::series::review::NoteLine>,
}

#[derive(Serialize)]
struct SeriesOut {
    series: String,
    branch: String,
    base: String,
    verify_command: Option<String>,
    interrupted: Option<String>,
    patches: Vec<PatchOut>,
}

fn series(shared: &Shared) -> Result<Reply> {
    let ws = workspace(shared)?;
    let mut list = Vec::new();
    for s in git_jules::capabilities::series::status::read_all(&ws, None)? {
        let mut patches = Vec::new();
        for p in &s.patches {
            let notes = git_jules::capabilities::series::status::patch_notes(&ws, p)?;
            patches.push(PatchOut {
                index: p.patch.index,
                commit: p.patch.commit.to_string(),
                short: p.short.clone(),
                summary: p.patch.summary.clone(),
                verify: p.verify,
                rationale: notes.rationale,
                reviews: notes.reviews,
            });
        }
        list.push(SeriesOut {
            series: s.series,
            branch: s.branch,
            base: s.base.commit.to_string(),
            verify_command: s.verify_command,
            interrupted: s.interrupted,
            patches,
        });
    }
    Ok(Reply::Page {
        template: "series.html",
        title: "series".into(),
        // Every persona's recorded versions too (`series list --all`): on a clone with no staging branch
        // of its own, these are the series.
        data: json!({ "version": 1, "series": value(list)?, "versions": value(git_jules::capabilities::series::api::list_versions(&ws, None)?)? }),
    })
}

fn weave(shared: &Shared) -> Result<Reply> {
    let ws = workspace(shared)?;
    Ok(Reply::Page {
        template: "weave.html",
        title: "weave".into(),
        data: value(git_jules::capabilities::weave::recent::read(
            &ws,
            Utc::now(),
        )?)?,
    })
}

fn search(shared: &Shared, r: &Req) -> Result<Reply> {
    let query = super::search::Query {
        q: r.param("q").unwrap_or_default().to_owned(),
        persona: r.param("persona").map(str::to_owned),
        from: r.param("from").map(str::to_owned),
        tag: r.param("tag").map(str::to_owned),
        since: r.param("since").map(str::to_owned),
    };
    let answer = if query.q.trim().is_empty() {
        Ok(serde_json::Value::Null)
    } else {
        super::search::search(&repo(shared)?, &query).and_then(|out| value(&out))
    };
    // A query that does not parse is shown on the page (position and what was expected), answered with 400.
    let (results, unavailable) = match answer {
        Ok(v) => (v, None),
        Err(e @ (Error::Usage(_) | Error::Refused(_))) => {
            (serde_json::Value::Null, Some(e.to_string()))
        }
        Err(e) => return Err(e),
    };
    let refused = unavailable.is_some();
    let page = Reply::Page {
        template: "search.html",
        title: "search".into(),
        data: json!({ "version": 1, "query": value(&query)?, "results": results, "unavailable": unavailable }),
    };
    Ok(if refused {
        Reply::Refused(Box::new(page))
    } else {
        page
    })
}

/// Where to go after a write: back where the form was, if it is one of our paths, else the fleet page.
fn back(r: &Req) -> String {
    r.param("back")
        .filter(|b| same_origin_path(b))
        .unwrap_or("/")
        .to_owned()
}

/// Whether `b` is a path on this server, nothing a browser could read as another origin: it starts with
/// one `/` (so no scheme and no authority), not `//` (a network path), and holds no backslash (browsers
/// read `/\evil` as `//evil`), no control character (they drop tabs and newlines, so `/<TAB>/evil` is
/// `//evil`; CR and LF would also split the `Location` header) and no white space.
fn same_origin_path(b: &str) -> bool {
    let mut chars = b.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/'))
        && !b
            .chars()
            .any(|c| c == '\\' || c.is_control() || c.is_whitespace())
}

/// After a write: back where the form was, or, when the use case warned (an unknown name), a page that
/// says so first. In JSON: `id` and the use case's `warnings`.
fn done(
    shared: &Shared,
    r: &Req,
    title: &str,
    id: &str,
    warnings: &[api::UnknownName],
) -> Result<Reply> {
    // The `--as` persona's own warning is on every page already (checked when the server started).
    let warnings: Vec<&api::UnknownName> = warnings
        .iter()
        .filter(|w| shared.opts.as_persona.as_deref() != Some(w.name.as_str()))
        .collect();
    if r.json {
        let mut doc = json!({ "version": 1, "id": id });
        if !warnings.is_empty() {
            doc["warnings"] = value(&warnings)?;
        }
        return Ok(Reply::Page {
            template: "done.html",
            title: title.into(),
            data: doc,
        });
    }
    if warnings.is_empty() {
        return Ok(Reply::Redirect(back(r)));
    }
    // The page around it shows the warnings (base.html), as on every page.
    Ok(Reply::Html {
        template: "done.html",
        title: title.into(),
        data: minijinja::Value::from_serialize(json!({ "warnings": warnings, "back": back(r) })),
    })
}

/// Send (or, with `reply_to`, answer) as the `--as` persona: the mail use cases the CLI's `mail send`
/// and `mail reply` call, with their checks, reply subjects and threads.
fn send(shared: &Shared, r: &Req) -> Result<Reply> {
    let from = shared.opts.as_persona.clone().expect("writes need --as");
    let ws = workspace(shared)?;
    let compose = api::Compose {
        body: r.param("body").unwrap_or_default().replace("\r\n", "\n"),
        // The CLI's defaults (`mail send`: status, `mail reply`: response) unless the form names another.
        msg_type: r.param("type").map(str::to_owned),
        needs_response: r.param("needs_response").is_some(),
        ..api::Compose::default()
    };
    let sent = match r.param("reply_to") {
        Some(parent) => api::reply(
            &ws,
            api::ReplyInput {
                from,
                id: parent.to_owned(),
                compose,
                ..api::ReplyInput::default()
            },
        )?,
        None => api::send(
            &ws,
            api::SendInput {
                from,
                to: r
                    .param("to")
                    .unwrap_or_default()
                    .split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect(),
                subject: Some(r.param("subject").unwrap_or_default().to_owned()),
                compose,
                ..api::SendInput::default()
            },
        )?,
    };
    done(shared, r, "sent", &sent.id, &sent.warnings)
}

fn mark(shared: &Shared, r: &Req) -> Result<Reply> {
    let persona = shared.opts.as_persona.clone().expect("writes need --as");
    let id = r.param("id").ok_or_else(|| Error::usage("no message id"))?;
    let m = match r.param("action").unwrap_or_default() {
        "read" => Mark::Read,
        "unread" => Mark::Unread,
        "archive" => Mark::Archive,
        "unarchive" => Mark::Unarchive,
        "trash" => Mark::Trash,
        "untrash" => Mark::Untrash,
        "tag" => Mark::Tag(
            r.param("tag")
                .ok_or_else(|| Error::usage("no tag"))?
                .to_owned(),
        ),
        "untag" => Mark::Untag(
            r.param("tag")
                .ok_or_else(|| Error::usage("no tag"))?
                .to_owned(),
        ),
        other => return Err(Error::usage(format!("unknown action {other:?}"))),
    };
    let marked = api::mark(&workspace(shared)?, id, &persona, m)?;
    done(shared, r, "marked", &marked.message, &marked.warnings)
}

#[cfg(test)]
mod tests {
    use super::same_origin_path;

    #[test]
    fn redirects_stay_on_this_server() {
        for ok in ["/", "/mail/bob", "/message/abc?persona=bob&x=/y"] {
            assert!(same_origin_path(ok), "{ok}");
        }
        for bad in [
            "",
            "//evil.example/",
            "/\\evil.example/",
            "/\t/evil.example/",
            "/\r\nSet-Cookie: x=1",
            "https://evil.example/",
            "javascript:alert(1)",
            "mail/bob",
            "/a b",
            "/mail\\..\\x",
        ] {
            assert!(!same_origin_path(bad), "{bad:?}");
        }
    }
}
