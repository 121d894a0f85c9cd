//! Fuzz targets for outside input, and a driver that runs them on stable Rust.
//!
//! The targets are plain functions of bytes: [`search_query`] (the search query language, through to the
//! index query), [`web_request`] (the request path of `git jules web`: request target, headers, form body,
//! through admission, routing and rendering, over a real repository) and [`config_value`] (the pure
//! readers of configuration values: durations, times, booleans, paths). A target panics when a property
//! breaks; returning is a pass. The cargo-fuzz targets in `fuzz/` call the same functions under
//! libFuzzer (`cargo fuzz run -s none search_query` works on stable Rust: without a sanitizer cargo-fuzz
//! passes rustc no unstable option). [`run`] drives them without that separate, instrumented build, with
//! seeded mutations (the style of `weave::fuzz_tests`): `bench/fuzz.sh TARGET [N]` runs N executions and
//! prints the executions and crashes, and `cargo test` runs a bounded pass of each (docs/testing.md,
//! *Fuzzing*).
//!
//! Not part of the interface: only the driver, its tests and the fuzz crate use it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::mutation::{mutate, Rng};

/// The targets [`run`] knows.
pub const TARGETS: &[&str] = &["search_query", "web_request", "config_value"];

/// What a run did.
#[derive(Debug, Clone)]
pub struct Stats {
    pub target: String,
    pub execs: u64,
    pub crashes: u64,
    pub elapsed: Duration,
    /// The first input that crashed, and the panic's message.
    pub first_crash: Option<(Vec<u8>, String)>,
}

/// The search query parser and its conversion to an index query. Properties: no panic; an accepted
/// query is within the size bound; every error quotes a bounded excerpt of the input (issue 40).
pub fn search_query(data: &[u8]) {
    let q = String::from_utf8_lossy(data);
    match crate::mail::search::compile_only(&q) {
        Ok(()) => assert!(q.len() <= crate::mail::search::query::MAX_QUERY_BYTES),
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.chars().count() <= 400,
                "an error of {} characters",
                message.chars().count()
            );
        }
    }
}

/// The pure readers of configuration values. Properties: no panic; a duration that reads reads back
/// the same from its seconds; a lease TTL is exactly a positive duration; a time reads the same in
/// either direction when it is absolute.
pub fn config_value(data: &[u8]) {
    use crate::mail::when;
    use crate::settings::{parse_duration, MAX_DURATION};
    let s = String::from_utf8_lossy(data);
    let d = parse_duration(&s).ok();
    if let Some(n) = d {
        assert!((0..=MAX_DURATION).contains(&n), "{n} out of bounds");
        assert_eq!(parse_duration(&format!("{n}s")).ok(), Some(n));
    }
    let ttl = crate::lease::parse_ttl(&s).ok();
    assert_eq!(
        ttl,
        d.filter(|&n| n > 0),
        "parse_ttl is parse_duration, positive"
    );
    let now = chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("a time");
    let past = when::parse_when(&s, now, when::Direction::Past);
    let future = when::parse_when(&s, now, when::Direction::Future);
    if parse_duration(s.trim()).is_err() && s.trim() != "now" {
        assert_eq!(
            past.is_ok(),
            future.is_ok(),
            "an absolute time reads either way"
        );
    }
    let _ = when::parse_stored(&s);
    let b = gix::bstr::BStr::new(data);
    let _ = gix::config::Boolean::try_from(b);
    let _ = gix::config::Integer::try_from(b);
    let path = gix::config::Path::from(std::borrow::Cow::Borrowed(b));
    let _ = path.interpolate(gix::config::path::interpolate::Context {
        git_install_dir: Some(std::path::Path::new("/usr")),
        home_dir: Some(std::path::Path::new("/home/fuzz")),
        // No user database look-ups: `~name` is an error, as without one.
        home_for_user: None,
    });
}

/// A server over a scratch repository for [`web_request`]: its token, CSRF token and `Host` stand in
/// for the placeholders of the inputs, so that mutations reach the pages behind admission.
pub struct Web {
    _dir: tempfile::TempDir,
    probe: crate::web::Probe,
    /// A message on the scratch log, for `{M}`.
    message: String,
}

