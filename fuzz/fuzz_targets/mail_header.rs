//! Any bytes as a header value (RFC 2047 words, charsets): decoding returns, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = git_jules::capabilities::weave::mbox::decode_words(&s);
    // The same bytes as the header block of a mail.
    let mut mail = b"From: ".to_vec();
    mail.extend_from_slice(data);
    mail.extend_from_slice(b"\n\n---\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
    let _ = git_jules::capabilities::weave::mbox::read(&mail);
});
