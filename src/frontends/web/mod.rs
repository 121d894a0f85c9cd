//! `git jules web`: the operator's window on the fleet, over HTTP on loopback.
//!
//! Pages are rendered on the server from the library's typed reads (`fleet::read`, `mail::api`,
//! `state::status`, `series`, `weave::recent`, `lease`), never from the CLI; each page's data is also served as
//! JSON (`/api/…` or `Accept: application/json`) in the shapes of docs/json.md. `auth` admits requests,
//! `render` makes untrusted text inert, `pages` answers the routes, `live` streams ref changes to open
//! pages (`GET /events`), `search` is the slot for the mail search.
//!
//! One thread per request (tiny_http hands them out from its accept thread): the server has one operator,
//! a page costs milliseconds, and an open `/events` stream is a thread asleep on a condition variable.
//!
//! A request never takes the server down. [`handle`] is the whole request path as a pure function (the
//! parts tiny_http parsed in, an [`Answer`] out): size bounds, admission, the form body, CSRF, routing and
//! rendering. Each request thread runs it under `catch_unwind`, so a panic answers that request alone
//! (500); what cannot be caught (a stack overflow) is excluded by structure: every recursive reader of
//! request input is bounded in depth (the search query, `mail::search::query::MAX_DEPTH`). What a request
//! may be is bounded before any page runs: the address ([`MAX_URL_BYTES`], 414), the headers
//! ([`MAX_HEADERS`], [`MAX_HEADER_BYTES`] each, 431) and a form body ([`MAX_FORM_BYTES`], 413). tiny_http
//! itself reads a request line and header lines without a bound before [`handle`] sees them, before the
//! token is checked: what contains that is the listening address, loopback by default (another one is
//! served with a warning).

pub mod auth;
// The request path as a fuzz target: tests and cargo-fuzz only.
pub mod fetch;
#[cfg(any(test, fuzzing))]
pub mod fuzz;
mod leases;
mod live;
mod pages;
pub mod render;
pub mod search;
mod series;
mod tables;

use std::io::Cursor;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tiny_http::{Header, Method, Request, Response, StatusCode};

use git_jules::kit::error::{Error, Result};

/// How the server was asked to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: SocketAddr,
    /// The overseer persona the operator sends, replies and marks as; without it the pages only read.
    pub as_persona: Option<String>,
    /// Refuse every state-changing request, whatever `as_persona` says.
    pub read_only: bool,
    /// Unknown persona names are errors (the CLI's `--strict`), as in every other frontend.
    pub strict_personas: bool,
    /// What the frontend decided for every read and write (`--full`, a signing key). With `as_persona`,
    /// [`Server::bind`] pins that persona's key here: the server signs with it and holds no other.
    pub overrides: git_jules::kit::repo::Overrides,
    /// `--fetch INTERVAL`: fetch the clone's jules remote in the background this often ([`fetch`]).
    pub fetch: Option<std::time::Duration>,
}

/// The security headers of every response: no script but our own file, no framing, no sniffing, no
/// referrer (the token may be in the address), nothing cached.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// What the request handlers share.
pub(crate) struct Shared {
    pub dir: PathBuf,
    pub addr: SocketAddr,
    pub opts: Options,
    pub secrets: auth::Secrets,
    pub env: minijinja::Environment<'static>,
    pub live: Arc<live::Live>,
    /// The mail views of the current tips, kept between requests.
    pub warm: Arc<git_jules::store::eventlog::warm::WarmViews>,
    /// What the persona check of `as_persona` warned about (an unknown name): every page shows it.
    pub as_warnings: Vec<git_jules::capabilities::mail::api::UnknownName>,
    /// What the configuration warns about (a trust ref naming nothing: nothing is marked NOT VERIFIED):
    /// every page shows it, since the operator reading marks must know they mean nothing.
    pub config_warnings: Vec<String>,
    /// The checkpoints this server's reads passed over under `jules.requireSigned`: the next page
    /// rendered shows them with the warnings above (each log once for the server's life).
    pub passed_over: Arc<git_jules::store::eventlog::checkpoint::PassedOver>,
    /// The background fetch (`--fetch`), whose status every page shows.
    pub fetch: Option<Arc<fetch::Fetcher>>,
    /// The fleet's signature-health column, as last computed (`tables`).
    pub health: tables::HealthMemo,
}

