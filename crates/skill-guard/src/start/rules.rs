//! A map's start rules (SPEC §13.2), compiled once: which rule decides where
//! a turn starts, and why.

use std::fmt;

use serde::Serialize;
use skill_core::Start;

use crate::start::matcher::{Matcher, Message, Outcome, RuleError};

/// One compiled start rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The skill a matching turn starts on.
    pub use_skill: String,
    /// The rule's label, when it has one.
    pub label: Option<String>,
    /// The compiled matcher.
    pub matcher: Matcher,
}

/// How messages name a start rule: `start.rules[N]`, then `('label')`
/// when it has one.
///
/// ```
/// use skill_guard::start::rule_name;
///
/// assert_eq!(rule_name(0, Some("refund words")), "start.rules[0] ('refund words')");
/// assert_eq!(rule_name(2, None), "start.rules[2]");
/// ```
pub fn rule_name(index: usize, label: Option<&str>) -> String {
    match label {
        Some(label) => format!("start.rules[{index}] ('{label}')"),
        None => format!("start.rules[{index}]"),
    }
}

/// A rule whose matcher was refused, named by its place.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {error}", rule_name(*rule, label.as_deref()))]
#[non_exhaustive]
pub struct StartRuleError {
    /// The rule's index in `start.rules`, from 0.
    pub rule: usize,
    /// The rule's label.
    pub label: Option<String>,
    /// Why its matcher was refused.
    pub error: RuleError,
}

/// Every refused rule of a map's start block (a map with one cannot start
/// turns by rule).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct StartRulesErrors {
    /// Each refusal, in rule order.
    pub errors: Vec<StartRuleError>,
}

impl StartRulesErrors {
    /// The stable code, `rule-refused`.
    pub fn code(&self) -> &'static str {
        "rule-refused"
    }
}

impl fmt::Display for StartRulesErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} start rule(s) refused; fix each, then load the map again",
            self.errors.len()
        )?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}

/// The rule that decided a turn's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Routed {
    /// Its index in `start.rules`, from 0.
    pub rule: usize,
    /// The skill the turn starts on.
    #[serde(rename = "use")]
    pub use_skill: String,
    /// The rule's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The matched text (SPEC §13.1).
    pub witness: String,
}

/// How a message was routed: the deciding rule, if any, and the rules tried
/// before it that gave up (their regex needed more backtracking than the
/// bound allows, so they could not decide).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Routing {
    /// The first rule, in declaration order, that is not hidden and matches.
    pub routed: Option<Routed>,
    /// Rules tried before it (or all, with none) that gave up, by index.
    pub gave_up: Vec<usize>,
}

/// A map's start rules, compiled once.
///
/// ```
/// use skill_core::SkillMap;
/// use skill_guard::start::StartRules;
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "refunds" }, { "id": "shipping" }],
///     "start": { "rules": [
///         { "use": "refunds", "match": { "keywords": ["refund"] }, "label": "refund words" },
///         { "use": "shipping", "match": { "regex": "\\b(parcel|package)s?\\b", "flags": "i" } }
///     ] }
/// }"#)?;
/// let rules = StartRules::compile(map.start.as_ref())?;
/// let routing = rules.route("Where is my PACKAGE?", |_| false);
/// let routed = routing.routed.expect("a rule matches");
/// assert_eq!((routed.rule, routed.use_skill.as_str(), routed.witness.as_str()), (1, "shipping", "PACKAGE"));
/// assert!(rules.route("hello", |_| false).routed.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StartRules {
    rules: Vec<Rule>,
}

impl StartRules {
    /// Compile every rule of `start` (none without a start block).
    ///
    /// # Errors
    ///
    /// [`StartRulesErrors`] listing every rule whose matcher was refused.
    pub fn compile(start: Option<&Start>) -> Result<Self, StartRulesErrors> {
        let declared = start.map(|s| s.rules.as_slice()).unwrap_or_default();
        let mut rules = Vec::with_capacity(declared.len());
        let mut errors = Vec::new();
        for (at, rule) in declared.iter().enumerate() {
            match Matcher::compile(&rule.matcher) {
                Ok(matcher) => rules.push(Rule {
                    use_skill: rule.use_skill.clone(),
                    label: rule.label.clone(),
                    matcher,
                }),
                Err(error) => errors.push(StartRuleError {
                    rule: at,
                    label: rule.label.clone(),
                    error,
                }),
            }
        }
        if errors.is_empty() {
            Ok(StartRules { rules })
        } else {
            Err(StartRulesErrors { errors })
        }
    }

    /// The compiled rules, in declaration order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Route `message`: the first rule whose `use` is not `hidden` and whose
    /// matcher matches decides.
    pub fn route(&self, message: &str, hidden: impl Fn(&str) -> bool) -> Routing {
        let mut routing = Routing::default();
        if self.rules.is_empty() {
            return routing;
        }
        let message = Message::new(message);
        for (at, rule) in self.rules.iter().enumerate() {
            if hidden(&rule.use_skill) {
                continue;
            }
            match rule.matcher.find(&message) {
                Outcome::Matched(witness) => {
                    routing.routed = Some(Routed {
                        rule: at,
                        use_skill: rule.use_skill.clone(),
                        label: rule.label.clone(),
                        witness,
                    });
                    break;
                }
                Outcome::Missed => {}
                Outcome::GaveUp => routing.gave_up.push(at),
            }
        }
        routing
    }
}
