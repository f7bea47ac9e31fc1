//! Problems and the check-up that collects them: every finding of every
//! check, never only the first.

use std::fmt::{self, Write};
use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use skill_core::GuardViewInput;

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
///
/// A check can report thousands of problems, so a problem keeps all of its
/// own text in one string: its message's own sentences, then the text of
/// each located field that the sentences do not already hold, which the
/// field finds by its span. A paragraph that every problem of a check ends
/// with is composed once and shared.
#[derive(Debug, Clone)]
pub struct Problem {
    code: ProblemCode,
    /// The message's own sentences (up to `own_end`), then the located
    /// fields' text.
    text: String,
    own_end: usize,
    /// The paragraph the message ends with, shared with other problems.
    shared: Option<Arc<str>>,
    step: Option<usize>,
    skill: Span,
    tool: Span,
    kind: Span,
    from: Span,
    to: Span,
    /// The tool result that shows the problem (`ambiguous-routes`).
    witness: Option<Box<GuardViewInput>>,
}

/// Where a located field's text is in its problem's `text`. An absent field
/// is [`Span::ABSENT`], whose range is empty backwards and so reads as none:
/// a span without an `Option` around it is a third smaller, and a check can
/// report thousands of problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    const ABSENT: Span = Span {
        start: usize::MAX,
        end: 0,
    };
}

impl Problem {
    /// A problem with no location yet; its severity is its code's. Give
    /// `message` room for the located fields' text to spare their own
    /// allocations.
    pub fn new(code: ProblemCode, message: impl Into<String>) -> Self {
        let text = message.into();
        Problem {
            code,
            own_end: text.len(),
            text,
            shared: None,
            step: None,
            skill: Span::ABSENT,
            tool: Span::ABSENT,
            kind: Span::ABSENT,
            from: Span::ABSENT,
            to: Span::ABSENT,
            witness: None,
        }
    }

    /// The same problem, shown by `view`: the tool result (with its hop)
    /// that makes it happen.
    pub fn shown_by(mut self, view: GuardViewInput) -> Self {
        self.witness = Some(Box::new(view));
        self
    }

    /// The tool result that shows the problem, when one does.
    pub fn witness(&self) -> Option<&GuardViewInput> {
        self.witness.as_deref()
    }

    /// The same problem, its message ending with `paragraph` (after a space),
    /// a paragraph that many problems share.
    pub fn ending_with(mut self, paragraph: Arc<str>) -> Self {
        self.shared = Some(paragraph);
        self
    }

    /// The same problem, about `skill`.
    pub fn about_skill(mut self, skill: &str) -> Self {
        self.skill = self.keep(skill);
        self
    }

    /// The same problem, in step `step` (one-based) of its skill.
    pub fn at_step(mut self, step: usize) -> Self {
        self.step = Some(step);
        self
    }

    /// The same problem, about the tool `tool` (the one its step runs).
    pub fn about_tool(mut self, tool: &str) -> Self {
        self.tool = self.keep(tool);
        self
    }

    /// The same problem, about the artifact kind `kind`.
    pub fn about_kind(mut self, kind: &str) -> Self {
        self.kind = self.keep(kind);
        self
    }

    /// The same problem, about the route `from → to`.
    pub fn about_route(mut self, from: &str, to: &str) -> Self {
        self.from = self.keep(from);
        self.to = self.keep(to);
        self
    }

    /// Append a located field's text; where it is.
    fn keep(&mut self, field: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(field);
        Span {
            start,
            end: self.text.len(),
        }
    }

    fn field(&self, span: Span) -> Option<&str> {
        self.text.get(span.start..span.end)
    }

    /// Error or warning, as the code says.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// The stable code, e.g. [`ProblemCode::ArtifactKindUnsatisfied`].
    pub fn code(&self) -> ProblemCode {
        self.code
    }

    /// The whole explanation, in sentences.
    pub fn message(&self) -> Message<'_> {
        Message {
            own: self.text.get(..self.own_end).unwrap_or_default(),
            shared: self.shared.as_deref(),
        }
    }

    /// The skill the problem is about.
    pub fn skill(&self) -> Option<&str> {
        self.field(self.skill)
    }

    /// The step (one-based) within the skill.
    pub fn step(&self) -> Option<usize> {
        self.step
    }

    /// The tool the step runs.
    pub fn tool(&self) -> Option<&str> {
        self.field(self.tool)
    }

    /// The artifact kind at issue.
    pub fn kind(&self) -> Option<&str> {
        self.field(self.kind)
    }

    /// The route at issue: its source and its target.
    pub fn route(&self) -> Option<(&str, &str)> {
        self.field(self.from).zip(self.field(self.to))
    }

    /// Whether the problem is an error.
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }
}

/// A problem's own sentence as a check writes it, part by part, noting
/// where the located fields fall in it: the problem then finds each field
/// in its sentence and keeps no second copy of its text.
#[derive(Debug)]
pub(crate) struct Draft {
    text: String,
    skill: Span,
    tool: Span,
    kind: Span,
}