impl Shared {
    /// Whether the pages offer sending and marking.
    pub fn can_write(&self) -> bool {
        self.opts.as_persona.is_some() && !self.opts.read_only
    }
}

/// The repository, opened for one request with the server's overrides.
pub(crate) fn repo(shared: &Shared) -> Result<gix::Repository> {
    git_jules::kit::repo::open_with(&shared.dir, &shared.opts.overrides)
}

/// The request's workspace: the repository, with the server's warm views.
pub(crate) fn workspace(shared: &Shared) -> Result<git_jules::Workspace> {
    let mut ws = git_jules::Workspace::from_repo(&shared.dir, repo(shared)?);
    ws.share_warm(shared.warm.clone());
    ws.share_passed_over(shared.passed_over.clone());
    ws.strict_personas = shared.opts.strict_personas;
    Ok(ws)
}

/// The page of `doc`: its JSON document when the request asks for JSON, else its template's data made
/// straight from the typed value (a long listing is not turned into a JSON tree first).
pub(crate) fn reply(
    r: &Req,
    template: &'static str,
    title: String,
    doc: &impl serde::Serialize,
) -> Result<Reply> {
    Ok(if r.json {
        Reply::Page {
            template,
            title,
            data: serde_json::to_value(doc).map_err(|e| Error::wrap("serialising", e))?,
        }
    } else {
        Reply::Html {
            template,
            title,
            data: minijinja::Value::from_serialize(doc),
        }
    })
}

/// A bound server, not yet serving.
pub struct Server {
    http: tiny_http::Server,
    shared: Arc<Shared>,
    _watcher: notify::RecommendedWatcher,
}

impl Server {
    /// Bind `opts.listen` and start watching the refs of the repository at `dir`.
    pub fn bind(dir: PathBuf, mut opts: Options) -> Result<Server> {
        let repo = git_jules::kit::repo::open_with(&dir, &opts.overrides)?;
        let mut as_warnings = Vec::new();
        if let Some(p) = &opts.as_persona {
            // The persona policy of every frontend: a group is refused, an unknown name warned about
            // (refused when strict).
            let mut ws = git_jules::Workspace::from_repo(&dir, repo.clone());
            ws.strict_personas = opts.strict_personas;
            as_warnings = git_jules::capabilities::mail::api::check_persona(&ws, &repo, p)?;
            // `--as` writes as one persona: with that persona's key only, checked before serving.
            if let Some(key) = git_jules::store::sign::keys::pinned_key(&repo, p)? {
                opts.overrides.signing_key = Some(key);
            }
        }
        let config_warnings = git_jules::kit::settings::warnings(&repo);
        // The remote is decided at start, so a clone with none (or an ambiguous one) is refused now, not
        // reported on every page.
        let fetch = match opts.fetch {
            Some(every) => Some(Arc::new(fetch::Fetcher::new(
                git_jules::store::sync::default_remote(&repo)?,
                every,
            ))),
            None => None,
        };
        let common = repo.common_dir().to_path_buf();
        drop(repo);
        let http = tiny_http::Server::from_listener(listen(opts.listen)?, None)
            .map_err(|e| Error::usage(format!("cannot listen on {}: {e}", opts.listen)))?;
        let addr = http
            .server_addr()
            .to_ip()
            .ok_or_else(|| Error::Other("the server has no IP address".into()))?;
        let live = Arc::new(live::Live::default());
        let watcher = {
            let live = live.clone();
            git_jules::kit::refwatch::watch(&common, move || live.bump())?
        };
        Ok(Server {
            http,
            shared: Arc::new(Shared {
                dir,
                addr,
                opts,
                secrets: auth::Secrets::new()?,
                env: render::environment(),
                live,
                // A long-running reader: keep the mail view of the current tips in memory between requests.
                warm: Arc::new(git_jules::store::eventlog::warm::WarmViews::new()),
                as_warnings,
                config_warnings,
                passed_over: Default::default(),
                fetch,
                health: Default::default(),
            }),
            _watcher: watcher,
        })
    }

