//! Vocabulary satisfiability: does anything on this agent claim to make what
//! a consumer claims to need? A warning per unsatisfied kind, never an error,
//! because the check reads declarations only.

use skill_core::{IdHashSet, Skill};

use crate::code::ProblemCode;
use crate::problem::{Problem, Sheet, Span};

/// What every warning says about the limits of the check.
const BOUNDARY: &str = "This check reads declarations only. It cannot see a tool that makes an \
artifact without declaring `produces`, an artifact stored by an earlier run, another agent or an outside \
job, nor the order routes run in: a producer declared anywhere on this agent is enough to satisfy it. If \
the kind really arrives from outside, give the skill a tool that `wants` it (that is how an artifact is \
redeemed at dispatch), or drop the declaration.";

/// Check every declared vocabulary of `skills` (only the `skill` flavor).
///
/// A consumed kind is satisfied by any `produces` of any skill or step, or
/// by a `wants` of one of the consumer's own tools; a step's consumed kind
/// also by an earlier step of its skill (a producer like any other), by the
/// `wants` of the tool it runs, or by its skill's own `consumes`. One
/// warning per unsatisfied kind: skills in order, each skill's own
/// `consumes` first, then its steps. With nothing consumed anywhere the
/// check costs one pass and finds nothing.
///
/// The skills are walked twice, no more: at 5,000 skills they do not fit in
/// the cache, and each walk reads them from memory again.
pub fn check_vocabularies(skills: &[Skill]) -> Vec<Problem> {
    let skills = || skills.iter().filter(|s| s.flavor.is_skill());
    let Some(mut check) = Check::new(skills()) else {
        return Vec::new();
    };
    for skill in skills() {
        check.own_consumes(skill);
        check.steps(skill);
    }
    check.sheet.into_problems()
}

/// The second walk of the check: what the agent produces, the paragraphs
/// the warnings share, per-skill scratch, and the warnings so far.
struct Check<'a> {
    /// Every kind any skill or step declares it produces.
    produced: IdHashSet<&'a str>,
    /// Where the paragraph is that ends every warning about a skill's own
    /// `consumes`, and the one that ends every warning about a step's: why
    /// nothing satisfies the kind, what is produced, what the check cannot
    /// see. Each is written once, at the head of the warnings' text.
    skill_tail: Span,
    step_tail: Span,
    /// The kinds the current skill's tools `want`. A skill's set is a
    /// handful of kinds, so a scan beats hashing; the vector is reused from
    /// skill to skill.
    wants: Vec<&'a str>,
    /// The warnings so far, written into the text they share.
    sheet: Sheet,
}

impl<'a> Check<'a> {
    /// The first walk: what the skills produce, and how many kinds they
    /// consume (at most one warning each: reserved, never regrown). None
    /// when nothing is consumed, so nothing can be unsatisfied.
    fn new(skills: impl Iterator<Item = &'a Skill>) -> Option<Self> {
        let mut produced: IdHashSet<&str> = IdHashSet::default();
        let mut most = 0;
        for skill in skills {
            produced.extend(kinds(&skill.produces));
            most += kinds(&skill.consumes).count();
            for step in skill.steps() {
                produced.extend(kinds(&step.produces));
                most += kinds(&step.consumes).count();
            }
        }
        if most == 0 {
            return None;
        }
        let (skill_tail, step_tail) = tails(&produced);
        let code = ProblemCode::ArtifactKindUnsatisfied;
        let (sheet, tails) = Sheet::new(code, &[&skill_tail, &step_tail], most);
        Some(Check {
            produced,
            skill_tail: tails[0],
            step_tail: tails[1],
            wants: Vec::new(),
            sheet,
        })
    }

    /// A warning for each kind of the skill's own `consumes` that nothing
    /// produces and none of its tools `wants`.
    fn own_consumes(&mut self, skill: &'a Skill) {
        self.wants.clear();
        self.wants
            .extend(skill.tools.iter().flat_map(|tool| tool.want_kinds()));
        for kind in kinds(&skill.consumes) {
            if self.produced.contains(kind) || self.wants.contains(&kind) {
                continue;
            }
            self.sheet
                .say("Skill \"")
                .skill(&skill.id)
                .say("\" consumes '")
                .kind(kind)
                .say("'.")
                .finish(None, self.skill_tail);
        }
    }

