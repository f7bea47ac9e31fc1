//! Problems and the check-up that collects them: every finding of every
//! check, never only the first.

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The declaration can never work as written; `ok` is false.
    Error,
    /// Worth a look; the check cannot see enough to call it an error.
    Warning,
}

impl Severity {
    /// The severity as the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding. `code` is stable; `message` says what is wrong, why the
/// check can say so, what it cannot see, and the fix. The optional fields
/// locate it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The stable code, e.g. `artifact-kind-unsatisfied`.
    pub code: &'static str,
    /// The whole explanation, in sentences.
    pub message: Message,
    /// The skill the problem is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// The step (one-based) within the skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// The tool the step runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The artifact kind at issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The source of the route at issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The target of the route at issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

impl Problem {
    /// A problem with no location yet.
    pub fn new(severity: Severity, code: &'static str, message: impl Into<Message>) -> Self {
        Problem {
            severity,
            code,
            message: message.into(),
            skill: None,
            step: None,
            tool: None,
            kind: None,
            from: None,
            to: None,
        }
    }

    /// The same problem, about `skill`.
    pub fn about_skill(mut self, skill: impl Into<String>) -> Self {
        self.skill = Some(skill.into());
        self
    }

    /// The same problem, about the route `from → to`.
    pub fn about_route(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.from = Some(from.into());
        self.to = Some(to.into());
        self
    }

    /// Whether the problem is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Problem {
    /// `severity[code]: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)
    }
}

/// A problem's explanation: its own sentences, then, for a check whose
/// problems all end with the same paragraph (what the check cannot see, what
/// does exist), that paragraph, composed once per check and shared.
/// It prints and serializes as one string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    own: String,
    shared: Option<Arc<str>>,
}

impl Message {
    /// A message of `own` sentences followed by the `shared` paragraph.
    pub fn with_shared(own: String, shared: Arc<str>) -> Self {
        Message {
            own,
            shared: Some(shared),
        }
    }

    /// Whether the whole message contains `needle` (within one part).
    pub fn contains(&self, needle: &str) -> bool {
        self.own.contains(needle) || self.shared.as_deref().is_some_and(|s| s.contains(needle))
    }

    /// Whether the whole message starts with `prefix`.
    pub fn starts_with(&self, prefix: &str) -> bool {
        self.to_string().starts_with(prefix)
    }
}

impl From<String> for Message {
    fn from(own: String) -> Self {
        Message { own, shared: None }
    }
}

impl From<&str> for Message {
    fn from(own: &str) -> Self {
        Message::from(own.to_owned())
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.own)?;
        if let Some(shared) = &self.shared {
            if !self.own.is_empty() {
                f.write_str(" ")?;
            }
            f.write_str(shared)?;
        }
        Ok(())
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.shared {
            None => serializer.serialize_str(&self.own),
            Some(_) => serializer.collect_str(self),
        }
    }
}

/// Every problem found, and whether none of them is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Checkup {
    /// False when any problem is an error.
    pub ok: bool,
    /// Every problem, in the order the checks ran.
    pub problems: Vec<Problem>,
}

impl Checkup {
    /// A check-up of these problems.
    pub fn from_problems(problems: Vec<Problem>) -> Self {
        Checkup {
            ok: !problems.iter().any(Problem::is_error),
            problems,
        }
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(|p| p.is_error())
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(|p| !p.is_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_is_false_only_with_an_error() {
        let warning = Problem::new(Severity::Warning, "w", "m");
        assert!(Checkup::from_problems(vec![warning.clone()]).ok);
        let error = Problem::new(Severity::Error, "e", "m").about_route("a", "b");
        let checkup = Checkup::from_problems(vec![warning, error]);
        assert!(!checkup.ok);
        assert_eq!(checkup.errors().count(), 1);
        let json = serde_json::to_value(&checkup).unwrap();
        let shared = Message::with_shared("Own.".into(), Arc::from("Shared."));
        assert_eq!(serde_json::to_value(&shared).unwrap(), "Own. Shared.");
        assert!(shared.contains("Shared") && shared.starts_with("Own. S"));
        assert_eq!(
            json["problems"][1],
            serde_json::json!({"severity": "error", "code": "e", "message": "m", "from": "a", "to": "b"})
        );
    }
}
