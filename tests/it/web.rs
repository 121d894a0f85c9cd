//! `git jules web` through the real binary and a real browser: headless Chromium (Debian's `chromium`,
//! installed by `.ci/setup.d/chromium.sh`) driven over the DevTools protocol. A missing Chromium fails
//! these tests. Every server and browser runs in its own process group, killed when its guard drops, on
//! every path (panics included).
//!
//! With `JULES_WEB_SCREENSHOTS=DIR` set, the page tests also save the screenshots docs/web.md shows.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::Repo;

/// Only a guard against a hang: no assertion depends on how fast anything is.
const PATIENCE: Duration = Duration::from_secs(60);

/// A child in its own process group, killed with the group on drop.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `git jules web`.
pub(crate) struct Server {
    _child: Group,
    /// `http://127.0.0.1:PORT/?token=…`
    url: String,
    addr: String,
    token: String,
}

impl Server {
    pub(crate) fn start(r: &Repo, args: &[&str]) -> Server {
        Server::spawn(r.jules_cmd(["web"]), args)
    }

    /// The server with the lease clock pinned (`GIT_COMMITTER_DATE`), as `jules_at` pins a command's.
    fn start_at(r: &Repo, date: &str, args: &[&str]) -> Server {
        let mut cmd = r.jules_cmd(["web"]);
        cmd.env("GIT_COMMITTER_DATE", date);
        Server::spawn(cmd, args)
    }

    fn spawn(mut cmd: Command, args: &[&str]) -> Server {
        cmd.args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = Group(cmd.spawn().expect("starting git jules web"));
        let stdout = child.0.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        let rest = url.strip_prefix("http://").unwrap();
        let (addr, query) = rest.split_once('/').unwrap();
        let token = query.strip_prefix("?token=").unwrap().to_owned();
        Server {
            _child: child,
            addr: addr.to_owned(),
            url,
            token,
        }
    }

    /// `GET path` with the token's cookie.
    pub(crate) fn get(&self, path: &str) -> Resp {
        self.get_as(path, "*/*")
    }

    /// `GET path` with the token's cookie, accepting `accept`.
    fn get_as(&self, path: &str, accept: &str) -> Resp {
        let port = self.addr.rsplit(':').next().unwrap();
        let cookie = format!("jules_web_{port}={}", self.token);
        http(
            &self.addr,
            "GET",
            path,
            &[("Cookie", &cookie), ("Accept", accept)],
            "",
        )
    }

    /// `path` with the token in the query.
    fn with_token(&self, path: &str) -> String {
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("http://{}{path}{sep}token={}", self.addr, self.token)
    }
}

/// A raw HTTP/1.1 exchange: the status, the head (lower-cased) and the body.
pub(crate) struct Resp {
    pub(crate) status: u16,
    head: String,
    body: Vec<u8>,
}

impl Resp {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }
}

fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    // Read to the end, or to Content-Length: Chromium's DevTools endpoint keeps the connection open.
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let split = loop {
        let n = s.read(&mut buf).unwrap();
        raw.extend_from_slice(&buf[..n]);
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(split) = split {
            let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            if n == 0 || len.is_some_and(|l| raw.len() >= split + 4 + l) {
                break split;
            }
        } else {
            assert!(n > 0, "a response head");
        }
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let status = head[9..12].parse().unwrap();
    Resp {
        status,
        head,
        body: raw[split + 4..].to_vec(),
    }
}

/// Headless Chromium with one page, spoken to over the DevTools protocol.
struct Browser {
    ws: tungstenite::WebSocket<TcpStream>,
    next: u64,
    _child: Group,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Group(
            Command::new("/usr/bin/chromium")
                .args([
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--no-default-browser-check",
                    "--window-size=1200,900",
                    "--remote-debugging-port=0",
                    "--remote-debugging-address=127.0.0.1",
                ])
                .arg(format!("--user-data-dir={}", profile.path().display()))
                .arg("about:blank")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .expect("/usr/bin/chromium is required: run .ci/setup.d/chromium.sh"),
        );
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/…" names the port.
        let stderr = child.0.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(ws) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(ws.to_owned());
                }
            }
        });
        let browser_ws = rx
            .recv_timeout(PATIENCE)
            .expect("chromium announced its DevTools port");
        let port_addr = browser_ws
            .strip_prefix("ws://")
            .and_then(|r| r.split('/').next())
            .unwrap()
            .to_owned();
        let deadline = Instant::now() + PATIENCE;
        let page_ws = loop {
            let list = http(&port_addr, "GET", "/json/list", &[], "").json();
            let page = list
                .as_array()
                .and_then(|l| l.iter().find(|t| t["type"] == "page"))
                .and_then(|t| t["webSocketDebuggerUrl"].as_str())
                .map(str::to_owned);
            if let Some(p) = page {
                break p;
            }
            assert!(Instant::now() < deadline, "no page target");
            std::thread::sleep(Duration::from_millis(50));
        };
        let stream = TcpStream::connect(&port_addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let (ws, _) = tungstenite::client(page_ws.as_str(), stream).unwrap();
        let mut b = Browser {
            ws,
            next: 0,
            _child: child,
            _profile: profile,
        };
        b.call("Page.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        b
    }

    /// Send a command and wait for its answer (events in between are dropped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        match self.try_call(method, params) {
            Ok(result) => result,
            Err(answer) => panic!("{method}: {answer}"),
        }
    }

    /// Send a command and wait for its answer, or its error answer as it came.
    fn try_call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        let msg = json!({ "id": id, "method": method, "params": params }).to_string();
        self.ws.send(tungstenite::Message::text(msg)).unwrap();
        loop {
            let m = self.ws.read().expect("DevTools answer");
            let Ok(text) = m.to_text() else { continue };
            let v: Value = match serde_json::from_str(text) {
                Ok(v) => v,
                Err(_) => continue,
            };
            if v["id"] == id {
                if v.get("error").is_some() {
                    return Err(v);
                }
                return Ok(v["result"].clone());
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expr: &str) -> Value {
        match self.try_eval(expr) {
            Ok(value) => value,
            Err(answer) => panic!("Runtime.evaluate: {answer}"),
        }
    }

    /// The value of `expr`, or DevTools' error answer; a JavaScript exception fails the test.
    fn try_eval(&mut self, expr: &str) -> Result<Value, Value> {
        let params = json!({ "expression": expr, "returnByValue": true, "awaitPromise": true });
        let r = self.try_call("Runtime.evaluate", params)?;
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        Ok(r["result"]["value"].clone())
    }

    /// Wait until `expr` is true in the page.
    ///
    /// The page may be navigating while we wait (a submitted form, a reload): an evaluation the old
    /// document could not finish counts as "not yet", any other error still fails the test.
    fn wait_for(&mut self, expr: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.try_eval(&format!("!!({expr})")) {
                Ok(Value::Bool(true)) => return,
                Ok(_) => {}
                Err(answer) => assert!(is_navigation_error(&answer), "{expr}: {answer}"),
            }
            assert!(Instant::now() < deadline, "never true: {expr}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        // A new document: the marker set on the old one is gone once it loaded.
        self.wait_for("document.readyState === 'complete' && document.body && !window.__jules_old");
        self.eval("window.__jules_old = true");
    }

    fn text(&mut self) -> String {
        self.eval("document.body.innerText")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Save a screenshot as `DIR/<name>.png` when `JULES_WEB_SCREENSHOTS=DIR`.
    fn screenshot(&mut self, name: &str) {
        let Some(dir) = std::env::var_os("JULES_WEB_SCREENSHOTS") else {
            return;
        };
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64_decode(r["data"].as_str().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), png).unwrap();
    }
}

/// Every element with its own text whose colour against its background is below WCAG AA (4.5:1), as
/// `tag.class: ratio`; the background is the nearest one that is not transparent.
const CONTRAST_FAILURES: &str = r#"(() => {
  const rgb = s => (s.match(/[\d.]+/g) || []).map(Number);
  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const bg = el => { for (; el; el = el.parentElement) { const c = rgb(getComputedStyle(el).backgroundColor); if (c.length === 3 || c[3] > 0) return c; } return [255, 255, 255]; };
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const a = lum(rgb(getComputedStyle(el).color)), b = lum(bg(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) out.push(el.tagName.toLowerCase() + '.' + el.className + ': ' + ratio.toFixed(2));
  }
  return out;
})()"#;

