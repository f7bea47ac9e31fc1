//! Authoring validation: the explicit, per-skill refusals a declaration gets
//! where it is written. Artifact vocabularies must be non-empty lists of
//! distinct, non-blank kinds; steps must name a tool the skill carries and say
//! what they are for.

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;
use skill_core::Skill;
use skill_guard::js::is_space;

use crate::code::ProblemCode;
use crate::problem::Problem;

/// Which vocabulary a declaration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vocabulary {
    /// What a skill or step leaves behind.
    Produces,
    /// What a skill or step needs to arrive.
    Consumes,
}

impl Vocabulary {
    /// The field name: `produces` or `consumes`.
    pub fn as_str(self) -> &'static str {
        match self {
            Vocabulary::Produces => "produces",
            Vocabulary::Consumes => "consumes",
        }
    }

    /// The vocabulary named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Vocabulary> {
        match name {
            "produces" => Some(Vocabulary::Produces),
            "consumes" => Some(Vocabulary::Consumes),
            _ => None,
        }
    }
}

impl fmt::Display for Vocabulary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a `produces`/`consumes` declaration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VocabularyError {
    /// The declaration is not a list.
    #[error(
        "`{what}` is {found}, not a list of artifact kinds; write e.g. `{what}: [\"dataset/rows\"]`, or drop the field"
    )]
    NotAList {
        /// The field.
        what: Vocabulary,
        /// What it was instead, as JSON.
        found: String,
    },
    /// The declaration is `[]`.
    #[error(
        "`{what}: []` declares nothing; list at least one artifact kind, or drop the field (a skill without the field is treated exactly like one that never heard of vocabularies)"
    )]
    Empty {
        /// The field.
        what: Vocabulary,
    },
    /// An entry that is not a string, or is blank.
    #[error(
        "`{what}` entry {index} is {found}, which is not an artifact kind; a kind is the exact non-blank string an artifact's kind must equal, such as \"dataset/rows\""
    )]
    NotAKind {
        /// The field.
        what: Vocabulary,
        /// The zero-based position of the entry.
        index: usize,
        /// The entry, as JSON.
        found: String,
    },
    /// A kind listed twice.
    #[error(
        "`{what}` lists \"{kind}\" twice; a vocabulary is a set, so remove the repeat (if two different kinds were meant, give them different names)"
    )]
    Repeated {
        /// The field.
        what: Vocabulary,
        /// The repeated kind.
        kind: String,
    },
}

impl VocabularyError {
    /// The stable refusal code: `not-a-list`, `empty`, `not-a-kind`, `repeated`.
    pub fn code(&self) -> &'static str {
        match self {
            VocabularyError::NotAList { .. } => "not-a-list",
            VocabularyError::Empty { .. } => "empty",
            VocabularyError::NotAKind { .. } => "not-a-kind",
            VocabularyError::Repeated { .. } => "repeated",
        }
    }
}

/// Validate a raw `produces`/`consumes` declaration (`None`: absent, which is
/// fine).
///
/// ```
/// use serde_json::json;
/// use skill_checkup::{assert_vocabulary, Vocabulary};
///
/// assert!(assert_vocabulary(Vocabulary::Produces, None).is_ok());
/// let err = assert_vocabulary(Vocabulary::Consumes, Some(&json!(["a", "a"]))).unwrap_err();
/// assert_eq!(err.code(), "repeated");
/// ```
///
/// # Errors
///
/// The first [`VocabularyError`], checking entries in order.
pub fn assert_vocabulary(what: Vocabulary, kinds: Option<&Value>) -> Result<(), VocabularyError> {
    let Some(kinds) = kinds else {
        return Ok(());
    };
    let Value::Array(list) = kinds else {
        return Err(VocabularyError::NotAList {
            what,
            found: kinds.to_string(),
        });
    };
    check_kinds(
        what,
        list.iter().map(|kind| (kind.as_str(), kind.to_string())),
    )
}

/// Validate a typed declaration (every entry is a string already).
///
/// # Errors
///
/// As [`assert_vocabulary`].
pub fn assert_kinds(what: Vocabulary, kinds: Option<&[String]>) -> Result<(), VocabularyError> {
    let Some(list) = kinds else {
        return Ok(());
    };
    check_kinds(
        what,
        list.iter()
            .map(|kind| (Some(kind.as_str()), Value::from(kind.as_str()).to_string())),
    )
}

fn check_kinds<'a>(
    what: Vocabulary,
    entries: impl ExactSizeIterator<Item = (Option<&'a str>, String)>,
) -> Result<(), VocabularyError> {
    if entries.len() == 0 {
        return Err(VocabularyError::Empty { what });
    }
    let mut seen = HashSet::new();
    for (index, (kind, shown)) in entries.enumerate() {
        let Some(kind) = kind.filter(|kind| !kind.trim_matches(is_space).is_empty()) else {
            return Err(VocabularyError::NotAKind {
                what,
                index,
                found: shown,
            });
        };
        if !seen.insert(kind) {
            return Err(VocabularyError::Repeated {
                what,
                kind: kind.to_owned(),
            });
        }
    }
    Ok(())
}

