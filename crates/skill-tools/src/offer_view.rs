//! The offer view: what one request's `read_skill` description may say,
//! as data, before any sentence is written. The conformance vectors pin this
//! shape; [`OfferView::render`](crate::OfferView::render) turns it into text.

use serde::{Deserialize, Serialize, Serializer};
use skill_core::{
    IdHashMap, IdHashSet, IdSet, MenuCandidate, ReadSkillOffer, Skill, TargetClass,
    classify_target, js_number,
};

/// Which description the offer calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OfferMode {
    /// No graph (or no offer at all), something visible: the plain catalog.
    Catalog,
    /// No graph and nothing visible: nothing else is said.
    NoSkills,
    /// A decision tree: the skills it leaves to the model.
    Tree,
    /// A graph: what is reachable from the cursor, and what is not.
    Graph,
}

/// A skill named in a list. Its description is printed the first time its
/// id appears in the offer (`described`), and only its id after that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Row<'a> {
    /// The skill's id.
    pub id: &'a str,
    /// Whether this row prints the description.
    pub described: bool,
    /// The description to print (`None` when the skill has none).
    #[serde(skip)]
    pub description: Option<&'a str>,
}

/// A menu candidate that survived the hidden filter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MenuRow<'a> {
    /// The skill's id.
    pub id: &'a str,
    /// Whether this row prints the description.
    pub described: bool,
    /// JavaScript `Math.round(relevance × 100)`, when a relevance was given.
    #[serde(serialize_with = "integral")]
    pub relevance_pct: Option<f64>,
    /// The description to print (`None` when the skill has none).
    #[serde(skip)]
    pub description: Option<&'a str>,
}

fn integral<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(n) => js_number(n, serializer),
        None => serializer.serialize_none(),
    }
}

/// What one `read_skill` description may say (SPEC §6.2). Hidden skills are
/// in no field; the cursor is in no list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OfferView<'a> {
    /// The cursor, named on every call that has one (unless hidden).
    pub cursor: Option<&'a str>,
    /// Whether staying where the cursor is counts as an answer.
    pub stay: bool,
    /// The surviving menu rows; `None` without a menu or with none left.
    pub menu: Option<Vec<MenuRow<'a>>>,
    /// Whether a menu is shown and answering without a pick is allowed.
    pub menu_allows_no_pick: bool,
    /// Which description this is.
    pub mode: OfferMode,
    /// `Catalog` mode: the visible skills, in catalog order.
    pub catalog: Vec<Row<'a>>,
    /// `Tree` mode: the visible skills the tree leaves to the model.
    pub tree_open: Vec<Row<'a>>,
    /// `Graph` mode: the visible hops from the cursor.
    pub reachable: Vec<Row<'a>>,
    /// `Graph` mode: nothing at all is wired out of here (not merely hidden).
    pub nothing_reachable: bool,
    /// `Graph` mode: visible skills a move to is not granted from here.
    pub refusable: Vec<Row<'a>>,
}

impl<'a> OfferView<'a> {
    fn empty(mode: OfferMode) -> Self {
        OfferView {
            cursor: None,
            stay: false,
            menu: None,
            menu_allows_no_pick: false,
            mode,
            catalog: Vec::new(),
            tree_open: Vec::new(),
            reachable: Vec::new(),
            nothing_reachable: false,
            refusable: Vec::new(),
        }
    }
}

