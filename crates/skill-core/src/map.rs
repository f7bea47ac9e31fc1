//! The skill map: skills, the entries where a run starts, and the routes
//! between skills; and what follows from it for one position of the cursor:
//! what is reachable, what is open, what the gate grants, and the offer.

use serde::{Deserialize, Serialize};

use crate::id_hash::{IdHashMap, IdHashSet};
use crate::offer::ReadSkillOffer;
use crate::roles::Roles;
use crate::skill::{Routing, Skill, Trigger, Via};

/// One route between two skills.
///
/// A route with a `guard`, `on_tool_status` or `on_tool_return` is
/// *deterministic*: a tool result moves the cursor along it. A bare route is
/// a *model edge*: the model may pick it while the cursor stands on `from`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The source skill.
    pub from: String,
    /// The target skill.
    pub to: String,
    /// A data guard over the tool result (compiled by `skill-guard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<serde_json::Value>,
    /// The result statuses the route fires on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_tool_status: Option<Vec<String>>,
    /// The exact tool name the route fires on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_tool_return: Option<String>,
    /// A name for people reading the map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl Route {
    /// A bare route (a model edge) from `from` to `to`.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        Route {
            from: from.into(),
            to: to.into(),
            guard: None,
            on_tool_status: None,
            on_tool_return: None,
            label: None,
        }
    }

    /// Whether a tool result moves the cursor along this route.
    pub fn is_deterministic(&self) -> bool {
        self.guard.is_some() || self.on_tool_status.is_some() || self.on_tool_return.is_some()
    }

    /// `from→to`, as messages name a route.
    pub fn name(&self) -> String {
        format!("{}→{}", self.from, self.to)
    }
}

/// The map's `start` block (SPEC §13): rules over the user's message that
/// say, as data, which skill a turn starts on, and phrases that must start
/// nowhere. Its matchers stay JSON here; `skill-guard` compiles them.
///
/// ```
/// use skill_core::SkillMap;
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "refunds" }],
///     "start": {
///         "rules": [{ "use": "refunds", "match": { "keywords": ["refund"] },
///                     "examples": ["I want a refund"], "label": "refund words" }],
///         "never_routes": ["thanks"]
///     }
/// }"#)?;
/// let start = map.start.as_ref().map(|s| &s.rules[0]);
/// assert_eq!(start.map(|r| r.use_skill.as_str()), Some("refunds"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// The rules, tried in declaration order.
    #[serde(default)]
    pub rules: Vec<StartRule>,
    /// Phrases no rule may match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_routes: Vec<String>,
}

/// One start rule: the skill a matching message starts on, its matcher, and
/// the examples that prove it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRule {
    /// The skill the turn starts on (`use` in JSON).
    #[serde(rename = "use")]
    pub use_skill: String,
    /// The matcher, as declared (`regex`, `keywords` or `all`; SPEC §13.1).
    #[serde(rename = "match")]
    pub matcher: serde_json::Value,
    /// Messages this rule must start on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// A name for people reading the map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The map's `budget` (SPEC §15.3): how many iterations a turn may take.
///
/// ```
/// use skill_core::Budget;
///
/// let budget: Budget = serde_json::from_str(r#"{ "max_iterations": 12 }"#)?;
/// assert_eq!(budget.max_iterations(), Some(12));
/// let invalid: Budget = serde_json::from_str(r#"{ "max_iterations": 2.5 }"#)?;
/// assert_eq!(invalid.max_iterations(), None);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// The most iterations a turn takes, as declared: a whole number of at
    /// least 1 (anything else is the check-up's `limit-invalid`, and sets
    /// no budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<serde_json::Value>,
}

impl Budget {
    /// The most iterations a turn takes, when declared as a whole number
    /// of at least 1.
    pub fn max_iterations(&self) -> Option<u64> {
        whole(self.max_iterations.as_ref()?, 1.0)
    }
}

/// The map's `escalation` (SPEC §15.5): after how many refusals in a turn
/// the session says the model needs help.
///
/// ```
/// use skill_core::Escalation;
///
/// let escalation: Escalation = serde_json::from_str(r#"{ "after_refusals": 0 }"#)?;
/// assert_eq!(escalation.after_refusals(), Some(0));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Escalation {
    /// How many refusals in a turn escalate, as declared: a whole number
    /// (0: never); anything else is the check-up's `limit-invalid`, and
    /// leaves the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_refusals: Option<serde_json::Value>,
}

