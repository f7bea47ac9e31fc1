//! What the check-up proves about a map's start rules (SPEC §13.4): rules
//! that start nowhere or do not compile, examples their own rule misses or an
//! earlier rule takes, `never_routes` phrases a rule claims, rules an earlier
//! one shadows or overlaps, and start blocks with no evidence or with
//! entries a wrong start cannot leave. Every claim is proven from the rules
//! alone: by running a matcher on the phrase it names (a matcher that gives
//! up proves nothing), or by comparing matchers as written.

use serde_json::Value;
use skill_core::{IdHashSet, SkillMap, Start, StartRule};
use skill_guard::start::{MAX_STEPS, Matcher, MatcherPart, Message, Outcome, RuleError, rule_name};

use crate::code::ProblemCode;
use crate::graph::listed;
use crate::problem::{Problem, quoted_list};

/// One declared rule with its matcher, compiled once.
struct Checked<'m> {
    at: usize,
    rule: &'m StartRule,
    compiled: Result<Matcher, RuleError>,
}

impl Checked<'_> {
    /// The matcher, unless it was refused: the checks that need it skip a
    /// refused rule.
    fn matcher(&self) -> Option<&Matcher> {
        self.compiled.as_ref().ok()
    }

    /// `start.rules[N]`, then `('label')` when the rule has one.
    fn name(&self) -> String {
        rule_name(self.at, self.rule.label.as_deref())
    }

    /// `start.rules[N]`, the short form a fix names the rule by.
    fn place(&self) -> String {
        format!("start.rules[{}]", self.at)
    }

    fn target(&self) -> &str {
        &self.rule.use_skill
    }

    /// The witness when the rule's matcher provably matches `message`.
    fn matches(&self, message: &Message) -> Option<String> {
        match self.matcher()?.find(message) {
            Outcome::Matched(witness) => Some(witness),
            _ => None,
        }
    }
}

/// Every problem of the map's start block, in this order: unknown targets
/// and refused matchers (rule by rule), examples their own rule misses or an
/// earlier rule takes, `never_routes` phrases a rule claims or an example
/// repeats, rules shadowed by order, overlapping rules, then the two
/// warnings about the block as a whole. A map with no start block has none.
pub(crate) fn start_rules(map: &SkillMap) -> Vec<Problem> {
    let Some(start) = &map.start else {
        return Vec::new();
    };
    let known: IdHashSet<&str> = map.skills.iter().map(|s| s.id.as_str()).collect();
    let rules: Vec<Checked<'_>> = start
        .rules
        .iter()
        .enumerate()
        .map(|(at, rule)| Checked {
            at,
            rule,
            compiled: Matcher::compile(&rule.matcher),
        })
        .collect();
    let mut problems = Vec::new();
    declared(map, &known, &rules, &mut problems);
    examples(&rules, &mut problems);
    never_routes(start, &rules, &mut problems);
    let shadowed = shadowed_by_order(&rules, &mut problems);
    overlapping(&rules, &shadowed, &mut problems);
    no_negative_evidence(start, &mut problems);
    one_way_entries(map, &known, &mut problems);
    problems
}

/// A phrase as a message quotes it: a JSON string, so quotes and line
/// breaks in it stay visible.
fn quoted(phrase: &str) -> String {
    Value::String(phrase.to_owned()).to_string()
}

