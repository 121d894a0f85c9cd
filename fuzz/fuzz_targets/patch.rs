//! Any bytes as a diff: parsing returns, and applying what was parsed to a small file never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(files) = git_jules::capabilities::weave::patch::parse(data) {
        for f in files {
            let _ = git_jules::capabilities::weave::apply::apply(b"a\nb\nc\n", &f.hunks);
        }
    }
});
