//! The graph: one map with every route guard compiled once, owned, and
//! shared (`Arc<Graph>`) by any number of sessions.

use std::sync::Arc;

use skill_core::{IdHashMap, Skill, SkillMap, ToolResult};
use skill_guard::start::{Routing, StartRules, StartRulesErrors};
use skill_guard::{CursorMove, Iteration, MapGuardErrors, RouteGuards};
use skill_tools::{DEFAULT_CATALOG_BUDGET, ToolDescriptor, list_skills};

use crate::record::DeclaredMap;

/// A map that cannot be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A route's guard does not compile; each is named by its route.
    #[error("this map cannot run sessions: {0}")]
    GuardRefused(#[from] MapGuardErrors),
    /// A start rule's matcher does not compile; each is named by its place.
    #[error("this map cannot run sessions: {0}")]
    RuleRefused(#[from] StartRulesErrors),
}

impl GraphError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            GraphError::GuardRefused(errors) => errors.code(),
            GraphError::RuleRefused(errors) => errors.code(),
        }
    }
}

/// A map with every route guard compiled once: owned, `Send + Sync`, and
/// shared by any number of sessions.
///
/// ```
/// use std::sync::Arc;
/// use skill_core::SkillMap;
/// use skill_session::Graph;
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "amount": { "gte": 100 } } }]
/// }"#)?;
/// let graph = Arc::new(Graph::new(map)?);
/// assert_eq!(graph.map().entries, ["triage"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Graph {
    map: SkillMap,
    guards: RouteGuards,
    start: StartRules,
    /// The last catalog position of each id: the skill that stands for it.
    positions: IdHashMap<String, usize>,
    open: Vec<String>,
    declared: Arc<DeclaredMap>,
    list_skills: Option<ToolDescriptor>,
    catalog_budget: usize,
}

impl Graph {
    /// Compile every route guard and start rule of `map` once.
    ///
    /// # Errors
    ///
    /// [`GraphError::GuardRefused`] when a guard does not compile, naming
    /// every such route (`route triage→refunds: …`);
    /// [`GraphError::RuleRefused`] when a start rule's matcher does not.
    pub fn new(map: SkillMap) -> Result<Self, GraphError> {
        let guards = RouteGuards::compile(&map)?;
        let start = StartRules::compile(map.start.as_ref())?;
        Ok(Graph::with_compiled(map, guards, start))
    }

    /// A graph of `map` whose route guards and start rules a host compiled
    /// already (to check the map with the same guards: `skill_checkup::
    /// check_compiled_map`, and to refuse a map before any runtime starts),
    /// so that nothing is compiled twice. `guards` must be
    /// `RouteGuards::compile(&map)`'s (route `i` is judged by guard `i`) and
    /// `start` `StartRules::compile(map.start.as_ref())`'s.
    pub fn with_compiled(map: SkillMap, guards: RouteGuards, start: StartRules) -> Self {
        let mut positions = IdHashMap::default();
        for (at, skill) in map.skills.iter().enumerate() {
            positions.insert(skill.id.clone(), at);
        }
        let open = map.open_skills().into_iter().map(str::to_owned).collect();
        Graph {
            guards,
            start,
            positions,
            open,
            declared: Arc::new(DeclaredMap::of(&map)),
            list_skills: list_skills(&map.skills),
            catalog_budget: DEFAULT_CATALOG_BUDGET,
            map,
        }
    }