/// What is wrong with one declaration of a skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthoringFault {
    /// A vocabulary refusal.
    #[error(transparent)]
    Vocabulary(#[from] VocabularyError),
    /// `on_skip` is set but the skill declares no steps.
    #[error(
        "`on_skip` says what to do when a step is skipped, but the skill declares no steps; add `steps`, or drop `on_skip`"
    )]
    OnSkipWithoutSteps,
    /// `on_skip` other than `advance` or `hold` (SPEC §15.1).
    #[error(
        "`on_skip` is {given:?}, which is neither \"advance\" (a skipped step lets the procedure move on, the default) nor \"hold\" (the step stays current); if the text is guidance for the model, move it into the step's `note`"
    )]
    OnSkipUnknown {
        /// The value as written.
        given: String,
    },
    /// `steps: []`.
    #[error("`steps: []` declares no procedure; list at least one step, or drop the field")]
    EmptySteps,
    /// A step whose `tool` is missing or blank.
    #[error("the step names no tool; set `tool` to one of the tools the skill carries{}", carried_hint(.carried))]
    StepToolMissing {
        /// The tools the skill carries.
        carried: Vec<String>,
    },
    /// A step whose note is missing or blank.
    #[error(
        "the step's `note` is blank; say in a sentence what the step is for, so the model knows when it is done"
    )]
    StepNoteBlank,
    /// A step that runs a tool the skill does not carry.
    #[error("the step runs tool \"{tool}\", which the skill does not carry{}; add it to `tools` or name a carried tool", carried_hint(.carried))]
    StepToolNotCarried {
        /// The tool the step names.
        tool: String,
        /// The tools the skill carries.
        carried: Vec<String>,
    },
}

fn carried_hint(carried: &[String]) -> String {
    if carried.is_empty() {
        " (it carries none)".to_owned()
    } else {
        format!(" (it carries: {})", carried.join(", "))
    }
}

impl AuthoringFault {
    /// The stable code of the fault, as a check-up problem.
    pub fn code(&self) -> ProblemCode {
        match self {
            AuthoringFault::Vocabulary(err) => match err {
                VocabularyError::NotAList { .. } => ProblemCode::VocabularyNotAList,
                VocabularyError::Empty { .. } => ProblemCode::VocabularyEmpty,
                VocabularyError::NotAKind { .. } => ProblemCode::VocabularyNotAKind,
                VocabularyError::Repeated { .. } => ProblemCode::VocabularyRepeated,
            },
            AuthoringFault::OnSkipWithoutSteps => ProblemCode::OnSkipWithoutSteps,
            AuthoringFault::OnSkipUnknown { .. } => ProblemCode::OnSkipUnknown,
            AuthoringFault::EmptySteps => ProblemCode::EmptySteps,
            AuthoringFault::StepToolMissing { .. } => ProblemCode::StepToolMissing,
            AuthoringFault::StepNoteBlank => ProblemCode::StepNoteBlank,
            AuthoringFault::StepToolNotCarried { .. } => ProblemCode::StepToolNotCarried,
        }
    }
}

/// A refused declaration, located: the skill and, for a step, its number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("skill \"{skill}\"{}: {fault}", step.map(|n| format!(", step {n}")).unwrap_or_default())]
#[non_exhaustive]
pub struct AuthoringError {
    /// The skill's id.
    pub skill: String,
    /// The step (one-based), when the fault is in one.
    pub step: Option<usize>,
    /// What is wrong.
    pub fault: AuthoringFault,
}

impl AuthoringError {
    /// The stable code of the fault, as a check-up problem.
    pub fn code(&self) -> ProblemCode {
        self.fault.code()
    }
}

impl From<AuthoringError> for Problem {
    /// The error as a check-up problem, located at its skill and step.
    fn from(err: AuthoringError) -> Self {
        let problem = Problem::new(err.code(), err.to_string()).about_skill(&err.skill);
        match err.step {
            Some(step) => problem.at_step(step),
            None => problem,
        }
    }
}

/// Every authoring fault of one skill, in declaration order: its own
/// vocabularies, `on_skip`/`steps`, then each step's tool, note and
/// vocabularies.
pub fn authoring_errors(skill: &Skill) -> Vec<AuthoringError> {
    let mut errors = Vec::new();
    let mut push = |step: Option<usize>, fault: AuthoringFault| {
        errors.push(AuthoringError {
            skill: skill.id.clone(),
            step,
            fault,
        });
    };
    for (what, kinds) in [
        (Vocabulary::Produces, &skill.produces),
        (Vocabulary::Consumes, &skill.consumes),
    ] {
        if let Err(err) = assert_kinds(what, kinds.as_deref()) {
            push(None, err.into());
        }
    }
    match &skill.steps {
        None if skill.on_skip.is_some() => push(None, AuthoringFault::OnSkipWithoutSteps),
        Some(steps) if steps.is_empty() => push(None, AuthoringFault::EmptySteps),
        _ => {}
    }
    if let (Some(_), Some(given)) = (&skill.steps, &skill.on_skip)
        && given != "advance"
        && given != "hold"
    {
        push(
            None,
            AuthoringFault::OnSkipUnknown {
                given: given.clone(),
            },
        );
    }
    let carried = || {
        skill
            .tools
            .iter()
            .map(|tool| tool.name.clone())
            .collect::<Vec<_>>()
    };
    for (index, step) in skill.steps().iter().enumerate() {
        let number = Some(index + 1);
        if step.tool.trim_matches(is_space).is_empty() {
            push(
                number,
                AuthoringFault::StepToolMissing { carried: carried() },
            );
        } else if skill.tool(&step.tool).is_none() {
            push(
                number,
                AuthoringFault::StepToolNotCarried {
                    tool: step.tool.clone(),
                    carried: carried(),
                },
            );
        }
        if step.note.trim_matches(is_space).is_empty() {
            push(number, AuthoringFault::StepNoteBlank);
        }
        for (what, kinds) in [
            (Vocabulary::Produces, &step.produces),
            (Vocabulary::Consumes, &step.consumes),
        ] {
            if let Err(err) = assert_kinds(what, kinds.as_deref()) {
                push(number, err.into());
            }
        }
    }
    errors
}

