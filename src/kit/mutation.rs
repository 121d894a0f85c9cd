//! Seeded byte mutations for the fuzz passes (`crate::fuzzing`'s targets, the web view's request path in
//! the binary, `weave::fuzz_tests`): one reproducible generator, one mutator and one driver, so every pass
//! explores inputs the same way. Built for tests and cargo-fuzz only. Self-contained (no `crate::` path), so
//! that the binary's tests and the fuzz crate compile this same file for the web target.

use std::time::{Duration, Instant};

/// What a run of [`drive`] did.
#[derive(Debug, Clone)]
pub struct Stats {
    pub target: String,
    pub execs: u64,
    pub crashes: u64,
    pub elapsed: Duration,
    /// The first input that crashed, and the panic's message.
    pub first_crash: Option<(Vec<u8>, String)>,
}

impl Stats {
    /// The crashes, when there were any: how many, and the first input (escaped) with its panic's message.
    pub fn crashed(&self) -> Option<String> {
        let (input, message) = self.first_crash.as_ref()?;
        Some(format!(
            "{}: {} of {} inputs crashed; the first, {:?}: {message}",
            self.target,
            self.crashes,
            self.execs,
            String::from_utf8_lossy(input)
        ))
    }
}

/// One line of figures: `fuzz TARGET: execs N crashes N time S (R execs/s)`, what `bench/fuzz.sh` prints.
impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz {}: execs {} crashes {} time {:.1}s ({:.0} execs/s)",
            self.target,
            self.execs,
            self.crashes,
            self.elapsed.as_secs_f64(),
            self.execs as f64 / self.elapsed.as_secs_f64().max(1e-9)
        )
    }
}

/// Run `exec` on the seeds, then on `execs` mutations (each of a seed or of an earlier input that was kept),
/// catching panics; `seed` makes the run reproducible.
pub fn drive(
    target: &str,
    seeds: &[&[u8]],
    tokens: &[&[u8]],
    execs: u64,
    seed: u64,
    exec: &mut dyn FnMut(&[u8]),
) -> Stats {
    let mut rng = Rng(seed | 1);
    let mut pool: Vec<Vec<u8>> = seeds.iter().map(|s| s.to_vec()).collect();
    let mut stats = Stats {
        target: target.to_owned(),
        execs: 0,
        crashes: 0,
        elapsed: Duration::ZERO,
        first_crash: None,
    };
    let started = Instant::now();
    let total = seeds.len() as u64 + execs;
    for i in 0..total {
        let data = match seeds.get(i as usize) {
            Some(s) => s.to_vec(),
            None => {
                let base = &pool[rng.below(pool.len())];
                mutate(&mut rng, seeds, tokens, base)
            }
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exec(&data)));
        stats.execs += 1;
        match outcome {
            Ok(()) => {
                // A small, fixed-size pool of recent inputs lets mutations stack up.
                if pool.len() < 256 {
                    pool.push(data);
                } else if rng.below(8) == 0 {
                    let slot = seeds.len() + rng.below(256 - seeds.len());
                    pool[slot] = data;
                }
            }
            Err(panic) => {
                stats.crashes += 1;
                if stats.first_crash.is_none() {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    stats.first_crash = Some((data, message));
                }
            }
        }
    }
    stats.elapsed = started.elapsed();
    stats
}

/// xorshift64*: a reproducible stream without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// `base` with one to eight random edits: a flipped bit, a token inserted (twice as likely), a range
/// removed, a cut, a slice of another seed, a random byte; at most 64 KiB.
pub fn mutate(rng: &mut Rng, seeds: &[&[u8]], tokens: &[&[u8]], base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 | 2 => {
                let t = tokens[rng.below(tokens.len())];
                v.splice(at..at, t.iter().copied());
            }
            3 if !v.is_empty() => {
                let end = (at + rng.below(16)).min(v.len());
                v.drain(at.min(end)..end);
            }
            4 => v.truncate(at),
            5 => {
                let other = seeds[rng.below(seeds.len())];
                let from = rng.below(other.len());
                let to = (from + rng.below(64)).min(other.len());
                v.splice(at..at, other[from..to].iter().copied());
            }
            _ => {
                let b = (rng.next_u64() & 0xff) as u8;
                v.insert(at, b);
            }
        }
    }
    // Keep inputs from growing without end across generations.
    v.truncate(1 << 16);
    v
}