impl Web {
    /// A scratch repository with two messages between alice and bob (one with an attachment), so that
    /// the mailbox, thread, attachment and search pages have something to show.
    pub fn new() -> Result<Web> {
        use crate::mail::api;
        let dir = tempfile::tempdir().map_err(|e| Error::io("a scratch directory", e))?;
        gix::init(dir.path()).map_err(|e| Error::wrap("a scratch repository", e))?;
        let ws = crate::workspace::Workspace::open(dir.path())?;
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
        let probe = crate::web::Probe::new(dir.path().to_path_buf(), Some("overseer".into()))?;
        Ok(Web {
            _dir: dir,
            probe,
            message: first.id,
        })
    }
}

/// The request `data` stands for, answered: the target's length, the number of headers, the answer.
fn request_of(web: &Web, data: &[u8]) -> Option<(usize, usize, crate::web::Answer)> {
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
    if url_len > crate::web::MAX_URL_BYTES || header_count > crate::web::MAX_HEADERS {
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

const UNICODE_QUERY: &[u8] = "ελληνικά 日本語 🦀 foo-bar*".as_bytes();

/// How many `web_request` answers had each status: how far the inputs got.
pub static STATUSES: [AtomicU64; 600] = [const { AtomicU64::new(0) }; 600];

/// Starting points, per target.
fn seeds(target: &str) -> &'static [&'static [u8]] {
    match target {
        "search_query" => &[
            b"flaky test OR quokka -parser",
            b"s:\"flaky test\" f:quokka refact* (x OR y)",
            b"-(a OR -\"b c\") t:review* b:x AND y",
            b"((((a OR b) c) -d) \"e f g\")",
            UNICODE_QUERY,
        ],
        "config_value" => &[
            b"90s",
            b"15m",
            b"2h",
            b"3d",
            b"1w",
            b"0s",
            b"now",
            b"2026-01-28T15:30:00Z",
            b"2026-01-28",
            b"true",
            b"no",
            b"on",
            b"1",
            b"~/x",
            b"%(prefix)/share",
            b"~user/y",
            b"-12",
            b"1k",
            b"99999999999999999999w",
            b"1000000000000000s",
        ],
        "web_request" => &[
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
        ],
        _ => &[],
    }
}

/// Pieces that steer each target into its branches.
fn tokens(target: &str) -> &'static [&'static [u8]] {
    match target {
        "search_query" => &[
            b"(",
            b")",
            b"\"",
            b"*",
            b"-",
            b" OR ",
            b" AND ",
            b"s:",
            b"f:",
            b"t:",
            b"b:",
            b"subject:",
            b" ",
            b"\t",
            b"\xc3\xa9",
            b"\xf0\x9f\xa6\x80",
            b"((((((((((",
            b"))))))))))",
        ],
        "config_value" => &[
            b"s",
            b"m",
            b"h",
            b"d",
            b"w",
            b"-",
            b"+",
            b"9223372036854775807",
            b"T",
            b"Z",
            b":",
            b"~",
            b"/",
            b"%(prefix)",
            b"yes",
            b"off",
            b"\xc3\xa9",
            b" ",
        ],
        "web_request" => &[
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
        ],
        _ => &[],
    }
}

