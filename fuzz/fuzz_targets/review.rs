//! Any text as a review buffer: parsing returns, and an accepted buffer keeps every `R:` comment.
#![no_main]
use git_jules::capabilities::series::review::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(parsed) = parse(text, 3, &[1, 2]) {
        let comments: usize = parsed.iter().map(|(_, c)| c.len()).sum();
        assert_eq!(comments, text.lines().filter(|l| l.starts_with("R:")).count());
    }
});
