//! Any bytes as a log commit's message: decoding returns, and whatever it accepts hashes to the id it
//! claims and (strictly read) is the canonical form of the event it decoded to.
#![no_main]
use git_jules::store::eventlog::event::{decode_message, Decoded, EventId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for strict in [false, true] {
        if let Ok(Decoded::Event { id, event, .. }) = decode_message(data, strict) {
            let json = data.split(|b| *b == b'\n').nth(2).expect("a JSON line");
            assert_eq!(id, EventId::of(json));
            if strict {
                assert_eq!(event.canonical().expect("re-encodes"), json);
            }
        }
    }
});