/// Run `target` on its seeds, then on `execs` mutations (each of a seed or of an earlier input that was
/// kept), catching panics; `seed` makes the run reproducible.
pub fn run(target: &str, execs: u64, seed: u64) -> Result<Stats> {
    if !TARGETS.contains(&target) {
        return Err(Error::usage(format!(
            "no fuzz target {target:?}: one of {}",
            TARGETS.join(", ")
        )));
    }
    let web = if target == "web_request" {
        Some(Web::new()?)
    } else {
        None
    };
    let exec = |data: &[u8]| match target {
        "search_query" => search_query(data),
        "config_value" => config_value(data),
        _ => web_request(web.as_ref().expect("made above"), data),
    };
    let (seeds, tokens) = (seeds(target), tokens(target));
    let mut rng = Rng(seed | 1);
    let mut pool: Vec<Vec<u8>> = seeds.iter().map(|s| s.to_vec()).collect();
    let mut stats = Stats {
        target: target.to_owned(),
        execs: 0,
        crashes: 0,
        elapsed: Duration::ZERO,
        first_crash: None,
    };
    let started = Instant::now();
    let total = seeds.len() as u64 + execs;
    for i in 0..total {
        let data = match seeds.get(i as usize) {
            Some(s) => s.to_vec(),
            None => {
                let base = &pool[rng.below(pool.len())];
                mutate(&mut rng, seeds, tokens, base)
            }
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exec(&data)));
        stats.execs += 1;
        match outcome {
            Ok(()) => {
                // A small, fixed-size pool of recent inputs lets mutations stack up.
                if pool.len() < 256 {
                    pool.push(data);
                } else if rng.below(8) == 0 {
                    let slot = seeds.len() + rng.below(256 - seeds.len());
                    pool[slot] = data;
                }
            }
            Err(panic) => {
                stats.crashes += 1;
                if stats.first_crash.is_none() {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    stats.first_crash = Some((data, message));
                }
            }
        }
    }
    stats.elapsed = started.elapsed();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bounded pass: a crash names its input (escaped) and the panic's message.
    fn pass(target: &str, execs: u64) {
        let stats = run(target, execs, 0x005e_ed0f_f022).unwrap();
        if let Some((input, message)) = &stats.first_crash {
            panic!(
                "{target}: {} of {} inputs crashed; the first, {:?}: {message}",
                stats.crashes,
                stats.execs,
                String::from_utf8_lossy(input)
            );
        }
        assert!(stats.execs > execs);
    }

    #[test]
    fn search_query_bounded_pass() {
        pass("search_query", 4_000);
    }

    #[test]
    fn config_value_bounded_pass() {
        pass("config_value", 4_000);
    }

    #[test]
    fn web_request_bounded_pass() {
        pass("web_request", 1_000);
    }

    /// The web seeds get past admission into the pages (the placeholders work), and the bounds hold.
    #[test]
    fn web_seeds_reach_the_pages() {
        let web = Web::new().unwrap();
        let status = |data: &[u8]| request_of(&web, data).unwrap().2.status;
        let seeds = seeds("web_request");
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

    #[test]
    fn an_unknown_target_is_refused() {
        assert!(run("nope", 1, 1).is_err());
    }

    /// `bench/fuzz.sh TARGET [N]`: `JULES_FUZZ_TARGET`, `JULES_FUZZ_EXECS` (default 1,000,000),
    /// `JULES_FUZZ_SEED`; prints one line of figures.
    #[test]
    #[ignore = "run by bench/fuzz.sh"]
    fn drive() {
        let env = |k: &str| std::env::var(k).ok();
        let target = env("JULES_FUZZ_TARGET").expect("JULES_FUZZ_TARGET");
        let execs = env("JULES_FUZZ_EXECS").map_or(1_000_000, |v| v.parse().expect("a number"));
        let seed =
            env("JULES_FUZZ_SEED").map_or(0x005e_ed0f_f022, |v| v.parse().expect("a number"));
        let stats = run(&target, execs, seed).unwrap();
        println!(
            "fuzz {}: execs {} crashes {} time {:.1}s ({:.0} execs/s) seed {seed}",
            stats.target,
            stats.execs,
            stats.crashes,
            stats.elapsed.as_secs_f64(),
            stats.execs as f64 / stats.elapsed.as_secs_f64().max(1e-9)
        );
        if target == "web_request" {
            let answers: Vec<String> = (0..600)
                .map(|i| (i, STATUSES[i].load(Ordering::Relaxed)))
                .filter(|(_, n)| *n > 0)
                .map(|(i, n)| format!("{i}: {n}"))
                .collect();
            println!("fuzz web_request answers: {}", answers.join(", "));
        }
        if let Some((input, message)) = &stats.first_crash {
            println!(
                "first crash: {message}\ninput: {:?}",
                String::from_utf8_lossy(input)
            );
            panic!("{} crashes", stats.crashes);
        }
    }
}
