//! Body delivery: the one combination where a skill's body reaches the model
//! through no channel. `tool-only` delivers the body only as the `read_skill`
//! result, so a skill that something other than `read_skill` activates (a
//! route, an entry, a tree, a rule) would be handed its tools without its
//! guidance.

use std::fmt;

use serde::Serialize;
use skill_core::{Skill, SurfaceMode, Trigger, Via};

use crate::code::ProblemCode;

/// How an offending skill is activated instead of by `read_skill`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "via", rename_all = "lowercase")]
pub enum Activation {
    /// The target of a deterministic route, from `from` when known.
    Route {
        /// The route's source.
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    /// A graph entry.
    Entry,
    /// A decision-tree leaf.
    Tree,
    /// Activated by its trigger kind.
    Trigger {
        /// The trigger.
        trigger: Trigger,
    },
}

impl fmt::Display for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Activation::Route { from: Some(from) } => {
                write!(f, "entered by the route from \"{from}\"")
            }
            Activation::Route { from: None } => f.write_str("entered by a route"),
            Activation::Entry => f.write_str("a graph entry, where a run starts"),
            Activation::Tree => f.write_str("a leaf a decision tree routes to"),
            Activation::Trigger { trigger } => write!(f, "activated by its '{trigger}' trigger"),
        }
    }
}

/// One skill whose body would reach the model nowhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offender {
    /// The skill's id.
    pub id: String,
    /// How it is activated.
    #[serde(flatten)]
    pub activation: Activation,
}

/// The refusal: every offender, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct DeliveryRefusal {
    /// Every offending skill, in catalog order.
    pub offenders: Vec<Offender>,
}

impl DeliveryRefusal {
    /// The refusal's code as a check-up problem.
    pub fn code(&self) -> ProblemCode {
        ProblemCode::ToolOnlyDeliveredNowhere
    }
}

impl fmt::Display for DeliveryRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = self.offenders.len() == 1;
        write!(
            f,
            "{} surface mode 'tool-only', which hands the body to the model only as the result of a read_skill \
             call, but {} activated by read_skill, so {} body would reach the model through no channel while \
             {} tools still arrive:",
            if one {
                "This skill declares"
            } else {
                "These skills declare"
            },
            if one { "it is not" } else { "none of them is" },
            if one { "its" } else { "their" },
            if one { "its" } else { "their" },
        )?;
        for offender in &self.offenders {
            write!(f, "\n  - \"{}\": {}", offender.id, offender.activation)?;
        }
        write!(
            f,
            "\nDeclare 'both' (system prompt and tool result) or 'system-prompt' instead. Only a skill with \
             trigger 'llm-activated', which no graph routes, can keep its body out of the system prompt."
        )
    }
}

/// How a skill that `read_skill` does not activate is activated.
fn activation_of(skill: &Skill) -> Activation {
    match &skill.routing {
        Some(routing) if routing.via == Via::Route => Activation::Route {
            from: routing.from.clone(),
        },
        Some(routing) if routing.via == Via::Entry => Activation::Entry,
        Some(routing) if routing.via == Via::Tree => Activation::Tree,
        _ => Activation::Trigger {
            trigger: skill.trigger,
        },
    }
}

/// Refuse every skill that declares `tool-only` (literally; `auto` never
/// counts), is not activated by `read_skill`, and has a non-empty body.
/// `None` when there is none.
pub fn tool_only_delivery_refusal(skills: &[Skill]) -> Option<DeliveryRefusal> {
    let offenders: Vec<Offender> = skills
        .iter()
        .filter(|s| {
            s.flavor.is_skill()
                && s.surface_mode == SurfaceMode::ToolOnly
                && !s.activates_by_read()
                && !s.body.is_empty()
        })
        .map(|s| Offender {
            id: s.id.clone(),
            activation: activation_of(s),
        })
        .collect();
    (!offenders.is_empty()).then_some(DeliveryRefusal { offenders })
}

#[cfg(test)]
mod tests {
    use skill_core::Routing;

    use super::*;

    fn tool_only(id: &str, trigger: Trigger, routing: Option<Routing>) -> Skill {
        let mut skill = Skill::new(id);
        skill.surface_mode = SurfaceMode::ToolOnly;
        skill.trigger = trigger;
        skill.body = " ".into();
        skill.routing = routing;
        skill
    }

    #[test]
    fn lists_every_offender_with_how_it_is_activated() {
        let skills = [
            tool_only(
                "a",
                Trigger::Rule,
                Some(Routing {
                    via: Via::Route,
                    from: Some("triage".into()),
                }),
            ),
            tool_only("b", Trigger::LlmActivated, None),
            tool_only(
                "c",
                Trigger::Always,
                Some(Routing {
                    via: Via::Model,
                    from: None,
                }),
            ),
            tool_only(
                "d",
                Trigger::Rule,
                Some(Routing {
                    via: Via::Entry,
                    from: None,
                }),
            ),
        ];
        let refusal = tool_only_delivery_refusal(&skills).unwrap();
        let json = serde_json::to_value(&refusal.offenders).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"id": "a", "via": "route", "from": "triage"},
                {"id": "c", "via": "trigger", "trigger": "always"},
                {"id": "d", "via": "entry"}
            ])
        );
        let text = refusal.to_string();
        assert!(
            text.contains("\"a\": entered by the route from \"triage\""),
            "{text}"
        );
        assert!(text.contains("Declare 'both'"), "{text}");
    }

    #[test]
    fn auto_and_empty_bodies_never_offend() {
        let mut auto = tool_only("a", Trigger::Rule, None);
        auto.surface_mode = SurfaceMode::Auto;
        let mut empty = tool_only("b", Trigger::Rule, None);
        empty.body.clear();
        assert_eq!(tool_only_delivery_refusal(&[auto, empty]), None);
    }
}
