//! Seeded byte mutations for the fuzz passes (`crate::fuzzing`'s stable driver, `weave::fuzz_tests`): one
//! reproducible generator and one mutator, so every pass explores inputs the same way. Built for tests and
//! cargo-fuzz only.

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