    /// A warning for each kind a step consumes that nothing before it
    /// provides: no producer on the agent (an earlier step of the skill is
    /// one), not the `wants` of the tool it runs, not its skill's own
    /// `consumes`.
    fn steps(&mut self, skill: &'a Skill) {
        for (index, step) in skill.steps().iter().enumerate() {
            for kind in kinds(&step.consumes) {
                let satisfied = self.produced.contains(kind)
                    || skill
                        .tool(&step.tool)
                        .is_some_and(|tool| tool.want_kinds().any(|k| k == kind))
                    || kinds(&skill.consumes).any(|own| own == kind);
                if satisfied {
                    continue;
                }
                let number = index + 1;
                self.sheet
                    .say("Step ")
                    .say_number(number)
                    .say(" of skill \"")
                    .skill(&skill.id)
                    .say("\" (tool '")
                    .tool(&step.tool)
                    .say("') consumes '")
                    .kind(kind)
                    .say("'.")
                    .finish(Some(number), self.step_tail);
            }
        }
    }
}

/// The kinds of a declaration (none when it is absent).
fn kinds(list: &Option<Vec<String>>) -> impl Iterator<Item = &str> {
    list.iter().flatten().map(String::as_str)
}

/// The paragraphs that end a warning about a skill's own `consumes` and one
/// about a step's: why nothing satisfies the kind, what is produced, what
/// the check cannot see.
fn tails(produced: &IdHashSet<&str>) -> (String, String) {
    let clause = produced_clause(produced);
    let skill_tail = format!(
        "No skill and no step on this agent declares that it produces it, and none of the skill's tools \
         `wants` it, so every reference the model makes to such an artifact will find none in scope. \
         {clause} {BOUNDARY}"
    );
    let step_tail = format!(
        "Nothing that can come before the step declares that it produces it: no earlier step of the skill, \
         no skill on this agent, and the skill does not list it in its own `consumes` (which is how a step \
         says the kind arrives from outside). {clause} {BOUNDARY}"
    );
    (skill_tail, step_tail)
}

/// The sentence naming what the agent does declare it produces: a check is
/// corrected by naming what exists, never only by saying what does not.
fn produced_clause(produced: &IdHashSet<&str>) -> String {
    if produced.is_empty() {
        return "Nothing on this agent declares `produces` at all.".to_owned();
    }
    let mut listed: Vec<&str> = produced.iter().copied().collect();
    listed.sort_unstable();
    let quoted: Vec<String> = listed.iter().map(|kind| format!("'{kind}'")).collect();
    let spoken = match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.join(""),
    };
    format!("The kinds this agent declares it produces are {spoken}.")
}

#[cfg(test)]
mod tests {
    use skill_core::{Flavor, Step, ToolDecl};

    use super::*;

    fn skill(id: &str) -> Skill {
        Skill::new(id)
    }

    fn found(problems: &[Problem]) -> Vec<(String, Option<usize>, String)> {
        problems
            .iter()
            .map(|p| {
                (
                    p.skill().unwrap_or_default().to_owned(),
                    p.step(),
                    p.kind().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn nothing_declared_means_nothing_to_say() {
        assert!(check_vocabularies(&[skill("a"), skill("b")]).is_empty());
    }

    #[test]
    fn producers_wants_earlier_steps_and_own_consumes_satisfy() {
        let mut charting = skill("charting");
        charting.consumes = Some(vec![
            "dataset/rows".into(),
            "style/sheet".into(),
            "token".into(),
        ]);
        charting.tools = vec![ToolDecl {
            name: "render".into(),
            wants: [("t".to_owned(), "token".to_owned())].into(),
        }];
        charting.steps = Some(vec![
            Step {
                tool: "render".into(),
                note: "n".into(),
                produces: Some(vec!["draft".into()]),
                consumes: Some(vec!["style/sheet".into(), "ghost".into()]),
            },
            Step {
                tool: "render".into(),
                note: "n".into(),
                produces: None,
                consumes: Some(vec!["draft".into(), "ghost".into()]),
            },
        ]);
        let mut fetcher = skill("fetcher");
        fetcher.produces = Some(vec!["dataset/rows".into()]);
        let mut rag = skill("rag");
        rag.flavor = Flavor::Other("rag".into());
        rag.produces = Some(vec!["style/sheet".into()]);
        let problems = check_vocabularies(&[charting, fetcher, rag]);
        assert_eq!(
            found(&problems),
            [
                ("charting".to_owned(), None, "style/sheet".to_owned()),
                ("charting".to_owned(), Some(1), "ghost".to_owned()),
                ("charting".to_owned(), Some(2), "ghost".to_owned()),
            ]
        );
        assert!(
            problems
                .iter()
                .all(|p| p.code() == ProblemCode::ArtifactKindUnsatisfied && !p.is_error())
        );
        let message = problems[1].message();
        assert!(
            message.contains("Step 1 of skill \"charting\" (tool 'render')"),
            "{message}"
        );
        assert!(
            message.contains("are 'dataset/rows' and 'draft'."),
            "{message}"
        );
        let first = problems[0].message().to_string();
        assert!(
            first.starts_with("Skill \"charting\" consumes 'style/sheet'. No skill and no step"),
            "{first}"
        );
        assert!(
            first.contains("This check reads declarations only"),
            "{first}"
        );
    }
}