impl Escalation {
    /// How many refusals in a turn escalate, when declared as a whole
    /// number of at least 0.
    pub fn after_refusals(&self) -> Option<u64> {
        whole(self.after_refusals.as_ref()?, 0.0)
    }
}

/// `value` as a whole number of at least `least`, within u32.
fn whole(value: &serde_json::Value, least: f64) -> Option<u64> {
    let declared = value.as_f64()?;
    let whole = declared.fract() == 0.0 && (least..=f64::from(u32::MAX)).contains(&declared);
    // A whole number within u32: the cast is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    whole.then_some(declared as u64)
}

/// A map of skills, entries and routes.
///
/// ```
/// use skill_core::SkillMap;
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }, { "id": "faq" }],
///     "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "on_tool_return": "lookup_order" }]
/// }"#)?;
/// assert_eq!(map.reachable(Some("triage")), ["refunds"]);
/// assert_eq!(map.open_skills(), ["faq"]);
/// assert_eq!(map.grantable(Some("triage")), ["refunds", "faq"]);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillMap {
    /// Every skill, in catalog order.
    #[serde(default)]
    pub skills: Vec<Skill>,
    /// The skills where a run starts.
    #[serde(default)]
    pub entries: Vec<String>,
    /// The routes, in declaration order.
    #[serde(default)]
    pub routes: Vec<Route>,
    /// Where a turn starts, by rule (SPEC §13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// The skills hidden per role (SPEC §14.8); empty: the map has no
    /// roles, and hides nothing from anyone.
    #[serde(default, skip_serializing_if = "Roles::is_empty")]
    pub roles: Roles,
    /// How many iterations a turn may take (SPEC §15.3); `None`: no budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// After how many refusals a turn escalates (SPEC §15.5); `None`: 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
}