/// `rule-unknown-skill` and `rule-refused`, rule by rule.
fn declared(
    map: &SkillMap,
    known: &IdHashSet<&str>,
    rules: &[Checked<'_>],
    problems: &mut Vec<Problem>,
) {
    for rule in rules {
        let target = rule.target();
        if !known.contains(target) {
            let ids: Vec<&str> = map.skills.iter().map(|s| s.id.as_str()).collect();
            let message = format!(
                "{} starts a turn on \"{target}\", which is not a skill of this map, so a message it matches \
                 would start nowhere. Add a skill with id \"{target}\", or correct the rule's `use` to one of: \
                 {}.",
                rule.name(),
                listed(&ids)
            );
            problems.push(Problem::new(ProblemCode::RuleUnknownSkill, message).about_skill(target));
        }
        if let Err(error) = &rule.compiled {
            let message = format!(
                "{}'s matcher is refused: {error}. A map with a refused rule cannot start turns by rule; fix \
                 the matcher as SPEC §13.1 describes. Until it compiles, the checks of examples, never_routes \
                 phrases and overlaps pass this rule by.",
                rule.name()
            );
            problems.push(Problem::new(ProblemCode::RuleRefused, message).about_skill(target));
        }
    }
}

/// `example-misses-own-rule` and `example-shadowed-by-earlier`: each example
/// is tried on its own rule, and on the rules before it, as a turn would
/// try them.
fn examples(rules: &[Checked<'_>], problems: &mut Vec<Problem>) {
    for (later, rule) in rules.iter().enumerate() {
        let Some(own) = rule.matcher() else {
            continue;
        };
        for example in &rule.rule.examples {
            let message = Message::new(example);
            match own.find(&message) {
                Outcome::Missed => problems.push(misses_own_rule(rule, example)),
                Outcome::GaveUp => problems.push(gave_up_on_own_example(rule, example)),
                _ => {}
            }
            // The first earlier rule that matches decides the turn; one that
            // gives up does not decide, and the turn goes on to the next.
            let decider = rules[..later]
                .iter()
                .find_map(|earlier| Some((earlier, earlier.matches(&message)?)));
            if let Some((earlier, witness)) = decider
                && earlier.target() != rule.target()
            {
                problems.push(shadowed_example(earlier, rule, example, &witness));
            }
        }
    }
}

fn misses_own_rule(rule: &Checked<'_>, example: &str) -> Problem {
    let message = format!(
        "{} does not match its own example {}, so that message would not start on \"{}\" by this rule. Widen \
         {}'s matcher to match it, or correct the example.",
        rule.name(),
        quoted(example),
        rule.target(),
        rule.place()
    );
    Problem::new(ProblemCode::ExampleMissesOwnRule, message).about_skill(rule.target())
}

fn gave_up_on_own_example(rule: &Checked<'_>, example: &str) -> Problem {
    let message = format!(
        "{} gave up on its own example {}: its regex needed more backtracking than the bound allows \
         ({MAX_STEPS} steps), so whether it \
         matches is not known and the rule does not decide that turn. Simplify the pattern (a repetition \
         inside a repetition, such as `(a+)+`, backtracks without end), or correct the example.",
        rule.name(),
        quoted(example)
    );
    Problem::new(ProblemCode::ExampleMissesOwnRule, message).about_skill(rule.target())
}

fn shadowed_example(
    earlier: &Checked<'_>,
    later: &Checked<'_>,
    example: &str,
    witness: &str,
) -> Problem {
    let message = format!(
        "{}'s example {} is matched first by {} (on {}), so, for a session that sees both skills, that message starts on \"{}\", not on \"{}\". \
         Reorder the rules or narrow {}'s matcher, or correct the example.",
        later.name(),
        quoted(example),
        earlier.name(),
        quoted(witness),
        earlier.target(),
        later.target(),
        earlier.place()
    );
    Problem::new(ProblemCode::ExampleShadowedByEarlier, message).about_skill(later.target())
}

/// `never-routes-claimed` (the first rule that matches the phrase, which is
/// the one that would decide) and `never-routes-contradicts-example`, each
/// phrase once.
fn never_routes(start: &Start, rules: &[Checked<'_>], problems: &mut Vec<Problem>) {
    let mut seen = IdHashSet::default();
    for phrase in start
        .never_routes
        .iter()
        .filter(|p| seen.insert(p.as_str()))
    {
        let message = Message::new(phrase);
        let claimed = rules
            .iter()
            .find_map(|rule| Some((rule, rule.matches(&message)?)));
        if let Some((rule, witness)) = claimed {
            let text = format!(
                "{} matches the never_routes phrase {} (on {}), so that message would start on \"{}\" though \
                 the map says it must start nowhere. Narrow {}'s matcher, or drop the phrase from never_routes.",
                rule.name(),
                quoted(phrase),
                quoted(&witness),
                rule.target(),
                rule.place()
            );
            problems.push(
                Problem::new(ProblemCode::NeverRoutesClaimed, text).about_skill(rule.target()),
            );
        }
        let owners: Vec<&Checked<'_>> = rules
            .iter()
            .filter(|rule| rule.rule.examples.iter().any(|e| e == phrase))
            .collect();
        if let Some(first) = owners.first() {
            let names: Vec<String> = owners.iter().map(|rule| rule.name()).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let text = format!(
                "{} is a never_routes phrase and an example of {}: the map says that message must start \
                 nowhere and that it must start on \"{}\". Drop it from never_routes or from the examples.",
                quoted(phrase),
                and_list(&names),
                first.target()
            );
            problems.push(
                Problem::new(ProblemCode::NeverRoutesContradictsExample, text)
                    .about_skill(first.target()),
            );
        }
    }
}

/// Names joined with commas and `and` before the last.
fn and_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// Whether two keywords stand for the same expression: equal but for the
/// case of ASCII letters. Only ASCII case is folded: ECMAScript's `i`
/// without `u` does not fold every pair Unicode lowercasing does (`k` does
/// not match the Kelvin sign `K`), so a wider comparison could claim a
/// shadow that is not there.
fn same_keyword(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether the part `earlier` matches every message the part `later`
/// matches, as written: one regex with the same flags, or keywords that
/// hold every keyword of `later`.
fn covers(earlier: &MatcherPart<'_>, later: &MatcherPart<'_>) -> bool {
    match (earlier, later) {
        (
            MatcherPart::Regex {
                source: a,
                flags: fa,
            },
            MatcherPart::Regex {
                source: b,
                flags: fb,
            },
        ) => a == b && same_flags(fa, fb),
        (MatcherPart::Keywords(wide), MatcherPart::Keywords(narrow)) => narrow
            .iter()
            .all(|n| wide.iter().any(|w| same_keyword(w, n))),
        _ => false,
    }
}

/// Whether two kept flag strings hold the same flags (in any order).
fn same_flags(a: &str, b: &str) -> bool {
    let sorted = |flags: &str| {
        let mut flags: Vec<char> = flags.chars().collect();
        flags.sort_unstable();
        flags
    };
    sorted(a) == sorted(b)
}

/// Why `earlier` matches every message `later` matches, when it provably
/// does: every part of `earlier`'s matcher covers a part of `later`'s (a
/// message `later` matches passes each part of `later`, so each part of
/// `earlier`). The reason names the witness: the regex, the keywords, or
/// the parts.
fn shadow(earlier: &Matcher, later: &Matcher, earlier_place: &str) -> Option<String> {
    let wide: Vec<MatcherPart<'_>> = earlier.parts().collect();
    let narrow: Vec<MatcherPart<'_>> = later.parts().collect();
    let proven = wide.iter().all(|w| narrow.iter().any(|n| covers(w, n)));
    if !proven {
        return None;
    }
    Some(match (wide.as_slice(), narrow.as_slice()) {
        ([MatcherPart::Regex { source, flags }], [MatcherPart::Regex { .. }]) => format!(
            "both are the regex {} with the flags \"{flags}\"",
            quoted(source)
        ),
        ([MatcherPart::Keywords(_)], [MatcherPart::Keywords(words)]) => {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let (noun, verb) = if words.len() == 1 {
                ("keyword", "is")
            } else {
                ("keywords", "are all")
            };
            format!(
                "its {noun} {} {verb} among {earlier_place}'s, compared case-insensitively",
                quoted_list(&words, "and")
            )
        }
        _ if narrow.len() > 1 => format!(
            "it is an `all`, and every part of {earlier_place}'s matcher ({}) matches whatever one of its \
             parts matches",
            described(&wide)
        ),
        _ => format!(
            "every part of {earlier_place}'s matcher ({}) matches whatever it matches",
            described(&wide)
        ),
    })
}

/// Parts as a message names them: `regex "…" (flags "…")`, `keywords "…"`.
fn described(parts: &[MatcherPart<'_>]) -> String {
    let each: Vec<String> = parts
        .iter()
        .map(|part| match part {
            MatcherPart::Regex { source, flags: "" } => {
                format!("regex {}", quoted(source))
            }
            MatcherPart::Regex { source, flags } => {
                format!("regex {} with the flags \"{flags}\"", quoted(source))
            }
            MatcherPart::Keywords(words) => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                format!("keywords {}", quoted_list(&words, "or"))
            }
            _ => "a part".to_owned(),
        })
        .collect();
    each.join("; ")
}

/// `rules-shadowed-by-order`: each later rule once, with the first earlier
/// rule that matches every message it matches, whatever their targets.
/// The pairs reported, (earlier, later).
fn shadowed_by_order(rules: &[Checked<'_>], problems: &mut Vec<Problem>) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for (later, rule) in rules.iter().enumerate() {
        let Some(narrow) = rule.matcher() else {
            continue;
        };
        let found = rules[..later].iter().find_map(|earlier| {
            let wide = earlier.matcher()?;
            Some((earlier, shadow(wide, narrow, &earlier.place())?))
        });
        let Some((earlier, reason)) = found else {
            continue;
        };
        pairs.push((earlier.at, rule.at));
        let message = format!(
            "{} can never decide a turn for a session that sees both skills: {} comes first and matches every message it matches ({reason}). \
             Reorder the rules or narrow {}'s matcher, or drop {}.",
            rule.name(),
            earlier.name(),
            earlier.place(),
            rule.place()
        );
        problems.push(
            Problem::new(ProblemCode::RulesShadowedByOrder, message).about_skill(rule.target()),
        );
    }
    pairs
}

/// `overlapping-rules`: two rules with different targets that both match
/// one of their keywords, taken whole as a message (the run proves it), each
/// pair once and not again when one shadows the other.
fn overlapping(rules: &[Checked<'_>], shadowed: &[(usize, usize)], problems: &mut Vec<Problem>) {
    for (later, rule) in rules.iter().enumerate() {
        for earlier in &rules[..later] {
            if earlier.target() == rule.target() || shadowed.contains(&(earlier.at, rule.at)) {
                continue;
            }
            let Some((keyword, owner)) = shared_keyword(earlier, rule) else {
                continue;
            };
            let message = format!(
                "{} and {} both match {} (a keyword of {}) and start on different skills (\"{}\" and \"{}\"): \
                 declaration order decides, so such a message always starts on \"{}\". If that is what you \
                 mean, leave it; otherwise narrow one of the matchers so they no longer share it.",
                earlier.name(),
                rule.name(),
                quoted(keyword),
                owner.place(),
                earlier.target(),
                rule.target(),
                earlier.target()
            );
            problems.push(
                Problem::new(ProblemCode::OverlappingRules, message).about_skill(rule.target()),
            );
        }
    }
}

/// A keyword of `a` or `b` that both rules match, taken whole as a message,
/// and the rule it is a keyword of.
fn shared_keyword<'r, 'm>(
    a: &'r Checked<'m>,
    b: &'r Checked<'m>,
) -> Option<(&'r str, &'r Checked<'m>)> {
    for owner in [a, b] {
        for part in owner.matcher()?.parts() {
            let MatcherPart::Keywords(words) = part else {
                continue;
            };
            for word in words {
                let message = Message::new(word);
                if a.matches(&message).is_some() && b.matches(&message).is_some() {
                    return Some((word.as_str(), owner));
                }
            }
        }
    }
    None
}

/// `no-negative-evidence`: three or more rules, and no example and no
/// `never_routes` phrase anywhere.
fn no_negative_evidence(start: &Start, problems: &mut Vec<Problem>) {
    let count = start.rules.len();
    let silent = start.never_routes.is_empty() && start.rules.iter().all(|r| r.examples.is_empty());
    if count < 3 || !silent {
        return;
    }
    let message = format!(
        "The map's {count} start rules have no examples and the start block no never_routes phrases, so \
         nothing shows which messages must start where, or which must start nowhere, and the check-up can \
         prove nothing about what the rules catch. Give each rule `examples`, and list under `never_routes` \
         phrases that must not route (greetings, thanks)."
    );
    problems.push(Problem::new(ProblemCode::NoNegativeEvidence, message));
}

/// `one-way-entries`: three or more distinct rule targets that are skills
/// of the map, and more than half of them with no route out (a route from
/// the target to another skill).
fn one_way_entries(map: &SkillMap, known: &IdHashSet<&str>, problems: &mut Vec<Problem>) {
    let Some(start) = &map.start else {
        return;
    };
    let mut seen = IdHashSet::default();
    let targets: Vec<&str> = start
        .rules
        .iter()
        .map(|r| r.use_skill.as_str())
        .filter(|t| known.contains(t) && seen.insert(*t))
        .collect();
    let leaves: IdHashSet<&str> = map
        .routes
        .iter()
        .filter(|r| r.from != r.to)
        .map(|r| r.from.as_str())
        .collect();
    let one_way: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| !leaves.contains(t))
        .collect();
    if targets.len() < 3 || one_way.len() * 2 <= targets.len() {
        return;
    }
    let how_many = if one_way.len() == targets.len() {
        format!("all {}", one_way.len())
    } else {
        format!("{} of them", one_way.len())
    };
    let message = format!(
        "Start rules send turns to {} skills, and {how_many} ({}) have no route out, so a turn a rule starts \
         on the wrong one can be left only when the model picks another skill with read_skill. Add routes \
         out of them (back to a triage skill, for instance) so that the map can correct a wrong start; if a \
         model's pick is what you mean, leave it.",
        targets.len(),
        quoted_list(&one_way, "and")
    );
    problems.push(Problem::new(ProblemCode::OneWayEntries, message));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The problems of a map with these skills, routes and start block.
    fn found(skills: &[&str], routes: Value, start: Value) -> Vec<Problem> {
        let skills: Vec<Value> = skills.iter().map(|id| json!({ "id": id })).collect();
        let map: SkillMap = serde_json::from_value(json!({
            "skills": skills, "routes": routes, "start": start
        }))
        .unwrap();
        start_rules(&map)
    }

    /// The problems of `code` among `problems`, as their messages.
    fn of(problems: &[Problem], code: ProblemCode) -> Vec<String> {
        problems
            .iter()
            .filter(|p| p.code() == code)
            .map(|p| p.message().to_string())
            .collect()
    }

    fn codes(problems: &[Problem]) -> Vec<&'static str> {
        problems.iter().map(|p| p.code().as_str()).collect()
    }

    const SKILLS: &[&str] = &["triage", "refunds", "shipping", "billing"];

    /// Routes out of every skill, so that `one-way-entries` stays quiet.
    fn ways_out() -> Value {
        json!([
            {"from": "triage", "to": "refunds"},
            {"from": "refunds", "to": "triage"},
            {"from": "shipping", "to": "triage"},
            {"from": "billing", "to": "triage"}
        ])
    }

    #[test]
    fn silent_on_a_clean_map() {
        let start = json!({
            "rules": [
                {"use": "refunds", "match": {"keywords": ["refund", "money back"]},
                 "examples": ["I want a refund for order 4412", "can I get my MONEY back?"],
                 "label": "refund words"},
                {"use": "shipping", "match": {"regex": "\\b(parcel|package)s?\\b", "flags": "i"},
                 "examples": ["Where is my package?"]},
                {"use": "billing", "match": {"all": [{"keywords": ["invoice"]}, {"regex": "\\d{4,}"}]},
                 "examples": ["invoice 20931 is wrong"], "label": "invoice numbers"}
            ],
            "never_routes": ["thanks", "hello there", "invoice please"]
        });
        let problems = found(SKILLS, ways_out(), start);
        assert!(problems.is_empty(), "{problems:#?}");
        // No start block, no problem.
        let map: SkillMap = serde_json::from_value(json!({"skills": [{"id": "a"}]})).unwrap();
        assert!(start_rules(&map).is_empty());
    }

    #[test]
    fn a_rule_to_an_unknown_skill_names_it_and_the_skills() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [{"use": "ghost", "match": {"keywords": ["boo"]}, "label": "spooky",
                              "examples": ["boo"]}]}),
        );
        assert_eq!(codes(&problems), ["rule-unknown-skill"]);
        let message = problems[0].message().to_string();
        assert!(
            message.starts_with("start.rules[0] ('spooky') starts a turn on \"ghost\""),
            "{message}"
        );
        assert!(
            message.contains("one of: triage, refunds, shipping, billing."),
            "{message}"
        );
        assert_eq!(problems[0].skill(), Some("ghost"));
    }

    #[test]
    fn a_refused_matcher_carries_the_engines_reason_and_skips_its_checks() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({
                "rules": [
                    {"use": "refunds", "match": {"keywords": ["refund"]}, "examples": ["refund"]},
                    {"use": "shipping", "match": {"regex": "(parcel"}, "examples": ["no match here"]}
                ],
                "never_routes": ["parcel"]
            }),
        );
        assert_eq!(codes(&problems), ["rule-refused"]);
        let message = problems[0].message().to_string();
        assert!(
            message.starts_with(
                "start.rules[1]'s matcher is refused: regex \"(parcel\" does not compile: "
            ),
            "{message}"
        );
        assert!(
            message.contains("write an ECMAScript regular expression"),
            "{message}"
        );
        // A blank keyword in an `all` is refused with its place.
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [{"use": "billing", "match": {"all": [{"keywords": [" "]}]}}]}),
        );
        let refused = of(&problems, ProblemCode::RuleRefused);
        assert!(
            refused[0].contains("all[0]: keywords[0] is blank"),
            "{refused:?}"
        );
    }

    #[test]
    fn an_example_its_own_rule_misses_is_named() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [
                {"use": "refunds", "match": {"keywords": ["refund"]},
                 "examples": ["I want a refund", "refunds please"], "label": "refund words"}
            ]}),
        );
        assert_eq!(codes(&problems), ["example-misses-own-rule"]);
        let message = problems[0].message().to_string();
        assert!(
            message.starts_with(
                "start.rules[0] ('refund words') does not match its own example \"refunds please\""
            ),
            "{message}"
        );
        assert!(
            message.contains("Widen start.rules[0]'s matcher"),
            "{message}"
        );
    }

    #[test]
    fn an_example_its_own_rule_gives_up_on_is_reported_as_missed() {
        let example = format!("{}b", "a".repeat(40));
        let problems = found(
            SKILLS,
            ways_out(),
            json!({
                "rules": [{"use": "refunds", "match": {"regex": "(a+)+$"}, "examples": [example]}],
                "never_routes": [example]
            }),
        );
        // The phrase repeats the example; the rule's giving up claims nothing.
        assert_eq!(
            codes(&problems),
            [
                "example-misses-own-rule",
                "never-routes-contradicts-example"
            ]
        );
        let message = problems[0].message().to_string();
        assert!(
            message.starts_with("start.rules[0] gave up on its own example \"aaaa"),
            "{message}"
        );
        assert!(message.contains("(10000000 steps)"), "{message}");
    }

    #[test]
    fn an_example_an_earlier_rule_takes_names_both_rules_and_the_witness() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [
                {"use": "refunds", "match": {"keywords": ["order"]}, "label": "orders"},
                {"use": "refunds", "match": {"keywords": ["money"]}},
                {"use": "shipping", "match": {"keywords": ["parcel"]},
                 "examples": ["my ORDER never came, where is the parcel"]}
            ]}),
        );
        assert_eq!(codes(&problems), ["example-shadowed-by-earlier"]);
        let message = problems[0].message().to_string();
        assert!(
            message.starts_with(
                "start.rules[2]'s example \"my ORDER never came, where is the parcel\" is matched first by \
                 start.rules[0] ('orders') (on \"ORDER\"), so, for a session that sees both skills, that message starts on \"refunds\", not on \
                 \"shipping\"."
            ),
            "{message}"
        );
        assert!(
            message.contains("Reorder the rules or narrow start.rules[0]'s matcher"),
            "{message}"
        );
        assert_eq!(problems[0].skill(), Some("shipping"));
    }

    #[test]
    fn an_earlier_rule_with_the_same_target_does_not_take_an_example() {
        // rules[0] matches rules[1]'s example, but both start on "refunds":
        // the turn does not start elsewhere.
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [
                {"use": "refunds", "match": {"keywords": ["refund"]}},
                {"use": "refunds", "match": {"keywords": ["money back"]},
                 "examples": ["refund, or my money back"]}
            ]}),
        );
        assert!(problems.is_empty(), "{problems:#?}");
        // The first earlier rule to match decides: a same-target rule first
        // hides a later different-target one.
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [
                {"use": "refunds", "match": {"keywords": ["refund"]}},
                {"use": "billing", "match": {"keywords": ["charge"]}},
                {"use": "refunds", "match": {"keywords": ["money back"]},
                 "examples": ["refund this charge, money back"]}
            ]}),
        );
        assert!(
            of(&problems, ProblemCode::ExampleShadowedByEarlier).is_empty(),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_never_routes_phrase_a_rule_matches_names_the_first_such_rule() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({
                "rules": [
                    {"use": "shipping", "match": {"keywords": ["parcel"]}},
                    {"use": "refunds", "match": {"regex": "than(k|x)", "flags": "i"}, "label": "gratitude"},
                    {"use": "billing", "match": {"keywords": ["thanks"]}}
                ],
                "never_routes": ["Thanks  a lot", "hello there", "Thanks  a lot"]
            }),
        );
        let claimed = of(&problems, ProblemCode::NeverRoutesClaimed);
        assert_eq!(claimed.len(), 1, "{problems:#?}");
        assert!(
            claimed[0].starts_with(
                "start.rules[1] ('gratitude') matches the never_routes phrase \"Thanks  a lot\" (on \"Thank\"), \
                 so that message would start on \"refunds\""
            ),
            "{claimed:?}"
        );
    }

    #[test]
    fn a_phrase_both_example_and_never_routes_is_named_with_its_rules() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({
                "rules": [
                    {"use": "refunds", "match": {"keywords": ["refund"]}, "examples": ["no refund"]},
                    {"use": "shipping", "match": {"keywords": ["parcel"]}, "examples": ["no refund"],
                     "label": "parcels"}
                ],
                "never_routes": ["no refund", "No refund"]
            }),
        );
        let contradicts = of(&problems, ProblemCode::NeverRoutesContradictsExample);
        // Exact equality only: "No refund" is no example.
        assert_eq!(contradicts.len(), 1, "{problems:#?}");
        assert!(
            contradicts[0].starts_with(
                "\"no refund\" is a never_routes phrase and an example of start.rules[0] and start.rules[1] \
                 ('parcels'): the map says that message must start nowhere and that it must start on \"refunds\"."
            ),
            "{contradicts:?}"
        );
    }

    #[test]
    fn a_rule_an_earlier_one_covers_is_shadowed_by_order() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({
                "rules": [
                    {"use": "shipping", "match": {"regex": "\\bparcel", "flags": "mi"}},
                    {"use": "refunds", "match": {"keywords": ["Refund", "money back"]}, "label": "refund words"},
                    {"use": "shipping", "match": {"regex": "\\bparcel", "flags": "im"}, "label": "again"},
                    {"use": "billing", "match": {"keywords": ["REFUND"]}},
                    {"use": "billing", "match": {"all": [{"regex": "\\d{4}"}, {"keywords": ["refund"]}]}},
                    {"use": "billing", "match": {"keywords": ["money BACK", "refund"]}}
                ],
                "never_routes": ["hello"]
            }),
        );
        let shadowed = of(&problems, ProblemCode::RulesShadowedByOrder);
        assert_eq!(shadowed.len(), 4, "{problems:#?}");
        assert!(
            shadowed[0].starts_with(
                "start.rules[2] ('again') can never decide a turn for a session that sees both skills: start.rules[0] comes first and matches every \
                 message it matches (both are the regex \"\\\\bparcel\" with the flags \"mi\")."
            ),
            "{shadowed:?}"
        );
        assert!(
            shadowed[1].contains(
                "start.rules[1] ('refund words') comes first and matches every message it matches (its keyword \
                 \"REFUND\" is among start.rules[1]'s, compared case-insensitively)"
            ),
            "{shadowed:?}"
        );
        assert!(
            shadowed[2].contains(
                "(it is an `all`, and every part of start.rules[1]'s matcher (keywords \"Refund\" or \
                 \"money back\") matches whatever one of its parts matches)"
            ),
            "{shadowed:?}"
        );
        assert!(
            shadowed[1].contains(
                "Reorder the rules or narrow start.rules[1]'s matcher, or drop start.rules[3]."
            ),
            "{shadowed:?}"
        );
        assert!(
            shadowed[3].contains(
                "(its keywords \"money BACK\" and \"refund\" are all among start.rules[1]'s"
            ),
            "{shadowed:?}"
        );
        // The shadowed pairs are not reported again as overlapping.
        assert!(
            of(&problems, ProblemCode::OverlappingRules).is_empty(),
            "{problems:#?}"
        );
    }

    #[test]
    fn only_provable_covers_shadow_a_rule() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [
                // Other flags, or another pattern, prove nothing.
                {"use": "shipping", "match": {"regex": "parcel", "flags": "i"}},
                {"use": "shipping", "match": {"regex": "parcel"}},
                {"use": "shipping", "match": {"regex": "parcels?", "flags": "i"}},
                // A keyword not among the earlier ones; "o" and the Kelvin
                // sign, which lowercases to "ok" but is not matched by `ok`
                // under `i`.
                {"use": "billing", "match": {"keywords": ["ok", "fee"]}},
                {"use": "billing", "match": {"keywords": ["fee", "charge"]}},
                {"use": "billing", "match": {"keywords": ["o\u{212A}"]}},
                // An `all` is narrower than its parts, never wider.
                {"use": "refunds", "match": {"all": [{"keywords": ["refund"]}, {"regex": "\\d"}]}},
                {"use": "refunds", "match": {"keywords": ["refund"]}}
            ]}),
        );
        assert!(
            of(&problems, ProblemCode::RulesShadowedByOrder).is_empty(),
            "{problems:#?}"
        );
        assert_eq!("o\u{212A}".to_lowercase(), "ok");
        assert!(!same_keyword("ok", "o\u{212A}"));
        let ok = Matcher::compile(&json!({"keywords": ["ok"]})).unwrap();
        assert_eq!(ok.find(&Message::new("o\u{212A}")), Outcome::Missed);
        assert_eq!(ok.find(&Message::new("OK")), Outcome::Matched("OK".into()));
    }

    #[test]
    fn rules_to_different_skills_sharing_a_keyword_overlap() {
        let problems = found(
            SKILLS,
            ways_out(),
            json!({
                "rules": [
                    {"use": "refunds", "match": {"keywords": ["refund", "charge"]}, "label": "money"},
                    {"use": "billing", "match": {"keywords": ["invoice", "Charge"]}},
                    {"use": "refunds", "match": {"keywords": ["charge", "fee"]}},
                    {"use": "shipping", "match": {"keywords": ["parcel"]}}
                ],
                "never_routes": ["hello"]
            }),
        );
        let overlapping = of(&problems, ProblemCode::OverlappingRules);
        // rules[0] and rules[2] share "charge" but start on one skill.
        assert_eq!(overlapping.len(), 2, "{problems:#?}");
        assert!(
            overlapping[0].starts_with(
                "start.rules[0] ('money') and start.rules[1] both match \"charge\" (a keyword of start.rules[0]) \
                 and start on different skills (\"refunds\" and \"billing\")"
            ),
            "{overlapping:?}"
        );
        assert!(
            overlapping[1].starts_with("start.rules[1] and start.rules[2] both match \"Charge\""),
            "{overlapping:?}"
        );
        // A keyword and a regex that matches it overlap too. rules[2] needs
        // a number as well, so "refund" alone proves no overlap with
        // rules[1] (and rules[0] shadows rules[2], which is not repeated).
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": [
                {"use": "refunds", "match": {"keywords": ["refund"]}},
                {"use": "billing", "match": {"regex": "fund"}},
                {"use": "shipping", "match": {"all": [{"keywords": ["refund"]}, {"regex": "\\d"}]}}
            ], "never_routes": ["hi"]}),
        );
        let overlapping = of(&problems, ProblemCode::OverlappingRules);
        assert_eq!(overlapping.len(), 1, "{problems:#?}");
        assert!(
            overlapping[0].contains("both match \"refund\" (a keyword of start.rules[0])"),
            "{overlapping:?}"
        );
    }

    #[test]
    fn rules_with_no_evidence_at_all_say_so() {
        let rules = json!([
            {"use": "refunds", "match": {"keywords": ["refund"]}},
            {"use": "shipping", "match": {"keywords": ["parcel"]}},
            {"use": "billing", "match": {"keywords": ["invoice"]}}
        ]);
        let problems = found(SKILLS, ways_out(), json!({"rules": rules}));
        assert_eq!(codes(&problems), ["no-negative-evidence"]);
        assert!(
            problems[0]
                .message()
                .starts_with("The map's 3 start rules have no examples"),
            "{problems:#?}"
        );
        // One never_routes phrase, or two rules, is enough.
        let problems = found(
            SKILLS,
            ways_out(),
            json!({"rules": rules, "never_routes": ["hi"]}),
        );
        assert!(problems.is_empty(), "{problems:#?}");
        let two = json!({"rules": [rules[0], rules[1]]});
        assert!(found(SKILLS, ways_out(), two).is_empty());
    }

    #[test]
    fn entries_most_of_which_have_no_way_out_are_one_way() {
        let start = json!({
            "rules": [
                {"use": "refunds", "match": {"keywords": ["refund"]}, "examples": ["refund"]},
                {"use": "shipping", "match": {"keywords": ["parcel"]}, "examples": ["parcel"]},
                {"use": "billing", "match": {"keywords": ["invoice"]}, "examples": ["invoice"]},
                {"use": "billing", "match": {"keywords": ["bill"]}, "examples": ["bill"]}
            ],
            "never_routes": ["thanks"]
        });
        // Only refunds has a route out (a self-loop is none).
        let routes = json!([
            {"from": "refunds", "to": "triage"},
            {"from": "shipping", "to": "shipping"}
        ]);
        let problems = found(SKILLS, routes, start.clone());
        assert_eq!(codes(&problems), ["one-way-entries"]);
        assert!(
            problems[0].message().starts_with(
                "Start rules send turns to 3 skills, and 2 of them (\"shipping\" and \"billing\") have no route out"
            ),
            "{problems:#?}"
        );
        let problems = found(SKILLS, json!([]), start.clone());
        assert!(
            problems[0]
                .message()
                .contains("and all 3 (\"refunds\", \"shipping\" and \"billing\") have"),
            "{problems:#?}"
        );
        // Two of four targets is half, not more than half.
        let mut start = start;
        start["rules"][3] =
            json!({"use": "triage", "match": {"keywords": ["help"]}, "examples": ["help"]});
        let routes = json!([
            {"from": "refunds", "to": "triage"},
            {"from": "triage", "to": "refunds"}
        ]);
        assert!(found(SKILLS, routes, start).is_empty());
    }
}