/// An [`OfferView`] that owns its ids: what a record keeps of the offer the
/// model was shown, read back as the same type it was written from. It has
/// the view's JSON shape exactly (descriptions are not part of it).
///
/// ```
/// use skill_core::{ReadSkillOffer, Skill};
/// use skill_tools::{offer_view, OwnedOfferView};
///
/// let skills = vec![Skill::new("triage"), Skill::new("refunds")];
/// let offer = ReadSkillOffer { grantable: Some(vec!["refunds".into()]), cursor_id: Some("triage".into()), ..ReadSkillOffer::default() };
/// let owned = OwnedOfferView::from(&offer_view(&skills, Some(&offer)));
/// let json = serde_json::to_string(&owned)?;
/// assert_eq!(json, serde_json::to_string(&offer_view(&skills, Some(&offer)))?);
/// assert_eq!(serde_json::from_str::<OwnedOfferView>(&json)?, owned);
/// assert_eq!(owned.reachable[0].id, "refunds");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnedOfferView {
    /// The cursor, named on every call that has one (unless hidden).
    pub cursor: Option<String>,
    /// Whether staying where the cursor is counts as an answer.
    pub stay: bool,
    /// The surviving menu rows; `None` without a menu or with none left.
    pub menu: Option<Vec<OwnedMenuRow>>,
    /// Whether a menu is shown and answering without a pick is allowed.
    pub menu_allows_no_pick: bool,
    /// Which description this is.
    pub mode: OfferMode,
    /// `Catalog` mode: the visible skills, in catalog order.
    pub catalog: Vec<OwnedRow>,
    /// `Tree` mode: the visible skills the tree leaves to the model.
    pub tree_open: Vec<OwnedRow>,
    /// `Graph` mode: the visible hops from the cursor.
    pub reachable: Vec<OwnedRow>,
    /// `Graph` mode: nothing at all is wired out of here (not merely hidden).
    pub nothing_reachable: bool,
    /// `Graph` mode: visible skills a move to is not granted from here.
    pub refusable: Vec<OwnedRow>,
}

/// A [`Row`] that owns its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnedRow {
    /// The skill's id.
    pub id: String,
    /// Whether this row printed the description.
    pub described: bool,
}

/// A [`MenuRow`] that owns its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnedMenuRow {
    /// The skill's id.
    pub id: String,
    /// Whether this row printed the description.
    pub described: bool,
    /// JavaScript `Math.round(relevance × 100)`, when a relevance was given.
    #[serde(serialize_with = "integral")]
    pub relevance_pct: Option<f64>,
}

impl From<&OfferView<'_>> for OwnedOfferView {
    fn from(view: &OfferView<'_>) -> Self {
        let rows = |rows: &[Row<'_>]| {
            rows.iter()
                .map(|row| OwnedRow {
                    id: row.id.to_owned(),
                    described: row.described,
                })
                .collect()
        };
        OwnedOfferView {
            cursor: view.cursor.map(str::to_owned),
            stay: view.stay,
            menu: view.menu.as_ref().map(|menu| {
                menu.iter()
                    .map(|row| OwnedMenuRow {
                        id: row.id.to_owned(),
                        described: row.described,
                        relevance_pct: row.relevance_pct,
                    })
                    .collect()
            }),
            menu_allows_no_pick: view.menu_allows_no_pick,
            mode: view.mode,
            catalog: rows(&view.catalog),
            tree_open: rows(&view.tree_open),
            reachable: rows(&view.reachable),
            nothing_reachable: view.nothing_reachable,
            refusable: rows(&view.refusable),
        }
    }
}

