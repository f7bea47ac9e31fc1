//! Target classification: where a skill stands relative to the cursor.
//!
//! The law this module owns: the cursor is a legitimate target of a read (a
//! stay), never of a move. Every place that asks "may the model go there?"
//! asks [`classify_target`], so the answer cannot drift between callers.

use std::collections::{BTreeSet, HashSet};
use std::hash::BuildHasher;

use serde::{Deserialize, Serialize};

/// Where a target skill stands relative to the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetClass {
    /// The target is the cursor itself: a read is a stay.
    #[serde(rename = "self")]
    SelfTarget,
    /// A hop the graph grants from the cursor.
    Hop,
    /// An open skill, activatable from anywhere.
    Open,
    /// None of the above: a move there is refused from here.
    Unreachable,
}

impl TargetClass {
    /// The class as the conformance vectors spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetClass::SelfTarget => "self",
            TargetClass::Hop => "hop",
            TargetClass::Open => "open",
            TargetClass::Unreachable => "unreachable",
        }
    }
}

/// A set of skill ids that can answer membership. Implemented for slices and
/// vectors (a scan) and for hash and B-tree sets (a lookup), so callers that
/// classify a whole catalog can pass a set.
pub trait IdSet {
    /// Whether `id` is a member.
    fn holds(&self, id: &str) -> bool;
}

impl<S: AsRef<str>> IdSet for [S] {
    fn holds(&self, id: &str) -> bool {
        self.iter().any(|member| member.as_ref() == id)
    }
}

impl<S: AsRef<str>> IdSet for Vec<S> {
    fn holds(&self, id: &str) -> bool {
        self.as_slice().holds(id)
    }
}

impl<S: AsRef<str>, const N: usize> IdSet for [S; N] {
    fn holds(&self, id: &str) -> bool {
        self.as_slice().holds(id)
    }
}

impl<S: std::borrow::Borrow<str> + Eq + std::hash::Hash, H: BuildHasher> IdSet for HashSet<S, H> {
    fn holds(&self, id: &str) -> bool {
        self.contains(id)
    }
}

impl<S: std::borrow::Borrow<str> + Ord> IdSet for BTreeSet<S> {
    fn holds(&self, id: &str) -> bool {
        self.contains(id)
    }
}

impl<T: IdSet + ?Sized> IdSet for &T {
    fn holds(&self, id: &str) -> bool {
        (**self).holds(id)
    }
}

/// Classify `target`: first match wins. The cursor itself → `SelfTarget`
/// (even when `hops` holds it); in `hops` → `Hop`; in `open` → `Open`; else
/// `Unreachable`. Without a cursor nothing is `SelfTarget`.
///
/// ```
/// use skill_core::{classify_target, TargetClass};
///
/// let hops = ["refunds"];
/// let open: [&str; 0] = [];
/// assert_eq!(classify_target(Some("triage"), "triage", &hops[..], &open[..]), TargetClass::SelfTarget);
/// assert_eq!(classify_target(Some("triage"), "refunds", &hops[..], &open[..]), TargetClass::Hop);
/// assert_eq!(classify_target(None, "billing", &hops[..], &open[..]), TargetClass::Unreachable);
/// ```
pub fn classify_target(
    cursor: Option<&str>,
    target: &str,
    hops: impl IdSet,
    open: impl IdSet,
) -> TargetClass {
    if cursor == Some(target) {
        TargetClass::SelfTarget
    } else if hops.holds(target) {
        TargetClass::Hop
    } else if open.holds(target) {
        TargetClass::Open
    } else {
        TargetClass::Unreachable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_match_wins() {
        let hops = vec!["a", "b"];
        let open = vec!["b", "c"];
        assert_eq!(
            classify_target(Some("a"), "a", &hops, &open),
            TargetClass::SelfTarget
        );
        assert_eq!(
            classify_target(Some("a"), "b", &hops, &open),
            TargetClass::Hop
        );
        assert_eq!(
            classify_target(Some("a"), "c", &hops, &open),
            TargetClass::Open
        );
        assert_eq!(
            classify_target(Some("a"), "d", &hops, &open),
            TargetClass::Unreachable
        );
        assert_eq!(classify_target(None, "a", &hops, &open), TargetClass::Hop);
    }

    #[test]
    fn sets_and_slices_agree() {
        let hops: HashSet<String> = ["x".to_string()].into();
        let open: BTreeSet<&str> = ["y"].into();
        assert_eq!(classify_target(None, "x", &hops, &open), TargetClass::Hop);
        assert_eq!(classify_target(None, "y", &hops, &open), TargetClass::Open);
    }
}
