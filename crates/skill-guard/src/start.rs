//! Turn routing (SPEC §13): the matchers of a map's start rules (`regex`,
//! `keywords`, `all`) with ECMAScript semantics, the witness of a match, and
//! which rule decides where a turn starts.
//!
//! A `regex` means what it means in every JavaScript host: it runs on
//! `regress`, an ECMAScript engine, matched on the message's UTF-16 code
//! units, with the engine's departures from ECMAScript corrected here or in
//! its vendored patches. The work of one search is bounded: a regex may take
//! [`MAX_STEPS`] backtracking steps. A search that needs more gives up
//! ([`Outcome::GaveUp`]): the rule does not decide the turn, and the session
//! records that it gave up, so a message of any length is tried whole and a
//! pathological pattern costs a bounded time, never a hung turn.

mod matcher;
mod pattern;
mod rules;

pub use matcher::{Matcher, MatcherPart, Message, Outcome, RuleError, keyword_source};
pub use pattern::MAX_STEPS;
pub use rules::{Routed, Routing, Rule, StartRuleError, StartRules, StartRulesErrors, rule_name};
