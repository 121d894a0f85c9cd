//! Any bytes as an HTTP request (`METHOD TARGET`, header lines, an empty line, the body) through the
//! request path of `git jules web` over a scratch repository. The web view is a frontend in the binary, so
//! this target compiles its module from source (`src/frontends/web/`, whose `fuzz` module holds the target
//! that `bench/fuzz.sh web_request` drives on stable).
#![no_main]
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/frontends/web/mod.rs"]
mod web;

static WEB: OnceLock<web::fuzz::Web> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let w = WEB.get_or_init(|| web::fuzz::Web::new().expect("a scratch repository"));
    web::fuzz::web_request(w, data)
});
