//! The hop keys: the one table of the keys a guard reads from the hop itself
//! and how each reads the view. Compile looks a key up here, the evaluator
//! reads its value through it, and the predicate's direct comparisons are
//! chosen by what it holds; [`HOP_KEYS`] is its list of names.

use skill_core::GuardView;

/// How a hop key reads its value from the view.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Read {
    /// A key that holds text; `None` when the hop leaves it out (it then
    /// reads *undefined*).
    Text(for<'v> fn(&GuardView<'v>) -> Option<&'v str>),
    /// A key that holds a number.
    Number(fn(&GuardView<'_>) -> f64),
}

/// One hop key: its name in the guard grammar and how it reads the view.
#[derive(Debug)]
pub(crate) struct HopKey {
    /// The key as a guard spells it.
    pub(crate) name: &'static str,
    /// How it reads the view.
    pub(crate) read: Read,
}

/// The hop keys, in the SPEC's order (§4.2).
static HOPS: [HopKey; 6] = [
    HopKey {
        name: "toolName",
        read: Read::Text(|view| Some(view.tool_name)),
    },
    HopKey {
        name: "result",
        read: Read::Text(|view| Some(view.result)),
    },
    HopKey {
        name: "status",
        read: Read::Text(|view| view.status),
    },
    HopKey {
        name: "iteration",
        read: Read::Number(|view| view.iteration),
    },
    HopKey {
        name: "userMessage",
        read: Read::Text(|view| Some(view.user_message)),
    },
    HopKey {
        name: "currentSkillId",
        read: Read::Text(|view| view.current_skill_id),
    },
];

/// The six keys a guard reads from the hop itself; any other key reads the
/// top-level field of that name in the result parsed as JSON.
pub const HOP_KEYS: [&str; 6] = {
    let mut names = [""; 6];
    let mut at = 0;
    while at < names.len() {
        names[at] = HOPS[at].name;
        at += 1;
    }
    names
};

/// The hop key spelt exactly `key`, if it is one.
pub(crate) fn hop_key(key: &str) -> Option<&'static HopKey> {
    HOPS.iter().find(|hop| hop.name == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_reads_its_own_field() {
        let view = GuardView::new("t", "r")
            .with_status("s")
            .with_iteration(4.0)
            .with_user_message("m")
            .with_current_skill("c");
        let read: Vec<String> = HOP_KEYS
            .iter()
            .map(|key| match hop_key(key).map(|hop| hop.read) {
                Some(Read::Text(text)) => format!("{key}={}", text(&view).unwrap_or("-")),
                Some(Read::Number(number)) => format!("{key}={}", number(&view)),
                None => format!("{key} is not a hop key"),
            })
            .collect();
        assert_eq!(
            read,
            [
                "toolName=t",
                "result=r",
                "status=s",
                "iteration=4",
                "userMessage=m",
                "currentSkillId=c"
            ]
        );
        assert!(hop_key("riskLevel").is_none());
        assert!(hop_key("ToolName").is_none());
    }
}