    /// The ids [`SkillMap::reachable`] from `cursor`, owned: a move's
    /// `reachable`.
    pub(crate) fn reachable_ids(&self, cursor: Option<&str>) -> Vec<String> {
        self.map
            .reachable(cursor)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// The map's start rules, compiled (none without a start block).
    pub fn start_rules(&self) -> &StartRules {
        &self.start
    }

    /// Where a turn that begins with the user's `message` starts, for a
    /// session from which `hidden` is hidden (SPEC §13.2): the first rule,
    /// in declaration order, whose skill is a skill of the map, is not
    /// hidden, and whose matcher matches decides; the rules tried before it
    /// that gave up are listed. An empty message is no message and starts
    /// no rule. `Session::begin_turn` starts every turn here, and
    /// `skillgraph test` routes its turn cases here, so that a case routes
    /// as a session would.
    ///
    /// ```
    /// use skill_core::SkillMap;
    /// use skill_session::Graph;
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{
    ///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
    ///     "start": { "rules": [
    ///         { "use": "billing", "match": { "keywords": ["refund"] } },
    ///         { "use": "refunds", "match": { "keywords": ["refund"] } }
    ///     ] }
    /// }"#)?;
    /// let graph = Graph::new(map)?;
    /// // `billing` is no skill of the map: its rule is skipped.
    /// let routed = graph.route_turn("a refund, please", &[]).routed;
    /// assert_eq!(routed.map(|r| (r.rule, r.use_skill)), Some((1, "refunds".to_owned())));
    /// assert_eq!(graph.route_turn("a refund, please", &["refunds".to_owned()]).routed, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn route_turn(&self, message: &str, hidden: &[String]) -> Routing {
        if message.is_empty() {
            return Routing::default();
        }
        self.start.route(message, |id| {
            !self.has_skill(id) || hidden.iter().any(|hidden| hidden == id)
        })
    }

    /// The graph with its `read_skill` description kept within
    /// `catalog_budget` characters (SPEC §6.5; the default is
    /// [`DEFAULT_CATALOG_BUDGET`], 16,000). The offer view, and so the
    /// record, does not change: only its wording is shortened, and
    /// `list_skills` still answers with every description in full.
    ///
    /// ```
    /// use skill_core::{Skill, SkillMap};
    /// use skill_session::{Graph, Posture, Session};
    ///
    /// let skills = (0..50).map(|n| {
    ///     let mut skill = Skill::new(format!("skill-{n}"));
    ///     skill.description = Some("A description of some length. ".repeat(5));
    ///     skill
    /// });
    /// let map = SkillMap { skills: skills.collect(), ..SkillMap::default() };
    /// let graph = std::sync::Arc::new(Graph::new(map)?.with_catalog_budget(2_000));
    /// let tools = Session::new(graph, Posture::Assist, vec![]).tools();
    /// assert!(tools[0].description.chars().count() <= 2_000);
    /// # Ok::<(), skill_session::GraphError>(())
    /// ```
    #[must_use]
    pub fn with_catalog_budget(mut self, catalog_budget: usize) -> Self {
        self.catalog_budget = catalog_budget;
        self
    }

    /// The most characters a `read_skill` description holds.
    pub fn catalog_budget(&self) -> usize {
        self.catalog_budget
    }

    /// The map.
    pub fn map(&self) -> &SkillMap {
        &self.map
    }

    /// The map as a record's `start` event declares it.
    pub fn declared(&self) -> &Arc<DeclaredMap> {
        &self.declared
    }

    /// The open skills (SPEC §7.1): activatable from anywhere, never moving
    /// the cursor.
    pub fn open_skills(&self) -> &[String] {
        &self.open
    }

    /// Whether `id` is a skill of the catalog.
    pub fn has_skill(&self, id: &str) -> bool {
        self.positions.contains_key(id)
    }

    /// The skill that stands for `id`: the last with it, as `read_skill`
    /// answers with its body (SPEC §6.1). A session reads one skill per id
    /// everywhere — its body, its tools, its surface mode — so two skills
    /// with one id never answer differently.
    pub fn skill(&self, id: &str) -> Option<&Skill> {
        self.positions
            .get(id)
            .and_then(|at| self.map.skills.get(*at))
    }

    /// The `list_skills` descriptor, built once (it does not depend on the
    /// position); `None` when the map has no skills.
    pub fn list_skills(&self) -> Option<&ToolDescriptor> {
        self.list_skills.as_ref()
    }

    /// Route resolution (SPEC §7.2) of one iteration's results from `cursor`.
    pub(crate) fn resolve<'g>(
        &'g self,
        cursor: &'g str,
        results: &'g [ToolResult],
        iteration: Iteration<'g>,
    ) -> CursorMove<'g> {
        self.guards.resolve(&self.map, cursor, results, iteration)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn assert_shareable<T: Send + Sync>() {}

    #[test]
    fn a_graph_is_shareable_across_threads() {
        assert_shareable::<Graph>();
        assert_shareable::<crate::Session>();
    }

    #[test]
    fn a_refused_guard_refuses_the_graph_naming_the_route() {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "triage"}, {"id": "refunds"}],
            "entries": ["triage"],
            "routes": [{"from": "triage", "to": "refunds", "guard": {"amount": {"gle": 1}}}]
        }))
        .unwrap();
        let error = Graph::new(map).unwrap_err();
        assert_eq!(error.code(), "guard-refused");
        assert!(
            error.to_string().contains("route triage→refunds"),
            "{error}"
        );
    }

    #[test]
    fn a_turn_skips_rules_on_no_skill_and_on_hidden_skills_and_an_empty_message() {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "triage"}, {"id": "refunds"}, {"id": "billing"}],
            "entries": ["triage"],
            "start": {"rules": [
                {"use": "ghost", "match": {"keywords": ["refund"]}},
                {"use": "refunds", "match": {"keywords": ["refund"]}},
                {"use": "billing", "match": {"regex": ".*"}}
            ]}
        }))
        .unwrap();
        let graph = Graph::new(map).unwrap();
        let rule = |message: &str, hidden: &[&str]| {
            let hidden: Vec<String> = hidden.iter().map(|id| (*id).to_owned()).collect();
            let routing = graph.route_turn(message, &hidden);
            routing.routed.map(|routed| (routed.rule, routed.use_skill))
        };
        assert_eq!(rule("a refund", &[]), Some((1, "refunds".to_owned())));
        assert_eq!(
            rule("a refund", &["refunds"]),
            Some((2, "billing".to_owned()))
        );
        assert_eq!(rule("", &[]), None, "an empty message is no message");
    }
}
