//! The closed set of problem codes: one home for every code a check-up can
//! report (SPEC §5, §7.3 and §13.4, and the loader's), each with its
//! severity.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::problem::Severity;

/// Declares [`ProblemCode`] from one table: each row is the variant with its
/// documentation, the code as the JSON output spells it, and its severity.
/// The table is the only place a code is spelled, so the list of codes, their
/// spelling and their severity cannot drift apart.
macro_rules! problem_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $code:literal, $severity:ident;)+) => {
        /// What a [`Problem`](crate::Problem) is about: a stable kebab-case
        /// code, serialized as that string. New codes may be added.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ProblemCode {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl ProblemCode {
            /// Every code, in the order of the table in `code.rs`.
            pub const ALL: &'static [ProblemCode] = &[$(ProblemCode::$variant),+];

            /// The code as the JSON output spells it, e.g. `self-loop`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ProblemCode::$variant => $code,)+
                }
            }

            /// The severity every problem with this code has.
            pub fn severity(self) -> Severity {
                match self {
                    $(ProblemCode::$variant => Severity::$severity,)+
                }
            }
        }
    };
}

problem_codes! {
    // The graph check-up (SPEC §7.3).
    /// An entry or a route names an id that is not a skill of the map.
    UnknownSkill = "unknown-skill", Error;
    /// The map has routes but no entry, so a run has nowhere to start (a
    /// plain catalog, with no entries and no routes, needs none).
    NoEntry = "no-entry", Error;
    /// A route's guard does not compile.
    GuardRefused = "guard-refused", Error;
    /// A route's guard provably never passes, given the route's own
    /// preconditions.
    GuardUnsatisfiable = "guard-unsatisfiable", Error;
    /// A `tool-only` skill that something other than `read_skill` activates,
    /// so its body reaches the model through no channel (SPEC §5.3).
    ToolOnlyDeliveredNowhere = "tool-only-delivered-nowhere", Error;
    /// An Agent Skills `SKILL.md` breaks the format's rules as the
    /// reference validator applies them.
    SkillFileInvalid = "skill-file-invalid", Error;
    /// A `SKILL.md` uses the runbook keys `tools` or `routes`, which other
    /// Agent Skills clients refuse; `skillmap.json` can carry the same.
    SkillFileNotPortable = "skill-file-not-portable", Warning;
    /// A route from a skill to itself: it moves nothing.
    SelfLoop = "self-loop", Warning;
    /// A skill that no entry and no route leads to, and that is not open.
    UnreachableSkill = "unreachable-skill", Warning;
    /// Two deterministic routes out of one skill whose preconditions do not
    /// exclude each other, so declaration order alone decides.
    AmbiguousRoutes = "ambiguous-routes", Warning;
    /// A guard's condition that can never decide its guard's verdict.
    RedundantCondition = "redundant-condition", Warning;
    /// A skill that only bare (model) routes lead into: it is reached only
    /// when the model picks it.
    ModelEdgeOnly = "model-edge-only", Warning;
    /// A skill's body names, in backticks, a tool another skill carries and
    /// this one does not, so the model is told to call a tool it will not be
    /// offered while the skill is active.
    BodyForeignTool = "body-foreign-tool", Warning;
    /// A skill's tool whose name hosts refuse (`^[a-zA-Z0-9_-]{1,64}$`).
    UnusableToolName = "unusable-tool-name", Error;
    /// Every way into the skill is a route that can never be taken.
    DeadSkill = "dead-skill", Warning;
    /// A consumed artifact kind that nothing declared can satisfy
    /// (SPEC §5.2).
    ArtifactKindUnsatisfied = "artifact-kind-unsatisfied", Warning;

    // Turn routing: what the check-up proves about start rules (SPEC §13.4).
    /// A start rule's `use` is not a skill of the map.
    RuleUnknownSkill = "rule-unknown-skill", Error;
    /// A start rule's matcher does not compile (SPEC §13.1).
    RuleRefused = "rule-refused", Error;
    /// A start rule's own matcher does not match one of its examples.
    ExampleMissesOwnRule = "example-misses-own-rule", Error;
    /// An earlier start rule matches a later rule's example, so that turn
    /// would start on another skill.
    ExampleShadowedByEarlier = "example-shadowed-by-earlier", Error;
    /// A start rule matches a `never_routes` phrase.
    NeverRoutesClaimed = "never-routes-claimed", Error;
    /// One phrase is both a rule's example and a `never_routes` phrase.
    NeverRoutesContradictsExample = "never-routes-contradicts-example", Error;
    /// A later start rule can never decide: an earlier one matches every
    /// message it matches.
    RulesShadowedByOrder = "rules-shadowed-by-order", Warning;
    /// Two start rules with different targets provably share messages, so
    /// declaration order decides between them.
    OverlappingRules = "overlapping-rules", Warning;
    /// Three or more start rules and neither examples nor `never_routes`:
    /// nothing shows what must not route.
    NoNegativeEvidence = "no-negative-evidence", Warning;
    /// Three or more rule targets, more than half with no route out: a
    /// wrong start can then be left only by a model's pick.
    OneWayEntries = "one-way-entries", Warning;

    // Authoring validation (SPEC §5.1), one code per fault.
    /// A skill's or step's `produces`/`consumes` is not a list.
    VocabularyNotAList = "vocabulary-not-a-list", Error;
    /// A `produces`/`consumes` of `[]`, which declares nothing.
    VocabularyEmpty = "vocabulary-empty", Error;
    /// A vocabulary entry that is not a string, or is blank.
    VocabularyNotAKind = "vocabulary-not-a-kind", Error;
    /// A vocabulary that lists one kind twice.
    VocabularyRepeated = "vocabulary-repeated", Error;
    /// `on_skip` on a skill that declares no steps.
    OnSkipWithoutSteps = "on-skip-without-steps", Error;
    /// `steps: []`, which declares no procedure.
    EmptySteps = "empty-steps", Error;
    /// `on_skip` other than `advance` or `hold`.
    OnSkipUnknown = "on-skip-unknown", Error;
    /// A step that names no tool.
    StepToolMissing = "step-tool-missing", Error;
    /// A step whose note is blank.
    StepNoteBlank = "step-note-blank", Error;
    /// A step that runs a tool its skill does not carry.
    StepToolNotCarried = "step-tool-not-carried", Error;
    /// The map declares steps and a skill carries a tool named
    /// `skip_step`, the session's own.
    SkipStepReserved = "skip-step-reserved", Error;
    /// Steps on a skill the cursor can never stand on.
    StepsNeverHeld = "steps-never-held", Error;
    /// More steps than `budget.max_iterations`.
    StepsExceedBudget = "steps-exceed-budget", Warning;
    /// A limit outside its range, or not a whole number.
    LimitInvalid = "limit-invalid", Error;

    // Roles (SPEC §14.8).
    /// A role hides an id that is no skill of the map.
    RoleUnknownSkill = "role-unknown-skill", Error;
    /// A role hides an entry: its principals start on a later entry, or
    /// nowhere.
    RoleHidesEntry = "role-hides-entry", Warning;

    // Loading a folder (SPEC §7.4).
    /// `skillmap.json` has settings for a skill that has no folder.
    SettingsWithoutSkill = "settings-without-skill", Error;
    /// Two skill folders with one name, so two skills with one id: the
    /// second is left out.
    DuplicateSkill = "duplicate-skill", Error;
    /// A folder below the root that cannot be read, so skills in it are not
    /// loaded.
    UnreadableFolder = "unreadable-folder", Warning;
}