impl OwnedOfferView {
    /// The view as borrowed rows again, each skill's description found by
    /// `description` (a record keeps the ids of an offer; its `start`
    /// event, the declared descriptions): so that the words the model read
    /// can be rendered once more, with [`OfferView::render`].
    ///
    /// ```
    /// use skill_core::{ReadSkillOffer, Skill};
    /// use skill_tools::{OwnedOfferView, offer_view};
    ///
    /// let mut refunds = Skill::new("refunds");
    /// refunds.description = Some("Issue a refund".into());
    /// let skills = vec![Skill::new("triage"), refunds];
    /// let offer = ReadSkillOffer { grantable: Some(vec!["refunds".into()]), cursor_id: Some("triage".into()), ..ReadSkillOffer::default() };
    /// let shown = offer_view(&skills, Some(&offer));
    /// let kept = OwnedOfferView::from(&shown);
    /// let again = kept.view(|id| (id == "refunds").then_some("Issue a refund"));
    /// assert_eq!(again.render(), shown.render());
    /// ```
    pub fn view<'a>(&'a self, description: impl Fn(&str) -> Option<&'a str>) -> OfferView<'a> {
        let rows = |rows: &'a [OwnedRow]| -> Vec<Row<'a>> {
            rows.iter()
                .map(|row| Row {
                    id: &row.id,
                    described: row.described,
                    description: description(&row.id),
                })
                .collect()
        };
        OfferView {
            cursor: self.cursor.as_deref(),
            stay: self.stay,
            menu: self.menu.as_ref().map(|menu| {
                menu.iter()
                    .map(|row| MenuRow {
                        id: &row.id,
                        described: row.described,
                        relevance_pct: row.relevance_pct,
                        description: description(&row.id),
                    })
                    .collect()
            }),
            menu_allows_no_pick: self.menu_allows_no_pick,
            mode: self.mode,
            catalog: rows(&self.catalog),
            tree_open: rows(&self.tree_open),
            reachable: rows(&self.reachable),
            nothing_reachable: self.nothing_reachable,
            refusable: rows(&self.refusable),
        }
    }
}

/// A lookup set over borrowed ids.
fn id_set(ids: &[String]) -> IdHashSet<&str> {
    let mut set = IdHashSet::with_capacity_and_hasher(ids.len(), Default::default());
    set.extend(ids.iter().map(String::as_str));
    set
}

/// JavaScript's `Math.round`: halves round up, toward +∞.
fn js_round(x: f64) -> f64 {
    let floor = x.floor();
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// What an offer says of one id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Flags(u8);

impl Flags {
    const HIDDEN: u8 = 1;
    const GRANTABLE: u8 = 2;
    const DESCRIBED: u8 = 4;
    /// A menu candidate's id: a visible skill with it is a menu row, which
    /// is written first and so is the one that carries the description.
    const CANDIDATE: u8 = 8;

    fn hidden(self) -> bool {
        self.0 & Flags::HIDDEN != 0
    }

    fn grantable(self) -> bool {
        self.0 & Flags::GRANTABLE != 0
    }

    fn candidate(self) -> bool {
        self.0 & Flags::CANDIDATE != 0
    }

    /// A list row for `skill`, whose id these flags are for, unless it is
    /// hidden; described if its id has not been yet (a candidate's id never
    /// is here: its menu row describes it).
    fn name<'a>(&mut self, skill: &'a Skill) -> Option<Row<'a>> {
        if self.candidate() {
            return (!self.hidden()).then(|| row(skill, false));
        }
        self.name_first(skill)
    }

    /// A row for `skill` unless it is hidden, described the first time.
    fn name_first<'a>(&mut self, skill: &'a Skill) -> Option<Row<'a>> {
        if self.hidden() {
            return None;
        }
        let described = self.0 & Flags::DESCRIBED == 0;
        self.0 |= Flags::DESCRIBED;
        Some(row(skill, described))
    }
}

fn row(skill: &Skill, described: bool) -> Row<'_> {
    Row {
        id: &skill.id,
        described,
        description: skill.description.as_deref(),
    }
}

/// Membership already looked up, for [`classify_target`].
struct Known(bool);

impl IdSet for Known {
    fn holds(&self, _id: &str) -> bool {
        self.0
    }
}

/// The flags of every id an offer or its catalog names, and the rows handed
/// out so far: each id is described the first time it appears.
struct Ids<'a> {
    flags: IdHashMap<&'a str, Flags>,
}