impl SkillMap {
    /// The first skill with this id.
    pub fn skill(&self, id: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.id == id)
    }

    /// The routes out of `id`, in declaration order.
    pub fn routes_from<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Route> + 'a {
        self.routes.iter().filter(move |r| r.from == id)
    }

    /// Where the model may go from `cursor`: with no cursor, the entries;
    /// otherwise the targets of every route out of the cursor (any kind, in
    /// declaration order), then the entries; the cursor itself removed, the
    /// first occurrence of each kept.
    pub fn reachable<'a>(&'a self, cursor: Option<&str>) -> Vec<&'a str> {
        let targets = cursor
            .into_iter()
            .flat_map(|c| self.routes.iter().filter(move |r| r.from == c))
            .map(|r| r.to.as_str());
        let mut seen = IdHashSet::default();
        targets
            .chain(self.entries.iter().map(String::as_str))
            .filter(|id| Some(*id) != cursor && seen.insert(*id))
            .collect()
    }

    /// Every id an entry or a route names as where to go.
    fn targeted_ids(&self) -> IdHashSet<&str> {
        self.entries
            .iter()
            .map(String::as_str)
            .chain(self.routes.iter().map(|r| r.to.as_str()))
            .collect()
    }

    /// The skills of flavor `skill` that no entry and no route targets, in
    /// catalog order: the map never moves the cursor onto them, so only a
    /// read could activate them. The one place the open-skill rule is
    /// written: those that [activate by read](Skill::activates_by_read) are
    /// open, the others unreachable.
    fn untargeted_skills(&self) -> impl Iterator<Item = &Skill> {
        let targeted = self.targeted_ids();
        self.skills
            .iter()
            .filter(move |s| s.flavor.is_skill() && !targeted.contains(s.id.as_str()))
    }

    /// Skills of flavor `skill`, trigger `llm-activated`, that no entry and no
    /// route targets: activatable from anywhere, never moving the cursor.
    /// Each id once, at its first open skill.
    pub fn open_skills(&self) -> Vec<&str> {
        let mut seen = IdHashSet::default();
        self.untargeted_skills()
            .filter(|s| s.activates_by_read())
            .map(|s| s.id.as_str())
            .filter(|id| seen.insert(*id))
            .collect()
    }

    /// Skills of flavor `skill` that nothing activates: no entry and no route
    /// targets them, and their trigger is not `llm-activated`, so they are not
    /// open either. Each id is judged by its first skill of flavor `skill`.
    pub fn unreachable_skills(&self) -> Vec<&Skill> {
        let mut seen = IdHashSet::default();
        self.untargeted_skills()
            .filter(|s| seen.insert(s.id.as_str()))
            .filter(|s| !s.activates_by_read())
            .collect()
    }

    /// What the gate admits from `cursor`: [`reachable`](Self::reachable),
    /// then the [open skills](Self::open_skills), without repeats.
    pub fn grantable<'a>(&'a self, cursor: Option<&str>) -> Vec<&'a str> {
        let mut seen = IdHashSet::default();
        self.reachable(cursor)
            .into_iter()
            .chain(self.open_skills())
            .filter(|id| seen.insert(*id))
            .collect()
    }

    /// Whether the map is a plain catalog: no entries and no routes (a folder
    /// of skills without `skillmap.json`, SPEC §7.4). Every skill is then
    /// open, `read_skill` offers the plain catalog, and a run needs no entry.
    ///
    /// ```
    /// use skill_core::SkillMap;
    ///
    /// let folder: SkillMap = serde_json::from_str(r#"{ "skills": [{ "id": "faq" }] }"#)?;
    /// assert!(folder.is_plain_catalog());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn is_plain_catalog(&self) -> bool {
        self.entries.is_empty() && self.routes.is_empty()
    }

    /// The `read_skill` offer for a position: the cursor, the ids this reader
    /// may not be told about, and whether the map is a decision tree. It
    /// grants [`grantable`](Self::grantable) from the cursor; a map with no
    /// entries and no routes has no graph to speak of (every skill is open),
    /// so its offer grants nothing in particular and `read_skill` shows the
    /// plain catalog.
    ///
    /// ```
    /// use skill_core::SkillMap;
    ///
    /// let folder: SkillMap = serde_json::from_str(r#"{ "skills": [{ "id": "faq" }] }"#)?;
    /// let offer = folder.offer_at(None, &[], false);
    /// assert!(!offer.is_graph());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn offer_at(
        &self,
        cursor: Option<&str>,
        hidden_ids: &[String],
        tree_routed: bool,
    ) -> ReadSkillOffer {
        let grantable = (!self.is_plain_catalog()).then(|| {
            self.grantable(cursor)
                .into_iter()
                .map(str::to_owned)
                .collect()
        });
        ReadSkillOffer {
            grantable,
            hidden_ids: hidden_ids.to_vec(),
            cursor_id: cursor.map(str::to_owned),
            menu: None,
            tree_routed,
            show_refusable: true,
        }
    }

    /// How the map activates each id it names: an entry is `via: entry`;
    /// the target of a deterministic route `via: route`, from the source of
    /// its first deterministic incoming route; the target of model edges only
    /// `via: model`. One pass over routes and entries.
    fn routing_table(&self) -> IdHashMap<&str, Routing> {
        let mut table: IdHashMap<&str, Routing> = IdHashMap::default();
        for route in &self.routes {
            let known = table.entry(route.to.as_str()).or_insert(Routing {
                via: Via::Model,
                from: None,
            });
            // The first deterministic route in names the source.
            if route.is_deterministic() && known.via == Via::Model {
                *known = Routing {
                    via: Via::Route,
                    from: Some(route.from.clone()),
                };
            }
        }
        for entry in &self.entries {
            table.insert(
                entry.as_str(),
                Routing {
                    via: Via::Entry,
                    from: None,
                },
            );
        }
        table
    }

    /// How the map activates `id`: an entry (`via: entry`), the target of a
    /// deterministic route (`via: route`, from the source of its first
    /// deterministic incoming route), the target of a model edge only
    /// (`via: model`), or nothing (`None`). Each call reads the whole map;
    /// [`skills_as_routed`](Self::skills_as_routed) answers for every skill
    /// at once.
    pub fn routing_of(&self, id: &str) -> Option<Routing> {
        self.routing_table().remove(id)
    }

    /// The skills as the map activates them: an entry or a deterministic
    /// route target gets its routing metadata and trigger `rule` (the graph,
    /// not `read_skill`, activates it); a model-edge target gets `via: model`
    /// and keeps its trigger. Skills the map does not name are unchanged.
    pub fn skills_as_routed(&self) -> Vec<Skill> {
        let table = self.routing_table();
        self.skills
            .iter()
            .map(|skill| {
                let mut skill = skill.clone();
                if let Some(routing) = table.get(skill.id.as_str()) {
                    if routing.via != Via::Model {
                        skill.trigger = Trigger::Rule;
                    }
                    skill.routing = Some(routing.clone());
                }
                skill
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> SkillMap {
        let mut guarded = Route::new("triage", "refunds");
        guarded.guard = Some(serde_json::json!({"riskLevel": {"in": ["high"]}}));
        SkillMap {
            skills: ["triage", "refunds", "billing", "faq", "audit"]
                .iter()
                .map(|id| Skill::new(*id))
                .collect(),
            entries: vec!["triage".into(), "billing".into()],
            routes: vec![
                guarded,
                Route::new("triage", "billing"),
                Route::new("triage", "triage"),
                Route::new("billing", "audit"),
            ],
            start: None,
            roles: Roles::new(),
            budget: None,
            escalation: None,
        }
    }

    #[test]
    fn reachable_is_route_targets_then_entries_without_the_cursor() {
        let map = map();
        assert_eq!(map.reachable(None), ["triage", "billing"]);
        assert_eq!(map.reachable(Some("triage")), ["refunds", "billing"]);
        assert_eq!(map.reachable(Some("billing")), ["audit", "triage"]);
        assert_eq!(map.reachable(Some("faq")), ["triage", "billing"]);
    }

    #[test]
    fn open_skills_are_untargeted_llm_activated_skills() {
        let mut map = map();
        assert_eq!(map.open_skills(), ["faq"]);
        map.skills[3].trigger = Trigger::Always;
        assert!(map.open_skills().is_empty());
        assert_eq!(map.grantable(Some("refunds")), ["triage", "billing"]);
    }

    #[test]
    fn unreachable_skills_are_untargeted_and_not_open() {
        let mut map = map();
        assert!(map.unreachable_skills().is_empty());
        map.skills[3].trigger = Trigger::Rule;
        let mut twin = Skill::new("faq");
        twin.trigger = Trigger::Always;
        map.skills.push(twin);
        map.skills.push(Skill::new("notes"));
        map.skills[2].trigger = Trigger::Rule;
        let unreachable: Vec<&str> = map
            .unreachable_skills()
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        // billing is an entry; faq is reported once; notes is open.
        assert_eq!(unreachable, ["faq"]);
        assert_eq!(map.open_skills(), ["notes"]);
    }

    #[test]
    fn routing_follows_from_the_map() {
        let map = map();
        assert_eq!(map.routing_of("triage").map(|r| r.via), Some(Via::Entry));
        assert_eq!(
            map.routing_of("refunds"),
            Some(Routing {
                via: Via::Route,
                from: Some("triage".into())
            })
        );
        assert_eq!(map.routing_of("audit").map(|r| r.via), Some(Via::Model));
        assert_eq!(map.routing_of("faq"), None);
        let routed = map.skills_as_routed();
        assert_eq!(routed[1].trigger, Trigger::Rule);
        assert_eq!(routed[4].trigger, Trigger::LlmActivated);
        for skill in &routed {
            assert_eq!(skill.routing, map.routing_of(&skill.id), "{}", skill.id);
        }
    }

    #[test]
    fn the_first_deterministic_route_in_names_the_source() {
        let mut map = map();
        let mut late = Route::new("billing", "audit");
        late.on_tool_return = Some("close".into());
        let mut later = Route::new("faq", "audit");
        later.on_tool_status = Some(vec!["success".into()]);
        map.routes.extend([late, later]);
        let expected = Some(Routing {
            via: Via::Route,
            from: Some("billing".into()),
        });
        assert_eq!(map.routing_of("audit"), expected);
        assert_eq!(map.skills_as_routed()[4].routing, expected);
    }

    #[test]
    fn the_offer_for_a_position_grants_what_the_map_does() {
        let offer = map().offer_at(Some("triage"), &["faq".to_owned()], false);
        assert_eq!(
            offer.grantable,
            Some(vec![
                "refunds".to_owned(),
                "billing".to_owned(),
                "faq".to_owned()
            ])
        );
        assert_eq!(offer.cursor_id.as_deref(), Some("triage"));
        assert_eq!(offer.hidden_ids, ["faq"]);
    }

    #[test]
    fn a_map_without_entries_or_routes_offers_the_plain_catalog() {
        let mut map = map();
        map.routes.clear();
        assert!(map.offer_at(None, &[], false).is_graph());
        map.entries.clear();
        let offer = map.offer_at(Some("faq"), &["audit".to_owned()], false);
        assert_eq!(
            offer,
            ReadSkillOffer {
                hidden_ids: vec!["audit".to_owned()],
                cursor_id: Some("faq".to_owned()),
                ..ReadSkillOffer::default()
            }
        );
        map.routes.push(Route::new("faq", "audit"));
        assert!(map.offer_at(None, &[], false).is_graph());
    }
}