    /// What the check of `--as` warned about, for the frontend to say as well.
    pub fn warnings(&self) -> &[git_jules::capabilities::mail::api::UnknownName] {
        &self.shared.as_warnings
    }

    /// The URL to open, access token included.
    pub fn url(&self) -> String {
        let host = match self.shared.addr {
            SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
            SocketAddr::V4(a) => a.to_string(),
        };
        format!("http://{host}/?token={}", self.shared.secrets.token)
    }

    /// Serve until the process ends.
    pub fn run(self) {
        if let Some(f) = &self.shared.fetch {
            f.start(
                self.shared.dir.clone(),
                self.shared.opts.overrides.clone(),
                self.shared.live.clone(),
            );
        }
        for req in self.http.incoming_requests() {
            let shared = self.shared.clone();
            std::thread::spawn(move || serve(&shared, req));
        }
    }
}

/// The listening socket, with `TCP_NODELAY` set so that every accepted connection has it (Linux copies it to
/// them): tiny_http writes a response's head and body separately, and with Nagle's algorithm the body then
/// waits for the client's delayed ACK (~40 ms) on a kept-alive connection.
fn listen(addr: SocketAddr) -> Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| Error::usage(format!("cannot listen on {addr}: {e}")))?;
    socket2::SockRef::from(&listener)
        .set_tcp_nodelay(true)
        .map_err(|e| Error::io(format!("setting TCP_NODELAY on {addr}"), e))?;
    Ok(listener)
}

/// A request split into what the handlers need.
pub(crate) struct Req {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub form: Vec<(String, String)>,
    pub json: bool,
}

impl Req {
    pub fn param(&self, k: &str) -> Option<&str> {
        self.query
            .iter()
            .chain(&self.form)
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// What a handler answers.
pub(crate) enum Reply {
    /// A page: rendered from `template` with `data` in HTML, `data` itself in JSON.
    Page {
        template: &'static str,
        title: String,
        data: serde_json::Value,
    },
    /// Bytes to download (attachments) or plain text (raw bodies), never rendered by the browser.
    Bytes {
        content_type: &'static str,
        disposition: String,
        bytes: Vec<u8>,
    },
    /// A page whose data was made for the template only (the request did not ask for JSON): the typed
    /// document converted once, straight to the template's values, without a JSON tree between.
    Html {
        template: &'static str,
        title: String,
        data: minijinja::Value,
    },
    Static(&'static str, &'static str),
    Redirect(String),
    Error(StatusCode, String),
    /// A page that answers input it refused (a search query that does not parse): the page, with 400.
    Refused(Box<Reply>),
}

/// A response header. Every value given is printable ASCII by construction (constants, hex tokens, the
/// page's content types, [`location`]); should one not be, it is sent percent-encoded rather than panic.
fn header(k: &str, v: &str) -> Header {
    Header::from_bytes(k.as_bytes(), v.as_bytes())
        .or_else(|_| Header::from_bytes(k.as_bytes(), location(v).as_bytes()))
        .unwrap_or_else(|_| Header::from_bytes(&b"X-Invalid"[..], &b"1"[..]).expect("ASCII"))
}

/// The longest request target (path and query) served: a search box's query is at most 8 KiB, which
/// percent-encoded is well under this.
pub const MAX_URL_BYTES: usize = 64 * 1024;
/// The most header lines a request may have.
pub const MAX_HEADERS: usize = 100;
/// The longest header line (name and value).
pub const MAX_HEADER_BYTES: usize = 8 * 1024;
/// The largest form body (a mail's body is at most `render::MAX_BODY` and a few fields).
pub const MAX_FORM_BYTES: u64 = 1 << 20;

/// A request as tiny_http parsed it, without its connection: what [`handle`] reads.
pub struct Incoming<'a> {
    pub method: Method,
    /// The request target: path and query.
    pub url: &'a str,
    pub headers: &'a [Header],
    pub body: &'a mut dyn std::io::Read,
}

/// A response without its connection.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
}

