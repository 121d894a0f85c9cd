//! `git jules web`: the operator's window on the fleet, over HTTP on loopback.
//!
//! Pages are rendered on the server from the library's typed reads (`fleet::read`, `mail::out`,
//! `state::status`, `series`, `weave::recent`, `lease`), never from the CLI; each page's data is also served as
//! JSON (`/api/…` or `Accept: application/json`) in the shapes of docs/json.md. `auth` admits requests,
//! `render` makes untrusted text inert, `pages` answers the routes, `live` streams ref changes to open
//! pages (`GET /events`), `search` is the slot for the mail search.
//!
//! One thread per request (tiny_http hands them out from its accept thread): the server has one operator,
//! a page costs milliseconds, and an open `/events` stream is a thread asleep on a condition variable.

pub mod auth;
mod live;
mod pages;
pub mod render;
pub mod search;

use std::io::Cursor;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tiny_http::{Header, Method, Request, Response, StatusCode};

use crate::error::{Error, Result};

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
    pub overrides: crate::repo::Overrides,
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
    pub warm: Arc<crate::eventlog::warm::WarmViews>,
    /// What the persona check of `as_persona` warned about (an unknown name): every page shows it.
    pub as_warnings: Vec<crate::mail::api::UnknownName>,
    /// What the configuration warns about (a trust ref naming nothing: nothing is marked NOT VERIFIED):
    /// every page shows it, since the operator reading marks must know they mean nothing.
    pub config_warnings: Vec<String>,
}

impl Shared {
    /// Whether the pages offer sending and marking.
    pub fn can_write(&self) -> bool {
        self.opts.as_persona.is_some() && !self.opts.read_only
    }
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
        let repo = crate::repo::open_with(&dir, &opts.overrides)?;
        let mut as_warnings = Vec::new();
        if let Some(p) = &opts.as_persona {
            // The persona policy of every frontend: a group is refused, an unknown name warned about
            // (refused when strict).
            let mut ws = crate::Workspace::from_repo(&dir, repo.clone());
            ws.strict_personas = opts.strict_personas;
            as_warnings = crate::mail::api::check_persona(&ws, &repo, p)?;
            // `--as` writes as one persona: with that persona's key only, checked before serving.
            if let Some(key) = crate::sign::keys::pinned_key(&repo, p)? {
                opts.overrides.signing_key = Some(key);
            }
        }
        let config_warnings = crate::settings::warnings(&repo);
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
            crate::refwatch::watch(&common, move || live.bump())?
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
                warm: Arc::new(crate::eventlog::warm::WarmViews::new()),
                as_warnings,
                config_warnings,
            }),
            _watcher: watcher,
        })
    }

    /// What the check of `--as` warned about, for the frontend to say as well.
    pub fn warnings(&self) -> &[crate::mail::api::UnknownName] {
        &self.shared.as_warnings
    }

    /// The address actually bound (the port of `:0` chosen).
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
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
        for req in self.http.incoming_requests() {
            let shared = self.shared.clone();
            std::thread::spawn(move || handle(&shared, req));
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
}

fn header(k: &str, v: &str) -> Header {
    Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("ASCII header")
}

fn get_header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

fn handle(shared: &Shared, mut req: Request) {
    let (path, query) = match req.url().split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (req.url().to_owned(), String::new()),
    };
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
        get_header(&req, "Host"),
        get_header(&req, "Origin"),
        token.as_deref(),
        get_header(&req, "Cookie"),
    );
    let admitted = match admitted {
        Ok(a) => a,
        Err(refusal) => {
            let status = match refusal {
                auth::Refusal::Token => 401,
                _ => 403,
            };
            respond(
                shared,
                req,
                Reply::Error(StatusCode(status), refusal.message().into()),
                false,
                false,
            );
            return;
        }
    };
    let json = path.starts_with("/api/")
        || get_header(&req, "Accept").is_some_and(|a| a.contains("application/json"));
    let path = path
        .strip_prefix("/api")
        .filter(|p| p.starts_with('/'))
        .unwrap_or(&path)
        .to_owned();
    let method = req.method().clone();
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
            if req
                .as_reader()
                .take(1 << 20)
                .read_to_end(&mut body)
                .is_err()
            {
                Some(Reply::Error(
                    StatusCode(400),
                    "unreadable request body".into(),
                ))
            } else {
                form = form_urlencoded::parse(&body).into_owned().collect();
                let csrf = form
                    .iter()
                    .find(|(k, _)| k == "csrf")
                    .map(|(_, v)| v.as_str());
                (!csrf.is_some_and(|c| auth::same(c, &shared.secrets.csrf)))
                    .then(|| Reply::Error(StatusCode(403), "missing or wrong CSRF token".into()))
            }
        };
        if let Some(reply) = reply {
            respond(shared, req, reply, json, admitted.set_cookie);
            return;
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
        live::stream(shared, req);
        return;
    }
    let reply = pages::route(shared, &r);
    respond(shared, req, reply, json, admitted.set_cookie);
}

fn respond(shared: &Shared, req: Request, reply: Reply, json: bool, set_cookie: bool) {
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
    let (status, content_type, body): (u16, String, Vec<u8>) = match reply {
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
            headers.push(header("Location", &to));
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
    };
    headers.push(header("Content-Type", &content_type));
    let len = body.len();
    let resp = Response::new(
        StatusCode(status),
        headers,
        Cursor::new(body),
        Some(len),
        None,
    )
    .with_chunked_threshold(usize::MAX);
    let _ = req.respond(resp);
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
                .collect::<Vec<_>>(),
            read_only => shared.opts.read_only,
            can_write => shared.can_write(),
            csrf => shared.secrets.csrf,
            max_body => render::MAX_BODY,
        },
        &mut out,
    )
    .map_err(|e| format!("rendering {template}: {e:#}"))?;
    String::from_utf8(out).map_err(|e| format!("rendering {template}: {e}"))
}

#[cfg(test)]
mod tests {
    /// Every connection the server accepts has TCP_NODELAY, inherited from the listening socket.
    #[test]
    fn accepted_connections_have_nodelay() {
        let listener = super::listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(accepted.nodelay().unwrap());
    }
}
