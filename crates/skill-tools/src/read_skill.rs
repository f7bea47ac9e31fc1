//! `read_skill`: the tool through which the model activates a skill. Its
//! enum is the whole catalog, its description is the offer, and its answer
//! is the body (for skills delivered by read) or a confirmation.

use serde_json::{Map, Value, json};
use skill_core::{IdHashSet, ReadSkillOffer, Skill};

use crate::descriptor::{Execute, InputError, ToolDescriptor, arguments};
use crate::offer_view::{offer_view, tree_has_nothing_to_open};

/// The tool's name.
pub const READ_SKILL: &str = "read_skill";

const EXAMPLE: &str = "{\"id\": \"<skill id>\"}";

/// What one `read_skill` call answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadSkillAnswer<'a> {
    /// The skill's body, verbatim: its surface mode is `tool-only` or `both`
    /// and it has a body.
    Body(&'a str),
    /// The skill was activated; its body (if any) arrives another way.
    Confirmation(&'a str),
    /// The id is not one the tool accepts.
    Unknown(&'a str),
}

impl ReadSkillAnswer<'_> {
    /// `body`, `confirmation` or `unknown`.
    pub fn kind(&self) -> &'static str {
        match self {
            ReadSkillAnswer::Body(_) => "body",
            ReadSkillAnswer::Confirmation(_) => "confirmation",
            ReadSkillAnswer::Unknown(_) => "unknown",
        }
    }
}

/// Ids laid end to end in one allocation, with where each ends: the
/// descriptor is rebuilt for every request, so its lists of ids cost two
/// allocations each, however long they are.
#[derive(Debug, Clone, PartialEq, Default)]
struct IdList {
    text: String,
    ends: Vec<usize>,
}

impl IdList {
    fn with_capacity(ids: usize, bytes: usize) -> Self {
        IdList {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(ids),
        }
    }

    fn of<'a>(ids: impl ExactSizeIterator<Item = &'a str> + Clone) -> Self {
        let mut list = IdList::with_capacity(ids.len(), ids.clone().map(str::len).sum());
        ids.for_each(|id| list.push(id));
        list
    }

    fn push(&mut self, id: &str) {
        self.text.push_str(id);
        self.ends.push(self.text.len());
    }

    /// The ids, in order, with their positions.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (usize, &str)> {
        (0..self.ends.len()).map(|at| {
            let start = at.checked_sub(1).map_or(0, |before| self.ends[before]);
            (at, &self.text[start..self.ends[at]])
        })
    }
}

/// The data a `read_skill` call answers from.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadSkillCall {
    /// Every catalog id, in order.
    ids: IdList,
    /// The bodies delivered by read, by catalog position, ascending.
    bodies: Vec<(usize, String)>,
    /// Ids the unknown-id answer may not name.
    hidden: IdList,
}

impl ReadSkillCall {
    /// The call data for `skills`, and the schema's `enum` of their ids,
    /// built in one pass over the catalog. The ids' text is let grow rather
    /// than measured first: at 10,000 skills a pass to measure it reads
    /// every skill again, past the cache, and costs more than the copies.
    fn with_enum(skills: &[Skill], offer: Option<&ReadSkillOffer>) -> (Self, Vec<Value>) {
        let mut ids = IdList::with_capacity(skills.len(), 0);
        let mut bodies = Vec::new();
        let mut enumerated = Vec::with_capacity(skills.len());
        for (at, skill) in skills.iter().enumerate() {
            ids.push(&skill.id);
            enumerated.push(Value::from(skill.id.as_str()));
            if skill.surface_mode.delivers_by_read() && !skill.body.is_empty() {
                bodies.push((at, skill.body.clone()));
            }
        }
        let hidden = offer.map_or_else(IdList::default, |o| {
            IdList::of(o.hidden_ids.iter().map(String::as_str))
        });
        (
            ReadSkillCall {
                ids,
                bodies,
                hidden,
            },
            enumerated,
        )
    }