/// Validate one skill's declarations, as an authoring call would.
///
/// # Errors
///
/// The first of [`authoring_errors`].
pub fn validate_skill(skill: &Skill) -> Result<(), AuthoringError> {
    authoring_errors(skill)
        .into_iter()
        .next()
        .map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skill_core::{Step, ToolDecl};

    use super::*;

    fn code(kinds: Value) -> &'static str {
        assert_vocabulary(Vocabulary::Produces, Some(&kinds))
            .err()
            .map_or("ok", |err| err.code())
    }

    #[test]
    fn vocabulary_refusals_in_entry_order() {
        assert_eq!(code(json!(["a", "b"])), "ok");
        assert_eq!(code(json!(3)), "not-a-list");
        assert_eq!(code(json!(null)), "not-a-list");
        assert_eq!(code(json!([])), "empty");
        assert_eq!(code(json!(["a", " \u{feff}"])), "not-a-kind");
        assert_eq!(code(json!(["a", 1])), "not-a-kind");
        assert_eq!(code(json!(["b", "a", "b", ""])), "repeated");
        assert_eq!(
            code(json!(["\u{85}"])),
            "ok",
            "U+0085 is not JavaScript white space"
        );
    }

    #[test]
    fn messages_name_the_field_and_the_fix() {
        let err = assert_vocabulary(Vocabulary::Consumes, Some(&json!([]))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`consumes: []` declares nothing"),
            "{err}"
        );
    }

    #[test]
    fn steps_are_validated_with_their_number() {
        let mut skill = Skill::new("billing");
        skill.tools = vec![ToolDecl::new("refund")];
        skill.steps = Some(vec![
            Step {
                tool: "refund".into(),
                note: "issue it".into(),
                ..Step::default()
            },
            Step {
                tool: "charge".into(),
                note: " ".into(),
                produces: Some(vec![]),
                consumes: None,
            },
        ]);
        let errors = authoring_errors(&skill);
        let codes: Vec<_> = errors.iter().map(|e| (e.step, e.code())).collect();
        assert_eq!(
            codes,
            [
                (Some(2), ProblemCode::StepToolNotCarried),
                (Some(2), ProblemCode::StepNoteBlank),
                (Some(2), ProblemCode::VocabularyEmpty)
            ]
        );
        let problem = Problem::from(errors[0].clone());
        assert_eq!(
            (problem.code(), problem.skill(), problem.step()),
            (ProblemCode::StepToolNotCarried, Some("billing"), Some(2))
        );
        assert_eq!(
            errors[0].to_string(),
            "skill \"billing\", step 2: the step runs tool \"charge\", which the skill does not carry (it carries: refund); add it to `tools` or name a carried tool"
        );
    }

    #[test]
    fn on_skip_needs_steps_and_steps_need_entries() {
        let mut skill = Skill::new("a");
        skill.on_skip = Some("carry on".into());
        assert_eq!(
            validate_skill(&skill).unwrap_err().code(),
            ProblemCode::OnSkipWithoutSteps
        );
        skill.steps = Some(Vec::new());
        assert_eq!(
            validate_skill(&skill).unwrap_err().code(),
            ProblemCode::EmptySteps
        );
    }

    #[test]
    fn on_skip_is_advance_or_hold_and_guidance_goes_into_a_note() {
        let mut skill = Skill::new("a");
        skill.tools = vec![ToolDecl::new("refund")];
        skill.steps = Some(vec![Step {
            tool: "refund".into(),
            note: "refund the order".into(),
            produces: None,
            consumes: None,
        }]);
        skill.on_skip = Some("carry on".into());
        let refused = validate_skill(&skill).unwrap_err();
        assert_eq!(refused.code(), ProblemCode::OnSkipUnknown);
        let said = refused.to_string();
        assert!(
            said.contains("\"carry on\"") && said.contains("`note`"),
            "{said}"
        );
        for known in ["advance", "hold"] {
            skill.on_skip = Some(known.into());
            assert!(validate_skill(&skill).is_ok(), "{known}");
        }
    }
}
