//! Any bytes as a patch file (mbox, mail or plain diff): `read` returns, never panics or hangs.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for opts in [
        git_jules::capabilities::weave::mbox::ReadOptions { scissors: false, strip: None },
        git_jules::capabilities::weave::mbox::ReadOptions { scissors: true, strip: Some(2) },
    ] {
        let _ = git_jules::capabilities::weave::mbox::read_with(data, opts);
    }
});