    /// The answer for `id` (the last skill with that id wins).
    pub fn answer<'s>(&'s self, id: &'s str) -> ReadSkillAnswer<'s> {
        let Some((at, known)) = self.ids.iter().rev().find(|(_, known)| *known == id) else {
            return ReadSkillAnswer::Unknown(id);
        };
        match self
            .bodies
            .binary_search_by_key(&at, |(position, _)| *position)
        {
            Ok(found) => ReadSkillAnswer::Body(&self.bodies[found].1),
            Err(_) => ReadSkillAnswer::Confirmation(known),
        }
    }

    /// The answer's text.
    pub fn answer_text(&self, id: &str) -> String {
        match self.answer(id) {
            ReadSkillAnswer::Body(body) => body.to_owned(),
            ReadSkillAnswer::Confirmation(id) => activation_confirmation(id),
            ReadSkillAnswer::Unknown(id) => {
                let hidden: IdHashSet<&str> = self.hidden.iter().map(|(_, id)| id).collect();
                let nameable: Vec<&str> = self
                    .ids
                    .iter()
                    .map(|(_, known)| known)
                    .filter(|known| !hidden.contains(known))
                    .collect();
                if nameable.is_empty() {
                    format!("'{id}' is not an id read_skill accepts on this call.")
                } else {
                    format!(
                        "'{id}' is not an id read_skill accepts on this call. Pass one of: {}.",
                        nameable.join(", ")
                    )
                }
            }
        }
    }

    pub(crate) fn call(&self, input: &Value) -> Result<String, InputError> {
        Ok(self.answer_text(read_skill_id(input)?))
    }
}

/// The skill id a `read_skill` call's JSON input names: the typed check its
/// schema makes, for a driver that answers the tool itself (an MCP server
/// does). `null` input is no input.
///
/// # Errors
///
/// [`InputError`] when the input is not an object, has an argument other
/// than `id`, or has no string `id`; its text never repeats more than 64
/// characters of the input.
///
/// ```
/// use serde_json::json;
/// use skill_tools::read_skill_id;
///
/// assert_eq!(read_skill_id(&json!({"id": "billing"})), Ok("billing"));
/// assert_eq!(read_skill_id(&json!({"id": 5})).unwrap_err().code(), "missing-argument");
/// assert_eq!(read_skill_id(&json!({})).unwrap_err().code(), "missing-argument");
/// ```
pub fn read_skill_id(input: &Value) -> Result<&str, InputError> {
    let missing = || InputError::MissingArgument {
        tool: READ_SKILL,
        argument: "id",
        example: EXAMPLE,
    };
    let arguments = arguments(READ_SKILL, input, &["id"], EXAMPLE)?.ok_or_else(missing)?;
    arguments
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(missing)
}

/// What `read_skill` answers when it activated a skill without carrying its
/// body: a sentence about this call only.
pub fn activation_confirmation(id: &str) -> String {
    format!("This call activated skill '{id}' for the next iteration.")
}

/// The `read_skill` descriptor for `skills` under `offer` (no offer: the
/// plain catalog). `None` when there are no skills, or when a tree-routed
/// offer leaves no visible skill to open (the tool is withheld; its name
/// stays dispatchable for the host).
///
/// The schema's `enum` is every catalog id, unfiltered: narrowing it would
/// turn the gate's teaching refusal into a schema error. The offer is
/// narrowed in the description instead.
///
/// ```
/// use serde_json::json;
/// use skill_core::{Skill, SurfaceMode};
/// use skill_tools::read_skill;
///
/// let mut billing = Skill::new("billing");
/// billing.surface_mode = SurfaceMode::Both;
/// billing.body = "Refund within 30 days.".into();
/// let tool = read_skill(&[billing, Skill::new("triage")], None).expect("skills exist");
/// assert_eq!(tool.input_schema["properties"]["id"]["enum"], json!(["billing", "triage"]));
/// assert_eq!(tool.execute.call(&json!({"id": "billing"}))?, "Refund within 30 days.");
/// # Ok::<(), skill_tools::InputError>(())
/// ```
pub fn read_skill(skills: &[Skill], offer: Option<&ReadSkillOffer>) -> Option<ToolDescriptor> {
    read_skill_within(skills, offer, crate::DEFAULT_CATALOG_BUDGET)
}

