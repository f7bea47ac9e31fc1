//! The text a guard holds: its keys and its string values. Guards name
//! short fields and compare with short words (`riskLevel`, `"high"`), so
//! each is kept inline, without an allocation of its own, up to 23 bytes;
//! a longer one is shared (cloning it copies no bytes).

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Serialize, Serializer};
use smol_str::SmolStr;

/// A key or a string value of a guard: a `str` kept inline when it is at
/// most 23 bytes long. It reads as a `str` (it dereferences to one) and
/// compares equal to the same text as a `str` or a `String`.
///
/// ```
/// use skill_guard::Text;
///
/// let key = Text::from("riskLevel");
/// assert_eq!(key, "riskLevel");
/// assert_eq!(key.len(), 9);
/// assert_eq!(String::from(key), "riskLevel");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Text(SmolStr);

impl Text {
    /// The text as a `str`.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl Deref for Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The most bytes kept inline.
const INLINE: usize = 23;

impl Text {
    /// `text` kept: a short one copied into place byte by byte, inlined here
    /// (`SmolStr::new` is a call that zeroes the buffer and calls `memcpy`
    /// for every text, which costs more than the copy for a key of a few
    /// bytes), a longer one shared.
    #[inline]
    fn new(text: &str) -> Text {
        Text(if text.len() <= INLINE {
            SmolStr::new_inline(text)
        } else {
            SmolStr::new(text)
        })
    }
}

impl Text {
    /// A `'static` text (a hop key's own name), kept by reference: nothing
    /// is copied.
    #[inline]
    pub(crate) fn from_static(text: &'static str) -> Text {
        Text(SmolStr::new_static(text))
    }
}

impl From<&str> for Text {
    #[inline]
    fn from(text: &str) -> Self {
        Text::new(text)
    }
}

impl From<&String> for Text {
    #[inline]
    fn from(text: &String) -> Self {
        Text::new(text)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(SmolStr::from(text))
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.0.into()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_texts_read_back_as_written() {
        for text in [
            "",
            "high",
            "a".repeat(INLINE).as_str(),
            "b".repeat(INLINE + 1).as_str(),
            "é".repeat(40).as_str(),
        ] {
            let kept = Text::from(text);
            assert_eq!(kept.as_str(), text);
            assert_eq!(kept.clone(), kept);
            assert_eq!(String::from(kept.clone()), text);
            assert_eq!(
                serde_json::to_string(&kept).unwrap(),
                serde_json::to_string(text).unwrap()
            );
            assert_eq!(format!("{kept}|{kept:?}"), format!("{text}|{text:?}"));
        }
        assert_ne!(Text::from("a"), "b");
    }
}
