//! The build-time check-up of skill declarations.
//!
//! `skill-checkup` owns what can be said about a declaration before anything
//! runs: authoring validation ([`validate_skill`], [`assert_vocabulary`]),
//! vocabulary satisfiability ([`check_vocabularies`]), the body-delivery
//! refusal ([`tool_only_delivery_refusal`]), the graph check-up of a skill
//! map ([`check_map`], with what it proves about the map's start rules), and
//! the [`Checkup`] that collects every [`Problem`] of every check.
//!
//! It must never do I/O, print or keep global state, and depends on
//! `skill-core` and `skill-guard` only.
//!
//! The key design decision: analyses never stop at the first problem. A
//! check-up returns every finding with a stable code and a message that says
//! what is wrong, why the check can say so, what it cannot see, and the fix;
//! `Result` is kept for single authoring calls that refuse a declaration.
//!
//! ```
//! use skill_checkup::checkup;
//! use skill_core::Skill;
//!
//! let skills: Vec<Skill> = serde_json::from_str(r#"[
//!     { "id": "charting", "consumes": ["dataset/rows"] },
//!     { "id": "billing", "trigger": "rule", "surface_mode": "tool-only", "body": "Refund carefully." }
//! ]"#)?;
//! let report = checkup(&skills);
//! assert!(!report.ok());
//! let codes: Vec<_> = report.problems.iter().map(|p| p.code().as_str()).collect();
//! assert_eq!(codes, ["artifact-kind-unsatisfied", "tool-only-delivered-nowhere"]);
//! # Ok::<(), serde_json::Error>(())
//! ```

mod authoring;
mod code;
mod delivery;
mod foreign_tool;
mod graph;
mod model_edge;
mod problem;
mod procedures;
mod roles;
mod start_rules;
mod tool_names;
mod vocabulary;
mod witnesses;

pub use authoring::{
    AuthoringError, AuthoringFault, Vocabulary, VocabularyError, assert_kinds, assert_vocabulary,
    authoring_errors, validate_skill,
};
pub use code::ProblemCode;
pub use delivery::{Activation, DeliveryRefusal, Offender, tool_only_delivery_refusal};
pub use graph::{check_compiled_map, check_map};
pub use problem::{Checkup, Message, Problem, Severity};
pub use vocabulary::check_vocabularies;

use skill_core::Skill;

/// The problems of a catalog: authoring faults of every skill (errors), the
/// vocabulary warnings, and the body-delivery refusal (an error). Every
/// check runs; none stops at the first finding.
pub fn checkup(skills: &[Skill]) -> Checkup {
    Checkup::from_problems(problems_of(skills))
}

/// The problems [`checkup`] collects, for callers that add their own.
pub fn problems_of(skills: &[Skill]) -> Vec<Problem> {
    let mut problems: Vec<Problem> = skills
        .iter()
        .flat_map(authoring_errors)
        .map(Problem::from)
        .collect();
    problems.extend(check_vocabularies(skills));
    if let Some(refusal) = tool_only_delivery_refusal(skills) {
        problems.push(Problem::new(refusal.code(), refusal.to_string()));
    }
    problems
}