impl<'a> Ids<'a> {
    fn new(skills: usize, offer: &'a ReadSkillOffer, candidates: &'a [MenuCandidate]) -> Self {
        let grantable = offer.grantable.as_deref().unwrap_or_default();
        let mut flags = IdHashMap::with_capacity_and_hasher(
            skills + offer.hidden_ids.len() + grantable.len() + candidates.len(),
            Default::default(),
        );
        let marked = [
            (Flags::HIDDEN, offer.hidden_ids.as_slice()),
            (Flags::GRANTABLE, grantable),
        ];
        for (flag, ids) in marked {
            for id in ids {
                flags.entry(id.as_str()).or_insert(Flags::default()).0 |= flag;
            }
        }
        for candidate in candidates {
            flags
                .entry(candidate.id.as_str())
                .or_insert(Flags::default())
                .0 |= Flags::CANDIDATE;
        }
        Ids { flags }
    }

    fn flags(&self, id: &str) -> Flags {
        self.flags.get(id).copied().unwrap_or_default()
    }
}

/// The view of `offer` over `skills` (no offer: the whole catalog, every row
/// described).
///
/// ```
/// use skill_core::{ReadSkillOffer, Skill};
/// use skill_tools::{offer_view, OfferMode};
///
/// let skills = vec![Skill::new("triage"), Skill::new("refunds"), Skill::new("audit")];
/// let offer = ReadSkillOffer {
///     grantable: Some(vec!["refunds".into()]),
///     cursor_id: Some("triage".into()),
///     hidden_ids: vec!["audit".into()],
///     ..ReadSkillOffer::default()
/// };
/// let view = offer_view(&skills, Some(&offer));
/// assert_eq!(view.mode, OfferMode::Graph);
/// assert_eq!(view.cursor, Some("triage"));
/// assert_eq!(view.reachable[0].id, "refunds");
/// assert!(view.refusable.is_empty(), "audit is hidden, so it is in no list");
/// ```
pub fn offer_view<'a>(skills: &'a [Skill], offer: Option<&'a ReadSkillOffer>) -> OfferView<'a> {
    let Some(offer) = offer else {
        return plain_catalog(skills);
    };
    let candidates = offer
        .menu
        .as_ref()
        .map(|m| m.candidates.as_slice())
        .unwrap_or_default();
    let mut view = OfferView::empty(match (&offer.grantable, offer.tree_routed) {
        (None, _) => OfferMode::Catalog,
        (Some(_), true) => OfferMode::Tree,
        (Some(_), false) => OfferMode::Graph,
    });
    // What the offer says of each id, looked up once per skill: hidden,
    // grantable, a menu candidate, already described.
    let mut ids = Ids::new(skills.len(), offer, candidates);
    let named = offer
        .cursor_id
        .as_deref()
        .or_else(|| offer.menu.as_ref().and_then(|m| m.cursor_id.as_deref()));
    let cursor = named.filter(|id| !ids.flags(id).hidden());
    let sizes = Sizes {
        skills: skills.len(),
        grantable: offer.grantable.as_ref().map_or(0, Vec::len),
        refusable: view.mode == OfferMode::Graph && offer.show_refusable,
    };
    let chosen = view.list(skills, cursor, &mut ids, candidates, sizes);
    if view.mode == OfferMode::Catalog && view.catalog.is_empty() {
        return OfferView::empty(OfferMode::NoSkills);
    }
    let menu_rows = menu_rows(candidates, chosen, &mut ids);
    let stay = offer.menu.as_ref().is_some_and(|m| m.stay) && cursor.is_some();
    let menu_shown = offer.menu.is_some() && !menu_rows.is_empty();
    view.cursor = cursor;
    view.stay = stay;
    view.menu_allows_no_pick = menu_shown && !stay;
    view.menu = menu_shown.then_some(menu_rows);
    view
}

/// The view with no offer at all: the whole catalog, every row described.
fn plain_catalog(skills: &[Skill]) -> OfferView<'_> {
    let mut view = OfferView::empty(OfferMode::Catalog);
    view.catalog = skills.iter().map(|s| row(s, true)).collect();
    view
}

