//! Problems and the check-up that collects them: every finding of every
//! check, never only the first.

use std::fmt;
use std::sync::{Arc, OnceLock};

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
/// A check can report thousands of problems, so a problem's message and
/// located fields are spans of a text: its own, or one that every problem of
/// a check shares, written sentence after sentence by the check and shared
/// when it is whole. A clone shares the text.
///
/// Spans are 32-bit, so a text holds at most `u32::MAX` bytes (4 GiB): a
/// longer message is cut at the last character that fits, a located field
/// that would end past it is absent, and a step past `u32::MAX` is absent.
#[derive(Debug, Clone)]
pub struct Problem {
    code: ProblemCode,
    /// Set once: a check's text is filled when the check has written it all.
    text: Arc<OnceLock<String>>,
    /// The message's own sentences, then the paragraph it ends with.
    own: Span,
    ending: Span,
    step: Option<u32>,
    skill: Span,
    tool: Span,
    kind: Span,
    from: Span,
    to: Span,
    /// The tool result that shows the problem (`ambiguous-routes`).
    witness: Option<Box<GuardViewInput>>,
}

/// Where a part of a problem is in its text. An absent part is
/// [`Span::ABSENT`], whose range is empty backwards and so reads as none:
/// a span without an `Option` around it is a third smaller, and a check can
/// report thousands of problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    const ABSENT: Span = Span {
        start: u32::MAX,
        end: 0,
    };

    /// The span `start..end`, absent when it does not fit in 32 bits.
    fn new(start: usize, end: usize) -> Span {
        match (u32::try_from(start), u32::try_from(end)) {
            (Ok(start), Ok(end)) => Span { start, end },
            _ => Span::ABSENT,
        }
    }

    fn of(self, text: &str) -> Option<&str> {
        text.get(self.start as usize..self.end as usize)
    }
}

/// The most bytes a text holds, so that every span of it fits in 32 bits.
const TEXT_LIMIT: usize = u32::MAX as usize;

