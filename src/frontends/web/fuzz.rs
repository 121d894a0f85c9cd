//! The fuzz target of the request path (`git jules web`): any bytes as an HTTP request — `METHOD TARGET`,
//! header lines, an empty line, the body — through admission, routing and rendering over a real scratch
//! repository, with the properties every answer must keep. Driven by the same seeded driver as the library's
//! targets (`src/kit/mutation.rs`, compiled here from its source: the library builds it for its own tests
//! only): `cargo test` runs a bounded pass, `bench/fuzz.sh web_request [N]` a long one, and the cargo-fuzz
//! target `fuzz/fuzz_targets/web_request.rs` compiles this file too.

use std::sync::atomic::{AtomicU64, Ordering};

#[path = "../../kit/mutation.rs"]
mod mutation;

pub use mutation::Stats;

/// A server over a scratch repository for [`web_request`]: its token, CSRF token and `Host` stand in
/// for the placeholders of the inputs, so that mutations reach the pages behind admission.
pub struct Web {
    _dir: tempfile::TempDir,
    probe: super::Probe,
    /// A message on the scratch log, for `{M}`.
    message: String,
}

impl Web {
    /// A scratch repository with two messages between alice and bob (one with an attachment), so that
    /// the mailbox, thread, attachment and search pages have something to show.
    pub fn new() -> git_jules::Result<Web> {
        use git_jules::capabilities::mail::api;
        let dir =
            tempfile::tempdir().map_err(|e| git_jules::Error::io("a scratch directory", e))?;
        gix::init(dir.path()).map_err(|e| git_jules::Error::wrap("a scratch repository", e))?;
        let ws = git_jules::capabilities::workspace::Workspace::open(dir.path())?;
        let first = api::send(
            &ws,
            api::SendInput {
                from: "alice".into(),
                to: vec!["bob".into()],
                subject: Some("Parser plan".into()),
                compose: api::Compose {
                    body: "The **parser** needs a rewrite; see <b>this</b>.".into(),
                    tags: vec!["plan".into()],
                    ..Default::default()
                },
                ..Default::default()
            },
        )?;
        api::send(
            &ws,
            api::SendInput {
                from: "bob".into(),
                to: vec!["alice".into(), "overseer".into()],
                subject: Some("Re: Parser plan".into()),
                reply_to: Some(first.id.clone()),
                compose: api::Compose {
                    body: "Agreed: flaky test first.".into(),
                    ..Default::default()
                },
                ..Default::default()
            },
        )?;
        let probe = super::Probe::new(dir.path().to_path_buf(), Some("overseer".into()))?;
        Ok(Web {
            _dir: dir,
            probe,
            message: first.id,
        })
    }
}

/// The request `data` stands for, answered: the target's length, the number of headers, the answer.
fn request_of(web: &Web, data: &[u8]) -> Option<(usize, usize, super::Answer)> {
    let text = String::from_utf8_lossy(data)
        .replace("{T}", web.probe.token())
        .replace("{C}", web.probe.csrf())
        .replace("{H}", &web.probe.host())
        .replace("{M}", &web.message);
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut lines = head.split('\n');
    let first = lines.next().unwrap_or_default();
    let (method, url) = first.split_once(' ').unwrap_or((first, "/"));
    let mut headers: Vec<(&[u8], &[u8])> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().as_bytes(), v.trim().as_bytes()))
        .collect();
    // Admitted unless the input says otherwise: most mutations should reach the pages.
    let host = web.probe.host();
    let cookie = format!("jules_web_1={}", web.probe.token());
    let has = |name: &[u8]| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let (no_host, no_cookie) = (!has(b"host"), !has(b"cookie") && !url.contains("token="));
    if no_host {
        headers.push((b"Host", host.as_bytes()));
    }
    if no_cookie {
        headers.push((b"Cookie", cookie.as_bytes()));
    }
    let answer = web.probe.request(method, url, &headers, body.as_bytes())?;
    Some((url.len(), headers.len(), answer))
}

/// One HTTP request as bytes: `METHOD TARGET` on the first line, header lines (`name: value`) to an
/// empty line, then the body. `{T}`, `{C}` and `{H}` stand for the token, the CSRF token and the host.
/// Properties: no panic (a panic inside the request path would be answered 500 by the server; here it is
/// a crash, so a bug cannot hide behind the guard); a refused input never answers 2xx; every header of
/// the answer is printable ASCII.
pub fn web_request(web: &Web, data: &[u8]) {
    let Some((url_len, header_count, answer)) = request_of(web, data) else {
        return;
    };
    if let Some(n) = STATUSES.get(usize::from(answer.status)) {
        n.fetch_add(1, Ordering::Relaxed);
    }
    assert!((200..600).contains(&answer.status), "{}", answer.status);
    assert!(
        !(answer.status == 500
            && String::from_utf8_lossy(&answer.body).contains("this request panicked")),
        "the request path panicked (answered 500 by the guard)"
    );
    if url_len > super::MAX_URL_BYTES || header_count > super::MAX_HEADERS {
        assert!(answer.status >= 400, "an unbounded request was served");
    }
    for h in &answer.headers {
        assert!(h
            .value
            .as_str()
            .bytes()
            .all(|b| b == b' ' || b.is_ascii_graphic()));
    }
}

/// Run the target on its seeds, then on `execs` mutations; `seed` makes the run reproducible.
pub fn run(execs: u64, seed: u64) -> git_jules::Result<Stats> {
    let web = Web::new()?;
    Ok(mutation::drive(
        "web_request",
        SEEDS,
        TOKENS,
        execs,
        seed,
        &mut |data| web_request(&web, data),
    ))
}