/// What [`handle`] decided.
pub(crate) enum Outcome {
    Answer(Answer),
    /// `GET /events`, admitted: the stream takes the connection.
    Events,
}

fn find_header<'a>(headers: &'a [Header], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// Whether the answer is JSON: an `/api/` path, or a client that accepts JSON.
fn wants_json(path: &str, headers: &[Header]) -> bool {
    path.starts_with("/api/")
        || find_header(headers, "Accept").is_some_and(|a| a.contains("application/json"))
}

/// One request, answered by the server's own path in its thread.
fn serve(shared: &Shared, mut req: Request) {
    let method = req.method().clone();
    let url = req.url().to_owned();
    let headers = req.headers().to_vec();
    let outcome = handle(
        shared,
        Incoming {
            method,
            url: &url,
            headers: &headers,
            body: req.as_reader(),
        },
    );
    match outcome {
        Outcome::Events => {
            // The stream runs until the client goes; its own panic ends only its thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                live::stream(shared, req)
            }));
        }
        Outcome::Answer(a) => {
            let len = a.body.len();
            let resp = Response::new(
                StatusCode(a.status),
                a.headers,
                Cursor::new(a.body),
                Some(len),
                None,
            )
            .with_chunked_threshold(usize::MAX);
            let _ = req.respond(resp);
        }
    }
}

/// The answer of a request whose handling panicked (a bug: the message says so, the server goes on).
fn panicked(shared: &Shared, json: bool) -> Answer {
    answer(
        shared,
        Reply::Error(
            StatusCode(500),
            "internal error: this request panicked (a bug; please report it)".into(),
        ),
        json,
        false,
    )
}

/// The request path: bounds, admission, the form, CSRF, the route, the rendered answer. Pure apart from
/// what the routes read and write in the repository; the fuzz target `web_request` drives it through
/// [`Probe`]. A panic anywhere in it answers this request alone, with 500.
pub(crate) fn handle(shared: &Shared, req: Incoming<'_>) -> Outcome {
    guarded(shared, req, pages::route)
}

fn guarded(
    shared: &Shared,
    req: Incoming<'_>,
    route: impl FnOnce(&Shared, &Req) -> Reply,
) -> Outcome {
    let json = wants_json(req.url.split('?').next().unwrap_or_default(), req.headers);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handle_with(shared, req, route)
    }))
    .unwrap_or_else(|_| Outcome::Answer(panicked(shared, json)))
}

