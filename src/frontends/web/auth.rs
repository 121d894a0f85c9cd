//! Who may talk to the server: the access token (query `?token=`, then a cookie), the `Host` and `Origin`
//! checks against DNS rebinding, and the CSRF token of state-changing requests.
//!
//! The threat: any web page the operator visits can make the browser send requests to 127.0.0.1, and a
//! rebinding DNS name can even make them same-origin. The token keeps out whoever did not get the printed
//! URL; the `Host` check refuses requests addressed to another name than the one we serve; the `Origin`
//! check and the CSRF token (a second secret only our own pages carry) refuse cross-site writes.

use std::net::SocketAddr;

use git_jules::kit::error::{Error, Result};

/// The server's secrets, drawn once at start from the OS generator.
#[derive(Debug, Clone)]
pub struct Secrets {
    pub token: String,
    pub csrf: String,
}

impl Secrets {
    pub fn new() -> Result<Secrets> {
        Ok(Secrets {
            token: random_hex()?,
            csrf: random_hex()?,
        })
    }
}

fn random_hex() -> Result<String> {
    let mut b = [0u8; 24];
    getrandom::fill(&mut b).map_err(|e| Error::wrap("no random bytes", e))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Constant-time comparison: how much of a guess matched must not show in the response time.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The `Host` values this server answers to: the loopback names with its port, and the address it
/// listens on.
pub fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut v = vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    let own = addr.to_string();
    if !v.contains(&own) {
        v.push(own);
    }
    v
}

/// The cookie's name: per port, since browsers share cookies between the ports of one host.
pub fn cookie_name(addr: SocketAddr) -> String {
    format!("jules_web_{}", addr.port())
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

/// Why a request was refused, before any page code ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No token, or a wrong one.
    Token,
    /// `Host` is not one of ours (DNS rebinding).
    Host,
    /// `Origin` is another site's.
    Origin,
}

impl Refusal {
    pub fn message(self) -> &'static str {
        match self {
            Refusal::Token => {
                "a valid access token is required: open the URL git jules web printed"
            }
            Refusal::Host => "unexpected Host header",
            Refusal::Origin => "cross-origin request refused",
        }
    }
}

/// What the checks concluded about a request.
#[derive(Debug, PartialEq, Eq)]
pub struct Admitted {
    /// The token came in the query: set the cookie so later requests need not carry it.
    pub set_cookie: bool,
}

/// Check a request's `Host`, `Origin` and token (query first, then cookie).
pub fn admit(
    addr: SocketAddr,
    secrets: &Secrets,
    host: Option<&str>,
    origin: Option<&str>,
    query_token: Option<&str>,
    cookie_header: Option<&str>,
) -> std::result::Result<Admitted, Refusal> {
    let hosts = allowed_hosts(addr);
    if !host.is_some_and(|h| hosts.iter().any(|a| a.eq_ignore_ascii_case(h))) {
        return Err(Refusal::Host);
    }
    if let Some(o) = origin {
        // `null` (sandboxed frames, some redirects) is never ours.
        if !hosts
            .iter()
            .any(|a| o.eq_ignore_ascii_case(&format!("http://{a}")))
        {
            return Err(Refusal::Origin);
        }
    }
    if let Some(t) = query_token {
        return if same(t, &secrets.token) {
            Ok(Admitted { set_cookie: true })
        } else {
            Err(Refusal::Token)
        };
    }
    let from_cookie = cookie_header.and_then(|c| cookie(c, &cookie_name(addr)));
    match from_cookie {
        Some(t) if same(t, &secrets.token) => Ok(Admitted { set_cookie: false }),
        _ => Err(Refusal::Token),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        Secrets {
            token: "t0k".into(),
            csrf: "c5f".into(),
        }
    }

    #[test]
    fn host_origin_and_token() {
        let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let s = secrets();
        let ok = |host, origin, q, c| admit(addr, &s, host, origin, q, c);
        assert_eq!(
            ok(Some("127.0.0.1:8080"), None, Some("t0k"), None),
            Ok(Admitted { set_cookie: true })
        );
        assert_eq!(
            ok(
                Some("localhost:8080"),
                None,
                None,
                Some("a=b; jules_web_8080=t0k")
            ),
            Ok(Admitted { set_cookie: false })
        );
        assert_eq!(
            ok(Some("evil.example:8080"), None, Some("t0k"), None),
            Err(Refusal::Host)
        );
        assert_eq!(ok(None, None, Some("t0k"), None), Err(Refusal::Host));
        assert_eq!(
            ok(
                Some("127.0.0.1:8080"),
                Some("http://evil.example"),
                Some("t0k"),
                None
            ),
            Err(Refusal::Origin)
        );
        assert_eq!(
            ok(Some("127.0.0.1:8080"), Some("null"), Some("t0k"), None),
            Err(Refusal::Origin)
        );
        assert_eq!(
            ok(Some("127.0.0.1:8080"), None, Some("t0x"), None),
            Err(Refusal::Token)
        );
        assert_eq!(
            ok(
                Some("127.0.0.1:8080"),
                None,
                None,
                Some("jules_web_9090=t0k")
            ),
            Err(Refusal::Token)
        );
        assert_eq!(
            ok(Some("127.0.0.1:8080"), None, None, None),
            Err(Refusal::Token)
        );
    }
}