impl Draft {
    /// An empty sentence with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Draft {
            text: String::with_capacity(capacity),
            skill: Span::ABSENT,
            tool: Span::ABSENT,
            kind: Span::ABSENT,
        }
    }

    /// Write `part`, which locates nothing.
    pub(crate) fn say(&mut self, part: &str) -> &mut Self {
        self.text.push_str(part);
        self
    }

    /// Write `number` in decimal.
    pub(crate) fn say_number(&mut self, number: usize) -> &mut Self {
        // Writing into a `String` cannot fail.
        let _ = write!(self.text, "{number}");
        self
    }

    /// Write `skill`, the skill the problem is about.
    pub(crate) fn skill(&mut self, skill: &str) -> &mut Self {
        self.skill = self.mark(skill);
        self
    }

    /// Write `tool`, the tool the problem is about.
    pub(crate) fn tool(&mut self, tool: &str) -> &mut Self {
        self.tool = self.mark(tool);
        self
    }

    /// Write `kind`, the artifact kind the problem is about.
    pub(crate) fn kind(&mut self, kind: &str) -> &mut Self {
        self.kind = self.mark(kind);
        self
    }

    fn mark(&mut self, field: &str) -> Span {
        let start = self.text.len();
        self.say(field);
        Span {
            start,
            end: self.text.len(),
        }
    }

    /// The problem `code` with this sentence for its own, located where the
    /// sentence names its fields.
    pub(crate) fn into_problem(self, code: ProblemCode) -> Problem {
        let mut problem = Problem::new(code, self.text);
        problem.skill = self.skill;
        problem.tool = self.tool;
        problem.kind = self.kind;
        problem
    }
}

impl PartialEq for Problem {
    /// Problems are equal when they say the same: same code, message and
    /// location, however their text is stored.
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.step == other.step
            && self.message() == other.message()
            && self.skill() == other.skill()
            && self.tool() == other.tool()
            && self.kind() == other.kind()
            && self.route() == other.route()
            && self.witness == other.witness
    }
}

impl Eq for Problem {}

impl Serialize for Problem {
    /// `{ severity, code, message, skill?, step?, tool?, kind?, from?, to?,
    /// witness? }`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Problem", 10)?;
        out.serialize_field("severity", &self.severity())?;
        out.serialize_field("code", &self.code)?;
        out.serialize_field("message", &self.message())?;
        let (from, to) = self.route().unzip();
        optional(&mut out, "skill", self.skill())?;
        optional(&mut out, "step", self.step)?;
        optional(&mut out, "tool", self.tool())?;
        optional(&mut out, "kind", self.kind())?;
        optional(&mut out, "from", from)?;
        optional(&mut out, "to", to)?;
        optional(&mut out, "witness", self.witness())?;
        out.end()
    }
}

/// A field that is written only when it has a value.
fn optional<S: SerializeStruct, T: Serialize>(
    out: &mut S,
    key: &'static str,
    value: Option<T>,
) -> Result<(), S::Error> {
    match value {
        Some(value) => out.serialize_field(key, &value),
        None => out.skip_field(key),
    }
}

impl fmt::Display for Problem {
    /// `severity[code]: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity(), self.code, self.message())
    }
}

/// Ids as a message lists them: each in double quotes, commas between, and
/// `last_word` before the last (`"a", "b" and "c"`; `"a" or "b"`).
pub(crate) fn quoted_list(ids: &[&str], last_word: &str) -> String {
    let quoted: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} {last_word} {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// A problem's explanation: its own sentences, then, for a check whose
/// problems all end with the same paragraph (what the check cannot see, what
/// does exist), that paragraph. It prints and serializes as one string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    own: &'a str,
    shared: Option<&'a str>,
}

impl Message<'_> {
    /// Whether the whole message contains `needle` (within one part).
    pub fn contains(&self, needle: &str) -> bool {
        self.own.contains(needle) || self.shared.is_some_and(|s| s.contains(needle))
    }

    /// Whether the whole message starts with `prefix`.
    pub fn starts_with(&self, prefix: &str) -> bool {
        self.to_string().starts_with(prefix)
    }
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.own)?;
        if let Some(shared) = self.shared {
            if !self.own.is_empty() {
                f.write_str(" ")?;
            }
            f.write_str(shared)?;
        }
        Ok(())
    }
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.shared {
            None => serializer.serialize_str(self.own),
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
        let shared: Arc<str> = Arc::from("Shared.");
        let problem = Problem::new(ProblemCode::SelfLoop, "Own.").ending_with(shared.clone());
        let message = problem.message();
        assert_eq!(serde_json::to_value(message).unwrap(), "Own. Shared.");
        assert!(message.contains("Shared") && message.starts_with("Own. S"));
        let alone = Problem::new(ProblemCode::SelfLoop, "").ending_with(shared);
        assert_eq!(alone.message().to_string(), "Shared.");
    }

    #[test]
    fn a_draft_finds_its_fields_in_its_sentence() {
        let mut draft = Draft::with_capacity(0);
        draft
            .say("Step ")
            .say_number(12)
            .say(" of \"")
            .skill("s")
            .say("\" runs '")
            .tool("")
            .say("' for '")
            .kind("k/1")
            .say("'.");
        let drafted = draft.into_problem(ProblemCode::SelfLoop).at_step(12);
        assert_eq!(
            drafted.message().to_string(),
            "Step 12 of \"s\" runs '' for 'k/1'."
        );
        let built = Problem::new(ProblemCode::SelfLoop, "Step 12 of \"s\" runs '' for 'k/1'.")
            .at_step(12)
            .about_skill("s")
            .about_tool("")
            .about_kind("k/1");
        assert_eq!(drafted, built);
        assert_eq!(
            serde_json::to_string(&drafted).unwrap(),
            serde_json::to_string(&built).unwrap()
        );
        assert_eq!(drafted.route(), None);
    }

    #[test]
    fn equal_problems_say_the_same_however_stored() {
        let roomy = String::with_capacity(64) + "m";
        let a = Problem::new(ProblemCode::SelfLoop, roomy).about_route("x", "y");
        let b = Problem::new(ProblemCode::SelfLoop, "m").about_route("x", "y");
        assert_eq!(a, b);
        assert_ne!(a, b.clone().at_step(1));
        assert_ne!(
            a,
            Problem::new(ProblemCode::SelfLoop, "mx").about_route("", "y")
        );
    }
}