fn handle_with(
    shared: &Shared,
    req: Incoming<'_>,
    route: impl FnOnce(&Shared, &Req) -> Reply,
) -> Outcome {
    let (path, query) = match req.url.split_once('?') {
        Some((p, q)) => (p, q),
        None => (req.url, ""),
    };
    let json = wants_json(path, req.headers);
    let refuse = |status: u16, message: String| {
        Outcome::Answer(answer(
            shared,
            Reply::Error(StatusCode(status), message),
            json,
            false,
        ))
    };
    if req.url.len() > MAX_URL_BYTES {
        return refuse(
            414,
            format!(
                "the address is {} bytes long: at most {MAX_URL_BYTES} are served",
                req.url.len()
            ),
        );
    }
    if req.headers.len() > MAX_HEADERS {
        return refuse(
            431,
            format!(
                "the request has {} headers: at most {MAX_HEADERS} are read",
                req.headers.len()
            ),
        );
    }
    if let Some(h) = req
        .headers
        .iter()
        .find(|h| h.field.as_str().len() + h.value.len() > MAX_HEADER_BYTES)
    {
        return refuse(
            431,
            format!(
                "the header {} is over {MAX_HEADER_BYTES} bytes long",
                git_jules::capabilities::mail::search::query::quote(h.field.as_str().as_str())
            ),
        );
    }
    let mut query: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let token = query
        .iter()
        .position(|(k, _)| k == "token")
        .map(|i| query.remove(i).1);
    let admitted = auth::admit(
        shared.addr,
        &shared.secrets,
        find_header(req.headers, "Host"),
        find_header(req.headers, "Origin"),
        token.as_deref(),
        find_header(req.headers, "Cookie"),
    );
    let admitted = match admitted {
        Ok(a) => a,
        Err(refusal) => {
            let status = match refusal {
                auth::Refusal::Token => 401,
                _ => 403,
            };
            return refuse(status, refusal.message().into());
        }
    };
    let path = path
        .strip_prefix("/api")
        .filter(|p| p.starts_with('/'))
        .unwrap_or(path)
        .to_owned();
    let method = req.method;
    let mut form = Vec::new();
    if method == Method::Post {
        let reply = if !shared.can_write() {
            Some(Reply::Error(
                StatusCode(403),
                if shared.opts.read_only {
                    "the server is read-only (--read-only)".into()
                } else {
                    "sending and marking need --as PERSONA".into()
                },
            ))
        } else {
            let mut body = Vec::new();
            use std::io::Read;
            // One byte past the bound tells a body that is too large from one that fits exactly.
            match req.body.take(MAX_FORM_BYTES + 1).read_to_end(&mut body) {
                Err(_) => Some(Reply::Error(
                    StatusCode(400),
                    "unreadable request body".into(),
                )),
                Ok(n) if n as u64 > MAX_FORM_BYTES => Some(Reply::Error(
                    StatusCode(413),
                    format!("the form is over {MAX_FORM_BYTES} bytes: it is not read"),
                )),
                Ok(_) => {
                    form = form_urlencoded::parse(&body).into_owned().collect();
                    let csrf = form
                        .iter()
                        .find(|(k, _)| k == "csrf")
                        .map(|(_, v)| v.as_str());
                    (!csrf.is_some_and(|c| auth::same(c, &shared.secrets.csrf))).then(|| {
                        Reply::Error(StatusCode(403), "missing or wrong CSRF token".into())
                    })
                }
            }
        };
        if let Some(reply) = reply {
            return Outcome::Answer(answer(shared, reply, json, admitted.set_cookie));
        }
    }
    let r = Req {
        method,
        path,
        query,
        form,
        json,
    };
    if r.path == "/events" && r.method == Method::Get {
        return Outcome::Events;
    }
    let reply = route(shared, &r);
    Outcome::Answer(answer(shared, reply, json, admitted.set_cookie))
}

