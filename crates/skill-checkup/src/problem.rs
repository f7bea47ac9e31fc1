//! Problems and the check-up that collects them: every finding of every
//! check, never only the first.

use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::code::ProblemCode;

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

/// One finding. Its code is stable and fixes its severity; its message says
/// what is wrong, why the check can say so, what it cannot see, and the fix.
/// The optional fields locate it. A problem is built with [`Problem::new`]
/// and located with the `about_*`/`at_*` builders; it is read, never
/// changed, through its accessors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Always `code.severity()`: stored so the JSON output names it.
    severity: Severity,
    code: ProblemCode,
    message: Message,
    #[serde(skip_serializing_if = "Option::is_none")]
    skill: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<String>,
}

impl Problem {
    /// A problem with no location yet; its severity is its code's.
    pub fn new(code: ProblemCode, message: impl Into<Message>) -> Self {
        Problem {
            severity: code.severity(),
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

    /// The same problem, in step `step` (one-based) of its skill.
    pub fn at_step(mut self, step: usize) -> Self {
        self.step = Some(step);
        self
    }

    /// The same problem, about the tool `tool` (the one its step runs).
    pub fn about_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// The same problem, about the artifact kind `kind`.
    pub fn about_kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// The same problem, about the route `from → to`.
    pub fn about_route(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.from = Some(from.into());
        self.to = Some(to.into());
        self
    }

    /// Error or warning, as the code says.
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// The stable code, e.g. [`ProblemCode::ArtifactKindUnsatisfied`].
    pub fn code(&self) -> ProblemCode {
        self.code
    }

    /// The whole explanation, in sentences.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The skill the problem is about.
    pub fn skill(&self) -> Option<&str> {
        self.skill.as_deref()
    }

    /// The step (one-based) within the skill.
    pub fn step(&self) -> Option<usize> {
        self.step
    }

    /// The tool the step runs.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// The artifact kind at issue.
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The route at issue: its source and its target.
    pub fn route(&self) -> Option<(&str, &str)> {
        self.from.as_deref().zip(self.to.as_deref())
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

/// Every problem found. Whether the declaration is usable ([`Checkup::ok`])
/// follows from them; it serializes as `{ "ok": …, "problems": […] }`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkup {
    /// Every problem, in the order the checks ran.
    pub problems: Vec<Problem>,
}

impl Checkup {
    /// A check-up of these problems.
    pub fn from_problems(problems: Vec<Problem>) -> Self {
        Checkup { problems }
    }

    /// False when any problem is an error.
    pub fn ok(&self) -> bool {
        !self.problems.iter().any(Problem::is_error)
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

impl Serialize for Checkup {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut checkup = serializer.serialize_struct("Checkup", 2)?;
        checkup.serialize_field("ok", &self.ok())?;
        checkup.serialize_field("problems", &self.problems)?;
        checkup.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_is_false_only_with_an_error() {
        let warning = Problem::new(ProblemCode::SelfLoop, "w");
        assert_eq!(warning.severity(), Severity::Warning);
        assert!(Checkup::from_problems(vec![warning.clone()]).ok());
        let error = Problem::new(ProblemCode::GuardRefused, "m").about_route("a", "b");
        assert_eq!(error.route(), Some(("a", "b")));
        let checkup = Checkup::from_problems(vec![warning, error]);
        assert!(!checkup.ok());
        assert_eq!(checkup.errors().count(), 1);
        assert_eq!(checkup.warnings().count(), 1);
        assert_eq!(
            serde_json::to_string(&checkup).unwrap(),
            r#"{"ok":false,"problems":[{"severity":"warning","code":"self-loop","message":"w"},"#
                .to_owned()
                + r#"{"severity":"error","code":"guard-refused","message":"m","from":"a","to":"b"}]}"#
        );
        assert_eq!(
            serde_json::to_string(&Checkup::default()).unwrap(),
            r#"{"ok":true,"problems":[]}"#
        );
    }

    #[test]
    fn located_fields_serialize_in_order_when_set() {
        let problem = Problem::new(ProblemCode::ArtifactKindUnsatisfied, "m")
            .about_skill("s")
            .at_step(2)
            .about_tool("t")
            .about_kind("k");
        assert_eq!(
            (
                problem.skill(),
                problem.step(),
                problem.tool(),
                problem.kind()
            ),
            (Some("s"), Some(2), Some("t"), Some("k"))
        );
        assert_eq!(problem.route(), None);
        assert_eq!(
            serde_json::to_string(&problem).unwrap(),
            r#"{"severity":"warning","code":"artifact-kind-unsatisfied","message":"m","skill":"s","step":2,"tool":"t","kind":"k"}"#
        );
        assert_eq!(problem.to_string(), "warning[artifact-kind-unsatisfied]: m");
    }

    #[test]
    fn a_shared_paragraph_follows_the_own_sentences() {
        let shared = Message::with_shared("Own.".into(), Arc::from("Shared."));
        assert_eq!(serde_json::to_value(&shared).unwrap(), "Own. Shared.");
        assert!(shared.contains("Shared") && shared.starts_with("Own. S"));
        let alone = Message::with_shared(String::new(), Arc::from("Shared."));
        assert_eq!(alone.to_string(), "Shared.");
    }
}
