//! Hashing for sets of skill ids and artifact kinds.
//!
//! Offers and check-ups classify every skill of a catalog on every request,
//! and the ids are short strings an author or host chose, so the hashing is a
//! folded multiply over eight bytes at a time rather than SipHash.
//! It does not resist deliberate collision flooding; the catalog is trusted
//! input here.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast, non-cryptographic hasher for short strings.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdHasher {
    state: u64,
}

/// The multiplier of each step (from the golden ratio).
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;
/// The multiplier of the finish.
const FINISH: u64 = 0xD6E8_FEB8_6659_FD93;

/// The 128-bit product of `a` and `b`, its halves folded together: every
/// input bit reaches both high and low output bits.
fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    // Truncation keeps the low half, the shift the high half: both intended.
    #[allow(clippy::cast_possible_truncation)]
    let (low, high) = (product as u64, (product >> 64) as u64);
    low ^ high
}

impl IdHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.state = folded_multiply(self.state ^ word, STEP);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some((word, tail)) = rest.split_first_chunk::<8>() {
            self.mix(u64::from_le_bytes(*word));
            rest = tail;
        }
        if !rest.is_empty() {
            // A partial word's top byte is free: it carries the length, so
            // trailing zero bytes do not vanish into the padding.
            let mut word = (rest.len() as u64) << 56;
            for (at, byte) in rest.iter().enumerate() {
                word |= u64::from(*byte) << (8 * at);
            }
            self.mix(word);
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.mix(u64::from(byte));
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        folded_multiply(self.state, FINISH)
    }
}

/// Builds [`IdHasher`]s.
pub type BuildIdHasher = BuildHasherDefault<IdHasher>;

/// A set of ids hashed with [`IdHasher`].
pub type IdHashSet<K> = HashSet<K, BuildIdHasher>;

/// A map keyed by ids hashed with [`IdHasher`].
pub type IdHashMap<K, V> = HashMap<K, V, BuildIdHasher>;

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn distinct_ids_hash_apart_and_equal_ids_together() {
        let build = BuildIdHasher::default();
        let ids: Vec<String> = (0..100_000).map(|i| format!("skill_{i}")).collect();
        let hashes: IdHashSet<u64> = ids.iter().map(|id| build.hash_one(id.as_str())).collect();
        assert_eq!(hashes.len(), ids.len());
        assert_eq!(
            build.hash_one("alpha"),
            build.hash_one(String::from("alpha").as_str())
        );
        // Trailing zero bytes are not lost in the padding.
        assert_ne!(build.hash_one("ab"), build.hash_one("ab\0"));
    }

    #[test]
    fn sets_answer_membership() {
        let set: IdHashSet<&str> = ["a", "b"].into_iter().collect();
        assert!(set.contains("a") && !set.contains("c"));
    }
}