impl ProblemCode {
    /// The code spelled `code`, if there is one.
    pub fn parse(code: &str) -> Option<ProblemCode> {
        ProblemCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == code)
    }
}

impl fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProblemCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_spelling() {
        for &code in ProblemCode::ALL {
            assert_eq!(ProblemCode::parse(code.as_str()), Some(code));
            assert_eq!(code.to_string(), code.as_str());
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
        }
        assert_eq!(ProblemCode::parse("Self-Loop"), None);
        assert_eq!(ProblemCode::parse(""), None);
    }

    #[test]
    fn the_codes_are_the_specs_and_the_loaders() {
        // SPEC §7.3's table, in its order.
        let graph = [
            ("unknown-skill", Severity::Error),
            ("no-entry", Severity::Error),
            ("guard-refused", Severity::Error),
            ("guard-unsatisfiable", Severity::Error),
            ("tool-only-delivered-nowhere", Severity::Error),
            ("skill-file-invalid", Severity::Error),
            ("skill-file-not-portable", Severity::Warning),
            ("self-loop", Severity::Warning),
            ("unreachable-skill", Severity::Warning),
            ("ambiguous-routes", Severity::Warning),
            ("redundant-condition", Severity::Warning),
            ("model-edge-only", Severity::Warning),
            ("body-foreign-tool", Severity::Warning),
            ("unusable-tool-name", Severity::Error),
            ("dead-skill", Severity::Warning),
            ("artifact-kind-unsatisfied", Severity::Warning),
        ];
        // SPEC §13.4's table, in its order.
        let start = [
            ("rule-unknown-skill", Severity::Error),
            ("rule-refused", Severity::Error),
            ("example-misses-own-rule", Severity::Error),
            ("example-shadowed-by-earlier", Severity::Error),
            ("never-routes-claimed", Severity::Error),
            ("never-routes-contradicts-example", Severity::Error),
            ("rules-shadowed-by-order", Severity::Warning),
            ("overlapping-rules", Severity::Warning),
            ("no-negative-evidence", Severity::Warning),
            ("one-way-entries", Severity::Warning),
        ];
        // SPEC §5.1's authoring faults, each an error.
        let authoring = [
            "vocabulary-not-a-list",
            "vocabulary-empty",
            "vocabulary-not-a-kind",
            "vocabulary-repeated",
            "on-skip-without-steps",
            "empty-steps",
            "on-skip-unknown",
            "step-tool-missing",
            "step-note-blank",
            "step-tool-not-carried",
            // SPEC §15.7's map-wide procedure codes.
            "skip-step-reserved",
            "steps-never-held",
        ]
        .map(|code| (code, Severity::Error))
        .into_iter()
        .chain([
            ("steps-exceed-budget", Severity::Warning),
            ("limit-invalid", Severity::Error),
        ])
        .collect::<Vec<_>>();
        // SPEC §14.8's role codes.
        let roles = [
            ("role-unknown-skill", Severity::Error),
            ("role-hides-entry", Severity::Warning),
        ];
        // The loader's own.
        let loader = [
            ("settings-without-skill", Severity::Error),
            ("duplicate-skill", Severity::Error),
            ("unreadable-folder", Severity::Warning),
        ];
        let expected: Vec<_> = graph
            .iter()
            .chain(&start)
            .chain(&authoring)
            .chain(&roles)
            .chain(&loader)
            .collect();
        let actual: Vec<_> = ProblemCode::ALL
            .iter()
            .map(|code| (code.as_str(), code.severity()))
            .collect();
        assert_eq!(actual, expected.into_iter().copied().collect::<Vec<_>>());
    }
}
