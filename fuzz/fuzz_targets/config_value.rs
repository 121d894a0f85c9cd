//! Any bytes as a configuration value: the duration, time, boolean, integer and path readers return, and
//! agree with each other (`git_jules::fuzzing::config_value`, which `bench/fuzz.sh` drives on stable).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| git_jules::fuzzing::config_value(data));
