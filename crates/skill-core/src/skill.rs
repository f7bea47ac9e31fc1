//! The skill: a body of guidance plus the tools it carries, as the SPEC §2 data
//! model spells it in JSON (snake_case).
//!
//! Deserializing validates nothing beyond the shape: the checks take skills as
//! they are, and authoring validation is an explicit call of its own (in
//! `skill-checkup`). Unknown fields are refused so that a misspelt key is never
//! silently dropped.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::surface::{SurfaceMode, resolve_surface_mode};

/// One skill of a catalog. Only `id` is required.
///
/// ```
/// use skill_core::{Skill, Trigger, SurfaceMode};
///
/// let skill: Skill = serde_json::from_str(r#"{ "id": "billing", "trigger": "rule" }"#)?;
/// assert_eq!(skill.trigger, Trigger::Rule);
/// assert_eq!(skill.surface_mode, SurfaceMode::Auto);
/// assert!(skill.flavor.is_skill());
/// assert_eq!(skill.body, "");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skill {
    /// The id the model passes to `read_skill`, and routes name.
    pub id: String,
    /// What the skill is for, as the model reads it in the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The kind of injection; every check looks at [`Flavor::Skill`] only.
    #[serde(default, skip_serializing_if = "Flavor::is_skill")]
    pub flavor: Flavor,
    /// What activates the skill.
    #[serde(default, skip_serializing_if = "Trigger::is_default")]
    pub trigger: Trigger,
    /// The guidance delivered to the model; absent reads as the empty string.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// The tools the skill carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDecl>,
    /// The channel the body is delivered through.
    #[serde(default, skip_serializing_if = "SurfaceMode::is_auto")]
    pub surface_mode: SurfaceMode,
    /// Artifact kinds the skill leaves behind (`None`: not declared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produces: Option<Vec<String>>,
    /// Artifact kinds the skill needs to arrive (`None`: not declared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumes: Option<Vec<String>>,
    /// The ordered procedure, each step running one of the skill's tools
    /// (`None`: not declared; `Some([])` is refused by authoring validation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Guidance for when the model skips a step; meaningful only with steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_skip: Option<String>,
    /// How a graph activates the skill, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    /// Tool-name patterns the skill carries besides [`tools`](Self::tools):
    /// Agent Skills `allowed-tools` entries with a `*` wildcard, such as
    /// Claude Code's `mcp__github__*`. A pattern names no tool by itself; a
    /// server that knows its tools expands it into the ones it matches
    /// ([`tool_pattern_matches`](crate::tool_pattern_matches)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_patterns: Vec<String>,
    /// The folder the skill was read from, when it was (an Agent Skills
    /// folder): the place its body's relative paths (`scripts/…`,
    /// `references/…`) resolve against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// Where a server serves the skill's files as resources (`skill://ID/`,
    /// MCP's skills extension), when one does; set by that server, never
    /// read from a map.
    #[serde(skip)]
    pub files_uri: Option<String>,
}

impl Skill {
    /// A skill with this id and every other field at its default: flavor
    /// `skill`, trigger `llm-activated`, surface mode `auto`, an empty body.
    pub fn new(id: impl Into<String>) -> Self {
        Skill {
            id: id.into(),
            description: None,
            flavor: Flavor::Skill,
            trigger: Trigger::LlmActivated,
            body: String::new(),
            tools: Vec::new(),
            surface_mode: SurfaceMode::Auto,
            produces: None,
            consumes: None,
            steps: None,
            on_skip: None,
            routing: None,
            tool_patterns: Vec::new(),
            folder: None,
            files_uri: None,
        }
    }

    /// The declared steps, or none.
    pub fn steps(&self) -> &[Step] {
        self.steps.as_deref().unwrap_or_default()
    }

    /// The first tool the skill carries under `name`, if any.
    pub fn tool(&self, name: &str) -> Option<&ToolDecl> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Whether `read_skill` is what activates this skill: its trigger is
    /// `llm-activated`.
    pub fn activates_by_read(&self) -> bool {
        self.trigger == Trigger::LlmActivated
    }

    /// The mode this skill is treated as: its declared mode, except that a
    /// declared `auto` resolves through [`resolve_surface_mode`] when a
    /// provider is given.
    ///
    /// ```
    /// use skill_core::{Skill, SurfaceMode};
    ///
    /// let skill = Skill::new("billing");
    /// assert_eq!(skill.resolved_surface_mode(None, None), SurfaceMode::Auto);
    /// assert_eq!(
    ///     skill.resolved_surface_mode(Some("anthropic"), Some("claude-sonnet-4-5")),
    ///     SurfaceMode::Both
    /// );
    /// ```
    pub fn resolved_surface_mode(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> SurfaceMode {
        match (self.surface_mode, provider) {
            (SurfaceMode::Auto, Some(provider)) => resolve_surface_mode(provider, model),
            (declared, _) => declared,
        }
    }
}

/// The kind of injection a catalog entry is. Only `skill` is checked; any other
/// flavor (`fact`, `instructions`, `rag`, …) is carried through untouched.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Flavor {
    /// A skill: the one flavor every check looks at.
    #[default]
    Skill,
    /// Any other flavor, kept by its name.
    Other(String),
}

impl Flavor {
    /// Whether this is the `skill` flavor.
    pub fn is_skill(&self) -> bool {
        matches!(self, Flavor::Skill)
    }

    /// The flavor as JSON spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Flavor::Skill => "skill",
            Flavor::Other(name) => name,
        }
    }
}

