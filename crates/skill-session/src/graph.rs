//! The graph: one map with every route guard compiled once, owned, and
//! shared (`Arc<Graph>`) by any number of sessions.

use std::sync::{Arc, Mutex};

use skill_core::{IdHashMap, Skill, SkillMap, ToolResult, withheld_ids};
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
    /// On a view for some roles: the ids withheld from it, in catalog
    /// order (empty on a whole map).
    withheld: Vec<String>,
    /// On a view: the tools only withheld skills carry.
    withheld_tools: Vec<String>,
    /// On a view: the whole map's number of each route it keeps (empty on
    /// a whole map, whose routes are numbered as declared).
    route_numbers: Vec<usize>,
    /// The views made of this graph so far, by withheld ids: each is
    /// compiled once, whatever number of sessions takes it.
    views: Mutex<Vec<(Vec<String>, Arc<Graph>)>>,
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
            withheld: Vec::new(),
            withheld_tools: Vec::new(),
            route_numbers: Vec::new(),
            views: Mutex::default(),
            map,
        }
    }

    /// The graph a run that took `roles` (SPEC §14.8) sees: `self` when its
    /// roles withhold nothing, else this map without the skills they all
    /// hide. For that run a withheld id is an id the map lacks: it is in
    /// no entry, route target, catalog, list or prompt; the routes into it
    /// are gone (the others keep their numbers in the record); the tools
    /// only withheld skills carry are [withheld](Self::withholds_tool).
    /// The record still declares the whole map. Each view is made once
    /// and shared. Call it on the whole map's graph: a view takes no
    /// further roles.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skill_core::SkillMap;
    /// use skill_session::Graph;
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{
    ///     "skills": [{ "id": "triage" }, { "id": "payroll", "tools": [{ "name": "pay" }] }],
    ///     "entries": ["payroll", "triage"],
    ///     "roles": { "support": { "hide": ["payroll"] }, "*": {} }
    /// }"#)?;
    /// let graph = Arc::new(Graph::new(map)?);
    /// let support = graph.for_roles(&["support".to_owned()]);
    /// assert!(!support.has_skill("payroll") && support.withholds_tool("pay"));
    /// assert_eq!(support.map().entries, ["triage"]);
    /// assert!(Arc::ptr_eq(&graph.for_roles(&["*".to_owned()]), &graph));
    /// assert!(Arc::ptr_eq(&graph.for_roles(&["support".to_owned()]), &support));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_roles(self: &Arc<Self>, roles: &[String]) -> Arc<Graph> {
        let mut withheld: Vec<String> = withheld_ids(&self.map.roles, roles)
            .into_iter()
            .filter(|id| self.has_skill(id))
            .collect();
        withheld.sort_by_key(|id| self.positions.get(id.as_str()).copied());
        if withheld.is_empty() || !self.withheld.is_empty() {
            return Arc::clone(self);
        }
        // A poisoned lock only loses the views made so far.
        let mut views = self
            .views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, view)) = views.iter().find(|(ids, _)| *ids == withheld) {
            return Arc::clone(view);
        }
        let view = Arc::new(self.view_without(withheld.clone()));
        views.push((withheld, Arc::clone(&view)));
        view
    }

    /// This graph without the skills `withheld` names.
    fn view_without(&self, withheld: Vec<String>) -> Graph {
        let lacks = |id: &str| withheld.iter().any(|w| w == id);
        let mut map = self.map.clone();
        map.skills.retain(|skill| !lacks(&skill.id));
        map.entries.retain(|id| !lacks(id));
        // Routes out of a withheld skill stay (the cursor is never there,
        // and their targets stay targeted, not open); routes into one go.
        let route_numbers: Vec<usize> = (0..self.map.routes.len())
            .filter(|&at| !self.map.routes.get(at).is_some_and(|r| lacks(&r.to)))
            .collect();
        map.routes.retain(|route| !lacks(&route.to));
        map.roles.clear();
        let withheld_tools = self
            .map
            .skills
            .iter()
            .filter(|skill| lacks(&skill.id))
            .flat_map(|skill| skill.tools.iter().map(|tool| tool.name.clone()))
            .filter(|tool| !map.skills.iter().any(|skill| skill.tool(tool).is_some()))
            .fold(Vec::new(), |mut tools, tool| {
                if !tools.contains(&tool) {
                    tools.push(tool);
                }
                tools
            });
        let guards = self.guards.only(&route_numbers);
        let mut view = Graph::with_compiled(map, guards, self.start.clone());
        view.declared = Arc::clone(&self.declared);
        view.catalog_budget = self.catalog_budget;
        view.withheld = withheld;
        view.withheld_tools = withheld_tools;
        view.route_numbers = route_numbers;
        view
    }

    /// The ids withheld from this view (SPEC §14.8), in catalog order;
    /// none on a whole map.
    pub fn withheld(&self) -> &[String] {
        &self.withheld
    }

    /// Whether `tool` is carried only by skills withheld from this view:
    /// it is never listed, and a call of it is refused under every policy.
    pub fn withholds_tool(&self, tool: &str) -> bool {
        self.withheld_tools.iter().any(|withheld| withheld == tool)
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
        let mut moved = self.guards.resolve(&self.map, cursor, results, iteration);
        if !self.route_numbers.is_empty() {
            // A view's routes are recorded by the whole map's numbers.
            let number = |at: usize| self.route_numbers.get(at).copied().unwrap_or(at);
            moved.route = moved.route.map(number);
            for evaluation in moved.guard.iter_mut().chain(&mut moved.guards_closed) {
                evaluation.route = number(evaluation.route);
            }
        }
        moved
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