/// How many `web_request` answers had each status: how far the inputs got.
pub static STATUSES: [AtomicU64; 600] = [const { AtomicU64::new(0) }; 600];

/// Starting points.
const SEEDS: &[&[u8]] = &[
    b"GET /api/fleet\nHost: {H}\n\n",
    b"GET /search?q=%28a+OR+b%29+-c&persona=bob\nHost: {H}\nAccept: text/html\n\n",
    b"GET /api/search?q=%22x&from=a&tag=t&since=2h\nHost: {H}\n\n",
    b"GET /mail/bob?folder=all\nHost: {H}\nOrigin: http://{H}\n\n",
    b"GET /message/{M}\nHost: {H}\n\n",
    b"GET /message/{M}/raw\nHost: {H}\nAccept: application/json\n\n",
    b"GET /message/0123abc/file/a%2Fb\nHost: {H}\n\n",
    b"GET /static/app.js\nHost: {H}\nCookie: jules_web_1={T}\n\n",
    b"POST /mark\nHost: {H}\n\nid={M}&action=tag&tag=x&back=/mail/b%C3%B6b&csrf={C}",
    b"POST /send\nHost: {H}\n\nto=&subject=x&body=y&back=//evil&csrf={C}",
    b"GET /events\nHost: {H}\n\n",
    b"DELETE /api/x%00y?token=%ZZ\nHost: evil\n\n",
    b"GET /series/alice/feat/range-diff?old=v1&new=v99999999999&rebase=1\nHost: {H}\n\n",
    b"GET /api/series/..%2F/x\nHost: {H}\n\n",
    b"GET /leases?persona=bob&path=src%2F**%2F%5B\nHost: {H}\n\n",
    b"GET /?sort=unread&dir=desc&q=%E2%80%AE&page=99999999999999999999999\nHost: {H}\n\n",
    b"GET /mail/bob?folder=sent&sort=subject&page=0&q=x\nHost: {H}\n\n",
];

/// Pieces that steer the target into its branches.
const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\n\n",
    b"?",
    b"&",
    b"=",
    b"%",
    b"%2F",
    b"%00",
    b"%C3",
    b"+",
    b"/api",
    b"/search",
    b"/series/",
    b"/range-diff",
    b"/leases",
    b"sort=",
    b"page=",
    b"/mail/",
    b"/message/",
    b"/raw",
    b"token={T}",
    b"csrf={C}",
    b"Host: {H}\n",
    b"Accept: application/json\n",
    b"Cookie: jules_web_1={T}\n",
    b"Origin: http://x\n",
    b"back=/",
    b"q=",
    b"%28%28%28%28",
    b"%29",
    b"POST ",
    b"GET ",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A bounded pass: a crash names its input (escaped) and the panic's message.
    fn pass(execs: u64) {
        let stats = run(execs, 0x005e_ed0f_f022).unwrap();
        if let Some(crashed) = stats.crashed() {
            panic!("{crashed}");
        }
        assert!(stats.execs > execs);
    }

    #[test]
    fn web_request_bounded_pass() {
        pass(1_000);
    }

    /// The web seeds get past admission into the pages (the placeholders work), and the bounds hold.
    #[test]
    fn web_seeds_reach_the_pages() {
        let web = Web::new().unwrap();
        let status = |data: &[u8]| request_of(&web, data).unwrap().2.status;
        let seeds = SEEDS;
        assert_eq!(status(seeds[0]), 200, "GET /api/fleet");
        assert_eq!(status(seeds[1]), 200, "a search");
        assert_eq!(status(seeds[2]), 400, "an unparsable search query");
        assert_eq!(status(seeds[3]), 200, "a mailbox");
        assert_eq!(status(seeds[4]), 200, "a thread");
        assert_eq!(status(seeds[11]), 403, "a foreign Host");
        assert_eq!(status(seeds[12]), 404, "a range-diff of no series");
        assert_eq!(status(seeds[13]), 400, "a series name the CLI refuses");
        assert_eq!(
            status(seeds[15]),
            200,
            "a sorted, filtered fleet past its last page"
        );
        assert_eq!(
            status(seeds[16]),
            200,
            "a sorted, filtered mailbox at page 0"
        );
    }

    /// `bench/fuzz.sh web_request [N]`: `JULES_FUZZ_EXECS` (default 1,000,000), `JULES_FUZZ_SEED`; prints one
    /// line of figures and the answers' statuses.
    #[test]
    #[ignore = "run by bench/fuzz.sh"]
    fn drive() {
        let env = |k: &str| std::env::var(k).ok();
        let execs = env("JULES_FUZZ_EXECS").map_or(1_000_000, |v| v.parse().expect("a number"));
        let seed =
            env("JULES_FUZZ_SEED").map_or(0x005e_ed0f_f022, |v| v.parse().expect("a number"));
        let stats = run(execs, seed).unwrap();
        println!("{stats} seed {seed}");
        let answers: Vec<String> = (0..600)
            .map(|i| (i, STATUSES[i].load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .map(|(i, n)| format!("{i}: {n}"))
            .collect();
        println!("fuzz web_request answers: {}", answers.join(", "));
        if let Some(crashed) = stats.crashed() {
            println!("first crash: {crashed}");
            panic!("{} crashes", stats.crashes);
        }
    }
}
