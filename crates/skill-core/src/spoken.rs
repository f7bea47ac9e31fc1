//! `spoken`: a filtered set that remembers whether the filter emptied it.
//!
//! A sentence about a set the filter emptied must be dropped, not negated
//! (the lens law). [`Spoken::held`] is what lets a renderer tell "there was
//! nothing" from "there was something I may not name".

/// A set after a naming filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spoken<T> {
    /// The members the filter allows, in their original order.
    pub named: Vec<T>,
    /// Whether the unfiltered set had any member.
    pub held: bool,
}

impl<T> Spoken<T> {
    /// Whether the filter is what emptied the set: it held members, and none
    /// may be named.
    pub fn emptied_by_filter(&self) -> bool {
        self.held && self.named.is_empty()
    }
}

/// Filter `all` through `may_name`, remembering whether `all` was non-empty.
///
/// ```
/// use skill_core::spoken;
///
/// let s = spoken(["alpha", "beta"], |id| *id != "alpha");
/// assert_eq!(s.named, ["beta"]);
/// assert!(s.held);
/// let s = spoken(["alpha"], |_| false);
/// assert!(s.emptied_by_filter());
/// ```
pub fn spoken<T>(
    all: impl IntoIterator<Item = T>,
    mut may_name: impl FnMut(&T) -> bool,
) -> Spoken<T> {
    let mut held = false;
    let named = all
        .into_iter()
        .inspect(|_| held = true)
        .filter(|member| may_name(member))
        .collect();
    Spoken { named, held }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_set_is_not_held() {
        let s = spoken(Vec::<&str>::new(), |_| true);
        assert!(!s.held && s.named.is_empty() && !s.emptied_by_filter());
    }

    #[test]
    fn order_is_kept() {
        let s = spoken([3, 1, 2, 5], |n| *n != 1);
        assert_eq!(s.named, [3, 2, 5]);
        assert!(s.held && !s.emptied_by_filter());
    }
}