impl Browser {
    /// Press a key (Tab, Enter) as the keyboard would.
    fn key(&mut self, key: &str, code: u32) {
        for kind in ["keyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code }),
            );
        }
    }

    /// Issue 44's screenshots: `DIR/<name>-1280.png` and `DIR/<name>-400.png` (a desktop and a phone width),
    /// when `JULES_WEB_SCREENSHOTS=DIR`; the page is reloaded at each width, then left at 1200 px.
    fn screenshots(&mut self, name: &str) {
        if std::env::var_os("JULES_WEB_SCREENSHOTS").is_none() {
            return;
        }
        for (w, h) in [(1280, 900), (400, 860)] {
            self.width(w, h);
            self.screenshot(&format!("{name}-{w}"));
        }
        self.width(1200, 900);
    }

    /// Lay the page out at `w` x `h` CSS pixels, as a window that size would.
    fn width(&mut self, w: u32, h: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": w, "height": h, "deviceScaleFactor": 1, "mobile": false }),
        );
        self.wait_for(&format!("window.innerWidth === {w}"));
    }
}

/// Whether DevTools refused an evaluation because the document went away under it (Chromium's words
/// for a navigation that started or finished while the call was in flight).
fn is_navigation_error(answer: &Value) -> bool {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    [
        "Inspected target navigated or closed",
        "Execution context was destroyed",
        "Cannot find context with specified id",
    ]
    .iter()
    .any(|m| message.contains(m))
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &c)| acc | (val(c) as u32) << (18 - 6 * i));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    out
}

fn send(r: &Repo, from: &str, to: &str, subject: &str, body: &str, extra: &[&str]) -> String {
    r.send_mail(from, to, subject, body, extra)
}

/// A repository with a sprint, a task and some mail between alice, bob and the overseer.
fn seeded() -> Repo {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"alice\", \"bob\"]\n[groups]\nreviewers = [\"alice\", \"bob\"]\n",
    );
    r.jules_ok(["sprint", "start", "--actor", "overseer"]);
    r.jules_ok([
        "task",
        "add",
        "--actor",
        "overseer",
        "--persona",
        "bob",
        "write the parser",
    ]);
    send(
        &r,
        "alice",
        "bob",
        "Parser plan",
        "Use **pulldown-cmark**.\n\n- one\n- two\n",
        &["--needs-response"],
    );
    send(&r, "bob", "alice", "Status", "Working on it.", &[]);
    r
}

#[test]
fn pages_load_with_the_seeded_data_in_a_browser() {
    let r = seeded();
    let server = Server::start(&r, &["--as", "overseer"]);
    let mut b = Browser::start();
    b.goto(&server.url);
    let text = b.text();
    assert!(text.contains("alice") && text.contains("bob"), "{text}");
    assert!(
        text.contains("write the parser"),
        "the current task: {text}"
    );
    assert_eq!(
        b.eval("document.querySelector('tr[data-persona=bob] td.unread').textContent"),
        json!("1")
    );
    b.screenshot("fleet");

    b.goto(&format!("http://{}/mail/bob", server.addr));
    assert!(b.text().contains("Parser plan"));
    assert_eq!(
        b.eval("document.querySelectorAll('form.send').length"),
        json!(1),
        "--as shows the send form"
    );
    b.screenshot("mailbox");

    b.eval("document.querySelector('a.subject').click()");
    b.wait_for("document.querySelector('article.message')");
    assert_eq!(
        b.eval("document.querySelector('.body strong').textContent"),
        json!("pulldown-cmark")
    );
    b.screenshot("thread");
}

