//! Any bytes as a search query: parsing and the conversion to an index query return, and errors quote a
//! bounded excerpt of the input (`git_jules::fuzzing::search_query`, which `bench/fuzz.sh` drives on stable).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| git_jules::fuzzing::search_query(data));
