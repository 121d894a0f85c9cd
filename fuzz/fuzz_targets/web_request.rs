//! Any bytes as an HTTP request (`METHOD TARGET`, header lines, an empty line, the body) through the
//! request path of `git jules web` over a scratch repository (`git_jules::fuzzing::web_request`, which
//! `bench/fuzz.sh` drives on stable).
#![no_main]
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

static WEB: OnceLock<git_jules::fuzzing::Web> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let web = WEB.get_or_init(|| git_jules::fuzzing::Web::new().expect("a scratch repository"));
    git_jules::fuzzing::web_request(web, data)
});