#[test]
fn json_api_serves_the_cli_shapes() {
    let r = seeded();
    let server = Server::start(&r, &[]);
    let get = |path: &str, accept: &str| server.get_as(path, accept);
    let api = get("/api/mail/bob", "*/*");
    assert_eq!(api.status, 200, "{}", api.text());
    assert!(api.head.contains("content-type: application/json"));
    let cli: Value =
        serde_json::from_str(&r.jules_ok(["mail", "inbox", "--persona", "bob", "--json"])).unwrap();
    assert_eq!(api.json()["messages"], cli["messages"]);
    // The same page by content negotiation.
    assert_eq!(
        get("/mail/bob", "application/json").json()["messages"],
        cli["messages"]
    );
    let fleet = get("/api/fleet", "*/*").json();
    assert_eq!(fleet["version"], 1);
    let bob = fleet["personas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["persona"] == "bob")
        .unwrap()
        .clone();
    assert_eq!(
        (bob["unread"].clone(), bob["needs_response"].clone()),
        (json!(1), json!(1))
    );
    let sprint: Value = serde_json::from_str(&r.jules_ok(["sprint", "status", "--json"])).unwrap();
    assert_eq!(fleet["sprint"]["tasks"], sprint["tasks"]);
    let id = cli["messages"][0]["id"].as_str().unwrap();
    let thread = get(&format!("/api/message/{}", &id[..12]), "*/*").json();
    assert_eq!(
        thread["messages"][0]["body"],
        "Use **pulldown-cmark**.\n\n- one\n- two\n"
    );
}

#[test]
fn requests_without_token_foreign_host_or_csrf_are_refused() {
    let r = seeded();
    let server = Server::start(&r, &["--as", "overseer"]);
    let a = server.addr.as_str();
    let port = a.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    assert_eq!(http(a, "GET", "/", &[], "").status, 401, "no token");
    assert_eq!(
        http(a, "GET", "/?token=0000", &[], "").status,
        401,
        "a wrong token"
    );
    let first = http(
        a,
        "GET",
        &format!("/mail/bob?token={}", server.token),
        &[],
        "",
    );
    assert_eq!(first.status, 200);
    assert!(
        first
            .head
            .contains(&format!("set-cookie: jules_web_{port}=")),
        "{}",
        first.head
    );
    assert!(first
        .head
        .contains("content-security-policy: default-src 'none'; script-src 'self'"));
    assert!(first.text().contains("name=\"csrf\""));
    let rebound = format!("evil.example:{port}");
    assert_eq!(
        http(
            a,
            "GET",
            "/",
            &[("Host", &rebound), ("Cookie", &cookie)],
            ""
        )
        .status,
        403,
        "foreign Host"
    );
    assert_eq!(
        http(
            a,
            "GET",
            "/",
            &[("Origin", "http://evil.example"), ("Cookie", &cookie)],
            ""
        )
        .status,
        403,
        "foreign Origin"
    );
    let form = [
        ("Cookie", cookie.as_str()),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    let no_csrf = http(a, "POST", "/send", &form, "to=bob&subject=forged&body=x");
    assert_eq!(no_csrf.status, 403, "{}", no_csrf.text());
    let wrong = http(
        a,
        "POST",
        "/send",
        &form,
        "to=bob&subject=forged&body=x&csrf=1234",
    );
    assert_eq!(wrong.status, 403);
    // With the page's CSRF token the same request is a send, recorded like any other.
    let page = http(a, "GET", "/mail/bob", &[("Cookie", &cookie)], "").text();
    let start = page.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    let csrf = &page[start..start + page[start..].find('"').unwrap()];
    let ok = http(
        a,
        "POST",
        "/send",
        &form,
        &format!("to=bob&subject=from+the+web&body=hi&back=/mail/bob&csrf={csrf}"),
    );
    assert_eq!(ok.status, 303, "{}", ok.text());
    let inbox = r.jules_ok(["mail", "inbox", "--persona", "bob"]);
    assert!(
        inbox.contains("from the web") && inbox.contains("overseer"),
        "{inbox}"
    );
    assert!(!inbox.contains("forged"));

    // The browser's own fetch without the CSRF token is refused too, though it carries the cookie.
    let mut b = Browser::start();
    b.goto(&server.url);
    let status = b.eval(
        "fetch('/send', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, \
         body: 'to=bob&subject=forged&body=x'}).then(r => r.status)",
    );
    assert_eq!(status, json!(403));
}

#[test]
fn read_only_shows_no_form_and_refuses_writes() {
    let r = seeded();
    let server = Server::start(&r, &["--as", "overseer", "--read-only"]);
    let mut b = Browser::start();
    b.goto(&server.with_token("/mail/bob"));
    assert!(b.text().contains("Parser plan"));
    // No form that writes (the mailbox's filter is a GET form, which reads).
    assert_eq!(
        b.eval("document.querySelectorAll('form[method=post]').length"),
        json!(0)
    );
    b.eval("document.querySelector('a.subject').click()");
    b.wait_for("document.querySelector('article.message')");
    assert_eq!(b.eval("document.querySelectorAll('form').length"), json!(0));
    let port = server.addr.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    let post = http(
        &server.addr,
        "POST",
        "/send",
        &[("Cookie", &cookie)],
        "to=bob&subject=x&body=y",
    );
    assert_eq!(post.status, 403);
    assert!(post.text().contains("read-only"));
}

#[test]
fn hostile_mail_is_inert() {
    let r = Repo::new();
    // Each payload would set a mark on the DOM if it ran.
    let body = "<script>document.body.dataset.pwned='script'</script>\n\n\
                <img src=x onerror=\"document.body.dataset.pwned='onerror'\">\n\n\
                [click me](javascript:document.body.dataset.pwned='link')\n\n\
                <svg onload=\"document.body.dataset.pwned='svg'\"><script>document.body.dataset.pwned='svg2'</script></svg>\n\n\
                <a href=\"data:text/html,<script>alert(1)</script>\">data</a>\n";
    let subject = "<script>document.body.dataset.pwned='subject'</script> \u{202e}gnp.exe";
    r.write(
        "evil.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
    );
    let id = send(
        &r,
        "mallory",
        "bob",
        subject,
        body,
        &["--attach", "evil.svg"],
    );
    let big = format!(
        "# big\n\n{}END-OF-BODY\n",
        "all work and no play. ".repeat(120 * 1024 / 22)
    );
    let big_id = send(&r, "mallory", "bob", "a huge body", &big, &[]);
    let server = Server::start(&r, &["--as", "overseer"]);
    let mut b = Browser::start();
    b.goto(&server.with_token("/mail/bob"));
    b.goto(&format!("http://{}/message/{id}?persona=bob", server.addr));
    // The click on the javascript: link, and a moment for anything that would run to run.
    b.eval("document.querySelectorAll('.body a').forEach(a => a.click())");
    b.eval("new Promise(r => setTimeout(r, 300))");
    assert_eq!(
        b.eval("document.body.dataset.pwned === undefined"),
        json!(true)
    );
    assert_eq!(b.eval("document.querySelectorAll('main script, main svg, main [onerror], main [onload]').length"), json!(0));
    assert_eq!(b.eval("[...document.querySelectorAll('main a')].filter(a => /^(javascript|data):/i.test(a.getAttribute('href') || '')).length"), json!(0));
    // The subject shows as text, its right-to-left override made visible.
    let shown = b.eval("document.querySelector('h2.subject').textContent");
    assert!(
        shown.as_str().unwrap().contains("<script>")
            && shown.as_str().unwrap().contains("<U+202E>"),
        "{shown}"
    );
    b.screenshot("hostile");

    // Attachments are downloads, never rendered or sniffed.
    let port = server.addr.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    let file = http(
        &server.addr,
        "GET",
        &format!("/message/{id}/file/evil.svg"),
        &[("Cookie", &cookie)],
        "",
    );
    assert_eq!(file.status, 200);
    assert!(
        file.head.contains("content-type: application/octet-stream"),
        "{}",
        file.head
    );
    assert!(file.head.contains("content-disposition: attachment"));
    assert!(file.head.contains("x-content-type-options: nosniff"));

    // A huge body is cut, with a link to the whole text.
    b.goto(&format!(
        "http://{}/message/{big_id}?persona=bob",
        server.addr
    ));
    assert!(!b.text().contains("END-OF-BODY"));
    let raw_link = b.eval("document.querySelector('.truncated a').getAttribute('href')");
    let raw = http(
        &server.addr,
        "GET",
        raw_link.as_str().unwrap(),
        &[("Cookie", &cookie)],
        "",
    );
    assert!(raw.head.contains("content-type: text/plain"));
    assert!(raw.text().contains("END-OF-BODY"));
}

#[test]
fn a_message_synced_from_another_clone_appears_without_a_reload() {
    let origin = Repo::new();
    let remote = origin.bare_sibling();
    origin.git(["remote", "add", "origin", remote.path().to_str().unwrap()]);
    origin.git(["push", "-q", "origin", "main"]);
    origin.jules_ok(["init"]);
    send(&origin, "alice", "bob", "first", "one", &[]);
    origin.jules_ok(["sync"]);
    let other = origin.clone_of(remote.path());
    other.jules_ok(["init"]);
    other.jules_ok(["sync"]);

    let server = Server::start(&origin, &[]);
    let mut b = Browser::start();
    b.goto(&server.with_token("/mail/bob"));
    b.wait_for("document.body.dataset.live === 'open'");
    b.eval("window.__not_reloaded = true");
    assert!(!b.text().contains("second, from the other clone"));

    send(
        &other,
        "carol",
        "bob",
        "second, from the other clone",
        "two",
        &[],
    );
    other.jules_ok(["sync"]);
    origin.git(["fetch", "-q", "origin"]);
    b.wait_for("document.body.innerText.includes('second, from the other clone')");
    assert_eq!(
        b.eval("window.__not_reloaded === true && Number(document.body.dataset.updates) > 0"),
        json!(true)
    );
}

#[test]
fn series_page_shows_rationale_verify_results_and_reviews() {
    let r = Repo::new();
    crate::series::make_series(&r, "parser", &[("a.txt", "alpha\n"), ("b.txt", "beta\n")]);
    r.git(["config", "jules.verify.cmd", "true"]);
    r.jules_ok(["verify"]);
    let buffer = r.jules_ok(["series", "review", "--print"]);
    let edited = buffer.replacen(
        "### Patch [2/2] ###\n",
        "### Patch [2/2] ###\nR: <b>beta</b> needs a test\n",
        1,
    );
    let side = tempfile::tempdir().unwrap();
    let file = side.path().join("review.txt");
    std::fs::write(&file, edited).unwrap();
    r.jules_ok(["series", "review", "--from-file", file.to_str().unwrap()]);

    let server = Server::start(&r, &["--read-only"]);
    let doc = server.get("/api/series").json();
    let patches = doc["series"][0]["patches"].as_array().unwrap().clone();
    assert_eq!(patches.len(), 2);
    assert_eq!(patches[0]["verify"], "pass");
    assert_eq!(patches[0]["rationale"], json!(["because the test says so"]));
    assert_eq!(
        patches[1]["reviews"][0]["reviewer"],
        "Test User <test@example.com>"
    );
    let mut b = Browser::start();
    b.goto(&server.with_token("/series"));
    let text = b.text();
    assert!(
        text.contains("patch 2 touches b.txt")
            && text.contains("Rationale: because the test says so"),
        "{text}"
    );
    assert!(
        text.contains("R: Test User <test@example.com>: <b>beta</b> needs a test"),
        "{text}"
    );
    b.screenshot("series");
}

#[test]
fn weave_page_shows_woven_commits_and_the_conflict_mail() {
    let r = crate::weave::project();
    crate::weave::appendix_a(&r);
    let out = r.jules(["weave"].iter().chain(crate::weave::THREE.iter()));
    assert_eq!(out.status.code(), Some(1), "one input conflicts");
    let server = Server::start(&r, &[]);
    let doc = server.get("/api/weave").json();
    let inputs: Vec<&str> = doc["branches"][0]["woven"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["input"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, ["jules/visionary/docs", "jules/curator/tidy"]);
    assert_eq!(doc["mails"][0]["type"], "conflict");
    assert_eq!(doc["mails"][0]["to"], json!(["refactor"]));
    let mut b = Browser::start();
    b.goto(&server.with_token("/weave"));
    b.eval("document.querySelector('a.subject').click()");
    b.wait_for("document.querySelector('article.message')");
    let text = b.text();
    assert!(
        text.contains("src/x.rs") && text.contains("jules/curator/tidy"),
        "files and counterparts: {text}"
    );
    b.screenshot("weave");
}

/// Issue 44: the weave page found weave's mails by reading every header of the log (0.5 s at 100,000
/// messages); it now reads the mail view's tag index. Same mails as before: the newest 50 whose sender tagged
/// them `weave`, newest first, among hundreds of others, and not those only a reader tagged `weave` or whose
/// tag merely starts with it. (That the index touches only the holders' mailboxes is
/// `mail::view::tests::tagged_mails_are_found_without_reading_every_header`.)
#[test]
fn weave_page_lists_the_same_weave_mails_from_the_tag_index() {
    let r = Repo::new();
    let mut lines = String::new();
    let mut weave = Vec::new();
    for i in 0..400u32 {
        let tags: &[&str] = match i {
            _ if i % 7 == 0 => &["weave"],
            _ if i % 5 == 0 => &["weave-ish", "review"],
            _ => &[],
        };
        let subject = format!("message {i}");
        if tags == ["weave"] {
            weave.push(subject.clone());
        }
        let line = json!({"event_id": format!("s{i}"), "ts": format!("2026-01-28T{:02}:{:02}:{:02}Z", 10 + i / 3600, (i / 60) % 60, i % 60),
            "event_type": "send", "message_id": i + 1, "actor": format!("p{}", i % 10),
            "from_persona": format!("p{}", i % 10), "to_persona": format!("p{}", (i + 3) % 10),
            "subject": subject, "body": "b", "attachments": [], "tags": tags});
        lines.push_str(&format!("{line}\n"));
        if i % 11 == 1 {
            // A reader's own tag is not the sender's: not a weave mail.
            let mark = json!({"event_id": format!("t{i}"), "ts": "2026-01-28T12:00:00Z", "event_type": "tag_add",
                "message_id": i + 1, "actor": format!("p{}", (i + 3) % 10), "tag": "weave"});
            lines.push_str(&format!("{mark}\n"));
        }
    }
    let f = r.path().join("events.jsonl");
    std::fs::write(&f, lines).unwrap();
    r.jules_ok(["mail", "import", f.to_str().unwrap()]);
    let server = Server::start(&r, &[]);
    let doc = server.get("/api/weave").json();
    let got: Vec<&str> = doc["mails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["subject"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = weave.iter().rev().take(50).map(String::as_str).collect();
    assert_eq!(weave.len(), 58, "more weave mails than the page shows");
    assert_eq!(got, expected);
}

/// A weave's report outlives the run and the clone: one applied and one conflicting input woven in one clone,
/// synced, and the other clone's weave page (which has neither the persona branches nor the integration
/// branch, only the logs) names the conflicting file, its author and the counterpart.
#[test]
fn weave_page_shows_the_last_reports_synced_from_another_clone() {
    let weaver = crate::weave::project();
    let remote = weaver.bare_sibling();
    weaver.git(["remote", "add", "origin", remote.path().to_str().unwrap()]);
    weaver.git(["push", "-q", "origin", "main"]);
    weaver.jules_ok(["init"]);
    crate::weave::appendix_a(&weaver);
    let out = weaver.jules(["weave", "jules/curator/tidy", "jules/refactor/rename"]);
    assert_eq!(out.status.code(), Some(1), "one input conflicts");
    // --check writes nothing, so it records nothing either.
    let out = weaver.jules(["weave", "--check", "jules/visionary/docs"]);
    assert_eq!(out.status.code(), Some(0));
    weaver.jules_ok(["sync"]);
    let other = weaver.clone_of(remote.path());
    other.jules_ok(["init"]);
    other.jules_ok(["sync"]);
    assert_eq!(other.rev("refs/heads/jules/refactor/rename"), None);
    assert_eq!(other.rev("refs/heads/jules/integration/weave"), None);

    let server = Server::start(&other, &[]);
    let doc = server.get("/api/weave").json();
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "the --check run is not recorded: {doc}");
    let w = &reports[0];
    assert_eq!(w["actor"], "weaver");
    assert_eq!(
        (
            w["summary"]["applied"].clone(),
            w["summary"]["conflicted"].clone()
        ),
        (json!(1), json!(1))
    );
    let rep = &w["report"];
    assert_eq!(rep["applied"][0]["input"], "jules/curator/tidy");
    let c = &rep["conflicted"][0];
    assert_eq!(
        (c["input"].clone(), c["persona"].clone()),
        (json!("jules/refactor/rename"), json!("refactor"))
    );
    assert_eq!(c["conflicts"][0]["path"], "src/x.rs");
    assert_eq!(
        c["conflicts"][0]["hunks"][0]["counterparts"][0]["persona"],
        "curator"
    );

    let mut b = Browser::start();
    b.goto(&server.with_token("/weave"));
    let conflict = b
        .eval("document.querySelector('.weave-report .conflict').innerText")
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        conflict.contains("src/x.rs")
            && conflict.contains("jules/refactor/rename")
            && conflict.contains("(refactor)")
            && conflict.contains("conflicts with curator's change"),
        "the conflicting file, its author and the counterpart: {conflict}"
    );
    assert_eq!(
        b.eval("document.querySelector('.weave-report tr.status-applied td.persona').textContent"),
        json!("curator")
    );
    b.screenshot("weave-report");
}

/// The fleet page lists each persona's live leases (paths, exclusive or shared, time left, reason), from the
/// lease view, in the page and in `/api/fleet`; a released lease is gone.
/// `git jules ARGS` with the clock at `t0`, which must succeed: its stdout.
fn ok_at(r: &Repo, t0: &str, args: &[&str]) -> String {
    let o = r.jules_at(t0, args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        crate::harness::stderr(&o)
    );
    crate::harness::stdout(&o)
}

/// `persona` acquires a lease with the clock at `t0` (`args`: its paths and flags), which must be held: its id.
fn acquire_at(r: &Repo, t0: &str, persona: &str, args: &[&str]) -> String {
    let mut all = vec!["--json", "lease", "acquire", "--persona", persona];
    all.extend_from_slice(args);
    let v: Value = serde_json::from_str(&ok_at(r, t0, &all)).unwrap();
    assert_eq!(v["held"], true, "{v}");
    v["lease"]["id"].as_str().unwrap().to_owned()
}

#[test]
fn fleet_page_shows_live_leases() {
    let r = seeded();
    const T0: &str = "2030-01-01T10:00:00Z";
    let at = |args: &[&str]| ok_at(&r, T0, args);
    let lease = |persona: &str, args: &[&str]| acquire_at(&r, T0, persona, args);
    lease(
        "bob",
        &[
            "src/parser/",
            "--ttl",
            "2h",
            "--reason",
            "<b>parser</b> rewrite",
        ],
    );
    lease("alice", &["docs/", "--shared", "--ttl", "30m"]);
    let gone = lease("alice", &["tmp/", "--ttl", "1h"]);
    at(&["lease", "release", &gone, "--persona", "alice"]);

    let server = Server::start_at(&r, T0, &[]);
    let fleet = server.get("/api/fleet").json();
    let leases_of = |p: &str| -> Vec<Value> {
        fleet["personas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["persona"] == p)
            .unwrap()["leases"]
            .as_array()
            .unwrap()
            .clone()
    };
    let bob = leases_of("bob");
    assert_eq!(bob.len(), 1, "{bob:?}");
    assert_eq!(
        (
            bob[0]["paths"].clone(),
            bob[0]["exclusive"].clone(),
            bob[0]["reason"].clone(),
            bob[0]["expires_in"].clone()
        ),
        (
            json!(["src/parser/"]),
            json!(true),
            json!("<b>parser</b> rewrite"),
            json!(7200)
        )
    );
    let alice = leases_of("alice");
    assert_eq!(alice.len(), 1, "the released lease is gone: {alice:?}");
    assert_eq!(alice[0]["exclusive"], false);

    let mut b = Browser::start();
    b.goto(&server.url);
    assert_eq!(
        b.eval("document.querySelector('tr[data-persona=bob] td.leases').innerText"),
        json!("src/parser/ (exclusive, 2h 00m left): <b>parser</b> rewrite")
    );
    assert_eq!(
        b.eval("document.querySelector('tr[data-persona=alice] td.leases').innerText"),
        json!("docs/ (shared, 30m 00s left)")
    );
    assert_eq!(
        b.eval("document.querySelectorAll('td.leases b').length"),
        json!(0),
        "a reason is text, never markup"
    );
    b.screenshot("fleet-leases");
}

/// Issue 30 in the web view: the search page and `/api/search` answer with the same call as
/// `git jules mail search` (the same hits, in the same order), and a query that does not parse is shown on the
/// page with its position, with status 400.
#[test]
fn the_search_box_answers_as_mail_search_does() {
    let r = seeded();
    let server = Server::start(&r, &[]);
    let get = |path: &str, accept: &str| server.get_as(path, accept);
    let cli: Value =
        serde_json::from_str(&r.jules_ok(["mail", "search", "parser", "--json"])).unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        !ids(&cli).is_empty(),
        "the seeded mail speaks of a parser: {cli}"
    );
    let api = get("/api/search?q=parser", "*/*");
    assert_eq!(api.status, 200, "{}", api.text());
    assert_eq!(ids(&api.json()["results"]), ids(&cli));
    let page = get("/search?q=parser", "text/html");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.text().matches("class=\"hit\"").count(),
        ids(&cli).len(),
        "{}",
        page.text()
    );
    // Refused input answers 400 (issue 40), the page still showing the box and the error.
    let bad = get("/search?q=%22unclosed", "text/html");
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert!(bad.text().contains("class=\"error\""), "{}", bad.text());
}

/// Signed events in the web view: the mailbox marks unverified mail and the API carries the CLI's
/// `signature` (issue 28). Issue 44: the marks tell forgeries from legacy mail. Mail from a persona with no
/// key (written before keys existed) is marked quietly "unsigned", never "not verified"; mail in the name of
/// a persona that has a key but without its signature is "likely forged", in red (`sig-forged`).
#[test]
fn the_mailbox_marks_mail_whose_signature_is_not_verified() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("alice");
    let line = r.jules_ok(["keys", "new", "alice", "--out", key.to_str().unwrap()]);
    r.write(".jules/allowed_signers", &line);
    r.commit_all("trust alice");
    r.git([
        "config",
        "jules.persona.alice.signingKey",
        key.to_str().unwrap(),
    ]);
    send(&r, "alice", "bob", "signed one", "x", &[]);
    send(&r, "mallory", "bob", "legacy one", "x", &[]);
    r.git(["config", "--unset", "jules.persona.alice.signingKey"]);
    send(&r, "alice", "bob", "forged one", "x", &[]);
    let server = Server::start(&r, &[]);
    let get = |path: &str, accept: &str| server.get_as(path, accept);
    let page = get("/mail/bob", "text/html").text();
    let row = |subject: &str| -> String {
        page.split("<tr")
            .find(|row| row.contains(subject))
            .unwrap()
            .to_owned()
    };
    let forged = row("forged one");
    assert!(
        forged.contains("sig-forged") && forged.contains("likely forged"),
        "{forged}"
    );
    let legacy = row("legacy one");
    assert!(
        legacy.contains("sig-quiet") && !legacy.contains("not verified"),
        "{legacy}"
    );
    assert!(
        !row("signed one").contains("class=\"sig "),
        "verified mail carries no mark"
    );
    assert_eq!(page.matches("sig-forged").count(), 1, "{page}");
    let cli: Value =
        serde_json::from_str(&r.jules_ok(["mail", "inbox", "--persona", "bob", "--json"])).unwrap();
    let api = get("/api/mail/bob", "*/*").json();
    assert_eq!(api["messages"], cli["messages"]);
    let states: Vec<&str> = api["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["signature"]["state"].as_str().unwrap())
        .collect();
    assert!(
        states.contains(&"verified") && states.contains(&"unsigned"),
        "{states:?}"
    );
}

/// The CSRF token of a page the server rendered.
fn csrf_of(server: &Server) -> String {
    let page = server.get("/mail/bob").text();
    let start =
        page.find("name=\"csrf\" value=\"").expect("a form") + "name=\"csrf\" value=\"".len();
    page[start..start + page[start..].find('"').unwrap()].to_owned()
}

/// `POST path` with the token's cookie and a form body.
fn post(server: &Server, path: &str, body: &str) -> Resp {
    let port = server.addr.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    http(
        &server.addr,
        "POST",
        path,
        &[
            ("Cookie", &cookie),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        body,
    )
}

/// Issue 40, finding 8: `web --as reviewers` sent mail as a group, `web --as nobodyy` started without a
/// word, and `POST /send to=nobodyy` succeeded silently. One policy, the CLI's: a group is refused (exit
/// 2), an unknown name is warned about on stderr and on every page (refused under --strict), and a send
/// to an unknown name says so on the page it answers with.
#[test]
fn web_as_follows_the_clis_persona_policy_and_shows_its_warnings() {
    let r = seeded();
    let group =
        crate::harness::output_within(&mut r.jules_cmd(["web", "--as", "reviewers"]), PATIENCE);
    assert_eq!(
        group.status.code(),
        Some(2),
        "a group cannot send as itself"
    );
    assert!(
        crate::harness::stderr(&group).contains("reviewers is a group"),
        "{}",
        crate::harness::stderr(&group)
    );
    let strict = crate::harness::output_within(
        &mut r.jules_cmd(["--strict", "web", "--as", "nobodyy"]),
        PATIENCE,
    );
    assert_eq!(strict.status.code(), Some(2), "--strict refuses it");

    // Not strict: the server starts, warns on stderr as the CLI does, and every page shows it.
    let mut cmd = r.jules_cmd(["web", "--as", "nobodyy"]);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = Group(cmd.spawn().unwrap());
    let mut err = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        "warning: unknown persona nobodyy; the personas are listed in .jules/schedules.toml"
    );
    drop(child);
    let server = Server::start(&r, &["--as", "nobodyy"]);
    let page = server.get("/").text();
    assert!(
        page.contains("warning: unknown persona nobodyy"),
        "the page shows it: {page}"
    );

    // A send to an unknown name goes out, and the answer says so instead of a silent redirect.
    let server = Server::start(&r, &["--as", "overseer"]);
    // The mailbox pages apply the same policy as `mail inbox --persona`: a group has none, an unknown name
    // is shown with its warning (the JSON as `mail inbox --json` prints it).
    assert_eq!(server.get("/mail/reviewers").status, 400);
    let typo = server.get("/mail/bobb").text();
    assert!(
        typo.contains("warning: unknown persona bobb; did you mean bob?"),
        "{typo}"
    );
    let cli: Value =
        serde_json::from_str(&r.jules_ok(["mail", "inbox", "--persona", "bobb", "--json"]))
            .unwrap();
    assert_eq!(
        server.get("/api/mail/bobb").json()["warnings"],
        cli["warnings"]
    );
    let csrf = csrf_of(&server);
    let sent = post(
        &server,
        "/send",
        &format!("to=bobb&subject=typo&body=x&back=/mail/bob&csrf={csrf}"),
    );
    assert_eq!(sent.status, 200, "{}", sent.text());
    assert!(
        sent.text()
            .contains("warning: unknown persona bobb; did you mean bob?"),
        "{}",
        sent.text()
    );
    let port = server.addr.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    let api = http(
        &server.addr,
        "POST",
        "/api/send",
        &[
            ("Cookie", &cookie),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &format!("to=bobb&subject=typo&body=x&csrf={csrf}"),
    );
    assert_eq!(
        api.json()["warnings"],
        json!([{"name": "bobb", "suggestion": "bob"}]),
        "{}",
        api.text()
    );
}

/// Issue 40, finding 8: `POST /mark … back=/\evil.example/` redirected off the site (a browser reads `/\`
/// as `//`). Redirects go only to paths of this server; anything else falls back to the fleet page.
#[test]
fn redirects_after_a_write_stay_on_the_site() {
    let r = seeded();
    let id = send(&r, "alice", "overseer", "for the overseer", "x", &[]);
    let server = Server::start(&r, &["--as", "overseer"]);
    let csrf = csrf_of(&server);
    for (back, expected) in [
        ("/mail/bob", "/mail/bob"),
        ("/%5Cevil.example/", "/"),
        ("//evil.example/", "/"),
        ("/%09/evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("javascript:alert(1)", "/"),
        ("/%0d%0aSet-Cookie:x=1", "/"),
    ] {
        let resp = post(
            &server,
            "/mark",
            &format!("id={id}&action=read&back={back}&csrf={csrf}"),
        );
        assert_eq!(resp.status, 303, "{back}: {}", resp.text());
        let location = resp
            .head
            .lines()
            .find_map(|l| l.strip_prefix("location: "))
            .unwrap_or_default();
        assert_eq!(location, expected, "back={back}");
    }
}

/// Issue 40, finding 8: the thread page offered mark buttons on every message, though only a recipient
/// may mark one (the others answered 400). Forms appear only where the action is allowed.
#[test]
fn mark_buttons_only_on_mail_the_persona_received() {
    let r = seeded();
    let mine = send(&r, "alice", "overseer", "for the overseer", "x", &[]);
    let other = send(&r, "alice", "bob", "for bob", "x", &[]);
    let server = Server::start(&r, &["--as", "overseer"]);
    let forms = |id: &str| {
        let page = server.get(&format!("/message/{id}")).text();
        page.matches("action=\"/mark\"").count()
    };
    assert_eq!(forms(&mine), 1, "overseer received it");
    assert_eq!(forms(&other), 0, "overseer cannot mark bob's mail");
    let csrf = csrf_of(&server);
    let refused = post(
        &server,
        "/mark",
        &format!("id={other}&action=read&csrf={csrf}"),
    );
    assert_eq!(refused.status, 400, "the server refuses it all the same");
}

/// Issue 40, finding 1: `GET /search?q=` with 3,000 nested brackets overflowed a request thread's stack and
/// aborted `git jules web`. A request that used to kill the server (or to panic its thread: a non-ASCII
/// `back` made the redirect's header panic) answers alone, with 400, and the server goes on serving.
#[test]
fn requests_that_used_to_kill_the_server_answer_alone() {
    let r = seeded();
    let server = Server::start(&r, &["--as", "overseer"]);
    let nested = format!("{}x{}", "%28".repeat(3_000), "%29".repeat(3_000));
    for path in ["/search", "/api/search"] {
        let bad = server.get_as(&format!("{path}?q={nested}"), "text/html");
        assert_eq!(bad.status, 400, "{path}: {}", bad.text());
        assert!(
            bad.text().contains("brackets nested deeper than 64"),
            "{path}: {}",
            bad.text()
        );
    }
    // The page still shows the box and the error; the API says the same in JSON.
    let api = server.get(&format!("/api/search?q={nested}")).json();
    assert!(
        api["unavailable"]
            .as_str()
            .is_some_and(|e| e.contains("at character 65")),
        "{api}"
    );
    let port = server.addr.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    let page = server.get("/mail/bob").text();
    let start = page.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    let csrf = &page[start..start + page[start..].find('"').unwrap()];
    let odd = http(
        &server.addr,
        "POST",
        "/send",
        &[
            ("Cookie", &cookie),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &format!("to=bob&subject=odd+back&body=x&back=/mail/b%C3%B6b%0D%0AX:y&csrf={csrf}"),
    );
    assert!(odd.status == 303 || odd.status == 400, "{}", odd.text());
    assert!(
        !odd.head.contains("\nx:"),
        "no header injection: {}",
        odd.head
    );
    // The server is still there, and answers a normal request.
    let fleet = server.get("/api/fleet");
    assert_eq!(fleet.status, 200, "{}", fleet.text());
    let ok = server.get("/api/search?q=parser");
    assert_eq!(ok.status, 200, "{}", ok.text());
    // The deepest query allowed runs the whole way (parse, index query, scoring) on a request thread.
    let deepest = format!("{}parser{}", "%28".repeat(64), "%29".repeat(64));
    let ok = server.get(&format!("/api/search?q={deepest}"));
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(
        ok.json()["results"]["total"],
        server.get("/api/search?q=parser").json()["results"]["total"]
    );
}

/// Issue 40, finding 1: what the server reads of a request is bounded: an over-long address (414), too
/// many or too large headers (431) and a form body over 1 MiB (413) are refused before any page runs, and
/// the server goes on serving.
#[test]
fn request_size_bounds_are_refused_with_their_status() {
    let r = seeded();
    let server = Server::start(&r, &["--as", "overseer"]);
    let port = server.addr.rsplit(':').next().unwrap();
    let cookie = format!("jules_web_{port}={}", server.token);
    let long = server.get(&format!("/api/search?q={}", "a".repeat(70_000)));
    assert_eq!(long.status, 414, "{}", long.text());
    let many: Vec<(String, String)> = (0..200).map(|i| (format!("X-H{i}"), "v".into())).collect();
    let mut headers: Vec<(&str, &str)> =
        many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    headers.push(("Cookie", &cookie));
    assert_eq!(
        http(&server.addr, "GET", "/api/fleet", &headers, "").status,
        431
    );
    let big = "v".repeat(20_000);
    assert_eq!(
        http(
            &server.addr,
            "GET",
            "/api/fleet",
            &[("Cookie", &cookie), ("X-Big", &big)],
            ""
        )
        .status,
        431
    );
    let body = format!("to=bob&subject=x&body={}", "b".repeat(2 << 20));
    let post = http(
        &server.addr,
        "POST",
        "/send",
        &[
            ("Cookie", &cookie),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &body,
    );
    assert_eq!(post.status, 413, "{}", post.text());
    assert_eq!(server.get("/api/fleet").status, 200);
}

/// A summary, file lines and cover letter that would run, mark the DOM or reorder text if shown as markup:
/// a script, an event handler, a right-to-left override and a control character.
const HOSTILE_SUMMARY: &str =
    "<script>document.body.dataset.pwned='cover'</script> \u{202e}fdp.exe \u{7}bell";

/// alice's series `feat`: v1 (two patches), v2 (the first changed, the second dropped, a third added),
/// each with hostile lines, and a weave of v2 recorded.
fn versioned_series() -> Repo {
    let r = Repo::new();
    r.jules_ok(["series", "start", "feat"]);
    // Enough unchanged lines that the changed first patch pairs (`!`) rather than drops and adds.
    let keep: String = (1..=20).map(|i| format!("keep {i}\n")).collect();
    r.write(
        "a.txt",
        &format!("<script>document.body.dataset.pwned='rd'</script>\n{keep}"),
    );
    r.jules_ok([
        "series",
        "commit",
        "--summary",
        HOSTILE_SUMMARY,
        "--rationale",
        "r",
    ]);
    r.write("b.txt", "b\n");
    r.jules_ok(["series", "commit", "--summary", "Add b", "--rationale", "r"]);
    r.jules_ok(["series", "version", "--persona", "alice"]);
    r.git(["reset", "-q", "--hard", "HEAD~2"]);
    r.write(
        "a.txt",
        &format!("<img src=x onerror=\"document.body.dataset.pwned='rd2'\">\u{202e}\n{keep}"),
    );
    r.jules_ok([
        "series",
        "commit",
        "--summary",
        HOSTILE_SUMMARY,
        "--rationale",
        "r",
    ]);
    r.write("c.txt", "c\n");
    r.jules_ok(["series", "commit", "--summary", "Add c", "--rationale", "r"]);
    r.jules_ok(["series", "version", "--persona", "alice"]);
    // A review of v2's second patch, written about that version.
    let buffer = r.jules_ok(["series", "review", "--version", "alice/feat@v2", "--print"]);
    let edited = buffer.replacen(
        "### Patch [2/2] ###\n",
        "### Patch [2/2] ###\nR: <b>c</b> needs a test\u{202e}\n",
        1,
    );
    let side = tempfile::tempdir().unwrap();
    let file = side.path().join("review.txt");
    std::fs::write(&file, edited).unwrap();
    r.jules_ok([
        "series",
        "review",
        "--version",
        "alice/feat@v2",
        "--from-file",
        file.to_str().unwrap(),
    ]);
    r.git(["checkout", "-q", "main"]);
    let woven = r.jules(["weave", "alice/feat@v2"]);
    assert!(woven.status.success(), "{}", crate::harness::stderr(&woven));
    r
}

/// Issue 44: the series page lists every persona's recorded series (`series list --all`) on a clone with
/// no staging branch of its own (it said "No staging series"), a series' page shows each version with its
/// cover letter, patches and the weave that took it, and the range-diff page pairs like `series
/// range-diff` (`!`, `<`, `>`), with the inner diff's lines classed as git colours them. The hostile cover
/// letter, summary and diff lines stay text: nothing runs, nothing marks the DOM, the override is shown as
/// `<U+202E>`.
#[test]
fn series_versions_and_range_diff_pages_show_every_persona_and_stay_inert() {
    let r = versioned_series();
    // The staging branch is gone, as on the orchestrator's clone: only the version refs remain.
    r.git(["branch", "-q", "-D", "jules/staging/feat"]);
    let server = Server::start(&r, &["--read-only"]);
    let doc = server.get("/api/series").json();
    assert_eq!(
        doc["versions"]["series"][0]["series"], "alice/feat",
        "{doc}"
    );
    assert_eq!(doc["versions"]["series"][0]["versions"], 2);

    let cli: Value = serde_json::from_str(&r.jules_ok([
        "--json",
        "series",
        "range-diff",
        "alice/feat",
        "v1",
        "v2",
    ]))
    .unwrap();
    let api = server
        .get("/api/series/alice/feat/range-diff?old=v1&new=v2")
        .json();
    let signs = |entries: &Value| -> Vec<String> {
        entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["status"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(signs(&api["entries"]), signs(&cli["entries"]));
    assert_eq!(signs(&api["entries"]), ["changed", "dropped", "added"]);

    let mut b = Browser::start();
    b.goto(&server.with_token("/series"));
    assert!(
        b.text().contains("alice/feat"),
        "every persona's series: {}",
        b.text()
    );
    b.eval("document.querySelector('table.series-versions a').click()");
    b.wait_for("document.querySelector('section.version')");
    let text = b.text();
    assert!(text.contains("v2") && text.contains("v1"), "{text}");
    assert_eq!(
        b.eval("document.querySelectorAll('section.version').length"),
        json!(2)
    );
    assert!(
        b.eval("document.querySelector('#v2 .weaves').innerText")
            .as_str()
            .unwrap()
            .contains("applied"),
        "the weave of v2 is linked: {text}"
    );
    // The review comment is under v2's patch 2, naming the version, as text.
    let review = b.eval("document.querySelector('#v2 p.review').textContent");
    assert!(
        review.as_str().unwrap().contains("on alice/feat@v2")
            && review
                .as_str()
                .unwrap()
                .contains("<b>c</b> needs a test<U+202E>"),
        "{review}"
    );
    assert_eq!(
        b.eval("document.querySelectorAll('#v1 p.review, main p.review b').length"),
        json!(0)
    );
    b.screenshots("series-versions");
    let cover = b.eval("document.querySelector('#v2 pre.cover').textContent");
    let cover = cover.as_str().unwrap();
    assert!(
        cover.contains("<script>") && cover.contains("<U+202E>") && cover.contains("^G"),
        "{cover}"
    );

    b.goto(&format!(
        "http://{}/series/alice/feat/range-diff?old=v1&new=v2",
        server.addr
    ));
    let headers = b.eval(
        "[...document.querySelectorAll('.rd-header')].map(h => h.textContent.split(/\\s+/)[2])",
    );
    assert_eq!(headers, json!(["!", "<", ">"]));
    assert!(
        b.eval("document.querySelectorAll('.rd-diff .rd-add-add, .rd-diff .rd-del-del, .rd-diff .rd-add-del, .rd-diff .rd-del-add').length")
            .as_u64()
            .unwrap()
            >= 2,
        "the inner diff's changed lines are classed"
    );
    let diff = b.eval("document.querySelector('.rd-diff').textContent");
    let diff = diff.as_str().unwrap();
    assert!(
        diff.contains("<img src=x onerror=") && diff.contains("<U+202E>"),
        "{diff}"
    );
    b.eval("new Promise(r => setTimeout(r, 300))");
    assert_eq!(
        b.eval("document.body.dataset.pwned === undefined && document.querySelectorAll('main script, main img, main [onerror]').length === 0"),
        json!(true)
    );
    assert_eq!(b.eval(CONTRAST_FAILURES), json!([]));
    b.screenshots("range-diff");
}

/// Issue 44: the leases page shows live, expiring and recently ended leases with holder, paths, reason,
/// task and time left, filtered by the query's `persona` and `path` (the server filters: no script needed);
/// a hostile reason (script, bidi override, control character) is text.
#[test]
fn leases_page_shows_live_expiring_and_ended_leases_filtered_and_inert() {
    let r = Repo::new();
    const T0: &str = "2030-01-01T10:00:00Z";
    let at = |args: &[&str]| ok_at(&r, T0, args);
    let lease = |persona: &str, args: &[&str]| acquire_at(&r, T0, persona, args);
    let hostile = "<script>document.body.dataset.pwned='reason'</script>\u{202e}gnp.exe\u{1b}[31m";
    lease(
        "bob",
        &[
            "src/parser/",
            "--ttl",
            "2h",
            "--reason",
            hostile,
            "--task",
            "T-7",
        ],
    );
    lease("alice", &["docs/", "--shared", "--ttl", "10m"]);
    let gone = lease("carol", &["tmp/", "--ttl", "1h", "--reason", "scratch"]);
    at(&["lease", "release", &gone, "--persona", "carol"]);

    let server = Server::start_at(&r, T0, &[]);
    let doc = server.get("/api/leases").json();
    let personas = |list: &str| -> Vec<String> {
        doc[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["persona"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(personas("live"), ["bob"], "{doc}");
    assert_eq!(personas("expiring"), ["alice"], "{doc}");
    assert_eq!(personas("ended"), ["carol"], "{doc}");
    assert_eq!(doc["live"][0]["task"], "T-7");
    assert_eq!(doc["live"][0]["expires_in"], 7200);

    let only_docs = server.get("/api/leases?path=docs/x.md").json();
    assert_eq!(
        (
            only_docs["live"].as_array().unwrap().len(),
            only_docs["expiring"][0]["persona"].clone(),
            only_docs["ended"].as_array().unwrap().len()
        ),
        (0, json!("alice"), 0)
    );
    let only_carol = server.get("/api/leases?persona=carol").json();
    assert_eq!(only_carol["ended"][0]["persona"], "carol");
    assert_eq!(only_carol["live"].as_array().unwrap().len(), 0);

    let mut b = Browser::start();
    b.goto(&server.with_token("/leases"));
    let reason = b.eval("document.querySelector('table.live td.reason').textContent");
    let reason = reason.as_str().unwrap();
    assert!(
        reason.contains("<script>") && reason.contains("<U+202E>") && reason.contains("^["),
        "{reason}"
    );
    assert_eq!(
        b.eval("document.querySelector('table.live td.left').innerText"),
        json!("2h 00m left")
    );
    assert!(b.text().contains("T-7"));
    // The filter form works without script: a plain GET with the fields.
    b.eval("document.querySelector('form.filter input[name=persona]').value = 'carol'; document.querySelector('form.filter').submit()");
    b.wait_for("location.search.includes('persona=carol') && document.readyState === 'complete'");
    assert_eq!(
        b.eval("[...document.querySelectorAll('tr.lease')].map(t => t.dataset.persona)"),
        json!(["carol"])
    );
    b.eval("new Promise(r => setTimeout(r, 300))");
    assert_eq!(
        b.eval("document.body.dataset.pwned === undefined"),
        json!(true)
    );
    b.goto(&format!("http://{}/leases", server.addr));
    assert_eq!(b.eval(CONTRAST_FAILURES), json!([]));
    b.screenshots("leases");
}

/// Issue 44: with `--fetch 1s` the served clone fetches its remote by itself: a message another clone sent
/// and synced appears on the open page with nobody running `git fetch` or `sync` in the served clone, and
/// the page says when the last fetch was and that it succeeded.
#[test]
fn with_fetch_a_message_from_another_clone_appears_without_anyone_fetching() {
    let origin = Repo::new();
    let remote = origin.bare_sibling();
    origin.git(["remote", "add", "origin", remote.path().to_str().unwrap()]);
    origin.git(["push", "-q", "origin", "main"]);
    origin.jules_ok(["init"]);
    send(&origin, "alice", "bob", "first", "one", &[]);
    origin.jules_ok(["sync"]);
    let other = origin.clone_of(remote.path());
    other.jules_ok(["init"]);
    other.jules_ok(["sync"]);

    let server = Server::start(&origin, &["--fetch", "1s"]);
    let mut b = Browser::start();
    b.goto(&server.with_token("/mail/bob"));
    b.wait_for("document.body.dataset.live === 'open'");
    b.eval("window.__not_reloaded = true");
    assert!(!b.text().contains("second, from the other clone"));
    send(
        &other,
        "carol",
        "bob",
        "second, from the other clone",
        "two",
        &[],
    );
    other.jules_ok(["sync"]);
    // Nothing runs in `origin`: the server's own fetch brings the message.
    b.wait_for("document.body.innerText.includes('second, from the other clone')");
    assert_eq!(b.eval("window.__not_reloaded === true"), json!(true));
    let status = b.eval("document.getElementById('fetch-status').innerText");
    let status = status.as_str().unwrap();
    assert!(
        status.contains("Fetching origin every 1s") && status.contains("up to date"),
        "{status}"
    );
    assert_eq!(
        b.eval("document.querySelector('#fetch-status time').getAttribute('datetime').length > 0"),
        json!(true)
    );
}

/// Issue 44: a fetch that fails is shown on every page, with git's reason and the backed-off next try.
#[test]
fn with_fetch_a_failing_remote_is_shown_with_its_reason() {
    let r = seeded();
    // No remote, or an interval it cannot read: refused at start (exit 2), not reported on every page.
    for (args, says) in [
        (["web", "--fetch", "1s"], "no remote configured"),
        (["web", "--fetch", "0s"], "longer than nothing"),
        (["web", "--fetch", "soon"], "cannot read the interval"),
    ] {
        let out = r.jules(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            crate::harness::stderr(&out).contains(says),
            "{args:?}: {}",
            crate::harness::stderr(&out)
        );
    }
    let gone = tempfile::tempdir().unwrap();
    let missing = gone.path().join("no-such-remote.git");
    r.git(["remote", "add", "origin", missing.to_str().unwrap()]);
    let server = Server::start(&r, &["--fetch", "1s"]);
    let deadline = Instant::now() + PATIENCE;
    let page = loop {
        let page = server.get("/series").text();
        if page.contains("fetch-failed") {
            break page;
        }
        assert!(Instant::now() < deadline, "no failure shown: {page}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(page.contains("failed</strong> ("), "{page}");
    assert!(page.contains("origin"), "{page}");
    assert!(
        page.contains("next try in 2s") || page.contains("in a row"),
        "{page}"
    );
}

/// Issue 44, at 30 personas: the fleet's rows are sorted and filtered by query parameter (links and a GET
/// form: no script needed), times are relative with the exact time in `<time datetime>` and `title`, a
/// signature-health column marks the persona whose name was used without its key (red) apart from legacy
/// unsigned mail (quiet); the mailbox is paged by 50 with its counts kept, its filter works with and without
/// script, and a 200-character unbroken subject wraps instead of pushing the table off a phone-width screen.
#[test]
fn thirty_personas_sort_filter_page_and_fit_a_phone() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("p01");
    let line = r.jules_ok(["keys", "new", "p01", "--out", key.to_str().unwrap()]);
    r.write(".jules/allowed_signers", &line);
    r.commit_all("trust p01");
    r.git([
        "config",
        "jules.persona.p01.signingKey",
        key.to_str().unwrap(),
    ]);
    let personas: Vec<String> = (1..=30).map(|i| format!("p{i:02}")).collect();
    for p in &personas {
        send(&r, p, "bob", &format!("hello from {p}"), "x", &[]);
    }
    // p07 sends most; p01's name is used once without its key (a likely forgery).
    for i in 0..90 {
        send(&r, "p07", "bob", &format!("report {i}"), "x", &[]);
    }
    let long = "x".repeat(200);
    send(&r, "p02", "bob", &long, "x", &[]);
    r.git(["config", "--unset", "jules.persona.p01.signingKey"]);
    send(&r, "p01", "bob", "forged in p01's name", "x", &[]);

    let server = Server::start(&r, &[]);
    let mut b = Browser::start();
    b.goto(&server.with_token("/"));
    let rows =
        "[...document.querySelectorAll('table.personas tbody tr')].map(t => t.dataset.persona)";
    assert_eq!(
        b.eval(&format!("{rows}.length")),
        json!(31),
        "30 senders and bob"
    );
    // Sorting is a link: sent, largest first.
    b.eval("document.querySelector('thead a[href*=\"sort=sent\"]').click()");
    b.wait_for("location.search.includes('sort=sent')");
    b.wait_for("document.readyState === 'complete'");
    assert_eq!(b.eval(&format!("{rows}[0]")), json!("p07"));
    assert_eq!(
        b.eval("document.querySelector('th[aria-sort]').getAttribute('aria-sort')"),
        json!("descending")
    );
    // Filtering is a GET form; the sort is kept.
    b.goto(&format!(
        "http://{}/?q=p1&sort=persona&dir=asc",
        server.addr
    ));
    assert_eq!(
        b.eval(rows),
        json!(["p10", "p11", "p12", "p13", "p14", "p15", "p16", "p17", "p18", "p19"])
    );
    assert!(b.text().contains("personas 1–10 of 10 (filtered from 31)"));
    b.goto(&format!("http://{}/", server.addr));
    // Relative times, the exact one in datetime and on hover.
    let time = b.eval("(t => [t.getAttribute('datetime'), t.title, t.textContent])(document.querySelector('tr[data-persona=p03] time'))");
    assert!(
        time[0].as_str().unwrap().starts_with("20") && time[0] == time[1],
        "{time}"
    );
    assert!(
        time[2].as_str().unwrap().ends_with("ago") || time[2] == "just now",
        "{time}"
    );
    // Signature health: p01 has one likely forgery (red), p03's legacy unsigned mail is quiet.
    assert_eq!(
        b.eval("document.querySelector('tr[data-persona=p01] td.health .sig-forged').textContent"),
        json!("1 likely forged")
    );
    assert_eq!(
        b.eval("getComputedStyle(document.querySelector('tr[data-persona=p01] .sig-forged')).backgroundColor"),
        json!("rgb(179, 0, 27)")
    );
    assert_eq!(
        b.eval("document.querySelector('tr[data-persona=p03] td.health').textContent.trim()"),
        json!("1 unsigned")
    );
    // The column is remembered for the log's tips only: a new forgery is counted on the next view.
    send(&r, "p01", "bob", "forged again", "x", &[]);
    b.goto(&format!("http://{}/", server.addr));
    assert_eq!(
        b.eval("document.querySelector('tr[data-persona=p01] td.health .sig-forged').textContent"),
        json!("2 likely forged")
    );
    // Accessible: every text meets AA contrast, and the keyboard reaches the page: the first Tab stop
    // skips to it, and Tab goes on to the sort links.
    assert_eq!(b.eval(CONTRAST_FAILURES), json!([]));
    // The check itself finds a pale grey on white (2.3:1).
    b.eval("(p => { p.id = 'pale'; p.style.color = '#aaa'; p.textContent = 'pale'; document.querySelector('main').append(p); })(document.createElement('p'))");
    assert_eq!(b.eval(&format!("{CONTRAST_FAILURES}.length")), json!(1));
    b.eval("document.getElementById('pale').remove()");
    b.key("Tab", 9);
    assert_eq!(b.eval("document.activeElement.className"), json!("skip"));
    let mut tabs = 0;
    while b.eval("!!document.activeElement.closest('thead')") != json!(true) {
        b.key("Tab", 9);
        tabs += 1;
        assert!(tabs < 20, "the sort links are reachable with Tab");
    }
    b.screenshots("fleet-30");

    // The mailbox: 123 messages, 50 a page, the counts kept.
    b.goto(&format!("http://{}/mail/bob", server.addr));
    let count = "document.querySelectorAll('table.messages tbody tr').length";
    assert_eq!(b.eval(count), json!(50));
    assert!(b.text().contains("messages 1–50 of 123"), "{}", b.text());
    b.eval("document.querySelector('a[rel=next]').click()");
    b.wait_for("location.search.includes('page=2') && document.readyState === 'complete'");
    assert!(b.text().contains("messages 51–100 of 123"));
    // The filter box hides the page's rows as one types (script), and filters the whole folder on submit.
    b.goto(&format!("http://{}/mail/bob", server.addr));
    b.eval("(i => { i.value = 'forged in'; i.dispatchEvent(new Event('input', {bubbles: true})); })(document.querySelector('input[data-filter]'))");
    assert_eq!(
        b.eval("[...document.querySelectorAll('table.messages tbody tr')].filter(t => !t.hidden).length"),
        json!(1)
    );
    b.eval("document.querySelector('form.filter').submit()");
    b.wait_for("location.search.includes('q=forged') && document.readyState === 'complete'");
    assert_eq!(b.eval(count), json!(1));
    // The long subject wraps: at phone width nothing is wider than the screen but the table's own box.
    b.goto(&format!("http://{}/mail/bob?q=xxxxxxxxxx", server.addr));
    b.width(400, 860);
    assert_eq!(
        b.eval("document.documentElement.scrollWidth <= window.innerWidth"),
        json!(true)
    );
    assert!(
        b.eval("document.querySelector('td.subject-cell').getBoundingClientRect().width")
            .as_f64()
            .unwrap()
            < 400.0,
        "the 200-character subject breaks"
    );
    b.width(1200, 900);
    b.goto(&format!("http://{}/mail/bob", server.addr));
    assert_eq!(b.eval(CONTRAST_FAILURES), json!([]));
    b.screenshots("mailbox");
    b.eval("document.querySelector('a.subject').click()");
    b.wait_for("document.querySelector('article.message')");
    b.screenshots("thread");
}