/// [`read_skill`] with its description kept within `catalog_budget`
/// characters (SPEC §6.5, [`OfferView::render_within`](crate::OfferView::render_within)):
/// a host with a large catalog, or a model with a small context, sets it.
pub fn read_skill_within(
    skills: &[Skill],
    offer: Option<&ReadSkillOffer>,
    catalog_budget: usize,
) -> Option<ToolDescriptor> {
    if skills.is_empty() {
        return None;
    }
    if offer.is_some_and(|o| o.tree_routed && tree_has_nothing_to_open(skills, o)) {
        return None;
    }
    let (call, ids) = ReadSkillCall::with_enum(skills, offer);
    Some(ToolDescriptor {
        name: READ_SKILL.to_owned(),
        description: offer_view(skills, offer).render_within(catalog_budget),
        input_schema: id_schema(ids),
        execute: Execute::ReadSkill(call),
    })
}

/// The input schema: one required string `id` whose `enum` is `ids`. The
/// list is moved in, not serialized again: it is the catalog, rebuilt per
/// request.
fn id_schema(ids: Vec<Value>) -> Value {
    // Built by hand: `json!` would serialize an interpolated value again.
    let mut id = Map::new();
    id.insert("type".to_owned(), "string".into());
    id.insert("enum".to_owned(), Value::Array(ids));
    id.insert(
        "description".to_owned(),
        "The id of the skill to activate.".into(),
    );
    let mut properties = Map::new();
    properties.insert("id".to_owned(), Value::Object(id));
    let mut schema = Map::new();
    schema.insert("type".to_owned(), "object".into());
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), json!(["id"]));
    schema.insert("additionalProperties".to_owned(), false.into());
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use skill_core::SurfaceMode;

    use super::*;

    #[test]
    fn the_last_skill_with_an_id_answers() {
        let mut first = Skill::new("a");
        first.surface_mode = SurfaceMode::ToolOnly;
        first.body = "first".into();
        let mut second = first.clone();
        second.body = "second".into();
        let mut quiet = Skill::new("q");
        quiet.body = "system prompt only".into();
        let call = ReadSkillCall::with_enum(&[first, second, quiet], None).0;
        assert_eq!(call.answer("a"), ReadSkillAnswer::Body("second"));
        assert_eq!(call.answer("q"), ReadSkillAnswer::Confirmation("q"));
        assert_eq!(call.answer("z").kind(), "unknown");
    }

    #[test]
    fn the_unknown_answer_names_no_hidden_id() {
        let offer = ReadSkillOffer {
            hidden_ids: vec!["secret".into()],
            ..ReadSkillOffer::default()
        };
        let call =
            ReadSkillCall::with_enum(&[Skill::new("open"), Skill::new("secret")], Some(&offer)).0;
        assert_eq!(
            call.answer_text("x"),
            "'x' is not an id read_skill accepts on this call. Pass one of: open."
        );
    }

    #[test]
    fn inputs_outside_the_schema_are_errors() {
        let call = ReadSkillCall::with_enum(&[Skill::new("a")], None).0;
        assert_eq!(
            call.call(&json!({})).unwrap_err().code(),
            "missing-argument"
        );
        assert_eq!(
            call.call(&json!({"id": 3})).unwrap_err().code(),
            "missing-argument"
        );
        assert_eq!(
            call.call(&json!({"id": "a", "x": 1})).unwrap_err().code(),
            "unexpected-argument"
        );
        assert_eq!(
            call.call(&json!("a")).unwrap_err().code(),
            "input-not-an-object"
        );
        assert_eq!(
            call.call(&json!({"id": "a"})).unwrap(),
            "This call activated skill 'a' for the next iteration."
        );
    }
}