impl From<String> for Flavor {
    fn from(name: String) -> Self {
        if name == "skill" {
            Flavor::Skill
        } else {
            Flavor::Other(name)
        }
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Flavor {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Flavor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Flavor::from)
    }
}

/// What activates a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// Activated by the model calling `read_skill` (the default).
    #[default]
    LlmActivated,
    /// Activated by a rule the host evaluates.
    Rule,
    /// Always active.
    Always,
    /// Activated when a tool returns.
    OnToolReturn,
}

impl Trigger {
    /// Every trigger kind, in the order the SPEC lists them.
    pub const ALL: [Trigger; 4] = [
        Trigger::LlmActivated,
        Trigger::Rule,
        Trigger::Always,
        Trigger::OnToolReturn,
    ];

    /// The trigger as JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::LlmActivated => "llm-activated",
            Trigger::Rule => "rule",
            Trigger::Always => "always",
            Trigger::OnToolReturn => "on-tool-return",
        }
    }

    fn is_default(&self) -> bool {
        *self == Trigger::LlmActivated
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool a skill carries, with the artifact kinds its arguments redeem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDecl {
    /// The tool's name as the model calls it.
    pub name: String,
    /// Argument name → the artifact kind that argument redeems at dispatch.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wants: BTreeMap<String, String>,
}

impl ToolDecl {
    /// A tool with this name and no `wants`.
    pub fn new(name: impl Into<String>) -> Self {
        ToolDecl {
            name: name.into(),
            wants: BTreeMap::new(),
        }
    }

    /// The artifact kinds this tool's arguments redeem.
    pub fn want_kinds(&self) -> impl Iterator<Item = &str> {
        self.wants.values().map(String::as_str)
    }
}

/// One step of a skill's procedure.
///
/// `tool` and `note` default to the empty string so that a step missing them
/// still loads and authoring validation can say which step is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The tool this step runs; it must be one the skill carries.
    #[serde(default)]
    pub tool: String,
    /// What the step is for, in a sentence.
    #[serde(default)]
    pub note: String,
    /// Artifact kinds this step leaves behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produces: Option<Vec<String>>,
    /// Artifact kinds this step needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumes: Option<Vec<String>>,
}

/// How a graph activates a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// The routing kind.
    pub via: Via,
    /// With `via: route`, the source of the route, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// The ways a graph can activate a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// The target of a deterministic route.
    Route,
    /// A graph entry: where a run starts.
    Entry,
    /// A decision-tree leaf.
    Tree,
    /// Picked by the model over a model edge.
    Model,
}

impl Via {
    /// The routing kind as JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Route => "route",
            Via::Entry => "entry",
            Via::Tree => "tree",
            Via::Model => "model",
        }
    }
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_every_optional_field() {
        let skill: Skill = serde_json::from_str(r#"{"id":"a"}"#).unwrap();
        assert_eq!(skill, Skill::new("a"));
    }

    #[test]
    fn other_flavors_are_kept_by_name() {
        let skill: Skill = serde_json::from_str(r#"{"id":"a","flavor":"rag"}"#).unwrap();
        assert_eq!(skill.flavor, Flavor::Other("rag".into()));
        assert!(!skill.flavor.is_skill());
        let back = serde_json::to_value(&skill).unwrap();
        assert_eq!(back["flavor"], "rag");
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        let err = serde_json::from_str::<Skill>(r#"{"id":"a","surfaceMode":"both"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("surfaceMode"), "{err}");
    }

    #[test]
    fn only_llm_activated_skills_activate_by_read() {
        let mut skill = Skill::new("a");
        assert!(skill.activates_by_read());
        for trigger in [Trigger::Rule, Trigger::Always, Trigger::OnToolReturn] {
            skill.trigger = trigger;
            assert!(!skill.activates_by_read());
        }
    }

    #[test]
    fn declared_auto_resolves_only_with_a_provider() {
        let mut skill = Skill::new("a");
        assert_eq!(skill.resolved_surface_mode(None, None), SurfaceMode::Auto);
        assert_eq!(
            skill.resolved_surface_mode(Some("openai"), None),
            SurfaceMode::ToolOnly
        );
        skill.surface_mode = SurfaceMode::SystemPrompt;
        assert_eq!(
            skill.resolved_surface_mode(Some("anthropic"), Some("claude-4")),
            SurfaceMode::SystemPrompt
        );
    }

    #[test]
    fn round_trips_the_spec_example() {
        let text = r#"{ "id": "billing", "description": "Use for refunds and charges",
          "trigger": "llm-activated", "body": "When handling billing: ...",
          "tools": [ { "name": "refund", "wants": { "ref": "dataset/rows" } } ],
          "surface_mode": "auto", "produces": ["chart/spec"], "consumes": ["dataset/rows"],
          "steps": [ { "tool": "refund", "note": "n", "produces": ["x"], "consumes": ["y"] } ],
          "routing": { "via": "route", "from": "triage" } }"#;
        let skill: Skill = serde_json::from_str(text).unwrap();
        assert_eq!(
            skill
                .tool("refund")
                .unwrap()
                .want_kinds()
                .collect::<Vec<_>>(),
            ["dataset/rows"]
        );
        assert_eq!(skill.routing.as_ref().unwrap().via, Via::Route);
        let again: Skill = serde_json::from_value(serde_json::to_value(&skill).unwrap()).unwrap();
        assert_eq!(again, skill);
    }
}