/// What sizes a view's lists from before they are filled.
#[derive(Clone, Copy)]
struct Sizes {
    skills: usize,
    /// How many ids the offer grants (the hops, unless ids repeat).
    grantable: usize,
    /// Whether graph mode lists the refusable skills.
    refusable: bool,
}

impl<'a> OfferView<'a> {
    /// Fill the view's lists in one pass over the catalog, one lookup per
    /// skill, and answer which skill stands for each menu candidate: the
    /// last with its id, as a map built over the catalog would have it.
    ///
    /// Hops are gathered unfiltered (the hidden filter applies to what is
    /// named, not to what the graph holds): a hop that is hidden still means
    /// something is reachable. Rows are described as they are met: no id is
    /// both a hop and unreachable, so that is each list's order. Each list
    /// is sized once from the offer, not grown by copying.
    fn list(
        &mut self,
        skills: &'a [Skill],
        cursor: Option<&str>,
        ids: &mut Ids<'a>,
        candidates: &[MenuCandidate],
        sizes: Sizes,
    ) -> Vec<Option<&'a Skill>> {
        let mut chosen: Vec<Option<&Skill>> = vec![None; candidates.len()];
        let no_open: [&str; 0] = [];
        let mut rows = Vec::with_capacity(match self.mode {
            OfferMode::Catalog => sizes.skills,
            _ => sizes.grantable,
        });
        if sizes.refusable {
            self.refusable = Vec::with_capacity(sizes.skills.saturating_sub(sizes.grantable));
        }
        let mut any_hop = false;
        for skill in skills {
            let flags = ids.flags.entry(&skill.id).or_default();
            if flags.candidate() {
                for (slot, candidate) in chosen.iter_mut().zip(candidates) {
                    if candidate.id == skill.id {
                        *slot = Some(skill);
                    }
                }
            }
            if self.mode == OfferMode::Catalog {
                rows.extend(flags.name(skill));
                continue;
            }
            match classify_target(cursor, &skill.id, Known(flags.grantable()), &no_open[..]) {
                TargetClass::Hop => {
                    any_hop = true;
                    rows.extend(flags.name(skill));
                }
                TargetClass::Unreachable if sizes.refusable => {
                    self.refusable.extend(flags.name(skill));
                }
                _ => {}
            }
        }
        match self.mode {
            OfferMode::Catalog => self.catalog = rows,
            OfferMode::Graph => {
                self.reachable = rows;
                self.nothing_reachable = !any_hop;
            }
            OfferMode::Tree => self.tree_open = rows,
            OfferMode::NoSkills => {}
        }
        chosen
    }
}

/// The menu, written first: the first row of each id is described. Every
/// candidate's id has flags (`Ids::new` marked it).
fn menu_rows<'a>(
    candidates: &[MenuCandidate],
    chosen: Vec<Option<&'a Skill>>,
    ids: &mut Ids<'a>,
) -> Vec<MenuRow<'a>> {
    let mut rows = Vec::new();
    for (candidate, skill) in candidates.iter().zip(chosen) {
        let Some(row) = skill.and_then(|s| ids.flags.get_mut(s.id.as_str())?.name_first(s)) else {
            continue;
        };
        rows.push(MenuRow {
            id: row.id,
            described: row.described,
            relevance_pct: candidate.relevance.map(|r| js_round(r * 100.0)),
            description: row.description,
        });
    }
    rows
}

/// Whether a tree-routed offer has no visible hop left, so `read_skill` is
/// withheld. Classified with the raw `cursor_id` and hops = `grantable`.
pub(crate) fn tree_has_nothing_to_open(skills: &[Skill], offer: &ReadSkillOffer) -> bool {
    let hidden = id_set(&offer.hidden_ids);
    let grantable = id_set(offer.grantable.as_deref().unwrap_or_default());
    let no_open: [&str; 0] = [];
    !skills.iter().any(|s| {
        !hidden.contains(s.id.as_str())
            && classify_target(offer.cursor_id.as_deref(), &s.id, &grantable, &no_open[..])
                == TargetClass::Hop
    })
}