/// A `Location` value made safe for a header: every byte outside printable ASCII percent-encoded (a
/// `back` field may hold any text; a CR or LF must never end the header).
fn location(to: &str) -> String {
    let mut out = String::with_capacity(to.len());
    for b in to.bytes() {
        if b.is_ascii_graphic() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The response of `reply`.
fn answer(shared: &Shared, reply: Reply, json: bool, set_cookie: bool) -> Answer {
    let mut headers = vec![
        header("Content-Security-Policy", CSP),
        header("X-Content-Type-Options", "nosniff"),
        header("X-Frame-Options", "DENY"),
        header("Referrer-Policy", "no-referrer"),
        header("Cache-Control", "no-store"),
    ];
    if set_cookie {
        headers.push(header(
            "Set-Cookie",
            &format!(
                "{}={}; Path=/; HttpOnly; SameSite=Strict",
                auth::cookie_name(shared.addr),
                shared.secrets.token
            ),
        ));
    }
    let (status, content_type, body) = answer_body(shared, reply, json, &mut headers);
    headers.push(header("Content-Type", &content_type));
    Answer {
        status,
        headers,
        body,
    }
}

fn answer_body(
    shared: &Shared,
    reply: Reply,
    json: bool,
    headers: &mut Vec<Header>,
) -> (u16, String, Vec<u8>) {
    match reply {
        Reply::Page {
            template,
            title,
            data,
        } => {
            if json {
                (200, "application/json".into(), to_json(&data))
            } else {
                html_page(
                    shared,
                    template,
                    &title,
                    minijinja::Value::from_serialize(&data),
                )
            }
        }
        Reply::Html {
            template,
            title,
            data,
        } => html_page(shared, template, &title, data),
        Reply::Refused(inner) => {
            let (_, content_type, body) = answer_body(shared, *inner, json, headers);
            (400, content_type, body)
        }
        Reply::Bytes {
            content_type,
            disposition,
            bytes,
        } => {
            headers.push(header("Content-Disposition", &disposition));
            (200, content_type.into(), bytes)
        }
        Reply::Static(ct, text) => (200, ct.into(), text.as_bytes().to_vec()),
        Reply::Redirect(to) => {
            headers.push(header("Location", &location(&to)));
            (303, "text/plain; charset=utf-8".into(), Vec::new())
        }
        Reply::Error(status, message) => {
            if json {
                let doc = serde_json::json!({ "version": 1, "error": { "status": status.0, "message": message } });
                (status.0, "application/json".into(), to_json(&doc))
            } else {
                let data = serde_json::json!({ "status": status.0, "message": message });
                let html = page(
                    shared,
                    "error.html",
                    "error",
                    minijinja::Value::from_serialize(&data),
                )
                .unwrap_or(message);
                (
                    status.0,
                    "text/html; charset=utf-8".into(),
                    html.into_bytes(),
                )
            }
        }
    }
}

/// The request path of `git jules web` without a socket: the fuzz target `web_request` (`fuzz`)
/// sends it arbitrary request lines, headers and bodies. It answers as a server bound to 127.0.0.1:1
/// would, over the repository at `dir`.
#[cfg(any(test, fuzzing))]
pub struct Probe {
    shared: Shared,
}

#[cfg(any(test, fuzzing))]
impl Probe {
    pub fn new(dir: PathBuf, as_persona: Option<String>) -> Result<Probe> {
        let addr: SocketAddr = ([127, 0, 0, 1], 1).into();
        Ok(Probe {
            shared: Shared {
                dir,
                addr,
                opts: Options {
                    listen: addr,
                    as_persona,
                    read_only: false,
                    overrides: Default::default(),
                    strict_personas: false,
                    fetch: None,
                },
                secrets: auth::Secrets::new()?,
                env: render::environment(),
                live: Arc::new(live::Live::default()),
                warm: Arc::new(git_jules::store::eventlog::warm::WarmViews::new()),
                as_warnings: Vec::new(),
                config_warnings: Vec::new(),
                passed_over: Default::default(),
                fetch: None,
                health: Default::default(),
            },
        })
    }

    /// The access token (to make admitted requests).
    pub fn token(&self) -> &str {
        &self.shared.secrets.token
    }

    /// The CSRF token (to make accepted forms).
    pub fn csrf(&self) -> &str {
        &self.shared.secrets.csrf
    }

    /// The `Host` the server admits.
    pub fn host(&self) -> String {
        self.shared.addr.to_string()
    }

    /// Answer one request; `None` when tiny_http would not have parsed it (an unknown method, a header it
    /// refuses). An `/events` request answers 200 with an empty body (the stream is not run).
    pub fn request(
        &self,
        method: &str,
        url: &str,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
    ) -> Option<Answer> {
        let method: Method = method.parse().ok()?;
        let headers: Vec<Header> = headers
            .iter()
            .map(|(k, v)| Header::from_bytes(*k, *v))
            .collect::<std::result::Result<_, _>>()
            .ok()?;
        let mut body = body;
        Some(
            match handle(
                &self.shared,
                Incoming {
                    method,
                    url,
                    headers: &headers,
                    body: &mut body,
                },
            ) {
                Outcome::Answer(a) => a,
                Outcome::Events => Answer {
                    status: 200,
                    headers: Vec::new(),
                    body: Vec::new(),
                },
            },
        )
    }
}

fn to_json(v: &serde_json::Value) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(v).unwrap_or_default();
    b.push(b'\n');
    b
}

/// A rendered page as a response's status, type and body.
fn html_page(
    shared: &Shared,
    template: &str,
    title: &str,
    data: minijinja::Value,
) -> (u16, String, Vec<u8>) {
    match page(shared, template, title, data) {
        Ok(html) => (200, "text/html; charset=utf-8".into(), html.into_bytes()),
        Err(e) => (500, "text/plain; charset=utf-8".into(), e.into_bytes()),
    }
}

/// Render `template` around `data`, with what every page shows (who we act as, the CSRF token).
fn page(
    shared: &Shared,
    template: &str,
    title: &str,
    data: minijinja::Value,
) -> std::result::Result<String, String> {
    let t = shared
        .env
        .get_template(template)
        .map_err(|e| e.to_string())?;
    // Room for a long listing's page up front: growing the buffer by doubling copied it again and again.
    let mut out = Vec::with_capacity(256 * 1024);
    t.render_captured_to(
        minijinja::context! {
            title => title,
            data => data,
            as_persona => shared.opts.as_persona,
            as_warnings => shared
                .as_warnings
                .iter()
                .map(ToString::to_string)
                .chain(shared.config_warnings.iter().cloned())
                .chain(shared.passed_over.take().iter().map(ToString::to_string))
                .collect::<Vec<_>>(),
            read_only => shared.opts.read_only,
            can_write => shared.can_write(),
            csrf => shared.secrets.csrf,
            max_body => render::MAX_BODY,
            fetch => shared.fetch.as_ref().map(|f| f.status()),
        },
        &mut out,
    )
    .map_err(|e| format!("rendering {template}: {e:#}"))?;
    String::from_utf8(out).map_err(|e| format!("rendering {template}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe() -> (tempfile::TempDir, Probe) {
        let dir = tempfile::tempdir().unwrap();
        let probe = Probe::new(dir.path().to_path_buf(), None).unwrap();
        (dir, probe)
    }

    fn get(p: &Probe, url: &str, route: impl FnOnce(&Shared, &Req) -> Reply) -> Answer {
        let host = p.host();
        let token = format!(
            "{}{}token={}",
            url,
            if url.contains('?') { '&' } else { '?' },
            p.token()
        );
        let headers = [Header::from_bytes(&b"Host"[..], host.as_bytes()).unwrap()];
        match guarded(
            &p.shared,
            Incoming {
                method: Method::Get,
                url: &token,
                headers: &headers,
                body: &mut &b""[..],
            },
            route,
        ) {
            Outcome::Answer(a) => a,
            Outcome::Events => panic!("not a stream"),
        }
    }

    /// Issue 40, finding 1: a panic inside one request answers that request with 500 (and a message that
    /// says it is a bug); the next request on the same server state is answered as usual.
    #[test]
    fn a_panic_answers_its_request_alone() {
        let (_dir, p) = probe();
        let a = get(&p, "/api/fleet", |_, _| panic!("a bug in a page"));
        assert_eq!(a.status, 500);
        assert!(String::from_utf8_lossy(&a.body).contains("this request panicked"));
        let b = get(&p, "/api/fleet", |_, r| {
            Reply::Static(
                "text/plain; charset=utf-8",
                if r.json { "json" } else { "html" },
            )
        });
        assert_eq!((b.status, &b.body[..]), (200, &b"json"[..]));
    }

    /// A redirect to a `back` holding non-ASCII text or a line break made `header()` panic (its thread
    /// died with an empty 500); the value is percent-encoded instead, and cannot end the header.
    #[test]
    fn a_redirect_to_any_text_is_a_valid_header() {
        let (_dir, p) = probe();
        let a = get(&p, "/", |_, _| {
            Reply::Redirect("/mail/b\u{f6}b\r\nX-Evil: 1".into())
        });
        assert_eq!(a.status, 303);
        let loc = a
            .headers
            .iter()
            .find(|h| h.field.equiv("Location"))
            .unwrap();
        assert_eq!(loc.value.as_str(), "/mail/b%C3%B6b%0D%0AX-Evil:%201");
    }

    /// Every connection the server accepts has TCP_NODELAY, inherited from the listening socket.
    #[test]
    fn accepted_connections_have_nodelay() {
        let listener = super::listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(accepted.nodelay().unwrap());
    }
}