impl Problem {
    /// A problem with no location yet; its severity is its code's. Give
    /// `message` room for the located fields' text to spare their own
    /// allocations.
    pub fn new(code: ProblemCode, message: impl Into<String>) -> Self {
        let mut text = message.into();
        if text.len() > TEXT_LIMIT {
            // The last character boundary at or before the limit (0 is one).
            let end = (0..=TEXT_LIMIT).rev().find(|&at| text.is_char_boundary(at));
            text.truncate(end.unwrap_or_default());
        }
        Problem {
            code,
            own: Span::new(0, text.len()),
            text: Arc::new(OnceLock::from(text)),
            ending: Span::ABSENT,
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

    /// The same problem, its message ending with `paragraph` (after a space).
    pub fn ending_with(mut self, paragraph: impl AsRef<str>) -> Self {
        self.ending = self.keep(paragraph.as_ref());
        self
    }

    /// The same problem, about `skill`.
    pub fn about_skill(mut self, skill: &str) -> Self {
        self.skill = self.keep(skill);
        self
    }

    /// The same problem, in step `step` (one-based) of its skill.
    pub fn at_step(mut self, step: usize) -> Self {
        self.step = u32::try_from(step).ok();
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

    /// Append a located field's text (to a text of this problem's own:
    /// a shared one is copied first); where it is.
    fn keep(&mut self, field: &str) -> Span {
        let Some(text) = Arc::make_mut(&mut self.text).get_mut() else {
            return Span::ABSENT;
        };
        let start = text.len();
        let span = Span::new(start, start.saturating_add(field.len()));
        if span != Span::ABSENT {
            text.push_str(field);
        }
        span
    }

    fn field(&self, span: Span) -> Option<&str> {
        span.of(self.text.get()?)
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
            own: self.field(self.own).unwrap_or_default(),
            shared: self.field(self.ending),
        }
    }

    /// The skill the problem is about.
    pub fn skill(&self) -> Option<&str> {
        self.field(self.skill)
    }

    /// The step (one-based) within the skill.
    pub fn step(&self) -> Option<usize> {
        self.step.map(|step| step as usize)
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

/// Where a sentence and its located fields fall in a sheet's text.
#[derive(Debug, Clone, Copy)]
struct Sentence {
    start: usize,
    skill: (usize, usize),
    tool: (usize, usize),
    kind: (usize, usize),
}

impl Sentence {
    const NOWHERE: (usize, usize) = (usize::MAX, 0);

    fn at(start: usize) -> Self {
        let nowhere = Sentence::NOWHERE;
        Sentence {
            start,
            skill: nowhere,
            tool: nowhere,
            kind: nowhere,
        }
    }
}

/// The problems of one check and one code, written into one text they all
/// share: first the paragraphs their messages end with, then each problem's
/// own sentence, part by part, noting where its located fields fall. Ten
/// thousand warnings are then one text and one vector, not ten thousand
/// allocations, and the problems find their fields in their sentences.
///
/// A text that would pass the 32-bit limit of its spans is closed and a new
/// one begun, starting with the same paragraphs.
#[derive(Debug)]
pub(crate) struct Sheet {
    code: ProblemCode,
    /// The cell the current text goes into when it is closed; the problems
    /// written on it hold it already.
    cell: Arc<OnceLock<String>>,
    text: String,
    /// The length of the paragraphs at the head of every text.
    paragraphs: usize,
    sentence: Sentence,
    limit: usize,
    problems: Vec<Problem>,
}

impl Sheet {
    /// A sheet of problems of `code`, room for `count` of them, its text
    /// beginning with `paragraphs`; where each paragraph is.
    pub(crate) fn new(code: ProblemCode, paragraphs: &[&str], count: usize) -> (Self, Vec<Span>) {
        Sheet::with_limit(code, paragraphs, count, TEXT_LIMIT)
    }

    fn with_limit(
        code: ProblemCode,
        paragraphs: &[&str],
        count: usize,
        limit: usize,
    ) -> (Self, Vec<Span>) {
        let mut text = String::new();
        let spans = paragraphs
            .iter()
            .map(|paragraph| {
                let start = text.len();
                text.push_str(paragraph);
                Span::new(start, text.len())
            })
            .collect();
        let sheet = Sheet {
            code,
            cell: Arc::new(OnceLock::new()),
            paragraphs: text.len(),
            sentence: Sentence::at(text.len()),
            text,
            limit,
            problems: Vec::with_capacity(count),
        };
        (sheet, spans)
    }

    /// Write `part`, which locates nothing.
    pub(crate) fn say(&mut self, part: &str) -> &mut Self {
        self.text.push_str(part);
        self
    }

    /// Write `number` in decimal. Its digits are pushed one by one, last
    /// first into a buffer: the formatter cost a hundred instructions a step.
    pub(crate) fn say_number(&mut self, number: usize) -> &mut Self {
        let mut digits = [b'0'; 20];
        let mut rest = number;
        let mut start = digits.len();
        for slot in digits.iter_mut().rev() {
            *slot = b'0' + (rest % 10) as u8;
            start -= 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        let written = digits.get(start..).unwrap_or_default();
        self.text.extend(written.iter().copied().map(char::from));
        self
    }

    /// Write `skill`, the skill the problem is about.
    pub(crate) fn skill(&mut self, skill: &str) -> &mut Self {
        self.sentence.skill = self.mark(skill);
        self
    }

    /// Write `tool`, the tool the problem is about.
    pub(crate) fn tool(&mut self, tool: &str) -> &mut Self {
        self.sentence.tool = self.mark(tool);
        self
    }

    /// Write `kind`, the artifact kind the problem is about.
    pub(crate) fn kind(&mut self, kind: &str) -> &mut Self {
        self.sentence.kind = self.mark(kind);
        self
    }

    fn mark(&mut self, field: &str) -> (usize, usize) {
        let start = self.text.len();
        self.say(field);
        (start, self.text.len())
    }

    /// The problem whose own sentence is the one just written, in `step`
    /// (if any), its message ending with the paragraph at `ending`.
    pub(crate) fn finish(&mut self, step: Option<usize>, ending: Span) {
        if self.text.len() > self.limit && self.sentence.start > self.paragraphs {
            self.turn_page();
        }
        let sentence = self.sentence;
        let span = |(start, end)| Span::new(start, end);
        self.problems.push(Problem {
            code: self.code,
            text: Arc::clone(&self.cell),
            own: Span::new(sentence.start, self.text.len()),
            ending,
            step: step.and_then(|step| u32::try_from(step).ok()),
            skill: span(sentence.skill),
            tool: span(sentence.tool),
            kind: span(sentence.kind),
            from: Span::ABSENT,
            to: Span::ABSENT,
            witness: None,
        });
        self.sentence = Sentence::at(self.text.len());
    }

    /// Close the text before the sentence being written, and begin a new
    /// one with the paragraphs and that sentence.
    fn turn_page(&mut self) {
        let start = self.sentence.start;
        let mut next = String::with_capacity(self.text.capacity());
        next.push_str(self.text.get(..self.paragraphs).unwrap_or_default());
        next.push_str(self.text.get(start..).unwrap_or_default());
        self.text.truncate(start);
        self.close(next);
        let moved = start - self.paragraphs;
        let back = |(start, end): (usize, usize)| (start - moved, end - moved);
        let sentence = &mut self.sentence;
        sentence.start = self.paragraphs;
        for field in [&mut sentence.skill, &mut sentence.tool, &mut sentence.kind] {
            if *field != Sentence::NOWHERE {
                *field = back(*field);
            }
        }
    }

    /// Put the current text in its cell, and begin `next` in a new cell.
    fn close(&mut self, next: String) {
        let text = std::mem::replace(&mut self.text, next);
        // The current cell is filled only here, then replaced.
        let _ = self.cell.set(text);
        self.cell = Arc::new(OnceLock::new());
    }

    /// Every problem written, in order.
    pub(crate) fn into_problems(mut self) -> Vec<Problem> {
        self.close(String::new());
        self.problems
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

    /// Writes the step sentence of the vocabulary check for `skill`.
    fn write_step(sheet: &mut Sheet, skill: &str, ending: Span) {
        sheet
            .say("Step ")
            .say_number(12)
            .say(" of \"")
            .skill(skill)
            .say("\" runs '")
            .tool("")
            .say("' for '")
            .kind("k/1")
            .say("'.");
        sheet.finish(Some(12), ending);
    }

    #[test]
    fn a_sheet_finds_its_fields_in_its_sentences() {
        let (mut sheet, paragraphs) = Sheet::new(ProblemCode::SelfLoop, &["Shared."], 2);
        write_step(&mut sheet, "s", paragraphs[0]);
        sheet.say("Plain.").finish(None, Span::ABSENT);
        let problems = sheet.into_problems();
        let built = Problem::new(ProblemCode::SelfLoop, "Step 12 of \"s\" runs '' for 'k/1'.")
            .at_step(12)
            .about_skill("s")
            .about_tool("")
            .about_kind("k/1")
            .ending_with("Shared.");
        assert_eq!(problems[0], built);
        assert_eq!(
            problems[0].message().to_string(),
            "Step 12 of \"s\" runs '' for 'k/1'. Shared."
        );
        assert_eq!(
            serde_json::to_string(&problems[0]).unwrap(),
            serde_json::to_string(&built).unwrap()
        );
        assert_eq!(problems[0].route(), None);
        assert_eq!(problems[1], Problem::new(ProblemCode::SelfLoop, "Plain."));
        assert_eq!(problems[1].skill(), None);
    }

    #[test]
    fn a_full_text_is_closed_and_a_new_one_begun_with_the_paragraphs() {
        let (mut sheet, paragraphs) = Sheet::with_limit(ProblemCode::SelfLoop, &["P."], 3, 60);
        for skill in ["a", "bb", "ccc"] {
            write_step(&mut sheet, skill, paragraphs[0]);
        }
        let problems = sheet.into_problems();
        // Two sentences (36 bytes and more each) pass 60: one text each.
        assert!(!Arc::ptr_eq(&problems[0].text, &problems[1].text));
        assert!(!Arc::ptr_eq(&problems[1].text, &problems[2].text));
        for (problem, skill) in problems.iter().zip(["a", "bb", "ccc"]) {
            let sentence = format!("Step 12 of \"{skill}\" runs '' for 'k/1'.");
            assert_eq!(problem.text.get(), Some(&format!("P.{sentence}")));
            assert_eq!(problem.skill(), Some(skill));
            assert_eq!((problem.tool(), problem.kind()), (Some(""), Some("k/1")));
            assert_eq!(problem.message().to_string(), format!("{sentence} P."));
        }
    }

    #[test]
    fn a_shared_text_is_copied_before_a_field_is_added() {
        let (mut sheet, paragraphs) = Sheet::new(ProblemCode::SelfLoop, &["Shared."], 2);
        write_step(&mut sheet, "s", paragraphs[0]);
        write_step(&mut sheet, "t", paragraphs[0]);
        let problems = sheet.into_problems();
        let routed = problems[0].clone().about_route("x", "y");
        assert_eq!(routed.route(), Some(("x", "y")));
        assert_eq!(problems[0].route(), None);
        assert_eq!(problems[1].skill(), Some("t"));
        assert_eq!(routed.message(), problems[0].message());
    }

    #[test]
    fn a_number_is_written_in_decimal() {
        let (mut sheet, _) = Sheet::new(ProblemCode::SelfLoop, &[], 1);
        for number in [0, 7, 10, 309, usize::MAX] {
            sheet.say_number(number).say(" ");
        }
        sheet.finish(None, Span::ABSENT);
        let problems = sheet.into_problems();
        let expected = format!("0 7 10 309 {} ", usize::MAX);
        assert_eq!(problems[0].message().to_string(), expected);
    }

    #[test]
    fn a_problem_is_small_and_shared_across_threads() {
        fn send_and_sync<T: Send + Sync>() {}
        send_and_sync::<Problem>();
        // 80 bytes of text and spans, and one pointer for an ambiguity's witness.
        assert!(std::mem::size_of::<Problem>() <= 88);
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
