//! The hop keys: the one table of the keys a guard reads from the hop itself
//! and which field of the view each reads. Compile looks a key up here and
//! keeps what the table gives (a [`TextKey`] or a [`NumberKey`]), so the
//! predicate and the evaluator read the view by matching on it, without a
//! call through a pointer; [`HOP_KEYS`] is the table's list of names.

use skill_core::GuardView;

/// A hop key that holds text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKey {
    ToolName,
    Result,
    Status,
    UserMessage,
    CurrentSkillId,
}

impl TextKey {
    /// The text the key holds in `view`; `None` when the hop leaves it out
    /// (it then reads *undefined*).
    #[inline]
    pub(crate) fn read<'v>(self, view: &GuardView<'v>) -> Option<&'v str> {
        match self {
            TextKey::ToolName => Some(view.tool_name),
            TextKey::Result => Some(view.result),
            TextKey::Status => view.status,
            TextKey::UserMessage => Some(view.user_message),
            TextKey::CurrentSkillId => view.current_skill_id,
        }
    }
}

/// A hop key that holds a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberKey {
    Iteration,
}

impl NumberKey {
    /// The number the key holds in `view`.
    #[inline]
    pub(crate) fn read(self, view: &GuardView<'_>) -> f64 {
        match self {
            NumberKey::Iteration => view.iteration,
        }
    }
}

/// What a hop key holds, and so how it reads the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// Text (or nothing, when the hop leaves it out).
    Text(TextKey),
    /// A number.
    Number(NumberKey),
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
        read: Read::Text(TextKey::ToolName),
    },
    HopKey {
        name: "result",
        read: Read::Text(TextKey::Result),
    },
    HopKey {
        name: "status",
        read: Read::Text(TextKey::Status),
    },
    HopKey {
        name: "iteration",
        read: Read::Number(NumberKey::Iteration),
    },
    HopKey {
        name: "userMessage",
        read: Read::Text(TextKey::UserMessage),
    },
    HopKey {
        name: "currentSkillId",
        read: Read::Text(TextKey::CurrentSkillId),
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

/// The hop key spelt exactly `key`, if it is one. A match, so the compiler
/// picks the candidate by length before comparing bytes (a test holds it to
/// the table).
pub(crate) fn hop_key(key: &str) -> Option<&'static HopKey> {
    let at = match key {
        "toolName" => 0,
        "result" => 1,
        "status" => 2,
        "iteration" => 3,
        "userMessage" => 4,
        "currentSkillId" => 5,
        _ => return None,
    };
    HOPS.get(at)
}

/// A string of at most 16 bytes, kept as its length and two words, so that
/// comparing it with a hop's text (a tool name, a status, a skill id) is a
/// length check and two word comparisons instead of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShortText {
    len: u8,
    words: (u64, u64),
}

impl ShortText {
    /// The longest text a `ShortText` holds.
    const MAX: usize = 16;

    /// `text` as a `ShortText`; `None` when it is longer than 16 bytes.
    pub(crate) fn of(text: &str) -> Option<ShortText> {
        Some(ShortText {
            len: u8::try_from(text.len())
                .ok()
                .filter(|&len| usize::from(len) <= Self::MAX)?,
            words: words(text.as_bytes()),
        })
    }

    /// Whether `text` is this text.
    #[inline]
    pub(crate) fn matches(self, text: &str) -> bool {
        text.len() == usize::from(self.len) && words(text.as_bytes()) == self.words
    }
}

/// Two words that together cover every byte of a text of at most 16 bytes
/// (the first and last eight, four or one bytes, which may overlap). Two
/// texts of the same length are equal exactly when their words are; longer
/// texts give `(0, 0)` and must be told apart by their length.
#[inline]
fn words(bytes: &[u8]) -> (u64, u64) {
    let wide = |head: Option<&[u8; 8]>, tail: Option<&[u8; 8]>| {
        head.zip(tail)
            .map(|(head, tail)| (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)))
    };
    let narrow = |head: Option<&[u8; 4]>, tail: Option<&[u8; 4]>| {
        head.zip(tail).map(|(head, tail)| {
            (
                u64::from(u32::from_le_bytes(*head)),
                u64::from(u32::from_le_bytes(*tail)),
            )
        })
    };
    let byte = |at: usize| u64::from(bytes.get(at).copied().unwrap_or(0));
    match bytes.len() {
        8..=16 => wide(bytes.first_chunk(), bytes.last_chunk()),
        4..=7 => narrow(bytes.first_chunk(), bytes.last_chunk()),
        len @ 1..=3 => Some((byte(0) | (byte(len / 2) << 8), byte(len - 1))),
        _ => None,
    }
    .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_match_exactly_the_same_text_at_every_length() {
        let long = "abcdefghijklmnopqrstuvwxyz";
        for len in 0..=long.len() {
            let a = &long[..len];
            let Some(short) = ShortText::of(a) else {
                assert!(len > 16, "{len} bytes fit");
                continue;
            };
            assert!(short.matches(&a.chars().collect::<String>()));
            for at in 0..len {
                let mut b = a.as_bytes().to_vec();
                b[at] = b'#';
                assert!(!short.matches(&String::from_utf8(b).unwrap()), "{a:?}");
            }
            assert!(!short.matches(&long[..len + 1]));
            if len > 0 {
                assert!(!short.matches(&long[..len - 1]));
            }
        }
    }

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
                Some(Read::Text(text)) => format!("{key}={}", text.read(&view).unwrap_or("-")),
                Some(Read::Number(number)) => format!("{key}={}", number.read(&view)),
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
        for key in HOP_KEYS {
            assert_eq!(hop_key(key).map(|hop| hop.name), Some(key));
        }
        assert!(hop_key("riskLevel").is_none());
        assert!(hop_key("ToolName").is_none());
    }
}