#[cfg(test)]
mod tests {
    use skill_core::{Menu, MenuCandidate};

    use super::*;

    fn skills(ids: &[&str]) -> Vec<Skill> {
        ids.iter().map(|id| Skill::new(*id)).collect()
    }

    #[test]
    fn math_round_rounds_halves_up() {
        assert_eq!(js_round(12.5), 13.0);
        assert_eq!(js_round(-12.5), -12.0);
        assert_eq!(js_round(0.49999999999999994), 0.0);
        assert_eq!(js_round(0.125 * 100.0), 13.0);
    }

    #[test]
    fn descriptions_print_once_menu_first() {
        let catalog = skills(&["alpha", "beta", "gamma"]);
        let offer = ReadSkillOffer {
            grantable: Some(vec!["beta".into()]),
            cursor_id: Some("alpha".into()),
            menu: Some(Menu {
                candidates: vec![MenuCandidate {
                    id: "beta".into(),
                    relevance: Some(0.6),
                }],
                cursor_id: None,
                stay: false,
            }),
            ..ReadSkillOffer::default()
        };
        let view = offer_view(&catalog, Some(&offer));
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "cursor": "alpha", "stay": false,
                "menu": [{"id": "beta", "described": true, "relevance_pct": 60}],
                "menu_allows_no_pick": true, "mode": "graph", "catalog": [], "tree_open": [],
                "reachable": [{"id": "beta", "described": false}], "nothing_reachable": false,
                "refusable": [{"id": "gamma", "described": true}]
            })
        );
    }

    #[test]
    fn repeated_ids_are_described_once_in_catalog_mode() {
        let mut catalog = skills(&["alpha", "beta", "alpha", "beta", "gamma"]);
        catalog[2].description = Some("second alpha".into());
        let candidate = |id: &str| MenuCandidate {
            id: id.into(),
            relevance: None,
        };
        let offer = ReadSkillOffer {
            menu: Some(Menu {
                candidates: vec![candidate("alpha"), candidate("alpha"), candidate("none")],
                cursor_id: None,
                stay: false,
            }),
            ..ReadSkillOffer::default()
        };
        let view = offer_view(&catalog, Some(&offer));
        let menu: Vec<_> = view
            .menu
            .iter()
            .flatten()
            .map(|r| (r.described, r.description))
            .collect();
        assert_eq!(
            menu,
            [(true, Some("second alpha")), (false, Some("second alpha"))]
        );
        let listed: Vec<_> = view.catalog.iter().map(|r| (r.id, r.described)).collect();
        assert_eq!(
            listed,
            [
                ("alpha", false),
                ("beta", true),
                ("alpha", false),
                ("beta", false),
                ("gamma", true)
            ]
        );
    }

    #[test]
    fn a_filter_that_empties_the_hops_is_not_nothing_reachable() {
        let catalog = skills(&["alpha", "beta"]);
        let mut offer = ReadSkillOffer {
            grantable: Some(vec!["beta".into()]),
            cursor_id: Some("alpha".into()),
            ..ReadSkillOffer::default()
        };
        offer.hidden_ids = vec!["beta".into()];
        let view = offer_view(&catalog, Some(&offer));
        assert!(view.reachable.is_empty() && !view.nothing_reachable);
        offer.grantable = Some(Vec::new());
        assert!(offer_view(&catalog, Some(&offer)).nothing_reachable);
    }

    #[test]
    fn nothing_visible_without_a_graph_says_nothing_else() {
        let catalog = skills(&["alpha"]);
        let offer = ReadSkillOffer {
            hidden_ids: vec!["alpha".into()],
            cursor_id: Some("x".into()),
            ..ReadSkillOffer::default()
        };
        let view = offer_view(&catalog, Some(&offer));
        assert_eq!(view, OfferView::empty(OfferMode::NoSkills));
    }
}
